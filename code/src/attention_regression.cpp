#include "attn/attention_regression.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/fast_exp.hpp"
#include "attn/least_squares.hpp"
#include "attn/parallel.hpp"
#include "attn/softmax.hpp"
#include "common.hpp"

namespace attn {

namespace {

using detail::require;
using detail::shape;

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using MatrixMap = Eigen::Map<MatrixXd>;
using ConstMatrixMap = Eigen::Map<const MatrixXd>;

// Shapes and finiteness of the data and the parameters; `who` names the caller.
void check_problem(const char* who, const Eigen::Ref<const MatrixXd>& X,
                   const Eigen::Ref<const VectorXd>& Y, const AttentionRegressor& p) {
  const std::string w = who;
  require(X.rows() > 0 && X.cols() > 0, w + ": X is " + shape(X.rows(), X.cols()) +
                                            "; it needs n >= 1 rows and d >= 1 columns");
  require(Y.size() == X.rows(), w + ": Y has " + std::to_string(Y.size()) +
                                    " entries but X has " + std::to_string(X.rows()) +
                                    " rows");
  const Index d = X.cols();
  require(
      p.W_Q.rows() == d && p.W_Q.cols() == d && p.W_K.rows() == d && p.W_K.cols() == d,
      w + ": W_Q is " + shape(p.W_Q.rows(), p.W_Q.cols()) + " and W_K is " +
          shape(p.W_K.rows(), p.W_K.cols()) + "; both must be " + shape(d, d));
  require(X.allFinite() && Y.allFinite(), w + ": X or Y has a NaN or infinite entry");
  require(p.W_Q.allFinite() && p.W_K.allFinite() && std::isfinite(p.w_v),
          w + ": a parameter (W_Q, W_K or w_v) is NaN or infinite");
}

// One thread's scratch memory for one block of queries.
struct BlockScratch {
  MatrixXd T;   // n x block: S^T, then A^T, then (dL/dS)^T, in place
  MatrixXd EX;  // block x d: E_blk X
};

// The training problem and the buffers one evaluation needs, allocated once per training
// run rather than once per iteration.
struct Problem {
  Eigen::Ref<const MatrixXd> X;
  Eigen::Ref<const VectorXd> Y;
  VectorXd XtY;  // X^T Y, constant during training
  MatrixXd P;    // softmax: X M^T
  VectorXd yhat;
  VectorXd r;  // softmax: yhat - Y, row by row
  VectorXd z;  // softmax: z = A Y, row by row; NaN in a row whose scores were not finite
  int threads = 1;                    // softmax: threads that share the blocks of queries
  std::vector<BlockScratch> scratch;  // softmax: one per thread
  MatrixXd partial_C;  // softmax gradient: d x (d * wave), each block's share of C

