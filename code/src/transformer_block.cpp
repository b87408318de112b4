#include "attn/transformer_block.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "attn/exercise.hpp"
#include "common.hpp"

namespace attn {

namespace {

using detail::add_to_rows;
using detail::require;
using detail::shape;

}  // namespace

Permutation random_permutation(Eigen::Index n, Rng& rng) {
  Permutation perm(static_cast<std::size_t>(n));
  for (Eigen::Index i = 0; i < n; ++i) perm[std::size_t(i)] = i;
  for (Eigen::Index i = n - 1; i > 0; --i) {  // Fisher-Yates: swap i with j in 0..i
    auto j = static_cast<Eigen::Index>(uniform01(rng) * static_cast<double>(i + 1));
    if (j > i) j = i;  // cannot happen (uniform01 < 1), kept for safety against rounding
    std::swap(perm[std::size_t(i)], perm[std::size_t(j)]);
  }
  return perm;
}

Eigen::MatrixXd permute_rows(const Eigen::Ref<const Eigen::MatrixXd>& X,
                             const Permutation& perm) {
  require(static_cast<Eigen::Index>(perm.size()) == X.rows(),
          "permute_rows: permutation of " + std::to_string(perm.size()) +
              " entries for a matrix of " + std::to_string(X.rows()) + " rows");
  std::vector<bool> seen(perm.size(), false);
  Eigen::MatrixXd Y(X.rows(), X.cols());
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    const Eigen::Index j = perm[std::size_t(i)];
    require(j >= 0 && j < X.rows() && !seen[std::size_t(j)],
            "permute_rows: not a permutation (entry " + std::to_string(j) + ")");
    seen[std::size_t(j)] = true;
    Y.row(i) = X.row(j);
  }
  return Y;
}

Eigen::MatrixXd permutation_matrix(const Permutation& perm) {
  const auto n = static_cast<Eigen::Index>(perm.size());
  return permute_rows(Eigen::MatrixXd::Identity(n, n), perm);
}

Permutation inverse(const Permutation& perm) {
  Permutation inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    const Eigen::Index j = perm[i];
    require(j >= 0 && j < static_cast<Eigen::Index>(perm.size()),
            "inverse: not a permutation (entry " + std::to_string(j) + ")");
    inv[std::size_t(j)] = static_cast<Eigen::Index>(i);
  }
  return inv;
}

Eigen::MatrixXd identity_attention(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                   const Eigen::Ref<const Eigen::MatrixXd>& K,
                                   const Eigen::Ref<const Eigen::MatrixXd>& V) {
  require(Q.cols() == K.cols() && Q.cols() > 0,
          "identity_attention: Q is " + shape(Q) + " and K is " + shape(K) +
              "; queries and keys need the same width d_k >= 1");
  require(K.rows() == V.rows(), "identity_attention: K is " + shape(K) + " and V is " +
                                    shape(V) + "; every key needs one value row");
  require(Q.allFinite() && K.allFinite() && V.allFinite(),
          "identity_attention: Q, K or V has a NaN or infinite entry");
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));
  // [identity-attention]
  const Eigen::MatrixXd S = scale * (Q * K.transpose());  // h = id: weights = scores
  return S * V;
  // [identity-attention]
}

