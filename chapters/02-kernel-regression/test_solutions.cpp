// Chapter 02 — checks of the worked solutions (solutions.md, instructor's copy only), and
// the solution code of the implement exercises 02.1 (local linear regression) and 02.5 (a
// bandwidth per dimension, learned). Exercise 02.6's solution is the library's own
// nw_loo_predictions; its tests here check what the solution page says about it.
//
// Tolerances. Exact identities (the box-kernel leave-one-out formula, the closed form of
// local linear regression, the gradient per dimension against the library's one-bandwidth
// gradient) are checked to a small multiple of eps times the size of the numbers summed,
// as the chapter's own tests do. Gradients against central differences: step 1e-5 in
// log h, truncation ~1e-10 and rounding ~1e-11 relative, so 1e-7 relative. Every number
// the page prints is recorded with solution_value("02.M.key", x)
// (tests/support/solution_values.hpp) and shown from the build (<!--#sol:02.M.key-->);
// statistical ones (slopes, the measured best c, the learned bandwidths) come from fixed
// seeds, and the test checks the claim each supports, with a bound that a wrong answer would
// miss. Sizes are reduced where the page says so, to keep this file well under a second.

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/kernel_regression.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "ch02.hpp"
#include "experiments/statistics.hpp"
#include "solution_values.hpp"
#include "test_support.hpp"

using attn::Kernel;
using book_test::max_abs;
using book_test::solution_value;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr double inf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------
// 02.1 Local linear regression.

// [sol-02-1-local-linear]
// Local linear regression: at each query q, fit the line a + b^T (x - q) by least squares
// weighted with the kernel weights w_i(q), the Nadaraya-Watson attention row, and predict
// a. The weights come normalised from nw_weights (a common factor does not change a
// weighted least-squares fit), so Gaussian weights cannot underflow. The rows
// sqrt(w_i) [1, (x_i - q)^T] are solved by QR, not by the normal equations.
MatrixXd local_linear(const MatrixXd& Q, const MatrixXd& X, const MatrixXd& Y,
                      Kernel kernel, double h) {
  const MatrixXd W = attn::nw_weights(Q, X, kernel, h);  // throws if no key within h
  const Index n = X.rows(), d = X.cols();
  MatrixXd fit(Q.rows(), Y.cols());
  for (Index t = 0; t < Q.rows(); ++t) {
    const VectorXd s = W.row(t).transpose().cwiseSqrt();
    MatrixXd Z(n, d + 1);
    Z.col(0) = s;
    Z.rightCols(d) = s.asDiagonal() * (X.rowwise() - Q.row(t));
    const Eigen::ColPivHouseholderQR<MatrixXd> qr(Z);
    if (qr.rank() < d + 1)  // fewer than d + 1 keys in general position within h
      throw std::domain_error("local_linear: query " + std::to_string(t) +
                              " sees too few keys to fit a line");
    fit.row(t) = qr.solve(MatrixXd(s.asDiagonal() * Y)).row(0);  // the intercept a
  }
  return fit;
}
// [sol-02-1-local-linear]

// [sol-02-1-equivalent-kernel]
// In one dimension the fit has a closed form: local linear regression is attention with
// the Nadaraya-Watson row w reweighted to
//   l_i = w_i (m_2 - (x_i - q) m_1) / (m_2 - m_1^2),   m_k = sum_i w_i (x_i - q)^k.
// The l_i sum to 1 and have first moment sum_i l_i (x_i - q) = 0; they can be negative.
MatrixXd local_linear_weights_1d(const MatrixXd& Q, const MatrixXd& X, Kernel kernel,
                                 double h) {
  MatrixXd L = attn::nw_weights(Q, X, kernel, h);
  for (Index t = 0; t < Q.rows(); ++t) {
    const Eigen::RowVectorXd u = (X.col(0).array() - Q(t, 0)).matrix().transpose();
    const double m1 = L.row(t).dot(u), m2 = L.row(t).dot(u.cwiseProduct(u));
    L.row(t) = L.row(t).cwiseProduct(
        ((m2 - m1 * u.array()) / (m2 - m1 * m1)).matrix());
  }
  return L;
}
// [sol-02-1-equivalent-kernel]

// [sol-02-1-whole-interval]
// Mean squared error against f on a grid over all of [0, 1], ends included (the chapter's
// interior_mse with the interval [0.25, 0.75] replaced by [0, 1]).
template <typename Fit>
double whole_mse(const ch02::Data& data, Fit fit, double h, Index m) {
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0, 1.0);
  const MatrixXd P = fit(T, data.X, data.Y, Kernel::gaussian, h);
  double sum = 0;
  for (Index j = 0; j < m; ++j) sum += std::pow(P(j, 0) - ch02::truth(T(j, 0)), 2);
  return sum / static_cast<double>(m);
}

