// Chapter 04 — Units: why least squares is unit-free and softmax attention is not.
//
// Computes what the chapter shows, in its order: least squares and attention written with
// a matrix type that carries units (section 3: the compiler checks them); the same data in
// amperes, milliamperes and kiloamperes, then swept over many decades of the unit, for
// least squares, unnormalised, softmax and whitened softmax attention (4); chapter 03's
// training experiment in different units (5); LayerNorm's epsilon (6). Writes output.txt
// (this summary), results.json, and the CSV + SVG of each figure into --out. Sections 4 to 6
// are computed by the chapter's module (ch04.hpp, which the live figure calls too); section
// 3's typed code stays here, where its types are the point.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/random.hpp"
#include "attn/units.hpp"
#include "experiments/regression_experiment.hpp"
#include "experiments/statistics.hpp"
#include "harness/cli.hpp"
#include "harness/output.hpp"
#include "ch04.hpp"

namespace {

using ch04::Method;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

struct Options {
  harness::CommonOptions common;
  long n = 100, d = 10;    // training rows and features
  long queries = 50;       // held-out queries of the sweep
  long decades = 4;        // the sweep runs over c = 10^-decades .. 10^decades
  long per_decade = 4;     // points per decade
  double scale = 1000;     // the second unit of the summary table (1000: mA)
  long runs = 10;          // training runs per unit
  long iterations = 1000;  // Adam steps per run
  double eps = 1e-5;       // LayerNorm's epsilon
};

using experiments::median;

// The unit of a quantity's type, as the summary prints it ("A^-1 V").
template <int A, int V>
std::string unit_of(const attn::Quantity<A, V>&) {
  if (A == 0 && V == 0) return "1 (dimensionless)";
  std::string s;
  if (A != 0) s += A == 1 ? "A" : fmt::format("A^{}", A);
  if (V != 0) {
    if (!s.empty()) s += ' ';
    s += V == 1 ? std::string("V") : fmt::format("V^{}", V);
  }
  return s;
}

// 3. Least squares and attention with units in the type.
void typed(const ch04::UnitsProblem& p, harness::Report& r) {
  // [typed-ls]
  const attn::Amperes X = attn::from_units<1, 0>(p.X);  // training currents
  const attn::Volts Y = attn::from_units<0, 1>(p.Y);    // training voltages
  const attn::Amperes Xq = attn::from_units<1, 0>(p.X_query);
  const auto XtX_inv = (X.transpose() * X).inverse();  // A^-2
  const auto beta = attn::least_squares(X, Y);         // (X^T X)^-1 X^T Y: V/A
  const attn::Volts y_ls = Xq * beta;                  // a prediction in volts
  const auto L = attn::whitening_map(X);               // 1/A
  const attn::Dimensionless LXt = L * X.transpose();   // whitened keys: no unit
  static_assert(std::is_same_v<decltype(XtX_inv), const attn::Quantity<-2, 0>>);
  static_assert(std::is_same_v<decltype(beta), const attn::Quantity<-1, 1>>);
  static_assert(std::is_same_v<decltype(L), const attn::Quantity<-1, 0>>);
  // [typed-ls]
  // [typed-attention]
  const auto W_Q = L.transpose(), W_K = L.transpose();   // projections carrying 1/A each
  const auto M = W_Q * W_K.transpose();                  // A^-2, the unit (X^T X)^-1 has
  const attn::Dimensionless S = Xq * M * X.transpose();  // scores: no unit
  const attn::Volts y_attn = attn::softmax_rows(S) * Y;  // softmax, then values in V
  // attn::softmax_rows(Xq * X.transpose()) does not compile: its scores carry A^2.
  // [typed-attention]

  const VectorXd untyped = p.X_query * attn::least_squares_qr(p.X, p.Y);
  const MatrixXd I = MatrixXd::Identity(p.X.cols(), p.X.cols());
  r.say("1. Units checked by the compiler (X in A, Y in V, {} x {}, {} queries)\n",
        p.X.rows(), p.X.cols(), p.X_query.rows());
  r.say("   (X^T X)^-1          : {}\n", unit_of(XtX_inv));
  r.say("   beta_LS             : {}\n", unit_of(beta));
  r.say("   prediction x^T beta : {}\n", unit_of(y_ls));
  r.say("   L                   : {}\n", unit_of(L));
  r.say("   L X^T               : {}  (max |L X^T X L^T - I| = {:.1e})\n", unit_of(LXt),
        (LXt.si_value() * LXt.si_value().transpose() - I).lpNorm<Eigen::Infinity>());
  r.say("   W_Q W_K^T = L^T L   : {}; scores {}; softmax(S) Y: {}\n", unit_of(M),
        unit_of(S), unit_of(y_attn));
  r.say("   typed least squares vs plain Eigen: relative difference {:.1e}\n",
        r.put("typed_vs_plain_ls_relative_difference",
              (y_ls.si_value().col(0) - untyped).norm() / untyped.norm()));
  r.say("   first query: least squares {:.4f} V, whitened softmax attention {:.4f} V\n\n",
        y_ls.si_value()(0, 0), y_attn.si_value()(0, 0));
}

// 4. The same data in A, in the unit of --scale, and in its inverse.
void three_units(const Options& o, const ch04::UnitsProblem& p, harness::Report& r) {
  const double cs[] = {1.0 / o.scale, 1.0, o.scale};
  r.say(
      "2. The same currents in three units (numbers multiplied by c; c = 1000 is mA)\n"
      "   relative change of the predictions against c = 1, and mean attention entropy "
      "(log n = {:.3f})\n",
      std::log(double(p.X.rows())));
  r.say("   {:<20}", "method");
  for (const double c : cs) r.say(" {:>11}", fmt::format("c = {:g}", c));
  r.say("   {:>10}\n", "entropy");
  for (const Method m : ch04::methods) {
    const VectorXd base = ch04::predict_in_units(p, 1.0, m).y;
    const std::string name = ch04::name(m);
    r.say("   {:<20}", name);
    std::string entropies;
    for (const double c : cs) {
      const ch04::Prediction pr = ch04::predict_in_units(p, c, m);
      const double change = ch04::relative_change(pr.y, base);
      r.say(" {:>11.2e}", change);
      if (c != 1.0) r.put(fmt::format("{}_change_at_c_{:g}", name, c), change);
      if (!std::isnan(pr.entropy))  // the softmax systems
        entropies += fmt::format(
            " {:.3f}", r.put(fmt::format("{}_entropy_at_c_{:g}", name, c), pr.entropy));
    }
    r.say("  {}\n", entropies.empty() ? "   (signed weights)" : entropies);
  }
  r.say("\n");
}

// 4, continued. The sweep over many decades of the unit: the three figures.
void sweep(const Options& o, const ch04::UnitsProblem& p,
           const std::filesystem::path& out, harness::Report& r) {
  const std::vector<double> grid = ch04::unit_grid(int(o.decades), int(o.per_decade));
  const Index K = Index(grid.size()), one = K / 2;  // grid[one] = 1
  using enum ch04::SweepColumn;
  const MatrixXd t = ch04::unit_sweep(p, grid, o.eps, [K](Index k, double c) {
    harness::progress(
        k < K ? fmt::format("unit sweep: c = {:.1e} ({}/{})", c, k + 1, K) : "");
  });
  // The figures draw a relative change at rounding level on the floor (harness::rounding_floor):
  // below it the digits change with the CPU. results.json keeps the values themselves.
  MatrixXd drawn = t;
  for (const int col : {change + 0, change + 1, change + 2, change + 3, int(layernorm)})
    drawn.col(col) = drawn.col(col).unaryExpr(&harness::at_least_rounding_floor);
  harness::write_csv(
      out / "04-unit-sweep.csv",
      {"c", "change_ls", "change_id", "change_softmax", "change_whitened", "mse_ls",
       "mse_id", "mse_softmax", "mse_whitened", "entropy_softmax", "entropy_whitened",
       "change_layernorm", "layernorm_formula"},
      drawn);
  r.say(
      "3. Sweep of the unit over c = 1e-{} .. 1e{} ({} points)\n"
      "   largest relative change: least squares {:.1e}, whitened softmax attention "
      "{:.1e}\n",
      o.decades, o.decades, r.put("sweep_points", grid.size()),
      r.put("sweep_ls_max_relative_change", t.col(change + 0).maxCoeff()),
      r.put("sweep_whitened_max_relative_change", t.col(change + 3).maxCoeff()));
  r.say(
      "   softmax attention entropy: {:.3f} at c = {:g} (uniform: {:.3f}), {:.2e} at c = "
      "{:g}\n",
      r.put("sweep_softmax_entropy_smallest_c", t(0, entropy)), grid.front(),
      std::log(double(p.X.rows())),
      r.put("sweep_softmax_entropy_largest_c", t(K - 1, entropy)), grid.back());
  r.say(
      "   held-out mean squared error, V^2: least squares {:.3f} for every c; softmax "
      "{:.2f} (c = {:g}), {:.2f} (c = 1), {:.2f} (c = {:g})\n",
      r.put("sweep_ls_mse", t(one, mse + 0)),
      r.put("sweep_softmax_mse_smallest_c", t(0, mse + 2)), grid.front(),
      r.put("sweep_softmax_mse_c1", t(one, mse + 2)),
      r.put("sweep_softmax_mse_largest_c", t(K - 1, mse + 2)), grid.back());

  // Slopes of log10(change, and error, of unnormalised attention) against log10(c) for
  // c >= 10, fitted by least squares (the second figure prints the first): its prediction
  // is c^2 y_LS, so the change c^2 - 1 gives 2 and the error (c^2 y_LS - y)^2 gives 4 at
  // large c. Two decades or more leave at least two such points.
  std::vector<double> lx, ly, le;
  for (Index k = 0; k < K; ++k)
    if (t(k, 0) >= 10.0) {
      lx.push_back(std::log10(t(k, 0)));
      ly.push_back(std::log10(t(k, change + 1)));
      le.push_back(std::log10(t(k, mse + 1)));
    }
  const double slope =
      r.put("sweep_id_change_slope", experiments::fit_line(lx, ly).slope);
  // In large units (c -> 0) its prediction tends to 0 and its error to the mean square of
  // the held-out outputs.
  r.say(
      "   unnormalised attention: {:.2f} (c = {:g}; mean square of the held-out outputs "
      "{:.2f}), {:.3g} (c = {:g}); slope of log error for c >= 10: {:.2f}\n\n",
      r.put("sweep_id_mse_smallest_c", t(0, mse + 1)), grid.front(),
      r.put("heldout_mean_square_output",
            p.Y_query.squaredNorm() / double(p.Y_query.size())),
      t(K - 1, mse + 1), grid.back(),
      r.put("sweep_id_mse_slope", experiments::fit_line(lx, le).slope));
  // Where the softmax system's entropy sits one decade either side of amperes.
  for (const double c : {0.1, 10.0})
    r.put(fmt::format("softmax_attention_entropy_at_c_{:g}", c),
          ch04::predict_in_units(p, c, Method::softmax_attention).entropy);
  // How closely LayerNorm's measured change follows the formula, over the sweep (c = 1,
  // where both are 0, left out): relative difference.
  double ln_worst = 0;
  for (Index k = 0; k < K; ++k)
    if (t(k, formula) > 0)
      ln_worst =
          std::max(ln_worst, std::abs(t(k, layernorm) - t(k, formula)) / t(k, formula));
  r.put("layernorm_formula_max_relative_difference", ln_worst);

  // One CSV, one script, three figures: the script draws the one named by `which`.
  for (const char* figure : {"04-entropy", "04-prediction-change", "04-prediction-error"})
    harness::render_figure(
        out, figure, "04-unit-sweep",
        // gnuplot runs in the output directory: the file name alone, whatever --out is.
        fmt::format("in='04-unit-sweep.csv'; which='{}'; logn={:.17g}; slope={:.17g}; "
                    "eps={:.17g}; rounding={:g}",
                    figure, std::log(double(o.n)), slope, o.eps, harness::rounding_floor));
}

// 5. Chapter 03's training experiment with the currents in A, in mA and in kA.
void training(const Options& o, harness::Report& r) {
  r.say(
      "4. Training softmax attention (chapter 03's trainer, (n, d) = ({}, {}), {} runs x "
      "{} iterations)\n   median final training loss / least-squares loss, and held-out "
      "ratio\n",
      o.n, o.d, o.runs, o.iterations);
  r.say("   {:<10} {:>8} {:>16} {:>16}\n", "system", "unit", "training / LS",
        "held-out / LS");
  const std::pair<double, const char*> units[] = {{1.0, "A"}, {1e3, "mA"}, {1e-3, "kA"}};
  int done = 0;
  for (const bool whiten : {false, true}) {
    const std::string system = whiten ? "whitened" : "plain";
    std::vector<double> reference;  // final losses in A, run by run
    double worst = 0;
    for (const auto& [unit, label] : units) {
      const std::vector<experiments::RunResult> runs = ch04::train_in_unit(
          o.n, o.d, int(o.runs), int(o.iterations), o.common.seed, unit, whiten);
      harness::progress(fmt::format("training: {} of 6 settings", ++done));
      std::vector<double> train_ratio, test_ratio, final_loss;
      for (const auto& run : runs) {
        final_loss.push_back(run.loss.back());
        train_ratio.push_back(run.loss.back() / run.ls_loss);
        test_ratio.push_back(run.test_loss / run.ls_test_loss);
      }
      if (unit == 1.0) reference = final_loss;
      for (std::size_t i = 0; i < final_loss.size(); ++i)
        worst = std::max(worst, std::abs(final_loss[i] - reference[i]) / reference[i]);
      const std::string key = fmt::format("train_{}_{}_", system, label);
      r.say("   {:<10} {:>8} {:>16.3f} {:>16.3f}\n", system, label,
            r.put(key + "loss_ratio", median(train_ratio)),
            r.put(key + "heldout_ratio", median(test_ratio)));
    }
    r.say(
        "   {}: largest relative difference of a run's final loss from its A run: "
        "{:.1e}\n",
        system,
        r.put(fmt::format("train_{}_max_relative_loss_difference", system), worst));
  }
  harness::progress("");
  r.say("\n");
}

// 6. LayerNorm: scale-invariant up to its epsilon.
void layer_norm(const Options& o, const ch04::UnitsProblem& p, harness::Report& r) {
  r.say(
      "5. LayerNorm of the training currents (eps = {:g}): ||LN(cX) - LN(X)|| / "
      "||LN(X)||\n",
      o.eps);
  r.say("   {:>8} {:>12} {:>12}\n", "c", "measured", "formula");
  for (const double c : {1e-4, 1e-3, 1e-2, 1e3})
    r.say("   {:>8g} {:>12.3e} {:>12.3e}\n", c,
          r.put(fmt::format("layernorm_change_at_c_{:g}", c),
                ch04::layer_norm_change(p.X, c, o.eps)),
          ch04::layer_norm_change_formula(p.X, c, o.eps));
  r.say("\n");
}

void run(const Options& o, const harness::CommandLine& cli) {
  if (o.d >= o.n)
    throw harness::usage_error(
        "--d", fmt::format("must be less than --n = {} (got {})", o.n, o.d));
  // Memory: a softmax prediction of the sweep holds two queries x n matrices (scores and
  // weights); a training run's held-out prediction two n x n ones, two runs at a time, and
  // each setting keeps its runs' loss curves.
  const double n = double(o.n);
  harness::require_memory("--queries", 16 * double(o.queries) * n);
  harness::require_memory("--n",
                          32 * n * n + 8 * double(o.runs) * double(o.iterations + 1));
  const std::filesystem::path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  const ch04::UnitsProblem p = ch04::units_problem(o.n, o.d, o.queries, rng);
  harness::Report r;
  harness::record_options(cli, r.results);
  // Each section on its own (harness::section): in the student copy, 1 waits for exercise
  // 04.6 (unit_factor, which the typed quantities use) and the others still run.
  harness::section(r, out, "1. Units checked by the compiler", [&] { typed(p, r); });
  harness::section(r, out, "2. Three units", [&] { three_units(o, p, r); });
  harness::section(r, out, "3. Sweep of the unit", [&] { sweep(o, p, out, r); });
  harness::section(r, out, "4. Training", [&] { training(o, r); });
  harness::section(r, out, "5. LayerNorm", [&] { layer_norm(o, p, r); });
  harness::finish_program(out, r);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{
      "Chapter 04 — Units: why least squares is unit-free and softmax attention is not.",
      "ch04"};
  harness::add_common_options(cli, o.common, ATTN_CHAPTER);
  harness::add_int_option(cli, "--n", o.n, 3, 2000,
                          "training rows (a training step costs about n^2 d)");
  harness::add_int_option(cli, "--d", o.d, 2, 100,
                          "features, fewer than --n (LayerNorm needs 2: it maps a single "
                          "feature to 0)");
  harness::add_int_option(cli, "--queries", o.queries, 1, 10000,
                          "held-out queries of the unit sweep");
  harness::add_int_option(
      cli, "--decades", o.decades, 2, 12,
      "the sweep covers c = 10^-decades .. 10^decades (2 or more: the "
      "slope is fitted for c >= 10)");
  harness::add_int_option(cli, "--per-decade", o.per_decade, 1, 20,
                          "points per decade of the sweep", 2);
  harness::add_real_option(cli, "--scale", o.scale, 1e-12, 1e12,
                           "unit factor c of the summary table (1000: mA)");
  harness::add_int_option(cli, "--runs", o.runs, 1, 1000, "training runs per unit", 3);
  harness::add_int_option(cli, "--iterations", o.iterations, 0, 100000,
                          "Adam steps per training run", 200);
  harness::add_real_option(cli, "--eps", o.eps, 1e-12, 1, "LayerNorm's epsilon");
  return harness::run_program(cli, argc, argv, [&] { run(o, cli); });
}
