// Chapter 01 — the worked solutions of the exercises (solutions.md, instructor's copy
// only): the code of each exercise between `// [sol-01-M-name]` markers, quoted by
// solutions.md, and one TEST_CASE per number or identity the solutions state.
//
// Every number solutions.md prints is recorded here with solution_value("01.M.key", x)
// (tests/support/solution_values.hpp) and shown from the build (<!--#sol:01.M.key-->), so
// the page prints what this code computes. What the tests assert: identities to a small
// multiple of machine epsilon times the size of the numbers involved, relative to them
// where they are not of order 1 (each tolerance says why next to it); the Monte Carlo
// variances of 01.2 against their expected value to 4 standard errors.
// Sizes are small so that the file runs in well under a second in the Release build.

#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/fast_exp.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/tiled_attention.hpp"
#include "solution_values.hpp"
#include "test_helpers.hpp"
#include "ch01.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using book_test::solution_value;

namespace {

using ch01_test::max_abs;
constexpr double inf = std::numeric_limits<double>::infinity();

// ---- 01.1 -----------------------------------------------------------------------------

// softmax_rows of code/src/softmax.cpp with the subtraction of the row maximum dropped:
// what the exercise makes the library compute (the checks for NaN, +inf and fully masked
// rows before it are unchanged and left out here).
// [sol-01-1-naive-softmax]
MatrixXd naive_softmax_rows(const MatrixXd& Z) {
  MatrixXd P = Z.unaryExpr([](double x) { return std::exp(x); });  // e^z, not e^{z - m}
  P.array().colwise() /= P.rowwise().sum().array();
  return P;
}
// [sol-01-1-naive-softmax]

// ---- 01.2 -----------------------------------------------------------------------------

// The program's variance loop (main.cpp, section 5) with the standard deviations of the
// entries of q and k as parameters; the program draws both with sigma = 1.
// [sol-01-2-variance-sweep]
double qk_variance(long d, long samples, double sigma_q, double sigma_k, attn::Rng& rng) {
  double sum = 0, sum_sq = 0;
  for (long s = 0; s < samples; ++s) {
    const VectorXd q = attn::random_normal(d, 1, rng, sigma_q),
                   k = attn::random_normal(d, 1, rng, sigma_k);
    const double x = q.dot(k);
    sum += x;
    sum_sq += x * x;
  }
  const double S = static_cast<double>(samples);
  const double mean = sum / S;
  return (sum_sq - S * mean * mean) / (S - 1);  // unbiased sample variance
}
// [sol-01-2-variance-sweep]

// ---- 01.3 -----------------------------------------------------------------------------

// [sol-01-3-distance-attention]
// Distance attention as defined: softmax of -|q_t - k_i|^2 / sqrt(d_k), plus a mask M0.
MatrixXd distance_weights(const MatrixXd& Q, const MatrixXd& K, const MatrixXd& M0) {
  MatrixXd S(Q.rows(), K.rows());
  for (Index t = 0; t < Q.rows(); ++t)
    for (Index i = 0; i < K.rows(); ++i)
      S(t, i) = -(Q.row(t) - K.row(i)).squaredNorm() / std::sqrt(double(Q.cols()));
  if (M0.size() > 0) S += M0;
  return attn::softmax_rows(S);
}

// The same weights as dot-product attention with doubled queries: the key term
// -|k_i|^2 / sqrt(d_k) goes into every row of the mask argument, beside the mask M0.
MatrixXd distance_as_dot_product(const MatrixXd& Q, const MatrixXd& K,
                                 const MatrixXd& M0) {
  const Eigen::RowVectorXd key_term =
      -K.rowwise().squaredNorm().transpose() / std::sqrt(double(Q.cols()));
  MatrixXd M = key_term.replicate(Q.rows(), 1);
  if (M0.size() > 0) M += M0;
  return attn::attention_weights(2 * Q, K, M);
}
// [sol-01-3-distance-attention]

// ---- 01.4 -----------------------------------------------------------------------------

struct OpCount {
  long long madds = 0;  // multiply-adds
  long long exps = 0;   // exponentials
};

// [sol-01-4-cost]
// The counts of multi_head_attention(X, p) for n tokens of width d and n_h heads:
// projections 3 n d (d / n_h) per head and n d^2 for W_O; per head n^2 (d / n_h) for the
// scores and as many for the weighted values; n^2 exponentials per head.
OpCount multi_head_cost(long long n, long long d, long long heads) {
  const long long dh = d / heads;
  return {heads * (3 * n * d * dh + 2 * n * n * dh) + n * d * d, heads * n * n};
}
// [sol-01-4-cost]

// Multi-head attention written with explicit loops that count what they do, to check the
// formula above against the library's own form (same products, same softmax).
MatrixXd counted_multi_head(const MatrixXd& X, const attn::MultiHeadParams& p,
                            OpCount& c) {
  const auto product = [&c](const MatrixXd& A, const MatrixXd& B) {
    MatrixXd C = MatrixXd::Zero(A.rows(), B.cols());
    for (Index i = 0; i < A.rows(); ++i)
      for (Index j = 0; j < B.cols(); ++j)
        for (Index k = 0; k < A.cols(); ++k, ++c.madds) C(i, j) += A(i, k) * B(k, j);
    return C;
  };
  const Index n = X.rows(), d = X.cols(), dh = d / p.heads;
  MatrixXd heads(n, d);
  for (Index h = 0; h < p.heads; ++h) {
    const MatrixXd Q = product(X, p.W_Q.middleCols(h * dh, dh)),
                   K = product(X, p.W_K.middleCols(h * dh, dh)),
                   V = product(X, p.W_V.middleCols(h * dh, dh));
    MatrixXd A = product(Q, K.transpose()) / std::sqrt(double(dh));
    for (Index i = 0; i < n; ++i) {
      const double m = A.row(i).maxCoeff();
      for (Index j = 0; j < n; ++j, ++c.exps) A(i, j) = std::exp(A(i, j) - m);
      A.row(i) /= A.row(i).sum();
    }
    heads.middleCols(h * dh, dh) = product(A, V);
  }
  return product(heads, p.W_O);
}

// ---- 01.5 -----------------------------------------------------------------------------

// [sol-01-5-online-state]
// The online-softmax state of every query over the keys seen so far (section 8):
// m = max s_j, l = sum e^{s_j - m}, o = sum e^{s_j - m} v_j.
struct OnlineState {
  VectorXd m, l;  // one per query
  MatrixXd o;     // one row per query
};

// The online-softmax loop of section 8 (the library's kernel, code/src/attention_kernels.hpp,
// takes the same steps lane by lane), written with Eigen's matrices over the keys
// j_begin..j_end-1 only, in tiles of bk keys, all queries in one tile; it returns the
// state instead of o / l.
OnlineState online_state(const MatrixXd& Q, const MatrixXd& K, const MatrixXd& V,
                         Index j_begin, Index j_end, attn::Masking masking, Index bk) {
  const Index b = Q.rows();
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));
  VectorXd m = VectorXd::Constant(b, -inf), l = VectorXd::Zero(b), alpha(b);
  MatrixXd O = MatrixXd::Zero(b, V.cols());
  for (Index j0 = j_begin; j0 < j_end; j0 += bk) {
    const Index c = std::min(bk, j_end - j0);
    MatrixXd S = scale * (K.middleRows(j0, c) * Q.transpose());  // column q: query q
    if (masking == attn::Masking::causal)  // query q sees keys j <= q only
      for (Index q = 0; q < b; ++q)
        for (Index r = std::max<Index>(0, q + 1 - j0); r < c; ++r) S(r, q) = -inf;
    for (Index q = 0; q < b; ++q) {  // the library's step, without its overflow check
      const double m_new = std::max(m(q), S.col(q).maxCoeff());
      if (m_new == -inf) {  // every key so far is hidden from this query
        S.col(q).setZero();
        alpha(q) = 1.0;
        continue;
      }
      alpha(q) = std::exp(m(q) - m_new);        // e^{-inf} = 0 on the first visible tile
      attn::fast_exp_shifted(S.col(q), m_new);  // e^{s - m'}, masked -> 0
      l(q) = alpha(q) * l(q) + S.col(q).sum();
      m(q) = m_new;
    }
    O = alpha.asDiagonal() * O;
    O.noalias() += S.transpose() * V.middleRows(j0, c);
  }
  return {m, l, O};
}
// [sol-01-5-online-state]

