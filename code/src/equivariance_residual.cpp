// The equivariance residual of chapter 06 (exercise 06.6), alone in its file so that a
// student's edit recompiles only this file.
#include "attn/exercise.hpp"
#include "attn/transformer_block.hpp"

namespace attn {

double equivariance_residual(const TokenMap& f,
                             const Eigen::Ref<const Eigen::MatrixXd>& X,
                             const Permutation& perm) {
  // BEGIN SOLUTION 06.6 unused(f, X, perm)
  // [equivariance-residual]
  const Eigen::MatrixXd Y = f(X);
  const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - permute_rows(Y, perm);
  const double scale = Y.lpNorm<Eigen::Infinity>();
  return diff.lpNorm<Eigen::Infinity>() / (scale > 0 ? scale : 1.0);
  // [equivariance-residual]
  // END SOLUTION
}

}  // namespace attn
