#pragma once
/// \file transformer_block.hpp
/// \brief Permutations of tokens, attention with biases, LayerNorm, the token-wise FFN,
/// a whole transformer block, positional encodings and pooling (chapter 06).
///
/// Tokens are rows. A permutation \f$ \pi \f$ of \f$ 0..n-1 \f$ acts as the matrix
/// \f$ P \f$ with \f$ (PX)_{i,:} = X_{\pi(i),:} \f$. A map \f$ f \f$ is
/// permutation-equivariant if \f$ f(PX) = P f(X) \f$ and permutation-invariant if
/// \f$ f(PX) = f(X) \f$, for every \f$ P \f$.

#include <Eigen/Dense>
#include <functional>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"

namespace attn {

/// A permutation \f$ \pi \f$ of \f$ 0..n-1 \f$, stored as the list
/// \f$ \pi(0), \dots, \pi(n-1) \f$.
using Permutation = std::vector<Eigen::Index>;

/// \brief A uniformly random permutation of \f$ 0..n-1 \f$ (Fisher–Yates on
/// uniform01(), so the same engine state gives the same permutation on every platform).
Permutation random_permutation(Eigen::Index n, Rng& rng);

/// \brief \f$ PX \f$: row \f$ i \f$ of the result is row \f$ \pi(i) \f$ of \f$ X \f$.
/// \throws std::invalid_argument if `perm` is not a permutation of the rows of X.
Eigen::MatrixXd permute_rows(const Eigen::Ref<const Eigen::MatrixXd>& X,
                             const Permutation& perm);

/// \brief The permutation matrix \f$ P \f$ with \f$ P_{i,\pi(i)} = 1 \f$, so that
/// permute_rows(X, perm) \f$ = PX \f$ and \f$ P^\top P = I \f$.
Eigen::MatrixXd permutation_matrix(const Permutation& perm);

/// \brief The inverse permutation: permute_rows(permute_rows(X, perm), inverse(perm))
/// \f$ = P^\top P X = X \f$.
Permutation inverse(const Permutation& perm);

/// \brief Attention without normalisation, \f$ (QK^\top/\sqrt{d_k})\,V \f$: the weights of
/// a row need not be positive or sum to 1.
/// \throws std::invalid_argument on mismatched shapes or a non-finite input.
Eigen::MatrixXd identity_attention(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                   const Eigen::Ref<const Eigen::MatrixXd>& K,
                                   const Eigen::Ref<const Eigen::MatrixXd>& V);

/// \brief Cross-attention of the queries of \f$ X \f$ (\f$ n \times d \f$) on the tokens
/// of a second sequence \f$ Z \f$ (\f$ n_k \times d \f$), with biases:
/// \f$ Q = XW_Q + \mathbf{1}b_Q^\top \f$, \f$ K = ZW_K + \mathbf{1}b_K^\top \f$,
/// \f$ V = ZW_V + \mathbf{1}b_V^\top \f$, result \f$ h(QK^\top/\sqrt{d_k} + M)\,V \f$.
///
/// `cross_attention(X, X, p)` is self-attention (the same as self_attention()). A bias of
/// size 0 is no bias. `mask` (\f$ n \times n_k \f$, or empty) only with
/// \f$ h = \operatorname{softmax}_{\text{rows}} \f$.
/// \throws std::invalid_argument on mismatched shapes, or a mask with \f$ h = \mathrm{id}
/// \f$.
Eigen::MatrixXd cross_attention(
    const Eigen::Ref<const Eigen::MatrixXd>& X,
    const Eigen::Ref<const Eigen::MatrixXd>& Z, const AttentionParams& p,
    Normalisation h = Normalisation::softmax,
    const Eigen::Ref<const Eigen::MatrixXd>& mask = Eigen::MatrixXd());

/// \brief Which axis a normalisation averages over.
enum class NormAxis {
  features,  ///< LayerNorm: each token over its \f$ d \f$ features
  tokens  ///< each feature over the \f$ n \f$ tokens (BatchNorm's axis, within one sequence)
};

/// \brief A normalisation and its affine parameters. A vector of size 0 means
/// \f$ \gamma = \mathbf{1} \f$ or \f$ \delta = 0 \f$ (no affine part).
struct NormParams {
  NormAxis axis = NormAxis::features;
  Eigen::VectorXd
      gamma;  ///< scale: size \f$ d \f$ (features) or \f$ n \f$ (tokens), or 0
  Eigen::VectorXd
      delta;           ///< shift: size \f$ d \f$ (features) or \f$ n \f$ (tokens), or 0
  double eps0 = 1e-5;  ///< \f$ \epsilon_0 > 0 \f$ in the square root
};

/// \brief LayerNorm of every row: \f$ \operatorname{LN}(x) = \gamma \odot (x - \bar
/// x\mathbf{1}) / \sqrt{s_x^2 + \epsilon_0} + \delta \f$, with \f$ \bar x \f$ and
/// \f$ s_x^2 \f$ the mean and (biased) variance of the \f$ d \f$ entries of the row.
/// `gamma`, `delta` of size \f$ d \f$ or 0.
/// \throws std::invalid_argument on a size mismatch or \f$ \epsilon_0 \le 0 \f$.
Eigen::MatrixXd layer_norm(const Eigen::Ref<const Eigen::MatrixXd>& X,
                           const Eigen::VectorXd& gamma, const Eigen::VectorXd& delta,
                           double eps0 = 1e-5);

/// \brief Normalisation over the token axis with per-position affine parameters:
/// \f$ Y_{tj} = \gamma_t\,(X_{tj} - \mu_j)/\sqrt{v_j + \epsilon_0} + \delta_t \f$, where
/// \f$ \mu_j \f$ and \f$ v_j \f$ are the mean and (biased) variance of column \f$ j \f$
/// over the \f$ n \f$ tokens. `gamma`, `delta` of size \f$ n \f$ (one per position) or 0.
/// \throws std::invalid_argument on a size mismatch or \f$ \epsilon_0 \le 0 \f$.
Eigen::MatrixXd token_norm(const Eigen::Ref<const Eigen::MatrixXd>& X,
                           const Eigen::VectorXd& gamma, const Eigen::VectorXd& delta,
                           double eps0 = 1e-5);

/// \brief layer_norm() or token_norm(), as `p.axis` says.
Eigen::MatrixXd normalise(const Eigen::Ref<const Eigen::MatrixXd>& X,
                          const NormParams& p);

/// \brief Parameters of the token-wise feed-forward network.
struct FeedForwardParams {
  Eigen::MatrixXd W_1;  ///< \f$ d \times d_{ff} \f$
  Eigen::VectorXd b_1;  ///< \f$ d_{ff} \f$ or 0
  Eigen::MatrixXd W_2;  ///< \f$ d_{ff} \times d \f$
  Eigen::VectorXd b_2;  ///< \f$ d \f$ or 0
};

/// \brief The feed-forward network applied to every token (row) separately:
/// \f$ \operatorname{FFN}(X) = \max(0,\, XW_1 + \mathbf{1}b_1^\top)\,W_2 +
/// \mathbf{1}b_2^\top \f$.
Eigen::MatrixXd feed_forward(const Eigen::Ref<const Eigen::MatrixXd>& X,
                             const FeedForwardParams& p);

/// \brief Where the normalisations sit in a block.
enum class NormPlacement {
  post,  ///< original Transformer: \f$ X_1 = N_1(X + \operatorname{MHA}(X)) \f$,
         ///< \f$ X_2 = N_2(X_1 + \operatorname{FFN}(X_1)) \f$
  pre,   ///< GPT-2 style: \f$ X_1 = X + \operatorname{MHA}(N_1(X)) \f$,
         ///< \f$ X_2 = X_1 + \operatorname{FFN}(N_2(X_1)) \f$
  inner  ///< as the permutation post writes it: \f$ X_1 = X + N_1(\operatorname{MHA}(X)) \f$,
         ///< \f$ X_2 = X_1 + N_2(\operatorname{FFN}(X_1)) \f$
};

/// \brief Parameters of one transformer block.
struct BlockParams {
  MultiHeadParams attention;  ///< \f$ n_h \f$ heads, \f$ W_Q, W_K, W_V, W_O \f$
  Eigen::VectorXd b_O;        ///< bias after \f$ W_O \f$, size \f$ d \f$ or 0
  FeedForwardParams ffn;      ///< the token-wise FFN
  NormParams norm1;           ///< \f$ N_1 \f$, around the attention
  NormParams norm2;           ///< \f$ N_2 \f$, around the FFN
  NormPlacement placement = NormPlacement::post;
};

/// \brief Multi-head attention plus its output bias: \f$ \operatorname{MHA}(X) +
/// \mathbf{1}b_O^\top \f$ (multi_head_attention() with `masking`).
Eigen::MatrixXd attention_sublayer(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                   const BlockParams& p, Masking masking = Masking::none);

/// \brief One transformer block: multi-head attention and the FFN, each with a residual
/// connection and a normalisation placed as `p.placement` says.
/// \throws std::invalid_argument on mismatched shapes.
Eigen::MatrixXd transformer_block(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                  const BlockParams& p, Masking masking = Masking::none);

/// \brief Sinusoidal positional encoding (Vaswani et al.), \f$ n \times d \f$:
/// \f$ E_{t,2i} = \sin(t/10000^{2i/d}) \f$, \f$ E_{t,2i+1} = \cos(t/10000^{2i/d}) \f$.
/// It is added to the tokens, \f$ X + E \f$, before the first block.
Eigen::MatrixXd sinusoidal_encoding(Eigen::Index n, Eigen::Index d);

/// \brief Mean over the tokens, \f$ \tfrac{1}{n}\mathbf{1}^\top X \f$ (a \f$ 1 \times d \f$
/// row): a permutation-invariant summary of a sequence.
/// \throws std::invalid_argument if \f$ X \f$ has no rows.
Eigen::MatrixXd mean_pool(const Eigen::Ref<const Eigen::MatrixXd>& X);

/// A map from a token matrix to a matrix, such as a layer.
using TokenMap = std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>;

/// \brief Relative equivariance residual \f$ \max_{ij} |f(PX) - Pf(X)|_{ij} /
/// \max_{ij} |f(X)|_{ij} \f$: rounding level for an equivariant \f$ f \f$.
double equivariance_residual(const TokenMap& f,
                             const Eigen::Ref<const Eigen::MatrixXd>& X,
                             const Permutation& perm);

/// \brief Relative invariance residual \f$ \max_{ij} |f(PX) - f(X)|_{ij} / \max_{ij}
/// |f(X)|_{ij} \f$: rounding level for an invariant \f$ f \f$.
double invariance_residual(const TokenMap& f, const Eigen::Ref<const Eigen::MatrixXd>& X,
                           const Permutation& perm);

}  // namespace attn
