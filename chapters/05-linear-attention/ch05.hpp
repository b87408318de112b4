#pragma once
// Chapter 05's computations, shared by the program (main.cpp prints, records and draws
// them), its tests and its live figures (live.cpp): a least-squares line through log-log
// data, the random feature maps by estimator and Monte Carlo kernel estimates with their
// error tables, the exp-limit error table, the identity check of the deterministic feature
// maps, the real roots of the truncated exponential series, linear attention at 30 times the
// norms, the feature maps at equal dimension, and the rank of softmax attention as its logits
// grow. (The timing of section 8 is the program's alone: timing.hpp.)

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/exercise.hpp"
#include "attn/random.hpp"
#include "experiments/statistics.hpp"

namespace ch05 {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr Index d_poly =
    4;  // the deterministic maps have d_k^p features: they use d_k = 4

// A line y = intercept + slope x fitted by least squares, with the standard error of the
// slope (residual variance / sum of squared x deviations): experiments::fit_line.
using Fit = experiments::LineFit;

// Slope of log y against log x.
inline Fit fit_loglog(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size(); ++i)
    lx.push_back(std::log(x[i])), ly.push_back(std::log(y[i]));
  return experiments::fit_line(lx, ly);
}

// The same for points kept in the columns of a table.
inline Fit fit_loglog(const VectorXd& x, const VectorXd& y) {
  return fit_loglog(std::vector<double>(x.begin(), x.end()),
                    std::vector<double>(y.begin(), y.end()));
}

// The same over the last `k` points of y (or all of them), with the x of the same indices.
inline Fit fit_loglog_tail(const std::vector<double>& x, const std::vector<double>& y,
                           std::size_t k) {
  const std::size_t from = y.size() - std::min(k, y.size());
  return fit_loglog(
      std::vector<double>(x.begin() + long(from), x.begin() + long(y.size())),
      std::vector<double>(y.begin() + long(from), y.end()));
}

enum class Estimator { positive, orthogonal, trigonometric };

const char* name(Estimator e);

// r random directions in R^d for the estimator (orthogonal blocks for `orthogonal`, i.i.d.
// Gaussian otherwise), and the features of the rows of X with them (cos and sin for
// `trigonometric`, positive exp features otherwise).
MatrixXd directions(Estimator e, Index r, Index d, attn::Rng& rng);
MatrixXd features(Estimator e, const MatrixXd& X, const MatrixXd& W);

// `trials` independent estimates of exp(q.k) from r random features: phi(q).phi(k), each
// with fresh directions, computed with the library's feature maps.
VectorXd kernel_estimates(Estimator e, const VectorXd& q, const VectorXd& k, Index r,
                          int trials, attn::Rng& rng);

// The same for any feature map phi(X, W) of r i.i.d. Gaussian directions W (r x d), such as
// an exercise's own map.
using FeatureMap = std::function<MatrixXd(const MatrixXd& X, const MatrixXd& W)>;
VectorXd kernel_estimates(const FeatureMap& feature_map, const VectorXd& q, const VectorXd& k,
                          Index r, int trials, attn::Rng& rng);

// The weights a feature map gives: unnormalised weights W (a row per query,
// phi(Q) phi(K)^T) divided by their row sums. (The library's kernel_attention_weights also
// refuses a row sum of 0 or less; this does not check.)
MatrixXd normalised_rows(const MatrixXd& W);

// Relative root-mean-square error of the estimates around the true value.
double relative_rmse(const VectorXd& est, double truth);

// Theory: relative MSE of r i.i.d. features, (e^{|q+k|^2} - 1) / r for the positive map
// and e^{|q-k|^2} (1 - e^{-|q-k|^2})^2 / (2r) for the trigonometric one.
double positive_relative_mse(const VectorXd& q, const VectorXd& k, double r);
double trig_relative_mse(const VectorXd& q, const VectorXd& k, double r);

// Relative RMSE of the three estimators for r = 4, 8, .., 2^max_log2_r features, `trials`
// estimates each, with the theory for the positive and trigonometric ones: the columns are
// r, positive, orthogonal, trigonometric, positive theory, trigonometric theory.
MatrixXd rmse_against_r(const VectorXd& q, const VectorXd& k, int max_log2_r, int trials,
                        attn::Rng& rng,
                        const std::function<void(const std::string&)>& progress);

