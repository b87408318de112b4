#pragma once
// Chapter 05 — the chapter's own experiments, shared by the program and the tests: a
// least-squares line through log-log data, Monte Carlo kernel estimates of the random
// feature maps and their error tables, the exp-limit error table, the identity check of the
// deterministic feature maps, the real roots of the truncated exponential series, linear
// attention at 30 times the norms, the feature maps at equal dimension, the rank of softmax
// attention as its logits grow, and the memory the program needs.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention.hpp"
#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/svd.hpp"
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

inline const char* name(Estimator e) {
  switch (e) {
    case Estimator::positive:
      return "positive";
    case Estimator::orthogonal:
      return "orthogonal";
    default:
      return "trigonometric";
  }
}

// `trials` independent estimates of exp(q.k) from r random features: phi(q).phi(k), each
// with fresh directions, computed with the library's feature maps.
inline VectorXd kernel_estimates(Estimator e, const VectorXd& q, const VectorXd& k,
                                 Index r, int trials, attn::Rng& rng) {
  MatrixXd X(2, q.size());
  X.row(0) = q.transpose();
  X.row(1) = k.transpose();
  VectorXd est(trials);
  for (int trial = 0; trial < trials; ++trial) {
    MatrixXd phi;
    if (e == Estimator::trigonometric)
      phi = attn::trig_random_features(X, attn::gaussian_directions(r, q.size(), rng));
    else if (e == Estimator::orthogonal)
      phi = attn::positive_random_features(X,
                                           attn::orthogonal_directions(r, q.size(), rng));
    else
      phi =
          attn::positive_random_features(X, attn::gaussian_directions(r, q.size(), rng));
    est(trial) = phi.row(0).dot(phi.row(1));
  }
  return est;
}

// Relative root-mean-square error of the estimates around the true value.
inline double relative_rmse(const VectorXd& est, double truth) {
  return std::sqrt((est.array() - truth).square().mean()) / truth;
}

// Theory: relative MSE of r i.i.d. features, (e^{|q+k|^2} - 1) / r for the positive map
// and e^{|q-k|^2} (1 - e^{-|q-k|^2})^2 / (2r) for the trigonometric one.
inline double positive_relative_mse(const VectorXd& q, const VectorXd& k, double r) {
  return std::expm1((q + k).squaredNorm()) / r;
}
inline double trig_relative_mse(const VectorXd& q, const VectorXd& k, double r) {
  const double D = (q - k).squaredNorm();
  return std::exp(D) * std::pow(-std::expm1(-D), 2) / (2 * r);
}

// Relative RMSE of the three estimators for r = 4, 8, .., 2^max_log2_r features, `trials`
// estimates each, with the theory for the positive and trigonometric ones: the columns are
// r, positive, orthogonal, trigonometric, positive theory, trigonometric theory.
inline MatrixXd rmse_against_r(const VectorXd& q, const VectorXd& k, int max_log2_r,
                               int trials, attn::Rng& rng,
                               const std::function<void(const std::string&)>& progress) {
  const double truth = std::exp(q.dot(k));
  MatrixXd table(max_log2_r - 1, 6);
  for (int j = 2; j <= max_log2_r; ++j) {
    const Index r = Index(1) << j;
    progress("random features: r = " + std::to_string(r) + " of " +
             std::to_string(1 << max_log2_r));
    table(j - 2, 0) = double(r);
    for (int e = 0; e < 3; ++e) {
      // [rf-rmse]
      const VectorXd est = kernel_estimates(Estimator(e), q, k, r, trials, rng);
      table(j - 2, 1 + e) = relative_rmse(est, truth);
      // [rf-rmse]
    }
    table(j - 2, 4) = std::sqrt(positive_relative_mse(q, k, double(r)));
    table(j - 2, 5) = std::sqrt(trig_relative_mse(q, k, double(r)));
  }
  progress("");
  return table;
}

// Two vectors in R^d with |q| = |k| = norm and q.k = t (needs |t| <= norm^2).
inline void pair_with_product(Index d, double norm, double t, VectorXd& q, VectorXd& k) {
  if (d < 2 || std::abs(t) > norm * norm)
    throw std::invalid_argument("pair_with_product");
  const double c = t / (norm * norm);
  q = VectorXd::Zero(d);
  k = VectorXd::Zero(d);
  q(0) = norm;
  k(0) = norm * c;
  k(1) = norm * std::sqrt(std::max(0.0, 1 - c * c));
}

