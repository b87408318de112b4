#pragma once
// The regression experiment of chapters 03 and 04 (the least-squares paper, section 5):
// runs of training one attention layer (attn/attention_regression.hpp, the mathematics) on
// freshly drawn data, compared with least squares. The plumbing around the mathematics:
// the configuration with its hooks, the runs on worker threads, their wall time and a
// progress callback.

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "attn/attention.hpp"  // Normalisation
#include "attn/attention_regression.hpp"

namespace experiments {

// One configuration of the source's experiment: `runs` independent runs.
struct ExperimentConfig {
  Eigen::Index n = 100;  // training rows
  Eigen::Index d = 10;   // features
  attn::Normalisation h = attn::Normalisation::identity;
  int runs = 10;                            // independent runs
  int iterations = 1000;                    // Adam updates per run
  attn::Adam adam = attn::experiment_adam;  // optimiser settings
  std::uint64_t seed = 0;  // base seed; run r uses seeds derived from (seed, r)
  // Worker threads: runs are independent and go in parallel; with fewer runs than
  // threads, each run's evaluations share the threads left over (attn::train()).
  int threads = 1;
  // w_v at the start; empty: attn::initial_value_weight() of the initial projections.
  std::optional<double> initial_w_v;
  // The inputs the experiment works with, made from the source's rows X (training
  // and held-out alike, before anything else: least squares sees them too). Empty: the
  // source's rows themselves. (Chapter 04 passes the same currents in another unit.)
  std::function<Eigen::MatrixXd(const Eigen::MatrixXd& X)> inputs;
  // A linear change of features for the attention system alone, fitted on the training
  // inputs: returns the d x d matrix T, and the system is trained on
  // XT and queried with X_test T (tokens are rows, the map acts from
  // the right). Its equivalent parameter in the inputs' coordinates is
  // T beta_eq, which the error rate compares with beta_LS. Empty:
  // T = I. (Chapter 04 passes a whitening map.)
  std::function<Eigen::MatrixXd(const Eigen::MatrixXd& X)> features;
  // Called after each finished run with (runs finished, runs in all), one call at a time,
  // from the thread that finished it: for progress lines. May be empty.
  std::function<void(int, int)> on_run_done;
};

// The outcome of one run.
struct RunResult {
  std::vector<double> loss;  // loss curve, as attn::TrainingResult::loss
  // |beta_eq - beta_LS| / |beta_LS| after
  // training; empty for softmax, which has no equivalent beta.
  std::optional<double> error_rate;
  double ls_loss = 0;  // (1/n) |Xbeta_LS - Y|^2
  // Held-out loss of the trained system: n new rows from the same distribution
  // (same beta), each attending to the training rows (attn::predict()).
  double test_loss = 0;
  double ls_test_loss = 0;  // held-out loss of beta_LS on the same rows
  double seconds = 0;  // wall time of the training (not reproducible, unlike the rest)
  attn::AttentionRegressor parameters;  // W_Q, W_K, w_v after training
};

// Runs one configuration: each run draws its own data (attn::regression_data()) and
// initial parameters (attn::random_regressor()) from attn::run_seed(), makes the inputs and features
// (ExperimentConfig::inputs, ExperimentConfig::features), trains, and compares with least squares
// (attn::least_squares_qr()). Results are in run order and, apart from `seconds`,
// bit-for-bit the same for any number of threads.
// \throws std::invalid_argument unless 1 <= d <= n, runs >= 1,
//         iterations >= 0, threads >= 1, Adam's settings are valid, and
//         the inputs and features have the shapes above. If runs fail, the error of the
//         lowest failing run, as on one thread (runs are shared by attn::parallel_for()).
std::vector<RunResult> run_experiment(const ExperimentConfig& config);

}  // namespace experiments
