// Chapter 02 — Nadaraya–Watson kernel regression is attention.
//
// Draws y = sin(2 pi x) + noise, fits it with four kernels at several bandwidths, shows
// the weights as attention maps, checks the bridge between the Gaussian kernel and softmax
// attention, measures the n^{-4/5} rate, chooses h by leave-one-out cross-validation and
// learns it by gradient descent, and finds where, in floating point, the estimate becomes
// the nearest label bit for bit as h -> 0 (and where the other weights underflow).
// Writes output.txt (this summary), results.json, and the CSV + SVG of each figure into
// --out.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention.hpp"
#include "harness/cli.hpp"
#include "attn/kernel_regression.hpp"
#include "harness/output.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "experiment.hpp"

namespace {

using harness::say;

using attn::Kernel;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

struct Options {
  harness::CommonOptions common;
  long n = 100;        // training points of the fits, the weight maps and the LOO-CV
  double noise = 0.5;  // standard deviation of the label noise
  std::string kernel = "gaussian";  // kernel of the rate sweep and of the chosen h
  double h = 0.05;     // bandwidth of the weight maps (the fits also use h/2.5, 4h)
  long reps = 300;     // data sets at the smallest n of the rate sweep
  long max_n = 25600;  // largest n of the rate sweep (100, 200, 400, ... up to it)
};

// CSV rows of a table whose NaN entries (undefined values) are written as the word NaN,
// which gnuplot reads as a gap; harness::write_csv refuses NaN numbers.
std::vector<std::vector<harness::CsvCell>> with_gaps(const MatrixXd& table) {
  std::vector<std::vector<harness::CsvCell>> rows;
  for (Index i = 0; i < table.rows(); ++i) {
    std::vector<harness::CsvCell> row;
    for (Index j = 0; j < table.cols(); ++j)
      if (std::isnan(table(i, j)))
        row.emplace_back(std::string("NaN"));
      else
        row.emplace_back(table(i, j));
    rows.push_back(std::move(row));
  }
  return rows;
}

// The estimate at each query, or NaN where a compact kernel has no key within h (the
// library refuses those queries with std::domain_error; the figure leaves a gap there).
VectorXd fit_or_gap(const MatrixXd& T, const ch02::Data& data, Kernel k, double h,
                    Index& gaps) {
  VectorXd fit(T.rows());
  gaps = 0;
  for (Index j = 0; j < T.rows(); ++j) {
    try {
      fit(j) = attn::nadaraya_watson(T.row(j), data.X, data.Y, k, h)(0, 0);
    } catch (const std::domain_error&) {
      fit(j) = nan;
      ++gaps;
    }
  }
  return fit;
}

// ------------------------------------------------------------------------------------
// 1. Fits of every kernel at three bandwidths.
void fits(const Options& o, const ch02::Data& data, const std::filesystem::path& out,
          std::string& text, harness::Results& results) {
  const Index m = 401;
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0, 1.0);
  const std::vector<double> hs{o.h / 2.5, o.h, 4 * o.h};
  std::vector<std::string> header{"x", "f"};
  MatrixXd table(m, 2 + 4 * 3);
  for (Index j = 0; j < m; ++j) table(j, 0) = T(j, 0), table(j, 1) = ch02::truth(T(j, 0));
  say(text,
      "1. Fits of y = sin(2 pi x) + {:g} N(0,1), n = {}: mean squared error against f\n",
      o.noise, o.n);
  say(text, "   on a grid of {} points in [0, 1] (undefined: no key within h)\n", m);
  say(text, "   {:<13}", "kernel");
  for (const double h : hs) say(text, " {:>20}", fmt::format("h = {:g}", h));
  say(text, "\n");
  Index col = 2;
  for (const Kernel k : attn::all_kernels()) {
    say(text, "   {:<13}", attn::kernel_name(k));
    for (const double h : hs) {
      Index gaps = 0;
      const VectorXd fit = fit_or_gap(T, data, k, h, gaps);
      double sum = 0;
      for (Index j = 0; j < m; ++j)
        if (!std::isnan(fit(j))) sum += std::pow(fit(j) - table(j, 1), 2);
      const double mse = gaps < m ? sum / static_cast<double>(m - gaps) : nan;
      table.col(col++) = fit;
      header.push_back(fmt::format("{}_h{:g}", attn::kernel_name(k), h));
      const std::string cell = gaps == m   ? std::string("undefined")
                               : gaps == 0 ? fmt::format("{:.4f}", mse)
                                           : fmt::format("{:.4f} ({} undef.)", mse, gaps);
      say(text, " {:>20}", cell);
      if (gaps < m)  // results.json holds numbers only: no entry where it is undefined
        results[fmt::format("fit_mse_{}_h{:g}", attn::kernel_name(k), h)] = mse;
      results[fmt::format("fit_undefined_points_{}_h{:g}", attn::kernel_name(k), h)] =
          gaps;
    }
    say(text, "\n");
  }
  say(text, "\n");
  results["fit_grid_points"] = m;
  harness::write_csv(out / "02-fits.csv", header, with_gaps(table));
  MatrixXd points(data.X.rows(), 2);
  points << data.X, data.Y;
  harness::write_csv(out / "02-data.csv", {"x", "y"}, points);
}

