// Chapter 06 — the worked solutions (instructor's copy only): the solution code of exercises
// 06.1 (RMSNorm), 06.3 (position biases as masks) and 06.5 (an order-fixed self-attention), a
// tested copy of the library's equivariance_residual (06.6), and every number and identity that
// solutions.md states.
//
// Tolerances, as in test_helpers.hpp: an exact symmetry is checked at rounding(n, d) =
// 256 (n + d) eps relative to the size of the output (the reordered sums move by a few ulps);
// "broken" means a relative change above 1e-3. Every number solutions.md prints is recorded
// with solution_value("06.M.key", x) and shown from the build (<!--#sol:06.M.key-->): they
// are order-one quantities computed from fixed seeds, the same on every x86-64 machine far
// beyond the digits printed (rounding moves them by about 1e-15), or bounds the page states.
// Approx is used with scale 0 (relative): with doctest's default scale of 1 an epsilon is
// absolute for |x| < 1. Exact zeros are asserted
// only where every output entry repeats the same IEEE 754 operations in the same order, so
// that they hold on any machine.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/transformer_block.hpp"
#include "ch06.hpp"
#include "solution_values.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch06_test;
using book_test::solution_value;

namespace {

// [sol-06-1-rms-norm]
// RMSNorm of every row (token): gamma ⊙ x / sqrt(|x|^2 / d + eps0). No centring, no shift.
MatrixXd rms_norm(const Eigen::Ref<const MatrixXd>& X, const VectorXd& gamma,
                  double eps0 = 1e-5) {
  if (!(eps0 > 0)) throw std::invalid_argument("rms_norm: eps0 must be > 0");
  if (gamma.size() != 0 && gamma.size() != X.cols())
    throw std::invalid_argument("rms_norm: gamma needs one entry per feature");
  const auto d = static_cast<double>(X.cols());
  const VectorXd mean_square = X.rowwise().squaredNorm() / d;  // one number per token
  MatrixXd Y = X.array().colwise() / (mean_square.array() + eps0).sqrt();
  if (gamma.size() > 0) Y.array().rowwise() *= gamma.transpose().array();
  return Y;
}
// [sol-06-1-rms-norm]

// [sol-06-1-rms-block]
// A pre-norm block with RMSNorm in place of LayerNorm (the LLaMA arrangement):
// X1 = X + MHA(RMS_1(X)), X2 = X1 + FFN(RMS_2(X1)).
MatrixXd rms_block(const MatrixXd& X, const attn::BlockParams& p, const VectorXd& gamma1,
                   const VectorXd& gamma2) {
  const MatrixXd X1 = X + attn::attention_sublayer(rms_norm(X, gamma1), p);
  return X1 + attn::feed_forward(rms_norm(X1, gamma2), p.ffn);
}
// [sol-06-1-rms-block]

// [sol-06-3-position-masks]
// ALiBi with one slope m: M_ij = -m |i - j|, a score bias that depends on positions only.
MatrixXd alibi(Index n, double m) {
  MatrixXd M(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) M(i, j) = -m * static_cast<double>(std::abs(i - j));
  return M;
}

// The same with the circular distance min(|i - j|, n - |i - j|): positions on a ring.
MatrixXd circular_alibi(Index n, double m) {
  MatrixXd M(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      const Index dist = std::min(std::abs(i - j), n - std::abs(i - j));
      M(i, j) = -m * static_cast<double>(dist);
    }
  return M;
}

// The cyclic shift pi(i) = (i + s) mod n.
attn::Permutation cyclic_shift(Index n, Index s) {
  attn::Permutation perm(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) perm[std::size_t(i)] = (i + s) % n;
  return perm;
}
// [sol-06-3-position-masks]

// [sol-06-3-masked-block]
// A pre-LN block whose (one-head) attention takes a score bias M through the mask argument.
MatrixXd masked_block(const MatrixXd& X, const attn::AttentionParams& a,
                      const attn::BlockParams& b, const MatrixXd& M) {
  const MatrixXd H = attn::normalise(X, b.norm1);
  const MatrixXd X1 = X + attn::cross_attention(H, H, a, attn::Normalisation::softmax, M);
  return X1 + attn::feed_forward(attn::normalise(X1, b.norm2), b.ffn);
}
// [sol-06-3-masked-block]

// [sol-06-5-ordered-attention]
// Self-attention in which every output entry is computed by the same sequence of IEEE 754
// operations whatever the order of the tokens: plain loops, one std::fma per multiply-add
// (one rounding, on every machine, vector path or not), and the keys of every row visited in
// an order fixed by their contents (the bit patterns of k_j and then v_j), not by their
// positions. Tokens that tie in that order are identical, so they add identical terms. No
// bare multiplication feeds an addition, so a compiler has nothing to fuse into an FMA in one
// code path and not in another.
std::uint64_t bits(double x) {
  std::uint64_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

MatrixXd ordered_self_attention(const MatrixXd& X, const attn::AttentionParams& p,
                                bool sort_keys = true) {
  const Index n = X.rows(), d = X.cols();
  const auto project = [&](const MatrixXd& W, const VectorXd& b) {
    MatrixXd Y(n, W.cols());
    for (Index i = 0; i < n; ++i)
      for (Index c = 0; c < W.cols(); ++c) {
        double s = 0.0;
        for (Index l = 0; l < d; ++l) s = std::fma(X(i, l), W(l, c), s);
        Y(i, c) = b.size() > 0 ? s + b(c) : s;
      }
    return Y;
  };
  const MatrixXd Q = project(p.W_Q, p.b_Q), K = project(p.W_K, p.b_K),
                 V = project(p.W_V, p.b_V);
  std::vector<Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Index{0});
  const auto before = [&](Index a, Index b) {  // lexicographic on the bits of (k, v)
    for (Index c = 0; c < K.cols(); ++c)
      if (bits(K(a, c)) != bits(K(b, c))) return bits(K(a, c)) < bits(K(b, c));
    for (Index c = 0; c < V.cols(); ++c)
      if (bits(V(a, c)) != bits(V(b, c))) return bits(V(a, c)) < bits(V(b, c));
    return false;
  };
  if (sort_keys) std::sort(order.begin(), order.end(), before);
  const double root_dk = std::sqrt(static_cast<double>(K.cols()));
  MatrixXd out(n, V.cols());
  VectorXd s(n), e(n);
  for (Index i = 0; i < n; ++i) {
    double m = -std::numeric_limits<double>::infinity();
    for (const Index j : order) {
      double t = 0.0;
      for (Index c = 0; c < K.cols(); ++c) t = std::fma(Q(i, c), K(j, c), t);
      s(j) = t / root_dk;
      m = std::max(m, s(j));  // the maximum of a set: no rounding, any order
    }
    double z = 0.0;  // the softmax denominator: a sum over tokens, in content order
    for (const Index j : order) {
      e(j) = std::exp(s(j) - m);
      z += e(j);
    }
    for (Index c = 0; c < V.cols(); ++c) {
      double acc = 0.0;  // sum_j a_ij v_jc: a sum over tokens, in content order
      for (const Index j : order) acc = std::fma(e(j) / z, V(j, c), acc);
      out(i, c) = acc;
    }
  }
  return out;
}
// [sol-06-5-ordered-attention]

// Largest and smallest equivariance residual of f over `count` moving permutations.
struct Range {
  double lo, hi;
};
Range residual_range(const attn::TokenMap& f, const MatrixXd& X, int count, attn::Rng& rng) {
  Range r{std::numeric_limits<double>::infinity(), 0.0};
  for (int k = 0; k < count; ++k) {
    const double res =
        attn::equivariance_residual(f, X, ch06::moving_permutation(X.rows(), rng));
    r.lo = std::min(r.lo, res);
    r.hi = std::max(r.hi, res);
  }
  return r;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// 06.1 RMSNorm

TEST_CASE(
    "solution 06.1: RMSNorm divides each token by its root mean square and equals "
    "LayerNorm "
    "on centred tokens") {
  // A token of four ones has mean square 1: RMS(x) = gamma / sqrt(1 + eps0), entry by entry.
  const VectorXd gamma = (VectorXd(4) << 1.0, -2.0, 0.5, 3.0).finished();
  const MatrixXd ones = MatrixXd::Ones(1, 4);
  const MatrixXd y = rms_norm(ones, gamma, 1e-5);
  for (Index k = 0; k < 4; ++k)
    CHECK(y(0, k) ==
          doctest::Approx(gamma(k) / std::sqrt(1.0 + 1e-5)).scale(0).epsilon(4 * eps));
  // On tokens with mean 0 the centring of LayerNorm does nothing, so the two agree.
  attn::Rng rng(611);
  for (const Index d : {2, 5, 16}) {
    MatrixXd X = attn::random_normal(7, d, rng);
    X = X.colwise() - X.rowwise().mean();  // every token centred
    const VectorXd g = ch06::vec(d, rng, 1.0);
    CHECK(rel(rms_norm(X, g), attn::layer_norm(X, g, VectorXd())) <= rounding(7, d));
  }
  CHECK_THROWS_AS(rms_norm(ones, VectorXd::Ones(3)), std::invalid_argument);
  CHECK_THROWS_AS(rms_norm(ones, gamma, 0.0), std::invalid_argument);
}

TEST_CASE("solution 06.1: a pre-norm block with RMSNorm is permutation-equivariant") {
  for_all([](Index n, Index d, Index heads, attn::Rng& rng,
             const attn::Permutation& perm) {
    const MatrixXd X = attn::random_normal(n, d, rng);
    const attn::BlockParams b =
        ch06::random_block(d, heads, 2 * d, rng, attn::NormPlacement::pre);
    const VectorXd g1 = VectorXd::Ones(d) + ch06::vec(d, rng, 0.2),
                   g2 = VectorXd::Ones(d) + ch06::vec(d, rng, 0.2);
    const attn::TokenMap f = [&](const MatrixXd& Y) { return rms_block(Y, b, g1, g2); };
    CHECK(attn::equivariance_residual(f, X, perm) <= rounding(n, d));
    // RMSNorm alone acts on each token separately, like LayerNorm.
    const attn::TokenMap g = [&](const MatrixXd& Y) { return rms_norm(Y, g1); };
    CHECK(attn::equivariance_residual(g, X, perm) <= rounding(n, d));
  });
}

TEST_CASE("solution 06.1: RMSNorm does not remove a bias c 1_d that LayerNorm removes") {
  attn::Rng rng(601);
  const Index n = 8, d = 16;
  const MatrixXd X = attn::random_normal(n, d, rng);
  const VectorXd g = VectorXd::Ones(d), none;
  const MatrixXd Xc = X.array() + 1.0;  // b = c 1_d with c = 1 added to every token
  // LayerNorm: rounding only (the centring subtracts c again).
  CHECK(max_abs(attn::layer_norm(Xc, none, none) - attn::layer_norm(X, none, none)) <=
        rounding(n, d));
  // RMSNorm: an order-one change.
  const double change = max_abs(rms_norm(Xc, g) - rms_norm(X, g));
  CHECK(change > broken);
  solution_value("06.1.rms_bias_change", change);
  // A large c wipes the token out: RMS(x + c 1) -> sign(c) gamma, every token alike; the
  // deviation is of order max|x| / c, about 3e-8 here.
  const MatrixXd Xbig = X.array() + 1e8;
  const MatrixXd target = MatrixXd::Ones(n, 1) * g.transpose();
  solution_value("06.1.rms_large_bias_deviation", max_abs(rms_norm(Xbig, g) - target));
}

// ---------------------------------------------------------------------------------------
// 06.2 The key bias under a causal mask

TEST_CASE(
    "solution 06.2: the key bias cancels in causal attention and masked weights stay "
    "exactly "
    "0") {
  for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
    const MatrixXd X = attn::random_normal(n, d, rng);
    const MatrixXd M = attn::causal_mask(n);
    attn::AttentionParams p = ch06::random_attention(d, d, d, true, rng);  // b_Q, b_V too
    attn::AttentionParams p0 = p;
    p0.b_K.resize(0);
    const MatrixXd with_bK =
        attn::cross_attention(X, X, p, attn::Normalisation::softmax, M);
    const MatrixXd without =
        attn::cross_attention(X, X, p0, attn::Normalisation::softmax, M);
    // The shift c_i = (q_i + b_Q).b_K / sqrt(d) added to row i's visible scores; the
    // rounding it costs is about eps |c_i| per score, as in the chapter's unmasked test.
    const MatrixXd Q = (X * p.W_Q).rowwise() + p.b_Q.transpose();
    const double c = max_abs(Q * p.b_K) / std::sqrt(static_cast<double>(d));
    CHECK(rel(with_bK, without) <= rounding(n, d) * (1.0 + c));
    // The weights: every masked entry is exactly 0 (exp(-inf) = 0), with or without b_K.
    const MatrixXd K = (X * p.W_K).rowwise() + p.b_K.transpose();
    const MatrixXd A = attn::attention_weights(Q, K, M);
    for (Index i = 0; i < n; ++i)
      for (Index j = i + 1; j < n; ++j) CHECK(A(i, j) == 0.0);
    // Row 0 sees only token 0: its weight is exactly 1, its output exactly v_0 (with b_V).
    CHECK(A(0, 0) == 1.0);
    const MatrixXd V = (X * p.W_V).rowwise() + p.b_V.transpose();
    CHECK(max_abs(with_bK.row(0) - V.row(0)) == 0.0);
  });
}