// Relative RMSE of the positive and trigonometric estimates from r features for pairs with
// |q| = |k| = 1 and q.k = -1, -7/8, .., 1 in R^d: the columns are q.k, e^(q.k), positive,
// trigonometric, their theories, and the share of negative trigonometric estimates.
inline MatrixXd rmse_against_kernel(Index d, Index r, int trials, attn::Rng& rng) {
  MatrixXd table(17, 7);
  for (int i = 0; i <= 16; ++i) {
    const double t = -1 + i / 8.0;
    VectorXd q, k;
    pair_with_product(d, 1.0, t, q, k);
    const VectorXd pos = kernel_estimates(Estimator::positive, q, k, r, trials, rng);
    const VectorXd trig =
        kernel_estimates(Estimator::trigonometric, q, k, r, trials, rng);
    table.row(i) << t, std::exp(t), relative_rmse(pos, std::exp(t)),
        relative_rmse(trig, std::exp(t)),
        std::sqrt(positive_relative_mse(q, k, double(r))),
        std::sqrt(trig_relative_mse(q, k, double(r))),
        (trig.array() < 0).cast<double>().mean();
  }
  return table;
}

// |e^t - T_p(t)| and its Lagrange bound e^max(t,0) |t|^(p+1) / (p+1)! for p = 0 .. 20: the
// columns are p, then the error and the bound for each t; and the largest error / bound
// where the error is truncation, not rounding.
struct TaylorErrors {
  MatrixXd table;
  double worst_ratio = 0;
};

inline TaylorErrors taylor_errors(const std::vector<double>& ts) {
  TaylorErrors e{MatrixXd(21, 1 + 2 * Index(ts.size()))};
  for (int p = 0; p <= 20; ++p) {
    e.table(p, 0) = p;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const double t = ts[i];
      // [lagrange]
      const double error = std::abs(std::exp(t) - attn::taylor_exp(t, p));
      const double bound = std::exp(std::max(t, 0.0)) * std::pow(std::abs(t), p + 1) /
                           std::tgamma(p + 2.0);
      // [lagrange]
      e.table(p, 1 + 2 * Index(i)) = error;
      e.table(p, 2 + 2 * Index(i)) = bound;
      // Below ~1e-15 relative the "error" is rounding of exp(t), not truncation.
      if (error > 1e-13 * std::exp(t))
        e.worst_ratio = std::max(e.worst_ratio, error / bound);
    }
  }
  return e;
}

// (1 + t/p)^p as exp(p log1p(t/p)): no p-fold rounding of 1 + t/p (when 1 + t/p > 0).
inline double exp_limit(double t, double p) {
  return t / p > -1 ? std::exp(p * std::log1p(t / p)) : std::pow(1 + t / p, p);
}

// |e^t - (1 + t/p)^p| and its leading term e^t t^2 / (2p) for p = 1, 2, 4, .., 2^20: the
// columns are p, then the error and the leading term for each t.
inline MatrixXd exp_limit_errors(const std::vector<double>& ts) {
  MatrixXd table(21, 1 + 2 * Index(ts.size()));
  for (int k = 0; k <= 20; ++k) {
    const double p = std::ldexp(1.0, k);
    table(k, 0) = p;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const double t = ts[i];
      table(k, 1 + 2 * Index(i)) = std::abs(std::exp(t) - exp_limit(t, p));
      table(k, 2 + 2 * Index(i)) = std::exp(t) * t * t / (2 * p);
    }
  }
  return table;
}

// The identity phi_p(q).phi_p(k) = f_p(q.k) for orders p = first .. last: for each, the
// feature dimension and max over pairs of |phi_p(q_i).phi_p(k_j) - f_p(q_i.k_j)| /
// f_p(sum_l |q_il k_jl|), relative to the size of the terms because the inner product adds
// its d_k^l products one by one. `features(X, p)` builds phi_p, `exact(t, p)` is f_p(t).
struct IdentityRow {
  int p;
  Index features;
  double residual;
};

