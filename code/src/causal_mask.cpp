// The causal mask of chapter 01 (exercise 01.6), alone in its file so that a student's edit
// recompiles only this file.
#include <limits>

#include "attn/attention.hpp"
#include "attn/exercise.hpp"

namespace attn {

Eigen::MatrixXd causal_mask(Eigen::Index n) {
  // BEGIN SOLUTION 01.6 unused(n)
  // [causal-mask]
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
  M.triangularView<Eigen::StrictlyUpper>().setConstant(
      -std::numeric_limits<double>::infinity());
  return M;
  // [causal-mask]
  // END SOLUTION
}

}  // namespace attn
