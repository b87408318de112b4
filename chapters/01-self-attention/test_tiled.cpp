// Chapter 01, section 8 — attention without the n x n matrix: the online-softmax
// recurrence (tiled attention) and the backward pass, each checked against the plain form.
//
// Tolerances: the tiled form computes the same sums as the plain form in another order
// and rescales partial sums by factors e^{m - m'} <= 1, so the two agree to a few ulps of
// the output per tile; 1e-12 leaves a margin of ~100x over what is observed (~1e-14) for
// outputs of size ~1, and a wrong recurrence (a missing rescale) is off by O(1).

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/tiled_attention.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

using ch01_test::max_abs;

namespace {

// The reference form, attention(): the whole n x n weight matrix, then its product with V.
MatrixXd plain(const MatrixXd& Q, const MatrixXd& K, const MatrixXd& V,
               attn::Masking masking) {
  const MatrixXd mask =
      masking == attn::Masking::causal ? attn::causal_mask(Q.rows()) : MatrixXd();
  return attn::attention(Q, K, V, mask);
}

struct Case {
  Index nq, nk, d, dv;
};
const std::vector<Case> cases{{1, 1, 1, 1},    {5, 7, 3, 2},     {16, 16, 8, 4},
                              {33, 33, 17, 5}, {64, 100, 16, 8}, {130, 130, 32, 3}};
const std::vector<attn::AttentionTiles> tile_sizes{{1, 1},   {1, 7},    {3, 5},  {8, 8},
                                                   {16, 64}, {64, 256}, {200, 1}};

}  // namespace

