// Chapter 06 — Permutation symmetry and bias terms.
//
// Measures, for random tokens and random permutations, how far each layer variant is from
// permutation equivariance (or invariance): attention with and without biases, LayerNorm,
// the FFN, whole blocks, and the things that break the symmetry (positional encoding,
// causal mask, per-position parameters). Then measures what each bias does to the output,
// with and without softmax, and draws an attention pattern before and after permuting the
// tokens. Writes output.txt (this summary), results.json, and the CSV + SVG of each figure.
//
// The sections run in the order of the output, which is not quite the chapter's (its
// section 1 is the pattern, drawn last here): all four draw from one random stream, and
// results.json must stay the same for the same seed.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/transformer_block.hpp"
#include "harness/cli.hpp"
#include "harness/output.hpp"
#include "setup.hpp"

namespace {

using attn::AttentionParams;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

struct Options {
  harness::CommonOptions common;
  long n = 8;       // tokens
  long d = 16;      // model width
  long heads = 2;   // attention heads in the blocks; must divide d
  long d_ff = 32;   // hidden width of the FFN
  long perms = 20;  // random permutations per variant
};

// One bar of the figure: a map of one token matrix, and the symmetry it should (or should
// not) have.
struct Variant {
  std::string key;    // name in results.json
  std::string label;  // name in the figure and the table
  bool invariance;    // f(PX) = f(X) rather than f(PX) = P f(X)
  bool symmetric;     // what the chapter claims
  MatrixXd input;     // the matrix that is permuted
  attn::TokenMap f;
};

// `p` with one of its biases (b_Q, b_K or b_V) taken from `from`.
using Bias = VectorXd AttentionParams::*;
AttentionParams with_bias(AttentionParams p, const AttentionParams& from, Bias bias) {
  p.*bias = from.*bias;
  return p;
}

// ------------------------------------------------------------------------------------
// 1. Symmetry residuals of every variant, over --perms random permutations (chapter
// sections 1, 2, 5, 6 and 7; Figure 6.2).
void symmetry_residuals(const Options& o, attn::Rng& rng,
                        const std::filesystem::path& out, harness::Report& r) {
  const Index n = o.n, d = o.d, heads = o.heads, d_ff = o.d_ff;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const MatrixXd Z = attn::random_normal(n + 3, d, rng);  // a second sequence
  const AttentionParams plain = ch06::random_attention(d, d, d, false, rng);
  const AttentionParams biased = ch06::random_attention(d, d, d, true, rng);
  const AttentionParams only_bQ = with_bias(plain, biased, &AttentionParams::b_Q),
                        only_bK = with_bias(plain, biased, &AttentionParams::b_K),
                        only_bV = with_bias(plain, biased, &AttentionParams::b_V);
  using P = attn::NormPlacement;
  const attn::BlockParams post = ch06::random_block(d, heads, d_ff, rng, P::post);
  const attn::BlockParams pre = ch06::random_block(d, heads, d_ff, rng, P::pre);
  const attn::BlockParams inner = ch06::random_block(d, heads, d_ff, rng, P::inner);
  const attn::NormParams ln = ch06::random_layer_norm(d, rng);
  const attn::NormParams tn = ch06::random_token_norm(n, false, rng);
  const attn::NormParams tn_affine = ch06::random_token_norm(n, true, rng);
  const MatrixXd E = attn::sinusoidal_encoding(n, d);
  const MatrixXd Qx = X * plain.W_Q, Vz = Z * plain.W_V;  // fixed queries and values

  const auto self = [](const AttentionParams& p, attn::Normalisation h) {
    return [&p, h](const MatrixXd& Y) { return attn::cross_attention(Y, Y, p, h); };
  };
  const auto block = [](const attn::BlockParams& b, attn::Masking m) {
    return [&b, m](const MatrixXd& Y) { return attn::transformer_block(Y, b, m); };
  };
  const auto sm = attn::Normalisation::softmax;
  const auto none = attn::Masking::none;
  // [variants]
  const std::vector<Variant> variants{
      {"self_attention", "self-attention", false, true, X, self(plain, sm)},
      {"query_bias", "+ query bias b_Q", false, true, X, self(only_bQ, sm)},
      {"key_bias", "+ key bias b_K", false, true, X, self(only_bK, sm)},
      {"value_bias", "+ value bias b_V", false, true, X, self(only_bV, sm)},
      {"no_softmax_biases", "h = id: all three biases", false, true, X,
       self(biased, attn::Normalisation::identity)},
      {"multi_head", "multi-head attention", false, true, X,
       [&](const MatrixXd& Y) { return attn::multi_head_attention(Y, post.attention); }},
      {"layer_norm", "LayerNorm (over features)", false, true, X,
       [&](const MatrixXd& Y) { return attn::normalise(Y, ln); }},
      {"ffn", "token-wise FFN", false, true, X,
       [&](const MatrixXd& Y) { return attn::feed_forward(Y, post.ffn); }},
      {"block_post_ln", "block: post-LN", false, true, X, block(post, none)},
      {"block_pre_ln", "block: pre-LN", false, true, X, block(pre, none)},
      {"block_source_ln", "block: X + LN(Attn(X)) (source)", false, true, X,
       block(inner, none)},
      {"token_norm", "token-axis norm: no affine", false, true, X,
       [&](const MatrixXd& Y) { return attn::normalise(Y, tn); }},
      {"cross_attention_queries", "cross-attention: queries", false, true, X,
       [&](const MatrixXd& Y) { return attn::cross_attention(Y, Z, biased); }},
      {"cross_attention_keys", "cross-attention: keys+values (inv.)", true, true, Z,
       [&](const MatrixXd& Y) { return attn::cross_attention(X, Y, biased); }},
      {"block_mean_pool", "block + mean pool (inv.)", true, true, X,
       [&](const MatrixXd& Y) {
         return attn::mean_pool(attn::transformer_block(Y, pre));
       }},
      {"keys_without_values", "keys permuted but values not (inv.)", true, false, Z,
       [&](const MatrixXd& Y) {
         return attn::attention(Qx, Y * plain.W_K, Vz, MatrixXd());
       }},
      {"token_norm_per_position", "token-axis norm: per-position affine", false, false, X,
       [&](const MatrixXd& Y) { return attn::normalise(Y, tn_affine); }},
      {"block_sinusoidal", "block + sinusoidal encoding", false, false, X,
       [&](const MatrixXd& Y) { return attn::transformer_block(Y + E, post); }},
      {"block_causal", "block: causal mask", false, false, X,
       block(pre, attn::Masking::causal)},
  };
  // [variants]

  r.say("1. Symmetry residuals, max and min over {} random permutations\n", o.perms);
  r.say("   n = {} tokens, d = {}, {} heads, d_ff = {}; second sequence: {} tokens\n", n,
        d, heads, d_ff, n + 3);
  r.say(
      "   residual = max|f(PX) - P f(X)| / max|f(X)|   (inv.: max|f(PX) - f(X)| / "
      "...)\n");
  r.say("   {:<38} {:>10} {:>10}  {}\n", "variant", "max", "min", "claim");
  std::vector<std::vector<harness::CsvCell>> rows;
  double worst_symmetric = 0, weakest_broken = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < variants.size(); ++k) {
    const Variant& v = variants[k];
    harness::progress(
        fmt::format("variant {} of {}: {}", k + 1, variants.size(), v.label));
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (long i = 0; i < o.perms; ++i) {
      // [residual]
      const attn::Permutation perm = ch06::moving_permutation(v.input.rows(), rng);
      const double res = v.invariance ? attn::invariance_residual(v.f, v.input, perm)
                                      : attn::equivariance_residual(v.f, v.input, perm);
      // [residual]
      lo = std::min(lo, res);
      hi = std::max(hi, res);
    }
    if (v.symmetric)
      worst_symmetric = std::max(worst_symmetric, hi);
    else
      weakest_broken = std::min(weakest_broken, lo);
    r.put("residual_max_" + v.key, hi);
    r.put("residual_min_" + v.key, lo);
    r.say("   {:<38} {:>10.2e} {:>10.2e}  {}\n", v.label, hi, lo,
          v.symmetric ? (v.invariance ? "invariant" : "equivariant") : "broken");
    rows.push_back({double(k), v.label, hi, lo, v.symmetric ? 1.0 : 0.0});
  }
  harness::progress("");
  const double eps = std::numeric_limits<double>::epsilon();
  r.say("   largest residual of a symmetric variant: {:.2e} (eps = {:.1e})\n",
        r.put("worst_symmetric_residual", worst_symmetric), eps);
  r.say("   smallest residual of a broken variant:   {:.2e}\n\n",
        r.put("weakest_broken_residual", weakest_broken));
  // The gap between the two groups: the largest symmetric residual over the smallest broken one.
  r.put("symmetric_over_broken", worst_symmetric / weakest_broken);
  // The three arrangements of a whole block, together.
  r.put("worst_block_residual",
        std::max({r.results.number("residual_max_block_post_ln"),
                  r.results.number("residual_max_block_pre_ln"),
                  r.results.number("residual_max_block_source_ln")}));
  harness::write_csv(out / "06-symmetry-residuals.csv",
                     {"index", "variant", "residual_max", "residual_min", "symmetric"},
                     rows);
  harness::render_figure(out, "06-symmetry-residuals", "",
                         fmt::format("eps={:.17g}; nvar={}", eps, variants.size()));
}