TEST_CASE(
    "solution 06.2: under a causal mask the value bias still adds b_V to every row") {
  for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
    const MatrixXd X = attn::random_normal(n, d, rng);
    const MatrixXd M = attn::causal_mask(n);
    attn::AttentionParams p = ch06::random_attention(d, d, d, false, rng);
    const MatrixXd plain =
        attn::cross_attention(X, X, p, attn::Normalisation::softmax, M);
    p.b_V = ch06::vec(d, rng, 1.0);
    const MatrixXd with_bV =
        attn::cross_attention(X, X, p, attn::Normalisation::softmax, M);
    MatrixXd expected = plain;
    expected.rowwise() += p.b_V.transpose();  // the visible weights of each row sum to 1
    CHECK(rel(with_bV, expected) <= rounding(n, d));
    CHECK(max_abs(with_bV - plain) > broken);  // and b_V really moved the output
  });
}

// ---------------------------------------------------------------------------------------
// 06.3 Relative position biases

namespace {
struct AlibiSetup {
  static constexpr Index n = 8, d = 16;
  static constexpr double m = 0.5;
  attn::Rng rng{631};
  MatrixXd X = attn::random_normal(n, d, rng);
  attn::AttentionParams a = ch06::random_attention(d, d, d, true, rng);
  attn::BlockParams b = ch06::random_block(d, 1, 2 * d, rng, attn::NormPlacement::pre);
  attn::TokenMap layer(const MatrixXd& M) const {
    return [this, M](const MatrixXd& Y) {
      return attn::cross_attention(Y, Y, a, attn::Normalisation::softmax, M);
    };
  }
  attn::TokenMap block(const MatrixXd& M) const {
    return [this, M](const MatrixXd& Y) { return masked_block(Y, a, b, M); };
  }
};
}  // namespace