// Two vectors in R^d with |q| = |k| = norm and q.k = t (needs |t| <= norm^2).
void pair_with_product(Index d, double norm, double t, VectorXd& q, VectorXd& k);

// Relative RMSE of the positive and trigonometric estimates from r features for pairs with
// |q| = |k| = 1 and q.k = -1, -7/8, .., 1 in R^d: the columns are q.k, e^(q.k), positive,
// trigonometric, their theories, and the share of negative trigonometric estimates.
MatrixXd rmse_against_kernel(Index d, Index r, int trials, attn::Rng& rng);

// |e^t - T_p(t)| and its Lagrange bound e^max(t,0) |t|^(p+1) / (p+1)! for p = 0 .. 20: the
// columns are p, then the error and the bound for each t; and the largest error / bound
// where the error is truncation, not rounding.
struct TaylorErrors {
  MatrixXd table;
  double worst_ratio = 0;
};

TaylorErrors taylor_errors(const std::vector<double>& ts);

// (1 + t/p)^p as exp(p log1p(t/p)): no p-fold rounding of 1 + t/p (when 1 + t/p > 0).
double exp_limit(double t, double p);

// |e^t - (1 + t/p)^p| and its leading term e^t t^2 / (2p) for p = 1, 2, 4, .., 2^20: the
// columns are p, then the error and the leading term for each t.
MatrixXd exp_limit_errors(const std::vector<double>& ts);

// The identity phi_p(q).phi_p(k) = f_p(q.k) for orders p = first .. last: for each, the
// feature dimension and max over pairs of |phi_p(q_i).phi_p(k_j) - f_p(q_i.k_j)| /
// f_p(sum_l |q_il k_jl|), relative to the size of the terms because the inner product adds
// its d_k^l products one by one. `features(X, p)` builds phi_p, `exact(t, p)` is f_p(t).
struct IdentityRow {
  int p;
  Index features;
  double residual;
};

