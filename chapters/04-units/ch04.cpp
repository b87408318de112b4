// Chapter 04's computations (ch04.hpp says what they are for).
#include "ch04.hpp"

#include <cmath>
#include <stdexcept>

#include "attn/least_squares.hpp"
#include "attn/softmax.hpp"
#include "attn/transformer_block.hpp"

namespace ch04 {

UnitsProblem units_problem(Index n, Index d, Index m, attn::Rng& rng) {
  const attn::RegressionData data = attn::regression_data(n, d, rng);
  UnitsProblem p{data.X, data.Y, attn::random_uniform(m, d, rng, -10.0, 10.0), {}};
  p.Y_query = p.X_query * data.beta + attn::random_normal(m, 1, rng);
  return p;
}

std::string name(Method m) {
  switch (m) {
    case Method::least_squares:
      return "least_squares";
    case Method::id_attention:
      return "id_attention";
    case Method::softmax_attention:
      return "softmax_attention";
    case Method::whitened_attention:
      return "whitened_attention";
  }
  throw std::invalid_argument("unknown method");
}

// [fixed-weights]
attn::AttentionRegressor fixed_weights(const UnitsProblem& p, double c, Method m) {
  const Index n = p.X.rows(), d = p.X.cols();
  const MatrixXd I = MatrixXd::Identity(d, d);
  switch (m) {
    case Method::id_attention:
      return {I, (p.X.transpose() * p.X).inverse(), 1.0};
    case Method::softmax_attention: {
      const double s = 1.0 / (attn::experiment_feature_scale * std::pow(double(d), 0.25));
      return {s * I, s * I, 1.0};
    }
    case Method::whitened_attention: {
      const MatrixXd L =
          std::sqrt(double(n) / std::sqrt(double(d))) * attn::whitening_map(c * p.X);
      return {L.transpose(), L.transpose(), 1.0};
    }
    case Method::least_squares:
      break;
  }
  throw std::invalid_argument("fixed_weights: least squares has no attention weights");
}
// [fixed-weights]

MatrixXd softmax_weights(const attn::AttentionRegressor& w, const MatrixXd& X,
                         const MatrixXd& Xq) {
  return attn::softmax_rows(Xq * w.W_Q * w.W_K.transpose() * X.transpose());
}

MatrixXd softmax_weights_in_units(const UnitsProblem& p, double c, Method m) {
  return softmax_weights(fixed_weights(p, c, m), c * p.X, c * p.X_query);
}

// [predict-in-units]
Prediction predict_in_units(const UnitsProblem& p, double c, Method m) {
  if (!(std::isfinite(c) && c > 0))
    throw std::invalid_argument("predict_in_units: c must be positive and finite");
  const MatrixXd X = c * p.X, Xq = c * p.X_query;  // the same currents, other numbers
  Prediction out;
  if (m == Method::least_squares) {
    out.y = Xq * attn::least_squares_qr(X, p.Y);
    return out;
  }
  const attn::AttentionRegressor w = fixed_weights(p, c, m);
  const auto h = m == Method::id_attention ? attn::Normalisation::identity
                                           : attn::Normalisation::softmax;
  out.y = attn::predict(w, X, p.Y, Xq, h);
  if (h == attn::Normalisation::softmax) {
    const MatrixXd A = softmax_weights(w, X, Xq);  // softmax(Xq W_Q W_K^T X^T)
    double entropy = 0, max_weight = 0;
    for (Index i = 0; i < A.rows(); ++i) {
      entropy += attn::entropy(A.row(i).transpose());
      max_weight += A.row(i).maxCoeff();
    }
    out.entropy = entropy / double(A.rows());
    out.max_weight = max_weight / double(A.rows());
  }
  return out;
}
// [predict-in-units]

std::vector<double> unit_grid(int decades, int per_decade) {
  std::vector<double> grid;
  for (int k = -decades * per_decade; k <= decades * per_decade; ++k)
    grid.push_back(k == 0 ? 1.0 : std::pow(10.0, double(k) / per_decade));
  return grid;
}

double layer_norm_change(const MatrixXd& X, double c, double eps0) {
  const VectorXd none;
  const MatrixXd base = attn::layer_norm(X, none, none, eps0);
  return (attn::layer_norm(c * X, none, none, eps0) - base).norm() / base.norm();
}

double layer_norm_change_formula(const MatrixXd& X, double c, double eps0) {
  double num = 0, den = 0;
  for (Index i = 0; i < X.rows(); ++i) {
    const VectorXd centred = X.row(i).transpose().array() - X.row(i).mean();
    const double var = centred.squaredNorm() / double(X.cols());
    const double a = 1 / std::sqrt(var + eps0 / (c * c)), b = 1 / std::sqrt(var + eps0);
    num += (a - b) * (a - b) * centred.squaredNorm();
    den += b * b * centred.squaredNorm();
  }
  return std::sqrt(num / den);
}

MatrixXd unit_sweep(const UnitsProblem& p, const std::vector<double>& grid, double eps0,
                    const std::function<void(Index, double)>& progress) {
  const Index K = Index(grid.size());
  MatrixXd t(K, 13);
  std::vector<VectorXd> base;
  for (const Method m : methods) base.push_back(predict_in_units(p, 1.0, m).y);
  for (Index k = 0; k < K; ++k) {
    const double c = grid[std::size_t(k)];
    progress(k, c);
    t(k, 0) = c;
    for (Index i = 0; i < 4; ++i) {
      const Prediction pr = predict_in_units(p, c, methods[std::size_t(i)]);
      t(k, change + i) = relative_change(pr.y, base[std::size_t(i)]);
      t(k, mse + i) = (pr.y - p.Y_query).squaredNorm() / double(p.Y_query.size());
      if (i >= 2) t(k, entropy + i - 2) = pr.entropy;
    }
    t(k, layernorm) = layer_norm_change(p.X, c, eps0);
    t(k, formula) = layer_norm_change_formula(p.X, c, eps0);
  }
  progress(K, 0);
  return t;
}

std::function<MatrixXd(const MatrixXd&)> in_unit(double c) {
  if (!(std::isfinite(c) && c > 0))
    throw std::invalid_argument("in_unit: the unit factor must be positive and finite");
  return [c](const MatrixXd& X) -> MatrixXd { return c * X; };
}

// [whitened-features]
MatrixXd whitening_features(const MatrixXd& X) {
  const double rho = attn::experiment_feature_scale * std::sqrt(double(X.rows()));
  return MatrixXd(rho * attn::whitening_map(X)).transpose();  // T = (rho L)^T
}
// [whitened-features]

std::vector<experiments::RunResult> train_in_unit(Index n, Index d, int runs, int iterations,
                                           std::uint64_t seed, double unit, bool whiten) {
  // [train-in-units]
  experiments::ExperimentConfig config;
  config.n = n;
  config.d = d;
  config.h = attn::Normalisation::softmax;
  config.runs = runs;
  config.iterations = iterations;
  config.seed = seed;
  config.threads = 2;
  config.inputs = in_unit(unit);                     // the same currents, in A, mA or kA
  if (whiten) config.features = whitening_features;  // train on X (rho L)^T
  return experiments::run_experiment(config);
  // [train-in-units]
}

}  // namespace ch04