template <typename Features, typename Exact>
std::vector<IdentityRow> identity_residuals(const MatrixXd& Q, const MatrixXd& K,
                                            int first, int last, Features features,
                                            Exact exact) {
  std::vector<IdentityRow> rows;
  for (int p = first; p <= last; ++p) {
    const auto f_p = [&](double t) { return exact(t, p); };
    // [identity-check]
    const MatrixXd phiQ = features(Q, p), phiK = features(K, p);
    const MatrixXd lhs = phiQ * phiK.transpose();
    const MatrixXd rhs = (Q * K.transpose()).unaryExpr(f_p);
    const MatrixXd size = (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr(f_p);
    const double residual = ((lhs - rhs).array() / size.array()).abs().maxCoeff();
    // [identity-check]
    rows.push_back({p, phiQ.cols(), residual});
  }
  return rows;
}

// The real root of the truncated series T_p(t) for odd p (T_p increases through it),
// found by bisection on [-(p + 1), 0], where T_p changes sign.
inline double taylor_root(int p) {
  if (p % 2 == 0) throw std::invalid_argument("taylor_root: even orders have none");
  double lo = -(p + 1.0), hi = 0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (attn::taylor_exp(mid, p) < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// For even p: the minimum of T_p over the real line, at the root of T_{p-1} (T_p' =
// T_{p-1}), where T_p = T_{p-1} + t^p/p! = t^p/p! > 0.
inline double taylor_even_minimum_point(int p) {
  return p == 0 ? 0.0 : taylor_root(p - 1);
}

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

inline Underflow scaled_by_30(const MatrixXd& Q, const MatrixXd& K, const MatrixXd& V,
                              const MatrixXd& W) {
  using enum attn::Stabiliser;
  const auto from_average = [&](const MatrixXd& Y) {
    return (Y.rowwise() - V.colwise().mean()).lpNorm<Eigen::Infinity>();
  };
  const MatrixXd phiQ = attn::positive_random_features(30 * Q, W);
  Underflow u{phiQ.maxCoeff(), "0/0, refused"};
  try {
    const MatrixXd Y =
        attn::linear_attention(phiQ, attn::positive_random_features(30 * K, W), V);
    u.unstabilised = Y.allFinite() ? "" : "the output is not finite";
    if (Y.allFinite()) u.unstabilised_distance = from_average(Y);
  } catch (const std::invalid_argument&) {
  }
  u.stabilised_distance = from_average(
      attn::linear_attention(attn::positive_random_features(30 * Q, W, per_row),
                             attn::positive_random_features(30 * K, W, global), V));
  return u;
}

// The relative Frobenius error ||phi(Q) phi(K)^T - exp(Q K^T)|| / ||exp(Q K^T)|| of the
// Taylor maps of order 1 .. max_taylor_p, the exp-limit maps of power 1 .. max_exp_limit_p,
// and positive random features with r = 4, 16, .., 2^max_log2_r (root mean square over 10
// draws of the directions), with the dimension D of each.
struct MapError {
  std::string map, label, name;  // "taylor", "Taylor p=3", "taylor_p3"
  Index D;
  double error;
};

inline std::vector<MapError> errors_at_dimension(const MatrixXd& Q, const MatrixXd& K,
                                                 int max_taylor_p, int max_exp_limit_p,
                                                 int max_log2_r, attn::Rng& rng) {
  const MatrixXd exact = (Q * K.transpose()).array().exp();
  const auto error = [&](const MatrixXd& phiQ, const MatrixXd& phiK) {
    return (phiQ * phiK.transpose() - exact).norm() / exact.norm();
  };
  std::vector<MapError> rows;
  for (int p = 1; p <= max_taylor_p; ++p) {
    const MatrixXd phiQ = attn::taylor_features(Q, p), phiK = attn::taylor_features(K, p);
    rows.push_back({"taylor", "Taylor p=" + std::to_string(p),
                    "taylor_p" + std::to_string(p), phiQ.cols(), error(phiQ, phiK)});
  }
  for (int p = 1; p <= max_exp_limit_p; ++p) {
    const MatrixXd psiQ = attn::exp_limit_features(Q, p),
                   psiK = attn::exp_limit_features(K, p);
    rows.push_back({"exp_limit", "exp-limit p=" + std::to_string(p),
                    "exp_limit_p" + std::to_string(p), psiQ.cols(), error(psiQ, psiK)});
  }
  for (int j = 2; j <= max_log2_r; j += 2) {
    const Index r = Index(1) << j;
    double mean_square = 0;
    for (int draw = 0; draw < 10; ++draw) {
      const MatrixXd W = attn::gaussian_directions(r, Q.cols(), rng);
      mean_square += std::pow(error(attn::positive_random_features(Q, W),
                                    attn::positive_random_features(K, W)),
                              2) /
                     10;
    }
    rows.push_back({"random", "random r=" + std::to_string(r),
                    "random_r" + std::to_string(r), r, std::sqrt(mean_square)});
  }
  return rows;
}

// How many distinct keys are some query's largest logit (the rank of the one-hot limit of
// softmax(s Q K^T) as s grows), and the smallest gap between a row's two largest logits.
struct Favourites {
  double distinct_keys = 0, smallest_gap = 0;
};

inline Favourites favourite_keys(const MatrixXd& logits) {
  std::vector<Index> favourite;
  double gap = std::numeric_limits<double>::infinity();
  for (Index i = 0; i < logits.rows(); ++i) {
    Index j = 0;
    const double top = logits.row(i).maxCoeff(&j);
    Eigen::RowVectorXd rest = logits.row(i);
    rest(j) = -std::numeric_limits<double>::infinity();
    gap = std::min(gap, top - rest.maxCoeff());
    favourite.push_back(j);
  }
  std::sort(favourite.begin(), favourite.end());
  const auto end = std::unique(favourite.begin(), favourite.end());
  return {double(end - favourite.begin()), gap};
}

// The numerical rank of softmax(s L) for 25 logit scales s = 10^-2 .. 10^2: the columns
// are s, the rank at tolerances 1e-10 and 1e-6 (times sigma_1), and the rank of the one-hot
// limit (the number of favourite keys, for the plot).
inline MatrixXd rank_against_scale(
    const MatrixXd& logits, const Favourites& favourites,
    const std::function<void(const std::string&)>& progress) {
  MatrixXd table(25, 4);
  for (int i = 0; i <= 24; ++i) {
    const double s = std::pow(10.0, -2 + i / 6.0);
    progress("rank at logit scale " + std::to_string(i + 1) + " of 25");
    const MatrixXd A = attn::softmax_rows(s * logits);
    table.row(i) << s, double(attn::numerical_rank(A, 1e-10)),
        double(attn::numerical_rank(A, 1e-6)), favourites.distinct_keys;
  }
  progress("");
  return table;
}

// Roughly the most bytes each part of the program holds at once (they run one after the
// other), each with the option that makes it large, for the program options `o` (d, n, r,
// taylor_p, exp_limit_p, trials, max_log2_n, block): the program refuses a run that would
// not fit before it starts.
template <typename Options>
std::vector<std::pair<const char*, double>> peak_bytes(const Options& o) {
  const double n = double(o.n), d = double(o.d), r = double(o.r), B = sizeof(double);
  // 1, 2: 16 rows of phi(Q) and phi(K), and the last two tensor powers of x being built.
  const double taylor = 16 * B *
                        (2 * attn::taylor_feature_dim(d_poly, int(o.taylor_p)) +
                         1.25 * std::pow(4.0, double(o.taylor_p)));
  const double exp_limit =
      16 * B * 2.2 * attn::exp_limit_feature_dim(d_poly, int(o.exp_limit_p));
  // 5, 6: up to ten n x r feature matrices at once, a pair with (d_k + 1)^2 columns and its
  // tensor power being built, n x n weights, and singular_values (a 2n x 2n eigenproblem).
  const double features = 10 * n * r, squares = 4 * n * (d + 1) * (d + 1),
               weights = 20 * n * n;
  const char* attention = squares > std::max(features, weights) ? "--d"
                          : features > weights                  ? "--r"
                                                                : "--n";
  // 7: Q, K, V and two outputs with 2^max-log2-n rows, and one block of features.
  const double rows = 5 * std::ldexp(d, int(o.max_log2_n)), block = double(o.block) * r;
  return {{"--order", taylor},
          {"--exp-order", exp_limit},
          {"--trials", 20 * B * double(o.trials)},  // 3: the r = 1 estimates
          {attention, B * (features + squares + weights + 12 * n * d)},
          {block > rows ? "--block" : "--max-log2-n", B * (rows + block + 2 * r * d)}};
}

}  // namespace ch05
