// Chapter 04 — Units: why least squares is unit-free and softmax attention is not.
//
// Computes what the chapter shows: least squares and attention written with a matrix type
// that carries units (the compiler checks them), the same data expressed in amperes,
// milliamperes and kiloamperes (a sweep of the unit over many decades) for least squares,
// unnormalised attention, softmax attention and whitened softmax attention, chapter 03's
// training experiment run in different units, and LayerNorm's epsilon. Writes output.txt
// (this summary), results.json, and the CSV + SVG of each figure into --out.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "attn/attention_regression.hpp"
#include "harness/cli.hpp"
#include "harness/output.hpp"
#include "attn/random.hpp"
#include "attn/units.hpp"
#include "sweep.hpp"

namespace {

using harness::say;

using ch04::Method;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

struct Options {
  harness::CommonOptions common;
  long n = 100;            // training rows
  long d = 10;             // features
  long queries = 50;       // held-out queries of the sweep
  long decades = 4;        // the sweep runs over c = 10^-decades .. 10^decades
  long per_decade = 4;     // points per decade
  double scale = 1000;     // the second unit of the summary table (1000: mA)
  long runs = 10;          // training runs per unit
  long iterations = 1000;  // Adam steps per run
  double eps = 1e-5;       // LayerNorm's epsilon
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

template <int A, int V>
std::string unit_name() {
  if (A == 0 && V == 0) return "1 (dimensionless)";
  std::string s;
  if (A != 0) s += A == 1 ? "A" : fmt::format("A^{}", A);
  if (V != 0) {
    if (!s.empty()) s += ' ';
    s += V == 1 ? std::string("V") : fmt::format("V^{}", V);
  }
  return s;
}

// ------------------------------------------------------------------------------------
// 1. Least squares and attention with units in the type.
void typed(const ch04::UnitsProblem& p, std::string& text, harness::Results& results) {
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
  const double typed_vs_plain =
      (y_ls.si_value().col(0) - untyped).norm() / untyped.norm();
  say(text, "1. Units checked by the compiler (X in A, Y in V, {} x {}, {} queries)\n",
      p.X.rows(), p.X.cols(), p.X_query.rows());
  say(text, "   (X^T X)^-1          : {}\n",
      unit_name<decltype(XtX_inv)::ampere_exponent, decltype(XtX_inv)::volt_exponent>());
  say(text, "   beta_LS             : {}\n",
      unit_name<decltype(beta)::ampere_exponent, decltype(beta)::volt_exponent>());
  say(text, "   prediction x^T beta : {}\n", unit_name<0, 1>());
  say(text, "   L                   : {}\n",
      unit_name<decltype(L)::ampere_exponent, decltype(L)::volt_exponent>());
  say(text, "   L X^T               : {}  (max |L X^T X L^T - I| = {:.1e})\n",
      unit_name<0, 0>(),
      (LXt.si_value() * LXt.si_value().transpose() -
       MatrixXd::Identity(p.X.cols(), p.X.cols()))
          .cwiseAbs()
          .maxCoeff());
  say(text, "   W_Q W_K^T = L^T L   : {}; scores {}; softmax(S) Y: {}\n",
      unit_name<decltype(M)::ampere_exponent, decltype(M)::volt_exponent>(),
      unit_name<0, 0>(), unit_name<0, 1>());
  say(text, "   typed least squares vs plain Eigen: relative difference {:.1e}\n",
      typed_vs_plain);
  say(text,
      "   first query: least squares {:.4f} V, whitened softmax attention {:.4f} V\n\n",
      y_ls.si_value()(0, 0), y_attn.si_value()(0, 0));
  results["typed_vs_plain_ls_relative_difference"] = typed_vs_plain;
}

// ------------------------------------------------------------------------------------
// 2. The same data in A, in the unit of --scale, and in its inverse.
void three_units(const Options& o, const ch04::UnitsProblem& p, std::string& text,
                 harness::Results& results) {
  const std::vector<double> cs{1.0 / o.scale, 1.0, o.scale};
  say(text,
      "2. The same currents in three units (numbers multiplied by c; c = 1000 is mA)\n"
      "   relative change of the predictions against c = 1, and mean attention entropy "
      "(log n = {:.3f})\n",
      std::log(double(p.X.rows())));
  say(text, "   {:<20}", "method");
  for (const double c : cs) say(text, " {:>11}", fmt::format("c = {:g}", c));
  say(text, "   {:>10}\n", "entropy");
  for (const Method m : ch04::methods) {
    const VectorXd base = ch04::predict_in_units(p, 1.0, m).y;
    say(text, "   {:<20}", ch04::name(m));
    std::string entropies;
    for (const double c : cs) {
      const ch04::Prediction pr = ch04::predict_in_units(p, c, m);
      const double change = ch04::relative_change(pr.y, base);
      say(text, " {:>11.2e}", change);
      if (c != 1.0)
        results[fmt::format("{}_change_at_c_{:g}", ch04::name(m), c)] = change;
      if (!std::isnan(pr.entropy)) {
        entropies += fmt::format(" {:.3f}", pr.entropy);
        results[fmt::format("{}_entropy_at_c_{:g}", ch04::name(m), c)] = pr.entropy;
      }
    }
    say(text, "  {}\n", entropies.empty() ? "   (signed weights)" : entropies);
  }
  say(text, "\n");
}

// ------------------------------------------------------------------------------------
// 3. The sweep over many decades: the figures.
void sweep(const Options& o, const ch04::UnitsProblem& p,
           const std::filesystem::path& out, std::string& text, harness::Results& results) {
  const std::vector<double> grid = ch04::unit_grid(int(o.decades), int(o.per_decade));
  std::vector<VectorXd> base;
  for (const Method m : ch04::methods)
    base.push_back(ch04::predict_in_units(p, 1.0, m).y);
  std::vector<std::vector<harness::CsvCell>> rows;
  double ls_worst = 0, whitened_worst = 0;
  for (std::size_t k = 0; k < grid.size(); ++k) {
    harness::progress(
        fmt::format("unit sweep: c = {:.1e} ({}/{})", grid[k], k + 1, grid.size()));
    const double c = grid[k];
    std::vector<harness::CsvCell> row{c};
    std::vector<double> entropy, mse;
    for (std::size_t i = 0; i < ch04::methods.size(); ++i) {
      const ch04::Prediction pr = ch04::predict_in_units(p, c, ch04::methods[i]);
      const double change = ch04::relative_change(pr.y, base[i]);
      row.push_back(change);
      mse.push_back((pr.y - p.Y_query).squaredNorm() / double(p.Y_query.size()));
      if (!std::isnan(pr.entropy)) entropy.push_back(pr.entropy);
      if (ch04::methods[i] == Method::least_squares)
        ls_worst = std::max(ls_worst, change);
      if (ch04::methods[i] == Method::whitened_attention)
        whitened_worst = std::max(whitened_worst, change);
    }
    for (const double v : mse) row.push_back(v);
    for (const double v : entropy) row.push_back(v);
    row.push_back(ch04::layer_norm_change(p.X, c, o.eps));
    row.push_back(ch04::layer_norm_change_formula(p.X, c, o.eps));
    rows.push_back(row);
  }
  harness::progress("");
  harness::write_csv(out / "04-unit-sweep.csv",
                  {"c", "change_ls", "change_id", "change_softmax", "change_whitened",
                   "mse_ls", "mse_id", "mse_softmax", "mse_whitened", "entropy_softmax",
                   "entropy_whitened", "change_layernorm", "layernorm_formula"},
                  rows);
  say(text,
      "3. Sweep of the unit over c = 1e-{} .. 1e{} ({} points)\n"
      "   largest relative change: least squares {:.1e}, whitened softmax attention "
      "{:.1e}\n",
      o.decades, o.decades, grid.size(), ls_worst, whitened_worst);
  const auto& first = rows.front();
  const auto& last = rows.back();
  say(text,
      "   softmax attention entropy: {:.3f} at c = {:g} (uniform: {:.3f}), {:.2e} at c = "
      "{:g}\n",
      std::get<double>(first[9]), grid.front(), std::log(double(p.X.rows())),
      std::get<double>(last[9]), grid.back());
  say(text,
      "   held-out mean squared error, V^2: least squares {:.3f} for every c; softmax "
      "{:.2f} (c = {:g}), {:.2f} (c = 1), {:.2f} (c = {:g})\n\n",
      std::get<double>(rows[grid.size() / 2][5]), std::get<double>(first[7]),
      grid.front(), std::get<double>(rows[grid.size() / 2][7]), std::get<double>(last[7]),
      grid.back());
  results["sweep_points"] = grid.size();
  results["sweep_ls_max_relative_change"] = ls_worst;
  results["sweep_whitened_max_relative_change"] = whitened_worst;
  results["sweep_softmax_entropy_smallest_c"] = std::get<double>(first[9]);
  results["sweep_softmax_entropy_largest_c"] = std::get<double>(last[9]);
  results["sweep_softmax_mse_smallest_c"] = std::get<double>(first[7]);
  results["sweep_softmax_mse_c1"] = std::get<double>(rows[grid.size() / 2][7]);
  results["sweep_softmax_mse_largest_c"] = std::get<double>(last[7]);
  results["sweep_ls_mse"] = std::get<double>(rows[grid.size() / 2][5]);

  // Slope of log10(change of unnormalised attention) against log10(c) for c >= 10, fitted
  // by least squares (the fit the second figure draws): c^2 - 1 gives 2 at large c.
  std::vector<double> lx, ly;
  for (std::size_t k = 0; k < grid.size(); ++k)
    if (grid[k] >= 10.0) {
      lx.push_back(std::log10(grid[k]));
      ly.push_back(std::log10(std::get<double>(rows[k][2])));
    }
  if (lx.size() >= 2) {
    const double mx = std::accumulate(lx.begin(), lx.end(), 0.0) / double(lx.size());
    const double my = std::accumulate(ly.begin(), ly.end(), 0.0) / double(ly.size());
    double sxy = 0, sxx = 0;
    for (std::size_t k = 0; k < lx.size(); ++k) {
      sxy += (lx[k] - mx) * (ly[k] - my);
      sxx += (lx[k] - mx) * (lx[k] - mx);
    }
    results["sweep_id_change_slope"] = sxy / sxx;
  }
  // Where the softmax system's entropy sits one decade either side of amperes.
  for (const double c : {0.1, 10.0})
    results[fmt::format("softmax_attention_entropy_at_c_{:g}", c)] =
        ch04::predict_in_units(p, c, Method::softmax_attention).entropy;
  // How closely LayerNorm's measured change follows the formula, over the sweep (c = 1,
  // where both are 0, left out): relative difference.
  double ln_worst = 0;
  for (const auto& row : rows) {
    const double measured = std::get<double>(row[11]), formula = std::get<double>(row[12]);
    if (formula > 0)
      ln_worst = std::max(ln_worst, std::abs(measured - formula) / formula);
  }
  results["layernorm_formula_max_relative_difference"] = ln_worst;
}

// ------------------------------------------------------------------------------------
// 4. Chapter 03's training experiment with the currents in A, in mA and in kA.
void training(const Options& o, std::string& text, harness::Results& results) {
  say(text,
      "4. Training softmax attention (chapter 03's trainer, (n, d) = ({}, {}), {} runs x "
      "{} "
      "iterations)\n   median final training loss / least-squares loss, and held-out "
      "ratio\n",
      o.n, o.d, o.runs, o.iterations);
  say(text, "   {:<10} {:>8} {:>16} {:>16}\n", "system", "unit", "training / LS",
      "held-out / LS");
  const std::vector<std::pair<double, const char*>> units{
      {1.0, "A"}, {1e3, "mA"}, {1e-3, "kA"}};
  int done = 0;
  for (const bool whiten : {false, true}) {
    std::vector<double> reference;  // final losses in A, run by run
    double worst = 0;
    for (const auto& [unit, label] : units) {
      // [train-in-units]
      attn::ExperimentConfig config;
      config.n = o.n;
      config.d = o.d;
      config.h = attn::Normalisation::softmax;
      config.runs = int(o.runs);
      config.iterations = int(o.iterations);
      config.seed = o.common.seed;
      config.threads = 2;
      config.inputs = ch04::in_unit(unit);  // the same currents, in A, mA or kA
      if (whiten) config.features = ch04::whitening_features;  // train on X (rho L)^T
      const std::vector<attn::RunResult> runs = attn::run_experiment(config);
      // [train-in-units]
      harness::progress(fmt::format("training: {} of 6 settings", ++done));
      std::vector<double> train_ratio, test_ratio, final_loss;
      for (const auto& r : runs) {
        final_loss.push_back(r.loss.back());
        train_ratio.push_back(r.loss.back() / r.ls_loss);
        test_ratio.push_back(r.test_loss / r.ls_test_loss);
      }
      if (unit == 1.0) reference = final_loss;
      for (std::size_t i = 0; i < final_loss.size(); ++i)
        worst = std::max(worst, std::abs(final_loss[i] - reference[i]) / reference[i]);
      const std::string system = whiten ? "whitened" : "plain";
      say(text, "   {:<10} {:>8} {:>16.3f} {:>16.3f}\n", system, label,
          median(train_ratio), median(test_ratio));
      results[fmt::format("train_{}_{}_loss_ratio", system, label)] = median(train_ratio);
      results[fmt::format("train_{}_{}_heldout_ratio", system, label)] =
          median(test_ratio);
    }
    const std::string system = whiten ? "whitened" : "plain";
    say(text,
        "   {}: largest relative difference of a run's final loss from its A run: "
        "{:.1e}\n",
        system, worst);
    results[fmt::format("train_{}_max_relative_loss_difference", system)] = worst;
  }
  harness::progress("");
  say(text, "\n");
}

// ------------------------------------------------------------------------------------
// 5. LayerNorm: scale-invariant up to its epsilon.
void layer_norm(const Options& o, const ch04::UnitsProblem& p, std::string& text,
                harness::Results& results) {
  say(text,
      "5. LayerNorm of the training currents (eps = {:g}): ||LN(cX) - LN(X)|| / "
      "||LN(X)||\n",
      o.eps);
  say(text, "   {:>8} {:>12} {:>12}\n", "c", "measured", "formula");
  for (const double c : {1e-4, 1e-3, 1e-2, 1e3}) {
    const double measured = ch04::layer_norm_change(p.X, c, o.eps);
    const double formula = ch04::layer_norm_change_formula(p.X, c, o.eps);
    say(text, "   {:>8g} {:>12.3e} {:>12.3e}\n", c, measured, formula);
    results[fmt::format("layernorm_change_at_c_{:g}", c)] = measured;
  }
  say(text, "\n");
}

void run(Options& o) {
  if (o.d >= o.n)
    throw harness::usage_error("--d",
                            fmt::format("must be less than --n = {} (got {})", o.n, o.d));
  const std::filesystem::path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  const ch04::UnitsProblem p = ch04::units_problem(o.n, o.d, o.queries, rng);
  std::string text;
  harness::Results results;
  results["seed"] = o.common.seed;
  results["n"] = o.n;
  results["d"] = o.d;
  results["queries"] = o.queries;
  results["scale"] = o.scale;
  results["runs"] = o.runs;
  results["iterations"] = o.iterations;
  results["layernorm_eps"] = o.eps;

  typed(p, text, results);
  three_units(o, p, text, results);
  sweep(o, p, out, text, results);
  training(o, text, results);
  layer_norm(o, p, text, results);

  // One CSV, one script, three figures: the script draws the one named by `which`.
  for (const char* figure : {"04-entropy", "04-prediction-change", "04-prediction-error"})
    harness::render_figure(
        out, figure, "04-unit-sweep",
        fmt::format("in='{}'; which='{}'; logn={:.17g}",
                    (out / "04-unit-sweep.csv").string(), figure, std::log(double(o.n))));
  harness::finish_program(out, results, text);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{
      "Chapter 04 — Units: why least squares is unit-free and softmax attention "
      "is not.",
      "ch04"};
  harness::add_common_options(cli, o.common, ATTN_DEFAULT_OUT);
  harness::add_int_option(cli, "--n", o.n, 2, 100000, "training rows");
  harness::add_int_option(cli, "--d", o.d, 1, 1000, "features; must be less than --n");
  harness::add_int_option(cli, "--queries", o.queries, 1, 100000,
                       "held-out queries of the unit sweep");
  harness::add_int_option(cli, "--decades", o.decades, 1, 12,
                       "the sweep covers c = 10^-decades .. 10^decades");
  harness::add_int_option(cli, "--per-decade", o.per_decade, 1, 20,
                       "points per decade of the sweep");
  harness::add_real_option(cli, "--scale", o.scale, 1e-12, 1e12,
                        "unit factor c of the summary table (1000: mA)");
  harness::add_int_option(cli, "--runs", o.runs, 1, 1000, "training runs per unit");
  harness::add_int_option(cli, "--iterations", o.iterations, 0, 100000,
                       "Adam steps per training run");
  harness::add_real_option(cli, "--eps", o.eps, 1e-12, 1, "LayerNorm's epsilon");
  return harness::run_program(cli, argc, argv, [&] {
    if (o.common.quick) {  // --quick shrinks only what the user did not set
      if (!harness::option_given(cli, "--runs")) o.runs = 3;
      if (!harness::option_given(cli, "--iterations")) o.iterations = 200;
      if (!harness::option_given(cli, "--per-decade")) o.per_decade = 2;
    }
    run(o);
  });
}