// ------------------------------------------------------------------------------------
// 2. The weights as attention maps: queries on a grid x training points sorted by x.
void weight_maps(const Options& o, const ch02::Data& data,
                 const std::filesystem::path& out, std::string& text, harness::Results& results) {
  std::vector<Index> order(static_cast<std::size_t>(data.X.rows()));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](Index a, Index b) { return data.X(a, 0) < data.X(b, 0); });
  MatrixXd X(data.X.rows(), 1);
  for (Index i = 0; i < X.rows(); ++i) X(i, 0) = data.X(order[std::size_t(i)], 0);
  const Index m = 40;
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0125, 0.9875);  // centres of 40 cells
  std::vector<std::vector<harness::CsvCell>> rows;
  say(text, "2. Weight maps at h = {:g}: {} queries on a grid x {} keys\n", o.h, m,
      X.rows());
  for (const Kernel k : attn::all_kernels()) {
    // [weights]
    // Row j: the weights of query t_j over the keys x_i, a row of attention weights.
    MatrixXd W(m, X.rows());
    Index empty = 0;
    for (Index j = 0; j < m; ++j) {
      try {
        W.row(j) = attn::nw_weights(T.row(j), X, k, o.h);
      } catch (const std::domain_error&) {  // no key within h: this row is 0/0
        W.row(j).setConstant(nan);
        ++empty;
      }
    }
    // [weights]
    // Effective number of keys a query averages over, 1 / sum_i w_i^2 (n for uniform
    // weights, 1 for one key), averaged over the queries that have a key.
    double effective = 0;
    for (Index j = 0; j < m; ++j)
      if (!std::isnan(W(j, 0))) effective += 1.0 / W.row(j).squaredNorm();
    effective /= static_cast<double>(std::max<Index>(1, m - empty));
    say(text,
        "   {:<13} effective keys per query 1/sum w^2 = {:5.2f}; {} queries without a "
        "key\n",
        attn::kernel_name(k), effective, empty);
    results[fmt::format("weights_effective_keys_{}", attn::kernel_name(k))] = effective;
    results[fmt::format("weights_empty_rows_{}", attn::kernel_name(k))] = empty;
    for (Index j = 0; j < m; ++j)
      for (Index i = 0; i < X.rows(); ++i)
        rows.push_back({attn::kernel_name(k), static_cast<double>(i), T(j, 0),
                        std::isnan(W(j, i)) ? 0.0 : W(j, i),
                        static_cast<double>(std::isnan(W(j, i)))});
  }
  say(text, "\n");
  harness::write_csv(out / "02-weights.csv",
                  {"kernel", "key_rank", "query", "weight", "empty"}, rows);
}