TEST_CASE(
    "solution 06.3: an ALiBi score bias breaks the equivariance of attention and of a "
    "block") {
  AlibiSetup s;
  const MatrixXd M = alibi(s.n, s.m);
  attn::Rng rng(632);
  // 20 random permutations, n = 8, d = 16, m = 1/2.
  const Range layer = residual_range(s.layer(M), s.X, 20, rng);
  solution_value("06.3.alibi_layer_lo", layer.lo);
  solution_value("06.3.alibi_layer_hi", layer.hi);
  const Range block = residual_range(s.block(M), s.X, 20, rng);
  solution_value("06.3.alibi_block_lo", block.lo);
  solution_value("06.3.alibi_block_hi", block.hi);
  CHECK(layer.lo > broken);
  CHECK(block.lo > broken);
  // Without the bias (m = 0) the same layer is equivariant again.
  CHECK(residual_range(s.layer(alibi(s.n, 0.0)), s.X, 5, rng).hi <= rounding(s.n, s.d));
}

TEST_CASE(
    "solution 06.3: ALiBi with |i - j| is still equivariant under the reversal of the "
    "tokens") {
  AlibiSetup s;
  attn::Permutation reversal(static_cast<std::size_t>(s.n));
  for (Index i = 0; i < s.n; ++i) reversal[std::size_t(i)] = s.n - 1 - i;
  // |(n-1-i) - (n-1-j)| = |i - j|: this P leaves M unchanged, P M P^T = M.
  const MatrixXd M = alibi(s.n, s.m);
  CHECK(max_abs(attn::permute_rows(attn::permute_rows(M, reversal).transpose(), reversal)
                    .transpose() -
                M) == 0.0);
  CHECK(attn::equivariance_residual(s.layer(M), s.X, reversal) <= rounding(s.n, s.d));
  CHECK(attn::equivariance_residual(s.block(M), s.X, reversal) <= rounding(s.n, s.d));
}