struct Slope {
  double slope = 0, se = 0;
};

// The slope of log(mean error) against log(n) and its standard error, as ch02::consistency
// computes them (b = sum_k c_k log e_k, Var b = sum_k c_k^2 Var log e_k).
Slope fit_slope(const VectorXd& n, const MatrixXd& errors_per_n_replicate_means,
                const VectorXd& log_se) {
  const VectorXd x = ch02::log_of(n), y = ch02::log_of(errors_per_n_replicate_means);
  const experiments::LineFit line = experiments::fit_line(
      {x.begin(), x.end()}, {y.begin(), y.end()}, {log_se.begin(), log_se.end()});
  return {line.slope, line.slope_se};
}

// The consistency experiment of section 6 (same sizes, replicates and h = 0.15 n^{-1/5})
// on the whole interval, for Nadaraya-Watson and local linear regression fitted to the
// same data sets. Returns the slopes of NW on the interior, NW on [0, 1], LL on [0, 1].
std::vector<Slope> whole_interval_rates(const std::vector<Index>& ns, Index replicates,
                                        double noise, Index grid, attn::Rng& rng) {
  const auto nw = [](const MatrixXd& T, const MatrixXd& X, const MatrixXd& Y, Kernel k,
                     double h) { return attn::nadaraya_watson(T, X, Y, k, h); };
  const auto K = static_cast<Index>(ns.size());
  VectorXd n(K);
  MatrixXd mean(K, 3), log_se(K, 3);
  for (Index k = 0; k < K; ++k) {
    n(k) = static_cast<double>(ns[std::size_t(k)]);
    const Index R = ch02::replicates_at(ns[std::size_t(k)], ns.front(), replicates);
    const double h = ch02::rate_bandwidth(ns[std::size_t(k)]);
    MatrixXd e(R, 3);
    for (Index r = 0; r < R; ++r) {
      const ch02::Data data = ch02::make_data(ns[std::size_t(k)], noise, rng);
      e(r, 0) = ch02::interior_mse(data, Kernel::gaussian, h, grid);
      e(r, 1) = whole_mse(data, nw, h, grid);
      e(r, 2) = whole_mse(data, local_linear, h, grid);
    }
    for (Index j = 0; j < 3; ++j) {
      const double m = e.col(j).mean();
      const double sd = std::sqrt((e.col(j).array() - m).square().sum() / double(R - 1));
      mean(k, j) = m;
      log_se(k, j) = sd / (m * std::sqrt(static_cast<double>(R)));
    }
  }
  std::vector<Slope> slopes;
  for (Index j = 0; j < 3; ++j) slopes.push_back(fit_slope(n, mean.col(j), log_se.col(j)));
  return slopes;
}
// [sol-02-1-whole-interval]

// ---------------------------------------------------------------------------------------
// 02.2 The optimal constant.

// [sol-02-2-optimal-constant]
// Section 6's A and B on the interior [0.25, 0.75] for f = sin 2 pi x, p = 1 (so p' = 0)
// and the Gaussian kernel (mu_2 = 1, R = 1 / (2 sqrt(pi))):
//   A = mean over the interior of (mu_2 f''/2)^2 = (2 pi^2)^2 mean sin^2(2 pi x) = 2 pi^4,
//   B = sigma^2 R / p = sigma^2 / (2 sqrt(pi)),
// and h* = c n^{-1/5} with c = (B / 4A)^{1/5}; MSE(h*) n^{4/5} = 5/4 (4A)^{1/5} B^{4/5}.
struct Constants {
  double A, B, c, scaled_mse;
};
Constants optimal_constant(double noise) {
  const double pi = std::numbers::pi;
  const double A = 2 * std::pow(pi, 4);
  const double B = noise * noise / (2 * std::sqrt(pi));
  return {A, B, std::pow(B / (4 * A), 0.2),
          1.25 * std::pow(4 * A, 0.2) * std::pow(B, 0.8)};
}
// [sol-02-2-optimal-constant]

// [sol-02-2-sweep]
// The sweep over c the exercise adds to the program: for each c of the grid, the mean
// interior MSE of h = c n^{-1/5} over `datasets` data sets, the same data sets for every c
// (common random numbers: the curve's shape, not the draw, decides where its minimum is).
VectorXd sweep_c(const VectorXd& cs, Index n, Index datasets, double noise, Index grid,
                 attn::Rng& rng) {
  VectorXd mse = VectorXd::Zero(cs.size());
  for (Index r = 0; r < datasets; ++r) {
    const ch02::Data data = ch02::make_data(n, noise, rng);
    for (Index k = 0; k < cs.size(); ++k)
      mse(k) += ch02::interior_mse(data, Kernel::gaussian,
                                   cs(k) * std::pow(static_cast<double>(n), -0.2), grid) /
                static_cast<double>(datasets);
  }
  return mse;
}

