#include "attn/softmax.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attn {

Eigen::MatrixXd softmax_rows(const Eigen::Ref<const Eigen::MatrixXd>& Z) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  Eigen::MatrixXd P(Z.rows(), Z.cols());
  for (Eigen::Index i = 0; i < Z.rows(); ++i) {
    double m = -inf;
    for (Eigen::Index j = 0; j < Z.cols(); ++j) {
      const double z = Z(i, j);
      if (std::isnan(z) || z == inf)
        throw std::invalid_argument("softmax: row " + std::to_string(i) +
                                    " has a NaN or +inf logit");
      m = std::max(m, z);
    }
    if (m == -inf)
      throw std::invalid_argument(
          "softmax: row " + std::to_string(i) +
          " is fully masked (every logit is -inf), so its weights would be 0/0");
    // [softmax-stable]
    // Subtracting the row maximum changes nothing mathematically (the factor e^{-m}
    // cancels) but keeps every exponent <= 0: no overflow, and the sum is >= 1.
    P.row(i) = (Z.row(i).array() - m).exp();
    P.row(i) /= P.row(i).sum();
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
