// Chapter 02 — Nadaraya–Watson kernel regression is attention. In the chapter's order (the
// output's sections carry its section numbers): fits of y = sin(2 pi x) + noise with four
// kernels, the limit h -> 0 in floating point, the weights as attention maps, the bridge to
// softmax attention, the n^{-4/5} rate, h chosen by leave-one-out cross-validation and learned
// by gradient descent. Writes output.txt (this summary), results.json, CSVs and SVGs to --out.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/kernel_regression.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "ch02.hpp"
#include "experiments/statistics.hpp"
#include "harness/cli.hpp"
#include "harness/output.hpp"

namespace {

using attn::Kernel;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using std::filesystem::path;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

struct Options {
  harness::CommonOptions common;
  long n = 100;
  double noise = 0.5;
  std::string kernel = "gaussian";
  double h = 0.05;
  long reps = 300;
  long max_n = 25600;
};

// f(), or NaN where the library refuses it with std::domain_error: a compact kernel with no
// key within h. NaN is a gap in the tables and figures, never a printed or saved result.
template <typename F>
double or_nan(F f) try {
  return f();
} catch (const std::domain_error&) {
  return nan;
}

// CSV rows of a table whose NaN entries are written as the word NaN, which gnuplot reads as
// a gap; harness::write_csv refuses NaN numbers.
std::vector<std::vector<harness::CsvCell>> with_gaps(const MatrixXd& table) {
  std::vector<std::vector<harness::CsvCell>> rows;
  for (const auto& row : table.rowwise()) {
    rows.emplace_back();
    for (const double x : row)
      rows.back().push_back(std::isnan(x) ? "NaN" : harness::CsvCell(x));
  }
  return rows;
}

// 2. The bandwidth: fits of every kernel at three bandwidths.
void fits(const Options& o, const ch02::Data& data, const path& out, harness::Report& r) {
  const Index m = r.put("fit_grid_points", Index{401});
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0, 1.0);
  const std::vector<double> hs{o.h / 2.5, o.h, 4 * o.h};
  std::vector<std::string> header{"x", "f"};
  MatrixXd table(m, 2 + 4 * 3);
  table.leftCols(2) << T, T.unaryExpr([](double x) { return ch02::truth(x); });
  r.say(
      "2. Fits of y = sin(2 pi x) + {:g} N(0,1), n = {}: mean squared error against f\n"
      "   on a grid of {} points in [0, 1] (undefined: no key within h)\n   {:<13}",
      o.noise, o.n, m, "kernel");
  for (const double h : hs) r.say(" {:>20}", fmt::format("h = {:g}", h));
  Index col = 2;
  for (const Kernel k : attn::all_kernels()) {
    const std::string name = attn::kernel_name(k);
    r.say("\n   {:<13}", name);
    for (const double h : hs) {
      const std::string tag = fmt::format("{}_h{:g}", name, h);
      header.push_back(tag);
      const ch02::GridFit fit = ch02::fit_on_grid(T, data, k, h);
      table.col(col++) = fit.fit;
      const Index gaps = r.put("fit_undefined_points_" + tag, fit.gaps);
      if (gaps == m) {  // results.json holds numbers only: no entry where it is undefined
        r.say(" {:>20}", "undefined");
        continue;
      }
      const double mse = r.put("fit_mse_" + tag, fit.mse);
      r.say(" {:>20}", gaps == 0 ? fmt::format("{:.4f}", mse)
                                 : fmt::format("{:.4f} ({} undef.)", mse, gaps));
    }
  }
  r.say("\n\n");
  harness::write_csv(out / "02-fits.csv", header, with_gaps(table));
  harness::write_csv(out / "02-data.csv", {"x", "y"},
                     (MatrixXd(data.X.rows(), 2) << data.X, data.Y).finished());
  harness::render_figure(
      out, "02-fits", "",
      fmt::format("data='02-data.csv'; h1='{:g}'; h2='{:g}'; h3='{:g}'", hs[0], hs[1],
                  hs[2]));
}

