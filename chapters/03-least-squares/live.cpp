// Chapter 03's live figures: what the page computes when a reader moves a control
// (code/live/live.hpp explains the mechanism; live.js draws the results). The data and the
// computations are the program's, from the chapter's module (ch03.hpp).
#include <cmath>
#include <cstdint>
#include <string>

#include "attn/attention_regression.hpp"
#include "attn/least_squares.hpp"
#include "ch03.hpp"
#include "live.hpp"

namespace {

using attn::Normalisation;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Figure 3.2 live: the hat matrix H = X (X^T X)^-1 X^T of n samples with d features drawn
// uniformly from -10 to 10 (ch03::hat_samples, as the program's figure), optionally with
// an intercept column; targets Y = X beta + noise drawn after X.
live::Figure hat(const live::Params& p) {
  const int n = p.integer("n", 2, 24);
  const int d = p.integer("d", 1, 8);
  const bool intercept = p.integer("intercept", 0, 1) == 1;
  const int seed = p.integer("seed", 0, 1000000);
  const ch03::HatSamples samples =
      ch03::hat_samples(static_cast<std::uint64_t>(seed), n, d);
  const MatrixXd& X0 = samples.X;
  const VectorXd& Y = samples.Y;
  MatrixXd X(n, d + (intercept ? 1 : 0));
  if (intercept)
    X << VectorXd::Ones(n), X0;
  else
    X = X0;

  const MatrixXd H = attn::hat_matrix(X);
  // The same matrix as the unnormalised attention weights of the least-squares system,
  // W_Q = W_K = L^T, w_v = 1 (section 3's whitened choice), on the training rows.
  const MatrixXd L = attn::whitening_map(X);
  const MatrixXd S =
      attn::attention_matrix({L.transpose(), L.transpose(), 1.0}, X, Normalisation::identity);
  const VectorXd fit_ls = X * attn::least_squares_qr(X, Y);  // X beta_LS

  const double negative = ch03::offdiagonal_fraction_negative(H);
  live::Figure f;
  f.matrix("H", H);
  f.number("columns", static_cast<double>(X.cols()));
  f.number("trace", H.trace());
  f.number("idempotence", (H * H - H).lpNorm<Eigen::Infinity>());
  f.number("attention_minus_H", (S - H).lpNorm<Eigen::Infinity>());
  f.number("fit_vs_ls", attn::relative_error(H * Y, fit_ls));
  f.number("rowsum_deviation", (H.rowwise().sum().array() - 1).abs().maxCoeff());
  f.number("offdiag_negative", negative);
  f.number("offdiag_negative_pct", 100.0 * negative);
  f.number("min_weight", H.minCoeff());
  f.number("max_abs_weight", H.cwiseAbs().maxCoeff());
  return f;
}

// Section 6 live: k linear-attention layers (h = id, W_Q W_K^T = eta I, w_v = 1, the values
// the residuals of the training tokens) against k gradient steps on (1/2)|Y - X beta|^2 from
// beta = 0, on section 3's data (regression_data, seed stream 20) and its 50 new queries.
constexpr int max_layers = 50;

live::Figure gd_layers(const live::Params& p) {
  const int n = p.integer("n", 1, 100);
  const int d = p.integer("d", 1, 10);
  const int k = p.integer("k", 0, max_layers);
  const std::string rate = p.choice("eta", {"trace", "0.25", "0.5", "1", "1.5", "1.9", "2.1"});
  const int seed = p.integer("seed", 0, 1000000);
  const ch03::IdentitiesData set =
      ch03::identities_data(static_cast<std::uint64_t>(seed), n, d);
  const MatrixXd& X = set.data.X;
  const VectorXd& Y = set.data.Y;
  const MatrixXd& Xq = set.queries;

  const VectorXd y_ls = Xq * attn::least_squares_qr(X, Y);
  const VectorXd sv = Eigen::JacobiSVD<MatrixXd>(X).singularValues();  // lambda_1 >= ...
  const double lambda_max_sq = sv(0) * sv(0);
  // Section 6's eta = 1/tr(X^T X), or a multiple of 1/lambda_max^2 (GD converges below 2).
  const double eta =
      rate == "trace" ? ch03::one_step_size(X) : std::stod(rate) / lambda_max_sq;
  // Per step, the error along singular direction i is multiplied by 1 - eta lambda_i^2.
  const double contraction = (1.0 - eta * sv.array().square()).abs().maxCoeff();

  const ch03::LayersAndSteps runs =
      ch03::layers_and_gradient_steps(X, Y, Xq, eta, max_layers);
  VectorXd steps(max_layers + 1), err_attn(max_layers + 1), err_gd(max_layers + 1),
      difference(max_layers + 1);
  steps(0) = 0;
  err_attn(0) = err_gd(0) = 1;  // both predictions start at 0
  difference(0) = 0;
  for (int step = 1; step <= max_layers; ++step) {
    const VectorXd y_attn = runs.layers.row(step).transpose();
    const VectorXd y_gd = runs.steps.row(step).transpose();
    steps(step) = step;
    err_attn(step) = attn::relative_error(y_attn, y_ls);
    err_gd(step) = attn::relative_error(y_gd, y_ls);
    difference(step) = attn::relative_error(y_attn, y_gd);
  }
  const VectorXd y_attn_k = runs.layers.row(k).transpose(),
                 y_gd_k = runs.steps.row(k).transpose();

  live::Figure f;
  f.vector("k", steps).vector("error_attention", err_attn).vector("error_gd", err_gd);
  f.vector("difference", difference);
  f.number("error_attention_k", err_attn(k)).number("error_gd_k", err_gd(k));
  f.number("difference_k", difference(k));
  f.number("y_attention_q1", y_attn_k(0)).number("y_gd_q1", y_gd_k(0));
  f.number("y_ls_q1", y_ls(0));
  f.number("eta", eta).number("eta_lambda_max_sq", eta * lambda_max_sq);
  f.number("contraction", contraction).number("kappa", attn::condition_number(X));
  return f;
}

const bool added = live::add("ch03_hat_matrix", hat) && live::add("ch03_gd_layers", gd_layers);

}  // namespace
