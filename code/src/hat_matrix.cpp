// The hat matrix of chapter 03 (exercise 03.1), alone in its file so that a student's edit
// recompiles only this file.
#include "attn/exercise.hpp"
#include "attn/least_squares.hpp"
#include "common.hpp"
#include "thin_q.hpp"

namespace attn {

using detail::thin_q;
using Eigen::MatrixXd;

MatrixXd hat_matrix(const Eigen::Ref<const MatrixXd>& X_given) {
  require_full_column_rank(X_given);
  // X scaled by a power of two (exactly; H depends on its columns' span only) so that its
  // largest entry is near 1: a factorisation squares entries.
  const MatrixXd X = detail::times_power_of_two(X_given, -detail::largest_exponent(X_given));
  // BEGIN SOLUTION 03.1
  // [hat-matrix]
  const MatrixXd Q1 = thin_q(Eigen::HouseholderQR<MatrixXd>(X));
  // H = Q_1 Q_1^T, accumulated in the lower triangle and mirrored: exactly symmetric.
  MatrixXd H = MatrixXd::Zero(X.rows(), X.rows());
  H.selfadjointView<Eigen::Lower>().rankUpdate(Q1);
  return H.selfadjointView<Eigen::Lower>();
  // [hat-matrix]
  // END SOLUTION
}

}  // namespace attn
