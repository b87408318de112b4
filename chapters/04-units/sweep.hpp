#pragma once
// Chapter 04 — the units experiment, shared by the program and the tests.
//
// One data set in the source's units (x in amperes, y in volts) is expressed in other
// units of current: its numbers are multiplied by c (c = 1000: milliamperes, c = 1e-3:
// kiloamperes). Four predictors, whose weights are fixed numbers chosen once in amperes,
// predict held-out queries in each unit; a unit-free predictor gives the same volts for
// every c.

#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/transformer_block.hpp"

namespace ch04 {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// The source's data (chapter 03's regression_data: X ~ U[-10, 10] A, Y = X beta + noise
// in V) and m held-out queries with their observed outputs.
struct UnitsProblem {
  MatrixXd X;        // n x d, amperes
  VectorXd Y;        // n, volts
  MatrixXd X_query;  // m x d, amperes
  VectorXd Y_query;  // m, volts
};

inline UnitsProblem units_problem(Index n, Index d, Index m, attn::Rng& rng) {
  const attn::RegressionData data = attn::regression_data(n, d, rng);
  UnitsProblem p{data.X, data.Y, attn::random_uniform(m, d, rng, -10.0, 10.0), {}};
  p.Y_query = p.X_query * data.beta + attn::random_normal(m, 1, rng);
  return p;
}

enum class Method { least_squares, id_attention, softmax_attention, whitened_attention };
inline const std::vector<Method> methods{Method::least_squares, Method::id_attention,
                                         Method::softmax_attention,
                                         Method::whitened_attention};

inline std::string name(Method m) {
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

struct Prediction {
  VectorXd y;               // predictions for the queries, volts
  double entropy = NAN;     // mean entropy of a query's weights (softmax methods), nats
  double max_weight = NAN;  // mean largest weight of a query (softmax methods)
};

// The fixed weights of each attention system, as numbers chosen once for amperes:
//  id-attention:      W_Q = I, W_K = (X^T X)^-1 of the data in A, w_v = 1, so that at
//                     c = 1 it predicts exactly like least squares (chapter 03);
//  softmax attention: W_Q = W_K = I / (sigma_x d^(1/4)), so that at c = 1 the scores
//                     x_q^T x_j / (sigma_x^2 sqrt d) have standard deviation about 1;
//  whitened:          W_Q = W_K = sqrt(n / sqrt d) L^T, with L = whitening_map of the data
//                     *in the current unit* (L carries 1/A): the scores
//                     (n / sqrt d) x_q^T (X^T X)^-1 x_j are the same numbers in any unit.
// [fixed-weights]
inline attn::AttentionRegressor fixed_weights(const UnitsProblem& p, double c, Method m) {
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

// Predictions for the queries with every current multiplied by c (the unit A/c).
// [predict-in-units]
inline Prediction predict_in_units(const UnitsProblem& p, double c, Method m) {
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
    const MatrixXd A = attn::softmax_rows(Xq * w.W_Q * w.W_K.transpose() * X.transpose());
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

// c = 10^k for k from -decades to +decades, `per_decade` points per decade; always
// contains c = 1 exactly.
inline std::vector<double> unit_grid(int decades, int per_decade) {
  std::vector<double> grid;
  for (int k = -decades * per_decade; k <= decades * per_decade; ++k)
    grid.push_back(k == 0 ? 1.0 : std::pow(10.0, double(k) / per_decade));
  return grid;
}

// ||a - b|| / ||b||.
inline double relative_change(const VectorXd& a, const VectorXd& b) {
  return (a - b).norm() / b.norm();
}

// LayerNorm without affine parameters, every row of X in the unit A/c:
// ||LN(cX) - LN(X)||_F / ||LN(X)||_F.
inline double layer_norm_change(const MatrixXd& X, double c, double eps0) {
  const VectorXd none;
  const MatrixXd base = attn::layer_norm(X, none, none, eps0);
  return (attn::layer_norm(c * X, none, none, eps0) - base).norm() / base.norm();
}

// The same, predicted: LN(cx) = (x - mean) / sqrt(s^2 + eps0 / c^2) row by row.
inline double layer_norm_change_formula(const MatrixXd& X, double c, double eps0) {
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

// Chapter 03's training experiment in other units (section 5), through the two hooks of
// experiments::ExperimentConfig.
//
// The same currents in a unit c times smaller: every entry times c (c = 1000: mA instead
// of A). The trainer's initial weights stay as they are, as in a framework that knows
// nothing of units.
inline std::function<MatrixXd(const MatrixXd&)> in_unit(double c) {
  if (!(std::isfinite(c) && c > 0))
    throw std::invalid_argument("in_unit: the unit factor must be positive and finite");
  return [c](const MatrixXd& X) -> MatrixXd { return c * X; };
}

// The whitened system's features X (rho L)^T: L = whitening_map of the training inputs,
// and the plain number rho = sqrt(n) * 10/sqrt(3) (10/sqrt(3): the standard deviation of
// the source's currents counted in amperes, fixed whatever the unit), which gives the
// whitened features the numerical scale the source's features have in amperes.
// [whitened-features]
inline MatrixXd whitening_features(const MatrixXd& X) {
  const double rho = attn::experiment_feature_scale * std::sqrt(double(X.rows()));
  return MatrixXd(rho * attn::whitening_map(X)).transpose();  // T = (rho L)^T
}
// [whitened-features]

}  // namespace ch04