// The minimum of the measured curve: the parabola in log c through the grid's lowest
// point and its two neighbours (the grid is geometric, so they are equally spaced in log c).
double parabolic_minimum(const VectorXd& cs, const VectorXd& mse) {
  Index k = 0;
  mse.minCoeff(&k);
  if (k == 0 || k == cs.size() - 1)
    throw std::domain_error("parabolic_minimum: the minimum is at the end of the grid");
  const double a = mse(k - 1), b = mse(k), c = mse(k + 1);
  const double offset = 0.5 * (a - c) / (a - 2 * b + c);  // in grid steps
  return cs(k) * std::pow(cs(k + 1) / cs(k), offset);
}
// [sol-02-2-sweep]

// ---------------------------------------------------------------------------------------
// 02.3 Key norms.

// [sol-02-3-key-norms]
// The bridge example of section 4 with the keys' norms spread: key j has the direction of
// row j of `directions` and the norm r_j = 1.75 + spread * u_j, u_j in [-1, 1], so spread
// 1.25 gives norms over [0.5, 3]. Returns the largest difference between the weights of
// plain softmax(q.k / h^2) and of kernel regression, and the mean (over queries) total
// variation distance (1/2) sum_j |a_ij - w_ij| between the two rows.
struct Gap {
  double max_weight, mean_tv;
};
MatrixXd keys_with_norms(const MatrixXd& directions, const VectorXd& u, double spread) {
  const VectorXd r = (1.75 + spread * u.array()).matrix();
  return r.asDiagonal() * directions.rowwise().normalized();
}
Gap plain_vs_nw(const MatrixXd& Q, const MatrixXd& K, double h) {
  const MatrixXd plain = attn::softmax_rows(Q * K.transpose() / (h * h));
  const MatrixXd nw = attn::nw_weights(Q, K, Kernel::gaussian, h);
  const MatrixXd diff = (plain - nw).cwiseAbs();
  return {diff.maxCoeff(), 0.5 * diff.rowwise().sum().mean()};
}
// [sol-02-3-key-norms]

// ---------------------------------------------------------------------------------------
// 02.4 Box-kernel leave-one-out.

// [sol-02-4-box-loo]
// Box kernel: yhat(x_i) is the mean of the N_i labels in the window |x_j - x_i| <= h,
// point i included (N_i >= 1); without point i it is (N_i yhat(x_i) - y_i) / (N_i - 1).
// The window is read off the library's logits (0 inside, -inf outside), so that it is
// the library's window to the last bit.
MatrixXd box_loo_from_fit(const MatrixXd& X, const MatrixXd& Y, double h) {
  const MatrixXd fit = attn::nadaraya_watson(X, X, Y, Kernel::box, h);
  const VectorXd N =
      (attn::kernel_logits(X, X, Kernel::box, h).array() == 0.0).cast<double>().rowwise().sum();
  if ((N.array() < 2).any())
    throw std::domain_error("box_loo_from_fit: a point has no other point in its window");
  return (N.asDiagonal() * fit - Y).array().colwise() / (N.array() - 1);
}
// [sol-02-4-box-loo]

// ---------------------------------------------------------------------------------------
// 02.5 A bandwidth per dimension.

// [sol-02-5-gradient]
// Leave-one-out error of the Gaussian kernel with one bandwidth per coordinate,
// s_ij = -sum_k (x_ik - x_jk)^2 / 2h_k^2, and its gradient in theta_k = log h_k:
// ds_ij / dtheta_k = U^k_ij = (x_ik - x_jk)^2 / h_k^2, so, as for one bandwidth,
//   dCV/dtheta_k = (2/n) sum_i (yhat_i - y_i) sum_{j != i} a_ij (y_j - yhat_i) U^k_ij.
struct DiagLoo {
  double loss;
  VectorXd d_log_h;
};
DiagLoo diag_loo_gradient(const MatrixXd& X, const MatrixXd& Y, const VectorXd& h) {
  const Index n = X.rows(), d = X.cols();
  std::vector<MatrixXd> U;
  MatrixXd S = MatrixXd::Zero(n, n);
  for (Index k = 0; k < d; ++k) {
    U.push_back(attn::squared_distances(X.col(k), X.col(k)) / (h(k) * h(k)));
    S -= 0.5 * U.back();
  }
  S.diagonal().setConstant(-inf);             // leave one out: the point does not vote
  const MatrixXd A = attn::softmax_rows(S);  // a_ij, a_ii = 0
  const MatrixXd P = A * Y, R = P - Y;       // predictions and residuals
  VectorXd grad(d);
  for (Index k = 0; k < d; ++k) {
    const MatrixXd G = A.cwiseProduct(U[std::size_t(k)]);  // a_ij U^k_ij
    // d yhat_i / d theta_k = sum_j G_ij y_j - (sum_j G_ij) yhat_i
    const MatrixXd dP = G * Y - G.rowwise().sum().asDiagonal() * P;
    grad(k) = 2.0 / static_cast<double>(n) * R.cwiseProduct(dP).sum();
  }
  return {R.rowwise().squaredNorm().mean(), grad};
}
// [sol-02-5-gradient]