// ------------------------------------------------------------------------------------
// 2. What each bias does to the output, with softmax weights and with h = id (chapter
// sections 3 and 4).
void bias_effects(const Options& o, attn::Rng& rng, harness::Report& r) {
  const Index n = o.n, d = o.d;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const AttentionParams p0 = ch06::random_attention(d, d, d, false, rng);
  const AttentionParams pb = ch06::random_attention(d, d, d, true, rng);
  // How the output moves when p0 becomes p, with weights h.
  const auto shift = [&](const AttentionParams& p, attn::Normalisation h) -> MatrixXd {
    return attn::cross_attention(X, X, p, h) - attn::cross_attention(X, X, p0, h);
  };
  const auto softmax = attn::Normalisation::softmax,
             identity = attn::Normalisation::identity;

  r.say("2. Adding one bias at a time (self-attention, n = {}, d = {}); max |change|\n",
        n, d);
  r.say("   {:<14} {:>12} {:>12}\n", "bias", "softmax", "h = id");
  for (const auto& [name, bias] :
       {std::pair{"b_Q", &AttentionParams::b_Q}, std::pair{"b_K", &AttentionParams::b_K},
        std::pair{"b_V", &AttentionParams::b_V}}) {
    const AttentionParams p = with_bias(p0, pb, bias);
    const std::string w = name;
    const double soft =
        r.put("bias_change_softmax_" + w, shift(p, softmax).lpNorm<Eigen::Infinity>());
    const double id =
        r.put("bias_change_identity_" + w, shift(p, identity).lpNorm<Eigen::Infinity>());
    r.say("   {:<14} {:>12.3e} {:>12.3e}\n", w, soft, id);
  }
  // The value bias, exactly: + b_V with softmax; + (S 1) b_V^T with h = id.
  const AttentionParams with_bV = with_bias(p0, pb, &AttentionParams::b_V);
  const MatrixXd soft_shift = shift(with_bV, softmax),
                 id_shift = shift(with_bV, identity);
  const MatrixXd S = (X * p0.W_Q) * (X * p0.W_K).transpose() / std::sqrt(double(d));
  const VectorXd row_sums = S.rowwise().sum();
  const MatrixXd plain_shift = VectorXd::Ones(n) * pb.b_V.transpose();
  r.say("   softmax: max |change - 1 b_V^T|       = {:.2e}  (rows of A sum to 1)\n",
        r.put("value_bias_softmax_shift_residual",
              (soft_shift - plain_shift).lpNorm<Eigen::Infinity>()));
  r.say("   h = id:  max |change - (S 1) b_V^T|   = {:.2e}\n",
        r.put("value_bias_identity_rowsum_residual",
              (id_shift - row_sums * pb.b_V.transpose()).lpNorm<Eigen::Infinity>()));
  const double id_vs_plain = r.put("value_bias_identity_vs_plain_shift",
                                   (id_shift - plain_shift).lpNorm<Eigen::Infinity>());
  const double lo = r.put("identity_row_sum_min", row_sums.minCoeff());
  const double hi = r.put("identity_row_sum_max", row_sums.maxCoeff());
  r.say(
      "            max |change - 1 b_V^T|       = {:.2e}  (row sums of S: {:.2f} .. "
      "{:.2f})\n\n",
      id_vs_plain, lo, hi);
}