// ------------------------------------------------------------------------------------
// 3. The bridge: Gaussian kernel regression as softmax attention.
void bridge(attn::Rng& rng, const ch02::Data& data, const Options& o, std::string& text,
            harness::Results& results) {
  const Index nq = 32, nk = 64, d = 4;
  const double h = 1.0;
  const MatrixXd Q = attn::random_normal(nq, d, rng), K = attn::random_normal(nk, d, rng);
  const MatrixXd V = attn::random_normal(nk, 1, rng);
  // [bridge-check]
  const MatrixXd W = attn::nw_weights(Q, K, Kernel::gaussian, h);  // kernel regression
  // The library's attention, softmax(Q' K^T / sqrt(d) + M), with Q' = Q sqrt(d) / h^2
  // and the key bias M_ij = -|k_j|^2 / 2h^2 as its additive matrix:
  const Eigen::RowVectorXd bias = -K.rowwise().squaredNorm().transpose() / (2 * h * h);
  const MatrixXd M = MatrixXd::Ones(nq, 1) * bias;
  const double s = std::sqrt(static_cast<double>(d)) / (h * h);
  const MatrixXd A = attn::attention_weights(s * Q, K, M);
  const MatrixXd A_plain = attn::attention_weights(s * Q, K, MatrixXd());  // no bias
  // [bridge-check]
  const double residual = (A - W).cwiseAbs().maxCoeff();
  const double plain_diff = (A_plain - W).cwiseAbs().maxCoeff();
  const double plain_out_diff = (A_plain * V - W * V).cwiseAbs().maxCoeff();
  // Keys of equal norm: the bias is a constant and cancels.
  const MatrixXd Ks = K.rowwise().normalized() * 1.5;
  const double sphere_diff = (attn::attention_weights(s * Q, Ks, MatrixXd()) -
                              attn::nw_weights(Q, Ks, Kernel::gaussian, h))
                                 .cwiseAbs()
                                 .maxCoeff();
  // On the chapter's 1-D data: plain softmax(x x_i / h^2) against the Gaussian fit.
  const MatrixXd T = VectorXd::LinSpaced(201, 0.0, 1.0);
  const MatrixXd nw = attn::nadaraya_watson(T, data.X, data.Y, Kernel::gaussian, o.h);
  const MatrixXd plain =
      attn::softmax_rows(T * data.X.transpose() / (o.h * o.h)) * data.Y;
  double mse_nw = 0, mse_plain = 0;
  for (Index j = 0; j < T.rows(); ++j) {
    mse_nw += std::pow(nw(j, 0) - ch02::truth(T(j, 0)), 2) / 201.0;
    mse_plain += std::pow(plain(j, 0) - ch02::truth(T(j, 0)), 2) / 201.0;
  }
  say(text,
      "3. Gaussian kernel regression as softmax attention ({} queries, {} keys, d = {}, "
      "h = {:g})\n",
      nq, nk, d, h);
  say(text, "   max |softmax(q.k/h^2 - |k|^2/2h^2) - NW weights|  = {:.1e}\n", residual);
  say(text,
      "   max |softmax(q.k/h^2) - NW weights|, keys of unequal norm = {:.3f}\n"
      "      (the outputs differ by up to {:.3f})\n",
      plain_diff, plain_out_diff);
  say(text, "   the same, all keys of norm 1.5 = {:.1e}\n", sphere_diff);
  say(text,
      "   1-D data, h = {:g}: MSE against f of NW {:.4f}, of plain softmax(x x_i/h^2)"
      " {:.4f}\n\n",
      o.h, mse_nw, mse_plain);
  results["bridge_identity_residual"] = residual;
  results["plain_softmax_weight_difference"] = plain_diff;
  results["plain_softmax_output_difference"] = plain_out_diff;
  results["equal_norm_keys_weight_difference"] = sphere_diff;
  results["mse_nw_1d"] = mse_nw;
  results["mse_plain_softmax_1d"] = mse_plain;
}

