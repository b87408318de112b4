#pragma once
/// \file linear_attention.hpp
/// \brief Kernelised attention with features \f$ \phi(Q), \phi(K) \f$: the quadratic form,
/// the linear-time form, and the causal recurrence.
///
/// With weights \f$ w_{ij} = \phi(q_i)^\top\phi(k_j) \f$, attention returns
/// \f$ o_i = \sum_j w_{ij} v_j / \sum_j w_{ij} \f$. Forming
/// \f$ W = \phi(Q)\phi(K)^\top \f$ first costs \f$ O(n^2 D) \f$; multiplying right to
/// left, \f$ \phi(Q)\,(\phi(K)^\top V) \f$, costs \f$ O(n D d_v) \f$.

#include <Eigen/Dense>

#include "attn/attention.hpp"  // Masking

namespace attn {

/// \brief Quadratic-cost kernel attention: \f$ W = \phi(Q)\phi(K)^\top \f$ (its lower
/// triangle only with Masking::causal, which needs as many queries as keys), output
/// \f$ \operatorname{diag}(W\mathbf{1})^{-1} W V \f$.
/// \throws std::invalid_argument on mismatched shapes, non-finite input, or a row whose
/// weights sum to 0 or less (the normalisation would divide by it).
Eigen::MatrixXd kernel_attention_quadratic(const Eigen::Ref<const Eigen::MatrixXd>& phiQ,
                                           const Eigen::Ref<const Eigen::MatrixXd>& phiK,
                                           const Eigen::Ref<const Eigen::MatrixXd>& V,
                                           Masking masking = Masking::none);

/// \brief The normalised weight matrix \f$ \operatorname{diag}(W\mathbf{1})^{-1} W \f$ of
/// kernel_attention_quadratic(), \f$ n \times n \f$ (for figures and rank checks).
Eigen::MatrixXd kernel_attention_weights(const Eigen::Ref<const Eigen::MatrixXd>& phiQ,
                                         const Eigen::Ref<const Eigen::MatrixXd>& phiK,
                                         Masking masking = Masking::none);

/// \brief Linear attention
/// \f$ \phi(Q)\,(\phi(K)^\top V) \,/\, \phi(Q)\,(\phi(K)^\top \mathbf{1}) \f$ (division
/// row by row), in \f$ O(n D d_v) \f$ time and \f$ O(D d_v) \f$ extra memory. Equal to
/// kernel_attention_quadratic() up to rounding.
/// \throws std::invalid_argument like kernel_attention_quadratic().
Eigen::MatrixXd linear_attention(const Eigen::Ref<const Eigen::MatrixXd>& phiQ,
                                 const Eigen::Ref<const Eigen::MatrixXd>& phiK,
                                 const Eigen::Ref<const Eigen::MatrixXd>& V);

/// \brief Linear attention with positive random features, streamed in blocks of rows:
/// the output of linear_attention() on
/// `positive_random_features(Q, W, Stabiliser::per_row)` and
/// `positive_random_features(K, W, Stabiliser::global)`, up to rounding, without ever
/// storing an \f$ n \times r \f$ feature matrix.
///
/// Keys are read `block` rows at a time into the state \f$ S = \phi(K)^\top V \f$ and
/// \f$ z = \phi(K)^\top \mathbf{1} \f$. The global stabiliser \f$ e^{-c} \f$ uses the
/// largest exponent seen so far; when a later block raises it from \f$ c \f$ to
/// \f$ c' \f$, the state is multiplied by \f$ e^{c - c'} \f$ (the online-softmax trick: the
/// common factor cancels in every query's normalisation, so the result is exact). Queries
/// are then processed block by block. Extra memory \f$ O(\text{block} \cdot r + r d_v)
/// \f$, time \f$ O(n r (d_k + d_v)) \f$, and every intermediate stays in cache.
/// \throws std::invalid_argument on mismatched shapes, non-finite input or `block` < 1.
Eigen::MatrixXd streamed_positive_feature_attention(
    const Eigen::Ref<const Eigen::MatrixXd>& Q,
    const Eigen::Ref<const Eigen::MatrixXd>& K,
    const Eigen::Ref<const Eigen::MatrixXd>& V,
    const Eigen::Ref<const Eigen::MatrixXd>& W, Eigen::Index block = 256);

/// \brief Causal linear attention as a recurrent network with a \f$ D \times d_v \f$
/// state: \f$ S_t = S_{t-1} + \phi(k_t) v_t^\top \f$, \f$ z_t = z_{t-1} + \phi(k_t) \f$,
/// \f$ o_t = S_t^\top \phi(q_t) / z_t^\top \phi(q_t) \f$. Equal to the masked quadratic
/// form, kernel_attention_quadratic() with Masking::causal, up to rounding.
Eigen::MatrixXd causal_linear_attention(const Eigen::Ref<const Eigen::MatrixXd>& phiQ,
                                        const Eigen::Ref<const Eigen::MatrixXd>& phiK,
                                        const Eigen::Ref<const Eigen::MatrixXd>& V);

}  // namespace attn
