#include "attn/softmax.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attn {

Eigen::MatrixXd softmax_rows(const Eigen::Ref<const Eigen::MatrixXd>& Z) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  // One contiguous pass to test the whole matrix; rows are searched only to name the bad one.
  if ((Z.array().isNaN() || Z.array() == inf).any())
    for (Eigen::Index i = 0; i < Z.rows(); ++i)
      if ((Z.row(i).array().isNaN() || Z.row(i).array() == inf).any())
        throw std::invalid_argument("softmax: row " + std::to_string(i) +
                                    " has a NaN or +inf logit");
  if (Z.cols() == 0) return Z;
  // Whole-matrix operations, column by column: Eigen stores columns contiguously.
  const Eigen::VectorXd m = Z.rowwise().maxCoeff();
  for (Eigen::Index i = 0; i < Z.rows(); ++i)
    if (m(i) == -inf)
      throw std::invalid_argument(
          "softmax: row " + std::to_string(i) +
          " is fully masked (every logit is -inf), so its weights would be 0/0");
  // [softmax-stable]
  // Subtracting each row's maximum changes nothing mathematically (the factor e^{-m}
  // cancels) but keeps every exponent <= 0: no overflow, and each row sum is >= 1.
  // std::exp, not Eigen's vectorised exp, which gives ~1e-309 instead of 0 below -708:
  // a masked score must get weight exactly 0.
  Eigen::MatrixXd P = (Z.colwise() - m).unaryExpr([](double x) { return std::exp(x); });
  P.array().colwise() /= P.rowwise().sum().array();
  // [softmax-stable]
  return P;
}

Eigen::VectorXd softmax(const Eigen::Ref<const Eigen::VectorXd>& z) {
  return softmax_rows(z.transpose()).transpose();
}

Eigen::MatrixXd softmax_jacobian(const Eigen::Ref<const Eigen::VectorXd>& p) {
  Eigen::MatrixXd J = -p * p.transpose();
  J.diagonal() += p;
  return J;
}

double entropy(const Eigen::Ref<const Eigen::VectorXd>& p) {
  double h = 0.0;
  for (const double pi : p)
    if (pi > 0.0) h -= pi * std::log(pi);
  return h;
}

}  // namespace attn