// The limit h -> 0 in floating point: from which s = delta / 2h^2 on the Gaussian estimate
// is the nearest label bit for bit, and from which on the other weights are 0.
void nearest_limit(const ch02::Data& data, harness::Report& r) {
  const Index m = r.put("limit_queries", Index{401});  // the queries of the fits
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0, 1.0);
  std::vector<double> exact, zero;
  double smallest_weight = inf;
  for (Index j = 0; j < m; ++j) {
    try {
      const ch02::NearestLimit limit = ch02::nearest_limit(T.row(j), data.X, data.Y);
      exact.push_back(limit.exact_from);
      zero.push_back(limit.zero_from);
      smallest_weight = std::min(smallest_weight, limit.second_weight_at_exact);
    } catch (const std::invalid_argument&) {  // the two nearest keys tie: no single label
    }
  }
  r.say(
      "2. The limit h -> 0 in floating point: Gaussian kernel, the {} queries above;\n"
      "   s = delta/2h^2, delta = gap between the nearest and second-nearest squared "
      "distance\n",
      m);
  if (exact.empty())  // results.json holds numbers only: no entries then
    return r.say("   every query has two nearest keys at the same distance\n\n");
  std::sort(exact.begin(), exact.end());
  std::sort(zero.begin(), zero.end());
  const double ln2 = std::numbers::ln2;
  r.say(
      "   estimate = nearest label bit for bit for every s >= s_exact:\n"
      "      s_exact from {:.2f} to {:.2f}, median {:.2f}  (53 ln 2 = {:.2f})\n"
      "      second-nearest weight at s_exact >= {:.1e} (not 0)\n"
      "   second-nearest weight exactly 0 for every s >= s_zero:\n"
      "      s_zero from {:.4f} to {:.4f}  (1075 ln 2 = {:.4f})\n\n",
      r.put("limit_exact_s_min", exact.front()), r.put("limit_exact_s_max", exact.back()),
      r.put("limit_exact_s_median", experiments::median(exact)),
      r.put("limit_exact_s_theory", 53 * ln2),  // e^{-s} = 2^{-53}
      r.put("limit_second_weight_at_exact_min", smallest_weight),
      r.put("limit_zero_s_min", zero.front()), r.put("limit_zero_s_max", zero.back()),
      r.put("limit_zero_s_theory", 1075 * ln2));  // e^{-s} = 2^{-1075}
}

// 3. The weights as attention maps: queries on a grid x training points sorted by x.
void weight_maps(double h, const ch02::Data& data, const path& out, harness::Report& r) {
  const MatrixXd X = ch02::sorted_keys(data);
  const MatrixXd T = ch02::map_queries();
  const Index m = T.rows();
  std::vector<std::vector<harness::CsvCell>> rows;
  r.say("3. Weight maps at h = {:g}: {} queries on a grid x {} keys\n", h, m, X.rows());
  for (const Kernel k : attn::all_kernels()) {
    const MatrixXd W = ch02::weight_map(T, X, k, h);  // a row of NaN: no key within h
    const std::string name = attn::kernel_name(k);
    r.say(
        "   {:<13} effective keys per query 1/sum w^2 = {:5.2f}; {} queries without a "
        "key\n",
        name, r.put("weights_effective_keys_" + name, ch02::effective_keys(W)),
        r.put("weights_empty_rows_" + name, ch02::empty_rows(W)));
    for (Index j = 0; j < m; ++j)
      for (Index i = 0; i < X.rows(); ++i)
        rows.push_back({name, static_cast<double>(i), T(j, 0),
                        std::isnan(W(j, i)) ? 0.0 : W(j, i),
                        static_cast<double>(std::isnan(W(j, i)))});
  }
  r.say("\n");
  harness::write_csv(out / "02-weights.csv",
                     {"kernel", "key_rank", "query", "weight", "empty"}, rows);
  harness::render_figure(out, "02-weights", "",
                         fmt::format("h='{:g}'; rows={}; cols={}", h, m, X.rows()));
}