// [sol-01-5-merge]
// The state of the union of two disjoint sets of keys: m = max(m_a, m_b) and each part
// rescaled by its own factor e^{m_part - m}. The part with the larger maximum has factor
// e^0 = 1, so it is taken as is; taking the parts in this order (not "a, then b") makes
// the result the same bit for bit whichever argument comes first, even where the compiler
// fuses a multiply and an add.
OnlineState merge(const OnlineState& a, const OnlineState& b) {
  OnlineState r{a.m.cwiseMax(b.m), VectorXd(a.l.size()),
                MatrixXd(a.o.rows(), a.o.cols())};
  for (Index q = 0; q < r.m.size(); ++q) {
    if (r.m(q) == -inf) {  // neither part has a key visible to this query
      r.l(q) = 0;
      r.o.row(q).setZero();
      continue;
    }
    // On a tie f = 1 and hi + lo = lo + hi: the order does not matter either.
    const OnlineState& hi = a.m(q) >= b.m(q) ? a : b;  // m(q) == hi.m(q)
    const OnlineState& lo = a.m(q) >= b.m(q) ? b : a;
    const double f = std::exp(lo.m(q) - r.m(q));  // in [0, 1]; 0 if lo saw no key
    r.l(q) = hi.l(q) + f * lo.l(q);
    r.o.row(q) = hi.o.row(q) + f * lo.o.row(q);
  }
  return r;
}
// [sol-01-5-merge]