TEST_SUITE("ch01") {
  // Labelled ex01.6: its causal cases build the mask with causal_mask().
  TEST_CASE("tiled online-softmax attention equals plain attention to 1e-12" *
            doctest::test_suite("ex01.6")) {
    for (const std::uint64_t seed : {1u, 2u})
      for (const auto [nq, nk, d, dv] : cases)
        for (const auto masking : {attn::Masking::none, attn::Masking::causal}) {
          if (masking == attn::Masking::causal && nq != nk) continue;
          attn::Rng rng(seed);
          const MatrixXd Q = attn::random_normal(nq, d, rng, 2.0),
                         K = attn::random_normal(nk, d, rng, 2.0),
                         V = attn::random_normal(nk, dv, rng);
          const MatrixXd expected = plain(Q, K, V, masking);
          for (const auto tiles : tile_sizes) {
            CAPTURE(nq);
            CAPTURE(tiles.queries);
            CAPTURE(tiles.keys);
            CHECK(max_abs(attn::tiled_attention(Q, K, V, masking, tiles) - expected) <=
                  1e-12);
          }
        }
  }

  TEST_CASE("the online-softmax recurrence holds its invariant after every tile") {
    // One row of scores s, processed in tiles: after each tile, l = sum_{j seen} e^{s_j - m}
    // and o = sum_{j seen} e^{s_j - m} v_j with m the largest score seen so far, so the
    // final o / l is the softmax average. Checked step by step, with a rescale that a
    // wrong recurrence (no factor e^{m - m'}) would fail by a factor of e^{gap}.
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      attn::Rng rng(seed);
      const Index n = 50, tile = 7;
      const VectorXd s = attn::random_normal(n, 1, rng, 10.0);  // gaps of e^{20} and more
      const VectorXd v = attn::random_normal(n, 1, rng);
      double m = -std::numeric_limits<double>::infinity(), l = 0.0, o = 0.0;
      for (Index j0 = 0; j0 < n; j0 += tile) {
        const Index c = std::min(tile, n - j0);
        const double m_new = std::max(m, s.segment(j0, c).maxCoeff());
        const double alpha = std::exp(m - m_new);
        const VectorXd p = (s.segment(j0, c).array() - m_new).exp();
        l = alpha * l + p.sum();
        o = alpha * o + p.dot(v.segment(j0, c));
        m = m_new;
        const VectorXd seen = (s.head(j0 + c).array() - s.head(j0 + c).maxCoeff()).exp();
        CHECK(m == s.head(j0 + c).maxCoeff());
        CHECK(l == doctest::Approx(seen.sum()).epsilon(1e-14));  // sums of <= 50 terms
        CHECK(o == doctest::Approx(seen.dot(v.head(j0 + c))).epsilon(1e-12));
      }
      const VectorXd p = attn::softmax(s);
      CHECK(o / l == doctest::Approx(p.dot(v)).epsilon(1e-12));
    }
  }

  // Labelled ex01.6: its causal cases build the mask with causal_mask().
  TEST_CASE("attention_row_blocks equals the reference attention() to 1e-12" *
            doctest::test_suite("ex01.6")) {
    // The fast form works a block of 32 queries at a time (with AVX-512) with the vectorised
    // exponential (fast_exp, within 1 ulp of std::exp); blocks do not divide n = 200, so
    // several blocks and a partial last one are covered. The two forms add the same terms
    // in another order: they agree to a few ulps of the output (~1e-15 observed); a wrong
    // scale or normalisation is off by O(1).
    for (const std::uint64_t seed : {1u, 2u})
      for (const auto [nq, nk, d, dv] : std::vector<Case>{
               {1, 3, 2, 2}, {70, 9, 4, 3}, {200, 2000, 16, 8}, {130, 130, 32, 3}})
        for (const auto masking : {attn::Masking::none, attn::Masking::causal}) {
          if (masking == attn::Masking::causal && nq != nk) continue;
          attn::Rng rng(seed);
          const MatrixXd Q = attn::random_normal(nq, d, rng, 2.0),
                         K = attn::random_normal(nk, d, rng, 2.0),
                         V = attn::random_normal(nk, dv, rng);
          CAPTURE(nq);
          CHECK(max_abs(attn::attention_row_blocks(Q, K, V, masking) -
                        plain(Q, K, V, masking)) <= 1e-12);
        }
  }

  // Labelled ex01.6: its causal cases build the mask with causal_mask().
  TEST_CASE("tiled and plain attention are stable for logits of scale 1e3" *
            doctest::test_suite("ex01.6")) {
    // Scores of size ~1e3 overflow e^s (above 709.78), so only the subtraction of the
    // (running) maximum keeps them finite. Each score is rounded to ~1e3 * 64 eps ~ 1e-11
    // absolutely, and e^{s - m} turns that into the same relative error of each weight:
    // the three forms may differ by ~1e-11 * max|v|; 1e-9 leaves a margin.
    for (const std::uint64_t seed : {1u, 2u, 3u})
      for (const auto masking : {attn::Masking::none, attn::Masking::causal}) {
        attn::Rng rng(seed);
        const Index n = 40, d = 8;
        const MatrixXd Q = attn::random_normal(n, d, rng, 30.0),
                       K = attn::random_normal(n, d, rng, 30.0),
                       V = attn::random_normal(n, 4, rng);
        const MatrixXd S = Q * K.transpose() / std::sqrt(double(d));
        REQUIRE(S.cwiseAbs().maxCoeff() > 1e3);  // naive e^s would be inf
        const MatrixXd expected = plain(Q, K, V, masking);
        REQUIRE(expected.allFinite());
        const MatrixXd tiled = attn::tiled_attention(Q, K, V, masking, {8, 5});
        CHECK(tiled.allFinite());
        CHECK(max_abs(tiled - expected) <= 1e-9);
        CHECK(max_abs(attn::attention_row_blocks(Q, K, V, masking) - expected) <= 1e-9);
      }
  }

  // Labelled ex01.6: its causal cases build the mask with causal_mask().
  TEST_CASE("the attention backward pass matches central finite differences" *
            doctest::test_suite("ex01.6")) {
    // L = sum(dO o Attn(Q, K, V)); each partial derivative by central differences with
    // h = 1e-6: truncation ~h^2 * |L'''| ~ 1e-11, rounding ~eps |L| / h ~ 1e-9.
    for (const std::uint64_t seed : {1u, 2u})
      for (const auto masking : {attn::Masking::none, attn::Masking::causal}) {
        attn::Rng rng(seed);
        const Index n = 9, nk = masking == attn::Masking::causal ? 9 : 11, d = 4, dv = 3;
        const MatrixXd Q = attn::random_normal(n, d, rng),
                       K = attn::random_normal(nk, d, rng),
                       V = attn::random_normal(nk, dv, rng),
                       dO = attn::random_normal(n, dv, rng);
        const auto loss = [&](const MatrixXd& q, const MatrixXd& k, const MatrixXd& v) {
          return (dO.array() * plain(q, k, v, masking).array()).sum();
        };
        const attn::AttentionGradients g = attn::attention_backward(Q, K, V, dO, masking);
        const double h = 1e-6;
        const auto fd = [&](int which, Index i, Index j) {
          MatrixXd P[3] = {Q, K, V}, M[3] = {Q, K, V};
          P[which](i, j) += h;
          M[which](i, j) -= h;
          return (loss(P[0], P[1], P[2]) - loss(M[0], M[1], M[2])) / (2 * h);
        };
        double err = 0.0, size = 0.0;
        const MatrixXd* grads[3] = {&g.dQ, &g.dK, &g.dV};
        for (int w = 0; w < 3; ++w)
          for (Index i = 0; i < grads[w]->rows(); ++i)
            for (Index j = 0; j < grads[w]->cols(); ++j) {
              err = std::max(err, std::abs((*grads[w])(i, j) - fd(w, i, j)));
              size = std::max(size, std::abs((*grads[w])(i, j)));
            }
        CHECK(size > 0.1);  // the gradients are not trivially zero
        CHECK(err <= 1e-7);
      }
  }

  TEST_CASE(
      "tiled attention refuses tile sizes below 1 and a causal mask on n_q != n_k") {
    attn::Rng rng(1);
    const MatrixXd Q = attn::random_normal(4, 3, rng), K = attn::random_normal(5, 3, rng),
                   V = attn::random_normal(5, 2, rng);
    CHECK_THROWS_WITH_AS(attn::tiled_attention(Q, K, V, attn::Masking::none, {0, 4}),
                         doctest::Contains("tile sizes must be >= 1"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::tiled_attention(Q, K, V, attn::Masking::causal),
                         doctest::Contains("causal mask needs as many queries as keys"),
                         std::invalid_argument);
    CHECK_THROWS_AS(attn::attention_backward(Q, K, V, MatrixXd::Zero(4, 3)),
                    std::invalid_argument);
  }

  TEST_CASE("a score that overflows is an error in every attention form, not NaN") {
    // Finite entries of 1e200 make q.k ~ 1e400, which is +inf in double precision.
    attn::Rng rng(2);
    MatrixXd Q = attn::random_normal(6, 3, rng), K = attn::random_normal(6, 3, rng);
    const MatrixXd V = attn::random_normal(6, 2, rng);
    Q.row(4).setConstant(1e200);
    K.row(1).setConstant(1e200);
    CHECK_THROWS_WITH_AS(attn::attention(Q, K, V, MatrixXd()),
                         doctest::Contains("row 4 has an infinite score"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::attention_row_blocks(Q, K, V),
                         doctest::Contains("row 4 has an infinite score"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::tiled_attention(Q, K, V),
                         doctest::Contains("row 4 has an infinite score"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::attention_backward(Q, K, V, MatrixXd::Ones(6, 2)),
                         doctest::Contains("row 4 has an infinite score"),
                         std::invalid_argument);
  }
}
