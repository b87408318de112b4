#pragma once
/// \file svd.hpp
/// \brief Every singular value decomposition in the book: the thin SVD, singular values,
/// numerical rank.
///
/// Two algorithms: Eigen's one-sided Jacobi SVD for the thin SVD behind least squares (each
/// singular value to a few eps of its own scale), and its divide-and-conquer SVD for
/// singular values alone (about 30 times faster at 256 × 256: 0.02 s against 0.63 s).
/// Both are instantiated in svd.cpp only: an SVD is among the costliest templates to compile
/// (about 10 s of CPU at -O3 for Jacobi, 28 s for divide-and-conquer), and every file that
/// called Eigen's directly paid for it again.

#include <Eigen/Dense>

namespace attn {

/// \brief The thin SVD \f$ X = U_1 \Lambda R^\top \f$ of an \f$ n \times d \f$ matrix:
/// `U` is \f$ n \times k \f$, `s` the \f$ k = \min(n, d) \f$ singular values, largest
/// first, `V` (our \f$ R \f$) is \f$ d \times k \f$.
struct ThinSvd {
  Eigen::MatrixXd U;
  Eigen::VectorXd s;
  Eigen::MatrixXd V;
};

/// \brief The thin SVD of `X` (Jacobi).
ThinSvd thin_svd(const Eigen::Ref<const Eigen::MatrixXd>& X);

/// \brief The singular values of `M`, largest first (divide and conquer).
Eigen::VectorXd singular_values(const Eigen::Ref<const Eigen::MatrixXd>& M);

/// \brief Numerical rank: the number of singular values above `rel_tol` times the
/// largest.
Eigen::Index numerical_rank(const Eigen::Ref<const Eigen::MatrixXd>& M,
                            double rel_tol = 1e-10);

}  // namespace attn
