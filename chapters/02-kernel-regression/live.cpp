// Chapter 02's live figures: what the page computes when a reader moves a control
// (code/live/live.hpp explains the mechanism; live.js draws the results). They call the
// chapter's computations (ch02.hpp), as the program does, on its default data:
// make_data(100, 0.5) from seed 1 (the program's first draw).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/kernel_regression.hpp"
#include "attn/random.hpp"
#include "ch02.hpp"
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

// Figure 2.1 live: the fit of one kernel at bandwidth h on the 401-point grid of the program
// (undefined where a compact kernel sees no key within h), and the weights of one query.
live::Figure fit(const live::Params& p) {
  const Kernel kernel = kernel_param(p);
  const double h = p.real("h", 0.001, 10);
  const double x = p.real("x", 0, 1);
  const ch02::Data& data = chapter_data();
  const Index n = data.X.rows(), m = 401;
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0, 1.0);
  const ch02::GridFit grid = ch02::fit_on_grid(T, data, kernel, h);
  const Eigen::ArrayXd gap = grid.fit.array().isNaN().cast<double>();
  live::Figure f;
  f.vector("data_x", data.X.col(0)).vector("data_y", data.Y.col(0));
  f.vector("grid", T.col(0)).vector("truth", ch02::truth_on(T));
  f.vector("fit", (gap > 0).select(0, grid.fit.array()).matrix());
  f.vector("defined", (1 - gap).matrix());
  f.number("undefined_points", static_cast<double>(grid.gaps));
  if (grid.gaps < m) f.number("mse", grid.mse);
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
    f.number("effective_keys", ch02::effective_keys(w.transpose()));
  } catch (const std::domain_error& e) {
    f.vector("weights", VectorXd::Zero(n)).labels("query_error", {e.what()});
  }
  return f;
}

// Figure 2.2 live: the weight map of 40 grid queries against the 100 keys ranked by x, for a
// kernel, or for softmax attention with and without the key bias -x_i^2/2h^2. The bridge:
// Gaussian kernel regression = attention with that bias.
live::Figure maps(const live::Params& p) {
  const std::string map =
      p.choice("map", {"gaussian", "box", "triangle", "epanechnikov", "bridge", "plain"});
  const double h = p.real("h", 0.001, 10);
  const ch02::Data& data = chapter_data();
  const MatrixXd X = ch02::sorted_keys(data), T = ch02::map_queries();
  const MatrixXd A_bias = ch02::attention_at_bandwidth(T, X, h, true);
  const MatrixXd A_plain = ch02::attention_at_bandwidth(T, X, h, false);
  // A query without a key within h has a row of NaN in a weight map, 0 in the figure.
  const auto zero_gaps = [](const MatrixXd& M) -> MatrixXd {
    return M.array().isNaN().select(0, M);
  };
  const MatrixXd W_gauss = zero_gaps(ch02::weight_map(T, X, Kernel::gaussian, h));
  const MatrixXd W = map == "bridge" ? A_bias
                     : map == "plain"
                         ? A_plain
                         : ch02::weight_map(T, X, attn::parse_kernel(map), h);

  live::Figure f;
  f.matrix("weights", zero_gaps(W));
  f.vector("empty", W.col(0).array().isNaN().cast<double>().matrix());
  f.number("max_weight", zero_gaps(W).maxCoeff());
  f.number("empty_rows", static_cast<double>(ch02::empty_rows(W)));
  f.number("effective_keys", ch02::effective_keys(W));
  f.number("bridge_difference", (A_bias - W_gauss).lpNorm<Eigen::Infinity>());
  f.number("plain_difference", (A_plain - W_gauss).lpNorm<Eigen::Infinity>());
  // The fits on the program's 201-point grid (keys in the data's order, as there): Gaussian
  // kernel regression against plain softmax(x x_i / h^2), mean squared error against f.
  const MatrixXd G = VectorXd::LinSpaced(201, 0.0, 1.0);
  const MatrixXd nw = attn::nadaraya_watson(G, data.X, data.Y, Kernel::gaussian, h);
  f.number("mse_nw", ch02::mse_against_truth(G, nw));
  f.number("mse_plain", ch02::mse_against_truth(G, ch02::plain_softmax_fit(G, data, h)));
  return f;
}

const bool added = live::add("ch02_fit", fit) && live::add("ch02_maps", maps);

}  // namespace
