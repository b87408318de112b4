#include "attn/kernel_regression.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "attn/exercise.hpp"
#include "attn/softmax.hpp"
#include "common.hpp"
#include "kernel_checks.hpp"

namespace attn {

namespace {

using detail::inf;
using detail::check_rows_have_keys;
using detail::number;

void check_bandwidth(const char* where, double h) {
  if (!(h > 0) || !std::isfinite(h))
    throw std::invalid_argument(std::string(where) +
                                ": the bandwidth must be a finite number > 0 (got " +
                                number(h) + ")");
}

void check_points(const char* where, const Eigen::Ref<const Eigen::MatrixXd>& Q,
                  const Eigen::Ref<const Eigen::MatrixXd>& X) {
  if (Q.cols() != X.cols())
    throw std::invalid_argument(std::string(where) + ": queries have width " +
                                std::to_string(Q.cols()) + " but keys have width " +
                                std::to_string(X.cols()));
  if (X.rows() == 0) throw std::invalid_argument(std::string(where) + ": no keys");
  if (!Q.allFinite() || !X.allFinite())
    throw std::invalid_argument(std::string(where) + ": a point is NaN or infinite");
}


// D / h^2 entrywise. When h^2 underflows (or 1/h^2 overflows) it is computed as
// (sqrt(D) / h)^2 instead, so that D = 0 gives 0 rather than 0/0.
Eigen::MatrixXd scaled_squares(const Eigen::MatrixXd& D, double h) {
  const double inv_h2 = 1.0 / (h * h);
  if (h * h >= std::numeric_limits<double>::min() && std::isfinite(inv_h2))
    return D * inv_h2;
  return D.unaryExpr([h](double d2) {
    const double u = std::sqrt(d2) / h;
    return u * u;
  });
}

}  // namespace

const std::vector<Kernel>& all_kernels() {
  static const std::vector<Kernel> kernels{Kernel::gaussian, Kernel::box,
                                           Kernel::triangle, Kernel::epanechnikov};
  return kernels;
}

std::string kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::gaussian:
      return "gaussian";
    case Kernel::box:
      return "box";
    case Kernel::triangle:
      return "triangle";
    case Kernel::epanechnikov:
      return "epanechnikov";
  }
  throw std::invalid_argument("kernel_name: unknown kernel");
}

Kernel parse_kernel(const std::string& name) {
  for (const Kernel k : all_kernels())
    if (kernel_name(k) == name) return k;
  throw std::invalid_argument("unknown kernel '" + name +
                              "' (allowed: gaussian, box, triangle, epanechnikov)");
}

double kernel_profile(Kernel kernel, double u) {
  switch (kernel) {
    case Kernel::gaussian:
      return std::exp(-0.5 * u * u);
    case Kernel::box:
      return u <= 1.0 ? 1.0 : 0.0;
    case Kernel::triangle:
      return u < 1.0 ? 1.0 - u : 0.0;
    case Kernel::epanechnikov:
      return u < 1.0 ? 1.0 - u * u : 0.0;
  }
  throw std::invalid_argument("kernel_profile: unknown kernel");
}

bool kernel_is_compact(Kernel kernel) {
  return kernel != Kernel::gaussian;
}

Eigen::MatrixXd squared_distances(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                  const Eigen::Ref<const Eigen::MatrixXd>& X) {
  check_points("squared_distances", Q, X);
  Eigen::MatrixXd D(Q.rows(), X.rows());
  for (Eigen::Index j = 0; j < X.rows(); ++j)
    D.col(j) = (Q.rowwise() - X.row(j)).rowwise().squaredNorm();
  return D;
}

Eigen::MatrixXd kernel_logits(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                              const Eigen::Ref<const Eigen::MatrixXd>& X, Kernel kernel,
                              double h) {
  check_bandwidth("kernel_logits", h);
  const Eigen::MatrixXd D = squared_distances(Q, X);
  // [log-kernel]
  // log K_h = log g(|q - x| / h); -inf where a compact kernel is 0 (weight exactly 0).
  const Eigen::MatrixXd U2 = scaled_squares(D, h);  // u^2 = |q - x|^2 / h^2
  switch (kernel) {
    case Kernel::gaussian:
      return -0.5 * U2;
    case Kernel::box:
      return U2.unaryExpr([](double u2) { return u2 <= 1.0 ? 0.0 : -inf; });
    case Kernel::triangle:
      return U2.unaryExpr(
          [](double u2) { return u2 < 1.0 ? std::log1p(-std::sqrt(u2)) : -inf; });
    case Kernel::epanechnikov:
      return U2.unaryExpr([](double u2) { return u2 < 1.0 ? std::log1p(-u2) : -inf; });
  }
  // [log-kernel]
  throw std::invalid_argument("kernel_logits: unknown kernel");
}

Eigen::MatrixXd nw_weights(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                           const Eigen::Ref<const Eigen::MatrixXd>& X, Kernel kernel,
                           double h) {
  const Eigen::MatrixXd L = kernel_logits(Q, X, kernel, h);
  check_rows_have_keys("nadaraya_watson", L, Q, kernel, h, "query");
  return softmax_rows(L);
}