// 4. The bridge: Gaussian kernel regression as softmax attention.
void bridge(const Options& o, attn::Rng& rng, const ch02::Data& data,
            harness::Report& r) {
  const Index nq = 32, nk = 64, d = 4;
  const double h = 1.0;
  const MatrixXd Q = attn::random_normal(nq, d, rng), K = attn::random_normal(nk, d, rng);
  const MatrixXd V = attn::random_normal(nk, 1, rng);
  const MatrixXd W = attn::nw_weights(Q, K, Kernel::gaussian, h);  // kernel regression
  const MatrixXd A = ch02::attention_at_bandwidth(Q, K, h, true);  // with the key bias
  const MatrixXd A_plain = ch02::attention_at_bandwidth(Q, K, h, false);
  // Keys of equal norm: the bias is a constant and cancels.
  const MatrixXd Ks = K.rowwise().normalized() * 1.5;
  const MatrixXd A_sphere = ch02::attention_at_bandwidth(Q, Ks, h, false);
  const MatrixXd W_sphere = attn::nw_weights(Q, Ks, Kernel::gaussian, h);
  // On the chapter's 1-D data: plain softmax(x x_i / h^2) against the Gaussian fit.
  const MatrixXd T = VectorXd::LinSpaced(201, 0.0, 1.0);
  const MatrixXd nw = attn::nadaraya_watson(T, data.X, data.Y, Kernel::gaussian, o.h);
  const MatrixXd plain = ch02::plain_softmax_fit(T, data, o.h);
  r.say(
      "4. Gaussian kernel regression as softmax attention ({} queries, {} keys, d = {}, "
      "h = {:g})\n"
      "   max |softmax(q.k/h^2 - |k|^2/2h^2) - NW weights|  = {:.1e}\n"
      "   max |softmax(q.k/h^2) - NW weights|, keys of unequal norm = {:.3f}\n"
      "      (the outputs differ by up to {:.3f})\n"
      "   the same, all keys of norm 1.5 = {:.1e}\n"
      "   1-D data, h = {:g}: MSE against f of NW {:.4f}, of plain softmax(x x_i/h^2)"
      " {:.4f}\n\n",
      nq, nk, d, h, r.put("bridge_identity_residual", (A - W).lpNorm<Eigen::Infinity>()),
      r.put("plain_softmax_weight_difference", (A_plain - W).lpNorm<Eigen::Infinity>()),
      r.put("plain_softmax_output_difference",
            (A_plain * V - W * V).lpNorm<Eigen::Infinity>()),
      r.put("equal_norm_keys_weight_difference",
            (A_sphere - W_sphere).lpNorm<Eigen::Infinity>()),
      o.h, r.put("mse_nw_1d", ch02::mse_against_truth(T, nw)),
      r.put("mse_plain_softmax_1d", ch02::mse_against_truth(T, plain)));
}

