// Chapter 03's live figures: what the page computes when a reader moves a control
// (code/live/live.hpp explains the mechanism; live.js draws the results).
#include <cmath>
#include <cstdint>
#include <string>

#include "attn/attention_regression.hpp"
#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "live.hpp"

namespace {

using attn::Normalisation;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Figure 3.2 live: the hat matrix H = X (X^T X)^-1 X^T of n samples with d features drawn
// uniformly from -10 to 10, as in main.cpp's hat_figure (same seed stream, X drawn first),
// optionally with an intercept column; targets Y = X beta + noise drawn after X.
live::Figure hat(const live::Params& p) {
  const int n = p.integer("n", 2, 24);
  const int d = p.integer("d", 1, 8);
  const bool intercept = p.integer("intercept", 0, 1) == 1;
  const int seed = p.integer("seed", 0, 1000000);
  attn::Rng rng(attn::run_seed(static_cast<std::uint64_t>(seed), 0, 30));
  const MatrixXd X0 = attn::random_uniform(n, d, rng, -10.0, 10.0);
  const VectorXd beta = attn::random_normal(d, 1, rng);
  const VectorXd Y = X0 * beta + attn::random_normal(n, 1, rng);
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

  const Index negative = (H.array() < 0).count();  // the diagonal is positive
  live::Figure f;
  f.matrix("H", H);
  f.number("columns", static_cast<double>(X.cols()));
  f.number("trace", H.trace());
  f.number("idempotence", (H * H - H).lpNorm<Eigen::Infinity>());
  f.number("attention_minus_H", (S - H).lpNorm<Eigen::Infinity>());
  f.number("fit_vs_ls", attn::relative_error(H * Y, fit_ls));
  f.number("rowsum_deviation", (H.rowwise().sum().array() - 1).abs().maxCoeff());
  f.number("offdiag_negative", double(negative) / double(H.size() - H.rows()));
  f.number("offdiag_negative_pct", 100.0 * double(negative) / double(H.size() - H.rows()));
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
  attn::Rng rng(attn::run_seed(static_cast<std::uint64_t>(seed), 0, 20));
  const attn::RegressionData data = attn::regression_data(n, d, rng);
  const MatrixXd& X = data.X;
  const VectorXd& Y = data.Y;
  const MatrixXd Xq = attn::random_uniform(50, d, rng, -10.0, 10.0);  // new queries

  const VectorXd y_ls = Xq * attn::least_squares_qr(X, Y);
  const MatrixXd XtX = X.transpose() * X;
  const VectorXd sv = Eigen::JacobiSVD<MatrixXd>(X).singularValues();  // lambda_1 >= ...
  const double lambda_max_sq = sv(0) * sv(0);
  // main.cpp's rate 1/tr(X^T X), or a multiple of 1/lambda_max^2 (GD converges below 2).
  const double eta =
      rate == "trace" ? 1.0 / XtX.diagonal().sum() : std::stod(rate) / lambda_max_sq;
  // Per step, the error along singular direction i is multiplied by 1 - eta lambda_i^2.
  const double contraction = (1.0 - eta * sv.array().square()).abs().maxCoeff();

  const attn::AttentionRegressor layer{MatrixXd::Identity(d, d),
                                       eta * MatrixXd::Identity(d, d), 1.0};
  VectorXd r = Y;                               // the training tokens' residuals
  VectorXd y_attn = VectorXd::Zero(Xq.rows());  // the queries' predictions
  VectorXd beta = VectorXd::Zero(d);            // gradient descent's iterate
  VectorXd y_gd = VectorXd::Zero(Xq.rows());
  VectorXd steps(max_layers + 1), err_attn(max_layers + 1), err_gd(max_layers + 1),
      difference(max_layers + 1);
  steps(0) = 0;
  err_attn(0) = err_gd(0) = 1;  // both predictions start at 0
  difference(0) = 0;
  VectorXd y_attn_k = y_attn, y_gd_k = y_gd;
  for (int step = 1; step <= max_layers; ++step) {
    // One layer: the query reads eta x^T X^T r, the training tokens r <- r - eta X X^T r.
    y_attn += attn::predict(layer, X, r, Xq, Normalisation::identity);
    r -= attn::predict(layer, X, r, X, Normalisation::identity);
    // One gradient step.
    beta += eta * X.transpose() * (Y - X * beta);
    y_gd = Xq * beta;
    steps(step) = step;
    err_attn(step) = attn::relative_error(y_attn, y_ls);
    err_gd(step) = attn::relative_error(y_gd, y_ls);
    difference(step) = attn::relative_error(y_attn, y_gd);
    if (step == k) {
      y_attn_k = y_attn;
      y_gd_k = y_gd;
    }
  }

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