// ------------------------------------------------------------------------------------
// 3. LayerNorm and token-axis normalisation against a bias added to every token (chapter
// section 5).
void bias_then_normalisation(const Options& o, attn::Rng& rng, harness::Report& r) {
  const Index n = o.n, d = o.d;
  const MatrixXd Y = attn::random_normal(n, d, rng);
  const VectorXd b = ch06::vec(d, rng, 1.0);
  const MatrixXd Yb = Y.rowwise() + b.transpose();
  const MatrixXd Yc = Y.array() + b.mean();  // the part of b along 1_d only
  const auto layer_norm = [](const MatrixXd& M) { return attn::layer_norm(M, {}, {}); };
  const auto token_norm = [](const MatrixXd& M) { return attn::token_norm(M, {}, {}); };
  const auto change = [&Y](MatrixXd (*norm)(const MatrixXd&), const MatrixXd& Y_shifted) {
    return (norm(Y_shifted) - norm(Y)).lpNorm<Eigen::Infinity>();
  };
  r.say("3. A bias b added to every token, then a normalisation; max |change|\n");
  r.say("   LayerNorm, general b:          {:.3e}\n",
        r.put("layer_norm_change_general_bias", change(layer_norm, Yb)));
  r.say("   LayerNorm, b = mean(b) 1_d:    {:.3e}\n",
        r.put("layer_norm_change_constant_bias", change(layer_norm, Yc)));
  r.say("   token-axis norm, general b:    {:.3e}\n\n",
        r.put("token_norm_change_general_bias", change(token_norm, Yb)));
}

