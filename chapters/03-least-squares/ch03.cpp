#include "ch03.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "attn/least_squares.hpp"
#include "experiments/statistics.hpp"

namespace ch03 {

using Eigen::ArrayXd;
using experiments::median;

// Least absolute deviations: the beta that minimises f(beta) = sum_i |y_i - x_i^T beta|,
// found exactly by walking from vertex to vertex (the simplex method for this problem).
// f is convex and piecewise linear, and its minimum lies at a vertex: a beta that fits d of
// the points exactly (the basis). With s_i = sign(r_i) for the points off the basis, write
//   sum_{i off the basis} s_i x_i = sum_{k in the basis} u_k x_k.
// If every |u_k| <= 1, 0 is a subgradient of f and the vertex is the minimum. Otherwise,
// releasing the basis point k with |u_k| > 1 (moving beta along the p with
// x_k^T p = sign(u_k), the other basis points still fitted) lowers f at the rate
// |u_k| - 1, and f falls along that edge until a point j becomes fitted: j replaces k.
VectorXd least_absolute_deviations(const MatrixXd& X, const VectorXd& Y) {
  // The walk needs d points that X fits exactly and a basis matrix it can solve with.
  attn::require_full_column_rank(X);
  if (Y.size() != X.rows() || !Y.allFinite())
    throw std::invalid_argument("least_absolute_deviations: Y needs one finite target per row "
                                "of X (X has " + std::to_string(X.rows()) + " rows, Y " +
                                std::to_string(Y.size()) + " entries)");
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

const char* to_string(Noise noise) {
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

double draw_noise(Noise noise, attn::Rng& rng) {
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

EstimatorComparison compare_estimators(const MatrixXd& X, const VectorXd& beta,
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

IdentitiesData identities_data(std::uint64_t seed, Index n, Index d) {
  IdentitiesData s{{}, {}, attn::Rng(attn::run_seed(seed, 0, 20))};
  s.data = attn::regression_data(n, d, s.rng);
  s.queries = attn::random_uniform(50, d, s.rng, -10.0, 10.0);  // new queries
  return s;
}

double one_step_size(const MatrixXd& X) {
  const MatrixXd XtX = X.transpose() * X;
  return 1.0 / XtX.diagonal().sum();
}

LayersAndSteps layers_and_gradient_steps(const MatrixXd& X, const VectorXd& Y,
                                         const MatrixXd& queries, double eta, int steps) {
  const Index d = X.cols(), m = queries.rows();
  const attn::AttentionRegressor layer{MatrixXd::Identity(d, d),
                                       eta * MatrixXd::Identity(d, d), 1.0};
  LayersAndSteps out{MatrixXd::Zero(steps + 1, m), MatrixXd::Zero(steps + 1, m)};
  VectorXd r = Y;                       // the training tokens' residuals
  VectorXd y_attn = VectorXd::Zero(m);  // both predictions start at 0
  VectorXd beta = VectorXd::Zero(d);    // gradient descent's iterate
  for (int k = 1; k <= steps; ++k) {
    y_attn += attn::predict(layer, X, r, queries, attn::Normalisation::identity);
    r -= attn::predict(layer, X, r, X, attn::Normalisation::identity);
    beta += eta * X.transpose() * (Y - X * beta);
    out.layers.row(k) = y_attn.transpose();
    out.steps.row(k) = (queries * beta).transpose();
  }
  return out;
}

HatSamples hat_samples(std::uint64_t seed, Index n, Index d) {
  attn::Rng rng(attn::run_seed(seed, 0, 30));
  HatSamples s;
  s.X = attn::random_uniform(n, d, rng, -10.0, 10.0);
  const VectorXd beta = attn::random_normal(d, 1, rng);
  s.Y = s.X * beta + attn::random_normal(n, 1, rng);
  return s;
}

double offdiagonal_fraction_negative(const MatrixXd& H) {
  const Index negative = (H.array() < 0).count();  // the diagonal is positive
  return double(negative) / double(H.size() - H.rows());
}

Trained train(const experiments::ExperimentConfig& config) {
  const auto start = std::chrono::steady_clock::now();
  Trained t{experiments::run_experiment(config)};
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  t.seconds = elapsed.count();
  return t;
}

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

double ms_per_iteration(const Trained& t) {
  double s = 0;
  for (const auto& run : t.runs) s += run.seconds / double(run.loss.size() - 1);
  return 1e3 * s / double(t.runs.size());
}

LossCurves loss_curves(const Trained& id, const Trained& sm, double ls) {
  LossCurves curves;
  const std::size_t points = (id.runs.empty() ? sm : id).runs.front().loss.size();
  for (std::size_t t = 0; t < points; ++t) {
    std::vector<double> row{double(t)};
    for (const Trained* h : {&id, &sm}) {
      if (h->runs.empty()) {
        row.insert(row.end(), 3, std::numeric_limits<double>::quiet_NaN());
        continue;
      }
      const auto [m, f] = geometric(each(*h, [t](auto& run) { return run.loss[t]; }));
      row.insert(row.end(), {m, m / f, m * f});
      if (h == &id && curves.within_1pct < 0 && m <= 1.01 * ls)
        curves.within_1pct = long(t);
    }
    row.push_back(ls);
    curves.rows.push_back(row);
  }
  return curves;
}

Found what_training_found(const Trained& id, std::uint64_t seed, Index n, Index d) {
  std::vector<double> size_w, size_v, product;
  for (std::size_t k = 0; k < id.runs.size(); ++k) {
    const attn::AttentionRegressor& p = id.runs[k].parameters;
    attn::Rng data_rng(attn::run_seed(seed, int(k), 0));
    const MatrixXd X = attn::regression_data(n, d, data_rng).X;
    size_w.push_back(0.5 * (p.W_Q.cwiseAbs().mean() + p.W_K.cwiseAbs().mean()));
    size_v.push_back(std::abs(p.w_v));
    product.push_back(attn::relative_error(p.w_v * p.W_Q * p.W_K.transpose(),
                                           (X.transpose() * X).inverse()));
  }
  return {median(size_w), median(size_v), median(product)};
}

}  // namespace ch03