// 6. Consistency: the error against n with h = c n^{-1/5}.
void rate(const Options& o, attn::Rng& rng, const path& out, harness::Report& r) {
  const Kernel kernel = attn::parse_kernel(r.put("rate_kernel", o.kernel));
  std::vector<Index> ns;
  for (Index n = 100; n <= o.max_n; n *= 2) ns.push_back(n);
  const ch02::RateFit fit =
      ch02::consistency(ns, o.reps, o.noise, kernel, 50, rng, [&](Index k, Index K) {
        harness::progress(fmt::format("rate sweep: size {} of {}", k + 1, K));
      });
  harness::progress("");
  r.say("6. Consistency, {} kernel, h = {:.3g} n^(-1/5){}: interior MSE against f\n",
        o.kernel, ch02::rate_bandwidth(1, kernel),
        kernel == Kernel::gaussian ? "" : " (sd 0.15 n^(-1/5))");
  r.say("   {:>7} {:>6} {:>10} {:>12} {:>14} {:>22}\n", "n", "h", "data sets", "mean MSE",
        "MSE * n^(4/5)", "2 std. err. interval");
  const Index K = fit.n.size();
  MatrixXd table(K, 7);
  const double mean_log_n = ch02::log_of(fit.n).mean();
  const double mean_log_e = ch02::log_of(fit.mean_error).mean();
  for (Index k = 0; k < K; ++k) {
    const double n = fit.n(k), e = fit.mean_error(k), se = fit.log_error_se(k);
    table.row(k) << n, e, e * std::exp(-2 * se), e * std::exp(2 * se),
        std::exp(fit.intercept + fit.slope * std::log(n)),
        ch02::rate_bandwidth(Index(n), kernel),
        std::exp(mean_log_e - 0.8 * (std::log(n) - mean_log_n));  // slope -4/5
    r.say("   {:>7.0f} {:>6.4f} {:>10.0f} {:>12.4e} {:>14.4f} {:>14.4f}..{:.4f}\n", n,
          table(k, 5), fit.replicates(k), e, e * std::pow(n, 0.8),
          table(k, 2) * std::pow(n, 0.8), table(k, 3) * std::pow(n, 0.8));
  }
  // The first-order limit of MSE n^{4/5}, and the first n from which every measured value's
  // 2-standard-error interval contains it.
  const double limit = ch02::rate_scaled_mse_limit(o.noise, kernel);
  Index agree_from = K;
  while (agree_from > 0 && table(agree_from - 1, 2) <= limit * std::pow(fit.n(agree_from - 1), -0.8) &&
         limit * std::pow(fit.n(agree_from - 1), -0.8) <= table(agree_from - 1, 3))
    --agree_from;
  r.say("   first-order limit of MSE * n^(4/5): {:.4f}; within 2 std. err. of it from n = {}\n",
        r.put("rate_scaled_mse_limit", limit),
        agree_from < K ? fmt::format("{:.0f}", r.put("rate_limit_agrees_from_n", fit.n(agree_from)))
                       : std::string("(none)"));
  r.say("   fitted slope {:.3f} +- {:.3f} (2 standard errors); theory -0.8\n\n",
        r.put("rate_slope", fit.slope), r.put("rate_slope_two_se", 2 * fit.slope_se));
  r.put("rate_slope_interval_low", fit.slope - 2 * fit.slope_se);
  r.put("rate_slope_interval_high", fit.slope + 2 * fit.slope_se);
  r.put("rate_slope_theory", -0.8);
  // MSE n^{4/5}, constant in theory, at both ends of the sweep:
  r.put("rate_n_first", fit.n(0));
  r.put("rate_n_last", fit.n(K - 1));
  r.put("rate_h_first", table(0, 5));
  r.put("rate_scaled_mse_first", fit.mean_error(0) * std::pow(fit.n(0), 0.8));
  r.put("rate_scaled_mse_last", fit.mean_error(K - 1) * std::pow(fit.n(K - 1), 0.8));
  // and their intervals of 2 standard errors:
  r.put("rate_scaled_mse_first_low", table(0, 2) * std::pow(fit.n(0), 0.8));
  r.put("rate_scaled_mse_first_high", table(0, 3) * std::pow(fit.n(0), 0.8));
  r.put("rate_scaled_mse_last_low", table(K - 1, 2) * std::pow(fit.n(K - 1), 0.8));
  r.put("rate_scaled_mse_last_high", table(K - 1, 3) * std::pow(fit.n(K - 1), 0.8));
  harness::write_csv(out / "02-rate.csv",
                     {"n", "mse", "mse_lo", "mse_hi", "fitted", "h", "reference"}, table);
  harness::render_figure(out, "02-rate", "",
                         fmt::format("kernel='{}'; slope={:.17g}; slope_se={:.17g}",
                                     o.kernel, fit.slope, fit.slope_se));
}