// ------------------------------------------------------------------------------------
// 4. An attention pattern before and after permuting the tokens (chapter section 1;
// Figure 6.1).
void permuted_pattern(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
                      harness::Report& r) {
  const Index n = std::min<Index>(o.n, 10), d = o.d;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const AttentionParams p = ch06::random_attention(d, d, d, true, rng);
  const attn::Permutation perm = ch06::moving_permutation(n, rng);
  const auto weights = [&](const MatrixXd& Y) {
    MatrixXd Q = Y * p.W_Q, K = Y * p.W_K;
    Q.rowwise() += p.b_Q.transpose();
    K.rowwise() += p.b_K.transpose();
    return attn::attention_weights(Q, K, MatrixXd());
  };
  // [heatmap]
  const MatrixXd A = weights(X);                                 // tokens in order 0..n-1
  const MatrixXd A_perm = weights(attn::permute_rows(X, perm));  // row i is token perm[i]
  const attn::Permutation inv = attn::inverse(perm);
  // P^T A(PX) P: put rows and columns back in the original order.
  const MatrixXd A_back =
      attn::permute_rows(attn::permute_rows(A_perm, inv).transpose(), inv).transpose();
  const double diff = (A_back - A).lpNorm<Eigen::Infinity>();
  // [heatmap]

  // Three panels: A(X); A(PX), labelled with the tokens its rows and columns hold; P^T A(PX) P.
  std::vector<std::vector<harness::CsvCell>> rows;
  const MatrixXd* panels[] = {&A, &A_perm, &A_back};
  for (int panel = 0; panel < 3; ++panel)
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j) {
        const auto token = [&](Index t) {
          return fmt::format("x{}", panel == 1 ? perm[std::size_t(t)] : t);
        };
        rows.push_back({double(panel), double(i), double(j), (*panels[panel])(i, j),
                        token(i), token(j)});
      }
  harness::write_csv(out / "06-permuted-pattern.csv",
                     {"panel", "row", "col", "weight", "row_token", "col_token"}, rows);
  harness::render_figure(out, "06-permuted-pattern", "", fmt::format("n={}", n));

  r.put("pattern_tokens", n);
  r.put("pattern_permuted_back_residual", diff);
  const double in_place =
      r.put("pattern_change_in_place", (A_perm - A).lpNorm<Eigen::Infinity>());
  r.say("4. Attention weights of {} tokens (one head, with biases), permutation:", n);
  for (const auto j : perm) r.say(" {}", j);
  r.say("\n   max |P^T A(PX) P - A(X)| = {:.2e}; max |A(PX) - A(X)| = {:.3f}\n", diff,
        in_place);
}

void run(const Options& o, const harness::CommandLine& cli) {
  if (o.d % o.heads != 0)
    throw harness::usage_error(
        "--heads", fmt::format("must divide --d = {} (got {})", o.d, o.heads));
  // At most: three blocks (4 d x d and 2 d x d_ff weights each) and a few n x d_ff and n x n
  // matrices alive at once.
  const double n = double(o.n), d = double(o.d), d_ff = double(o.d_ff);
  harness::require_memory("--d-ff", 8 * (3 * (4 * d * d + 2 * d * d_ff) + 8 * d * d +
                                         8 * n * (d + d_ff) + 4 * n * n));
  const std::filesystem::path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  harness::Report r;
  harness::record_options(cli, r.results);

  symmetry_residuals(o, rng, out, r);
  bias_effects(o, rng, r);
  bias_then_normalisation(o, rng, r);
  permuted_pattern(o, rng, out, r);
  harness::finish_program(out, r);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{"Chapter 06 — Permutation symmetry and bias terms.", "ch06"};
  harness::add_common_options(cli, o.common, ATTN_CHAPTER);
  harness::add_int_option(cli, "--n", o.n, 2, 1024, "tokens (a permutation needs two)");
  harness::add_int_option(cli, "--d", o.d, 2, 1024, "model width");
  harness::add_int_option(cli, "--heads", o.heads, 1, 1024,
                          "attention heads in the blocks; must divide --d");
  harness::add_int_option(cli, "--d-ff", o.d_ff, 1, 8192, "hidden width of the FFN");
  harness::add_int_option(cli, "--perms", o.perms, 1, 100'000,
                          "random permutations per variant", 5);
  return harness::run_program(cli, argc, argv, [&] { run(o, cli); });
}
