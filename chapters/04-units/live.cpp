// Chapter 04's live figure: what the page computes when a reader moves a control
// (code/live/live.hpp explains the mechanism; live.js draws the results).
#include <cmath>
#include <string>
#include <utility>

#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "ch04.hpp"
#include "live.hpp"

namespace {

using ch04::Method;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Figures 4.1 and 4.2 live: the chapter's data (n = 100, d = 10, 50 held-out queries) with
// the currents written in the unit A/c; least squares, softmax attention with weights fixed
// in amperes, and whitened softmax attention, each against its own numbers in amperes.
live::Figure unit_change(const live::Params& p) {
  const double c = p.real("c", 1e-3, 1e3);
  const int query = p.integer("query", 1, 50);
  const int seed = p.integer("seed", 0, 1000000);
  attn::Rng rng(static_cast<attn::Rng::result_type>(seed));
  const ch04::UnitsProblem data = ch04::units_problem(100, 10, 50, rng);

  live::Figure f;
  const VectorXd ls = ch04::predict_in_units(data, c, Method::least_squares).y;
  const VectorXd ls_base = ch04::predict_in_units(data, 1.0, Method::least_squares).y;
  f.number("ls_change", ch04::relative_change(ls, ls_base));
  for (const auto& [m, key] : {std::pair{Method::softmax_attention, "softmax"},
                               std::pair{Method::whitened_attention, "whitened"}}) {
    const std::string k = key;
    const ch04::Prediction pr = ch04::predict_in_units(data, c, m);
    const VectorXd base = ch04::predict_in_units(data, 1.0, m).y;
    const MatrixXd A = ch04::softmax_weights_in_units(data, c, m);
    const VectorXd row = A.row(query - 1).transpose();
    f.number(k + "_change", ch04::relative_change(pr.y, base));
    f.number(k + "_weight_change",
             ch04::relative_change(A, ch04::softmax_weights_in_units(data, 1.0, m)));
    f.number(k + "_entropy", pr.entropy);
    f.number(k + "_query_entropy", attn::entropy(row));
    f.vector(k + "_weights", row);
  }
  f.number("uniform", 1.0 / double(data.X.rows()));
  f.number("log_n", std::log(double(data.X.rows())));
  return f;
}

const bool added = live::add("ch04_unit_change", unit_change);

}  // namespace