MatrixXd output(const OnlineState& s) {  // o / l, row by row
  return s.l.cwiseInverse().asDiagonal() * s.o;
}

// ---- 01.6 -----------------------------------------------------------------------------

// The causal mask with a large finite number instead of -inf (the wrong answer).
MatrixXd finite_causal_mask(Index n, double big) {
  MatrixXd M = MatrixXd::Zero(n, n);
  M.triangularView<Eigen::StrictlyUpper>().setConstant(-big);
  return M;
}

}  // namespace

// ==== 01.1 =============================================================================

TEST_CASE("solution 01.1: without the max subtraction logits of 1e4 give NaN weights") {
  // The row of the library's test "softmax is stable for logits of +-1e4".
  const MatrixXd z{{1e4, 1e4 - 1, -1e4, 1e4}};
  const MatrixXd p = naive_softmax_rows(z);
  // e^z = (inf, inf, 0, inf), sum inf: inf / inf = NaN, 0 / inf = 0.
  CHECK(std::isnan(p(0, 0)));
  CHECK(std::isnan(p(0, 1)));
  CHECK(p(0, 2) == 0.0);
  CHECK(std::isnan(p(0, 3)));
  // A row of -1e4: every e^z underflows to 0, and 0 / 0 = NaN in every entry.
  const MatrixXd low = naive_softmax_rows(MatrixXd::Constant(1, 5, -1e4));
  CHECK(low.array().isNaN().all());
  // The stable form gives 1/(2 + e^-1), e^-1/(2 + e^-1), 0, 1/(2 + e^-1) and 1/5.
  CHECK(attn::softmax_rows(z).allFinite());
  // Logits of order 1: the naive form is correct, to rounding (e^z of |z| <= 10 is exact
  // to an ulp, so the two forms agree to a few ulps of weights <= 1).
  attn::Rng rng(11);
  const MatrixXd Z = attn::random_normal(6, 9, rng, 3.0);
  CHECK(max_abs(naive_softmax_rows(Z) - attn::softmax_rows(Z)) <= 1e-15);
  // A common shift of 1000, as in "softmax is invariant to adding a constant to a row":
  // every entry NaN, both upwards (inf / inf) and downwards (0 / 0).
  CHECK(naive_softmax_rows((Z.array() + 1000.0).matrix()).array().isNaN().all());
  CHECK(naive_softmax_rows((Z.array() - 1000.0).matrix()).array().isNaN().all());
  // Logits just above -745: e^z is subnormal, a multiple of 2^-1074 with a few significant
  // bits (e^-740 ~ 85 units, e^-741 ~ 31), and the naive weights are wrong in the third
  // decimal (rounding e^-741 to a whole number of units alone moves it by up to 1/62); the
  // stable form agrees with the exact 1/(1 + e^-1) to a few ulps.
  const MatrixXd tiny{{-740.0, -741.0}};
  const double err = solution_value(
      "01.1.subnormal_error", max_abs(naive_softmax_rows(tiny) - attn::softmax_rows(tiny)));
  CHECK(err > 1e-4);
  CHECK(attn::softmax_rows(tiny)(0, 0) ==
        doctest::Approx(1 / (1 + std::exp(-1.0))).epsilon(4 * book_test::eps).scale(0));
}

