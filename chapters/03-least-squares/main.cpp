// Chapter 03 — Least squares is a special case of attention.
//
// Computes what the chapter shows: the accuracy of three least-squares solvers against the
// condition number, the identities that make least squares an attention system (the
// whitening map L, the factorisations of (X^T X)^-1, the hat matrix, one layer = one
// gradient step), and the source's training experiments (seed 000 §5): an attention layer
// with h = id or softmax trained by Adam at (n, d) = (100, 10), (1000, 10), (1000, 100).
// Writes output.txt (this summary), results.json (reproducible numbers, and wall times under
// keys time_*, which are not), and the CSV + SVG of each figure into --out.

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "attn/attention_regression.hpp"
#include "harness/cli.hpp"
#include "attn/least_squares.hpp"
#include "harness/output.hpp"
#include "attn/random.hpp"
#include "robust.hpp"

namespace {

using harness::say;

using attn::Normalisation;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

struct Options {
  harness::CommonOptions common;
  long n = 100;  // used only when --n or --d is given: otherwise the source's three sizes
  long d = 10;
  long runs = 10;
  long iterations = 1000;
  double lr = attn::experiment_adam.learning_rate;
  double decay = attn::experiment_adam.decay;
  std::string normalisation = "both";
  long threads = 2;
};

struct Config {
  Index n, d;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// ------------------------------------------------------------------------------------
// 1. Accuracy of the normal equations, QR and the SVD against kappa(X).
void conditioning(const Options& o, const std::filesystem::path& out, std::string& text,
                  harness::Results& results) {
  const Index n = 100, d = 10;
  const int seeds = o.common.quick ? 3 : 9;
  say(text,
      "1. Relative error of beta for y = X beta exactly, X {} x {} with condition "
      "number kappa\n   (median over {} matrices)\n",
      n, d, seeds);
  say(text, "   {:>8} {:>12} {:>12} {:>12}\n", "kappa", "normal eq.", "QR", "SVD");
  std::vector<std::vector<harness::CsvCell>> rows;
  double first_failure = 0;
  for (int k = 0; k <= 24; ++k) {  // kappa = 10^0 .. 10^12 in half decades
    const double kappa = std::pow(10.0, 0.5 * k);
    std::vector<double> ne, qr, svd;
    bool ne_failed = false;
    for (int s = 0; s < seeds; ++s) {
      attn::Rng rng(attn::run_seed(o.common.seed, s, 10 + k));
      // [conditioning]
      const MatrixXd X = attn::matrix_with_condition(n, d, kappa, rng);
      const VectorXd beta = attn::random_normal(d, 1, rng);
      const VectorXd y = X * beta;
      qr.push_back(attn::relative_error(attn::least_squares_qr(X, y), beta));
      svd.push_back(attn::relative_error(attn::least_squares_svd(X, y), beta));
      try {  // Cholesky of X^T X fails once kappa^2 nears 1/eps
        ne.push_back(
            attn::relative_error(attn::least_squares_normal_equations(X, y), beta));
      } catch (const std::invalid_argument&) {
        ne_failed = true;
      }
      // [conditioning]
    }
    if (ne_failed && first_failure == 0) first_failure = kappa;
    // An empty cell is a gap in the figure: no answer, rather than a made-up error.
    rows.push_back({kappa, ne_failed ? harness::CsvCell{std::string()} : median(ne),
                    median(qr), median(svd)});
    if (k % 4 == 0) {
      say(text, "   {:>8.0e} {:>12} {:>12.1e} {:>12.1e}\n", kappa,
          ne_failed ? std::string("fails") : fmt::format("{:.1e}", median(ne)),
          median(qr), median(svd));
      const std::string key = fmt::format("kappa_1e{}", k / 2);
      if (!ne_failed) results["ls_error_normal_equations_" + key] = median(ne);
      results["ls_error_qr_" + key] = median(qr);
      results["ls_error_svd_" + key] = median(svd);
    }
  }
  say(text, "   the Cholesky factorisation of X^T X first fails at kappa = {:.0e}\n\n",
      first_failure);
  results["normal_equations_first_failure_kappa"] = first_failure;
  harness::write_csv(out / "03-conditioning.csv", {"kappa", "normal", "qr", "svd"}, rows);
}

// ------------------------------------------------------------------------------------
// 2. Least squares against least absolute deviations under three noise laws of variance 1:
// the best unbiased estimator under Gaussian noise, only the best linear one otherwise.
void estimators(const Options& o, std::string& text, harness::Results& results) {
  const Index n = 50, d = 3, M = 4000;
  attn::Rng rng(attn::run_seed(o.common.seed, 0, 40));
  const MatrixXd X = attn::random_uniform(n, d, rng, -10.0, 10.0);
  const VectorXd beta = attn::random_normal(d, 1, rng);
  const double expected = (X.transpose() * X).inverse().trace();  // E|beta_LS - beta|^2
  say(text,
      "2. Mean squared error |beta_hat - beta|^2 of least squares (LS) and least "
      "absolute\n"
      "   deviations (LAD), X {} x {} fixed, {} noise draws of variance 1 each\n"
      "   (LS's expected value is tr (X^T X)^-1 = {:.3e} under every law)\n",
      n, d, M, expected);
  say(text, "   {:<18} {:>10} {:>10} {:>12}\n", "noise", "LS", "LAD", "LAD / LS");
  results["estimators_ls_mse_expected"] = expected;
  const std::pair<ch03::Noise, const char*> laws[] = {
      {ch03::Noise::gaussian, "gaussian"},
      {ch03::Noise::student_t3, "student_t3"},
      {ch03::Noise::contaminated, "contaminated"}};
  for (const auto& [noise, key] : laws) {
    const ch03::EstimatorComparison c = ch03::compare_estimators(X, beta, noise, M, rng);
    say(text, "   {:<18} {:>10.3e} {:>10.3e} {:>6.2f} (se {:.3f})\n",
        ch03::to_string(noise), c.mse_ls, c.mse_lad, c.ratio, c.ratio_se);
    results[fmt::format("estimators_{}_ls_mse", key)] = c.mse_ls;
    results[fmt::format("estimators_{}_lad_mse", key)] = c.mse_lad;
    results[fmt::format("estimators_{}_lad_over_ls", key)] = c.ratio;
    results[fmt::format("estimators_{}_lad_over_ls_se", key)] = c.ratio_se;
    results[fmt::format("estimators_{}_ls_over_expected", key)] = c.mse_ls / expected;
  }
  say(text, "\n");
}

// ------------------------------------------------------------------------------------
// 3. The identities: L, three factorisations of (X^T X)^-1, the hat matrix, GD steps.
void identities(const Options& o, std::string& text, harness::Results& results) {
  attn::Rng rng(attn::run_seed(o.common.seed, 0, 20));
  const Index n = 100, d = 10;
  const attn::RegressionData data = attn::regression_data(n, d, rng);
  const MatrixXd& X = data.X;
  const VectorXd& Y = data.Y;
  const MatrixXd Xq = attn::random_uniform(50, d, rng, -10.0, 10.0);  // new queries

  // [attention-is-ls]
  const VectorXd beta_ls = attn::least_squares_qr(X, Y);
  const VectorXd y_ls = Xq * beta_ls;
  const MatrixXd L = attn::whitening_map(X);  // L^T L = (X^T X)^-1
  const MatrixXd G_inv = L.transpose() * L;
  const MatrixXd W = attn::random_normal(d, d, rng);  // any invertible W_Q
  const double w_v = 0.5;
  // Three choices with W_Q W_K^T w_v = (X^T X)^-1: W_Q = W_K = L^T; W_Q = I and
  // W_K = (X^T X)^-1; a random W_Q with W_K = (X^T X)^-1 W_Q^-T / w_v.
  const attn::AttentionRegressor choices[] = {
      {L.transpose(), L.transpose(), 1.0},
      {MatrixXd::Identity(d, d), G_inv, 1.0},
      {W, G_inv * W.transpose().inverse() / w_v, w_v}};
  // [attention-is-ls]
  const char* names[] = {"whitened", "identity_query", "random_factorisation"};
  say(text, "3. Least squares as attention, n = {}, d = {}, {} new queries x\n", n, d,
      Xq.rows());
  double worst = 0;
  for (int c = 0; c < 3; ++c) {
    const VectorXd y_attn = attn::predict(choices[c], X, Y, Xq, Normalisation::identity);
    const double e = attn::relative_error(y_attn, y_ls);
    say(text, "   h = id, {:<22} |y_attn - y_LS| / |y_LS| = {:.1e}\n", names[c], e);
    results[fmt::format("attention_equals_ls_{}", names[c])] = e;
    worst = std::max(worst, e);
  }
  results["attention_equals_ls_max"] = worst;
  const MatrixXd XtX = X.transpose() * X;
  const double l1 = attn::relative_error(L.transpose() * L, XtX.inverse());
  const double l2 = (L * XtX * L.transpose() - MatrixXd::Identity(d, d)).lpNorm<Eigen::Infinity>();
  const MatrixXd LXt = L * X.transpose();
  const double l3 = (LXt * LXt.transpose() - MatrixXd::Identity(d, d)).lpNorm<Eigen::Infinity>();
  say(text,
      "   whitening map L: |L^T L - (X^T X)^-1| rel = {:.1e}; max|L X^T X L^T - I| = "
      "{:.1e};\n   rows of L X^T orthonormal to {:.1e}\n",
      l1, l2, l3);
  results["whitening_LtL_minus_inverse"] = l1;
  results["whitening_LXtXLt_minus_identity"] = l2;
  results["whitening_LXt_rows_orthonormal"] = l3;

  // Hat matrix, on the training rows: the unnormalised attention matrix of the LS system.
  const MatrixXd H = attn::hat_matrix(X);
  const MatrixXd S = attn::attention_matrix(choices[0], X, Normalisation::identity);
  const double negative =
      static_cast<double>((H.array() < 0).count()) / static_cast<double>(H.size());
  MatrixXd X1(n, d + 1);  // with an intercept column
  X1 << VectorXd::Ones(n), X;
  const MatrixXd H1 = attn::hat_matrix(X1);
  say(text,
      "   hat matrix H: max|S - H| = {:.1e}, max|H^2 - H| = {:.1e}, trace = {:.12f}\n",
      (S - H).lpNorm<Eigen::Infinity>(), (H * H - H).lpNorm<Eigen::Infinity>(), H.trace());
  say(text,
      "   {:.0f}% of its entries are negative (min {:.3f}); max|row sum - 1| = {:.2f} "
      "without and {:.1e} with an intercept column\n",
      100 * negative, H.minCoeff(), (H.rowwise().sum().array() - 1).abs().maxCoeff(),
      (H1.rowwise().sum().array() - 1).abs().maxCoeff());
  results["hat_attention_minus_H"] = (S - H).lpNorm<Eigen::Infinity>();
  results["hat_idempotence"] = (H * H - H).lpNorm<Eigen::Infinity>();
  results["hat_trace"] = H.trace();
  results["hat_fraction_negative"] = negative;
  results["hat_min"] = H.minCoeff();
  results["hat_rowsum_deviation_no_intercept"] =
      (H.rowwise().sum().array() - 1).abs().maxCoeff();
  results["hat_rowsum_deviation_intercept"] =
      (H1.rowwise().sum().array() - 1).abs().maxCoeff();

  // One layer = one gradient step on (1/2)|Y - X beta|^2 from beta = 0.
  // [one-step]
  const double eta = 1.0 / XtX.diagonal().sum();
  const attn::AttentionRegressor gd_layer{MatrixXd::Identity(d, d),
                                          eta * MatrixXd::Identity(d, d), 1.0};
  const VectorXd beta_1 = eta * X.transpose() * Y;  // beta_0 - eta grad = eta X^T Y
  const double gd = attn::relative_error(
      attn::predict(gd_layer, X, Y, Xq, Normalisation::identity), Xq * beta_1);
  // [one-step]
  // The preconditioned step beta_1 = (X^T X)^-1 X^T Y is Newton's: it lands on beta_LS.
  const double newton = attn::relative_error(G_inv * X.transpose() * Y, beta_ls);
  say(text,
      "   one layer W_Q W_K^T = eta I vs one gradient step: {:.1e}; Newton step vs "
      "LS: {:.1e}\n\n",
      gd, newton);
  results["one_layer_equals_one_gd_step"] = gd;
  results["newton_step_equals_ls"] = newton;
}

// ------------------------------------------------------------------------------------
// 4. The hat-matrix heatmap: 20 samples, 3 features.
void hat_figure(const Options& o, const std::filesystem::path& out,
                harness::Results& results) {
  attn::Rng rng(attn::run_seed(o.common.seed, 0, 30));
  const MatrixXd X = attn::random_uniform(20, 3, rng, -10.0, 10.0);
  const MatrixXd H = attn::hat_matrix(X);
  const Index off_diagonal = H.size() - H.rows();
  const Index negative = (H.array() < 0).count();  // the diagonal is positive
  results["hat_figure_offdiagonal_fraction_negative"] =
      static_cast<double>(negative) / static_cast<double>(off_diagonal);
  MatrixXd table(H.size(), 3);
  for (Index i = 0, r = 0; i < H.rows(); ++i)
    for (Index j = 0; j < H.cols(); ++j, ++r)
      table.row(r) << double(i), double(j), H(i, j);
  harness::write_csv(out / "03-hat-matrix.csv", {"row", "col", "value"}, table);
}

// ------------------------------------------------------------------------------------
// 5. The source's experiments: train the attention system with h = id and softmax.
struct Outcome {
  std::vector<attn::RunResult> runs;
  double seconds = 0;
};

// Geometric mean and geometric standard deviation factor of positive numbers.
std::pair<double, double> geometric(const std::vector<double>& v) {
  double s = 0, s2 = 0;
  for (const double x : v) {
    s += std::log(x);
    s2 += std::log(x) * std::log(x);
  }
  const double m = s / double(v.size());
  const double var =
      v.size() > 1 ? (s2 - double(v.size()) * m * m) / double(v.size() - 1) : 0;
  return {std::exp(m), std::exp(std::sqrt(std::max(var, 0.0)))};
}

// Training time of one Adam iteration (forward, backward, update), averaged over the runs.
double ms_per_iteration(const std::vector<attn::RunResult>& runs) {
  double s = 0;
  for (const auto& r : runs) s += r.seconds / double(r.loss.size() - 1);
  return 1e3 * s / double(runs.size());
}

std::string config_name(Config c) {
  return fmt::format("n{}_d{}", c.n, c.d);
}

Outcome train_config(const Options& o, Config c, Normalisation h) {
  attn::ExperimentConfig e;
  e.n = c.n;
  e.d = c.d;
  e.h = h;
  e.runs = int(o.runs);
  e.iterations = int(o.iterations);
  e.adam.learning_rate = o.lr;
  e.adam.decay = o.decay;
  e.seed = o.common.seed;
  e.threads = int(o.threads);
  e.on_run_done = [&](int done, int total) {
    harness::progress(fmt::format("training (n, d) = ({}, {}), h = {}: {} of {} runs done",
                               c.n, c.d, attn::to_string(h), done, total));
  };
  const auto start = std::chrono::steady_clock::now();
  Outcome result{attn::run_experiment(e), 0};
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  harness::progress("");
  return result;
}

void experiments(const Options& o, const std::vector<Config>& configs,
                 const std::filesystem::path& out, std::string& text, harness::Results& results,
                 std::vector<std::string>& figures) {
  const bool with_id = o.normalisation != "softmax";
  const bool with_softmax = o.normalisation != "identity";
  say(text,
      "4. Training the attention system (seed 000 §5): {} runs x {} Adam iterations, "
      "lr {:g}, decay {:g}\n",
      o.runs, o.iterations, o.lr, o.decay);
  std::vector<std::vector<harness::CsvCell>> error_rows;
  double total_seconds = 0;
  long runs_below_1e_4 = 0, id_runs = 0;  // h = id, over all configurations
  long most_iterations_to_1pct = 0;        // the slowest configuration's count
  double error_max = 0, excess_max = 0;
  for (std::size_t ci = 0; ci < configs.size(); ++ci) {
    const Config c = configs[ci];
    const std::string name = config_name(c);
    Outcome id, sm;
    if (with_id) id = train_config(o, c, Normalisation::identity);
    if (with_softmax) sm = train_config(o, c, Normalisation::softmax);
    const auto& any = with_id ? id.runs : sm.runs;
    std::vector<double> ls_loss, ls_test;
    for (const auto& r : any) {
      ls_loss.push_back(r.ls_loss);
      ls_test.push_back(r.ls_test_loss);
    }
    say(text,
        "   (n, d) = ({}, {}): least-squares loss {:.4f} (median over runs), "
        "held out {:.4f}\n",
        c.n, c.d, median(ls_loss), median(ls_test));
    results[name + "_ls_loss_median"] = median(ls_loss);
    results[name + "_ls_test_loss_median"] = median(ls_test);

    // Loss curves: geometric mean and a x/÷ one geometric-sd band over the runs.
    std::vector<std::vector<harness::CsvCell>> rows;
    const auto ls_mean = geometric(ls_loss).first;
    long within_1pct = -1;  // first iteration whose id curve is within 1% of the LS line
    for (long t = 0; t <= o.iterations; ++t) {
      std::vector<harness::CsvCell> row{double(t)};
      for (const Outcome* h : {&id, &sm}) {
        if (h->runs.empty()) {
          row.insert(row.end(), 3, std::string());
          continue;
        }
        std::vector<double> at_t;
        for (const auto& r : h->runs) at_t.push_back(r.loss[std::size_t(t)]);
        const auto [m, f] = geometric(at_t);
        row.insert(row.end(), {m, m / f, m * f});
        if (h == &id && within_1pct < 0 && m <= 1.01 * ls_mean) within_1pct = t;
      }
      row.push_back(ls_mean);
      rows.push_back(row);
    }
    const std::string fig = "03-loss-" + name;
    harness::write_csv(out / (fig + ".csv"),
                    {"iteration", "id_mean", "id_lo", "id_hi", "softmax_mean",
                     "softmax_lo", "softmax_hi", "ls"},
                    rows);
    figures.push_back(fig);

    if (with_id) {
      std::vector<double> errors, final_loss, excess;
      for (std::size_t r = 0; r < id.runs.size(); ++r) {
        const auto& run = id.runs[r];
        errors.push_back(*run.error_rate);
        final_loss.push_back(run.loss.back());
        excess.push_back(run.loss.back() / run.ls_loss - 1);
        error_rows.push_back(
            {double(ci), double(r), *run.error_rate, fmt::format("{} × {}", c.n, c.d)});
      }
      // What training found: small projections, and a product w_v W_Q W_K^T that is not
      // (X^T X)^-1 although beta_eq is beta_LS (d equations for d^2 unknowns).
      std::vector<double> size_w, size_v, product;
      for (std::size_t r = 0; r < id.runs.size(); ++r) {
        const attn::AttentionRegressor& p = id.runs[r].parameters;
        attn::Rng data_rng(attn::run_seed(o.common.seed, int(r), 0));  // the run's data
        const MatrixXd X = attn::regression_data(c.n, c.d, data_rng).X;
        const MatrixXd G_inv = (X.transpose() * X).inverse();
        size_w.push_back(0.5 * (p.W_Q.cwiseAbs().mean() + p.W_K.cwiseAbs().mean()));
        size_v.push_back(std::abs(p.w_v));
        product.push_back(attn::relative_error(p.w_v * p.W_Q * p.W_K.transpose(), G_inv));
      }
      const double worst = *std::max_element(errors.begin(), errors.end());
      say(text,
          "     h = id:      error rate |beta_eq - beta_LS|/|beta_LS| max {:.1e}, "
          "median {:.1e}; final loss / LS loss - 1: max {:.1e}\n",
          worst, median(errors), *std::max_element(excess.begin(), excess.end()));
      say(text,
          "                  mean |entry| of W_Q, W_K {:.1e}, |w_v| {:.1e}; |w_v W_Q W_K^T "
          "- "
          "(X^T X)^-1| / |(X^T X)^-1| = {:.2f} (medians)\n",
          median(size_w), median(size_v), median(product));
      results[name + "_id_iterations_to_within_1pct"] = double(within_1pct);
      // never within 1% counts as one more iteration than were run
      most_iterations_to_1pct = std::max(
          most_iterations_to_1pct, within_1pct < 0 ? o.iterations + 1 : within_1pct);
      runs_below_1e_4 +=
          std::count_if(errors.begin(), errors.end(), [](double e) { return e <= 1e-4; });
      id_runs += long(errors.size());
      error_max = std::max(error_max, worst);
      excess_max = std::max(excess_max, *std::max_element(excess.begin(), excess.end()));
      results[name + "_id_mean_abs_W_median"] = median(size_w);
      results[name + "_id_abs_w_v_median"] = median(size_v);
      results[name + "_id_product_vs_xtx_inverse_median"] = median(product);
      results[name + "_id_error_rate_max"] = worst;
      results[name + "_id_error_rate_median"] = median(errors);
      results[name + "_id_final_loss_median"] = median(final_loss);
      results[name + "_id_final_loss_over_ls_minus_1_max"] =
          *std::max_element(excess.begin(), excess.end());
      results["time_" + name + "_id_seconds"] = id.seconds;
      results["time_" + name + "_id_ms_per_iteration"] = ms_per_iteration(id.runs);
      total_seconds += id.seconds;
    }
    if (with_softmax) {
      std::vector<double> final_loss, ratio, test_ratio;
      for (const auto& run : sm.runs) {
        final_loss.push_back(run.loss.back());
        ratio.push_back(run.loss.back() / run.ls_loss);
        test_ratio.push_back(run.test_loss / run.ls_test_loss);
      }
      say(text,
          "     h = softmax: final loss median {:.4f} = {:.2f} x LS (range {:.2f} to "
          "{:.2f}); held out {:.2f} x LS\n",
          median(final_loss), median(ratio),
          *std::min_element(ratio.begin(), ratio.end()),
          *std::max_element(ratio.begin(), ratio.end()), median(test_ratio));
      results[name + "_softmax_final_loss_median"] = median(final_loss);
      results[name + "_softmax_over_ls_median"] = median(ratio);
      results[name + "_softmax_over_ls_min"] =
          *std::min_element(ratio.begin(), ratio.end());
      results[name + "_softmax_over_ls_max"] =
          *std::max_element(ratio.begin(), ratio.end());
      results[name + "_softmax_test_over_ls_test_median"] = median(test_ratio);
      results["time_" + name + "_softmax_seconds"] = sm.seconds;
      results["time_" + name + "_softmax_ms_per_iteration"] = ms_per_iteration(sm.runs);
      // 4 n^2 d flops per iteration: the two n x n products (scores, and C = X^T E X).
      results["time_" + name + "_softmax_gflops"] =
          4.0 * double(c.n) * double(c.n) * double(c.d) / ms_per_iteration(sm.runs) / 1e6;
      total_seconds += sm.seconds;
    }
  }
  if (with_id) {
    results["id_runs_error_below_1e-4"] = double(runs_below_1e_4);
    // The slowest configuration's iterations to within 1% (iterations + 1 if one never got
    // there); the exact counts move by a few iterations with the CPU's rounding.
    results["id_iterations_to_within_1pct_max"] = double(most_iterations_to_1pct);
    results["id_runs"] = double(id_runs);
    results["id_error_rate_max"] = error_max;
    results["id_final_loss_over_ls_minus_1_max"] = excess_max;
    harness::write_csv(out / "03-error-rates.csv", {"config", "run", "error_rate", "label"},
                    error_rows);
    figures.push_back("03-error-rates");
  }
  results["time_experiments_seconds"] = total_seconds;
  results["time_threads"] = o.threads;
  say(text, "\n");
}

void run(Options& o, const harness::CommandLine& cli) {
  std::vector<Config> configs{{100, 10}, {1000, 10}, {1000, 100}};
  if (o.common.quick) configs = {{100, 10}, {400, 10}};
  if (harness::option_given(cli, "--n") || harness::option_given(cli, "--d")) {
    // n = d would be a valid least-squares problem, but its fit is exact: the loss the
    // experiment compares against would be 0.
    if (o.d >= o.n)
      throw harness::usage_error(
          "--d", fmt::format("must be less than --n = {}: the experiment needs more "
                             "samples than features (got {})",
                             o.n, o.d));
    configs = {{o.n, o.d}};
  }
  const std::filesystem::path out = harness::begin_output(o.common.out);

  std::string text;
  harness::Results results;
  results["seed"] = o.common.seed;
  results["runs"] = o.runs;
  results["iterations"] = o.iterations;
  results["learning_rate"] = o.lr;
  results["decay"] = o.decay;
  std::vector<std::string> figures{"03-conditioning", "03-hat-matrix"};

  harness::progress("least squares against the condition number");
  conditioning(o, out, text, results);
  harness::progress("least squares against least absolute deviations");
  estimators(o, text, results);
  identities(o, text, results);
  hat_figure(o, out, results);
  experiments(o, configs, out, text, results, figures);

  for (const auto& f : figures) {
    if (f.rfind("03-loss-", 0) == 0) {
      const auto c = std::find_if(configs.begin(), configs.end(), [&](Config k) {
        return "03-loss-" + config_name(k) == f;
      });
      harness::render_figure(out, f, "03-loss-curves",
                          fmt::format("title='(n, d) = ({}, {}), {} runs'; systems='{}'",
                                      c->n, c->d, o.runs, o.normalisation));
    } else {
      harness::render_figure(out, f);
    }
  }
  // The wall time is printed but kept out of output.txt, which the book quotes: it depends on
  // the machine and on what else runs, unlike every other number here.
  harness::finish_program(
      out, results, text,
      fmt::format("training took {:.1f} s on {} thread(s); results.json has the details "
                  "(time_*)\n",
                  results.number("time_experiments_seconds"), o.threads));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{
      "Chapter 03 — Least squares is a special case of attention; the source's training "
      "experiments.",
      "ch03"};
  harness::add_common_options(cli, o.common, ATTN_DEFAULT_OUT);
  harness::add_int_option(cli, "--n", o.n, 1, 100000,
                          "training rows; with --n or --d, one configuration replaces the "
                          "source's three");
  harness::add_int_option(cli, "--d", o.d, 1, 1000, "features, fewer than --n");
  harness::add_int_option(cli, "--runs", o.runs, 1, 1000,
                          "independent runs per configuration", 3);
  harness::add_int_option(cli, "--iterations", o.iterations, 1, 1000000,
                          "Adam iterations per run", 300);
  harness::add_real_option(cli, "--lr", o.lr, 1e-12, 1, "Adam's learning rate");
  harness::add_real_option(cli, "--decay", o.decay, 1e-6, 1,
                        "learning-rate decay per iteration (1 = constant)");
  harness::add_choice_option(cli, "--normalisation", o.normalisation,
                          {"both", "identity", "softmax"}, "which systems h to train");
  harness::add_int_option(
      cli, "--threads", o.threads, 1, 64,
      "worker threads (runs are independent; results do not depend on it)");
  return harness::run_program(cli, argc, argv, [&] { run(o, cli); });
}