TEST_CASE(
    "solution 06.3: a circular-distance bias is equivariant under cyclic shifts and only "
    "under them") {
  AlibiSetup s;
  const MatrixXd C = circular_alibi(s.n, s.m), M = alibi(s.n, s.m);
  Range linear_under_shift{std::numeric_limits<double>::infinity(), 0.0};
  for (Index shift = 1; shift < s.n; ++shift) {
    const attn::Permutation perm = cyclic_shift(s.n, shift);
    // The circular distance is shift-invariant: the residual is rounding, layer and block.
    CHECK(attn::equivariance_residual(s.layer(C), s.X, perm) <= rounding(s.n, s.d));
    CHECK(attn::equivariance_residual(s.block(C), s.X, perm) <= rounding(s.n, s.d));
    // |i - j| is not: a shift wraps some tokens around the end.
    const double res = attn::equivariance_residual(s.layer(M), s.X, perm);
    linear_under_shift.lo = std::min(linear_under_shift.lo, res);
    linear_under_shift.hi = std::max(linear_under_shift.hi, res);
    // The reflections pi(i) = (shift - i) mod n preserve the circular distance too.
    attn::Permutation reflection(static_cast<std::size_t>(s.n));
    for (Index i = 0; i < s.n; ++i) reflection[std::size_t(i)] = (shift - i + s.n) % s.n;
    CHECK(attn::equivariance_residual(s.layer(C), s.X, reflection) <= rounding(s.n, s.d));
  }
  CHECK(linear_under_shift.lo > broken);
  solution_value("06.3.linear_shift_lo", linear_under_shift.lo);
  solution_value("06.3.linear_shift_hi", linear_under_shift.hi);
  // The circular bias under 20 random (non-cyclic) permutations: broken.
  attn::Rng rng(633);
  const Range circ = residual_range(s.layer(C), s.X, 20, rng);
  CHECK(circ.lo > broken);
  solution_value("06.3.circular_random_lo", circ.lo);
  solution_value("06.3.circular_random_hi", circ.hi);
}

