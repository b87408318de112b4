// Chapter 03, the trainer: one attention layer trained by Adam to do linear regression
// (seed 000 §5). Every claim about the forward pass, the hand-derived gradients, the
// optimiser and the experiment, as a test named after the claim.
//
// Tolerances: each exact identity is checked against a first-order rounding bound built
// from the absolute values of the factors (|fl(AB) - AB| <= k eps |A||B| for an inner
// dimension k); finite differences against their truncation and rounding errors; the
// training claims against the thresholds the source states, on fixed seeds.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "experiments/regression_experiment.hpp"
#include "experiments/statistics.hpp"

using attn::AttentionRegressor;
using attn::Normalisation;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

struct Shape {
  Index n, d;
};
// d > n is fine for the attention system itself (only least squares needs d <= n);
// n = 150 spans three blocks of the softmax path (64 queries each, the last one short).
const std::vector<Shape> shapes{{1, 1},  {2, 3},  {5, 2},  {7, 4},
                                {16, 8}, {40, 5}, {150, 3}};
const std::vector<std::uint64_t> seeds{1, 2, 3};
const std::vector<Normalisation> both{Normalisation::identity, Normalisation::softmax};

// Data and parameters of moderate size: X, Y ~ N(0, 1), W ~ N(0, 0.5^2), w_v ~ 1.
struct Case {
  MatrixXd X;
  VectorXd Y;
  AttentionRegressor p;
};
Case random_case(Shape s, std::uint64_t seed, double w_scale = 0.5) {
  attn::Rng rng(seed);
  Case c;
  c.X = attn::random_normal(s.n, s.d, rng);
  c.Y = attn::random_normal(s.n, 1, rng);
  c.p.W_Q = attn::random_normal(s.d, s.d, rng, w_scale);
  c.p.W_K = attn::random_normal(s.d, s.d, rng, w_scale);
  c.p.w_v = 0.5 + attn::uniform01(rng);
  return c;
}

// |w_v| |X| |W_Q| |W_K|^T |X|^T: entrywise absolute values, the scale of the rounding
// errors in S = X W_Q W_K^T X^T (times |w_v|).
MatrixXd abs_scores(const Case& c) {
  const MatrixXd aX = c.X.cwiseAbs();
  return aX * (c.p.W_Q.cwiseAbs() * c.p.W_K.cwiseAbs().transpose()) * aX.transpose();
}

double loss(const AttentionRegressor& p, const Case& c, Normalisation h) {
  return attn::loss_and_gradient(p, c.X, c.Y, h);
}

// Checks the analytic gradient against central differences, parameter by parameter.
//
// (L(t + h) - L(t - h)) / 2h = L'(t) + h^2 L'''(xi)/6 + O(eps |L| / h). With h = 1e-5 and
// the moderate sizes above, the truncation term is ~1e-10 |L'''| and the rounding term
// ~1e-11 |L|; the third derivatives here are at most ~1e2, so the error stays below
// ~1e-8. The tolerance 1e-6 (|g_k| + |L|) keeps a margin of 100, while a wrong formula (a
// missing transpose, a sign, a factor 2) is off by O(1) relative.
void check_gradient(const Case& c, Normalisation h) {
  AttentionRegressor g;
  const double L = attn::loss_and_gradient(c.p, c.X, c.Y, h, &g);
  const double step = 1e-5;
  auto central = [&](auto perturb) {
    AttentionRegressor plus = c.p, minus = c.p;
    perturb(plus, step);
    perturb(minus, -step);
    return (loss(plus, c, h) - loss(minus, c, h)) / (2 * step);
  };
  const Index d = c.X.cols();
  for (Index k = 0; k < d * d; ++k) {
    const double fd_q = central([k](AttentionRegressor& q, double s) { q.W_Q(k) += s; });
    CHECK(std::abs(fd_q - g.W_Q(k)) <= 1e-6 * (std::abs(g.W_Q(k)) + L));
    const double fd_k = central([k](AttentionRegressor& q, double s) { q.W_K(k) += s; });
    CHECK(std::abs(fd_k - g.W_K(k)) <= 1e-6 * (std::abs(g.W_K(k)) + L));
  }
  const double fd_v = central([](AttentionRegressor& q, double s) { q.w_v += s; });
  CHECK(std::abs(fd_v - g.w_v) <= 1e-6 * (std::abs(g.w_v) + L));
}

