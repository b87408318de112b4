#include "attn/attention.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "attn/exercise.hpp"
#include "attn/softmax.hpp"
#include "common.hpp"

namespace attn {

using detail::add_to_rows;
using detail::require;
using detail::shape;

const char* to_string(Normalisation h) {
  return h == Normalisation::identity ? "identity" : "softmax";
}

Eigen::MatrixXd attention_weights(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                  const Eigen::Ref<const Eigen::MatrixXd>& K,
                                  const Eigen::Ref<const Eigen::MatrixXd>& mask) {
  require(Q.cols() == K.cols(), "attention: Q is " + shape(Q) + " and K is " + shape(K) +
                                    "; queries and keys need the same width d_k");
  require(Q.cols() > 0, "attention: d_k must be at least 1");
  // An infinite query or key entry would make scores of inf - inf = NaN, or fake a mask.
  require(Q.allFinite() && K.allFinite(),
          "attention: Q or K has a NaN or infinite entry");
  // [scaled-logits]
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));  // 1/sqrt(d_k)
  Eigen::MatrixXd logits = scale * (Q * K.transpose());
  // [scaled-logits]
  // Finite inputs can still overflow a score (|q| |k| > 1e308): an error, not NaN, and
  // not a score of -inf that would pass for a mask.
  if (!logits.allFinite())
    for (Eigen::Index i = 0; i < logits.rows(); ++i)
      require(logits.row(i).allFinite(),
              "attention: row " + std::to_string(i) + " has an infinite score");
  if (mask.size() > 0) {
    require(mask.rows() == logits.rows() && mask.cols() == logits.cols(),
            "attention: mask is " + shape(mask) + ", expected " + shape(logits));
    logits += mask;
  }
  return softmax_rows(logits);
}

Eigen::MatrixXd attention(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                          const Eigen::Ref<const Eigen::MatrixXd>& K,
                          const Eigen::Ref<const Eigen::MatrixXd>& V,
                          const Eigen::Ref<const Eigen::MatrixXd>& mask) {
  require(K.rows() == V.rows(), "attention: K is " + shape(K) + " and V is " + shape(V) +
                                    "; every key needs exactly one value row");
  // 0 * inf is NaN: a masked but infinite value row would still poison every output row.
  require(V.allFinite(), "attention: V has a NaN or infinite entry");
  // [attention-reference]
  return attention_weights(Q, K, mask) * V;  // softmax_rows(Q K^T / sqrt(d_k) + M) V
  // [attention-reference]
}

Eigen::MatrixXd self_attention(const Eigen::Ref<const Eigen::MatrixXd>& X,
                               const AttentionParams& p, Masking masking) {
  require(
      p.W_Q.rows() == X.cols() && p.W_K.rows() == X.cols() && p.W_V.rows() == X.cols(),
      "self_attention: X is " + shape(X) + " but W_Q, W_K, W_V are " + shape(p.W_Q) +
          ", " + shape(p.W_K) + ", " + shape(p.W_V) + " (each needs " +
          std::to_string(X.cols()) + " rows)");
  // [qkv]
  const Eigen::MatrixXd Q = add_to_rows(X * p.W_Q, p.b_Q, "self_attention b_Q");
  const Eigen::MatrixXd K = add_to_rows(X * p.W_K, p.b_K, "self_attention b_K");
  const Eigen::MatrixXd V = add_to_rows(X * p.W_V, p.b_V, "self_attention b_V");
  const Eigen::MatrixXd mask =
      masking == Masking::causal ? causal_mask(X.rows()) : Eigen::MatrixXd();
  return attention(Q, K, V, mask);
  // [qkv]
}

Eigen::MatrixXd multi_head_attention(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                     const MultiHeadParams& p, Masking masking) {
  const Eigen::Index d = p.W_Q.cols();
  require(p.heads >= 1 && d % p.heads == 0,
          "multi_head_attention: " + std::to_string(p.heads) +
              " heads do not divide the width d = " + std::to_string(d));
  require(p.W_K.cols() == d && p.W_V.cols() == d && p.W_O.rows() == d,
          "multi_head_attention: W_K, W_V need " + std::to_string(d) +
              " columns and W_O " + std::to_string(d) + " rows");
  const Eigen::Index dh = d / p.heads;
  const Eigen::MatrixXd mask =
      masking == Masking::causal ? causal_mask(X.rows()) : Eigen::MatrixXd();
  // [multi-head]
  Eigen::MatrixXd heads(X.rows(), d);  // [C_1 ... C_{n_h}], side by side
  for (Eigen::Index i = 0; i < p.heads; ++i) {
    const auto block = [&](const Eigen::MatrixXd& W) { return W.middleCols(i * dh, dh); };
    heads.middleCols(i * dh, dh) =
        attention(X * block(p.W_Q), X * block(p.W_K), X * block(p.W_V), mask);
  }
  return heads * p.W_O;
  // [multi-head]
}

}  // namespace attn