  Problem(const Eigen::Ref<const MatrixXd>& X_, const Eigen::Ref<const VectorXd>& Y_,
          int threads_ = 1)
      : X(X_), Y(Y_), XtY(X_.transpose() * Y_), yhat(X_.rows()), threads(threads_) {}
};

// Each thread must get at least this many units of the work n^2 (d + 8) of an evaluation
// (the two n x n x d products and the exponentials): below that, starting a helper thread
// for each evaluation costs more than it saves (measured: docs/performance.md, "Two cores").
constexpr double min_work_per_thread = 1 << 21;

// The d x d partial C's of a wave of blocks are kept until they are summed in order:
// at most this many doubles (32 MB), but at least one block per thread.
constexpr Index max_partial_doubles = Index{1} << 22;

// Block k of the softmax system's queries, rows i0 .. i0 + b - 1: their predictions, into
// problem.yhat, r and z, and, if C_k is not null, the block's share of C = X^T E X,
// C_k = X_blk^T (E_blk X). Touches only these rows and its own scratch memory, so blocks
// can run on different threads; every block is computed the same way on any thread.
void softmax_block(Problem& problem, double w_v, double two_over_n, Index i0, Index b,
                   BlockScratch& scratch, MatrixMap* C_k) {
  const auto& X = problem.X;
  const auto& Y = problem.Y;
  auto T = scratch.T.leftCols(b);
  T.noalias() = problem.P * X.middleRows(i0, b).transpose();
  // [softmax-row]
  for (Index c = 0; c < b; ++c) {
    const Index i = i0 + c;
    auto t = T.col(c);
    // Stable softmax of row i of S: subtract the row maximum, so every exponent
    // is <= 0, the largest term is exactly 1 and the sum lies in [1, n].
    const double m = t.maxCoeff();
    if (!std::isfinite(m)) {  // after divergence only: NaN, which train() reports
      problem.yhat(i) = problem.r(i) = problem.z(i) =
          std::numeric_limits<double>::quiet_NaN();
      t.setConstant(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    // The exponentials, the costliest step after the two matrix products, by
    // fast_exp (fast_exp.hpp); clamped at -708, so tiny weights come out as ~3e-308
    // instead of 0, which changes no sum visibly.
    t.array() = (t.array() - m).max(-708.0);
    fast_exp_nonpositive(t);
    const double inv_sum = 1.0 / t.sum();
    const double z = t.dot(Y) * inv_sum;  // z_i = (A Y)_i, a weighted mean of Y
    problem.yhat(i) = w_v * z;
    const double r = problem.yhat(i) - Y(i);
    problem.r(i) = r;  // the loss sums r_i^2 over the rows, in row order, after the blocks
    problem.z(i) = z;
    if (C_k) {
      // Backward through row i. yhat_i = w_v sum_j A_ij Y_j gives
      // dL/dA_ij = w_v G_i Y_j, and the softmax Jacobian,
      // dL/dS_ij = A_ij (dL/dA_ij - sum_k A_ik dL/dA_ik), gives
      //   dL/dS_ij = w_v G_i A_ij (Y_j - z_i).
      // Column i of T becomes row i of E = dL/dS.
      const double G = two_over_n * r;
      t.array() *= (w_v * G * inv_sum) * (Y.array() - z);
    }
  }
  // [softmax-row]
  if (C_k) {
    // [softmax-backward]
    // S = X M X^T, so dS = X dM X^T and dL/dM = C = X^T E X, the sum over the
    // blocks of C_k = X_blk^T (E_blk X); E_blk holds the block's rows of E (T's columns).
    auto EX = scratch.EX.topRows(b);
    EX.noalias() = T.transpose() * X;
    C_k->noalias() = X.middleRows(i0, b).transpose() * EX;
    // [softmax-backward]
  }
}

// The loss at (W_Q, W_K, w_v) and, if dW_Q is not null, the gradient into
// (*dW_Q, *dW_K, *dw_v). The prediction is left in problem.yhat.
//
// Notation: M = W_Q W_K^T (d x d), b = X^T Y (d), G = dL/dyhat = (2/n)(yhat - Y) (n),
// C = dL/dM (d x d). Since M = W_Q W_K^T, dM = dW_Q W_K^T + W_Q dW_K^T, so
//   dL = tr(C^T dM) = tr(W_K^T C^T dW_Q) + tr(W_Q^T C dW_K)
//   =>  dL/dW_Q = C W_K,   dL/dW_K = C^T W_Q.
double evaluate(const Eigen::Ref<const MatrixXd>& W_Q,
                const Eigen::Ref<const MatrixXd>& W_K, double w_v, Normalisation h,
                Problem& problem, MatrixMap* dW_Q, MatrixMap* dW_K, double* dw_v) {
  const auto& X = problem.X;
  const auto& Y = problem.Y;
  const auto& b = problem.XtY;
  const Index n = X.rows();
  const double two_over_n = 2.0 / static_cast<double>(n);
  if (h == Normalisation::identity) {
    // [identity-forward]
    // yhat = S Y w_v = X M X^T Y w_v = w_v X u with u = M b = W_Q (W_K^T b):
    // the n x n matrix S is never formed, and M is not formed either; O(nd + d^2).
    const VectorXd kb = W_K.transpose() * b;  // W_K^T b
    const VectorXd u = W_Q * kb;              // M b  (w_v u = beta_eq)
    problem.yhat.noalias() = w_v * (X * u);
    // [identity-forward]
    const double loss = (problem.yhat - Y).squaredNorm() / static_cast<double>(n);
    if (dW_Q) {
      // [identity-backward]
      // dyhat = dw_v X M b + w_v X dM b, so with G = (2/n)(yhat - Y) and g = X^T G:
      //   dL/dw_v = G^T X M b = g . u
      //   dL/dM   = w_v X^T G b^T = w_v g b^T            (rank one)
      //   dL/dW_Q = C W_K = w_v g (W_K^T b)^T,   dL/dW_K = C^T W_Q = w_v b (W_Q^T g)^T
      const VectorXd g = X.transpose() * (two_over_n * (problem.yhat - Y));
      *dw_v = g.dot(u);
      dW_Q->noalias() = g * (w_v * kb).transpose();
      dW_K->noalias() = b * (w_v * (W_Q.transpose() * g)).transpose();
      // [identity-backward]
    }
    return loss;
  }

  // Softmax. Eigen stores columns contiguously, so we hold T = S^T: column i of T is row i
  // of S, the scores of query i. S^T = X M^T X^T = P X^T with P = X W_K W_Q^T.
  // The queries go in blocks of `block` columns, so that the block of T (n x block) stays
  // in the processor's cache from the product that makes it, through the softmax and its
  // backward pass, to the product that consumes it; the n x n matrix is never stored.
  // Flops per evaluation: 2nd^2 + 2n^2 d (scores), n^2 exponentials, and with the
  // gradient 2n^2 d + 2nd^2 (C = X^T E X) + 4d^3.
  //
  // Threads share the blocks (softmax_block()); each block's rows and its share C_k of C
  // are computed whole by one thread, and this thread sums the shares in block order and
  // the rows' losses in row order, so the result is bit for bit the same for any number
  // of threads.
  const Index d = X.cols();
  const Index block = std::min<Index>(n, 64);
  const Index blocks = (n + block - 1) / block;
  const int threads = evaluation_threads(n, d, problem.threads);
  // The shares of a wave of blocks are kept until they are summed; one thread sums each
  // share as soon as it is made.
  const Index wave =
      threads == 1 ? 1
                   : std::min(blocks, std::max<Index>(threads, max_partial_doubles / (d * d)));
  problem.P.resize(n, d);
  problem.r.resize(n);
  problem.z.resize(n);
  problem.scratch.resize(static_cast<std::size_t>(threads));
  for (BlockScratch& s : problem.scratch) {
    s.T.resize(n, block);
    if (dW_Q) s.EX.resize(block, d);
  }
  if (dW_Q) problem.partial_C.resize(d, d * wave);
  problem.P.noalias() = X * (W_K * W_Q.transpose());
  MatrixXd C = MatrixXd::Zero(d, d);
  for (Index k0 = 0; k0 < blocks; k0 += wave) {
    const Index count = std::min(wave, blocks - k0);
    parallel_for(count, threads, [&](Index j, int worker) {
      const Index i0 = (k0 + j) * block;
      MatrixMap C_k(problem.partial_C.data() + j * d * d, d, d);
      softmax_block(problem, w_v, two_over_n, i0, std::min(block, n - i0),
                    problem.scratch[static_cast<std::size_t>(worker)],
                    dW_Q ? &C_k : nullptr);
    });
    if (dW_Q)
      for (Index j = 0; j < count; ++j) C += problem.partial_C.middleCols(j * d, d);
  }
  // The loss and dL/dw_v = sum_i G_i z_i: sums over the rows, in row order.
  double loss = 0.0, dL_dw_v = 0.0;
  for (Index i = 0; i < n; ++i) {
    if (std::isnan(problem.z(i))) {  // a row whose scores were not finite
      loss = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    const double r = problem.r(i);
    loss += r * r;
    if (dW_Q) {
      const double G = two_over_n * r;
      dL_dw_v += G * problem.z(i);
    }
  }
  if (dW_Q) {
    dW_Q->noalias() = C * W_K;
    dW_K->noalias() = C.transpose() * W_Q;
    *dw_v = dL_dw_v;
  }
  return loss / static_cast<double>(n);
}

// The parameters packed into one vector, theta = [vec W_Q; vec W_K; w_v], for Adam.
VectorXd pack(const AttentionRegressor& p) {
  const Index d2 = p.W_Q.size();
  VectorXd theta(2 * d2 + 1);
  theta.head(d2) = p.W_Q.reshaped();
  theta.segment(d2, d2) = p.W_K.reshaped();
  theta(2 * d2) = p.w_v;
  return theta;
}

AttentionRegressor unpack(const VectorXd& theta, Index d) {
  return {ConstMatrixMap(theta.data(), d, d), ConstMatrixMap(theta.data() + d * d, d, d),
          theta(2 * d * d)};
}

}  // namespace

Eigen::MatrixXd attention_matrix(const AttentionRegressor& p,
                                 const Eigen::Ref<const Eigen::MatrixXd>& X,
                                 Normalisation h) {
  check_problem("attention_matrix", X, VectorXd::Zero(X.rows()), p);
  const MatrixXd S = X * (p.W_Q * p.W_K.transpose()) * X.transpose();
  return h == Normalisation::identity ? S : softmax_rows(S);
}

Eigen::VectorXd predict(const AttentionRegressor& p,
                        const Eigen::Ref<const Eigen::MatrixXd>& X,
                        const Eigen::Ref<const Eigen::VectorXd>& Y,
                        const Eigen::Ref<const Eigen::MatrixXd>& X_query,
                        Normalisation h) {
  check_problem("predict", X, Y, p);
  require(X_query.cols() == X.cols() && X_query.allFinite(),
          "predict: X_query is " + shape(X_query.rows(), X_query.cols()) +
              " and must have " + std::to_string(X.cols()) +
              " columns and finite entries");
  if (h == Normalisation::identity)
    return p.w_v * (X_query * (p.W_Q * (p.W_K.transpose() * (X.transpose() * Y))));
  const MatrixXd S = (X_query * (p.W_Q * p.W_K.transpose())) * X.transpose();
  return p.w_v * (softmax_rows(S) * Y);
}

Eigen::VectorXd predict_training(const AttentionRegressor& p,
                                 const Eigen::Ref<const Eigen::MatrixXd>& X,
                                 const Eigen::Ref<const Eigen::VectorXd>& Y,
                                 Normalisation h) {
  check_problem("predict_training", X, Y, p);
  Problem problem(X, Y);
  evaluate(p.W_Q, p.W_K, p.w_v, h, problem, nullptr, nullptr, nullptr);
  return problem.yhat;
}

int evaluation_threads(Eigen::Index n, Eigen::Index d, int threads) {
  require(threads >= 1,
          "evaluation_threads: threads must be >= 1 (got " + std::to_string(threads) + ")");
  if (n < 1 || d < 1) return 1;
  const Index blocks = (n + 63) / 64;
  const double work = static_cast<double>(n) * static_cast<double>(n) *
                      (static_cast<double>(d) + 8.0);
  const double by_work = std::floor(work / min_work_per_thread);
  return static_cast<int>(std::max<double>(
      1.0, std::min({static_cast<double>(threads), static_cast<double>(blocks), by_work})));
}

double loss_and_gradient(const AttentionRegressor& p,
                         const Eigen::Ref<const Eigen::MatrixXd>& X,
                         const Eigen::Ref<const Eigen::VectorXd>& Y, Normalisation h,
                         AttentionRegressor* gradient, int threads) {
  check_problem("loss_and_gradient", X, Y, p);
  require(threads >= 1, "loss_and_gradient: threads must be >= 1 (got " +
                            std::to_string(threads) + ")");
  Problem problem(X, Y, threads);
  if (!gradient)
    return evaluate(p.W_Q, p.W_K, p.w_v, h, problem, nullptr, nullptr, nullptr);
  const Index d = X.cols();
  gradient->W_Q.resize(d, d);
  gradient->W_K.resize(d, d);
  MatrixMap dW_Q(gradient->W_Q.data(), d, d), dW_K(gradient->W_K.data(), d, d);
  return evaluate(p.W_Q, p.W_K, p.w_v, h, problem, &dW_Q, &dW_K, &gradient->w_v);
}

Eigen::VectorXd equivalent_beta(const AttentionRegressor& p,
                                const Eigen::Ref<const Eigen::MatrixXd>& X,
                                const Eigen::Ref<const Eigen::VectorXd>& Y) {
  check_problem("equivalent_beta", X, Y, p);
  return p.w_v * (p.W_Q * (p.W_K.transpose() * (X.transpose() * Y)));
}

void validate(const Adam& adam) {
  require(std::isfinite(adam.learning_rate) && adam.learning_rate > 0,
          "Adam: the learning rate must be positive and finite (got " +
              std::to_string(adam.learning_rate) + ")");
  require(adam.beta1 >= 0 && adam.beta1 < 1,
          "Adam: beta1 must lie in [0, 1) (got " + std::to_string(adam.beta1) + ")");
  require(adam.beta2 >= 0 && adam.beta2 < 1,
          "Adam: beta2 must lie in [0, 1) (got " + std::to_string(adam.beta2) + ")");
  require(
      std::isfinite(adam.epsilon) && adam.epsilon >= 0,
      "Adam: epsilon must be finite and >= 0 (got " + std::to_string(adam.epsilon) + ")");
  require(adam.decay > 0 && adam.decay <= 1,
          "Adam: decay must lie in (0, 1] (got " + std::to_string(adam.decay) + ")");
}

void adam_step(const Adam& adam, AdamState& state, Eigen::Ref<Eigen::VectorXd> theta,
               const Eigen::Ref<const Eigen::VectorXd>& gradient) {
  validate(adam);
  require(gradient.size() == theta.size(),
          "adam_step: the gradient has " + std::to_string(gradient.size()) +
              " entries but the parameters have " + std::to_string(theta.size()));
  if (state.step == 0) {
    state.m = VectorXd::Zero(theta.size());
    state.v = VectorXd::Zero(theta.size());
  }
  require(state.m.size() == theta.size() && state.v.size() == theta.size(),
          "adam_step: the state belongs to a parameter vector of another size");
  // [adam]
  ++state.step;
  const double t = static_cast<double>(state.step);
  state.m = adam.beta1 * state.m + (1 - adam.beta1) * gradient;
  state.v = adam.beta2 * state.v + (1 - adam.beta2) * gradient.cwiseAbs2();
  const double rate = adam.learning_rate * std::pow(adam.decay, t - 1);
  const double step_size = rate / (1 - std::pow(adam.beta1, t));  // bias corrections
  const double sqrt_c2 = std::sqrt(1 - std::pow(adam.beta2, t));
  theta.array() -=
      step_size * state.m.array() / (state.v.array().sqrt() / sqrt_c2 + adam.epsilon);
  // [adam]
}

TrainingResult train(const Eigen::Ref<const Eigen::MatrixXd>& X,
                     const Eigen::Ref<const Eigen::VectorXd>& Y, Normalisation h,
                     const AttentionRegressor& initial, int iterations, const Adam& adam,
                     int threads) {
  check_problem("train", X, Y, initial);
  require(iterations >= 0,
          "train: iterations must be >= 0 (got " + std::to_string(iterations) + ")");
  require(threads >= 1,
          "train: threads must be >= 1 (got " + std::to_string(threads) + ")");
  validate(adam);
  const Index d = X.cols(), d2 = d * d;
  Problem problem(X, Y, threads);
  VectorXd theta = pack(initial), grad(theta.size());
  MatrixMap dW_Q(grad.data(), d, d), dW_K(grad.data() + d2, d, d);
  AdamState state;
  TrainingResult result;
  result.loss.reserve(static_cast<std::size_t>(iterations) + 1);
  for (int it = 0; it <= iterations; ++it) {
    const ConstMatrixMap W_Q(theta.data(), d, d), W_K(theta.data() + d2, d, d);
    const bool last = it == iterations;
    result.loss.push_back(evaluate(W_Q, W_K, theta(2 * d2), h, problem,
                                   last ? nullptr : &dW_Q, &dW_K, &grad(2 * d2)));
    if (!std::isfinite(result.loss.back()))
      throw std::runtime_error("train: the loss became " +
                               std::to_string(result.loss.back()) + " at iteration " +
                               std::to_string(it) +
                               ": the training diverged (try a smaller learning rate)");
    if (!last) adam_step(adam, state, theta, grad);
  }
  result.parameters = unpack(theta, d);
  return result;
}

AttentionRegressor random_regressor(Eigen::Index d, Rng& rng, double feature_scale) {
  require(d >= 1,
          "random_regressor: d must be at least 1 (got " + std::to_string(d) + ")");
  require(std::isfinite(feature_scale) && feature_scale > 0,
          "random_regressor: feature_scale must be positive and finite");
  const double s = 1.0 / (feature_scale * std::pow(static_cast<double>(d), 0.75));
  AttentionRegressor p;
  // W_Q^T, then W_K^T (the source's W_q, W_k) are drawn: the seeded results follow this
  // order of draws.
  p.W_Q = random_normal(d, d, rng, s).transpose();
  p.W_K = random_normal(d, d, rng, s).transpose();
  p.w_v = 0.0;
  return p;
}

double best_value_weight(const AttentionRegressor& p,
                         const Eigen::Ref<const Eigen::MatrixXd>& X,
                         const Eigen::Ref<const Eigen::VectorXd>& Y, Normalisation h) {
  AttentionRegressor unit = p;
  unit.w_v = 1.0;
  const VectorXd u = predict_training(unit, X, Y, h);  // h(S) Y
  const double uu = u.squaredNorm();
  return uu > 0 ? u.dot(Y) / uu : 0.0;
}

double initial_value_weight(const AttentionRegressor& p,
                            const Eigen::Ref<const Eigen::MatrixXd>& X,
                            const Eigen::Ref<const Eigen::VectorXd>& Y, Normalisation h) {
  check_problem("initial_value_weight", X, Y, p);
  return h == Normalisation::softmax ? 1.0 : best_value_weight(p, X, Y, h);
}

RegressionData regression_data(Eigen::Index n, Eigen::Index d, Rng& rng) {
  require(d >= 1 && n >= d,
          "regression_data: need 1 <= d <= n for a least-squares fit (got n = " +
              std::to_string(n) + ", d = " + std::to_string(d) + ")");
  RegressionData data;
  data.X = random_uniform(n, d, rng, -10.0, 10.0);
  data.beta = random_normal(d, 1, rng);
  data.Y = data.X * data.beta + random_normal(n, 1, rng);
  return data;
}

}  // namespace attn
