// Chapter 02's live figures: what the page computes when a reader moves a control
// (code/live/live.hpp explains the mechanism; live.js draws the results). The data are the
// chapter program's: make_data(100, 0.5) from seed 1 (main.cpp's first draw).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/kernel_regression.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "experiment.hpp"
#include "live.hpp"

namespace {

using attn::Kernel;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// The program's data set: n = 100, noise 0.5, seed 1.
const ch02::Data& chapter_data() {
  static const ch02::Data data = [] {
    attn::Rng rng(1);
    return ch02::make_data(100, 0.5, rng);
  }();
  return data;
}

Kernel kernel_param(const live::Params& p) {
  std::vector<std::string> names;
  for (const Kernel k : attn::all_kernels()) names.push_back(attn::kernel_name(k));
  return attn::parse_kernel(p.choice("kernel", names));
}

VectorXd truth_at(const MatrixXd& T) {
  return T.col(0).unaryExpr([](double x) { return ch02::truth(x); });
}

// Figure 2.1 live: the fit of one kernel at bandwidth h on the 401-point grid of the program
// (undefined where a compact kernel sees no key within h), and the weights of one query.
live::Figure fit(const live::Params& p) {
  const Kernel kernel = kernel_param(p);
  const double h = p.real("h", 0.001, 10);
  const double x = p.real("x", 0, 1);
  const ch02::Data& data = chapter_data();
  const Index n = data.X.rows(), m = 401;
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0, 1.0);
  VectorXd fitted = VectorXd::Zero(m), defined = VectorXd::Zero(m);
  for (Index j = 0; j < m; ++j) {  // row by row, as main.cpp, so that gaps are per query
    try {
      fitted(j) = attn::nadaraya_watson(T.row(j), data.X, data.Y, kernel, h)(0, 0);
      defined(j) = 1;
    } catch (const std::domain_error&) {  // no key within h: 0/0, a gap in the curve
    }
  }
  const Index undefined = m - static_cast<Index>(defined.sum());
  live::Figure f;
  f.vector("data_x", data.X.col(0)).vector("data_y", data.Y.col(0));
  f.vector("grid", T.col(0)).vector("truth", truth_at(T));
  f.vector("fit", fitted).vector("defined", defined);
  f.number("undefined_points", static_cast<double>(undefined));
  if (undefined < m) {  // mean squared error against f over the defined points, as main.cpp
    const Eigen::ArrayXd error = (fitted - truth_at(T)).array() * defined.array();
    f.number("mse", error.square().sum() / static_cast<double>(m - undefined));
  }
  // Training error: every point sees itself (u = 0), so the fit at the data always exists.
  const MatrixXd at_data = attn::nadaraya_watson(data.X, data.X, data.Y, kernel, h);
  f.number("train_mse", (at_data - data.Y).squaredNorm() / static_cast<double>(n));
  try {
    f.number("loo_cv", attn::nw_loo_cv(data.X, data.Y, kernel, h));
  } catch (const std::domain_error&) {  // an isolated point: CV(h) undefined
  }
  // The query's weights over the 100 training points (in the data's order).
  const MatrixXd q = MatrixXd::Constant(1, 1, x);
  f.number("query_x", x).number("query_truth", ch02::truth(x));
  try {
    const VectorXd w = attn::nw_weights(q, data.X, kernel, h).row(0).transpose();
    f.vector("weights", w).number("max_weight", w.maxCoeff());
    f.number("estimate", attn::nadaraya_watson(q, data.X, data.Y, kernel, h)(0, 0));
    f.number("effective_keys", 1 / w.squaredNorm());
  } catch (const std::domain_error& e) {
    f.vector("weights", VectorXd::Zero(n)).labels("query_error", {e.what()});
  }
  return f;
}

// Figure 2.2 live: the weight map of 40 grid queries against the 100 keys ranked by x (as
// main.cpp draws it), for a kernel, or for softmax attention with and without the key bias
// -x_i^2/2h^2. The bridge: Gaussian kernel regression = attention with that bias.
live::Figure maps(const live::Params& p) {
  const std::string map =
      p.choice("map", {"gaussian", "box", "triangle", "epanechnikov", "bridge", "plain"});
  const double h = p.real("h", 0.001, 10);
  const ch02::Data& data = chapter_data();
  MatrixXd X = data.X;  // the keys, sorted
  std::sort(X.data(), X.data() + X.size());
  const Index m = 40, n = X.rows();
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0125, 0.9875);  // centres of 40 cells

  // Kernel regression, query by query (an empty row has no key within h).
  const auto nw_map = [&](Kernel k, VectorXd& empty) {
    MatrixXd W = MatrixXd::Zero(m, n);
    empty = VectorXd::Zero(m);
    for (Index j = 0; j < m; ++j) {
      try {
        W.row(j) = attn::nw_weights(T.row(j), X, k, h);
      } catch (const std::domain_error&) {
        empty(j) = 1;
      }
    }
    return W;
  };
  // The library's attention softmax(Q' K^T / sqrt(1) + M) with Q' = T / h^2, as main.cpp's
  // bridge check: M = the key bias -x_i^2 / 2h^2 in every row, or no M at all.
  const double s = 1 / (h * h);
  const Eigen::RowVectorXd bias = -X.rowwise().squaredNorm().transpose() / (2 * h * h);
  const MatrixXd A_bias = attn::attention_weights(s * T, X, MatrixXd::Ones(m, 1) * bias);
  const MatrixXd A_plain = attn::attention_weights(s * T, X, MatrixXd());
  VectorXd empty;
  const MatrixXd W_gauss = nw_map(Kernel::gaussian, empty);

  MatrixXd W;
  if (map == "bridge") {
    W = A_bias, empty = VectorXd::Zero(m);
  } else if (map == "plain") {
    W = A_plain, empty = VectorXd::Zero(m);
  } else {
    W = nw_map(attn::parse_kernel(map), empty);
  }
  // Effective number of keys 1 / sum_i w_i^2, averaged over the queries with a key (main.cpp).
  const Eigen::ArrayXd keys = W.rowwise().squaredNorm().cwiseInverse();
  const Index empty_rows = static_cast<Index>(empty.sum());
  const double keys_sum = (empty.array() > 0).select(0, keys).sum();

  live::Figure f;
  f.matrix("weights", W).vector("empty", empty).number("max_weight", W.maxCoeff());
  f.number("empty_rows", static_cast<double>(empty_rows));
  f.number("effective_keys",
           keys_sum / static_cast<double>(std::max<Index>(1, m - empty_rows)));
  f.number("bridge_difference", (A_bias - W_gauss).lpNorm<Eigen::Infinity>());
  f.number("plain_difference", (A_plain - W_gauss).lpNorm<Eigen::Infinity>());
  // The fits on main.cpp's 201-point grid (keys in the data's order, as there): Gaussian
  // kernel regression against plain softmax(x x_i / h^2), mean squared error against f.
  const MatrixXd G = VectorXd::LinSpaced(201, 0.0, 1.0);
  const MatrixXd nw = attn::nadaraya_watson(G, data.X, data.Y, Kernel::gaussian, h);
  const MatrixXd plain = attn::softmax_rows(G * data.X.transpose() / (h * h)) * data.Y;
  f.number("mse_nw", (nw.col(0) - truth_at(G)).squaredNorm() / 201.0);
  f.number("mse_plain", (plain.col(0) - truth_at(G)).squaredNorm() / 201.0);
  return f;
}

const bool added = live::add("ch02_fit", fit) && live::add("ch02_maps", maps);

}  // namespace
