#pragma once
/// \file feature_maps.hpp
/// \brief Feature maps \f$ \phi \f$ with
/// \f$ \phi(q)^\top\phi(k) \approx e^{q^\top k} \f$: Taylor, exp-limit and random features.
///
/// Every map takes the vectors as the **rows** of \f$ X \in \mathbb{R}^{n \times d_k} \f$
/// and returns their features as the rows of \f$ \phi(X) \in \mathbb{R}^{n \times D} \f$.
/// The deterministic maps have \f$ D \f$ exponential in their order, so each map first
/// checks that \f$ n \times D \f$ doubles fit under a memory limit and otherwise throws
/// feature_size_error, saying how large the matrix would be.

#include <Eigen/Dense>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attn/random.hpp"

namespace attn {

/// Default memory limit of a feature matrix: 1 GiB.
inline constexpr double default_feature_memory_limit = 1024.0 * 1024.0 * 1024.0;

/// \brief A feature matrix that would not fit under the memory limit. The message gives
/// its dimension and its size in bytes.
struct feature_size_error : std::length_error {
  using std::length_error::length_error;
};

/// \brief Dimension \f$ \sum_{\ell=0}^{p} d_k^\ell \f$ of the Taylor map of order
/// \f$ p \f$, as a double (exact below \f$ 2^{53} \f$; it may exceed any index).
double taylor_feature_dim(Eigen::Index d, int p);

/// \brief Dimension \f$ (d_k+1)^p \f$ of the exp-limit map \f$ \psi_p \f$, as a double.
double exp_limit_feature_dim(Eigen::Index d, int p);

/// \brief Throws feature_size_error unless a \f$ \text{rows} \times \text{dim} \f$ matrix
/// of doubles fits in `limit_bytes`. `what` names the map in the message.
void check_feature_size(const std::string& what, Eigen::Index rows, double dim,
                        double limit_bytes = default_feature_memory_limit);

/// \brief Truncated exponential series \f$ T_p(t) = \sum_{\ell=0}^{p} t^\ell / \ell! \f$.
double taylor_exp(double t, int p);

/// \brief Taylor feature map of order \f$ p \ge 0 \f$,
/// \f$ \phi_p(x) = [\,1,\; x,\; x^{\otimes 2}/\sqrt{2!},\; \dots,\;
/// x^{\otimes p}/\sqrt{p!}\,] \f$, so that \f$ \phi_p(q)^\top \phi_p(k) = T_p(q^\top k) \f$.
///
/// Block \f$ \ell \f$ holds the \f$ d_k^\ell \f$ products \f$ x_{i_1} \cdots x_{i_\ell}
/// \f$ (all ordered index tuples, \f$ i_1 \f$ slowest). \throws feature_size_error if
/// \f$ n \sum_\ell d_k^\ell \f$ doubles exceed `limit_bytes`; std::invalid_argument if
/// \f$ p < 0 \f$.
Eigen::MatrixXd taylor_features(const Eigen::Ref<const Eigen::MatrixXd>& X, int p,
                                double limit_bytes = default_feature_memory_limit);

/// \brief Exp-limit feature map \f$ \psi_p(x) = [\,1,\; x/\sqrt{p}\,]^{\otimes p} \f$
/// of dimension \f$ (d_k+1)^p \f$, so that
/// \f$ \psi_p(q)^\top\psi_p(k) = (1 + q^\top k/p)^p \f$.
/// \throws feature_size_error if it would not fit; std::invalid_argument if
/// \f$ p < 1 \f$.
Eigen::MatrixXd exp_limit_features(const Eigen::Ref<const Eigen::MatrixXd>& X, int p,
                                   double limit_bytes = default_feature_memory_limit);

/// \brief \f$ r \f$ i.i.d. directions \f$ \omega_i \sim \mathcal{N}(0, I_{d_k}) \f$, the
/// rows of an \f$ r \times d_k \f$ matrix \f$ W \f$.
Eigen::MatrixXd gaussian_directions(Eigen::Index r, Eigen::Index d, Rng& rng);

/// \brief \f$ r \f$ orthogonal random directions: blocks of \f$ d_k \f$ exactly
/// orthogonal rows (Q factor of a Gaussian matrix, sign-corrected so it is Haar
/// distributed), each rescaled to the length of an independent Gaussian vector. Each row
/// is still marginally \f$ \mathcal{N}(0, I_{d_k}) \f$, so estimators stay unbiased.
Eigen::MatrixXd orthogonal_directions(Eigen::Index r, Eigen::Index d, Rng& rng);

/// How positive_random_features() guards against underflow.
enum class Stabiliser {
  none,     ///< no shift
  per_row,  ///< subtract each row's largest exponent (queries: cancels in each row)
  global    ///< subtract the largest exponent of the matrix (keys: one common factor)
};

/// \brief Positive random features (Performer, FAVOR+),
/// \f$ \phi(x)_i = e^{\omega_i^\top x - \|x\|^2/2} / \sqrt{r} \f$ with the rows
/// \f$ \omega_i \f$ of `W` (\f$ r \times d_k \f$), unbiased for the exponential kernel:
/// \f$ \mathbb{E}[\phi(q)^\top\phi(k)] = e^{q^\top k} \f$.
///
/// `stabiliser` subtracts a maximum \f$ c \f$ from the exponents (features scaled by
/// \f$ e^{-c} \f$, which cancels in normalised attention); `epsilon` is then added to
/// every feature (Performer's `numerical_stabilizer`), which does not cancel.
/// \throws std::invalid_argument on mismatched widths or a non-finite result.
Eigen::MatrixXd positive_random_features(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                         const Eigen::Ref<const Eigen::MatrixXd>& W,
                                         Stabiliser stabiliser = Stabiliser::none,
                                         double epsilon = 0.0);

/// \brief Trigonometric random features (random Fourier features of the Gaussian
/// kernel, rescaled),
/// \f$ \phi(x) = e^{\|x\|^2/2}\,[\cos(Wx),\, \sin(Wx)] / \sqrt{r} \f$ of dimension
/// \f$ 2r \f$: \f$ \mathbb{E}[\phi(q)^\top\phi(k)] = e^{q^\top k} \f$, but single
/// estimates can be negative.
Eigen::MatrixXd trig_random_features(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                     const Eigen::Ref<const Eigen::MatrixXd>& W);

}  // namespace attn