// ---------------------------------------------------------------------------------------
// 06.4 Which bias can be removed

TEST_CASE(
    "solution 06.4: with h = id the query bias adds a row that depends on the keys and "
    "values") {
  attn::Rng rng(641);
  const Index n = 8, n_k = 11, d = 16;
  const MatrixXd X = attn::random_normal(n, d, rng), Z = attn::random_normal(n_k, d, rng),
                 Z2 = attn::random_normal(n_k, d, rng);
  const attn::AttentionParams pb = ch06::random_attention(d, d, d, true, rng);
  attn::AttentionParams p0 = pb;
  p0.b_Q.resize(0);
  p0.b_K.resize(0);
  p0.b_V.resize(0);
  attn::AttentionParams p = p0;
  p.b_Q = pb.b_Q;
  const auto id = attn::Normalisation::identity;
  // The rows the query bias adds, measured by running the layer with and without it.
  const auto added = [&](const MatrixXd& Zs) -> MatrixXd {
    return attn::cross_attention(X, Zs, p, id) - attn::cross_attention(X, Zs, p0, id);
  };
  const auto formula = [&](const MatrixXd& Zs) -> Eigen::RowVectorXd {
    return p.b_Q.transpose() * (Zs * p.W_K).transpose() * (Zs * p.W_V) /
           std::sqrt(static_cast<double>(d));
  };
  const MatrixXd r = added(Z), r_double = added(2.0 * Z), r2 = added(Z2);
  const MatrixXd ones = MatrixXd::Ones(n, 1);
  // Every row is the same row b_Q^T K^T V / sqrt(d), for each sequence.
  CHECK(rel(r, ones * formula(Z)) <= rounding(n_k, d));
  CHECK(rel(r2, ones * formula(Z2)) <= rounding(n_k, d));
  // K^T V is quadratic in Z: doubling the sequence quadruples the row.
  CHECK(rel(r_double, 4.0 * r) <= rounding(n_k, d));
  // Two random sequences: the rows differ at order one, as much as the row itself.
  const double row = max_abs(r.row(0)), difference = max_abs(r2.row(0) - r.row(0));
  CHECK(difference > 0.5 * row);
  solution_value("06.4.added_row_max", row);
  solution_value("06.4.added_row_difference_max", difference);
}

