#pragma once
// Chapter 04's computations, shared by the program (main.cpp prints, records and draws them),
// its tests and its live figure (live.cpp): the units experiment.
//
// One data set in the source's units (x in amperes, y in volts) is expressed in other
// units of current: its numbers are multiplied by c (c = 1000: milliamperes, c = 1e-3:
// kiloamperes). Four predictors predict held-out queries in each unit: least squares, refitted
// to the numbers of the unit; two attention systems whose weights are numbers chosen once, for
// amperes; and whitened attention, whose weights are recomputed in each unit. A unit-free
// predictor gives the same volts for every c.

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/random.hpp"
#include "experiments/regression_experiment.hpp"

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

UnitsProblem units_problem(Index n, Index d, Index m, attn::Rng& rng);

enum class Method { least_squares, id_attention, softmax_attention, whitened_attention };
inline const std::vector<Method> methods{Method::least_squares, Method::id_attention,
                                         Method::softmax_attention,
                                         Method::whitened_attention};

std::string name(Method m);

struct Prediction {
  VectorXd y;               // predictions for the queries, volts
  double entropy = NAN;     // mean entropy of a query's weights (softmax methods), nats
  double max_weight = NAN;  // mean largest weight of a query (softmax methods)
};

// The weights of each attention system in the unit c (least squares has none: throws). The
// first two are numbers chosen once, for amperes, whatever c is:
//  id-attention:      W_Q = I, W_K = (X^T X)^-1 of the data in A, w_v = 1, so that at
//                     c = 1 it predicts exactly like least squares (chapter 03);
//  softmax attention: W_Q = W_K = I / (sigma_x d^(1/4)), so that at c = 1 the scores
//                     x_q^T x_j / (sigma_x^2 sqrt d) have standard deviation about 1;
//  whitened:          W_Q = W_K = sqrt(n / sqrt d) L^T, with L = whitening_map of the data
//                     *in the current unit* (L carries 1/A): the scores
//                     (n / sqrt d) x_q^T (X^T X)^-1 x_j are the same numbers in any unit.
attn::AttentionRegressor fixed_weights(const UnitsProblem& p, double c, Method m);

// The softmax weights softmax(Xq W_Q W_K^T X^T) of the queries Xq over the training points X
// (queries x training points).
MatrixXd softmax_weights(const attn::AttentionRegressor& w, const MatrixXd& X,
                         const MatrixXd& Xq);

// The same for method m (a softmax one) with the currents multiplied by c, as
// predict_in_units forms them.
MatrixXd softmax_weights_in_units(const UnitsProblem& p, double c, Method m);

// Predictions for the queries with every current multiplied by c (the unit A/c).
Prediction predict_in_units(const UnitsProblem& p, double c, Method m);

// c = 10^k for k from -decades to +decades, `per_decade` points per decade; always
// contains c = 1 exactly.
std::vector<double> unit_grid(int decades, int per_decade);

// ||a - b|| / ||b|| (Frobenius for matrices).
template <typename A, typename B>
double relative_change(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) {
  return (a - b).norm() / b.norm();
}

// LayerNorm without affine parameters, every row of X in the unit A/c:
// ||LN(cX) - LN(X)||_F / ||LN(X)||_F.
double layer_norm_change(const MatrixXd& X, double c, double eps0);

// The same, predicted: LN(cx) = (x - mean) / sqrt(s^2 + eps0 / c^2) row by row.
double layer_norm_change_formula(const MatrixXd& X, double c, double eps0);

// Section 4's sweep over the units c in `grid`: a row per c, with the columns of
// 04-unit-sweep.csv (SweepColumn): c; the relative change against c = 1 and the held-out mean
// squared error of each method (`methods` order); the mean entropy of the two softmax
// systems; LayerNorm's change with epsilon eps0, measured and predicted.
// progress(k, c) is told before row k, and (grid size, 0) when done.
enum SweepColumn { change = 1, mse = 5, entropy = 9, layernorm = 11, formula = 12 };
MatrixXd unit_sweep(const UnitsProblem& p, const std::vector<double>& grid, double eps0,
                    const std::function<void(Index, double)>& progress);

// Chapter 03's training experiment in other units (section 5), through the two hooks of
// experiments::ExperimentConfig.
//
// The same currents in a unit c times smaller: every entry times c (c = 1000: mA instead
// of A). The trainer's initial weights stay as they are, as in a framework that knows
// nothing of units.
std::function<MatrixXd(const MatrixXd&)> in_unit(double c);

// The whitened system's features X (rho L)^T: L = whitening_map of the training inputs,
// and the plain number rho = sqrt(n) * 10/sqrt(3) (10/sqrt(3): the standard deviation of
// the source's currents counted in amperes, fixed whatever the unit), which gives the
// whitened features the numerical scale the source's features have in amperes.
MatrixXd whitening_features(const MatrixXd& X);

// Section 5: chapter 03's training experiment (softmax attention, `runs` runs of
// `iterations` Adam steps, seeds from `seed`, two threads) on n x d data with the currents in
// the unit A/c (c = `unit`), on the plain features or on the whitened ones.
std::vector<experiments::RunResult> train_in_unit(Index n, Index d, int runs, int iterations,
                                           std::uint64_t seed, double unit, bool whiten);

}  // namespace ch04
