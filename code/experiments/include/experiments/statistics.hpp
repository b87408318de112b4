#pragma once
// Summaries the chapter programs and tests share: the median and quantiles of a sample, and
// a least-squares line with the standard error of its slope. Not mathematics of attention
// (that is attn), so not in the API reference; Eigen and std only (it runs in the browser).

#include <Eigen/Dense>
#include <vector>

namespace experiments {

// The median: the middle value, or the mean of the two middle values of an even count.
// \throws std::invalid_argument for no values.
double median(std::vector<double> values);
double median(const Eigen::VectorXd& values);

// The q-quantile, 0 <= q <= 1, linearly interpolated between the order statistics (at
// q = 0.5 the median up to rounding: v_lo + (v_hi - v_lo) / 2 rather than (v_lo + v_hi) / 2).
// \throws std::invalid_argument for no values or q outside [0, 1].
double quantile(std::vector<double> values, double q);
double quantile(const Eigen::VectorXd& values, double q);

// The line y = intercept + slope x fitted by least squares, and the standard error of its
// slope.
struct LineFit {
  double slope = 0, intercept = 0, slope_se = 0;
};

// The slope's standard error from the scatter about the line, sqrt(RSS / (K - 2) / Sxx)
// (NaN for two points, which the line fits exactly).
// \throws std::invalid_argument unless there are as many y as x and at least 2 points.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// The slope's standard error from the points' own standard errors se_k (each y_k a mean
// with a known sampling error): the slope is b = sum_k c_k y_k, c_k = (x_k - mean x) / Sxx,
// so Var(b) = sum_k c_k^2 se_k^2.
// \throws std::invalid_argument unless x, y and y_se have the same size, at least 2.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y,
                 const std::vector<double>& y_se);

}  // namespace experiments
