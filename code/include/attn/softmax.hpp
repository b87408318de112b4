#pragma once
/// \file softmax.hpp
/// \brief Numerically stable softmax, its Jacobian and entropy.

#include <Eigen/Dense>

namespace attn {

/// \brief Row-wise softmax: \f$ \operatorname{softmax}(Z)_{ij} = e^{Z_{ij}} / \sum_k
/// e^{Z_{ik}} \f$.
///
/// Computed as \f$ e^{Z_{ij} - m_i} / \sum_k e^{Z_{ik} - m_i} \f$ with \f$ m_i = \max_k
/// Z_{ik} \f$, which is the same number (softmax is invariant to a shift of a row) but
/// cannot overflow: every exponent is \f$ \le 0 \f$ and the largest term is exactly 1, so
/// the sum lies in \f$[1, n]\f$. An entry of \f$ -\infty \f$ is a masked position and
/// gets weight exactly 0.
///
/// \throws std::invalid_argument if a row is fully masked (every entry \f$ -\infty \f$:
/// the weights
///         would be 0/0), or if an entry is NaN or \f$ +\infty \f$. The message names the
///         row.
Eigen::MatrixXd softmax_rows(const Eigen::Ref<const Eigen::MatrixXd>& Z);

/// \brief Softmax of one vector, \f$ p = \operatorname{softmax}(z) \f$; same rules as
/// softmax_rows().
Eigen::VectorXd softmax(const Eigen::Ref<const Eigen::VectorXd>& z);

/// \brief Jacobian of softmax at the point whose output is \f$ p \f$:
/// \f$ J = \partial p / \partial z = \operatorname{diag}(p) - p p^\top \f$.
///
/// It depends on \f$ z \f$ only through \f$ p \f$. When one weight tends to 1
/// (saturation), every entry of \f$ J \f$ tends to 0: gradients stop flowing through the
/// softmax.
Eigen::MatrixXd softmax_jacobian(const Eigen::Ref<const Eigen::VectorXd>& p);

/// \brief Shannon entropy in nats, \f$ \mathcal{H}(p) = -\sum_i p_i \log p_i \f$ (with
/// \f$ 0 \log 0 = 0 \f$).
///
/// \f$ \mathcal{H} = \log n \f$ for uniform weights over \f$ n \f$ positions, 0 for a
/// one-hot row.
double entropy(const Eigen::Ref<const Eigen::VectorXd>& p);

}  // namespace attn