TEST_CASE(
    "solution 06.4: a softmax layer needs no key bias and can fold its value bias into "
    "the "
    "output bias") {
  for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
    const MatrixXd X = attn::random_normal(n, d, rng),
                   Z = attn::random_normal(n + 2, d, rng);
    const attn::AttentionParams full = ch06::random_attention(d, d, d, true, rng);
    const MatrixXd W_O = ch06::weights(d, d, rng);
    const VectorXd b_O = ch06::vec(d, rng);
    attn::AttentionParams lean = full;  // only b_Q left; b_V moves into the output bias
    lean.b_K.resize(0);
    lean.b_V.resize(0);
    const VectorXd b_O_folded = W_O.transpose() * full.b_V + b_O;
    const MatrixXd out_full =
        (attn::cross_attention(X, Z, full) * W_O).rowwise() + b_O.transpose();
    const MatrixXd out_lean =
        (attn::cross_attention(X, Z, lean) * W_O).rowwise() + b_O_folded.transpose();
    const double c = max_abs(X * full.W_Q * full.b_K) / std::sqrt(static_cast<double>(d));
    CHECK(rel(out_lean, out_full) <= rounding(n + 2, d) * (2.0 + c));
    // With h = id neither removal is allowed: the key bias changes the output.
    attn::AttentionParams no_bK = full;
    no_bK.b_K.resize(0);
    CHECK(rel(attn::cross_attention(X, Z, no_bK, attn::Normalisation::identity),
              attn::cross_attention(X, Z, full, attn::Normalisation::identity)) > broken);
  });
}

// ---------------------------------------------------------------------------------------
// 06.5 Exact zeros

TEST_CASE(
    "solution 06.5: self-attention with keys summed in content order has residual "
    "exactly "
    "0") {
  attn::Rng rng(651);
  const Index d = 16;
  for (const Index n : {2, 8, 11, 33}) {
    const MatrixXd X = attn::random_normal(n, d, rng);
    const attn::AttentionParams p = ch06::random_attention(d, d, d, true, rng);
    const attn::TokenMap f = [&](const MatrixXd& Y) {
      return ordered_self_attention(Y, p);
    };
    // Exact on any IEEE 754 machine: each entry of f(PX) repeats, operation for operation,
    // the computation of the matching entry of f(X) (see the comment on the function).
    for (int k = 0; k < 10; ++k)
      CHECK(attn::equivariance_residual(f, X, ch06::moving_permutation(n, rng)) == 0.0);
    // It is the same layer as the library's, to rounding.
    CHECK(rel(ordered_self_attention(X, p), attn::cross_attention(X, X, p)) <=
          rounding(n, d));
    // Duplicate tokens (ties in the sort) are identical terms: still exactly 0.
    MatrixXd Xdup = X;
    Xdup.row(n - 1) = Xdup.row(0);
    CHECK(attn::equivariance_residual(f, Xdup, ch06::moving_permutation(n, rng)) == 0.0);
  }
}

