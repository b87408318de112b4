#pragma once
// Chapter 02's computations, which the program (main.cpp), its tests and the live figures
// (live.cpp) all call: the regression problem, fits on a grid and weight maps with their
// gaps, kernel regression as softmax attention, the consistency experiment and the limit
// h -> 0. main.cpp prints, records and draws them; live.cpp fills the page's figures.

#include <Eigen/Dense>
#include <functional>
#include <vector>

#include "attn/kernel_regression.hpp"
#include "attn/random.hpp"

namespace ch02 {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// The regression function the data are drawn from: y = f(x) + noise, x uniform on [0, 1].
double truth(double x);
VectorXd truth_on(const MatrixXd& T);  // f at every row of T (m x 1)

struct Data {
  MatrixXd X;  // n x 1, the keys x_i
  MatrixXd Y;  // n x 1, the values y_i = f(x_i) + noise * N(0, 1)
};

Data make_data(Index n, double noise, attn::Rng& rng);

// Mean squared error of a fit (m x 1) against f at the queries T (m x 1).
double mse_against_truth(const MatrixXd& T, const MatrixXd& fit);

// Nadaraya-Watson fitted at the queries T (m x 1) one by one, NaN where the kernel sees no
// key within h (a compact kernel's 0/0: a gap in the curve), with the number of gaps and the
// mean squared error against f over the other queries (NaN if every query is a gap).
struct GridFit {
  VectorXd fit;
  Index gaps = 0;
  double mse = 0;
};
GridFit fit_on_grid(const MatrixXd& T, const Data& data, attn::Kernel kernel, double h);

// The queries of the weight maps: the centres of 40 cells of [0, 1].
MatrixXd map_queries();
// The keys x_i sorted, so that a weight map shows a band around its diagonal.
MatrixXd sorted_keys(const Data& data);

// The weights of every query (row j) over the keys x_i: a matrix of attention weights; a
// row of NaN where the query has no key within h.
MatrixXd weight_map(const MatrixXd& T, const MatrixXd& X, attn::Kernel kernel, double h);
Index empty_rows(const MatrixXd& W);
// The effective number of keys a query averages over, 1 / sum_i w_i^2 (n for uniform
// weights, 1 for one key), averaged over the rows that have a key.
double effective_keys(const MatrixXd& W);

// The library's softmax attention weights at bandwidth h, with the Gaussian kernel's key
// bias -|k_j|^2 / 2h^2 (key_bias: then they are the kernel-regression weights) or without.
MatrixXd attention_at_bandwidth(const MatrixXd& Q, const MatrixXd& K, double h,
                                bool key_bias);
// Plain softmax(x x_i / h^2) attention over the data, fitted at the queries T.
MatrixXd plain_softmax_fit(const MatrixXd& T, const Data& data, double h);

// The consistency experiment measures the error on the interior [0.25, 0.75], away from
// the ends of [0, 1], where Nadaraya-Watson has an extra O(h) bias (only data on one side).
MatrixXd interior_grid(Index m);

// Mean squared error of the estimate against f on the interior grid.
double interior_mse(const Data& data, attn::Kernel kernel, double h, Index m);

// Bandwidth of the consistency experiment, h = c n^{-1/5} (ch02.cpp says why).
double rate_bandwidth(Index n, attn::Kernel kernel = attn::Kernel::gaussian);

// What the first-order theory says MSE * n^{4/5} tends to with that bandwidth: the
// interior's A c^4 + B / c for f = sin 2 pi x, uniform x (solution 02.2's A and B).
double rate_scaled_mse_limit(double noise, attn::Kernel kernel = attn::Kernel::gaussian);

// Entrywise natural logarithm.
VectorXd log_of(const VectorXd& v);

// Replicates at size n: more at small n, where one run is cheap and its error noisy.
Index replicates_at(Index n, Index n0, Index replicates);

struct RateFit {
  VectorXd n;             // the sizes
  VectorXd mean_error;    // mean interior MSE over the replicates at each n
  VectorXd log_error_se;  // standard error of log(mean_error): sd / (mean sqrt(R))
  VectorXd replicates;    // replicates at each n
  double slope = 0;       // least-squares slope of log(mean_error) against log(n)
  double slope_se = 0;    // its standard error (from the replicates' scatter)
  double intercept = 0;   // log(mean_error) = intercept + slope log(n) on the fitted line
};

// The error against n with h = rate_bandwidth(n), and the fitted rate (ch02.cpp). progress
// is called with (size k, sizes K) before each size.
RateFit consistency(const std::vector<Index>& ns, Index replicates, double noise,
                    attn::Kernel kernel, Index grid, attn::Rng& rng,
                    const std::function<void(Index, Index)>& progress);

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

// \throws std::invalid_argument if the two nearest keys tie.
NearestLimit nearest_limit(const MatrixXd& q, const MatrixXd& X, const MatrixXd& Y,
                           double per_unit = 100);

}  // namespace ch02