TEST_CASE("solution 01.1: e^z overflows above ln(DBL_MAX) and underflows below ln(DBL_MIN)") {
  // ln(DBL_MAX) = 1024 ln 2 - 2^-53: the last finite e^z (relative 2 eps: the logarithm
  // and the product 1024 ln 2 are each rounded once), and the threshold itself by one ulp
  // on either side.
  const double over = solution_value("01.1.overflow", std::log(DBL_MAX));
  CHECK(over == doctest::Approx(1024 * std::log(2.0)).epsilon(2 * book_test::eps).scale(0));
  CHECK(std::isfinite(std::exp(over)));
  CHECK(std::isinf(std::exp(std::nextafter(over, inf))));
  // Below ln(DBL_MIN) = -1022 ln 2 e^z is subnormal (precision lost gradually).
  const double sub = solution_value("01.1.subnormal", std::log(DBL_MIN));
  CHECK(sub == doctest::Approx(-1022 * std::log(2.0)).epsilon(2 * book_test::eps).scale(0));
  CHECK(std::exp(sub) >= DBL_MIN);
  CHECK(std::exp(std::nextafter(sub, -inf)) < DBL_MIN);
  // e^z rounds to exactly 0 below ln(2^-1075) = -1075 ln 2 (half the smallest subnormal,
  // 2^-1074 ~ 4.9e-324): just above it e^z is the smallest subnormal, just below it 0.
  const double zero = solution_value("01.1.underflow", -1075 * std::log(2.0));
  CHECK(std::exp(zero + 1e-9) == std::numeric_limits<double>::denorm_min());
  CHECK(std::exp(zero - 1e-9) == 0.0);
}

// ==== 01.2 =============================================================================

TEST_CASE("solution 01.2: Var(q.k) = d sigma_q^2 sigma_k^2 for keys of sigma_k = 2") {
  // The program's sweep reduced to d = 1, 2, ..., 64 (the program goes to 1024), with its
  // 10000 samples per d and seed 12. Each product q_i k_i has variance s2 = sigma_q^2
  // sigma_k^2 and fourth moment 9 s2^2, so q.k has fourth moment (3d^2 + 6d) s2^2 and the
  // sample variance a standard error of s2 sqrt((2d^2 + 6d) / S): 4 of them is 6% of the
  // expected value at d = 64, while a wrong law (d, 2d, d sigma_k) misses by 50% or more.
  attn::Rng rng(12);
  const long S = 10000;
  double lo = inf, hi = -inf, var_d1 = 0, var_d16 = 0;
  for (long d = 1; d <= 64; d *= 2) {
    const double var = qk_variance(d, S, 1.0, 2.0, rng), dd = double(d);
    const double se = 4.0 * std::sqrt((2 * dd * dd + 6 * dd) / S);
    CAPTURE(d);
    CHECK(std::abs(var - 4.0 * dd) <= 4 * se);
    if (d == 1) var_d1 = var / dd;
    if (d == 16) var_d16 = var / dd;
    lo = std::min(lo, var / dd);
    hi = std::max(hi, var / dd);
    if (d == 64) solution_value("01.2.scaled_var_d64", var / dd);
  }
  // The scaled column Var(q.k / sqrt d) of the changed program has its extremes at d = 1
  // and d = 16, as the page says.
  CHECK(lo == solution_value("01.2.scaled_var_d1", var_d1));
  CHECK(hi == solution_value("01.2.scaled_var_d16", var_d16));
  // Both widths changed: sigma_q = 3, sigma_k = 2 gives 36 d (d = 16, 4 standard errors).
  const double var = qk_variance(16, S, 3.0, 2.0, rng);
  CHECK(std::abs(var - 36.0 * 16) <= 4 * 36.0 * std::sqrt((2.0 * 256 + 6.0 * 16) / S));
}

