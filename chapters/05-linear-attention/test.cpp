// Chapter 05 — linear attention itself, each claim a test named after it. The feature maps
// are tested in test_feature_maps.cpp and test_random_features.cpp (three files, so that
// the two cores compile them at once and an edit recompiles only one).
//
// Tolerances: the feature-map identities are sums of products of at most a few hundred
// thousand terms; each is checked relative to the size of its terms (sum_p |t|^p / p!),
// a few hundred eps, which an off-by-one in the series or a wrong scaling misses by many
// orders of magnitude. Statistical claims use fixed seeds; their bounds (a few standard
// errors, slopes within an interval) are explained next to each.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/svd.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch05_test;

TEST_SUITE("ch05") {
  TEST_CASE("linear attention equals the quadratic form" *
            doctest::test_suite("ex05.6")) {
    for (const auto seed : seeds)
      for (const auto& [N, d] : std::vector<Shape>{{1, 2}, {5, 3}, {33, 8}, {64, 16}}) {
        attn::Rng rng(seed);
        const MatrixXd Q = attn::random_normal(N, d, rng, 0.5),
                       K = attn::random_normal(N, d, rng, 0.5),
                       V = attn::random_normal(N, 4, rng);
        const MatrixXd W = attn::gaussian_directions(24, d, rng);
        for (const auto& [fQ, fK] :
             {std::pair{attn::positive_random_features(Q, W),
                        attn::positive_random_features(K, W)},
              std::pair{attn::taylor_features(Q, 2), attn::taylor_features(K, 2)},
              std::pair{attn::exp_limit_features(Q, 2),
                        attn::exp_limit_features(K, 2)}}) {
          const MatrixXd fast = attn::linear_attention(fQ, fK, V);
          const MatrixXd slow = attn::kernel_attention_quadratic(fQ, fK, V);
          // Positive weights: each output is a convex combination, computed two ways; the
          // rounding is a few eps times (N + m) times max |V|.
          CHECK(max_abs(fast - slow) <= 8 * eps * double(N + fQ.cols()) * max_abs(V));
        }
      }
  }

  TEST_CASE(
      "streamed linear attention equals the stored-feature form for every block size") {
    for (const auto seed : seeds)
      for (const auto& [N, d] : std::vector<Shape>{{1, 2}, {5, 3}, {33, 8}, {70, 16}}) {
        attn::Rng rng(seed);
        // Keys sorted by growing norm: the largest exponent keeps rising from block to
        // block, so the state is rescaled many times (the path a wrong rescale breaks).
        MatrixXd K = attn::random_normal(N, d, rng, 0.5);
        for (Index j = 0; j < N; ++j) K.row(j) *= 1.0 + 6.0 * double(j) / double(N);
        const MatrixXd Q = attn::random_normal(N + 3, d, rng, 0.5),
                       V = attn::random_normal(N, 4, rng);
        const MatrixXd W = attn::gaussian_directions(24, d, rng);
        const MatrixXd stored = attn::linear_attention(
            attn::positive_random_features(Q, W, attn::Stabiliser::per_row),
            attn::positive_random_features(K, W, attn::Stabiliser::global), V);
        for (const Index block : {Index(1), Index(4), Index(7), N, N + 5}) {
          const MatrixXd streamed =
              attn::streamed_positive_feature_attention(Q, K, V, W, block);
          // Both are convex combinations of the rows of V whose weights differ only by
          // rounding (a few eps per term of sums of length N and r, and per rescale).
          CHECK(max_abs(streamed - stored) <= 16 * eps * double(N + 24) * max_abs(V));
        }
      }
    // Keys of norm about 60: exponents near -1800, which underflow to 0 without a
    // stabiliser (every weight 0). Streamed, the running maximum keeps them in range.
    attn::Rng rng(9);
    const MatrixXd Q = attn::random_normal(6, 4, rng, 30.0),
                   K = attn::random_normal(9, 4, rng, 30.0),
                   V = attn::random_normal(9, 2, rng);
    const MatrixXd W = attn::gaussian_directions(16, 4, rng);
    CHECK_THROWS_AS(attn::linear_attention(attn::positive_random_features(Q, W),
                                           attn::positive_random_features(K, W), V),
                    std::invalid_argument);
    const MatrixXd stored = attn::linear_attention(
        attn::positive_random_features(Q, W, attn::Stabiliser::per_row),
        attn::positive_random_features(K, W, attn::Stabiliser::global), V);
    CHECK(max_abs(attn::streamed_positive_feature_attention(Q, K, V, W, 2) - stored) <=
          16 * eps * 25 * max_abs(V));
    CHECK_THROWS_AS(attn::streamed_positive_feature_attention(Q, K, V, W, 0),
                    std::invalid_argument);
  }

  TEST_CASE("causal linear attention by prefix sums equals the masked quadratic form") {
    for (const auto seed : seeds)
      for (const auto& [N, d] : std::vector<Shape>{{1, 2}, {6, 3}, {40, 8}}) {
        attn::Rng rng(seed);
        const MatrixXd Q = attn::random_normal(N, d, rng, 0.5),
                       K = attn::random_normal(N, d, rng, 0.5),
                       V = attn::random_normal(N, 3, rng);
        const MatrixXd W = attn::gaussian_directions(16, d, rng);
        const MatrixXd fQ = attn::positive_random_features(Q, W),
                       fK = attn::positive_random_features(K, W);
        const MatrixXd rnn = attn::causal_linear_attention(fQ, fK, V);
        const MatrixXd masked =
            attn::kernel_attention_quadratic(fQ, fK, V, attn::Masking::causal);
        CHECK(max_abs(rnn - masked) <= 8 * eps * double(N + 16) * max_abs(V));
        // Row t depends only on tokens 0..t: changing the last token leaves the rest.
        MatrixXd V2 = V;
        V2.row(N - 1).setConstant(100);
        const MatrixXd rnn2 = attn::causal_linear_attention(fQ, fK, V2);
        if (N > 1) CHECK(max_abs(rnn2.topRows(N - 1) - rnn.topRows(N - 1)) == 0.0);
      }
  }

  TEST_CASE("Taylor linear attention converges to softmax attention as p grows") {
    attn::Rng rng(15);
    const MatrixXd Q = attn::random_normal(20, 3, rng, 0.6),
                   K = attn::random_normal(20, 3, rng, 0.6),
                   V = attn::random_normal(20, 2, rng);
    const MatrixXd target = attn::softmax_rows(Q * K.transpose()) * V;
    double previous = 1e300;
    for (int P = 2; P <= 10; P += 2) {  // even P: positive weights
      const double err = max_abs(attn::linear_attention(attn::taylor_features(Q, P),
                                                        attn::taylor_features(K, P), V) -
                                 target);
      if (err > 1e-13) CHECK(err < 0.2 * previous);  // at least 5x better per two orders
      previous = err;
    }
    CHECK(previous <= 1e-5);
  }

  TEST_CASE(
      "linear attention with r random features has rank r, above the head size d when r > "
      "d") {
    // Seed 001 bounds the rank of linear attention by the head size d. The bound is the
    // feature dimension: with r = 1 to 40 positive random features in d = 8 the rank is r,
    // and sigma_{r+1} is rounding (N eps relative to sigma_1).
    for (const auto seed : seeds)
      for (const Index m : {1, 4, 16, 40}) {
        CAPTURE(seed);
        CAPTURE(m);
        attn::Rng rng(seed);
        const Index N = 64, d = 8;
        const MatrixXd Q = attn::random_normal(N, d, rng, 0.5),
                       K = attn::random_normal(N, d, rng, 0.5);
        const MatrixXd W = attn::gaussian_directions(m, d, rng);
        const MatrixXd A = attn::kernel_attention_weights(
            attn::positive_random_features(Q, W), attn::positive_random_features(K, W));
        const VectorXd s = attn::singular_values(A);
        CHECK(s(m) <= 4 * double(N) * eps * s(0));
        CHECK(attn::numerical_rank(A, 1e-10) == m);
      }
  }

  TEST_CASE(
      "the Taylor feature matrix has rank binom(d + p, p), fewer than its sum_l d^l "
      "features") {
    // Seed 001 counts d^p features for the Taylor map. The map stores the monomial
    // x_(i_1) .. x_(i_l) once per ordering of its indices, and the copies are equal columns:
    // phi_p(X) spans only the binom(d + p, p) monomials of degree <= p (exercise 05.1). So
    // for n above that many rows the rank of phi_p(X), and of the n x n weight matrix
    // phi_p(Q) phi_p(K)^T, is binom(d + p, p), well below the sum_l d^l features.
    struct Case {
      Index d;
      int p;
      double binom, features;  // binom(d + p, p), sum_l d^l (the README quotes 153, 273)
    };
    for (const auto& [d, p, binom, features] :
         {Case{2, 4, 15, 31}, Case{3, 3, 20, 40}, Case{16, 2, 153, 273}}) {
      CAPTURE(d);
      CAPTURE(p);
      attn::Rng rng(31);
      const Index N = Index(2 * binom) + 10;
      const MatrixXd Q = attn::random_normal(N, d, rng, 0.7),
                     K = attn::random_normal(N, d, rng, 0.7);
      const MatrixXd phiQ = attn::taylor_features(Q, p), phiK = attn::taylor_features(K, p);
      CHECK(double(phiQ.cols()) == features);
      CHECK(double(attn::numerical_rank(phiQ, 1e-10)) == binom);
      CHECK(double(attn::numerical_rank(phiQ * phiK.transpose(), 1e-10)) == binom);
    }
  }

  TEST_CASE(
      "splitting the 1/sqrt(d_k) scale between queries and keys gives scaled softmax "
      "attention") {
    // Seed 001 writes standard attention as softmax(q.k), without the scale. Queries and
    // keys divided by d_k^(1/4) restore it exactly (up to rounding); the unscaled weights
    // are a different attention.
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const Index N = 12, d = 16;
      const MatrixXd Q = attn::random_normal(N, d, rng), K = attn::random_normal(N, d, rng);
      const MatrixXd scaled = attn::softmax_rows(Q * K.transpose() / std::sqrt(double(d)));
      const double quarter = std::pow(double(d), 0.25);
      const MatrixXd split = attn::softmax_rows((Q / quarter) * (K / quarter).transpose());
      CHECK(max_abs(split - scaled) <= 64 * eps);
      CHECK(max_abs(attn::softmax_rows(Q * K.transpose()) - scaled) > 0.1);
    }
  }

  TEST_CASE(
      "at equal feature dimension in d_k = 4 the Taylor map is more accurate than positive "
      "random features") {
    // Seed 001 calls the deterministic maps far inferior to random features in practice.
    // Their drawback is how D grows with d_k, not accuracy at a given D: in the program's
    // setting of section 6 (d_k = 4, logits with standard deviation 1/2) the Taylor map of
    // order 3 (85 features) beats positive random features with 85 and even with 4096
    // features (root mean square error over 10 draws of the directions).
    attn::Rng rng(41);
    const MatrixXd Q = attn::random_normal(64, 4, rng, 0.5),
                   K = attn::random_normal(64, 4, rng, 0.5);
    const MatrixXd exact = (Q * K.transpose()).array().exp();
    const auto error = [&](const MatrixXd& phiQ, const MatrixXd& phiK) {
      return (phiQ * phiK.transpose() - exact).norm() / exact.norm();
    };
    const MatrixXd phiQ = attn::taylor_features(Q, 3), phiK = attn::taylor_features(K, 3);
    const double taylor = error(phiQ, phiK);
    const auto random = [&](Index r) {
      double mean_square = 0;
      for (int draw = 0; draw < 10; ++draw) {
        const MatrixXd W = attn::gaussian_directions(r, 4, rng);
        mean_square += std::pow(error(attn::positive_random_features(Q, W),
                                      attn::positive_random_features(K, W)),
                                2) /
                       10;
      }
      return std::sqrt(mean_square);
    };
    CAPTURE(taylor);
    CHECK(phiQ.cols() == 85);
    CHECK(taylor < 0.2 * random(85));
    CHECK(taylor < random(4096));
  }

  TEST_CASE(
      "softmax attention is numerically full rank, and when saturated its rank is the "
      "number of favourite keys, far above d") {
    // Seed 001 says softmax attention is "not limited by d". As the logit scale s grows,
    // softmax(s Q K^T) tends to the 0/1 matrix P whose row i is one-hot on query i's
    // largest logit. P^T P = diag(how often each key is a favourite), so P's singular
    // values are the square roots of those counts (at least 1/sqrt(N) of the largest, far
    // above the 1e-10 tolerance) and its rank is exactly the number of distinct favourite
    // keys. That number is not tied to d: for random keys most are some query's favourite.
    // The shapes: the program's (256 x 16) and a smaller one, three seeds each, with the
    // multiple of d the favourite keys must exceed (the seeds give 25 to 31 for 64 x 8 and
    // 96 to 111 for 256 x 16; a rank limited by the head size would be at most d).
    struct Case {
      Index N, d, times_d;
    };
    for (const auto& [N, d, times_d] : {Case{64, 8, 2}, Case{256, 16, 5}})
      for (const auto seed : seeds) {
        CAPTURE(N);
        CAPTURE(seed);
        attn::Rng rng(seed);
        const double sigma = std::pow(double(d), -0.25);  // logits with variance 1
        const MatrixXd Q = attn::random_normal(N, d, rng, sigma),
                       K = attn::random_normal(N, d, rng, sigma);
        const MatrixXd logits = Q * K.transpose();
        // At unit scale: sigma_min / sigma_max well above rounding, so the rank is N.
        CHECK(attn::numerical_rank(attn::softmax_rows(logits), 1e-10) == N);
        std::vector<Index> fav;
        double gap = 1e300;  // the smallest gap between a row's two largest logits
        for (Index i = 0; i < N; ++i) {
          Index j = 0;
          const double top = logits.row(i).maxCoeff(&j);
          Eigen::RowVectorXd rest = logits.row(i);
          rest(j) = -1e300;
          gap = std::min(gap, top - rest.maxCoeff());
          fav.push_back(j);
        }
        std::sort(fav.begin(), fav.end());
        const auto distinct = Index(std::unique(fav.begin(), fav.end()) - fav.begin());
        CAPTURE(distinct);
        // A scale at which every weight but the largest is below e^{-100} (4e-44, far under
        // the 1e-10 tolerance): the matrix is P to rounding, so its rank is `distinct`.
        const double s_big = 100 / gap;
        const Index r_big =
            attn::numerical_rank(attn::softmax_rows(s_big * logits), 1e-10);
        CHECK(r_big == distinct);
        // Far above d, and below N: in d dimensions not every key is some query's largest
        // logit.
        CHECK(distinct > times_d * d);
        CHECK(distinct < N);
        // On the way there the rank falls, but never below the limit.
        const Index r_mid = attn::numerical_rank(attn::softmax_rows(30 * logits), 1e-10);
        CHECK(r_mid < N);
        CHECK(r_mid >= distinct);
      }
  }

  TEST_CASE(
      "feature maps refuse dimensions that do not fit in memory, saying how large") {
    attn::Rng rng(17);
    const MatrixXd X = attn::random_normal(100, 16, rng);
    try {
      (void)attn::taylor_features(X, 12);
      FAIL("no error");
    } catch (const attn::feature_size_error& e) {
      const std::string what = e.what();
      CHECK(what.find("order 12") != std::string::npos);
      CHECK(what.find("3.002e+14 features") != std::string::npos);  // sum_p 16^p
      CHECK(what.find("GiB") != std::string::npos);
    }
    CHECK_THROWS_AS((void)attn::exp_limit_features(X, 9), attn::feature_size_error);
    // Just under a given limit is fine; just over is refused.
    const double dim = attn::taylor_feature_dim(16, 2);  // 273
    CHECK_NOTHROW(attn::taylor_features(X, 2, 100 * dim * 8));
    CHECK_THROWS_AS((void)attn::taylor_features(X, 2, 100 * dim * 8 - 1),
                    attn::feature_size_error);
  }

  TEST_CASE("kernel attention refuses weights that sum to zero or less instead of NaN") {
    // Taylor P = 1 with q.k = -1 for every key: every weight 1 + q.k is 0.
    MatrixXd Q(1, 1), K(3, 1), V = MatrixXd::Ones(3, 1);
    Q << 1;
    K << -1, -1, -1;
    const MatrixXd fQ = attn::taylor_features(Q, 1), fK = attn::taylor_features(K, 1);
    CHECK_THROWS_AS((void)attn::linear_attention(fQ, fK, V), std::invalid_argument);
    CHECK_THROWS_AS((void)attn::kernel_attention_quadratic(fQ, fK, V),
                    std::invalid_argument);
    CHECK_THROWS_AS((void)attn::causal_linear_attention(fQ.replicate(3, 1), fK, V),
                    std::invalid_argument);
    MatrixXd bad = fK;
    bad(0, 0) = std::nan("");
    CHECK_THROWS_AS((void)attn::linear_attention(fQ, bad, V), std::invalid_argument);
  }
}