// 7. Choosing h: leave-one-out cross-validation on a grid of bandwidths, and (dashed in the
// figure) what CV estimates for the Gaussian kernel: the noise variance plus the fit's MSE.
void cross_validation(const Options& o, const ch02::Data& data, const path& out,
                      harness::Report& r) {
  const Index points = r.put("loo_cv_grid_points", Index{81});
  MatrixXd table(points, 1 + 4 + 1);
  table.col(0) =
      VectorXd::LinSpaced(points, std::log(0.005), std::log(0.5)).array().exp();
  std::vector<std::string> header{"h"};
  r.say("7. Leave-one-out cross-validation on the n = {} points, h from 0.005 to 0.5\n",
        o.n);
  Index col = 1;
  double chosen_h = nan, chosen_cv = nan;
  for (const Kernel k : attn::all_kernels()) {
    const std::string name = attn::kernel_name(k);
    header.push_back("cv_" + name);
    double best = inf, best_h = nan;
    for (Index p = 0; p < points; ++p) {
      harness::progress(fmt::format("CV, {} kernel: h {} of {}", name, p + 1, points));
      // NaN where an isolated point leaves CV(h) undefined.
      const double cv = table(p, col) =
          or_nan([&] { return attn::nw_loo_cv(data.X, data.Y, k, table(p, 0)); });
      if (cv < best) best = cv, best_h = table(p, 0);
    }
    const Index undefined = table.col(col++).array().isNaN().count();
    if (undefined == points)  // results.json holds numbers only: no entry then
      r.say("   {:<13} CV is undefined for every h of the grid\n", name);
    else
      r.say("   {:<13} min CV = {:.4f} at h = {:.4f}  (undefined for {} of {} h)\n", name,
            r.put("loo_cv_min_" + name, best), r.put("loo_cv_best_h_" + name, best_h),
            undefined, points);
    if (name == o.kernel) chosen_h = best_h, chosen_cv = best;
  }
  harness::progress("");
  // The noise variance is taken from this sample's own noise, mean (y_i - f(x_i))^2.
  const double noise2 = ch02::mse_against_truth(data.X, data.Y);
  const MatrixXd T = VectorXd::LinSpaced(401, 0.0, 1.0);
  header.push_back("risk_gaussian");
  for (Index p = 0; p < points; ++p)
    table(p, col) = noise2 + ch02::mse_against_truth(
                                 T, attn::nadaraya_watson(T, data.X, data.Y,
                                                          Kernel::gaussian, table(p, 0)));
  Index best_risk = 0;
  table.col(col).minCoeff(&best_risk);
  r.put("risk_best_h_gaussian", table(best_risk, 0));  // the minimum of the dashed curve
  harness::write_csv(out / "02-loocv.csv", header, with_gaps(table));
  r.put("chosen_kernel", o.kernel);
  if (std::isnan(chosen_h))
    r.say("   no h of the grid can be chosen for --kernel {}\n\n", o.kernel);
  else
    r.say("   chosen for --kernel {}: h = {:.4f} (CV {:.4f})\n\n", o.kernel,
          r.put("chosen_bandwidth", chosen_h), r.put("chosen_bandwidth_cv", chosen_cv));
}

// 8. Learning h: gradient descent on log h, from a bandwidth that is far too smooth.
void learned_bandwidth(const ch02::Data& data, const path& out, harness::Report& r) {
  const std::vector<attn::BandwidthStep> path =
      attn::learn_bandwidth(data.X, data.Y, 0.3);
  MatrixXd steps(static_cast<Index>(path.size()), 4);
  for (std::size_t t = 0; t < path.size(); ++t)
    steps.row(Index(t)) << static_cast<double>(t), path[t].h, path[t].loss, path[t].grad;
  harness::write_csv(out / "02-learned.csv", {"step", "h", "loss", "grad"}, steps);
  const attn::BandwidthStep& last = path.back();
  r.say(
      "8. Learned Gaussian h (gradient descent on log h from {:g}): h = {:.4f}\n"
      "      CV {:.4f}, |dCV/dlog h| = {:.1e} after {} steps\n\n",
      r.put("learned_bandwidth_start", path.front().h),
      r.put("learned_bandwidth", last.h), r.put("learned_bandwidth_cv", last.loss),
      std::abs(last.grad), r.put("learned_bandwidth_steps", path.size() - 1));
  r.put("learned_bandwidth_final_gradient", last.grad);
  for (std::size_t t = 1; t <= 2 && t < path.size(); ++t)  // the first, large steps
    r.put(fmt::format("learned_bandwidth_step{}", t), path[t].h);
}