// ==== 01.3 =============================================================================

TEST_CASE(
    "solution 01.3: distance scores are doubled dot-product scores plus a key term") {
  // Both sides are softmaxes of logits that agree up to a constant per row and rounding:
  // the logits are sums of d products of entries ~N(0, 1), at most ~60 here, so each is
  // rounded by ~1e-14 and the weights (<= 1) agree to ~1e-14; 1e-12 leaves a margin of
  // ~100.
  for (const auto seed : ch01_test::seeds)
    for (const auto [n, d] : ch01_test::shapes) {
      attn::Rng rng(seed);
      const MatrixXd Q = attn::random_normal(n, d, rng),
                     K = attn::random_normal(n + 2, d, rng, 1.5);
      CAPTURE(n);
      CHECK(max_abs(distance_weights(Q, K, MatrixXd()) -
                    distance_as_dot_product(Q, K, MatrixXd())) <= 1e-12);
      // The key term and a causal mask share the mask argument.
      const MatrixXd Qs = Q, Ks = K.topRows(n), M0 = attn::causal_mask(n);
      CHECK(max_abs(distance_weights(Qs, Ks, M0) - distance_as_dot_product(Qs, Ks, M0)) <=
            1e-12);
      // Without the key term the doubled dot product is a different attention (keys of
      // unequal norms), unless there is only one key per query.
      if (n >= 5)
        CHECK(max_abs(distance_weights(Q, K, MatrixXd()) -
                      attn::attention_weights(2 * Q, K, MatrixXd())) > 0.01);
    }
}

TEST_CASE(
    "solution 01.3: on the toy sentence distance attention is dot-product attention at "
    "twice the scale") {
  // Every toy embedding has norm sqrt(8), so the key term is the same for every key and
  // cancels: no mask is needed. Weights to a few ulps, as above.
  const MatrixXd X = ch01::sentence_embeddings();
  const MatrixXd A_dist = distance_weights(X, X, MatrixXd());
  CHECK(max_abs(A_dist - attn::attention_weights(2 * X, X, MatrixXd())) <= 1e-15);
  // jin's weight on itself: e^8 / (e^8 + 4 e^4 + 1) against e^4 / (e^4 + 4 e^2 + 1) with
  // the ordinary scores (relative 1e-14: a softmax of 5 logits of size <= 8, each rounded
  // to an ulp, gives weights to ~10 ulps).
  const double e2 = std::exp(2.0), e4 = std::exp(4.0);
  CHECK(solution_value("01.3.jin_distance", A_dist(0, 0)) ==
        doctest::Approx(e4 * e4 / (e4 * e4 + 4 * e4 + 1)).epsilon(1e-14).scale(0));
  CHECK(solution_value("01.3.jin_dot", attn::attention_weights(X, X, MatrixXd())(0, 0)) ==
        doctest::Approx(e4 / (e4 + 4 * e2 + 1)).epsilon(1e-14).scale(0));
}

// ==== 01.4 =============================================================================