// [sol-02-5-train]
// Gradient descent on theta = log h (a vector now) with the library's backtracking rule
// (Armijo: halve the step until the loss falls by half of what the gradient promises;
// double it after each success). Stops when |grad| <= tolerance * loss.
struct DiagPath {
  VectorXd h;
  double loss;
  VectorXd grad;
  int steps;
};
DiagPath learn_diag_bandwidths(const MatrixXd& X, const MatrixXd& Y, const VectorXd& h0,
                               int max_steps = 500, double tolerance = 1e-6) {
  VectorXd theta = h0.array().log();
  DiagLoo g = diag_loo_gradient(X, Y, h0);
  double eta = 1.0 / g.loss;
  int t = 0;
  for (; t < max_steps && g.d_log_h.norm() > tolerance * g.loss; ++t) {
    for (;;) {
      const VectorXd candidate = theta - eta * g.d_log_h;
      const DiagLoo next = diag_loo_gradient(X, Y, candidate.array().exp());
      if (next.loss <= g.loss - 0.5 * eta * g.d_log_h.squaredNorm()) {
        theta = candidate;
        g = next;
        eta *= 2;
        break;
      }
      eta /= 2;
      if (eta * g.d_log_h.norm() < 1e-15) return {theta.array().exp(), g.loss, g.d_log_h, t};
    }
  }
  return {theta.array().exp(), g.loss, g.d_log_h, t};
}
// [sol-02-5-train]

// The data of 02.5: y = sin(2 pi x_1) + 0.5 eps, x uniform on [0, 1]^2.
ch02::Data data_2d(Index n, attn::Rng& rng) {
  ch02::Data one = ch02::make_data(n, 0.5, rng);
  MatrixXd X(n, 2);
  X << one.X, attn::random_uniform(n, 1, rng, 0.0, 1.0);
  return {X, one.Y};
}

}  // namespace

// =======================================================================================

TEST_CASE("solution 02.1: local linear regression reproduces lines and equals its closed form") {
  for (const auto seed : book_test::seeds) {
    attn::Rng rng(seed);
    const MatrixXd X = attn::random_uniform(40, 1, rng, 0.0, 1.0);
    const MatrixXd T = VectorXd::LinSpaced(21, 0.0, 1.0);
    // A line is reproduced exactly, even at the ends; NW is biased there.
    const MatrixXd line = (2.0 - 3.0 * X.array()).matrix();
    const MatrixXd truth = (2.0 - 3.0 * T.array()).matrix();
    for (const Kernel k : {Kernel::gaussian, Kernel::epanechnikov}) {
      const double h = k == Kernel::gaussian ? 0.1 : 0.3;  // 0.3: every grid point sees keys
      // A QR solve of a 40 x 2 system with entries <= 1 and labels <= 3: ~1e-14.
      CHECK(max_abs(local_linear(T, X, line, k, h) - truth) <= 1e-12);
      CHECK(max_abs(attn::nadaraya_watson(T, X, line, k, h) - truth) > 0.05);
    }
    // The 1-D closed form: weights summing to 1, first moment 0, some negative at the
    // ends, and the same fit as the QR solve (n terms of size <= 1: 1e-13).
    const MatrixXd Y = attn::random_normal(40, 1, rng);
    const MatrixXd L = local_linear_weights_1d(T, X, Kernel::gaussian, 0.1);
    CHECK((L.rowwise().sum().array() - 1.0).abs().maxCoeff() <= 1e-13);
    CHECK((L * X - T).cwiseAbs().maxCoeff() <= 1e-13);
    CHECK(L.row(0).minCoeff() < 0.0);
    CHECK(max_abs(L * Y - local_linear(T, X, Y, Kernel::gaussian, 0.1)) <= 1e-12);
  }
}

