#pragma once
// Internal to the library: the thin QR factor that least_squares.cpp and hat_matrix.cpp share.

#include <Eigen/QR>

namespace attn::detail {

// The n x d factor Q_1 of the thin QR factorisation X = Q_1 T.
inline Eigen::MatrixXd thin_q(const Eigen::HouseholderQR<Eigen::MatrixXd>& qr) {
  const Eigen::Index n = qr.matrixQR().rows(), d = qr.matrixQR().cols();
  return qr.householderQ() * Eigen::MatrixXd::Identity(n, d);
}

}  // namespace attn::detail
