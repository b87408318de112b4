#include "experiments/regression_experiment.hpp"

#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "attn/least_squares.hpp"
#include "attn/parallel.hpp"
#include "attn/random.hpp"

namespace experiments {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Throws std::invalid_argument(message) unless ok.
void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

// "rows x cols", as in "X is 3x4".
std::string shape(Index rows, Index cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::string shape(const MatrixXd& M) {
  return shape(M.rows(), M.cols());
}

// ExperimentConfig::inputs applied to X, checked: same shape, finite.
MatrixXd made_inputs(const std::function<MatrixXd(const MatrixXd&)>& inputs,
                     const MatrixXd& X) {
  MatrixXd made = inputs(X);
  require(
      made.rows() == X.rows() && made.cols() == X.cols() && made.allFinite(),
      "run_experiment: the inputs are " + shape(made) + ", expected finite " + shape(X));
  return made;
}

}  // namespace

std::vector<RunResult> run_experiment(const ExperimentConfig& c) {
  require(c.d >= 1 && c.n >= c.d,
          "run_experiment: need 1 <= d <= n (got n = " + std::to_string(c.n) +
              ", d = " + std::to_string(c.d) + ")");
  require(c.runs >= 1,
          "run_experiment: runs must be >= 1 (got " + std::to_string(c.runs) + ")");
  require(c.iterations >= 0, "run_experiment: iterations must be >= 0 (got " +
                                 std::to_string(c.iterations) + ")");
  require(c.threads >= 1,
          "run_experiment: threads must be >= 1 (got " + std::to_string(c.threads) + ")");
  attn::validate(c.adam);
  require(!c.initial_w_v || std::isfinite(*c.initial_w_v),
          "run_experiment: initial_w_v must be finite");

  std::vector<RunResult> results(static_cast<std::size_t>(c.runs));
  auto one_run = [&](int r, int threads) {
    attn::Rng data_rng(attn::run_seed(c.seed, r, 0)),
        init_rng(attn::run_seed(c.seed, r, 1));
    attn::RegressionData data = attn::regression_data(c.n, c.d, data_rng);
    if (c.inputs) data.X = made_inputs(c.inputs, data.X);
    // T: the attention system sees X T; empty for T = I.
    const MatrixXd T = c.features ? c.features(data.X) : MatrixXd();
    require(T.size() == 0 || (T.rows() == c.d && T.cols() == c.d && T.allFinite()),
            "run_experiment: the feature map is " + shape(T) + ", expected finite " +
                shape(c.d, c.d));
    const MatrixXd features = T.size() > 0 ? MatrixXd(data.X * T) : data.X;
    attn::AttentionRegressor initial = attn::random_regressor(c.d, init_rng);
    initial.w_v = c.initial_w_v
                      ? *c.initial_w_v
                      : attn::initial_value_weight(initial, features, data.Y, c.h);
    const auto start = std::chrono::steady_clock::now();
    attn::TrainingResult trained =
        attn::train(features, data.Y, c.h, initial, c.iterations, c.adam, threads);
    const std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    RunResult& out = results[static_cast<std::size_t>(r)];
    const VectorXd beta_ls = attn::least_squares_qr(data.X, data.Y);
    out.ls_loss = (data.X * beta_ls - data.Y).squaredNorm() / static_cast<double>(c.n);
    // Held-out rows: same beta, new features and noise.
    attn::Rng test_rng(attn::run_seed(c.seed, r, 2));
    const MatrixXd X_test = attn::random_uniform(c.n, c.d, test_rng, -10.0, 10.0);
    const VectorXd Y_test = X_test * data.beta + attn::random_normal(c.n, 1, test_rng);
    const MatrixXd X_test_inputs = c.inputs ? made_inputs(c.inputs, X_test) : X_test;
    const MatrixXd test_features =
        T.size() > 0 ? MatrixXd(X_test_inputs * T) : X_test_inputs;
    out.test_loss =
        (attn::predict(trained.parameters, features, data.Y, test_features, c.h) - Y_test)
            .squaredNorm() /
        static_cast<double>(c.n);
    out.ls_test_loss =
        (X_test_inputs * beta_ls - Y_test).squaredNorm() / static_cast<double>(c.n);
    if (c.h == attn::Normalisation::identity) {
      VectorXd beta_eq = attn::equivalent_beta(trained.parameters, features, data.Y);
      if (T.size() > 0) beta_eq = T * beta_eq;  // in the inputs' coordinates
      out.error_rate = (beta_eq - beta_ls).norm() / beta_ls.norm();
    }
    out.loss = std::move(trained.loss);
    out.parameters = std::move(trained.parameters);
    out.seconds = elapsed.count();
  };

  // Runs are handed out in order (attn::parallel_for()); each writes only its own slot,
  // and its numbers depend only on (seed, run), so neither the thread count nor the
  // schedule changes them, and a failing run reports the error of the lowest one. With
  // fewer runs than threads, each run's evaluations share the threads left over (worker w
  // gets inner[w] threads); train() gives the same numbers for any count.
  const int workers = attn::parallel_workers(c.runs, c.threads);
  std::vector<int> inner(static_cast<std::size_t>(workers), c.threads / workers);
  for (int w = 0; w < c.threads % workers; ++w) ++inner[static_cast<std::size_t>(w)];
  std::mutex report;
  int done = 0;
  attn::parallel_for(c.runs, c.threads, [&](Index r, int w) {
    one_run(static_cast<int>(r), inner[static_cast<std::size_t>(w)]);
    const std::lock_guard lock(report);
    ++done;
    if (c.on_run_done) c.on_run_done(done, c.runs);
  });
  return results;
}

}  // namespace experiments
