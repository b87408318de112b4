#pragma once
/// \file svd.hpp
/// \brief Every singular value decomposition in the book: the thin SVD, singular values,
/// numerical rank.
///
/// Two algorithms. The thin SVD behind least squares is Eigen's one-sided Jacobi SVD (each
/// singular value to a few eps of its own scale). Singular values alone come from a
/// Householder QR, X = Q R, and the symmetric eigenvalue solver applied to
/// \f$ J = \begin{pmatrix} 0 & R \\ R^\top & 0 \end{pmatrix} \f$, whose eigenvalues are
/// \f$ \pm\sigma_i \f$ (Golub and Kahan, 1965). Both steps are backward stable, so each
/// \f$ \sigma_i \f$ comes out within a small multiple of eps times \f$ \sigma_{\max} \f$: the
/// same guarantee as Eigen's divide-and-conquer SVD (BDCSVD), at about the same speed, while
/// Jacobi is many times slower (the times are on the \ref performance page, "Building the
/// book").
///
/// Why not BDCSVD: an SVD is among the costliest templates to compile, and BDCSVD the
/// costliest, several times Jacobi or the QR and eigensolver together. All are instantiated
/// here only, so that no other file pays for them again.

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

/// \brief The singular values of `M`, largest first (QR, then the eigenvalues of
/// \f$ [0\ R;\ R^\top\ 0] \f$).
Eigen::VectorXd singular_values(const Eigen::Ref<const Eigen::MatrixXd>& M);

/// \brief Numerical rank: the number of singular values above `rel_tol` times the
/// largest.
Eigen::Index numerical_rank(const Eigen::Ref<const Eigen::MatrixXd>& M,
                            double rel_tol = 1e-10);

}  // namespace attn
