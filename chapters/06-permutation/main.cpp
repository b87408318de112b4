// Chapter 06 — Permutation symmetry and bias terms.
//
// Measures, for random tokens and random permutations, how far each layer variant is from
// permutation equivariance (or invariance): attention with and without biases, LayerNorm,
// the FFN, whole blocks, and the things that break the symmetry (positional encoding,
// causal mask, per-position parameters). Then measures what each bias does to the output,
// with and without softmax, and draws an attention pattern before and after permuting the
// tokens. Writes output.txt (this summary), results.json, and the CSV + SVG of each figure.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "harness/cli.hpp"
#include "harness/output.hpp"
#include "attn/random.hpp"
#include "attn/transformer_block.hpp"
#include "setup.hpp"

namespace {

using harness::say;

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

// ------------------------------------------------------------------------------------
// 1. Symmetry residuals of every variant, over --perms random permutations.
// Returns the number of variants (bars of the figure).
std::size_t residuals(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
                      std::string& text, harness::Results& results) {
  const Index n = o.n, d = o.d, heads = o.heads, d_ff = o.d_ff;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const MatrixXd Z = attn::random_normal(n + 3, d, rng);  // a second sequence
  const attn::AttentionParams plain = ch06::random_attention(d, d, d, false, rng);
  const attn::AttentionParams biased = ch06::random_attention(d, d, d, true, rng);
  attn::AttentionParams only_bQ = plain, only_bK = plain, only_bV = plain;
  only_bQ.b_Q = biased.b_Q;
  only_bK.b_K = biased.b_K;
  only_bV.b_V = biased.b_V;
  using P = attn::NormPlacement;
  const attn::BlockParams post = ch06::random_block(d, heads, d_ff, rng, P::post);
  const attn::BlockParams pre = ch06::random_block(d, heads, d_ff, rng, P::pre);
  const attn::BlockParams inner = ch06::random_block(d, heads, d_ff, rng, P::inner);
  const attn::NormParams ln = ch06::random_layer_norm(d, rng);
  const attn::NormParams tn = ch06::random_token_norm(n, false, rng);
  const attn::NormParams tn_affine = ch06::random_token_norm(n, true, rng);
  const MatrixXd E = attn::sinusoidal_encoding(n, d);
  const MatrixXd Qx = X * plain.W_Q, Vz = Z * plain.W_V;  // fixed queries and values

  const auto self = [](const attn::AttentionParams& p, attn::Normalisation h) {
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

  say(text, "1. Symmetry residuals, max and min over {} random permutations\n", o.perms);
  say(text, "   n = {} tokens, d = {}, {} heads, d_ff = {}; second sequence: {} tokens\n",
      n, d, heads, d_ff, n + 3);
  say(text,
      "   residual = max|f(PX) - P f(X)| / max|f(X)|   (inv.: max|f(PX) - f(X)| / "
      "...)\n");
  say(text, "   {:<38} {:>10} {:>10}  {}\n", "variant", "max", "min", "claim");
  std::vector<std::vector<harness::CsvCell>> rows;
  double worst_symmetric = 0, weakest_broken = std::numeric_limits<double>::infinity();
  int k = 0;
  for (const auto& v : variants) {
    harness::progress(fmt::format("variant {} of {}: {}", k + 1, variants.size(), v.label));
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (long r = 0; r < o.perms; ++r) {
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
    say(text, "   {:<38} {:>10.2e} {:>10.2e}  {}\n", v.label, hi, lo,
        v.symmetric ? (v.invariance ? "invariant" : "equivariant") : "broken");
    results["residual_max_" + v.key] = hi;
    results["residual_min_" + v.key] = lo;
    rows.push_back({static_cast<double>(k), v.label, hi, lo, v.symmetric ? 1.0 : 0.0});
    ++k;
  }
  harness::progress("");
  say(text, "   largest residual of a symmetric variant: {:.2e} (eps = {:.1e})\n",
      worst_symmetric, std::numeric_limits<double>::epsilon());
  say(text, "   smallest residual of a broken variant:   {:.2e}\n\n", weakest_broken);
  results["worst_symmetric_residual"] = worst_symmetric;
  results["weakest_broken_residual"] = weakest_broken;
  // The gap between the two groups: the largest symmetric residual over the smallest broken one.
  results["symmetric_over_broken"] = worst_symmetric / weakest_broken;
  // The three arrangements of a whole block, together.
  results["worst_block_residual"] =
      std::max({results.number("residual_max_block_post_ln"),
                results.number("residual_max_block_pre_ln"),
                results.number("residual_max_block_source_ln")});
  harness::write_csv(out / "06-symmetry-residuals.csv",
                  {"index", "variant", "residual_max", "residual_min", "symmetric"},
                  rows);
  return variants.size();
}

// ------------------------------------------------------------------------------------
// 2. What each bias does to the output, with softmax weights and with h = id.
void bias_effects(const Options& o, attn::Rng& rng, std::string& text, harness::Results& results) {
  const Index n = o.n, d = o.d;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const attn::AttentionParams p0 = ch06::random_attention(d, d, d, false, rng);
  const attn::AttentionParams pb = ch06::random_attention(d, d, d, true, rng);
  const VectorXd ones = VectorXd::Ones(n);
  say(text,
      "2. Adding one bias at a time (self-attention, n = {}, d = {}); max |change|\n", n,
      d);
  say(text, "   {:<14} {:>12} {:>12}\n", "bias", "softmax", "h = id");
  for (const char* which : {"b_Q", "b_K", "b_V"}) {
    attn::AttentionParams p = p0;
    const std::string w = which;
    if (w == "b_Q") p.b_Q = pb.b_Q;
    if (w == "b_K") p.b_K = pb.b_K;
    if (w == "b_V") p.b_V = pb.b_V;
    double change[2];
    int i = 0;
    for (const auto h : {attn::Normalisation::softmax, attn::Normalisation::identity}) {
      const MatrixXd before = attn::cross_attention(X, X, p0, h);
      const MatrixXd after = attn::cross_attention(X, X, p, h);
      change[i++] = (after - before).lpNorm<Eigen::Infinity>();
    }
    say(text, "   {:<14} {:>12.3e} {:>12.3e}\n", w, change[0], change[1]);
    results["bias_change_softmax_" + w] = change[0];
    results["bias_change_identity_" + w] = change[1];
  }
  // The value bias, exactly: + b_V with softmax; + (S 1) b_V^T with h = id.
  attn::AttentionParams p = p0;
  p.b_V = pb.b_V;
  const MatrixXd soft_shift =
      attn::cross_attention(X, X, p) - attn::cross_attention(X, X, p0);
  const MatrixXd id_shift = attn::cross_attention(X, X, p, attn::Normalisation::identity) -
                            attn::cross_attention(X, X, p0, attn::Normalisation::identity);
  const MatrixXd S =
      (X * p0.W_Q) * (X * p0.W_K).transpose() / std::sqrt(static_cast<double>(d));
  const VectorXd row_sums = S.rowwise().sum();
  const double soft_res = (soft_shift - ones * p.b_V.transpose()).lpNorm<Eigen::Infinity>();
  const double id_res = (id_shift - row_sums * p.b_V.transpose()).lpNorm<Eigen::Infinity>();
  const double id_vs_bV = (id_shift - ones * p.b_V.transpose()).lpNorm<Eigen::Infinity>();
  say(text, "   softmax: max |change - 1 b_V^T|       = {:.2e}  (rows of A sum to 1)\n",
      soft_res);
  say(text, "   h = id:  max |change - (S 1) b_V^T|   = {:.2e}\n", id_res);
  say(text,
      "            max |change - 1 b_V^T|       = {:.2e}  (row sums of S: {:.2f} .. "
      "{:.2f})\n\n",
      id_vs_bV, row_sums.minCoeff(), row_sums.maxCoeff());
  results["value_bias_softmax_shift_residual"] = soft_res;
  results["value_bias_identity_rowsum_residual"] = id_res;
  results["value_bias_identity_vs_plain_shift"] = id_vs_bV;
  results["identity_row_sum_min"] = row_sums.minCoeff();
  results["identity_row_sum_max"] = row_sums.maxCoeff();

  // LayerNorm and token-axis normalisation against a bias added to every token.
  const MatrixXd Y = attn::random_normal(n, d, rng);
  const VectorXd b = ch06::vec(d, rng, 1.0);
  const MatrixXd Yb = Y + ones * b.transpose();
  const MatrixXd Yc = Y.array() + b.mean();  // the part of b along 1_d only
  const double ln_b = (attn::layer_norm(Yb, {}, {}) - attn::layer_norm(Y, {}, {})).lpNorm<Eigen::Infinity>();
  const double ln_c = (attn::layer_norm(Yc, {}, {}) - attn::layer_norm(Y, {}, {})).lpNorm<Eigen::Infinity>();
  const double tn_b = (attn::token_norm(Yb, {}, {}) - attn::token_norm(Y, {}, {})).lpNorm<Eigen::Infinity>();
  say(text, "3. A bias b added to every token, then a normalisation; max |change|\n");
  say(text, "   LayerNorm, general b:          {:.3e}\n", ln_b);
  say(text, "   LayerNorm, b = mean(b) 1_d:    {:.3e}\n", ln_c);
  say(text, "   token-axis norm, general b:    {:.3e}\n\n", tn_b);
  results["layer_norm_change_general_bias"] = ln_b;
  results["layer_norm_change_constant_bias"] = ln_c;
  results["token_norm_change_general_bias"] = tn_b;
}

// ------------------------------------------------------------------------------------
// 4. An attention pattern before and after permuting the tokens (the heatmap figure).
void heatmap(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
             std::string& text, harness::Results& results) {
  const Index n = std::min<Index>(o.n, 10), d = o.d;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const attn::AttentionParams p = ch06::random_attention(d, d, d, true, rng);
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
  std::vector<std::vector<harness::CsvCell>> rows;
  const auto token = [](Index t) { return fmt::format("x{}", t); };
  for (int panel = 0; panel < 3; ++panel)
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j) {
        const MatrixXd& M = panel == 0 ? A : panel == 1 ? A_perm : A_back;
        const Index ri = panel == 1 ? perm[std::size_t(i)] : i;
        const Index cj = panel == 1 ? perm[std::size_t(j)] : j;
        rows.push_back({static_cast<double>(panel), static_cast<double>(i),
                        static_cast<double>(j), M(i, j), token(ri), token(cj)});
      }
  harness::write_csv(out / "06-permuted-pattern.csv",
                  {"panel", "row", "col", "weight", "row_token", "col_token"}, rows);
  say(text, "4. Attention weights of {} tokens (one head, with biases), permutation:", n);
  for (const auto j : perm) say(text, " {}", j);
  say(text, "\n   max |P^T A(PX) P - A(X)| = {:.2e}; max |A(PX) - A(X)| = {:.3f}\n", diff,
      (A_perm - A).lpNorm<Eigen::Infinity>());
  results["pattern_tokens"] = n;
  results["pattern_permuted_back_residual"] = diff;
  results["pattern_change_in_place"] = (A_perm - A).lpNorm<Eigen::Infinity>();
}

void run(Options& o) {
  if (o.d % o.heads != 0)
    throw harness::usage_error("--heads",
                            fmt::format("must divide --d = {} (got {})", o.d, o.heads));
  const std::filesystem::path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  std::string text;
  harness::Results results;
  results["seed"] = o.common.seed;
  results["n"] = o.n;
  results["d"] = o.d;
  results["heads"] = o.heads;
  results["d_ff"] = o.d_ff;
  results["perms"] = o.perms;

  const std::size_t variants = residuals(o, rng, out, text, results);
  bias_effects(o, rng, text, results);
  heatmap(o, rng, out, text, results);

  const double eps_tick = std::numeric_limits<double>::epsilon();
  harness::render_figure(out, "06-symmetry-residuals", "",
                      fmt::format("eps={:.17g}; nvar={}", eps_tick, variants));
  harness::render_figure(out, "06-permuted-pattern", "",
                      fmt::format("n={}", std::min<long>(o.n, 10)));
  harness::finish_program(out, results, text);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{"Chapter 06 — Permutation symmetry and bias terms.", "ch06"};
  harness::add_common_options(cli, o.common, ATTN_DEFAULT_OUT);
  harness::add_int_option(cli, "--n", o.n, 2, 1024, "tokens (a permutation needs two)");
  harness::add_int_option(cli, "--d", o.d, 2, 1024, "model width");
  harness::add_int_option(cli, "--heads", o.heads, 1, 1024,
                       "attention heads in the blocks; must divide --d");
  harness::add_int_option(cli, "--d-ff", o.d_ff, 1, 8192, "hidden width of the FFN");
  harness::add_int_option(cli, "--perms", o.perms, 1, 100'000,
                       "random permutations per variant");
  return harness::run_program(cli, argc, argv, [&] {
    if (o.common.quick && !harness::option_given(cli, "--perms")) o.perms = 5;
    run(o);
  });
}