TEST_CASE(
    "solution 06.5: the chapter's layers stay within rounding of equivariant, below "
    "1e-15") {
  // What can be asserted on any x86-64 machine: a bound at rounding level. Whether a residual
  // is exactly 0 depends on the CPU and on n (see solutions.md), so it is not asserted.
  attn::Rng rng(652);
  const Index d = 16;
  double largest = 0;  // over every layer and size: the page gives the bound
  for (const Index n : {8, 11}) {
    const MatrixXd X = attn::random_normal(n, d, rng),
                   Z = attn::random_normal(n + 3, d, rng);
    const attn::AttentionParams a = ch06::random_attention(d, d, d, true, rng);
    const attn::BlockParams b =
        ch06::random_block(d, 1, 2 * d, rng, attn::NormPlacement::pre);
    const attn::NormParams ln = ch06::random_layer_norm(d, rng);
    const std::vector<std::string> names{"LayerNorm",      "FFN",
                                         "X W_Q",          "cross-attention (queries)",
                                         "self-attention", "self-attention, plain loops"};
    const std::vector<attn::TokenMap> layers{
        [&](const MatrixXd& T) { return attn::normalise(T, ln); },
        [&](const MatrixXd& T) { return attn::feed_forward(T, b.ffn); },
        [&](const MatrixXd& T) -> MatrixXd { return T * a.W_Q; },
        [&](const MatrixXd& T) { return attn::cross_attention(T, Z, a); },
        [&](const MatrixXd& T) { return attn::cross_attention(T, T, a); },
        [&](const MatrixXd& T) { return ordered_self_attention(T, a, false); }};
    for (std::size_t k = 0; k < layers.size(); ++k) {
      const Range r = residual_range(layers[k], X, 20, rng);
      // This machine's values, for the record (test-06 -tc="solution 06.5*" prints them).
      MESSAGE("n = " << n << ", " << names[k] << ": residual " << r.lo << " .. " << r.hi);
      CHECK(r.hi <= 1e-15);
      largest = std::max(largest, r.hi);
    }
  }
  solution_value("06.5.layers_max_residual", largest);
}

// ---------------------------------------------------------------------------------------
// 06.6 The equivariance check

TEST_CASE(
    "solution 06.6: a summing norm dilutes a break in two tokens and the maximum does "
    "not") {
  // f(X) = X + E with E = 1 in the first row and 0 elsewhere, on X = 1/2 everywhere; swap
  // tokens 0 and 1. f(PX) - Pf(X) = E - PE: entries +-1 in rows 0 and 1, zero elsewhere.
  const Index d = 4;
  for (const Index n : {4, 400}) {
    const MatrixXd X = MatrixXd::Constant(n, d, 0.5);
    MatrixXd E = MatrixXd::Zero(n, d);
    E.row(0).setOnes();
    const attn::TokenMap f = [&](const MatrixXd& Y) -> MatrixXd { return Y + E; };
    attn::Permutation swap01(static_cast<std::size_t>(n));
    std::iota(swap01.begin(), swap01.end(), Index{0});
    std::swap(swap01[0], swap01[1]);
    // The maximum: 1 / 1.5 for every n (all of these operations are exact but the division,
    // which is correctly rounded).
    const double maximum = attn::equivariance_residual(f, X, swap01);
    CHECK(maximum == 1 / 1.5);
    solution_value("06.6.max_residual", maximum);
    const MatrixXd diff =
        f(attn::permute_rows(X, swap01)) - attn::permute_rows(f(X), swap01);
    const double frobenius =
        diff.norm() / f(X).norm();  // sqrt(2d) / sqrt(9d/4 + (n-1)d/4)
    // sqrt(8 / (9 + (n - 1))): falling like n^-1/2, to a few roundings.
    CHECK(frobenius ==
          doctest::Approx(std::sqrt(8.0 / double(8 + n))).scale(0).epsilon(8 * eps));
    solution_value("06.6.frobenius_" + std::to_string(n), frobenius);
  }
}
