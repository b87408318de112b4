#pragma once
// Chapter 03 — least squares against a robust estimator (section 2 of the chapter).
//
// Least squares is the best unbiased estimator under Gaussian noise (it attains the
// Cramér–Rao bound); without normality the Gauss–Markov theorem only makes it the best
// *linear* unbiased one. Least absolute deviations (LAD) is not linear in Y, and under
// heavy-tailed noise its error is smaller. This header holds LAD and the small Monte Carlo
// that compares the two; main.cpp reports it and test_statistics.cpp tests it.

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "attn/random.hpp"

namespace ch03 {

using Eigen::ArrayXd;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Least absolute deviations: the beta that minimises f(beta) = sum_i |y_i - x_i^T beta|,
// found exactly by walking from vertex to vertex (the simplex method for this problem).
// f is convex and piecewise linear, and its minimum lies at a vertex: a beta that fits d of
// the points exactly (the basis). With s_i = sign(r_i) for the points off the basis, write
//   sum_{i off the basis} s_i x_i = sum_{k in the basis} u_k x_k.
// If every |u_k| <= 1, 0 is a subgradient of f and the vertex is the minimum. Otherwise,
// releasing the basis point k with |u_k| > 1 (moving beta along the p with
// x_k^T p = sign(u_k), the other basis points still fitted) lowers f at the rate
// |u_k| - 1, and f falls along that edge until a point j becomes fitted: j replaces k.
inline VectorXd least_absolute_deviations(const MatrixXd& X, const VectorXd& Y) {
  const Index n = X.rows(), d = X.cols();
  // Start from the d points that least squares fits best.
  const VectorXd r_ls = Y - X * X.householderQr().solve(Y);
  std::vector<Index> basis(static_cast<std::size_t>(n));
  std::iota(basis.begin(), basis.end(), Index{0});
  std::partial_sort(basis.begin(), basis.begin() + d, basis.end(), [&](Index i, Index j) {
    return std::abs(r_ls(i)) < std::abs(r_ls(j));
  });
  basis.resize(static_cast<std::size_t>(d));
  MatrixXd XB(d, d);
  VectorXd YB(d);
  std::vector<std::pair<double, Index>> breakpoints;
  for (Index pivot = 0; pivot < 100 * n; ++pivot) {
    for (Index k = 0; k < d; ++k) {
      XB.row(k) = X.row(basis[std::size_t(k)]);
      YB(k) = Y(basis[std::size_t(k)]);
    }
    const Eigen::PartialPivLU<MatrixXd> lu(XB);
    const VectorXd beta = lu.solve(YB);  // fits the basis points exactly
    const VectorXd r = Y - X * beta;
    VectorXd s = r.array().sign();
    for (const Index b : basis) s(b) = 0;
    const VectorXd u = lu.transpose().solve(X.transpose() * s);
    Index k = 0;
    if (u.cwiseAbs().maxCoeff(&k) <= 1 + 1e-9) return beta;
    // Along beta + alpha p, residual i is r_i - alpha c_i; f's slope starts at 1 - |u_k|
    // and rises by 2 |c_i| where residual i crosses zero, at alpha_i = r_i / c_i > 0.
    const VectorXd p = lu.solve(VectorXd::Unit(d, k) * (u(k) > 0 ? 1.0 : -1.0));
    const VectorXd c = X * p;
    breakpoints.clear();
    for (Index i = 0; i < n; ++i)
      if (s(i) != 0 && r(i) * c(i) > 0) breakpoints.push_back({r(i) / c(i), i});
    std::sort(breakpoints.begin(), breakpoints.end());
    double slope = 1 - std::abs(u(k));
    for (const auto& [alpha, i] : breakpoints) {
      slope += 2 * std::abs(c(i));
      if (slope >= 0) {  // the minimum along the edge
        basis[std::size_t(k)] = i;
        break;
      }
    }
  }
  throw std::runtime_error("least_absolute_deviations: no minimum after 100 n pivots");
}

// Three noise laws, each scaled to variance 1, so that least squares has the same
// covariance (X^T X)^-1 under all three: Gauss–Markov needs only the mean and variance.
enum class Noise { gaussian, student_t3, contaminated };

inline const char* to_string(Noise noise) {
  switch (noise) {
    case Noise::gaussian:
      return "Gaussian";
    case Noise::student_t3:
      return "Student t, 3 dof";
    case Noise::contaminated:
      return "contaminated";
  }
  return "";
}

inline double draw_noise(Noise noise, attn::Rng& rng) {
  switch (noise) {
    case Noise::gaussian:
      return attn::standard_normal(rng);
    case Noise::student_t3: {  // Z / sqrt(chi^2_3 / 3) has variance 3
      double chi2 = 0;
      for (int k = 0; k < 3; ++k) chi2 += std::pow(attn::standard_normal(rng), 2);
      return attn::standard_normal(rng) / std::sqrt(chi2 / 3) / std::sqrt(3.0);
    }
    case Noise::contaminated: {  // N(0, 1) w.p. 0.9, N(0, 10^2) w.p. 0.1: variance 10.9
      const double scale = attn::uniform01(rng) < 0.1 ? 10.0 : 1.0;
      return scale * attn::standard_normal(rng) / std::sqrt(10.9);
    }
  }
  return 0;
}

// Mean squared error |beta_hat - beta|^2 of both estimators over the same M noise draws,
// X and beta fixed; ratio = mse_lad / mse_ls, and ratio_se its standard error by the delta
// method on the paired draws (a_m = LAD's squared error, b_m = LS's):
// Var(ratio) ~ Var(a - ratio b) / (M mean(b)^2).
struct EstimatorComparison {
  double mse_ls = 0, mse_lad = 0, ratio = 0, ratio_se = 0;
};

inline EstimatorComparison compare_estimators(const MatrixXd& X, const VectorXd& beta,
                                              Noise noise, Index M, attn::Rng& rng) {
  const Index n = X.rows();
  ArrayXd a(M), b(M);
  VectorXd Y(n);
  for (Index m = 0; m < M; ++m) {
    for (Index i = 0; i < n; ++i) Y(i) = draw_noise(noise, rng);
    Y += X * beta;
    b(m) = (X.householderQr().solve(Y) - beta).squaredNorm();
    a(m) = (least_absolute_deviations(X, Y) - beta).squaredNorm();
  }
  EstimatorComparison c;
  c.mse_ls = b.mean();
  c.mse_lad = a.mean();
  c.ratio = c.mse_lad / c.mse_ls;
  const ArrayXd e = a - c.ratio * b;
  const double var = (e - e.mean()).square().sum() / double(M - 1);
  c.ratio_se = std::sqrt(var / double(M)) / c.mse_ls;
  return c;
}

}  // namespace ch03
