#include "experiments/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace experiments {

namespace {

std::vector<double> to_vector(const Eigen::VectorXd& v) {
  return {v.data(), v.data() + v.size()};
}

// The least-squares line through (x_k, y_k), with mean x and Sxx = sum_k (x_k - mean x)^2;
// slope_se is left 0.
struct Line {
  LineFit fit;
  double mean_x = 0, sxx = 0;
};

Line least_squares_line(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  Line line{{}, mx, sxx};
  line.fit.slope = sxy / sxx;
  line.fit.intercept = my - line.fit.slope * mx;
  return line;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("median: no values");
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double median(const Eigen::VectorXd& values) {
  return median(to_vector(values));
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("quantile: no values");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("quantile: q must be in [0, 1]");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double quantile(const Eigen::VectorXd& values, double q) {
  return quantile(to_vector(values), q);
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  if (n < 2 || y.size() != n) throw std::invalid_argument("fit_line: need >= 2 points");
  Line line = least_squares_line(x, y);
  double rss = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = y[i] - line.fit.intercept - line.fit.slope * x[i];
    rss += r * r;
  }
  line.fit.slope_se = n > 2 ? std::sqrt(rss / double(n - 2) / line.sxx)
                            : std::numeric_limits<double>::quiet_NaN();
  return line.fit;
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y,
                 const std::vector<double>& y_se) {
  const std::size_t n = x.size();
  if (n < 2 || y.size() != n || y_se.size() != n)
    throw std::invalid_argument("fit_line: need >= 2 points, each with a standard error");
  Line line = least_squares_line(x, y);
  double variance = 0;
  for (std::size_t i = 0; i < n; ++i)
    variance += std::pow((x[i] - line.mean_x) / line.sxx * y_se[i], 2);
  line.fit.slope_se = std::sqrt(variance);
  return line.fit;
}

}  // namespace experiments