Eigen::MatrixXd cross_attention(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                const Eigen::Ref<const Eigen::MatrixXd>& Z,
                                const AttentionParams& p, Normalisation h,
                                const Eigen::Ref<const Eigen::MatrixXd>& mask) {
  require(X.cols() == Z.cols(), "cross_attention: X is " + shape(X) + " and Z is " +
                                    shape(Z) + "; both need the model width d");
  require(
      p.W_Q.rows() == X.cols() && p.W_K.rows() == X.cols() && p.W_V.rows() == X.cols(),
      "cross_attention: W_Q, W_K, W_V are " + shape(p.W_Q) + ", " + shape(p.W_K) + ", " +
          shape(p.W_V) + " (each needs " + std::to_string(X.cols()) + " rows)");
  // [cross-attention]
  const Eigen::MatrixXd Q = add_to_rows(X * p.W_Q, p.b_Q, "cross_attention b_Q");
  const Eigen::MatrixXd K = add_to_rows(Z * p.W_K, p.b_K, "cross_attention b_K");
  const Eigen::MatrixXd V = add_to_rows(Z * p.W_V, p.b_V, "cross_attention b_V");
  if (h == Normalisation::softmax) return attention(Q, K, V, mask);
  require(mask.size() == 0, "cross_attention: a mask needs the softmax normalisation");
  return identity_attention(Q, K, V);
  // [cross-attention]
}

Eigen::MatrixXd layer_norm(const Eigen::Ref<const Eigen::MatrixXd>& X,
                           const Eigen::VectorXd& gamma, const Eigen::VectorXd& delta,
                           double eps0) {
  require(eps0 > 0, "layer_norm: eps0 must be > 0");
  require(gamma.size() == 0 || gamma.size() == X.cols(),
          "layer_norm: gamma has size " + std::to_string(gamma.size()) + ", expected " +
              std::to_string(X.cols()));
  require(delta.size() == 0 || delta.size() == X.cols(),
          "layer_norm: delta has size " + std::to_string(delta.size()) + ", expected " +
              std::to_string(X.cols()));
  require(X.cols() > 0, "layer_norm: X has no features");
  const auto d = static_cast<double>(X.cols());
  // [layer-norm]
  // Each row (token) on its own: its mean and variance over its d features.
  const Eigen::VectorXd mean = X.rowwise().sum() / d;
  const Eigen::MatrixXd centred = X.colwise() - mean;
  const Eigen::VectorXd var = centred.rowwise().squaredNorm() / d;
  Eigen::MatrixXd Y = centred.array().colwise() / (var.array() + eps0).sqrt();
  if (gamma.size() > 0) Y.array().rowwise() *= gamma.transpose().array();
  if (delta.size() > 0) Y.rowwise() += delta.transpose();
  // [layer-norm]
  return Y;
}

Eigen::MatrixXd token_norm(const Eigen::Ref<const Eigen::MatrixXd>& X,
                           const Eigen::VectorXd& gamma, const Eigen::VectorXd& delta,
                           double eps0) {
  require(eps0 > 0, "token_norm: eps0 must be > 0");
  require(gamma.size() == 0 || gamma.size() == X.rows(),
          "token_norm: gamma has size " + std::to_string(gamma.size()) +
              ", expected one entry per position, " + std::to_string(X.rows()));
  require(delta.size() == 0 || delta.size() == X.rows(),
          "token_norm: delta has size " + std::to_string(delta.size()) +
              ", expected one entry per position, " + std::to_string(X.rows()));
  require(X.rows() > 0, "token_norm: X has no tokens");
  const auto n = static_cast<double>(X.rows());
  // [token-norm]
  // Each feature (column) over the n tokens; then a scale and shift per position t.
  const Eigen::RowVectorXd mean = X.colwise().sum() / n;
  const Eigen::MatrixXd centred = X.rowwise() - mean;
  const Eigen::RowVectorXd var = centred.colwise().squaredNorm() / n;
  Eigen::MatrixXd Y = centred.array().rowwise() / (var.array() + eps0).sqrt();
  if (gamma.size() > 0) Y.array().colwise() *= gamma.array();
  if (delta.size() > 0) Y.colwise() += delta;
  // [token-norm]
  return Y;
}

Eigen::MatrixXd normalise(const Eigen::Ref<const Eigen::MatrixXd>& X,
                          const NormParams& p) {
  return p.axis == NormAxis::features ? layer_norm(X, p.gamma, p.delta, p.eps0)
                                      : token_norm(X, p.gamma, p.delta, p.eps0);
}

