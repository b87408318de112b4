#include "attn/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "attn/exercise.hpp"
#include "attn/svd.hpp"
#include "common.hpp"
#include "thin_q.hpp"

namespace attn {

namespace {

using detail::require;
using detail::shape;
using detail::thin_q;

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double eps = std::numeric_limits<double>::epsilon();

// Three significant digits in messages, with the library's one formatter.
std::string number(double x) { return detail::number(x, "%.3g"); }

// Shape and finiteness: everything require_full_column_rank() checks before the SVD.
void require_tall_and_finite(const Eigen::Ref<const MatrixXd>& X) {
  require(X.cols() > 0, "least squares needs at least one feature: X is " + shape(X));
  require(X.cols() <= X.rows(),
          "least squares needs at least as many samples as features: X is " + shape(X) +
              " (n = " + std::to_string(X.rows()) + " < d = " + std::to_string(X.cols()) +
              ")");
  require(X.allFinite(),
          "least squares: X (" + shape(X) + ") has a NaN or infinite entry");
}

// The rank test on singular values sorted in decreasing order (as Eigen returns them).
void require_full_rank(const VectorXd& sv, const Eigen::Ref<const MatrixXd>& X) {
  const double s_max = sv(0), s_min = sv(sv.size() - 1);
  const double tol = static_cast<double>(std::max(X.rows(), X.cols())) * eps * s_max;
  if (s_min > tol) return;
  const Index rank = (sv.array() > tol).count();
  throw std::invalid_argument(
      "least squares needs X of full column rank: X is " + shape(X) +
      " but its numerical rank is " + std::to_string(rank) +
      " < d = " + std::to_string(X.cols()) +
      " (sigma_min/sigma_max = " + number(s_max > 0 ? s_min / s_max : 0.0) +
      ", below the tolerance max(n, d) eps = " + number(tol > 0 ? tol / s_max : 0.0) +
      ")");
}

void require_targets(const Eigen::Ref<const MatrixXd>& X,
                     const Eigen::Ref<const VectorXd>& Y) {
  require(Y.size() == X.rows(), "least squares: Y has " + std::to_string(Y.size()) +
                                    " entries but X has " + std::to_string(X.rows()) +
                                    " rows (one target per sample)");
  require(Y.allFinite(), "least squares: Y has a NaN or infinite entry");
}

// X and Y scaled alike by a power of two, exactly, so that X's largest entry is near 1: the
// least-squares beta is the same for both, and a factorisation that squares entries neither
// overflows nor underflows, whatever the scale of X.
std::pair<MatrixXd, VectorXd> scaled_alike(const Eigen::Ref<const MatrixXd>& X,
                                           const Eigen::Ref<const VectorXd>& Y) {
  const int e = detail::largest_exponent(X);
  return {detail::times_power_of_two(X, -e), detail::times_power_of_two(Y, -e)};
}

// Thin SVD X = U_1 Lambda R^T, after the same checks as require_full_column_rank().
ThinSvd checked_thin_svd(const Eigen::Ref<const MatrixXd>& X) {
  require_tall_and_finite(X);
  ThinSvd svd = thin_svd(X);
  require_full_rank(svd.s, X);
  return svd;
}


}  // namespace

void require_full_column_rank(const Eigen::Ref<const MatrixXd>& X) {
  require_tall_and_finite(X);
  require_full_rank(singular_values(X), X);
}

VectorXd least_squares_qr(const Eigen::Ref<const MatrixXd>& X_given,
                          const Eigen::Ref<const VectorXd>& Y_given) {
  require_full_column_rank(X_given);
  require_targets(X_given, Y_given);
  const auto [X, Y] = scaled_alike(X_given, Y_given);  // a Householder step squares entries
  // [ls-qr]
  // X = Q_1 T: minimising |Y - X b| = |Q_1^T Y - T b| (plus a part b cannot change)
  // leaves the triangular system T b = Q_1^T Y. X^T X is never formed.
  const Eigen::HouseholderQR<MatrixXd> qr(X);
  const Index d = X.cols();
  const VectorXd QtY = (qr.householderQ().transpose() * Y).head(d);
  return qr.matrixQR().topRows(d).triangularView<Eigen::Upper>().solve(QtY);
  // [ls-qr]
}

VectorXd least_squares_svd(const Eigen::Ref<const MatrixXd>& X,
                           const Eigen::Ref<const VectorXd>& Y) {
  const auto svd = checked_thin_svd(X);
  require_targets(X, Y);
  // beta = R Lambda^{-1} U_1^T Y
  return svd.V * (svd.U.transpose() * Y).cwiseQuotient(svd.s);
}

VectorXd least_squares_normal_equations(const Eigen::Ref<const MatrixXd>& X_given,
                                        const Eigen::Ref<const VectorXd>& Y_given) {
  require_full_column_rank(X_given);
  require_targets(X_given, Y_given);
  const auto [X, Y] = scaled_alike(X_given, Y_given);  // X^T X squares every entry
  // (X^T X) b = X^T Y by Cholesky: kappa(X^T X) = kappa(X)^2.
  const MatrixXd G = X.transpose() * X;
  const Eigen::LLT<MatrixXd> chol(G);
  require(chol.info() == Eigen::Success,
          "least_squares_normal_equations: the computed X^T X is not positive definite "
          "(kappa(X)^2 = " +
              number(std::pow(condition_number(X), 2)) +
              " is near 1/eps); use least_squares_qr");
  return chol.solve(X.transpose() * Y);
}

MatrixXd whitening_map(const Eigen::Ref<const MatrixXd>& X) {
  const auto svd = checked_thin_svd(X);
  // L = Lambda^{-1} R^T: row i is r_i^T / lambda_i.
  return svd.s.cwiseInverse().asDiagonal() * svd.V.transpose();
}

double condition_number(const Eigen::Ref<const MatrixXd>& X) {
  require(X.size() > 0, "condition_number: X is empty (" + shape(X) + ")");
  require(X.allFinite(), "condition_number: X has a NaN or infinite entry");
  const VectorXd sv = singular_values(X);
  const double s_min = sv(sv.size() - 1);
  if (s_min == 0.0) return std::numeric_limits<double>::infinity();
  return sv(0) / s_min;
}

MatrixXd matrix_with_condition(Index n, Index d, double kappa, Rng& rng) {
  require(d >= 1 && d <= n, "matrix_with_condition: need 1 <= d <= n, got n = " +
                                std::to_string(n) + ", d = " + std::to_string(d));
  require(std::isfinite(kappa) && kappa >= 1.0,
          "matrix_with_condition: kappa must be finite and >= 1, got " + number(kappa));
  require(d >= 2 || kappa == 1.0,
          "matrix_with_condition: a single column has condition number 1, got kappa = " +
              number(kappa));
  const MatrixXd U1 = thin_q(Eigen::HouseholderQR<MatrixXd>(random_normal(n, d, rng)));
  const MatrixXd R = thin_q(Eigen::HouseholderQR<MatrixXd>(random_normal(d, d, rng)));
  VectorXd lambda(d);
  for (Index i = 0; i < d; ++i)
    lambda(i) =
        d == 1 ? 1.0
               : std::pow(kappa, -static_cast<double>(i) / static_cast<double>(d - 1));
  return U1 * lambda.asDiagonal() * R.transpose();
}

double relative_error(const Eigen::Ref<const MatrixXd>& a,
                      const Eigen::Ref<const MatrixXd>& b) {
  require(a.rows() == b.rows() && a.cols() == b.cols(),
          "relative_error: a is " + shape(a) + " but b is " + shape(b));
  const double nb = b.norm();
  require(nb > 0.0, "relative_error: the reference b is zero");
  return (a - b).norm() / nb;
}

}  // namespace attn