TEST_CASE(
    "solution 01.4: multi-head attention costs 4 n d^2 + 2 n^2 d multiply-adds and "
    "n_h n^2 exponentials") {
  // The counting loops compute what the library computes (to rounding: the same sums in
  // another order, entries of size ~1 with d <= 12 terms, so ~1e-15; 1e-12 is a margin).
  attn::Rng rng(13);
  struct Size {
    Index n, d, heads;
  };
  for (const Size s :
       {Size{6, 8, 1}, Size{6, 8, 2}, Size{6, 8, 4}, Size{5, 12, 3}, Size{7, 12, 12}}) {
    const attn::MultiHeadParams p{s.heads, attn::random_normal(s.d, s.d, rng, 0.3),
                                  attn::random_normal(s.d, s.d, rng, 0.3),
                                  attn::random_normal(s.d, s.d, rng, 0.3),
                                  attn::random_normal(s.d, s.d, rng, 0.3)};
    const MatrixXd X = attn::random_normal(s.n, s.d, rng);
    OpCount counted;
    const MatrixXd Y = counted_multi_head(X, p, counted);
    CHECK(max_abs(Y - attn::multi_head_attention(X, p)) <= 1e-12);
    const OpCount formula = multi_head_cost(s.n, s.d, s.heads);
    CAPTURE(s.heads);
    CHECK(counted.madds == formula.madds);
    CHECK(counted.exps == formula.exps);
    CHECK(formula.madds ==
          4 * s.n * s.d * s.d + 2 * s.n * s.n * s.d);  // independent of n_h
  }
  // The benchmark's sizes, n = 1024 and d = 256, with 1, 8 and 32 heads (exact integers).
  const long long n = 1024, d = 256;
  const OpCount one = multi_head_cost(n, d, 1);
  solution_value("01.4.madds", double(one.madds));
  // Two flops each: the benchmark's rate counts 8 n d^2 + 4 n^2 d flops.
  solution_value("01.4.flops", double(2 * one.madds));
  CHECK(2 * one.madds == 8 * n * d * d + 4 * n * n * d);
  for (const long long heads : {1, 8, 32}) {
    const OpCount c = multi_head_cost(n, d, heads);
    CHECK(c.madds == one.madds);
    CHECK(c.exps == heads * n * n);
    solution_value("01.4.exps_heads" + std::to_string(heads), double(c.exps));
  }
  // Share of the score products in the multiply-adds: 2 n^2 d / (4 n d^2 + 2 n^2 d) = 2/3
  // (relative eps: one rounded division of exact integers).
  CHECK(2.0 * n * n * d / double(one.madds) ==
        doctest::Approx(2.0 / 3).epsilon(book_test::eps).scale(0));
  // One n x n matrix of doubles at n = 1024, in MiB (exact).
  solution_value("01.4.scores_mib", double(n * n) * sizeof(double) / (1024 * 1024));
}

// ==== 01.5 =============================================================================

TEST_CASE(
    "solution 01.5: merging the states of two parts of the keys gives tiled_attention "
    "at every split") {
  // Both are the same sums in another order, each rescaled by factors <= 1: they agree to
  // a few ulps of the output (observed ~1e-15); 1e-12, as the exercise asks, leaves a
  // margin.
  struct Case {
    Index nq, nk, d, dv, bk;
  };
  for (const auto seed : ch01_test::seeds)
    for (const Case c : {Case{1, 1, 1, 1, 1}, Case{5, 9, 3, 2, 4}, Case{12, 12, 8, 4, 5},
                         Case{9, 23, 5, 3, 7}}) {
      attn::Rng rng(seed);
      const MatrixXd Q = attn::random_normal(c.nq, c.d, rng, 2.0),
                     K = attn::random_normal(c.nk, c.d, rng, 2.0),
                     V = attn::random_normal(c.nk, c.dv, rng);
      for (const auto masking : {attn::Masking::none, attn::Masking::causal}) {
        if (masking == attn::Masking::causal && c.nq != c.nk) continue;
        const MatrixXd expected = attn::tiled_attention(Q, K, V, masking, {4, c.bk});
        for (Index p = 0; p <= c.nk;
             ++p) {  // keys 0..p-1 to one core, p..nk-1 to the other
          const OnlineState a = online_state(Q, K, V, 0, p, masking, c.bk),
                            b = online_state(Q, K, V, p, c.nk, masking, c.bk);
          CAPTURE(p);
          CHECK(max_abs(output(merge(a, b)) - expected) <= 1e-12);
        }
      }
    }
}

