// Chapter 05 — every claim of the chapter, as a test named after the claim.
//
// Tolerances: the feature-map identities are sums of products of at most a few hundred
// thousand terms; each is checked relative to the size of its terms (sum_p |t|^p / p!),
// a few hundred eps, which an off-by-one in the series or a wrong scaling misses by many
// orders of magnitude. Statistical claims use fixed seeds; their bounds (a few standard
// errors, slopes within an interval) are explained next to each.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "experiments.hpp"

using ch05::Estimator;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

double max_abs(const MatrixXd& M) {
  return M.cwiseAbs().maxCoeff();
}

struct Shape {
  Index n, d;
};
const std::vector<Shape> shapes{{1, 1}, {3, 2}, {7, 3}, {12, 5}};
const std::vector<std::uint64_t> seeds{1, 2, 3};

// max_ij |A_ij - B_ij| / S_ij.
double max_rel(const MatrixXd& A, const MatrixXd& B, const MatrixXd& S) {
  return ((A - B).array() / S.array()).abs().maxCoeff();
}

}  // namespace

TEST_SUITE("ch05") {
  TEST_CASE("the Taylor map's inner product is the exponential series from l = 0 to p") {
    for (const auto seed : seeds)
      for (const auto& [n, d] : shapes)
        for (int P = 0; P <= 5; ++P) {
          attn::Rng rng(seed);
          const MatrixXd Q = attn::random_normal(n, d, rng),
                         K = attn::random_normal(n, d, rng);
          const MatrixXd lhs =
              attn::taylor_features(Q, P) * attn::taylor_features(K, P).transpose();
          const MatrixXd t = Q * K.transpose();
          const MatrixXd T =
              t.unaryExpr([&](double x) { return attn::taylor_exp(x, P); });
          // The scale of the terms: T_P(sum_i |q_i k_i|), which bounds the sum of the
          // absolute values of all d^p products in block p.
          const MatrixXd S =
              (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr([&](double x) {
                return attn::taylor_exp(x, P);
              });
          // Rounding: products of p + 1 factors, summed; relative to the term sizes.
          CHECK(max_rel(lhs, T, S) <= 200 * eps);
          // The seed's series starts at p = 1: it misses the constant term 1 exactly.
          const MatrixXd seed_series = T.array() - 1.0;
          CHECK((lhs - seed_series).minCoeff() >= 1 - 200 * eps * S.maxCoeff());
        }
  }

  TEST_CASE("the Taylor map of order p has sum_l d^l features") {
    attn::Rng rng(4);
    for (Index d = 1; d <= 5; ++d)
      for (int P = 0; P <= 5; ++P) {
        const MatrixXd X = attn::random_normal(2, d, rng);
        double expected = 0;
        for (int p = 0; p <= P; ++p) expected += std::pow(double(d), p);
        CHECK(double(attn::taylor_features(X, P).cols()) == expected);
        CHECK(attn::taylor_feature_dim(d, P) == expected);
      }
  }

  TEST_CASE("the Taylor truncation error lies within the Lagrange remainder bounds") {
    // e^t - T_P(t) = e^xi t^{P+1}/(P+1)! for some xi between 0 and t, so the error lies
    // between e^{min(t,0)} and e^{max(t,0)} times |t|^{P+1}/(P+1)!, with the sign of
    // t^{P+1}.
    for (double t : {-5.0, -2.0, -0.5, 0.3, 1.0, 3.0, 6.0})
      for (int P = 0; P <= 15; ++P) {
        const double err = std::exp(t) - attn::taylor_exp(t, P);
        const double base = std::pow(std::abs(t), P + 1) / std::tgamma(P + 2.0);
        const double rounding = 64 * eps * attn::taylor_exp(std::abs(t), P);
        if (base <= 1e3 * rounding) continue;  // the error is rounding, not truncation
        CHECK(std::abs(err) <= std::exp(std::max(t, 0.0)) * base + rounding);
        CHECK(std::abs(err) >= std::exp(std::min(t, 0.0)) * base - rounding);
        CHECK((err > 0) == (t > 0 || (P + 1) % 2 == 0));
      }
  }

  TEST_CASE("odd Taylor orders give negative weights below a root, even orders never") {
    attn::Rng rng(5);
    for (int P = 1; P <= 9; P += 2) {
      const double root = ch05::taylor_root(P);
      CHECK(std::abs(attn::taylor_exp(root, P)) <= 1e-12);
      CHECK(attn::taylor_exp(root - 0.05, P) < 0);
      CHECK(attn::taylor_exp(root + 0.05, P) > 0);
      // Two vectors with q.k = root - 0.1: the Taylor feature inner product is negative.
      VectorXd q, k;
      ch05::pair_with_product(3, 1.1 * std::sqrt(-root + 0.1), root - 0.1, q, k);
      MatrixXd X(2, 3);
      X << q.transpose(), k.transpose();
      const MatrixXd phi = attn::taylor_features(X, P);
      CHECK(phi.row(0).dot(phi.row(1)) < 0);
    }
    // Even P: T_P' = T_{P-1}, so the minimum is at the root t* of T_{P-1}, where
    // T_P(t*) = t*^P / P! > 0. Check that value, and that a grid never goes below it.
    for (int P = 2; P <= 10; P += 2) {
      const double ts = ch05::taylor_even_minimum_point(P);
      const double minimum = attn::taylor_exp(ts, P);
      CHECK(minimum ==
            doctest::Approx(std::pow(ts, P) / std::tgamma(P + 1.0)).epsilon(1e-9));
      CHECK(minimum > 0);
      for (double t = -30; t <= 5; t += 0.01)
        CHECK_MESSAGE(attn::taylor_exp(t, P) >= minimum * (1 - 1e-9),
                      "P = " << P << ", t = " << t);
    }
  }

  TEST_CASE("the exp-limit map's inner product is (1 + q.k/p)^p" *
            doctest::test_suite("ex05.6")) {
    for (const auto seed : seeds)
      for (const auto& [rows, d] : shapes)
        for (int n = 1; n <= 4; ++n) {
          attn::Rng rng(seed);
          const MatrixXd Q = attn::random_normal(rows, d, rng, 2.0),
                         K = attn::random_normal(rows, d, rng, 2.0);
          const MatrixXd lhs =
              attn::exp_limit_features(Q, n) * attn::exp_limit_features(K, n).transpose();
          const MatrixXd t = Q * K.transpose();
          const double nn = n;
          const MatrixXd rhs =
              t.unaryExpr([&](double x) { return std::pow(1 + x / nn, nn); });
          const MatrixXd S =
              (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr([&](double x) {
                return std::pow(1 + x / nn, nn);
              });
          CHECK(max_rel(lhs, rhs, S) <= 200 * eps);  // as for the Taylor map
          CHECK(double(attn::exp_limit_features(Q, n).cols()) == std::pow(d + 1.0, n));
        }
  }

  TEST_CASE("the exp-limit error is e^t t^2/(2p) to leading order: slope -1 in p") {
    for (double t : {-2.0, 0.5, 1.0, 2.0}) {
      std::vector<double> ns, errs;
      for (int k = 6; k <= 16; ++k) {
        const double n = std::ldexp(1.0, k);
        ns.push_back(n);
        errs.push_back(std::abs(std::exp(t) - std::exp(n * std::log1p(t / n))));
      }
      const ch05::Fit f = ch05::fit_loglog(ns, errs);
      // The next term is O(1/n^2): over n = 64..65536 it bends the slope by < 0.01. A
      // rate of 1/sqrt(n) or 1/n^2 is 0.5 or 1 away.
      CHECK(f.slope == doctest::Approx(-1.0).epsilon(0.01));
      // And the constant: error * 2n / (e^t t^2) -> 1, with an O(1/n) correction.
      const double ratio = errs.back() * 2 * ns.back() / (std::exp(t) * t * t);
      CHECK(ratio == doctest::Approx(1.0).epsilon(4.0 * std::abs(t) / ns.back() + 1e-6));
    }
  }

  TEST_CASE("odd exp-limit powers give negative weights when q.k < -p, even ones never" *
            doctest::test_suite("ex05.6")) {
    for (int n = 1; n <= 5; ++n) {
      VectorXd q, k;
      ch05::pair_with_product(2, 1.1 * std::sqrt(n + 1.0), -(n + 1.0), q,
                              k);  // q.k = -(n + 1)
      MatrixXd X(2, 2);
      X << q.transpose(), k.transpose();
      const MatrixXd psi = attn::exp_limit_features(X, n);
      const double w = psi.row(0).dot(psi.row(1));
      CHECK(w == doctest::Approx(std::pow(-1.0 / n, n)).epsilon(1e-12));
      if (n % 2 == 1)
        CHECK(w < 0);
      else
        CHECK(w > 0);
    }
  }

  TEST_CASE("positive random features are unbiased for exp(q.k) and never negative") {
    attn::Rng rng(11);
    const int draws = 20000;
    for (const auto& [r, t] : {std::pair{0.5, 0.1}, {0.8, -0.5}, {0.8, 0.5}}) {
      VectorXd q, k;
      ch05::pair_with_product(8, r, t, q, k);
      const VectorXd e = ch05::kernel_estimates(Estimator::positive, q, k, 1, draws, rng);
      CHECK(e.minCoeff() > 0);
      const double mean = e.mean();
      const double se =
          std::sqrt((e.array() - mean).square().sum() / (draws - 1.0) / draws);
      // Within 4 standard errors (a false alarm has probability 6e-5); an estimator that
      // forgets the factor e^{-|x|^2/2} is off by e^{r^2} - 1 >= 28% = dozens of SE.
      CHECK(std::abs(mean - std::exp(t)) <= 4 * se);
      // The sample variance matches the theory e^{2 q.k}(e^{|q+k|^2} - 1) within 15%.
      // (Only while |q + k|^2 is small: the estimate is lognormal, and for |q + k|^2 of 3
      // or more a sample variance of 20000 draws is dominated by the draws it has not
      // seen.)
      const double var = se * se * draws;
      if ((q + k).squaredNorm() < 1.5)
        CHECK(var == doctest::Approx(std::exp(2 * t) * std::expm1((q + k).squaredNorm()))
                         .epsilon(0.15));
    }
  }

  TEST_CASE("the relative RMSE of positive random features falls like r^(-1/2)") {
    attn::Rng rng(12);
    VectorXd q, k;
    ch05::pair_with_product(16, 0.5, 0.1, q,
                            k);  // |q + k|^2 = 0.7: a mild lognormal tail
    std::vector<double> ms, rmse;
    for (int j = 2; j <= 9; ++j) {
      const Index m = Index(1) << j;
      const VectorXd est = ch05::kernel_estimates(Estimator::positive, q, k, m, 300, rng);
      ms.push_back(double(m));
      rmse.push_back(ch05::relative_rmse(est, std::exp(q.dot(k))));
      // Each point within 25% of sqrt((e^{|q+k|^2} - 1) / m): 300 trials estimate an MSE
      // to about +-12% (kurtosis of the m-average ~ 1 + 5/m), an RMSE to about +-6%.
      CHECK(rmse.back() ==
            doctest::Approx(std::sqrt(ch05::positive_relative_mse(q, k, double(m))))
                .epsilon(0.25));
    }
    const ch05::Fit f = ch05::fit_loglog(ms, rmse);
    // -1/2 within 0.08 (about 3 SE of this fit); a rate of 1/m or a bias (slope -> 0)
    // fails.
    CHECK(f.slope == doctest::Approx(-0.5).epsilon(0.16));
    CHECK(std::abs(f.slope + 0.5) <= 0.08);
  }

  TEST_CASE("trigonometric features go negative and fail where the kernel is small") {
    attn::Rng rng(13);
    const Index m = 64;
    const int trials = 400;
    // |q| = |k| = 1: q.k = -1 is the smallest kernel value e^{-1}, q.k = +1 the largest.
    VectorXd q, k;
    ch05::pair_with_product(8, 1.0, -0.9, q, k);
    const VectorXd trig =
        ch05::kernel_estimates(Estimator::trigonometric, q, k, m, trials, rng);
    const VectorXd pos =
        ch05::kernel_estimates(Estimator::positive, q, k, m, trials, rng);
    const double truth = std::exp(-0.9);
    CHECK(pos.minCoeff() > 0);
    CHECK(trig.minCoeff() < 0);  // some estimates of a positive number are negative
    const double r_trig = ch05::relative_rmse(trig, truth),
                 r_pos = ch05::relative_rmse(pos, truth);
    // Theory: trig 0.56, positive 0.04 here; both measured within 20% (400 trials).
    CHECK(r_trig ==
          doctest::Approx(std::sqrt(ch05::trig_relative_mse(q, k, m))).epsilon(0.2));
    CHECK(r_pos ==
          doctest::Approx(std::sqrt(ch05::positive_relative_mse(q, k, m))).epsilon(0.2));
    CHECK(r_trig > 5 * r_pos);
    // Where the kernel is large (q.k = +0.9) the roles swap.
    ch05::pair_with_product(8, 1.0, 0.9, q, k);
    const double big = std::exp(0.9);
    CHECK(
        ch05::relative_rmse(
            ch05::kernel_estimates(Estimator::trigonometric, q, k, m, trials, rng), big) <
        ch05::relative_rmse(
            ch05::kernel_estimates(Estimator::positive, q, k, m, trials, rng), big) /
            5);
  }

  TEST_CASE("orthogonal random features are unbiased and have lower error at equal r") {
    attn::Rng rng(14);
    const Index d = 4;
    // Rows inside a block are exactly orthogonal.
    const MatrixXd W = attn::orthogonal_directions(8, d, rng);
    for (Index b = 0; b < 2; ++b) {
      const MatrixXd B = W.middleRows(b * d, d);
      const MatrixXd G = B * B.transpose();
      CHECK(max_abs(G - MatrixXd(G.diagonal().asDiagonal())) <=
            1e-13 * G.diagonal().maxCoeff());
    }
    VectorXd q, k;
    ch05::pair_with_product(d, 0.7, 0.2, q, k);
    const double truth = std::exp(0.2);
    const int trials = 4000;
    const VectorXd iid =
        ch05::kernel_estimates(Estimator::positive, q, k, d, trials, rng);
    const VectorXd ort =
        ch05::kernel_estimates(Estimator::orthogonal, q, k, d, trials, rng);
    const double se = std::sqrt((ort.array() - ort.mean()).square().mean() / trials);
    CHECK(std::abs(ort.mean() - truth) <= 4 * se);
    const double mse_iid = (iid.array() - truth).square().mean();
    const double mse_ort = (ort.array() - truth).square().mean();
    MESSAGE("MSE iid " << mse_iid << ", orthogonal " << mse_ort);
    // 4000 trials estimate each MSE to about +-4%; the gain measured here is larger.
    CHECK(mse_ort < 0.85 * mse_iid);
  }

  TEST_CASE(
      "subtracting the maxima leaves linear attention unchanged and rescues underflow") {
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const Index N = 40, d = 6, m = 16;
      const MatrixXd Q = attn::random_normal(N, d, rng, 0.6),
                     K = attn::random_normal(N, d, rng, 0.6),
                     V = attn::random_normal(N, 3, rng);
      const MatrixXd W = attn::gaussian_directions(m, d, rng);
      const MatrixXd plain = attn::linear_attention(
          attn::positive_random_features(Q, W), attn::positive_random_features(K, W), V);
      const MatrixXd stable = attn::linear_attention(
          attn::positive_random_features(Q, W, attn::Stabiliser::per_row),
          attn::positive_random_features(K, W, attn::Stabiliser::global), V);
      // Rounding only: the factors e^{-c} cancel in each row's ratio.
      CHECK(max_abs(stable - plain) <= 1e-12 * max_abs(V));
      // Causal: the per-row query factor and the global key factor cancel there too.
      const MatrixXd stable_causal = attn::causal_linear_attention(
          attn::positive_random_features(Q, W, attn::Stabiliser::per_row),
          attn::positive_random_features(K, W, attn::Stabiliser::global), V);
      const MatrixXd plain_causal = attn::causal_linear_attention(
          attn::positive_random_features(Q, W), attn::positive_random_features(K, W), V);
      CHECK(max_abs(stable_causal - plain_causal) <= 1e-12 * max_abs(V));
      // At 100x the norms, omega.x - |x|^2/2 < -745 for every direction: every feature
      // underflows (to 0, or to the floor of a vectorised exp). Then all weights are
      // equal (or 0/0): the output is a plain average of the values, or refused, never
      // right.
      const MatrixXd under = attn::positive_random_features(100 * Q, W);
      CHECK(under.maxCoeff() < 1e-300);
      const VectorXd average = V.colwise().mean().transpose();
      try {
        const MatrixXd lost =
            attn::linear_attention(under, attn::positive_random_features(100 * K, W), V);
        CHECK(max_abs(lost.rowwise() - average.transpose()) <= 1e-12);
      } catch (const std::invalid_argument&) {  // refused only when a weight sum is 0
        const MatrixXd weights =
            under * attn::positive_random_features(100 * K, W).transpose();
        CHECK(weights.rowwise().sum().minCoeff() == 0.0);
      }
      const MatrixXd big = attn::linear_attention(
          attn::positive_random_features(100 * Q, W, attn::Stabiliser::per_row),
          attn::positive_random_features(100 * K, W, attn::Stabiliser::global), V);
      CHECK(big.allFinite());
      CHECK(max_abs(big.rowwise() - average.transpose()) > 0.1);  // not a plain average
    }
  }

  TEST_CASE(
      "Performer's epsilon mixes uniform and query-independent weights into attention") {
    // With phi' = phi + eps: w'_ij = w_ij + eps s(q_i) + m eps^2 + eps s(k_j), s(x) =
    // sum_l phi_l(x). So row i of A' = (S_i A_i + N c_i U + eps sum_j s(k_j) B) / (S_i +
    // N c_i + eps sum_j s(k_j)): exact attention A, uniform weights U = 1/N, and weights
    // B_j = s(k_j) / sum s(k) that ignore the query.
    for (const auto seed : seeds)
      for (const double e : {1e-6, 1e-3, 0.1}) {
        attn::Rng rng(seed);
        const Index N = 30, d = 5, m = 12;
        const MatrixXd Q = attn::random_normal(N, d, rng, 0.7),
                       K = attn::random_normal(N, d, rng, 0.7);
        const MatrixXd W = attn::gaussian_directions(m, d, rng);
        const MatrixXd fQ = attn::positive_random_features(Q, W,
                                                           attn::Stabiliser::per_row),
                       fK =
                           attn::positive_random_features(K, W, attn::Stabiliser::global);
        const MatrixXd with_eps = attn::kernel_attention_weights(
            attn::positive_random_features(Q, W, attn::Stabiliser::per_row, e),
            attn::positive_random_features(K, W, attn::Stabiliser::global, e));
        const MatrixXd A = attn::kernel_attention_weights(fQ, fK);
        const VectorXd S = (fQ * fK.transpose()).rowwise().sum();
        const VectorXd sq = fQ.rowwise().sum(), sk = fK.rowwise().sum();
        const VectorXd c = e * sq.array() + double(m) * e * e;
        const double key_mass = e * sk.sum();
        MatrixXd mix(N, N);
        for (Index i = 0; i < N; ++i) {
          const double total = S(i) + double(N) * c(i) + key_mass;
          mix.row(i) =
              (S(i) * A.row(i).array() + c(i) + e * sk.transpose().array()) / total;
        }
        // Rounding in sums of N m positive terms.
        CHECK(max_abs(mix - with_eps) <= 1e-13);
        // The weight of the uniform part grows with eps; it is not negligible at 0.1.
        if (e == 0.1)
          CHECK(0.5 * (with_eps - A).cwiseAbs().rowwise().sum().mean() > 0.01);
      }
  }

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

  TEST_CASE("streamed linear attention equals the stored-feature form for every block size") {
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
                   K = attn::random_normal(9, 4, rng, 30.0), V = attn::random_normal(9, 2, rng);
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
        const MatrixXd masked = attn::kernel_attention_quadratic(fQ, fK, V, true);
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

  TEST_CASE("the linear attention matrix has rank at most r") {
    for (const auto seed : seeds)
      for (const Index m : {1, 4, 16, 40}) {
        attn::Rng rng(seed);
        const Index N = 64, d = 8;
        const MatrixXd Q = attn::random_normal(N, d, rng, 0.5),
                       K = attn::random_normal(N, d, rng, 0.5);
        const MatrixXd W = attn::gaussian_directions(m, d, rng);
        const MatrixXd A = attn::kernel_attention_weights(
            attn::positive_random_features(Q, W), attn::positive_random_features(K, W));
        const VectorXd s = Eigen::BDCSVD<MatrixXd>(A).singularValues();
        // sigma_{m+1} is rounding: N eps relative to sigma_1.
        CHECK(s(m) <= 4 * double(N) * eps * s(0));
        CHECK(attn::numerical_rank(A, 1e-10) <= m);
      }
  }

  TEST_CASE(
      "softmax attention is numerically full rank, losing rank as the logit scale "
      "grows") {
    attn::Rng rng(16);
    const Index N = 64, d = 8;
    const MatrixXd Q = attn::random_normal(N, d, rng, std::pow(8.0, -0.25)),
                   K = attn::random_normal(N, d, rng, std::pow(8.0, -0.25));
    const MatrixXd logits = Q * K.transpose();
    // At unit scale: sigma_min / sigma_max well above rounding, so the rank is N.
    CHECK(attn::numerical_rank(attn::softmax_rows(logits), 1e-10) == N);
    // At large scale every row tends to one-hot on the query's largest logit: the rank
    // tends to the number of distinct such keys (fewer than N: in d = 8 not every key can
    // be a maximiser).
    std::vector<Index> fav;
    double gap = 1e300;  // smallest gap between a row's largest and second largest logit
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
    CHECK(distinct < N);
    // A scale at which every weight but the largest is below e^{-100}: one-hot to rounding.
    const double s_big = 100 / gap;
    const Index r_big = attn::numerical_rank(attn::softmax_rows(s_big * logits), 1e-10);
    CHECK(r_big == distinct);
    const Index r_mid = attn::numerical_rank(attn::softmax_rows(30 * logits), 1e-10);
    CHECK(r_mid < N);
    CHECK(r_mid >= distinct);
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
