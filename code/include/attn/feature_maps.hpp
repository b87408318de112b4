#pragma once
/// \file feature_maps.hpp
/// \brief Feature maps \f$ \phi \f$ with \f$ \phi(q)\cdot\phi(k) \approx e^{q \cdot k} \f$:
/// Taylor, exp-limit and random features.
///
/// Every map takes the vectors as the **rows** of \f$ X \in \mathbb{R}^{N \times d} \f$ and
/// returns their features as the rows of \f$ \phi(X) \in \mathbb{R}^{N \times D} \f$. The
/// deterministic maps have \f$ D \f$ exponential in their order, so each map first checks
/// that \f$ N \times D \f$ doubles fit under a memory limit and otherwise throws
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

/// \brief Dimension \f$ \sum_{p=0}^{P} d^p \f$ of the Taylor map of order \f$ P \f$, as a
/// double (exact below \f$ 2^{53} \f$; it may be far larger than any index).
double taylor_feature_dim(Eigen::Index d, int order);

/// \brief Dimension \f$ (d+1)^n \f$ of the exp-limit map \f$ \psi_n \f$, as a double.
double exp_limit_feature_dim(Eigen::Index d, int n);

/// \brief Throws feature_size_error unless a \f$ \text{rows} \times \text{dim} \f$ matrix
/// of doubles fits in `limit_bytes`. `what` names the map in the message.
void check_feature_size(const std::string& what, Eigen::Index rows, double dim,
                        double limit_bytes = default_feature_memory_limit);

/// \brief Truncated exponential series \f$ T_P(t) = \sum_{p=0}^{P} t^p / p! \f$.
double taylor_exp(double t, int order);

/// \brief Taylor feature map of order \f$ P \ge 0 \f$:
/// \f$ \phi_P(x) = [\,1,\; x,\; x^{\otimes 2}/\sqrt{2!},\; \dots,\; x^{\otimes P}/\sqrt{P!}\,]
/// \f$, so that \f$ \phi_P(q) \cdot \phi_P(k) = T_P(q \cdot k) \f$.
///
/// Block \f$ p \f$ holds the \f$ d^p \f$ products \f$ x_{i_1} \cdots x_{i_p} \f$ (all
/// ordered index tuples, \f$ i_1 \f$ slowest). \throws feature_size_error if
/// \f$ N \sum_p d^p \f$ doubles exceed `limit_bytes`; std::invalid_argument if
/// \f$ P < 0 \f$.
Eigen::MatrixXd taylor_features(const Eigen::Ref<const Eigen::MatrixXd>& X, int order,
                                double limit_bytes = default_feature_memory_limit);

/// \brief Exp-limit feature map \f$ \psi_n(x) = [\,1,\; x/\sqrt{n}\,]^{\otimes n} \f$ of
/// dimension \f$ (d+1)^n \f$, so that \f$ \psi_n(q)\cdot\psi_n(k) = (1 + q\cdot k/n)^n \f$.
/// \throws feature_size_error if it would not fit; std::invalid_argument if \f$ n < 1 \f$.
Eigen::MatrixXd exp_limit_features(const Eigen::Ref<const Eigen::MatrixXd>& X, int n,
                                   double limit_bytes = default_feature_memory_limit);

/// \brief \f$ m \f$ i.i.d. directions \f$ \omega_i \sim \mathcal{N}(0, I_d) \f$, the rows
/// of an \f$ m \times d \f$ matrix \f$ W \f$.
Eigen::MatrixXd gaussian_directions(Eigen::Index m, Eigen::Index d, Rng& rng);

/// \brief \f$ m \f$ orthogonal random directions: blocks of \f$ d \f$ exactly orthogonal
/// rows (Q factor of a Gaussian matrix, sign-corrected so it is Haar distributed), each
/// row rescaled to the length of an independent \f$ \mathcal{N}(0, I_d) \f$ vector. Each
/// row is still marginally \f$ \mathcal{N}(0, I_d) \f$, so estimators stay unbiased.
Eigen::MatrixXd orthogonal_directions(Eigen::Index m, Eigen::Index d, Rng& rng);

/// How positive_random_features() guards against overflow.
enum class Stabiliser {
  none,     ///< \f$ \phi(x)_i = e^{\omega_i \cdot x - \|x\|^2/2} / \sqrt{m} \f$
  per_row,  ///< subtract each row's largest exponent (for queries: cancels per row)
  global    ///< subtract the largest exponent of the whole matrix (for keys: a common
            ///< factor)
};

/// \brief Positive random features (Performer, FAVOR+):
/// \f$ \phi(x)_i = e^{\omega_i \cdot x - \|x\|^2/2} / \sqrt{m} \f$ with the rows
/// \f$ \omega_i \f$ of `W` (\f$ m \times d \f$), unbiased for the exponential kernel:
/// \f$ \mathbb{E}[\phi(q)\cdot\phi(k)] = e^{q \cdot k} \f$.
///
/// `stabiliser` subtracts a maximum \f$ c \f$ from the exponents (features scaled by
/// \f$ e^{-c} \f$, which cancels in normalised attention); `epsilon` is then added to every
/// feature (as Performer's `numerical_stabilizer`), which does not cancel.
/// \throws std::invalid_argument on mismatched widths or a non-finite result.
Eigen::MatrixXd positive_random_features(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                         const Eigen::Ref<const Eigen::MatrixXd>& W,
                                         Stabiliser stabiliser = Stabiliser::none,
                                         double epsilon = 0.0);

/// \brief Trigonometric random features (random Fourier features of the Gaussian kernel,
/// rescaled): \f$ \phi(x) = e^{\|x\|^2/2}\,[\cos(Wx),\, \sin(Wx)] / \sqrt{m} \f$, dimension
/// \f$ 2m \f$; \f$ \mathbb{E}[\phi(q)\cdot\phi(k)] = e^{q \cdot k} \f$ but single
/// estimates can be negative.
Eigen::MatrixXd trig_random_features(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                     const Eigen::Ref<const Eigen::MatrixXd>& W);

}  // namespace attn