TEST_CASE(
    "solution 01.5: the merge is the state of the union and does not depend on the "
    "order") {
  attn::Rng rng(15);
  const Index n = 14, d = 6;
  const MatrixXd Q = attn::random_normal(n, d, rng, 2.0),
                 K = attn::random_normal(n, d, rng, 2.0),
                 V = attn::random_normal(n, 3, rng);
  for (const auto masking : {attn::Masking::none, attn::Masking::causal})
    for (Index p = 0; p <= n; ++p)
      for (Index r = p; r <= n; ++r) {  // three parts: 0..p-1, p..r-1, r..n-1
        const OnlineState a = online_state(Q, K, V, 0, p, masking, 3),
                          b = online_state(Q, K, V, p, r, masking, 3),
                          c = online_state(Q, K, V, r, n, masking, 3),
                          all = online_state(Q, K, V, 0, n, masking, 3);
        const OnlineState ab = merge(a, b), ba = merge(b, a);
        // Swapping the two parts changes nothing, bit for bit.
        CHECK((ab.m.array() == ba.m.array()).all());
        CHECK((ab.l.array() == ba.l.array()).all());
        CHECK((ab.o.array() == ba.o.array()).all());
        // The merged state is the state of the union: m, l and o to
        // rounding (sums of <= 14 terms of size <= 1 and <= ~3: a few ulps; 1e-13).
        const OnlineState abc = merge(ab, c), a_bc = merge(a, merge(b, c));
        // (The maximum is the same number in exact arithmetic; the scores of a tile of
        // keys that starts elsewhere may round differently in their last bit.)
        CHECK(max_abs(abc.m - all.m) <= 1e-13);
        CHECK(max_abs(abc.l - all.l) <= 1e-13);
        CHECK(max_abs(abc.o - all.o) <= 1e-13);
        // Grouping the three parts either way: the same to rounding.
        CHECK(max_abs(abc.l - a_bc.l) <= 1e-13);
        CHECK(max_abs(abc.o - a_bc.o) <= 1e-13);
      }
}

TEST_CASE("solution 01.5: the merge is stable for scores of size 1e3") {
  // e^s overflows above 709.78; the merge only ever forms e^{m_part - m} <= 1. Scores are
  // rounded to ~1e3 * 64 eps ~ 1e-11, which e^{s - m} turns into the same relative error
  // of each weight, hence the 1e-9 of the library's test "tiled and plain attention are
  // stable for logits of scale 1e3".
  attn::Rng rng(16);
  const Index n = 20, d = 8;
  const MatrixXd Q = attn::random_normal(n, d, rng, 30.0),
                 K = attn::random_normal(n, d, rng, 30.0),
                 V = attn::random_normal(n, 4, rng);
  REQUIRE((Q * K.transpose()).cwiseAbs().maxCoeff() / std::sqrt(double(d)) > 1e3);
  const MatrixXd expected = attn::attention(Q, K, V, MatrixXd());
  for (Index p = 0; p <= n; ++p) {
    const MatrixXd out =
        output(merge(online_state(Q, K, V, 0, p, attn::Masking::none, 6),
                     online_state(Q, K, V, p, n, attn::Masking::none, 6)));
    CHECK(out.allFinite());
    CHECK(max_abs(out - expected) <= 1e-9);
  }
}

// ==== 01.6 =============================================================================

