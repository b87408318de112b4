#pragma once
// Internal to the library: the row-wise tensor power that feature_maps.cpp and
// exp_limit_features.cpp share.

#include <Eigen/Core>

namespace attn::detail {

// The next tensor power, row by row: from Y (n x c) and Z (n x d) the n x cd matrix with
// column i d + j equal to Y(:, i) * Z(:, j).
inline Eigen::MatrixXd next_power(const Eigen::MatrixXd& Y,
                                  const Eigen::Ref<const Eigen::MatrixXd>& Z) {
  const Eigen::Index d = Z.cols();
  Eigen::MatrixXd out(Y.rows(), Y.cols() * d);
  for (Eigen::Index i = 0; i < Y.cols(); ++i)
    for (Eigen::Index j = 0; j < d; ++j)
      out.col(i * d + j) = Y.col(i).cwiseProduct(Z.col(j));
  return out;
}

}  // namespace attn::detail
