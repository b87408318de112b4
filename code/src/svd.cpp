#include "attn/svd.hpp"

#include <algorithm>
#include <functional>

#include "common.hpp"

namespace attn {

ThinSvd thin_svd(const Eigen::Ref<const Eigen::MatrixXd>& X) {
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(X,
                                              Eigen::ComputeThinU | Eigen::ComputeThinV);
  return {svd.matrixU(), svd.singularValues(), svd.matrixV()};
}

Eigen::VectorXd singular_values(const Eigen::Ref<const Eigen::MatrixXd>& M) {
  using Eigen::MatrixXd;
  // A tall copy (the transpose has the same singular values), then X = Q R: R (k x k) keeps
  // them, and the symmetric J = [0 R; R^T 0] has eigenvalues +sigma_i and -sigma_i.
  // ... scaled by a power of two, exactly, so that the factorisation's squares neither
  // overflow nor underflow; the singular values are scaled back at the end.
  const int e = detail::largest_exponent(M);
  const MatrixXd X = detail::times_power_of_two(
      M.rows() >= M.cols() ? MatrixXd(M) : MatrixXd(M.transpose()), -e);
  const Eigen::Index k = X.cols();
  if (k == 0) return Eigen::VectorXd();
  const MatrixXd R = Eigen::HouseholderQR<MatrixXd>(X)
                         .matrixQR()
                         .topRows(k)
                         .triangularView<Eigen::Upper>();
  MatrixXd J = MatrixXd::Zero(2 * k, 2 * k);
  J.topRightCorner(k, k) = R;
  J.bottomLeftCorner(k, k) = R.transpose();
  // Ascending, so the k largest are the sigma_i. A zero singular value may come out as
  // -1e-17 rather than +1e-17: magnitudes, largest first.
  Eigen::VectorXd s = Eigen::SelfAdjointEigenSolver<MatrixXd>(J, Eigen::EigenvaluesOnly)
                          .eigenvalues()
                          .tail(k);
  s = detail::times_power_of_two(s.cwiseAbs(), e);
  std::sort(s.begin(), s.end(), std::greater<>());
  return s;
}

Eigen::Index numerical_rank(const Eigen::Ref<const Eigen::MatrixXd>& M, double rel_tol) {
  if (M.size() == 0) return 0;
  const Eigen::VectorXd s = singular_values(M);
  if (s(0) == 0) return 0;
  return (s.array() > rel_tol * s(0)).count();
}

}  // namespace attn
