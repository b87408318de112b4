#pragma once
// Chapter 05 — helpers shared by the program and the tests: a least-squares line through
// log-log data, Monte Carlo kernel estimates of the random feature maps, and the real
// roots of the truncated exponential series.

#include <cmath>
#include <stdexcept>
#include <vector>

#include "attn/feature_maps.hpp"
#include "attn/random.hpp"

namespace ch05 {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// A line y = intercept + slope x fitted by least squares, with the standard error of the
// slope (residual variance / sum of squared x deviations).
struct Fit {
  double slope = 0, intercept = 0, slope_se = 0;
};

inline Fit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = x.size();
  if (n < 3 || y.size() != n) throw std::invalid_argument("fit_line: need >= 3 points");
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i] / double(n), my += y[i] / double(n);
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i)
    sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  Fit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  double rss = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = y[i] - f.intercept - f.slope * x[i];
    rss += r * r;
  }
  f.slope_se = std::sqrt(rss / double(n - 2) / sxx);
  return f;
}

// Slope of log y against log x.
inline Fit fit_loglog(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size(); ++i)
    lx.push_back(std::log(x[i])), ly.push_back(std::log(y[i]));
  return fit_line(lx, ly);
}

enum class Estimator { positive, orthogonal, trigonometric };

inline const char* name(Estimator e) {
  switch (e) {
    case Estimator::positive:
      return "positive";
    case Estimator::orthogonal:
      return "orthogonal";
    default:
      return "trigonometric";
  }
}

// `trials` independent estimates of exp(q.k) from m random features: phi(q).phi(k), each
// with fresh directions, computed with the library's feature maps.
inline VectorXd kernel_estimates(Estimator e, const VectorXd& q, const VectorXd& k,
                                 Index m, int trials, attn::Rng& rng) {
  MatrixXd X(2, q.size());
  X.row(0) = q.transpose();
  X.row(1) = k.transpose();
  VectorXd est(trials);
  for (int r = 0; r < trials; ++r) {
    MatrixXd phi;
    if (e == Estimator::trigonometric)
      phi = attn::trig_random_features(X, attn::gaussian_directions(m, q.size(), rng));
    else if (e == Estimator::orthogonal)
      phi = attn::positive_random_features(X,
                                           attn::orthogonal_directions(m, q.size(), rng));
    else
      phi =
          attn::positive_random_features(X, attn::gaussian_directions(m, q.size(), rng));
    est(r) = phi.row(0).dot(phi.row(1));
  }
  return est;
}

// Relative root-mean-square error of the estimates around the true value.
inline double relative_rmse(const VectorXd& est, double truth) {
  return std::sqrt((est.array() - truth).square().mean()) / truth;
}

// Theory: relative MSE of m i.i.d. features, (e^{|q+k|^2} - 1) / m for the positive map
// and e^{|q-k|^2} (1 - e^{-|q-k|^2})^2 / (2m) for the trigonometric one.
inline double positive_relative_mse(const VectorXd& q, const VectorXd& k, double m) {
  return std::expm1((q + k).squaredNorm()) / m;
}
inline double trig_relative_mse(const VectorXd& q, const VectorXd& k, double m) {
  const double D = (q - k).squaredNorm();
  return std::exp(D) * std::pow(-std::expm1(-D), 2) / (2 * m);
}

// Two vectors in R^d with |q| = |k| = r and q.k = t (needs |t| <= r^2).
inline void pair_with_product(Index d, double r, double t, VectorXd& q, VectorXd& k) {
  if (d < 2 || std::abs(t) > r * r) throw std::invalid_argument("pair_with_product");
  const double c = t / (r * r);
  q = VectorXd::Zero(d);
  k = VectorXd::Zero(d);
  q(0) = r;
  k(0) = r * c;
  k(1) = r * std::sqrt(std::max(0.0, 1 - c * c));
}

// The real root of the truncated series T_P(t) for odd P (T_P increases through it),
// found by bisection on [-(P + 1), 0], where T_P changes sign.
inline double taylor_root(int order) {
  if (order % 2 == 0) throw std::invalid_argument("taylor_root: even orders have none");
  double lo = -(order + 1.0), hi = 0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (attn::taylor_exp(mid, order) < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// For even P: the minimum of T_P over the real line, at the root of T_{P-1} (T_P' =
// T_{P-1}), where T_P = T_{P-1} + t^P/P! = t^P/P! > 0.
inline double taylor_even_minimum_point(int order) {
  return order == 0 ? 0.0 : taylor_root(order - 1);
}

}  // namespace ch05