// ------------------------------------------------------------------------------------
// 4. Consistency: the error against n with h = c n^{-1/5}.
void rate(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
          std::string& text, harness::Results& results) {
  const Kernel kernel = attn::parse_kernel(o.kernel);
  std::vector<Index> ns;
  for (Index n = 100; n <= o.max_n; n *= 2) ns.push_back(n);
  const ch02::RateFit fit =
      ch02::consistency(ns, o.reps, o.noise, kernel, 50, rng, [&](Index k, Index K) {
        harness::progress(
            fmt::format("rate sweep: n = {} ({} of {})", ns[std::size_t(k)], k + 1, K));
      });
  harness::progress("");
  say(text, "4. Consistency, {} kernel, h = {:.3g} n^(-1/5){}: interior MSE against f\n",
      o.kernel, ch02::rate_bandwidth(1, kernel),
      kernel == Kernel::gaussian ? "" : " (sd 0.15 n^(-1/5))");
  say(text, "   {:>7} {:>6} {:>10} {:>12} {:>14}\n", "n", "h", "data sets", "mean MSE",
      "MSE * n^(4/5)");
  MatrixXd table(static_cast<Index>(ns.size()), 7);
  const double mean_log_n = ch02::log_of(fit.n).mean();
  const double mean_log_e = ch02::log_of(fit.mean_error).mean();
  for (Index k = 0; k < table.rows(); ++k) {
    const double n = fit.n(k), e = fit.mean_error(k), se = fit.log_error_se(k);
    table.row(k) << n, e, e * std::exp(-2 * se), e * std::exp(2 * se),
        std::exp(fit.intercept + fit.slope * std::log(n)),
        ch02::rate_bandwidth(Index(n), kernel),
        std::exp(mean_log_e - 0.8 * (std::log(n) - mean_log_n));  // slope -4/5
    say(text, "   {:>7.0f} {:>6.4f} {:>10.0f} {:>12.4e} {:>14.4f}\n", n, table(k, 5),
        fit.replicates(k), e, e * std::pow(n, 0.8));
  }
  say(text, "   fitted slope {:.3f} +- {:.3f} (2 standard errors); theory -0.8\n\n",
      fit.slope, 2 * fit.slope_se);
  results["rate_kernel"] = o.kernel;
  results["rate_slope"] = fit.slope;
  results["rate_slope_interval_low"] = fit.slope - 2 * fit.slope_se;
  results["rate_slope_interval_high"] = fit.slope + 2 * fit.slope_se;
  results["rate_slope_two_se"] = 2 * fit.slope_se;
  results["rate_slope_theory"] = -0.8;
  const Index last = table.rows() - 1;  // MSE n^{4/5}, constant in theory, at both ends
  results["rate_n_first"] = fit.n(0);
  results["rate_n_last"] = fit.n(last);
  results["rate_h_first"] = table(0, 5);
  results["rate_scaled_mse_first"] = fit.mean_error(0) * std::pow(fit.n(0), 0.8);
  results["rate_scaled_mse_last"] = fit.mean_error(last) * std::pow(fit.n(last), 0.8);
  harness::write_csv(out / "02-rate.csv",
                  {"n", "mse", "mse_lo", "mse_hi", "fitted", "h", "reference"}, table);
}

// ------------------------------------------------------------------------------------
// 5. Choosing h: leave-one-out cross-validation, and a learned bandwidth.
void choose_bandwidth(const Options& o, const ch02::Data& data,
                      const std::filesystem::path& out, std::string& text,
                      harness::Results& results) {
  const Index points = 81;
  const VectorXd log_h = VectorXd::LinSpaced(points, std::log(0.005), std::log(0.5));
  const MatrixXd T = VectorXd::LinSpaced(401, 0.0, 1.0);
  std::vector<std::string> header{"h"};
  MatrixXd table(points, 1 + 4 + 1);
  table.col(0) = log_h.array().exp();
  const Kernel chosen_kernel = attn::parse_kernel(o.kernel);
  say(text,
      "5. Leave-one-out cross-validation on the n = {} points, h from 0.005 to 0.5\n",
      o.n);
  Index col = 1;
  double chosen_h = nan, chosen_cv = nan;
  for (const Kernel k : attn::all_kernels()) {
    header.push_back("cv_" + attn::kernel_name(k));
    double best = std::numeric_limits<double>::infinity(), best_h = nan;
    Index undefined = 0;
    for (Index p = 0; p < points; ++p) {
      double cv = nan;
      try {
        cv = attn::nw_loo_cv(data.X, data.Y, k, table(p, 0));
      } catch (const std::domain_error&) {  // an isolated point: CV(h) is undefined
        ++undefined;
      }
      table(p, col) = cv;
      if (cv < best) best = cv, best_h = table(p, 0);
    }
    ++col;
    if (undefined == points) {  // results.json holds numbers only: no entry then
      say(text, "   {:<13} CV is undefined for every h of the grid\n",
          attn::kernel_name(k));
    } else {
      say(text, "   {:<13} min CV = {:.4f} at h = {:.4f}  (undefined for {} of {} h)\n",
          attn::kernel_name(k), best, best_h, undefined, points);
      results[fmt::format("loo_cv_min_{}", attn::kernel_name(k))] = best;
      results[fmt::format("loo_cv_best_h_{}", attn::kernel_name(k))] = best_h;
    }
    if (k == chosen_kernel) chosen_h = best_h, chosen_cv = best;
  }
  // What CV(h) estimates: the noise variance plus the Gaussian fit's MSE against f. The
  // noise variance is taken from this sample's own noise, mean (y_i - f(x_i))^2.
  double noise2 = 0;
  for (Index i = 0; i < data.X.rows(); ++i)
    noise2 += std::pow(data.Y(i, 0) - ch02::truth(data.X(i, 0)), 2) /
              static_cast<double>(data.X.rows());
  header.push_back("risk_gaussian");
  double best_risk = std::numeric_limits<double>::infinity(), best_risk_h = nan;
  for (Index p = 0; p < points; ++p) {
    const MatrixXd fit =
        attn::nadaraya_watson(T, data.X, data.Y, Kernel::gaussian, table(p, 0));
    double mse = 0;
    for (Index j = 0; j < T.rows(); ++j)
      mse +=
          std::pow(fit(j, 0) - ch02::truth(T(j, 0)), 2) / static_cast<double>(T.rows());
    table(p, col) = noise2 + mse;
    if (table(p, col) < best_risk) best_risk = table(p, col), best_risk_h = table(p, 0);
  }
  harness::write_csv(out / "02-loocv.csv", header, with_gaps(table));

  // Gradient descent on log h, from a bandwidth that is far too smooth.
  const std::vector<attn::BandwidthStep> path =
      attn::learn_bandwidth(data.X, data.Y, 0.3);
  MatrixXd steps(static_cast<Index>(path.size()), 4);
  for (std::size_t t = 0; t < path.size(); ++t)
    steps.row(Index(t)) << static_cast<double>(t), path[t].h, path[t].loss, path[t].grad;
  harness::write_csv(out / "02-learned.csv", {"step", "h", "loss", "grad"}, steps);
  const auto& last = path.back();
  if (std::isnan(chosen_h))
    say(text, "   no h of the grid can be chosen for --kernel {}\n", o.kernel);
  else
    say(text, "   chosen for --kernel {}: h = {:.4f} (CV {:.4f})\n", o.kernel, chosen_h,
        chosen_cv);
  say(text,
      "   learned Gaussian h (gradient descent on log h from 0.3): h = {:.4f}\n"
      "      CV {:.4f}, |dCV/dlog h| = {:.1e} after {} steps\n\n",
      last.h, last.loss, std::abs(last.grad), path.size() - 1);
  results["loo_cv_grid_points"] = points;
  results["risk_best_h_gaussian"] = best_risk_h;  // the minimum of the dashed curve
  results["chosen_kernel"] = o.kernel;
  if (!std::isnan(chosen_h)) {
    results["chosen_bandwidth"] = chosen_h;
    results["chosen_bandwidth_cv"] = chosen_cv;
  }
  results["learned_bandwidth"] = last.h;
  results["learned_bandwidth_cv"] = last.loss;
  results["learned_bandwidth_final_gradient"] = last.grad;
  results["learned_bandwidth_steps"] = path.size() - 1;
  results["learned_bandwidth_start"] = path.front().h;
  for (std::size_t t = 1; t <= 2 && t < path.size(); ++t)  // the first, large steps
    results[fmt::format("learned_bandwidth_step{}", t)] = path[t].h;
}

