#include "attn/svd.hpp"

namespace attn {

ThinSvd thin_svd(const Eigen::Ref<const Eigen::MatrixXd>& X) {
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(X, Eigen::ComputeThinU | Eigen::ComputeThinV);
  return {svd.matrixU(), svd.singularValues(), svd.matrixV()};
}

Eigen::VectorXd singular_values(const Eigen::Ref<const Eigen::MatrixXd>& M) {
  return Eigen::BDCSVD<Eigen::MatrixXd>(M).singularValues();
}

Eigen::Index numerical_rank(const Eigen::Ref<const Eigen::MatrixXd>& M, double rel_tol) {
  if (M.size() == 0) return 0;
  const Eigen::VectorXd s = singular_values(M);
  if (s(0) == 0) return 0;
  return (s.array() > rel_tol * s(0)).count();
}

}  // namespace attn