Eigen::MatrixXd feed_forward(const Eigen::Ref<const Eigen::MatrixXd>& X,
                             const FeedForwardParams& p) {
  require(p.W_1.rows() == X.cols() && p.W_2.rows() == p.W_1.cols() &&
              p.W_2.cols() == X.cols(),
          "feed_forward: X is " + shape(X) + ", W_1 is " + shape(p.W_1) + ", W_2 is " +
              shape(p.W_2) + "; need d x d_ff and d_ff x d");
  const Eigen::MatrixXd H =
      add_to_rows(X * p.W_1, p.b_1, "feed_forward b_1").cwiseMax(0.0);
  return add_to_rows(H * p.W_2, p.b_2, "feed_forward b_2");
}

Eigen::MatrixXd attention_sublayer(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                   const BlockParams& p, Masking masking) {
  require(
      p.attention.W_Q.rows() == X.cols(),
      "transformer_block: X is " + shape(X) + " but W_Q is " + shape(p.attention.W_Q));
  return add_to_rows(multi_head_attention(X, p.attention, masking), p.b_O,
                     "attention b_O");
}

Eigen::MatrixXd transformer_block(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                  const BlockParams& p, Masking masking) {
  const auto mha = [&](const Eigen::MatrixXd& H) {
    return attention_sublayer(H, p, masking);
  };
  const auto ffn = [&](const Eigen::MatrixXd& H) { return feed_forward(H, p.ffn); };
  const auto N1 = [&](const Eigen::MatrixXd& H) { return normalise(H, p.norm1); };
  const auto N2 = [&](const Eigen::MatrixXd& H) { return normalise(H, p.norm2); };
  const Eigen::MatrixXd X0 = X;
  // [block]
  switch (p.placement) {
    case NormPlacement::post: {  // X1 = N1(X + MHA(X)), X2 = N2(X1 + FFN(X1))
      const Eigen::MatrixXd X1 = N1(X0 + mha(X0));
      return N2(X1 + ffn(X1));
    }
    case NormPlacement::pre: {  // X1 = X + MHA(N1(X)), X2 = X1 + FFN(N2(X1))
      const Eigen::MatrixXd X1 = X0 + mha(N1(X0));
      return X1 + ffn(N2(X1));
    }
    case NormPlacement::inner: {  // X1 = X + N1(MHA(X)), X2 = X1 + N2(FFN(X1))
      const Eigen::MatrixXd X1 = X0 + N1(mha(X0));
      return X1 + N2(ffn(X1));
    }
  }
  // [block]
  throw std::invalid_argument("transformer_block: unknown norm placement");
}

Eigen::MatrixXd sinusoidal_encoding(Eigen::Index n, Eigen::Index d) {
  require(n >= 0 && d >= 1, "sinusoidal_encoding: need n >= 0 and d >= 1");
  Eigen::MatrixXd E(n, d);
  for (Eigen::Index t = 0; t < n; ++t)
    for (Eigen::Index j = 0; j < d; ++j) {
      const double i2 = static_cast<double>(j - j % 2);  // 2i for columns 2i and 2i+1
      const double angle =
          static_cast<double>(t) / std::pow(10000.0, i2 / static_cast<double>(d));
      E(t, j) = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  return E;
}

Eigen::MatrixXd mean_pool(const Eigen::Ref<const Eigen::MatrixXd>& X) {
  require(X.rows() > 0, "mean_pool: X has no tokens");
  return X.colwise().sum() / static_cast<double>(X.rows());
}

double invariance_residual(const TokenMap& f, const Eigen::Ref<const Eigen::MatrixXd>& X,
                           const Permutation& perm) {
  const Eigen::MatrixXd Y = f(X);
  const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - Y;
  const double scale = Y.lpNorm<Eigen::Infinity>();
  return diff.lpNorm<Eigen::Infinity>() / (scale > 0 ? scale : 1.0);
}

}  // namespace attn