// ------------------------------------------------------------------------------------
// 6. The limit h -> 0 in floating point: from which s = delta / 2h^2 on the Gaussian
// estimate is the nearest label bit for bit, and from which on the other weights are 0.
void nearest_limit(const ch02::Data& data, std::string& text, harness::Results& results) {
  const Index m = 401;  // the queries of section 1
  const MatrixXd T = VectorXd::LinSpaced(m, 0.0, 1.0);
  std::vector<double> exact, zero;
  double smallest_weight = std::numeric_limits<double>::infinity();
  for (Index j = 0; j < m; ++j) {
    const VectorXd D = attn::squared_distances(T.row(j), data.X).row(0).transpose();
    Index a = 0, b = 0;
    D.minCoeff(&a);
    VectorXd rest = D;
    rest(a) = std::numeric_limits<double>::infinity();
    rest.minCoeff(&b);
    if (!(D(b) > D(a))) continue;  // the two nearest keys tie: no single nearest label
    const ch02::NearestLimit limit = ch02::nearest_limit(T.row(j), data.X, data.Y);
    exact.push_back(limit.exact_from);
    zero.push_back(limit.zero_from);
    // The second-nearest key's weight where the estimate has become its label: not 0.
    const double h = std::sqrt((D(b) - D(a)) / (2 * limit.exact_from));
    smallest_weight = std::min(
        smallest_weight, attn::nw_weights(T.row(j), data.X, Kernel::gaussian, h)(0, b));
  }
  const double ln2 = std::numbers::ln2;
  say(text,
      "6. The limit h -> 0 in floating point: Gaussian kernel, the {} queries of "
      "section 1;\n"
      "   s = delta/2h^2, delta = gap between the nearest and second-nearest squared "
      "distance\n",
      m);
  results["limit_queries"] = m;
  if (exact.empty()) {  // results.json holds numbers only: no entries then
    say(text, "   every query has two nearest keys at the same distance\n\n");
    return;
  }
  std::sort(exact.begin(), exact.end());
  std::sort(zero.begin(), zero.end());
  const double median = exact[exact.size() / 2];
  say(text,
      "   estimate = nearest label bit for bit for every s >= s_exact:\n"
      "      s_exact from {:.2f} to {:.2f}, median {:.2f}  (53 ln 2 = {:.2f})\n"
      "      second-nearest weight at s_exact >= {:.1e} (not 0)\n",
      exact.front(), exact.back(), median, 53 * ln2, smallest_weight);
  say(text,
      "   second-nearest weight exactly 0 for every s >= s_zero:\n"
      "      s_zero from {:.4f} to {:.4f}  (1075 ln 2 = {:.4f})\n\n",
      zero.front(), zero.back(), 1075 * ln2);
  results["limit_exact_s_min"] = exact.front();
  results["limit_exact_s_median"] = median;
  results["limit_exact_s_max"] = exact.back();
  results["limit_exact_s_theory"] = 53 * ln2;  // e^{-s} = 2^{-53}
  results["limit_second_weight_at_exact_min"] = smallest_weight;
  results["limit_zero_s_min"] = zero.front();
  results["limit_zero_s_max"] = zero.back();
  results["limit_zero_s_theory"] = 1075 * ln2;  // e^{-s} = 2^{-1075}
}

