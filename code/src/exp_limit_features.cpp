// The exp-limit feature map of chapter 05 (exercise 05.6), alone in its file so that a
// student's edit recompiles only this file.
#include <cmath>
#include <stdexcept>
#include <string>

#include "attn/exercise.hpp"
#include "attn/feature_maps.hpp"
#include "tensor_power.hpp"

namespace attn {

using detail::next_power;
using Eigen::Index;
using Eigen::MatrixXd;

MatrixXd exp_limit_features(const Eigen::Ref<const MatrixXd>& X, int p,
                            double limit_bytes) {
  if (p < 1)
    throw std::invalid_argument("exp_limit_features: power p = " + std::to_string(p) +
                                " < 1");
  const Index d = X.cols();
  check_feature_size("the exp-limit map of power " + std::to_string(p) +
                         " in d_k = " + std::to_string(d),
                     X.rows(), exp_limit_feature_dim(d, p), limit_bytes);
  // BEGIN SOLUTION 05.6
  // [exp-limit-features]
  MatrixXd Z(X.rows(), d + 1);  // rows [1, x / sqrt(p)]
  Z.col(0).setOnes();
  Z.rightCols(d) = X / std::sqrt(static_cast<double>(p));
  MatrixXd psi = Z;
  for (int l = 1; l < p; ++l) psi = next_power(psi, Z);  // p-fold tensor power of Z rows
  // [exp-limit-features]
  return psi;
  // END SOLUTION
}

}  // namespace attn
