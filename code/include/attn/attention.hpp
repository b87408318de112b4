#pragma once
/// \file attention.hpp
/// \brief Scaled dot-product attention, masks, biases and multi-head attention.
///
/// Tokens are rows: \f$ X \in \mathbb{R}^{n \times d} \f$, \f$ Q = XW_Q \f$, \f$ K = XW_K
/// \f$, \f$ V = XW_V \f$, and attention returns \f$
/// \operatorname{softmax}_{\text{rows}}(QK^\top/\sqrt{d_k})\,V \f$.

#include <Eigen/Dense>

namespace attn {

/// \brief Additive causal mask \f$ M \in \mathbb{R}^{n \times n} \f$: \f$ M_{ij} = 0 \f$
/// for \f$ j \le i \f$ and \f$ -\infty \f$ for \f$ j > i \f$, so token \f$ i \f$ sees
/// only tokens \f$ 0..i \f$.
Eigen::MatrixXd causal_mask(Eigen::Index n);

/// \brief Attention weights \f$ A =
/// \operatorname{softmax}_{\text{rows}}(QK^\top/\sqrt{d_k} + M) \f$.
///
/// \param Q queries, \f$ n_q \times d_k \f$ (one per row).
/// \param K keys, \f$ n_k \times d_k \f$.
/// \param mask additive mask \f$ M \f$, \f$ n_q \times n_k \f$ (0 = visible, \f$ -\infty
/// \f$ = hidden),
///        or an empty matrix for none.
/// Each row of \f$ A \f$ is non-negative and sums to 1.
/// \throws std::invalid_argument on mismatched shapes, a NaN or infinite entry of
///         \f$ Q \f$ or \f$ K \f$, a score that overflows, or a fully masked row.
Eigen::MatrixXd attention_weights(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                  const Eigen::Ref<const Eigen::MatrixXd>& K,
                                  const Eigen::Ref<const Eigen::MatrixXd>& mask);

/// \brief Scaled dot-product attention
/// \f$ \operatorname{Attn}(Q,K,V) =
/// \operatorname{softmax}_{\text{rows}}(QK^\top/\sqrt{d_k} + M)\,V \f$: the reference
/// form, computed exactly as written (attention_weights(), then the product with \f$ V
/// \f$), so it holds the \f$ n_q \times n_k \f$ matrix of weights.
///
/// Row \f$ i \f$ of the result is a weighted average of the rows of \f$ V \f$ (\f$ n_k
/// \times d_v \f$), so it lies in their convex hull. `mask` as in attention_weights().
/// The fast forms attention_row_blocks() and tiled_attention() compute the same numbers
/// without the \f$ n_q \times n_k \f$ matrix, and are tested equal to this one.
/// It runs on the caller's thread alone: it is the formula as written, two whole matrix
/// products, and cutting them into blocks of rows for threads would make it one of the fast
/// forms (Eigen may sum a smaller product in another order, so its last bits would move);
/// the fast forms split their blocks over the cores.
/// \throws std::invalid_argument as attention_weights(), or if \f$ V \f$ does not have
///         one finite row per key.
Eigen::MatrixXd attention(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                          const Eigen::Ref<const Eigen::MatrixXd>& K,
                          const Eigen::Ref<const Eigen::MatrixXd>& V,
                          const Eigen::Ref<const Eigen::MatrixXd>& mask);

/// Whether token \f$ i \f$ may look at tokens after it.
enum class Masking { none, causal };

/// \brief The normalisation \f$ h \f$ that turns the matrix of scores \f$ S \f$ into
/// weights.
enum class Normalisation {
  identity,  ///< \f$ h(S) = S \f$: no normalisation, the weights are the scores
  softmax    ///< \f$ h(S) = \operatorname{softmax}_{\text{rows}}(S) \f$
};

/// \brief "identity" or "softmax".
const char* to_string(Normalisation h);

/// \brief Parameters of one attention layer. A bias of size 0 means "no bias".
struct AttentionParams {
  Eigen::MatrixXd W_Q;  ///< \f$ d \times d_k \f$
  Eigen::MatrixXd W_K;  ///< \f$ d \times d_k \f$
  Eigen::MatrixXd W_V;  ///< \f$ d \times d_v \f$
  Eigen::VectorXd b_Q;  ///< size \f$ d_k \f$ or 0; added to every row of \f$ Q \f$
  Eigen::VectorXd b_K;  ///< size \f$ d_k \f$ or 0
  Eigen::VectorXd b_V;  ///< size \f$ d_v \f$ or 0
};

/// \brief Self-attention of the tokens \f$ X \f$ (\f$ n \times d \f$) on themselves:
/// \f$ Q = XW_Q + \mathbf{1}b_Q^\top \f$, \f$ K = XW_K + \mathbf{1}b_K^\top \f$,
/// \f$ V = XW_V + \mathbf{1}b_V^\top \f$, result \f$ \operatorname{Attn}(Q, K, V) \f$,
/// \f$ n \times d_v \f$.
Eigen::MatrixXd self_attention(const Eigen::Ref<const Eigen::MatrixXd>& X,
                               const AttentionParams& p, Masking masking = Masking::none);

/// \brief Parameters of multi-head attention: \f$ n_h \f$ heads of width
/// \f$ d_h = d/n_h \f$.
///
/// Head \f$ i \f$ uses the column blocks \f$ W_Q^{(i)} = W_Q[:, i\,d_h : (i+1)\,d_h] \f$
/// (likewise \f$ W_K, W_V \f$), each head with its **own** value projection.
struct MultiHeadParams {
  Eigen::Index heads = 1;  ///< \f$ n_h \f$; must divide \f$ d \f$
  Eigen::MatrixXd W_Q;     ///< \f$ d \times d \f$
  Eigen::MatrixXd W_K;     ///< \f$ d \times d \f$
  Eigen::MatrixXd W_V;     ///< \f$ d \times d \f$
  Eigen::MatrixXd W_O;     ///< \f$ d \times d \f$, output projection
};

/// \brief Multi-head attention
/// \f$ \operatorname{MHA}(X) = [\,C_1 \;\cdots\; C_{n_h}\,]\,W_O \f$ with
/// \f$ C_i = \operatorname{Attn}(XW_Q^{(i)}, XW_K^{(i)}, XW_V^{(i)}) \f$, each head
/// scaled by \f$ 1/\sqrt{d_h} \f$.
/// \throws std::invalid_argument if \f$ n_h \f$ does not divide \f$ d \f$ or shapes
///         mismatch.
Eigen::MatrixXd multi_head_attention(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                     const MultiHeadParams& p,
                                     Masking masking = Masking::none);

}  // namespace attn
