// Chapter 06's computations (ch06.hpp says what they are for).
#include "ch06.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace ch06 {

using attn::AttentionParams;
using Eigen::MatrixXd;
using Eigen::VectorXd;

MatrixXd weights(Index rows, Index cols, attn::Rng& rng) {
  return attn::random_normal(rows, cols, rng, 1.0 / std::sqrt(static_cast<double>(rows)));
}

VectorXd vec(Index size, attn::Rng& rng, double sigma) {
  return attn::random_normal(size, 1, rng, sigma);
}

AttentionParams random_attention(Index d, Index d_k, Index d_v, bool biases,
                                 attn::Rng& rng) {
  AttentionParams p;
  p.W_Q = weights(d, d_k, rng);
  p.W_K = weights(d, d_k, rng);
  p.W_V = weights(d, d_v, rng);
  if (biases) {
    p.b_Q = vec(d_k, rng);
    p.b_K = vec(d_k, rng);
    p.b_V = vec(d_v, rng);
  }
  return p;
}

attn::NormParams random_layer_norm(Index d, attn::Rng& rng) {
  attn::NormParams p;
  p.axis = attn::NormAxis::features;
  p.gamma = VectorXd::Ones(d) + vec(d, rng, 0.2);
  p.delta = vec(d, rng, 0.2);
  return p;
}

attn::BlockParams random_block(Index d, Index heads, Index d_ff, attn::Rng& rng,
                               attn::NormPlacement placement) {
  attn::BlockParams p;
  p.attention.heads = heads;
  p.attention.W_Q = weights(d, d, rng);
  p.attention.W_K = weights(d, d, rng);
  p.attention.W_V = weights(d, d, rng);
  p.attention.W_O = weights(d, d, rng);
  p.b_O = vec(d, rng);
  p.ffn.W_1 = weights(d, d_ff, rng);
  p.ffn.b_1 = vec(d_ff, rng);
  p.ffn.W_2 = weights(d_ff, d, rng);
  p.ffn.b_2 = vec(d, rng);
  p.norm1 = random_layer_norm(d, rng);
  p.norm2 = random_layer_norm(d, rng);
  p.placement = placement;
  return p;
}

attn::NormParams random_token_norm(Index n, bool per_position, attn::Rng& rng) {
  attn::NormParams p;
  p.axis = attn::NormAxis::tokens;
  if (per_position) {
    p.gamma = VectorXd::Ones(n) + vec(n, rng, 0.5);
    p.delta = vec(n, rng, 0.5);
  }
  return p;
}

attn::Permutation moving_permutation(Index n, attn::Rng& rng) {
  if (n < 2) throw std::invalid_argument("moving_permutation: needs n >= 2 tokens");
  for (;;) {
    attn::Permutation perm = attn::random_permutation(n, rng);
    for (Index i = 0; i < n; ++i)
      if (perm[std::size_t(i)] != i) return perm;
  }
}

namespace {

// One bar of Figure 6.2: a map of one token matrix, and the symmetry it should (or should
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

void tell(const Progress& progress, const std::string& what) {
  if (progress) progress(what);
}

}  // namespace