// The names --kernel accepts: every kernel of the library.
std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const Kernel k : attn::all_kernels()) names.push_back(attn::kernel_name(k));
  return names;
}

void run(Options& o) {  // --h and --noise are range-checked by the parser
  const std::filesystem::path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  std::string text;
  harness::Results results;
  results["seed"] = o.common.seed;
  results["n"] = o.n;
  results["noise"] = o.noise;
  results["kernel"] = o.kernel;
  results["h"] = o.h;
  results["reps"] = o.reps;
  results["max_n"] = o.max_n;

  const ch02::Data data = ch02::make_data(o.n, o.noise, rng);
  fits(o, data, out, text, results);
  weight_maps(o, data, out, text, results);
  bridge(rng, data, o, text, results);
  rate(o, rng, out, text, results);
  choose_bandwidth(o, data, out, text, results);
  nearest_limit(data, text, results);

  harness::render_figure(
      out, "02-fits", "",
      fmt::format("data='{}'; h1='{:g}'; h2='{:g}'; h3='{:g}'",
                  (out / "02-data.csv").string(), o.h / 2.5, o.h, 4 * o.h));
  harness::render_figure(out, "02-weights", "",
                      fmt::format("h='{:g}'; rows={}; cols={}", o.h, 40, o.n));
  harness::render_figure(out, "02-rate", "",
                      fmt::format("kernel='{}'; slope={:.17g}; slope_se={:.17g}",
                                  o.kernel, results.number("rate_slope"),
                                  (results.number("rate_slope_interval_high") -
                                   results.number("rate_slope")) /
                                      2));
  harness::render_figure(out, "02-loocv", "",
                      fmt::format("learned='{}'", (out / "02-learned.csv").string()));
  harness::finish_program(out, results, text);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{"Chapter 02 — Nadaraya–Watson kernel regression is attention.",
                        "ch02"};
  harness::add_common_options(cli, o.common, ATTN_DEFAULT_OUT);
  harness::add_int_option(cli, "--n", o.n, 2, 20000,
                       "training points of the fits, weight maps and cross-validation");
  harness::add_real_option(cli, "--noise", o.noise, 0.0, 100.0,
                        "standard deviation of the label noise");
  harness::add_choice_option(cli, "--kernel", o.kernel, kernel_names(),
                          "kernel of the rate sweep and of the chosen h");
  harness::add_real_option(cli, "--h", o.h, 1e-9, 1e9,
                        "bandwidth of the weight maps; the fits also use h/2.5 and 4h");
  harness::add_int_option(cli, "--reps", o.reps, 4, 100000,
                       "data sets at n = 100 in the rate sweep (fewer at larger n)");
  harness::add_int_option(cli, "--max-n", o.max_n, 200, 1000000,
                       "largest n of the rate sweep (100, 200, 400, ... up to it)");
  return harness::run_program(cli, argc, argv, [&] {
    if (o.common.quick) {  // --quick shrinks only what the user did not set
      if (!harness::option_given(cli, "--reps")) o.reps = 40;
      if (!harness::option_given(cli, "--max-n")) o.max_n = 1600;
    }
    run(o);
  });
}