void run(const Options& o, const harness::CommandLine& cli) {
  // The largest allocations: cross-validation's n x n matrices (distances, logits, weights
  // and their softmax: about 5 at once) with the weight maps' CSV rows (160 n of them, about
  // 250 bytes each); the rate sweep's 50 x n ones at its largest n (at most --max-n).
  const double n = static_cast<double>(o.n);
  harness::require_memory("--n", 8 * 5 * n * n + 250 * 160 * n);
  harness::require_memory("--max-n", 8 * 4 * 50 * static_cast<double>(o.max_n));
  const path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  harness::Report r;
  harness::record_options(cli, r.results);
  const ch02::Data data = ch02::make_data(o.n, o.noise, rng);
  // Each section on its own (harness::section): in the student copy, 7 waits for exercise
  // 02.6 (nw_loo_predictions) and the others still run; 7 and 8 draw nothing from `rng`.
  harness::section(r, out, "2. Fits", [&] { fits(o, data, out, r); });
  harness::section(r, out, "2. The limit h -> 0", [&] { nearest_limit(data, r); });
  harness::section(r, out, "3. Weight maps", [&] { weight_maps(o.h, data, out, r); });
  harness::section(r, out, "4. Kernel regression as attention",
                   [&] { bridge(o, rng, data, r); });
  harness::section(r, out, "6. Consistency", [&] { rate(o, rng, out, r); });
  const bool cv = harness::section(r, out, "7. Leave-one-out cross-validation",
                                   [&] { cross_validation(o, data, out, r); });
  const bool learned = harness::section(r, out, "8. Learned bandwidth",
                                        [&] { learned_bandwidth(data, out, r); });
  // The figure of section 7, with section 8's learned path on the CV curve.
  if (cv && learned) harness::render_figure(out, "02-loocv", "", "learned='02-learned.csv'");
  harness::finish_program(out, r);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{"Chapter 02 — Nadaraya–Watson kernel regression is attention.",
                           "ch02"};
  harness::add_common_options(cli, o.common, ATTN_CHAPTER);
  harness::add_int_option(cli, "--n", o.n, 2, 5000,
                          "training points of the fits, weight maps and cross-validation "
                          "(time and memory grow as n^2)");
  harness::add_real_option(cli, "--noise", o.noise, 0.0, 100.0,
                           "standard deviation of the label noise");
  std::vector<std::string> kernels;
  for (const Kernel k : attn::all_kernels()) kernels.push_back(attn::kernel_name(k));
  harness::add_choice_option(cli, "--kernel", o.kernel, kernels,
                             "kernel of the rate sweep and of the chosen h");
  harness::add_real_option(
      cli, "--h", o.h, 1e-9, 1e9,
      "bandwidth of the weight maps; the fits also use h/2.5 and 4h");
  harness::add_int_option(
      cli, "--reps", o.reps, 4, 10000,
      "data sets at n = 100 in the rate sweep (fewer at larger n; time grows "
      "as reps x sqrt(max-n))",
      40);
  harness::add_int_option(cli, "--max-n", o.max_n, 200, 1000000,
                          "largest n of the rate sweep (100, 200, 400, ... up to it)",
                          1600);
  return harness::run_program(cli, argc, argv, [&] { run(o, cli); });
}