// The residual of one order: the queries Q and keys K, their features phiQ and phiK, and f_p.
template <typename Exact>
double identity_residual(const MatrixXd& Q, const MatrixXd& K, const MatrixXd& phiQ,
                         const MatrixXd& phiK, Exact f_p) {
  // [identity-check]
  const MatrixXd lhs = phiQ * phiK.transpose();
  const MatrixXd rhs = (Q * K.transpose()).unaryExpr(f_p);
  const MatrixXd size = (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr(f_p);
  return ((lhs - rhs).array() / size.array()).abs().maxCoeff();
  // [identity-check]
}

template <typename Features, typename Exact>
std::vector<IdentityRow> identity_residuals(const MatrixXd& Q, const MatrixXd& K,
                                            int first, int last, Features features,
                                            Exact exact) {
  std::vector<IdentityRow> rows;
  for (int p = first; p <= last; ++p) {
    const auto f_p = [&](double t) { return exact(t, p); };
    const MatrixXd phiQ = features(Q, p), phiK = features(K, p);
    rows.push_back({p, phiQ.cols(), identity_residual(Q, K, phiQ, phiK, f_p)});
  }
  return rows;
}

// psi_p(q).psi_p(k) = (1 + q.k/p)^p: the f_p of the exp-limit map's identity check, as
// std::pow computes it (exp_limit computes the same number more accurately).
double exp_limit_kernel(double t, int p);

// The real root of the truncated series T_p(t) for odd p (T_p increases through it),
// found by bisection on [-(p + 1), 0], where T_p changes sign.
double taylor_root(int p);

// For even p: the minimum of T_p over the real line, at the root of T_{p-1} (T_p' =
// T_{p-1}), where T_p = T_{p-1} + t^p/p! = t^p/p! > 0.
double taylor_even_minimum_point(int p);

// Positive random features at 30 times the norms of Q and K: omega.x - |x|^2/2 is very
// negative for every direction and the features underflow. The library refuses a weight sum
// of 0 ("0/0, refused"); were exp to stop at a tiny floor instead, the output would silently
// turn into a plain average of V. The stabilisers (per query, global over keys) keep it
// attention.
struct Underflow {
  double largest_feature;    // of the unstabilised queries
  std::string unstabilised;  // what became of the unstabilised output, if not a distance
  double unstabilised_distance = 0, stabilised_distance = 0;  // max |output - mean of V|
};

Underflow scaled_by_30(const MatrixXd& Q, const MatrixXd& K, const MatrixXd& V,
                       const MatrixXd& W);

// Section 5: attention on n tokens in d_k = d with r random features. Queries and keys
// entries N(0, 2/d_k) (already divided by d_k^(1/4), so softmax(Q K^T) is the scaled
// attention): linear attention against the quadratic form, plain and causal (relative max
// residuals), the change the max-subtraction stabiliser makes, the features at 30 times the
// norms, the mean total variation Performer's epsilon adds to the stabilised weights, and
// each map's normalised weights against softmax's.
struct MapWeights {
  std::string label, name;  // "positive, r = 64", "positive"
  Index D;                  // features
  double tv;                // mean total variation distance per row from softmax's
  double min_weight;        // the smallest unnormalised weight
  // In the student copy: the unfinished exercise this map needs (the exp-limit map: 05.6);
  // the row is then not computed.
  std::optional<attn::exercise_not_done> not_done = {};
};
struct AttentionChecks {
  double linear_vs_quadratic, causal_rnn_vs_masked, stabiliser_change;
  Underflow x30;
  std::vector<std::pair<double, double>> epsilon_tv;  // (epsilon, mean TV)
  std::vector<MapWeights> maps;
};
AttentionChecks attention_checks(Index n, Index d, Index r, attn::Rng& rng);

// The relative Frobenius error ||phi(Q) phi(K)^T - exp(Q K^T)|| / ||exp(Q K^T)|| of the
// Taylor maps of order 1 .. max_taylor_p, the exp-limit maps of power 1 .. max_exp_limit_p,
// and positive random features with r = 4, 16, .., 2^max_log2_r (root mean square over 10
// draws of the directions), with the dimension D of each.
struct MapError {
  std::string map, label, name;  // "taylor", "Taylor p=3", "taylor_p3"
  Index D;
  double error;
  std::optional<attn::exercise_not_done> not_done = {};  // as in MapWeights
};

std::vector<MapError> errors_at_dimension(const MatrixXd& Q, const MatrixXd& K,
                                          int max_taylor_p, int max_exp_limit_p,
                                          int max_log2_r, attn::Rng& rng);

// How many distinct keys are some query's largest logit (the rank of the one-hot limit of
// softmax(s Q K^T) as s grows), and the smallest gap between a row's two largest logits.
struct Favourites {
  double distinct_keys = 0, smallest_gap = 0;
};

Favourites favourite_keys(const MatrixXd& logits);

// The numerical rank of softmax(s L) for 25 logit scales s = 10^-2 .. 10^2: the columns
// are s, the rank at tolerances 1e-10 and 1e-6 (times sigma_1), and the rank of the one-hot
// limit (the number of favourite keys, for the plot).
MatrixXd rank_against_scale(const MatrixXd& logits, const Favourites& favourites,
                            const std::function<void(const std::string&)>& progress);

// Section 6 (README section 7): the rank of n x n attention matrices in d_k = d. Queries and
// keys with entries N(0, d^(-1/2)) (logits with variance 1); the singular values of softmax
// attention and of linear attention with r_small = min(16, n) and r_big = min(r_max, n) positive
// random features; the rank of softmax(s Q K^T) against s, the favourite keys, and the rank
// at s = 100 / (smallest gap between a row's two largest logits), where every weight but a
// row's largest is below e^-100: each row is one-hot to rounding.
struct Ranks {
  Index r_small, r_big;
  VectorXd s_softmax, s_small, s_big;  // singular values, largest first
  MatrixXd by_scale;                   // rank_against_scale
  Favourites favourites;
  double saturation_scale;
  Index rank_saturated;
};
Ranks ranks(Index n, Index d, Index r_max, attn::Rng& rng,
            const std::function<void(const std::string&)>& progress);

// The numerical rank from singular values s (largest first): how many exceed 1e-10 s(0).
Index rank_of(const VectorXd& s);

}  // namespace ch05
