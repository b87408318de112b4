#include "attn/softmax.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attn {

Eigen::MatrixXd softmax_rows(const Eigen::Ref<const Eigen::MatrixXd>& Z) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  // Work on a row-major copy, so that each row is contiguous in memory. std::exp rather
  // than Eigen's vectorised exp, which returns ~1e-309 instead of 0 below -708: a masked
  // or hopeless score must get weight exactly 0.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> P = Z;
  for (Eigen::Index i = 0; i < P.rows(); ++i) {
    auto row = P.row(i).array();
    if (row.isNaN().any() || (row == inf).any())
      throw std::invalid_argument("softmax: row " + std::to_string(i) +
                                  " has a NaN or +inf logit");
    const double m = P.cols() > 0 ? row.maxCoeff() : 0.0;
    if (m == -inf)
      throw std::invalid_argument(
          "softmax: row " + std::to_string(i) +
          " is fully masked (every logit is -inf), so its weights would be 0/0");
    // [softmax-stable]
    // Subtracting the row maximum changes nothing mathematically (the factor e^{-m}
    // cancels) but keeps every exponent <= 0: no overflow, and the sum is >= 1.
    row = (row - m).unaryExpr([](double x) { return std::exp(x); });
    row /= row.sum();
    // [softmax-stable]
  }
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