TEST_CASE("solution 01.6: a mask of -1e9 lets the future in when scores are large") {
  // Two tokens, d_k = 1: token 0 scores -3e9 against itself and 0 against token 1 (say an
  // unnormalised layer, or a logit scale that has grown in training). With -1e9 the
  // hidden logit is -1e9 > -3e9, and token 0 attends only to the future.
  const MatrixXd Q{{1.0}, {1.0}}, K{{-3e9}, {0.0}};
  const MatrixXd leaky = attn::attention_weights(Q, K, finite_causal_mask(2, 1e9));
  CHECK(leaky(0, 1) == 1.0);  // e^{-2e9} underflows to 0: all weight on the future
  CHECK(leaky(0, 0) == 0.0);
  const MatrixXd exact = attn::attention_weights(Q, K, attn::causal_mask(2));
  CHECK(exact(0, 0) == 1.0);
  CHECK(exact(0, 1) == 0.0);
  // At ordinary scores -1e9 hides the future too (e^{-1e9} is 0 in double precision).
  attn::Rng rng(17);
  const MatrixXd Qn = attn::random_normal(6, 4, rng), Kn = attn::random_normal(6, 4, rng);
  const MatrixXd An = attn::attention_weights(Qn, Kn, finite_causal_mask(6, 1e9));
  CHECK(An.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() ==
        0.0);
}

TEST_CASE(
    "solution 01.6: a row masked everywhere by -1e9 silently gets the unmasked weights") {
  // Softmax is invariant to a common shift, so a row whose every logit is lowered by 1e9
  // has (to the rounding of s - 1e9, ulp(1e9) ~ 1.2e-7) the weights it had with no mask:
  // a padding row that reads everything. With -inf the library refuses the row instead.
  attn::Rng rng(18);
  const MatrixXd Q = attn::random_normal(3, 4, rng), K = attn::random_normal(5, 4, rng);
  MatrixXd M = MatrixXd::Zero(3, 5);
  M.row(1).setConstant(-1e9);
  const MatrixXd A = attn::attention_weights(Q, K, M),
                 A0 = attn::attention_weights(Q, K, MatrixXd());
  // Each logit moves by up to 6e-8; each weight by about that times itself (<= 1): 1e-6.
  CHECK(max_abs(A.row(1) - A0.row(1)) <= 1e-6);
  CHECK(std::abs(A.row(1).sum() - 1.0) <= 1e-14);
  M.row(1).setConstant(-inf);
  CHECK_THROWS_AS(attn::attention_weights(Q, K, M), std::invalid_argument);
}

TEST_CASE(
    "solution 01.6: an infinite future value turns the past into NaN as 0 times inf is "
    "NaN") {
  // The weights are exactly 0 above the diagonal, but 0 * inf = NaN: a product A V with
  // an infinite entry in the last value row poisons that column of every output row, past
  // ones included. That is why attention() refuses a V that is not finite.
  attn::Rng rng(19);
  const Index n = 5;
  const MatrixXd Q = attn::random_normal(n, 3, rng), K = attn::random_normal(n, 3, rng);
  MatrixXd V = attn::random_normal(n, 2, rng);
  const MatrixXd A = attn::attention_weights(Q, K, attn::causal_mask(n));
  const MatrixXd before = A * V;
  V(n - 1, 0) = inf;  // the future of every row but the last
  const MatrixXd after = A * V;
  for (Index t = 0; t + 1 < n; ++t) {
    CHECK(std::isnan(after(t, 0)));      // 0 * inf
    CHECK(after(t, 1) == before(t, 1));  // the finite column is untouched, exactly
  }
  CHECK(std::isinf(after(n - 1, 0)));
  CHECK_THROWS_AS(attn::attention(Q, K, V, attn::causal_mask(n)), std::invalid_argument);
  // A huge but finite future value is harmless: 0 * 1e308 = 0, and the past is unchanged.
  V(n - 1, 0) = 1e308;
  const MatrixXd huge = attn::attention(Q, K, V, attn::causal_mask(n));
  CHECK((huge.topRows(n - 1).array() == before.topRows(n - 1).array()).all());
}