TEST_CASE("solution 02.1: on [0, 1] Nadaraya-Watson's rate is shallower than n^(-4/5) and local linear's is not") {
  // The consistency experiment of section 6 on the whole interval: n = 100 .. 3200,
  // sigma = 0.5 (the program's default), 200 data sets at n = 100 (fewer at larger n),
  // a grid of 50 points, h = 0.15 n^(-1/5).
  attn::Rng rng(11);
  std::vector<Index> ns;
  for (Index n = 100; n <= 3200; n *= 2) ns.push_back(n);
  const std::vector<Slope> s = whole_interval_rates(ns, 200, 0.5, 50, rng);
  const Slope interior = s[0], nw = s[1], ll = s[2];
  MESSAGE("interior NW ", interior.slope, " +- ", interior.se, "; whole NW ", nw.slope,
          " +- ", nw.se, "; whole LL ", ll.slope, " +- ", ll.se);
  solution_value("02.1.interior_nw_slope", interior.slope);
  solution_value("02.1.nw_slope", nw.slope);
  solution_value("02.1.nw_se", nw.se);
  solution_value("02.1.ll_slope", ll.slope);
  solution_value("02.1.ll_se", ll.se);
  // The claims: NW on [0, 1] is shallower than -4/5 by more than 4 standard errors (its
  // boundary bias), LL on [0, 1] is within 0.07 of -4/5, as NW's interior slope is, and
  // steeper than NW on [0, 1] by more than 4 combined standard errors.
  CHECK(nw.slope > -0.8 + 4 * nw.se);
  CHECK(std::abs(ll.slope + 0.8) <= 0.07);
  CHECK(std::abs(interior.slope + 0.8) <= 0.07);
  CHECK(interior.slope < -0.8);  // "a little steeper than -4/5", as in the chapter
  CHECK(ll.slope < nw.slope - 4 * std::hypot(ll.se, nw.se));
}

TEST_CASE("solution 02.2: A = 2 pi^4, B = sigma^2/(2 sqrt pi) and c* = (B/4A)^(1/5)") {
  const Constants k = optimal_constant(0.5);
  solution_value("02.2.A", k.A);
  solution_value("02.2.B", k.B);
  solution_value("02.2.c_star", k.c);
  solution_value("02.2.scaled_mse", k.scaled_mse);
  const Constants k1 = optimal_constant(1.0);
  solution_value("02.2.B_sigma1", k1.B);
  solution_value("02.2.c_star_sigma1", k1.c);
  solution_value("02.2.scaled_mse_sigma1", k1.scaled_mse);
  // c* grows like sigma^(2/5): B like sigma^2, A not at all (relative 1e-15: a few
  // roundings of pow).
  CHECK(k1.c / k.c == doctest::Approx(std::pow(2.0, 0.4)).epsilon(1e-15).scale(0));
  // The program's bandwidth constant (ch02.cpp's bandwidth_constant, 0.15) is this c* to
  // within a few per cent.
  CHECK(std::abs(0.15 / k.c - 1) <= 0.05);
  // A is the interior mean of (f''/2)^2: a 2001-point trapezoid rule, relative error ~1e-6
  // (the integrand's derivatives at the ends of [0.25, 0.75] are equal, so the rule's error
  // term h^2/12 (g'(b) - g'(a)) vanishes and the next one is far smaller).
  const VectorXd x = VectorXd::LinSpaced(2001, 0.25, 0.75);
  const double pi = std::numbers::pi;
  VectorXd g = x.unaryExpr([pi](double t) {
    return std::pow(-4 * pi * pi * std::sin(2 * pi * t) / 2, 2);
  });
  const double mean = (g.sum() - 0.5 * (g(0) + g(2000))) / 2000.0;
  CHECK(mean == doctest::Approx(k.A).epsilon(1e-6).scale(0));
}

TEST_CASE("solution 02.2: the measured error over c is smallest near c*") {
  // n = 1600, sigma = 0.5, 40 data sets shared by every c, interior grid of 50 points
  // (the program's), c from 0.1 to 0.25 in steps of 10%.
  attn::Rng rng(5);
  VectorXd cs(10);
  for (Index k = 0; k < 10; ++k) cs(k) = 0.1 * std::pow(1.1, double(k));
  const VectorXd mse = sweep_c(cs, 1600, 40, 0.5, 50, rng);
  const double c_min = parabolic_minimum(cs, mse);
  const double scaled = mse.minCoeff() * std::pow(1600.0, 0.8);
  MESSAGE("c_min ", c_min, " scaled min MSE ", scaled, " curve ", mse.transpose());
  solution_value("02.2.measured_c_min", c_min);
  solution_value("02.2.measured_scaled_mse", scaled);
  // The claim: within 10% of c*, and the curve rises on both sides of it (by more than
  // 10% at c*/1.5 and 1.5 c*).
  const Constants k = optimal_constant(0.5);
  CHECK(std::abs(c_min / k.c - 1) <= 0.1);
  CHECK(c_min < k.c);  // "a little below c*"
  CHECK(mse(0) > 1.1 * mse.minCoeff());
  CHECK(mse(9) > 1.1 * mse.minCoeff());
  // ... but the curve is flat at its bottom: one grid step (10% in c) either side of the
  // lowest grid point costs less than 2% (measured: 1.7% and 1.4%).
  Index lowest = 0;
  mse.minCoeff(&lowest);
  CHECK(mse(lowest - 1) <= 1.02 * mse(lowest));
  CHECK(mse(lowest + 1) <= 1.02 * mse(lowest));
}