// The source's experiment at (n, d) = (100, 10), with the book's settings.
experiments::ExperimentConfig source_config(Normalisation h) {
  experiments::ExperimentConfig c;
  c.n = 100;
  c.d = 10;
  c.h = h;
  c.runs = 10;
  c.iterations = 1000;
  c.adam = attn::experiment_adam;
  c.seed = 2024;
  return c;
}

}  // namespace

TEST_SUITE("ch03") {
  TEST_CASE("the identity prediction without the n x n matrix equals S Y w_v formed") {
    for (const auto seed : seeds)
      for (const auto s : shapes) {
        const Case c = random_case(s, seed);
        const VectorXd fast =
            attn::predict_training(c.p, c.X, c.Y, Normalisation::identity);
        const MatrixXd S = attn::attention_matrix(c.p, c.X, Normalisation::identity);
        const VectorXd explicit_ = c.p.w_v * (S * c.Y);
        // Both are the same sum of products in another order; each chain has inner
        // dimensions adding up to at most 2n + 6d, so the difference is below
        // (2n + 6d) eps |w_v| |X||W_Q||W_K|^T|X|^T |Y| (first order).
        const VectorXd bound = (2.0 * static_cast<double>(s.n + 3 * s.d)) * eps *
                               c.p.w_v * (abs_scores(c) * c.Y.cwiseAbs());
        CHECK(((fast - explicit_).cwiseAbs() - bound).maxCoeff() <= 0.0);
      }
  }

  TEST_CASE("the fast softmax prediction equals softmax_rows(S) Y w_v") {
    // The training path uses its own vectorised exp (within 2.3e-16 of std::exp) and
    // forms S in another order than attention_matrix(). A change dS of the logits moves
    // each weight by a factor within exp(+-2 max|dS|), so the prediction moves by at most
    // |w_v| max|Y| (2 max|dS| + 8 eps) with max|dS| <= 4d eps max(|X||W_Q||W_K|^T|X|^T).
    for (const auto seed : seeds)
      for (const auto s : shapes)
        for (const double w_scale : {0.5, 5.0}) {  // logits of order 1 and of order 1e3
          const Case c = random_case(s, seed, w_scale);
          const VectorXd fast =
              attn::predict_training(c.p, c.X, c.Y, Normalisation::softmax);
          const VectorXd exact =
              c.p.w_v * (attn::attention_matrix(c.p, c.X, Normalisation::softmax) * c.Y);
          const double dS =
              4.0 * static_cast<double>(s.d) * eps * abs_scores(c).maxCoeff();
          const double bound = c.p.w_v * c.Y.cwiseAbs().maxCoeff() * (2 * dS + 8 * eps);
          CHECK((fast - exact).cwiseAbs().maxCoeff() <= bound);
        }
  }

  TEST_CASE("the training path's softmax weights match std::exp to 4 ulps") {
    // X = [1; 0], W_Q = [q], W_K = [1], Y = [0; 1]: row 0 of S is [q, 0] exactly, so after
    // the max subtraction the exponent is exactly -q and yhat_0 = e/(1 + e), e = exp(-q).
    // The exponents q = (k + 1/2) ln2 put the reduced argument at +-ln2/2, where the
    // polynomial's error is largest. Allowed: 2.3e-16 for the exp, eps each for the add
    // and the division, relative; and, below -708 where the exp is clamped, an absolute
    // 4e-308 (weights of ~1e-308 instead of 0).
    const MatrixXd X{{1.0}, {0.0}};
    const VectorXd Y{{0.0}, {1.0}};
    std::vector<double> qs;
    for (int k = 0; k < 1080; k += 7) qs.push_back((k + 0.5) * std::log(2.0));
    for (const double q : {1e-3, 0.1, 1.0, 10.0, 700.0, 708.0, 709.0, 745.0, 1e4})
      qs.push_back(q);
    for (const double q : qs) {
      const AttentionRegressor p{MatrixXd::Constant(1, 1, q), MatrixXd::Ones(1, 1), 1.0};
      const double e = std::exp(-q);
      const double expected = e / (1 + e);
      const double got = attn::predict_training(p, X, Y, Normalisation::softmax)(0);
      CHECK(std::abs(got - expected) <= 4 * eps * expected + 4e-308);
    }
  }

  TEST_CASE("the identity system predicts X beta_eq with beta_eq = w_v W_Q W_K^T X^T Y") {
    for (const auto seed : seeds)
      for (const auto s : shapes) {
        const Case c = random_case(s, seed);
        const VectorXd beta_eq = attn::equivalent_beta(c.p, c.X, c.Y);
        const VectorXd yhat =
            attn::predict_training(c.p, c.X, c.Y, Normalisation::identity);
        // The same products in the same order except the last one (X times beta_eq),
        // so the difference is the rounding of a d-term dot product: d eps |X||beta_eq|,
        // with a factor 4 for the rounding inside beta_eq itself.
        const VectorXd bound = 4.0 * static_cast<double>(s.d) * eps *
                               (c.X.cwiseAbs() * beta_eq.cwiseAbs() +
                                c.p.w_v * abs_scores(c) * c.Y.cwiseAbs());
        CHECK(((yhat - c.X * beta_eq).cwiseAbs() - bound).maxCoeff() <= 0.0);
      }
  }

  TEST_CASE("softmax attention rows are non-negative and sum to 1") {
    for (const auto seed : seeds)
      for (const auto s : shapes)
        for (const double w_scale : {0.5, 20.0}) {  // up to logits of ~1e4
          const Case c = random_case(s, seed, w_scale);
          const MatrixXd A = attn::attention_matrix(c.p, c.X, Normalisation::softmax);
          CHECK(A.allFinite());
          CHECK(A.minCoeff() >= 0.0);
          // n terms in [0, 1], each rounded once, and one division: (n + 1) eps.
          CHECK((A.rowwise().sum().array() - 1.0).abs().maxCoeff() <=
                static_cast<double>(s.n + 1) * eps);
        }
  }

  TEST_CASE("softmax predictions lie between w_v min Y and w_v max Y") {
    // yhat_i / w_v is a weighted mean of Y: the training path must keep that even for
    // logits of ~1e4, where an exp without the max subtraction overflows to inf/inf.
    for (const auto seed : seeds)
      for (const auto s : shapes)
        for (const double w_scale : {0.5, 20.0}) {
          const Case c = random_case(s, seed, w_scale);
          const VectorXd z =
              attn::predict_training(c.p, c.X, c.Y, Normalisation::softmax) / c.p.w_v;
          const double slack =
              4.0 * static_cast<double>(s.n) * eps * c.Y.cwiseAbs().maxCoeff();
          CHECK(z.allFinite());
          CHECK(z.minCoeff() >= c.Y.minCoeff() - slack);
          CHECK(z.maxCoeff() <= c.Y.maxCoeff() + slack);
        }
  }

  TEST_CASE("softmax outputs are weighted means of the values, not values themselves") {
    // The least-squares paper (sec. 2.2) puts each output "in the closure" of the values;
    // the closure of finitely many points is those points. The outputs lie in their convex
    // hull (for scalar values, the interval between min Y and max Y: the previous test), and
    // with moderate scores almost none of them is one of the values. Here every shape with
    // n >= 2 has an output at least 1e-6 max|Y| away from every value.
    for (const auto seed : seeds)
      for (const auto s : shapes) {
        if (s.n < 2) continue;
        const Case c = random_case(s, seed, 0.5);
        const VectorXd z =
            attn::predict_training(c.p, c.X, c.Y, Normalisation::softmax) / c.p.w_v;
        double farthest = 0;  // over the outputs, the distance to the nearest value
        for (Index i = 0; i < z.size(); ++i)
          farthest = std::max(farthest, (c.Y.array() - z(i)).abs().minCoeff());
        CAPTURE(s.n);
        CHECK(farthest > 1e-6 * c.Y.cwiseAbs().maxCoeff());
      }
  }

  TEST_CASE("the identity system's gradient equals central finite differences") {
    for (const auto seed : seeds)
      for (const auto s : shapes)
        check_gradient(random_case(s, seed), Normalisation::identity);
  }

  TEST_CASE("the softmax system's gradient equals central finite differences") {
    for (const auto seed : seeds)
      for (const auto s : shapes)
        check_gradient(random_case(s, seed), Normalisation::softmax);
  }

  TEST_CASE("the gradient vanishes where beta_eq = beta_LS") {
    // W_Q = I, W_K = (X^T X)^{-1}, w_v = 1 (the source's choice) gives beta_eq = beta_LS,
    // where X^T (X beta - Y) = 0: every partial derivative is zero up to the rounding of
    // beta_LS (relative error ~ kappa(X^T X) eps ~ 1e-15 for these well-conditioned X),
    // i.e. ~1e-13 of its size at w_v = 1.01, where beta_eq is 1% off. The bound 1e-6 fails
    // for any gradient formula that does not vanish at the minimiser.
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const Index n = 50, d = 4;
      const MatrixXd X = attn::random_normal(n, d, rng);
      const VectorXd Y = attn::random_normal(n, 1, rng);
      AttentionRegressor p{MatrixXd::Identity(d, d), (X.transpose() * X).inverse(), 1.0};
      AttentionRegressor g;
      attn::loss_and_gradient(p, X, Y, Normalisation::identity, &g);
      const double at_min = std::max(
          {g.W_Q.cwiseAbs().maxCoeff(), g.W_K.cwiseAbs().maxCoeff(), std::abs(g.w_v)});
      p.w_v = 1.01;
      attn::loss_and_gradient(p, X, Y, Normalisation::identity, &g);
      const double near = std::max(
          {g.W_Q.cwiseAbs().maxCoeff(), g.W_K.cwiseAbs().maxCoeff(), std::abs(g.w_v)});
      CHECK(at_min <= 1e-6 * near);
    }
  }

  TEST_CASE("W_Q = W_K = 0 is a stationary point of the identity system that is not LS") {
    // The least-squares paper (sec. 4.2.3, sec. 6): least squares is a member of the identity
    // system, so training with the MSE loss "will certainly converge" to it. The loss is not
    // convex in (W_Q, W_K, w_v): at W_Q = W_K = 0 the gradient is exactly zero
    // (dL/dW_Q = C W_K, dL/dW_K = C^T W_Q, dL/dw_v = g^T M b with M = 0), while the loss
    // there is mean(Y^2), above the least-squares loss. Adam started there never moves.
    attn::Rng rng(31);
    const Index n = 50, d = 4;
    const MatrixXd X = attn::random_normal(n, d, rng);
    const VectorXd Y = X * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
    const AttentionRegressor zero{MatrixXd::Zero(d, d), MatrixXd::Zero(d, d), 1.0};
    AttentionRegressor g;
    const double loss = attn::loss_and_gradient(zero, X, Y, Normalisation::identity, &g);
    CHECK(g.W_Q.isZero(0.0));
    CHECK(g.W_K.isZero(0.0));
    CHECK(g.w_v == 0.0);
    const double ls_loss =
        (Y - X * attn::least_squares_qr(X, Y)).squaredNorm() / static_cast<double>(n);
    CHECK(loss == doctest::Approx(Y.squaredNorm() / static_cast<double>(n)));
    CHECK(loss > 1.5 * ls_loss);  // here mean(Y^2) is several times the noise variance
    const auto trained =
        attn::train(X, Y, Normalisation::identity, zero, 200, attn::experiment_adam);
    CHECK(trained.loss.back() == loss);  // not one step taken
    CHECK(trained.loss.back() > 1.5 * ls_loss);
  }

  TEST_CASE("Adam's first step moves every coordinate by the learning rate downhill") {
    // Bias correction makes m_1 = g and v_1 = g^2, so the first step is -eta g/(|g| + eps)
    // = -eta sign(g) whatever the gradient's scale. Without the correction it would be
    // -eta (1 - beta1) / sqrt(1 - beta2) sign(g) = -3.16 eta sign(g).
    const attn::Adam adam{0.01, 0.9, 0.999, 1e-8, 1.0};
    const VectorXd g{{3e-3, -2.0, 5e4, -7e-1}};
    VectorXd theta = VectorXd::Zero(4);
    attn::AdamState state;
    attn::adam_step(adam, state, theta, g);
    for (Index k = 0; k < 4; ++k) {
      CHECK(theta(k) ==
            doctest::Approx(-0.01 * g(k) / (std::abs(g(k)) + 1e-8)).epsilon(1e-14));
      CHECK(theta(k) ==
            doctest::Approx(g(k) > 0 ? -0.01 : 0.01).epsilon(1e-5));  // eps/|g|
    }
    CHECK(state.step == 1);
  }

  TEST_CASE("Adam converges to the minimiser of a quadratic") {
    // f(theta) = 1/2 (theta - c)^T H (theta - c), H SPD with condition number 100, from
    // theta = 0 with |c| ~ 15: full-batch Adam at a constant rate 0.1 reaches c to 1e-12
    // (rounding level is ~1e-15) within 3000 steps.
    attn::Rng rng(11);
    const Index k = 6;
    const MatrixXd G = attn::random_normal(k, k, rng);
    const Eigen::HouseholderQR<MatrixXd> qr(G);
    const MatrixXd Q = qr.householderQ();  // a random orthogonal matrix
    const VectorXd spectrum = VectorXd::LinSpaced(k, 0.0, 2.0).unaryExpr([](double e) {
      return std::pow(10.0, e);
    });
    const MatrixXd H = Q * spectrum.asDiagonal() * Q.transpose();
    const VectorXd c = attn::random_normal(k, 1, rng, 3.0);
    const attn::Adam adam{0.1, 0.9, 0.999, 1e-8, 1.0};
    VectorXd theta = VectorXd::Zero(k);
    attn::AdamState state;
    for (int t = 0; t < 3000; ++t) attn::adam_step(adam, state, theta, H * (theta - c));
    CHECK((theta - c).norm() <= 1e-12 * c.norm());
  }

  TEST_CASE("Adam's step t uses the rate eta gamma^(t-1)") {
    // With beta1 = beta2 = 0 and eps = 0, m_t = g_t and v_t = g_t^2: every step is
    // -eta_t sign(g_t). A gradient of constant sign then moves theta by exactly
    // -eta (1 + gamma + ... + gamma^(T-1)), up to T roundings.
    const attn::Adam adam{0.05, 0.0, 0.0, 0.0, 0.99};
    VectorXd theta = VectorXd::Zero(2);
    attn::AdamState state;
    const int T = 200;
    for (int t = 0; t < T; ++t)
      attn::adam_step(adam, state, theta, VectorXd{{2.5, -1e-3}});
    const double travel = 0.05 * (1 - std::pow(0.99, T)) / (1 - 0.99);
    CHECK(theta(0) == doctest::Approx(-travel).epsilon(1e-13));
    CHECK(theta(1) == doctest::Approx(travel).epsilon(1e-13));
    CHECK(state.step == T);
  }

  TEST_CASE("train records the loss before every update and after the last one") {
    const Case c = random_case({20, 3}, 5);
    const attn::Adam adam{1e-3, 0.9, 0.999, 1e-8, 1.0};
    for (const auto h : both) {
      const attn::TrainingResult r = attn::train(c.X, c.Y, h, c.p, 7, adam);
      REQUIRE(r.loss.size() == 8);
      CHECK(r.loss.front() == loss(c.p, c, h));  // bit for bit: same code
      CHECK(r.loss.back() == loss(r.parameters, c, h));
      CHECK(attn::train(c.X, c.Y, h, c.p, 0, adam).loss.size() == 1);
      // The same 7 steps by hand.
      VectorXd theta(2 * 9 + 1);
      AttentionRegressor q = c.p, g;
      attn::AdamState state;
      for (int t = 0; t < 7; ++t) {
        CHECK(loss(q, c, h) == r.loss[std::size_t(t)]);
        attn::loss_and_gradient(q, c.X, c.Y, h, &g);
        theta << q.W_Q.reshaped(), q.W_K.reshaped(), q.w_v;
        VectorXd grad(theta.size());
        grad << g.W_Q.reshaped(), g.W_K.reshaped(), g.w_v;
        attn::adam_step(adam, state, theta, grad);
        q.W_Q = theta.head(9).reshaped(3, 3);
        q.W_K = theta.segment(9, 9).reshaped(3, 3);
        q.w_v = theta(18);
      }
      // Same arithmetic in the same order: the same numbers, bit for bit.
      CHECK(q.W_Q == r.parameters.W_Q);
      CHECK(q.W_K == r.parameters.W_K);
      CHECK(q.w_v == r.parameters.w_v);
    }
  }

  TEST_CASE("the identity system's initial w_v keeps the first loss at most mean(Y^2)") {
    // w_v = u.Y/u.u is the least-squares scalar for u = SY, and w_v = 0 gives mean(Y^2),
    // so the first loss cannot exceed it. With w_v = 1 instead, the identity system starts
    // 100 times above it or more (the source's data; n terms S_ij Y_j with S_ij = O(1)).
    // The softmax system starts at w_v = 1: a weighted mean of Y, on Y's scale.
    for (int run = 0; run < 10; ++run) {
      attn::Rng data_rng(attn::run_seed(0, run, 0)), init_rng(attn::run_seed(0, run, 1));
      const attn::RegressionData data = attn::regression_data(100, 10, data_rng);
      AttentionRegressor p = attn::random_regressor(10, init_rng);
      const double mean_y2 = data.Y.squaredNorm() / 100;
      p.w_v = attn::initial_value_weight(p, data.X, data.Y, Normalisation::identity);
      CHECK(attn::loss_and_gradient(p, data.X, data.Y, Normalisation::identity) <=
            mean_y2 * (1 + 1e-12));
      CHECK(attn::initial_value_weight(p, data.X, data.Y, Normalisation::softmax) == 1.0);
      p.w_v = 1.0;
      CHECK(attn::loss_and_gradient(p, data.X, data.Y, Normalisation::identity) >=
            100 * mean_y2);
    }
  }

  TEST_CASE("training the identity system reaches beta_LS to 1e-4 in 10 of 10 runs") {
    // The source: all 10 runs at (n, d) = (100, 10) below 1e-4 (max 4.3e-5) in 1000
    // iterations. With the book's Adam settings they reach rounding level (~1e-15).
    const auto results = experiments::run_experiment(source_config(Normalisation::identity));
    REQUIRE(results.size() == 10);
    for (const auto& r : results) {
      REQUIRE(r.error_rate.has_value());
      CHECK(*r.error_rate < 1e-4);
    }
  }

  TEST_CASE("the trained identity system's loss equals the least-squares loss") {
    // The identity system is linear (yhat = X beta_eq), so its loss is the least-squares
    // loss plus (1/n)|X (beta_eq - beta_LS)|^2 >= 0: never below, and at error rate e at
    // most lambda_max(X^T X / n) e^2 |beta_LS|^2 above. Both losses are sums of n squares
    // rounded differently: 1e-13 relative covers that.
    auto config = source_config(Normalisation::identity);
    const auto results = experiments::run_experiment(config);
    for (int run = 0; run < config.runs; ++run) {
      const auto& r = results[std::size_t(run)];
      attn::Rng data_rng(attn::run_seed(config.seed, run, 0));
      const attn::RegressionData data = attn::regression_data(100, 10, data_rng);
      const VectorXd beta_ls = attn::least_squares_qr(data.X, data.Y);
      CHECK(r.ls_loss == doctest::Approx((data.X * beta_ls - data.Y).squaredNorm() / 100)
                             .epsilon(1e-13));
      const double lambda_max = (data.X.transpose() * data.X / 100.0)
                                    .selfadjointView<Eigen::Lower>()
                                    .eigenvalues()
                                    .maxCoeff();
      const double excess = r.loss.back() - r.ls_loss;
      CHECK(excess >= -1e-13 * r.ls_loss);
      CHECK(excess <=
            lambda_max * std::pow(r.error_rate.value(), 2) * beta_ls.squaredNorm() +
                1e-13 * r.ls_loss);
      // The runs reach e ~ 1e-15, so the two losses agree far below this 1e-9.
      CHECK(r.loss.back() == doctest::Approx(r.ls_loss).epsilon(1e-9));
    }
  }

  TEST_CASE(
      "trained softmax attention predicts held-out rows 2x worse than least squares") {
    // The source: at n = 100 the softmax system ends 1-2 orders of magnitude above least
    // squares. On held-out rows that holds (3x to 30x in the book's runs); on its own
    // training rows it need not (each row is among its own keys, and some runs fit them
    // better than least squares).
    auto config = source_config(Normalisation::softmax);
#ifdef __SANITIZE_ADDRESS__
    config.runs = 3;  // the same per-run claim on fewer runs, so the ASan build stays quick
#endif
    const auto results = experiments::run_experiment(config);
    for (const auto& r : results) {
      CHECK(!r.error_rate.has_value());
      CHECK(r.test_loss >= 2 * r.ls_test_loss);
    }
  }

  TEST_CASE("trained softmax attention ends within 10x of the least-squares training loss") {
    // The least-squares paper (sec. 5.2): at n = 100 softmax ends one to two orders of
    // magnitude above the unnormalised system (which ends at the least-squares loss). The
    // program's runs at (100, 10) (seed 1, its default: these are its 10 runs) end at most a
    // few times above it, some below: a factor 10 fails every one of them.
    auto config = source_config(Normalisation::softmax);
    config.seed = 1;
    for (const auto& r : experiments::run_experiment(config)) {
      CAPTURE(r.loss.back() / r.ls_loss);
      CHECK(r.loss.back() < 10 * r.ls_loss);
    }
  }

  TEST_CASE("held-out softmax / LS at d = 10 falls from n = 100 to 400 but stays above 1") {
    // The chapter's sweep (section 7; the program's section 5, 10 runs at n = 100, 200, 400,
    // 1000): the softmax system at d = 10 with the program's seed and settings. Run r depends
    // only on (seed, r), so these 3 runs are the first 3 of the program's 10; n = 1000 is
    // left to the program (a softmax step costs 4 n^2 d flops). What the runs show: more
    // samples help at first (the median at 200 and at 400 is below the one at 100), and no
    // run comes near least squares (every ratio above 1.1). Solution 03.5 follows the same
    // configuration to n = 4000 (`solution 03.5: held-out softmax / LS stays above 1 as n
    // grows`).
    std::vector<double> medians;
    for (const Index n : {100, 200, 400}) {
      experiments::ExperimentConfig c = source_config(Normalisation::softmax);
      c.n = n;
      c.seed = 1;  // the program's default
      c.runs = 3;
      c.threads = 2;
      std::vector<double> ratio;
      for (const auto& r : experiments::run_experiment(c))
        ratio.push_back(r.test_loss / r.ls_test_loss);
      CAPTURE(n);
      for (const double x : ratio) CHECK(x > 1.1);
      medians.push_back(experiments::median(ratio));
    }
    CAPTURE(medians[0]);
    CAPTURE(medians[1]);
    CAPTURE(medians[2]);
    CHECK(medians[1] < medians[0]);
    CHECK(medians[2] < medians[0]);
  }

  TEST_CASE("the same base seed gives bit-identical runs on 1 and 2 threads") {
    for (const auto h : both) {
      auto config = source_config(h);
      config.runs = 5;
      config.iterations = 60;
      const auto one = experiments::run_experiment(config);
      config.threads = 2;
      const auto two = experiments::run_experiment(config);
      for (std::size_t r = 0; r < one.size(); ++r) {
        CHECK(one[r].loss == two[r].loss);  // every entry, exactly
        CHECK(one[r].error_rate == two[r].error_rate);
        CHECK(one[r].test_loss == two[r].test_loss);
        CHECK(one[r].ls_loss == two[r].ls_loss);
      }
      // And the runs differ from each other: the seeds are really per run.
      CHECK(one[0].loss[0] != one[1].loss[0]);
    }
  }

  TEST_CASE("bad input throws std::invalid_argument naming the problem") {
    const Case c = random_case({6, 3}, 1);
    const attn::Adam good{1e-3, 0.9, 0.999, 1e-8, 1.0};
    using doctest::Contains;
    CHECK_THROWS_WITH_AS(attn::loss_and_gradient(c.p, MatrixXd(0, 3), VectorXd(0),
                                                 Normalisation::identity),
                         Contains("n >= 1"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(
        attn::loss_and_gradient(c.p, c.X, VectorXd::Zero(5), Normalisation::softmax),
        Contains("Y has 5 entries"), std::invalid_argument);
    AttentionRegressor wrong = c.p;
    wrong.W_K = MatrixXd::Zero(3, 2);
    CHECK_THROWS_WITH_AS(attn::predict_training(wrong, c.X, c.Y, Normalisation::softmax),
                         Contains("must be 3x3"), std::invalid_argument);
    MatrixXd X_nan = c.X;
    X_nan(2, 1) = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH_AS(attn::train(X_nan, c.Y, Normalisation::identity, c.p, 5, good),
                         Contains("NaN or infinite"), std::invalid_argument);
    for (const double lr : {0.0, -1e-3, std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity()}) {
      attn::Adam bad = good;
      bad.learning_rate = lr;
      CHECK_THROWS_WITH_AS(attn::train(c.X, c.Y, Normalisation::identity, c.p, 5, bad),
                           Contains("learning rate"), std::invalid_argument);
    }
    attn::Adam bad_decay = good;
    bad_decay.decay = 1.5;
    CHECK_THROWS_WITH_AS(
        attn::train(c.X, c.Y, Normalisation::identity, c.p, 5, bad_decay),
        Contains("decay"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::train(c.X, c.Y, Normalisation::identity, c.p, -1, good),
                         Contains("iterations"), std::invalid_argument);
    attn::Rng rng(1);
    CHECK_THROWS_WITH_AS(attn::regression_data(5, 8, rng), Contains("d <= n"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::random_regressor(0, rng), Contains("d must be at least 1"),
                         std::invalid_argument);
    auto config = source_config(Normalisation::identity);
    config.d = 200;
    CHECK_THROWS_WITH_AS(experiments::run_experiment(config), Contains("d <= n"),
                         std::invalid_argument);
    config = source_config(Normalisation::identity);
    config.runs = 0;
    CHECK_THROWS_WITH_AS(experiments::run_experiment(config), Contains("runs"),
                         std::invalid_argument);
    config = source_config(Normalisation::identity);
    config.threads = 0;
    CHECK_THROWS_WITH_AS(experiments::run_experiment(config), Contains("threads"),
                         std::invalid_argument);
    config = source_config(Normalisation::identity);
    config.adam.learning_rate = 0;
    CHECK_THROWS_WITH_AS(experiments::run_experiment(config), Contains("learning rate"),
                         std::invalid_argument);
    attn::AdamState state;
    VectorXd theta = VectorXd::Zero(3);
    CHECK_THROWS_WITH_AS(attn::adam_step(good, state, theta, VectorXd::Zero(4)),
                         Contains("4 entries"), std::invalid_argument);
  }
}