Eigen::MatrixXd nadaraya_watson(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                const Eigen::Ref<const Eigen::MatrixXd>& X,
                                const Eigen::Ref<const Eigen::MatrixXd>& Y, Kernel kernel,
                                double h) {
  if (Y.rows() != X.rows())
    throw std::invalid_argument("nadaraya_watson: " + std::to_string(X.rows()) +
                                " keys but " + std::to_string(Y.rows()) + " value rows");
  // [nw-as-attention]
  // Attention with logits log K_h(q_i, x_j): weights W = softmax_rows(L), output W Y.
  return nw_weights(Q, X, kernel, h) * Y;
  // [nw-as-attention]
}

Eigen::MatrixXd gaussian_attention_logits(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                          const Eigen::Ref<const Eigen::MatrixXd>& X,
                                          double h) {
  check_bandwidth("gaussian_attention_logits", h);
  if (!(h * h > 0) || !std::isfinite(1 / (h * h)))
    throw std::invalid_argument(
        "gaussian_attention_logits: h^2 must be a normal double (got h = " + number(h) +
        ")");
  check_points("gaussian_attention_logits", Q, X);
  // [bridge]
  // -|q - x|^2 / 2h^2 = q.x / h^2 - |x|^2 / 2h^2 - |q|^2 / 2h^2; the last term is the
  // same for every key of a query, and softmax ignores it.
  const Eigen::RowVectorXd key_bias =
      -X.rowwise().squaredNorm().transpose() / (2 * h * h);
  return (Q * X.transpose() / (h * h)).rowwise() + key_bias;
  // [bridge]
}

double nw_loo_cv(const Eigen::Ref<const Eigen::MatrixXd>& X,
                 const Eigen::Ref<const Eigen::MatrixXd>& Y, Kernel kernel, double h) {
  const Eigen::MatrixXd P = nw_loo_predictions(X, Y, kernel, h);
  return (P - Y).rowwise().squaredNorm().mean();
}

LooGradient gaussian_loo_gradient(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                  const Eigen::Ref<const Eigen::MatrixXd>& Y, double h) {
  if (X.rows() < 2)
    throw std::invalid_argument("gaussian_loo_gradient: needs at least 2 points");
  if (Y.rows() != X.rows())
    throw std::invalid_argument("gaussian_loo_gradient: " + std::to_string(X.rows()) +
                                " points but " + std::to_string(Y.rows()) +
                                " value rows");
  check_bandwidth("gaussian_loo_gradient", h);
  const Eigen::MatrixXd D = squared_distances(X, X);
  // [loo-gradient]
  // U2_ij = D_ij / h^2; logits s_ij = -U2_ij / 2, and ds_ij / d(log h) = U2_ij.
  const Eigen::MatrixXd U2 = scaled_squares(D, h);
  Eigen::MatrixXd S = -0.5 * U2;
  S.diagonal().setConstant(-inf);
  const Eigen::MatrixXd A = softmax_rows(S);  // leave-one-out weights a_ij
  const Eigen::MatrixXd P = A * Y;            // predictions yhat_{-i}
  const Eigen::MatrixXd R = P - Y;            // residuals
  const double n = static_cast<double>(X.rows());
  double grad = 0;
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    // d yhat_i / d(log h) = sum_j a_ij (y_j - yhat_i) D_ij / h^2 (softmax's Jacobian).
    // (a_ij = 0 where U2_ij is infinite: that term is 0, not 0 * inf.)
    const Eigen::RowVectorXd weights =
        (A.row(i).array() > 0).select(A.row(i).array() * U2.row(i).array(), 0.0);
    const Eigen::RowVectorXd dyhat = weights * (Y.rowwise() - P.row(i));
    grad += 2.0 / n * R.row(i).dot(dyhat);
  }
  // [loo-gradient]
  return {R.rowwise().squaredNorm().mean(), grad};
}

std::vector<BandwidthStep> learn_bandwidth(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                           const Eigen::Ref<const Eigen::MatrixXd>& Y,
                                           double h0, int max_steps, double tolerance) {
  check_bandwidth("learn_bandwidth", h0);
  std::vector<BandwidthStep> path;
  // [learn-bandwidth]
  double theta = std::log(h0);
  LooGradient g = gaussian_loo_gradient(X, Y, h0);
  double eta = 1.0 / g.loss;  // step size; the first step changes log h by grad / loss
  for (int t = 0; t < max_steps; ++t) {
    path.push_back({std::exp(theta), g.loss, g.d_log_h});
    if (std::abs(g.d_log_h) <= tolerance * g.loss) break;
    // Backtracking (Armijo): halve the step until the loss falls by at least half of what
    // the gradient promises, eta * grad^2 / 2; after a success, try a twice longer step.
    for (;;) {
      const double candidate = theta - eta * g.d_log_h;
      const LooGradient next = gaussian_loo_gradient(X, Y, std::exp(candidate));
      if (next.loss <= g.loss - 0.5 * eta * g.d_log_h * g.d_log_h) {
        theta = candidate;
        g = next;
        eta *= 2;
        break;
      }
      eta /= 2;
      if (eta * std::abs(g.d_log_h) < 1e-15) return path;  // no decrease is representable
    }
  }
  // [learn-bandwidth]
  if (path.back().h != std::exp(theta))
    path.push_back({std::exp(theta), g.loss, g.d_log_h});
  return path;
}

}  // namespace attn
