#pragma once
// Chapter 03's computations, which the program (main.cpp), its tests and the live figures
// (live.cpp) all call: the data of sections 3 to 6, least absolute deviations against least
// squares (section 2), and the summaries of the training experiments (section 7: a
// configuration's runs, timed; medians, the loss curves' geometric mean and spread, what
// the identity system's training found). main.cpp prints, records and draws them.

#include <Eigen/Dense>
#include <cstdint>
#include <utility>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/random.hpp"
#include "experiments/regression_experiment.hpp"

namespace ch03 {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// 2. Least squares against a robust estimator.
//
// Least squares is the best unbiased estimator under Gaussian noise (it attains the
// Cramér–Rao bound); without normality the Gauss–Markov theorem only makes it the best
// *linear* unbiased one. Least absolute deviations (LAD) is not linear in Y, and under
// heavy-tailed noise its error is smaller.

// Least absolute deviations: the beta that minimises sum_i |y_i - x_i^T beta|, found
// exactly by the simplex method (ch03.cpp explains the walk).
// \throws std::invalid_argument unless X has full column rank (so n >= d) and Y one finite
//   target per row; std::runtime_error if no minimum is found after 100 n pivots.
VectorXd least_absolute_deviations(const MatrixXd& X, const VectorXd& Y);

// Three noise laws, each scaled to variance 1, so that least squares has the same
// covariance (X^T X)^-1 under all three: Gauss–Markov needs only the mean and variance.
enum class Noise { gaussian, student_t3, contaminated };
const char* to_string(Noise noise);
double draw_noise(Noise noise, attn::Rng& rng);

// Mean squared error |beta_hat - beta|^2 of both estimators over the same M noise draws,
// X and beta fixed; ratio = mse_lad / mse_ls, and ratio_se its standard error by the delta
// method on the paired draws (a_m = LAD's squared error, b_m = LS's):
// Var(ratio) ~ Var(a - ratio b) / (M mean(b)^2).
struct EstimatorComparison {
  double mse_ls = 0, mse_lad = 0, ratio = 0, ratio_se = 0;
};
EstimatorComparison compare_estimators(const MatrixXd& X, const VectorXd& beta,
                                       Noise noise, Index M, attn::Rng& rng);

// 3 to 6. Least squares as attention, on one data set: the source's regression data (seed
// stream 20 of `seed`) and 50 new queries drawn after them; rng continues that stream.
struct IdentitiesData {
  attn::RegressionData data;
  MatrixXd queries;
  attn::Rng rng;
};
IdentitiesData identities_data(std::uint64_t seed, Index n, Index d);

// Section 6's step size eta = 1 / tr(X^T X), below 2 / lambda_max(X^T X): one layer with
// W_Q W_K^T = eta I is one gradient step on (1/2)|Y - X beta|^2 from beta = 0.
double one_step_size(const MatrixXd& X);

// Section 6 continued: k layers against k gradient steps from beta = 0, for k = 0 .. steps.
// Each layer (h = id, W_Q = I, W_K = eta I, w_v = 1) reads the training tokens' residuals
// r: the query gets eta x^T X^T r, the tokens r <- r - eta X X^T r. Rows k: the predictions
// at the queries after k layers and after k steps.
struct LayersAndSteps {
  MatrixXd layers;  // (steps + 1) x queries
  MatrixXd steps;   // (steps + 1) x queries
};
LayersAndSteps layers_and_gradient_steps(const MatrixXd& X, const VectorXd& Y,
                                         const MatrixXd& queries, double eta, int steps);

// Section 5's samples (seed stream 30 of `seed`): X, n x d, uniform on [-10, 10], then
// beta ~ N(0, I_d) and Y = X beta + N(0, I_n) drawn after it.
struct HatSamples {
  MatrixXd X;
  VectorXd Y;
};
HatSamples hat_samples(std::uint64_t seed, Index n, Index d);

// The share of the off-diagonal entries of a hat matrix that are negative (its diagonal
// is positive).
double offdiagonal_fraction_negative(const MatrixXd& H);

// 7. The runs of one configuration and one h, timed.
struct Trained {
  std::vector<experiments::RunResult> runs;  // empty: this h was not trained
  double seconds = 0;                        // wall time of all runs (not reproducible)
};
Trained train(const experiments::ExperimentConfig& config);

// f(run) for every run.
template <typename F>
std::vector<double> each(const Trained& t, F f) {
  std::vector<double> v;
  for (const experiments::RunResult& run : t.runs) v.push_back(f(run));
  return v;
}

// Geometric mean and geometric standard deviation factor of positive numbers.
std::pair<double, double> geometric(const std::vector<double>& v);

// Training time of one Adam iteration (forward, backward, update), averaged over the runs.
double ms_per_iteration(const Trained& t);

// The loss curves of one configuration, the data of its figure: per iteration, for h = id
// and h = softmax, the geometric mean over the runs and a x/÷ one geometric-sd band (NaN
// for an h not trained), then the least-squares loss `ls`; and the first iteration at
// which the id curve is within 1% of `ls` (-1: none).
struct LossCurves {
  std::vector<std::vector<double>> rows;
  long within_1pct = -1;
};
LossCurves loss_curves(const Trained& id, const Trained& sm, double ls);

// What the identity system's training found, median over the runs: small projections
// (mean |entry| of W_Q and W_K, |w_v|), and a product w_v W_Q W_K^T that is not
// (X^T X)^-1 (its relative distance from it), although beta_eq is beta_LS: d equations
// for d^2 unknowns. Each run's X is drawn again from its seed, as run_experiment() drew it.
struct Found {
  double mean_abs_W = 0, abs_w_v = 0, product_vs_xtx_inverse = 0;
};
Found what_training_found(const Trained& id, std::uint64_t seed, Index n, Index d);

}  // namespace ch03
