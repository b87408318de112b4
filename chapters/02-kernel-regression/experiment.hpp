#pragma once
// The chapter's regression problem and its consistency experiment, shared by the program
// (main.cpp) and the tests, so that the figure and the test measure the same thing.

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "attn/kernel_regression.hpp"
#include "attn/random.hpp"

namespace ch02 {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// [problem]
// The regression function the data are drawn from: y = f(x) + noise, x uniform on [0, 1].
inline double truth(double x) {
  return std::sin(2 * std::numbers::pi * x);
}

struct Data {
  MatrixXd X;  // n x 1, the keys x_i
  MatrixXd Y;  // n x 1, the values y_i = f(x_i) + noise * N(0, 1)
};

inline Data make_data(Index n, double noise, attn::Rng& rng) {
  Data data{attn::random_uniform(n, 1, rng, 0.0, 1.0), MatrixXd(n, 1)};
  const MatrixXd eps = attn::random_normal(n, 1, rng);
  for (Index i = 0; i < n; ++i) data.Y(i, 0) = truth(data.X(i, 0)) + noise * eps(i, 0);
  return data;
}
// [problem]

// The consistency experiment measures the error on the interior [0.25, 0.75], away from
// the ends of [0, 1], where Nadaraya-Watson has an extra O(h) bias (only data on one side).
inline MatrixXd interior_grid(Index m) {
  return VectorXd::LinSpaced(m, 0.25, 0.75);
}

// Mean squared error of the estimate against f on the interior grid.
inline double interior_mse(const Data& data, attn::Kernel kernel, double h, Index m) {
  const MatrixXd T = interior_grid(m);
  const MatrixXd fit = attn::nadaraya_watson(T, data.X, data.Y, kernel, h);
  double sum = 0;
  for (Index j = 0; j < m; ++j) sum += std::pow(fit(j, 0) - truth(T(j, 0)), 2);
  return sum / static_cast<double>(m);
}

// [rate]
// Bandwidth of the consistency experiment: h = c n^{-1/5}, which balances squared bias
// (~ h^4) against variance (~ 1 / (n h)); both then fall like n^{-4/5}. Compact kernels
// get a wider h, so that every kernel averages with the same spread (standard deviation
// c n^{-1/5}): the box kernel's spread is h / sqrt(3), the triangle's h / sqrt(6), and
// Epanechnikov's h / sqrt(5).
constexpr double bandwidth_constant = 0.15;
inline double rate_bandwidth(Index n, attn::Kernel kernel = attn::Kernel::gaussian) {
  const double scale[] = {1.0, std::sqrt(3.0), std::sqrt(6.0), std::sqrt(5.0)};
  return scale[static_cast<int>(kernel)] * bandwidth_constant *
         std::pow(static_cast<double>(n), -0.2);
}
// [rate]

// Entrywise natural logarithm. (std::log, not Eigen's vectorised log, which trips GCC 12's
// -Wuninitialized inside the AVX-512 intrinsics under -march=native.)
inline VectorXd log_of(const VectorXd& v) {
  return v.unaryExpr([](double x) { return std::log(x); });
}

// A least-squares line y = a + b x; returns the slope b.
inline double slope(const VectorXd& x, const VectorXd& y) {
  const VectorXd xc = x.array() - x.mean();
  return xc.dot(y) / xc.squaredNorm();
}

// Replicates at size n: more at small n, where one run is cheap and its error noisy.
inline Index replicates_at(Index n, Index n0, Index replicates) {
  const double r = static_cast<double>(replicates) *
                   std::sqrt(static_cast<double>(n0) / static_cast<double>(n));
  return std::max<Index>(4, static_cast<Index>(std::lround(r)));
}

struct RateFit {
  VectorXd n;             // the sizes
  VectorXd mean_error;    // mean interior MSE over the replicates at each n
  VectorXd log_error_se;  // standard error of log(mean_error): sd / (mean sqrt(R))
  VectorXd replicates;    // replicates at each n
  double slope = 0;       // least-squares slope of log(mean_error) against log(n)
  double slope_se = 0;    // its standard error (from the replicates' scatter)
  double intercept = 0;   // log(mean_error) = intercept + slope log(n) on the fitted line
};

// [consistency]
// For each n: `replicates_at` independent data sets, h = rate_bandwidth(n), the interior
// MSE of each fit; then the slope of log(mean MSE) against log(n). The slope's standard
// error propagates each level's sampling error: Var(b) = sum_k c_k^2 Var(log e_k), where
// b = sum_k c_k log e_k is the least-squares slope.
template <typename Progress>
RateFit consistency(const std::vector<Index>& ns, Index replicates, double noise,
                    attn::Kernel kernel, Index grid, attn::Rng& rng, Progress progress) {
  const auto K = static_cast<Index>(ns.size());
  RateFit fit{VectorXd(K), VectorXd(K), VectorXd(K), VectorXd(K)};
  for (Index k = 0; k < K; ++k) {
    const Index n = ns[std::size_t(k)];
    const Index R = replicates_at(n, ns.front(), replicates);
    progress(k, K);
    VectorXd e(R);
    for (Index r = 0; r < R; ++r)
      e(r) =
          interior_mse(make_data(n, noise, rng), kernel, rate_bandwidth(n, kernel), grid);
    const double mean = e.mean();
    const double sd = std::sqrt((e.array() - mean).square().sum() / double(R - 1));
    fit.n(k) = static_cast<double>(n);
    fit.mean_error(k) = mean;
    fit.log_error_se(k) = sd / (mean * std::sqrt(static_cast<double>(R)));
    fit.replicates(k) = static_cast<double>(R);
  }
  const VectorXd x = log_of(fit.n), y = log_of(fit.mean_error);
  const VectorXd c = (x.array() - x.mean()) / (x.array() - x.mean()).square().sum();
  fit.slope = c.dot(y);  // the least-squares slope, written as a weighted sum of the y_k
  fit.slope_se = std::sqrt((c.array() * fit.log_error_se.array()).square().sum());
  fit.intercept = y.mean() - fit.slope * x.mean();
  return fit;
}
// [consistency]

// The limit h -> 0 at one query q, in floating point. delta is the gap between the squared
// distances to the nearest and the second-nearest key; at s = delta / 2h^2 every other key's
// weight, relative to the nearest one's, is at most e^{-s}. On the grid s = k / per_unit:
//   exact_from: the smallest s from which on (for every larger s of the grid) the estimate
//               is the nearest key's label bit for bit;
//   zero_from:  the smallest s (by bisection) from which on the second-nearest key's weight
//               is exactly 0, i.e. e^{-s} has underflowed;
//   second_weight_at_exact: that weight at s = exact_from (not yet 0).
struct NearestLimit {
  double exact_from = 0;
  double zero_from = 0;
  double second_weight_at_exact = 0;
};

inline NearestLimit nearest_limit(const MatrixXd& q, const MatrixXd& X, const MatrixXd& Y,
                                  double per_unit = 100) {
  const VectorXd D = attn::squared_distances(q, X).row(0).transpose();
  Index a = 0, b = 0;
  D.minCoeff(&a);
  VectorXd rest = D;
  rest(a) = std::numeric_limits<double>::infinity();
  rest.minCoeff(&b);
  const double delta = D(b) - D(a);
  if (!(delta > 0))
    throw std::invalid_argument("nearest_limit: the two nearest keys tie");
  const auto h = [&](double s) { return std::sqrt(delta / (2 * s)); };
  const auto exact = [&](double s) {
    return attn::nadaraya_watson(q, X, Y, attn::Kernel::gaussian, h(s))(0, 0) == Y(a, 0);
  };
  // From a grid point where the estimate is exact (at the latest where every other weight
  // has underflowed, s > 746), down to the first one where it is not.
  auto k = static_cast<Index>(48 * per_unit);
  while (!exact(double(k) / per_unit)) k *= 2;
  while (k > 1 && exact(double(k - 1) / per_unit)) --k;
  NearestLimit limit;
  limit.exact_from = double(k) / per_unit;
  limit.second_weight_at_exact =
      attn::nw_weights(q, X, attn::Kernel::gaussian, h(limit.exact_from))(0, b);
  // The second-nearest weight e^{-s} / (1 + ...) falls with s: bisect for where it is 0.
  double lo = 1, hi = 2048;  // e^{-2048} is 0 in double precision
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    const double w = attn::nw_weights(q, X, attn::Kernel::gaussian, h(mid))(0, b);
    (w == 0.0 ? hi : lo) = mid;
  }
  limit.zero_from = hi;
  return limit;
}

}  // namespace ch02