TEST_CASE("solution 02.3: spreading the key norms moves plain softmax away from kernel regression, towards long keys") {
  // The bridge example: 32 queries, 64 keys, d = 4, h = 1, standard normal queries.
  attn::Rng rng(23);
  const double h = 1.0;
  const MatrixXd Q = attn::random_normal(32, 4, rng);
  const MatrixXd directions = attn::random_normal(64, 4, rng);
  const VectorXd u = attn::random_uniform(64, 1, rng, -1.0, 1.0);
  std::vector<Gap> gaps;
  for (const double spread : {0.0, 0.25, 0.5, 0.75, 1.0, 1.25}) {
    gaps.push_back(plain_vs_nw(Q, keys_with_norms(directions, u, spread), h));
    MESSAGE("spread ", spread, ": max ", gaps.back().max_weight, " tv ", gaps.back().mean_tv);
  }
  // Equal norms: the same weights to rounding (logits of size |q||k|/h^2 <~ 10).
  CHECK(gaps[0].max_weight <= 1e-14);
  // The gap grows with the spread.
  for (std::size_t s = 1; s < gaps.size(); ++s) CHECK(gaps[s].mean_tv > gaps[s - 1].mean_tv);
  solution_value("02.3.tv_spread_0_25", gaps[1].mean_tv);
  solution_value("02.3.max_spread_0_25", gaps[1].max_weight);
  solution_value("02.3.tv_full_spread", gaps[5].mean_tv);
  solution_value("02.3.max_full_spread", gaps[5].max_weight);
  // Which keys gain: log(a_ij / w_ij) = |k_j|^2 / 2h^2 - c_i exactly, so the ratio is
  // increasing in the norm: the longest key gains for every query, the shortest loses.
  const MatrixXd K = keys_with_norms(directions, u, 1.25);
  const MatrixXd plain = attn::softmax_rows(Q * K.transpose() / (h * h));
  const MatrixXd nw = attn::nw_weights(Q, K, Kernel::gaussian, h);
  const VectorXd half_sq = K.rowwise().squaredNorm() / (2 * h * h);
  for (Index i = 0; i < Q.rows(); ++i) {
    const VectorXd c = half_sq - (plain.row(i).array() / nw.row(i).array()).log().matrix().transpose();
    // Logits of size <~ 20 in both softmaxes: their logs agree to ~1e2 eps.
    CHECK(c.maxCoeff() - c.minCoeff() <= 1e-12);
  }
  // The break-even norm of query i: r_i^2 = 2h^2 log sum_l w_il e^{|k_l|^2/2h^2}; keys
  // longer than r_i gain weight, shorter ones lose. By Jensen r_i^2 >= sum_l w_il |k_l|^2.
  VectorXd r(Q.rows());
  for (Index i = 0; i < Q.rows(); ++i) {
    r(i) = std::sqrt(2 * h * h * std::log(nw.row(i).dot(half_sq.array().exp().matrix())));
    CHECK(r(i) * r(i) >= nw.row(i).dot(K.rowwise().squaredNorm()));
    for (Index j = 0; j < K.rows(); ++j)
      CHECK((plain(i, j) > nw(i, j)) == (K.row(j).norm() > r(i)));
  }
  MESSAGE("break-even norms: min ", r.minCoeff(), " mean ", r.mean(), " max ", r.maxCoeff());
  // The norms lie in [0.5, 3], and so do the break-even norms.
  CHECK(solution_value("02.3.break_even_min", r.minCoeff()) >= 0.5);
  solution_value("02.3.break_even_mean", r.mean());
  CHECK(solution_value("02.3.break_even_max", r.maxCoeff()) <= 3.0);
  Index longest = 0, shortest = 0;
  half_sq.maxCoeff(&longest);
  half_sq.minCoeff(&shortest);
  CHECK((plain.col(longest).array() > nw.col(longest).array()).all());
  CHECK((plain.col(shortest).array() < nw.col(shortest).array()).all());
  // The factor e^{|k|^2/2h^2} between the longest and the shortest possible key, of norms
  // 1.75 +- 1.25 (keys_with_norms at the full spread): e^{(3^2 - 0.5^2)/2}.
  const double longest_norm = 1.75 + 1.25, shortest_norm = 1.75 - 1.25;
  solution_value("02.3.reweight_factor",
                 std::exp((longest_norm * longest_norm - shortest_norm * shortest_norm) /
                          (2 * h * h)));
}