// Chapter sections 1, 2, 5, 6 and 7; Figure 6.2.
std::vector<VariantResidual> symmetry_residuals(const Sizes& s, attn::Rng& rng,
                                                const Progress& progress) {
  const Index n = s.n, d = s.d, heads = s.heads, d_ff = s.d_ff;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const MatrixXd Z = attn::random_normal(n + 3, d, rng);  // a second sequence
  const AttentionParams plain = random_attention(d, d, d, false, rng);
  const AttentionParams biased = random_attention(d, d, d, true, rng);
  const AttentionParams only_bQ = with_bias(plain, biased, &AttentionParams::b_Q),
                        only_bK = with_bias(plain, biased, &AttentionParams::b_K),
                        only_bV = with_bias(plain, biased, &AttentionParams::b_V);
  using P = attn::NormPlacement;
  const attn::BlockParams post = random_block(d, heads, d_ff, rng, P::post);
  const attn::BlockParams pre = random_block(d, heads, d_ff, rng, P::pre);
  const attn::BlockParams inner = random_block(d, heads, d_ff, rng, P::inner);
  const attn::NormParams ln = random_layer_norm(d, rng);
  const attn::NormParams tn = random_token_norm(n, false, rng);
  const attn::NormParams tn_affine = random_token_norm(n, true, rng);
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

  // Every permutation is drawn before any residual is computed: in the student copy the
  // residual (exercise 06.6) throws, and the sections after this one must still draw the
  // same numbers as in the full book.
  std::vector<std::vector<attn::Permutation>> perms(variants.size());
  for (std::size_t k = 0; k < variants.size(); ++k)
    for (long i = 0; i < s.perms; ++i)
      perms[k].push_back(moving_permutation(variants[k].input.rows(), rng));

  std::vector<VariantResidual> residuals;
  for (std::size_t k = 0; k < variants.size(); ++k) {
    const Variant& v = variants[k];
    tell(progress, "variant " + std::to_string(k + 1) + " of " +
                       std::to_string(variants.size()) + ": " + v.label);
    // A layer that needs another exercise not done yet (the student copy) is left out, and
    // its row says which; this chapter's own residual (06.6) still stops the whole section.
    try {
      static_cast<void>(v.f(v.input));
    } catch (const attn::exercise_not_done& e) {
      residuals.push_back({v.key, v.label, v.invariance, v.symmetric, 0, 0, e});
      continue;
    }
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const attn::Permutation& perm : perms[k]) {
      // [residual]
      const double res = v.invariance ? attn::invariance_residual(v.f, v.input, perm)
                                      : attn::equivariance_residual(v.f, v.input, perm);
      // [residual]
      lo = std::min(lo, res);
      hi = std::max(hi, res);
    }
    residuals.push_back({v.key, v.label, v.invariance, v.symmetric, hi, lo});
  }
  tell(progress, "");
  return residuals;
}

MatrixXd output_shift(const MatrixXd& X, const AttentionParams& p,
                      const AttentionParams& p0, attn::Normalisation h) {
  return attn::cross_attention(X, X, p, h) - attn::cross_attention(X, X, p0, h);
}

// Chapter sections 3 and 4.
BiasEffects bias_effects(const Sizes& s, attn::Rng& rng) {
  const Index n = s.n, d = s.d;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const AttentionParams p0 = random_attention(d, d, d, false, rng);
  const AttentionParams pb = random_attention(d, d, d, true, rng);
  // How the output moves when p0 becomes p, with weights h.
  const auto shift = [&](const AttentionParams& p, attn::Normalisation h) {
    return output_shift(X, p, p0, h);
  };
  const auto softmax = attn::Normalisation::softmax,
             identity = attn::Normalisation::identity;
  BiasEffects e;
  for (const auto& [name, bias] :
       {std::pair{"b_Q", &AttentionParams::b_Q}, std::pair{"b_K", &AttentionParams::b_K},
        std::pair{"b_V", &AttentionParams::b_V}}) {
    const AttentionParams p = with_bias(p0, pb, bias);
    e.one_bias.push_back({name, shift(p, softmax).lpNorm<Eigen::Infinity>(),
                          shift(p, identity).lpNorm<Eigen::Infinity>()});
  }
  // The value bias, exactly: + b_V with softmax; + (S 1) b_V^T with h = id.
  const AttentionParams with_bV = with_bias(p0, pb, &AttentionParams::b_V);
  const MatrixXd soft_shift = shift(with_bV, softmax),
                 id_shift = shift(with_bV, identity);
  const MatrixXd S = (X * p0.W_Q) * (X * p0.W_K).transpose() / std::sqrt(double(d));
  const VectorXd row_sums = S.rowwise().sum();
  const MatrixXd plain_shift = VectorXd::Ones(n) * pb.b_V.transpose();
  e.softmax_shift_residual = (soft_shift - plain_shift).lpNorm<Eigen::Infinity>();
  e.identity_rowsum_residual =
      (id_shift - row_sums * pb.b_V.transpose()).lpNorm<Eigen::Infinity>();
  e.identity_vs_plain_shift = (id_shift - plain_shift).lpNorm<Eigen::Infinity>();
  e.row_sum_min = row_sums.minCoeff();
  e.row_sum_max = row_sums.maxCoeff();
  return e;
}

