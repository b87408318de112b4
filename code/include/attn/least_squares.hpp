#pragma once
/// \file least_squares.hpp
/// \brief Least squares by QR and SVD, the hat matrix, the whitening map \f$ L \f$ and
/// matrices of a chosen condition number.
///
/// One sample per row: \f$ X \in \mathbb{R}^{n \times d} \f$, \f$ Y \in \mathbb{R}^n \f$,
/// and \f$ \hat\beta = \operatorname{argmin}_\beta \lVert Y - X\beta \rVert^2 =
/// (X^\top X)^{-1} X^\top Y \f$. The formula is the definition, not the algorithm: the
/// solvers here use an orthogonal factorisation of \f$ X \f$ itself, whose error grows
/// like \f$ \kappa(X)\,\epsilon \f$, while forming \f$ X^\top X \f$ squares the condition
/// number (least_squares_normal_equations() exists only to show that).
///
/// Every function that needs \f$ (X^\top X)^{-1} \f$ first calls
/// require_full_column_rank(), so none of them returns garbage for a rank-deficient
/// \f$ X \f$.

#include <Eigen/Dense>

#include "attn/random.hpp"

namespace attn {

/// \brief Throws unless \f$ X \f$ has full column rank \f$ d \f$, so that
/// \f$ X^\top X \f$ is invertible.
///
/// The numerical rank counts the singular values above the standard tolerance
/// \f$ \tau = \max(n, d)\,\epsilon\,\sigma_{\max} \f$ (as in LAPACK and NumPy's
/// `matrix_rank`).
/// \throws std::invalid_argument if \f$ d = 0 \f$, if \f$ d > n \f$ (the message gives
///         the shape), if an entry is NaN or infinite, or if the numerical rank is
///         below \f$ d \f$ (the message gives the rank and \f$ \sigma_{\min}/\sigma_{\max}
///         \f$).
void require_full_column_rank(const Eigen::Ref<const Eigen::MatrixXd>& X);

/// \brief Least squares by Householder QR: \f$ X = Q_1 T \f$ (thin, \f$ T \f$ upper
/// triangular), \f$ \hat\beta = T^{-1} Q_1^\top Y \f$.
///
/// Backward stable: the relative error is about \f$ \kappa(X)\,\epsilon \f$ (plus
/// \f$ \kappa(X)^2 \epsilon \f$ times the relative size of the residual).
/// \throws std::invalid_argument if `Y.size() != X.rows()` or as
///         require_full_column_rank().
Eigen::VectorXd least_squares_qr(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                 const Eigen::Ref<const Eigen::VectorXd>& Y);

/// \brief Least squares by the thin SVD \f$ X = U_1 \Lambda R^\top \f$:
/// \f$ \hat\beta = R \Lambda^{-1} U_1^\top Y \f$. Same accuracy as least_squares_qr().
/// \throws std::invalid_argument as least_squares_qr().
Eigen::VectorXd least_squares_svd(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                  const Eigen::Ref<const Eigen::VectorXd>& Y);

/// \brief The textbook formula \f$ \hat\beta = (X^\top X)^{-1} X^\top Y \f$, solved by
/// a Cholesky factorisation of \f$ X^\top X \f$.
///
/// Shown only to compare: it squares the condition number,
/// \f$ \kappa(X^\top X) = \kappa(X)^2 \f$, so its relative error grows like
/// \f$ \kappa(X)^2 \epsilon \f$ and nothing is left at \f$ \kappa(X) \approx 10^8 \f$.
/// \throws std::invalid_argument as least_squares_qr(), and if the computed
///         \f$ X^\top X \f$ is not positive definite (when \f$ \kappa(X)^2 \f$ is near
///         \f$ 1/\epsilon \f$).
Eigen::VectorXd least_squares_normal_equations(
    const Eigen::Ref<const Eigen::MatrixXd>& X,
    const Eigen::Ref<const Eigen::VectorXd>& Y);

/// \brief The hat matrix \f$ H = X(X^\top X)^{-1}X^\top \f$ (\f$ n \times n \f$), which
/// maps the targets to the fitted values, \f$ \hat Y = HY \f$.
///
/// Computed stably as \f$ H = Q_1 Q_1^\top \f$ from the thin QR factorisation
/// \f$ X = Q_1 T \f$: the orthogonal projection onto the column space of \f$ X \f$.
/// \throws std::invalid_argument as require_full_column_rank().
Eigen::MatrixXd hat_matrix(const Eigen::Ref<const Eigen::MatrixXd>& X);

/// \brief The whitening map \f$ L = \Lambda^{-1} R^\top \f$ (\f$ d \times d \f$) from the
/// thin SVD \f$ X = U_1 \Lambda R^\top \f$.
///
/// It satisfies \f$ L^\top L = (X^\top X)^{-1} \f$, \f$ L X^\top X L^\top = I_d \f$ and
/// \f$ L X^\top = U_1^\top \f$: row \f$ i \f$ of \f$ L \f$ projects a sample on the
/// right singular vector \f$ r_i \f$ and divides by the singular value \f$ \lambda_i \f$.
/// (Seed 000 writes \f$ L = \Lambda^{-1} V^\top \f$; the book's \f$ V \f$ is the value
/// matrix.)
/// \throws std::invalid_argument as require_full_column_rank().
Eigen::MatrixXd whitening_map(const Eigen::Ref<const Eigen::MatrixXd>& X);

/// \brief Condition number \f$ \kappa(X) = \sigma_{\max}/\sigma_{\min} \f$ (2-norm),
/// with \f$ \sigma_{\min} \f$ the smallest of the \f$ \min(n, d) \f$ singular values;
/// \f$ +\infty \f$ when \f$ \sigma_{\min} = 0 \f$.
/// \throws std::invalid_argument if \f$ X \f$ is empty or has a NaN or infinite entry.
double condition_number(const Eigen::Ref<const Eigen::MatrixXd>& X);

/// \brief A random \f$ n \times d \f$ matrix \f$ X = U_1 \Lambda R^\top \f$ with
/// condition number \f$ \kappa \f$.
///
/// \f$ U_1 \f$ (\f$ n \times d \f$) and \f$ R \f$ (\f$ d \times d \f$) have orthonormal
/// columns, taken from Householder QR of matrices with i.i.d. \f$ \mathcal{N}(0, 1) \f$
/// entries; the singular values are geometric,
/// \f$ \lambda_i = \kappa^{-(i-1)/(d-1)} \f$, from 1 down to \f$ 1/\kappa \f$.
/// \throws std::invalid_argument unless \f$ 1 \le d \le n \f$ and
///         \f$ 1 \le \kappa < \infty \f$ (and \f$ \kappa = 1 \f$ when \f$ d = 1 \f$).
Eigen::MatrixXd matrix_with_condition(Eigen::Index n, Eigen::Index d, double kappa,
                                      Rng& rng);

/// \brief Relative error \f$ \lVert a - b \rVert_F / \lVert b \rVert_F \f$ of \f$ a \f$
/// against the reference \f$ b \f$.
/// \throws std::invalid_argument if the shapes differ or \f$ b = 0 \f$.
double relative_error(const Eigen::Ref<const Eigen::MatrixXd>& a,
                      const Eigen::Ref<const Eigen::MatrixXd>& b);

}  // namespace attn