TEST_CASE("solution 02.4: box-kernel leave-one-out is (N_i yhat(x_i) - y_i) / (N_i - 1)") {
  for (const auto seed : book_test::seeds)
    for (const Index d : {1, 2}) {
      attn::Rng rng(seed);
      const MatrixXd X = attn::random_uniform(60, d, rng, 0.0, 1.0);
      const MatrixXd Y = attn::random_normal(60, 2, rng);
      const double h = 0.4;  // every point has others in its window at these sizes
      const MatrixXd loo = attn::nw_loo_predictions(X, Y, Kernel::box, h);
      // N_i yhat - y_i subtracts two sums of up to 60 labels of size <~ 4: the error is
      // ~60 eps * 4 * N_i / (N_i - 1), below 1e-12.
      CHECK(max_abs(box_loo_from_fit(X, Y, h) - loo) <= 1e-12);
    }
  // The worked example: x = 0, 0.1, 0.2, 0.9, 1.0, y = 1, 2, 4, 8, 16, h = 0.15. Point
  // 1's window holds all of the first three: N = 3, yhat = 7/3, and without it
  // (7 - 2) / 2 = 2.5 (one or two roundings).
  MatrixXd X(5, 1), Y(5, 1);
  X << 0.0, 0.1, 0.2, 0.9, 1.0;
  Y << 1.0, 2.0, 4.0, 8.0, 16.0;
  // Relative 4 eps: a sum of three labels and one division each.
  const MatrixXd fit = attn::nadaraya_watson(X, X, Y, Kernel::box, 0.15);
  CHECK(fit(1, 0) == doctest::Approx(7.0 / 3).epsilon(4 * book_test::eps).scale(0));
  const double loo = solution_value("02.4.loo_example", box_loo_from_fit(X, Y, 0.15)(1, 0));
  CHECK(loo == doctest::Approx(2.5).epsilon(4 * book_test::eps).scale(0));
  CHECK(attn::nw_loo_predictions(X, Y, Kernel::box, 0.15)(1, 0) ==
        doctest::Approx(loo).epsilon(4 * book_test::eps).scale(0));
  // The general form: y_i - yhat_{-i} = (y_i - yhat_i) / (1 - w_ii), w_ii = K(0)/sum_j K_ij.
  attn::Rng rng(4);
  const MatrixXd Z = attn::random_uniform(30, 1, rng, 0.0, 1.0);
  const MatrixXd V = attn::random_normal(30, 1, rng);
  for (const Kernel k : attn::all_kernels()) {
    const MatrixXd W = attn::nw_weights(Z, Z, k, 0.3);
    const VectorXd r = (V - W * V).array() / (1.0 - W.diagonal().array());
    CHECK(max_abs(V - attn::nw_loo_predictions(Z, V, k, 0.3) - r) <= 1e-12);
  }
}

TEST_CASE("solution 02.5: the gradient in (log h_1, log h_2) matches central differences") {
  for (const auto seed : book_test::seeds) {
    attn::Rng rng(seed);
    const ch02::Data data = data_2d(60, rng);
    for (const VectorXd& h : {VectorXd{{0.05, 0.3}}, VectorXd{{0.2, 0.2}}, VectorXd{{0.1, 3.0}}}) {
      const DiagLoo g = diag_loo_gradient(data.X, data.Y, h);
      const double t = 1e-5;
      for (Index k = 0; k < 2; ++k) {
        VectorXd up = h, down = h;
        up(k) *= std::exp(t);
        down(k) *= std::exp(-t);
        const double fd = (diag_loo_gradient(data.X, data.Y, up).loss -
                           diag_loo_gradient(data.X, data.Y, down).loss) / (2 * t);
        // Step 1e-5 in log h: truncation ~1e-10, rounding ~1e-11, relative to the loss.
        CHECK(std::abs(g.d_log_h(k) - fd) <= 1e-7 * (std::abs(fd) + g.loss));
      }
    }
    // Equal bandwidths: the loss is the library's, and moving both log h_k together is
    // moving log h, so the two partial derivatives add up to the library's derivative.
    const attn::LooGradient one = attn::gaussian_loo_gradient(data.X, data.Y, 0.15);
    const DiagLoo two = diag_loo_gradient(data.X, data.Y, VectorXd::Constant(2, 0.15));
    // The same sums in another order: relative 1e-13 for the loss (60 terms); the
    // derivative is a difference of such sums, relative to the loss 1e-10.
    CHECK(two.loss == doctest::Approx(one.loss).epsilon(1e-13).scale(0));
    CHECK(std::abs(two.d_log_h.sum() - one.d_log_h) <= 1e-10 * one.loss);
  }
}