// Chapter section 5.
NormalisationChanges bias_then_normalisation(const Sizes& s, attn::Rng& rng) {
  const Index n = s.n, d = s.d;
  const MatrixXd Y = attn::random_normal(n, d, rng);
  const VectorXd b = vec(d, rng, 1.0);
  const MatrixXd Yb = Y.rowwise() + b.transpose();
  const MatrixXd Yc = Y.array() + b.mean();  // the part of b along 1_d only
  const auto layer_norm = [](const MatrixXd& M) { return attn::layer_norm(M, {}, {}); };
  const auto token_norm = [](const MatrixXd& M) { return attn::token_norm(M, {}, {}); };
  const auto change = [&Y](MatrixXd (*norm)(const MatrixXd&), const MatrixXd& Y_shifted) {
    return (norm(Y_shifted) - norm(Y)).lpNorm<Eigen::Infinity>();
  };
  return {change(layer_norm, Yb), change(layer_norm, Yc), change(token_norm, Yb)};
}

MatrixXd pattern_weights(const MatrixXd& Y, const AttentionParams& p) {
  MatrixXd Q = Y * p.W_Q, K = Y * p.W_K;
  if (p.b_Q.size() > 0) Q.rowwise() += p.b_Q.transpose();
  if (p.b_K.size() > 0) K.rowwise() += p.b_K.transpose();
  return attn::attention_weights(Q, K, MatrixXd());
}

MatrixXd permute_both(const MatrixXd& A, const attn::Permutation& perm) {
  return attn::permute_rows(attn::permute_rows(A, perm).transpose(), perm).transpose();
}

// Chapter section 1; Figure 6.1.
Pattern permuted_pattern(const Sizes& s, attn::Rng& rng) {
  const Index n = std::min<Index>(s.n, 10), d = s.d;
  Pattern pt;
  pt.X = attn::random_normal(n, d, rng);
  pt.p = random_attention(d, d, d, true, rng);
  pt.perm = moving_permutation(n, rng);
  const MatrixXd& X = pt.X;
  const attn::Permutation& perm = pt.perm;
  const auto weights = [&pt](const MatrixXd& Y) { return pattern_weights(Y, pt.p); };
  // [heatmap]
  const MatrixXd A = weights(X);                                 // tokens in order 0..n-1
  const MatrixXd A_perm = weights(attn::permute_rows(X, perm));  // row i is token perm[i]
  // P^T A(PX) P: put rows and columns back in the original order.
  const MatrixXd A_back = permute_both(A_perm, attn::inverse(perm));
  const double diff = (A_back - A).lpNorm<Eigen::Infinity>();
  // [heatmap]
  pt.A = A;
  pt.A_perm = A_perm;
  pt.A_back = A_back;
  pt.permuted_back_residual = diff;
  pt.change_in_place = (A_perm - A).lpNorm<Eigen::Infinity>();
  return pt;
}

Sections sections(const Sizes& s, attn::Rng& rng, const Progress& progress) {
  Sections all;
  all.residuals = symmetry_residuals(s, rng, progress);
  all.bias = bias_effects(s, rng);
  all.normalisation = bias_then_normalisation(s, rng);
  all.pattern = permuted_pattern(s, rng);
  return all;
}

}  // namespace ch06