TEST_CASE("solution 02.5: trained per dimension, h_2 grows without bound and h_1 is the one-dimensional bandwidth") {
  attn::Rng rng(7);
  const ch02::Data data = data_2d(100, rng);
  const DiagPath path = learn_diag_bandwidths(data.X, data.Y, VectorXd::Constant(2, 0.3));
  const auto one = attn::learn_bandwidth(data.X.col(0), data.Y, 0.3);
  MESSAGE("h ", path.h.transpose(), " loss ", path.loss, " steps ", path.steps, " g ",
          path.grad.transpose(), "; 1-D h ", one.back().h, " loss ", one.back().loss);
  // Stopped by the step limit (learn_diag_bandwidths' default): no minimum to reach.
  CHECK(solution_value("02.5.steps", double(path.steps)) == 500);
  solution_value("02.5.h1", path.h(0));
  solution_value("02.5.h2", path.h(1));
  solution_value("02.5.h_one_dimensional", one.back().h);
  // The claims: h_2 far beyond the data's extent (1) and still pushed up (d CV / d log h_2
  // < 0); h_1 within 1% of the bandwidth learned from x_1 alone; the loss within 1e-4 of
  // that of the 1-D problem (h_2 = infinity is the 1-D problem).
  CHECK(path.h(1) > 3.0);
  CHECK(path.grad(1) < 0.0);
  CHECK(std::abs(std::log(path.h(0) / one.back().h)) <= std::log(1.01));
  CHECK(std::abs(path.loss / one.back().loss - 1) <= 1e-4);
  // At the learned h_1, CV falls all the way as h_2 grows: its infimum is at h_2 = infinity.
  double previous = inf;
  for (const double h2 : {0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0, 1000.0}) {
    const double cv = diag_loo_gradient(data.X, data.Y, VectorXd{{path.h(0), h2}}).loss;
    CHECK(cv < previous);
    previous = cv;
  }
}

TEST_CASE("solution 02.6: an isolated point under the box kernel is a domain_error naming it, where a naive division gives NaN") {
  MatrixXd X(5, 1), Y(5, 1);
  X << 0.0, 0.1, 0.2, 0.3, 1.5;  // point 4 has no other point within 0.15
  Y << 1.0, 2.0, 4.0, 8.0, 16.0;
  CHECK_THROWS_WITH_AS(attn::nw_loo_predictions(X, Y, Kernel::box, 0.15),
                       doctest::Contains("point 4 (x = [1.5]) has no other point"),
                       std::domain_error);
  CHECK_THROWS_AS(attn::nw_loo_cv(X, Y, Kernel::box, 0.15), std::domain_error);
  // The naive version, kernel values with the diagonal zeroed and divided by their sum:
  // 0/0 = NaN at point 4, silently.
  MatrixXd Kmat(5, 5);
  for (Index i = 0; i < 5; ++i)
    for (Index j = 0; j < 5; ++j)
      Kmat(i, j) = i == j ? 0.0
                          : attn::kernel_profile(Kernel::box,
                                                 std::abs(X(i, 0) - X(j, 0)) / 0.15);
  const MatrixXd naive = (Kmat * Y).array() / Kmat.rowwise().sum().array();
  CHECK(std::isnan(naive(4, 0)));
  CHECK(naive.topRows(4).allFinite());
  // Masking without the check: softmax_rows refuses the fully masked row, but with a
  // message about a softmax row, not about the point, and as invalid_argument.
  MatrixXd L = attn::kernel_logits(X, X, Kernel::box, 0.15);
  L.diagonal().setConstant(-inf);
  CHECK_THROWS_AS(attn::softmax_rows(L), std::invalid_argument);
  // Without the mask, h -> 0 returns every point's own label and CV would be 0.
  const MatrixXd G = VectorXd::LinSpaced(10, 0.0, 0.9);
  const MatrixXd V = VectorXd::LinSpaced(10, 1.0, 10.0);
  CHECK(attn::nadaraya_watson(G, G, V, Kernel::gaussian, 1e-3) == V);
  CHECK(attn::nw_loo_cv(G, V, Kernel::gaussian, 1e-3) > 0.1);
}
