#include "attn/linear_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "common.hpp"

namespace attn {

namespace {

using detail::number;
using detail::require;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

void check_inputs(const char* who, const Eigen::Ref<const MatrixXd>& phiQ,
                  const Eigen::Ref<const MatrixXd>& phiK,
                  const Eigen::Ref<const MatrixXd>* V) {
  const std::string w = who;
  require(phiQ.cols() == phiK.cols(), w + ": phi(Q) has " + std::to_string(phiQ.cols()) +
                                          " features, phi(K) has " +
                                          std::to_string(phiK.cols()));
  require(V == nullptr || V->rows() == phiK.rows(),
          w + ": " + std::to_string(phiK.rows()) + " keys but " +
              std::to_string(V ? V->rows() : 0) + " values");
  require(phiQ.allFinite() && phiK.allFinite() && (V == nullptr || V->allFinite()),
          w + ": a NaN or infinite input entry");
}

// Normalisers must be positive: a sum of weights <= 0 (possible for odd Taylor orders or
// trigonometric features) has no meaning as an average, and 0 would give NaN.
void check_normalisers(const char* who, const VectorXd& z) {
  for (Index i = 0; i < z.size(); ++i)
    require(z(i) > 0, std::string(who) + ": the weights of query " + std::to_string(i) +
                          " sum to " + number(z(i)) + ", not a positive number");
}

}  // namespace

MatrixXd kernel_attention_weights(const Eigen::Ref<const MatrixXd>& phiQ,
                                  const Eigen::Ref<const MatrixXd>& phiK,
                                  Masking masking) {
  check_inputs("kernel_attention_weights", phiQ, phiK, nullptr);
  MatrixXd W = phiQ * phiK.transpose();
  if (masking == Masking::causal) {
    require(W.rows() == W.cols(),
            "kernel_attention_weights: a causal mask needs as many queries as keys");
    W.triangularView<Eigen::StrictlyUpper>().setZero();
  }
  const VectorXd z = W.rowwise().sum();
  check_normalisers("kernel_attention_weights", z);
  return z.cwiseInverse().asDiagonal() * W;
}

MatrixXd kernel_attention_quadratic(const Eigen::Ref<const MatrixXd>& phiQ,
                                    const Eigen::Ref<const MatrixXd>& phiK,
                                    const Eigen::Ref<const MatrixXd>& V,
                                    Masking masking) {
  check_inputs("kernel_attention_quadratic", phiQ, phiK, &V);
  return kernel_attention_weights(phiQ, phiK, masking) * V;
}

MatrixXd linear_attention(const Eigen::Ref<const MatrixXd>& phiQ,
                          const Eigen::Ref<const MatrixXd>& phiK,
                          const Eigen::Ref<const MatrixXd>& V) {
  check_inputs("linear_attention", phiQ, phiK, &V);
  // [linear-attention]
  const MatrixXd KV = phiK.transpose() * V;  // D x d_v, once for all queries
  const VectorXd k_sum = phiK.colwise().sum().transpose();  // phi(K)^T 1, size D
  const VectorXd z = phiQ * k_sum;                          // normalisers, size n
  check_normalisers("linear_attention", z);
  MatrixXd out = phiQ * KV;  // n x d_v
  out = z.cwiseInverse().asDiagonal() * out;
  // [linear-attention]
  return out;
}

MatrixXd streamed_positive_feature_attention(const Eigen::Ref<const MatrixXd>& Q,
                                             const Eigen::Ref<const MatrixXd>& K,
                                             const Eigen::Ref<const MatrixXd>& V,
                                             const Eigen::Ref<const MatrixXd>& W,
                                             Index block) {
  const char* who = "streamed_positive_feature_attention";
  const std::string w = who;
  require(Q.cols() == W.cols() && K.cols() == W.cols(),
          w + ": Q, K and the directions W have widths " + std::to_string(Q.cols()) +
              ", " + std::to_string(K.cols()) + ", " + std::to_string(W.cols()));
  require(K.rows() == V.rows(), w + ": " + std::to_string(K.rows()) + " keys but " +
                                    std::to_string(V.rows()) + " values");
  require(block >= 1, w + ": block must be >= 1 (got " + std::to_string(block) + ")");
  require(Q.allFinite() && K.allFinite() && V.allFinite() && W.allFinite(),
          w + ": a NaN or infinite input entry");
  const Index r = W.rows(), dv = V.cols();
  const double inv_sqrt_r = 1.0 / std::sqrt(static_cast<double>(r));
  MatrixXd E(block, r);  // exponents, then features, of one block of rows (reused)
  // [streamed-keys]
  MatrixXd S = MatrixXd::Zero(r, dv);  // sum_j phi(k_j) v_j^T, scaled by e^{-c}
  VectorXd z = VectorXd::Zero(r);      // sum_j phi(k_j), scaled by e^{-c}
  double c = -std::numeric_limits<double>::infinity();  // the largest exponent so far
  for (Index s = 0; s < K.rows(); s += block) {
    const Index b = std::min(block, K.rows() - s);
    auto Eb = E.topRows(b);
    Eb.noalias() = K.middleRows(s, b) * W.transpose();
    Eb.colwise() -= 0.5 * K.middleRows(s, b).rowwise().squaredNorm();
    const double c_new = std::max(c, Eb.maxCoeff());
    if (c_new > c && S.size() > 0) {  // rescale what is summed so far: e^{-c} -> e^{-c'}
      const double f = std::exp(c - c_new);  // 0 on the first block, where S = 0
      S *= f;
      z *= f;
    }
    c = c_new;
    Eb = ((Eb.array() - c).exp() * inv_sqrt_r).matrix();
    S.noalias() += Eb.transpose() * V.middleRows(s, b);
    z.noalias() += Eb.transpose() * VectorXd::Ones(b);
  }
  // [streamed-keys]
  MatrixXd out(Q.rows(), dv);
  for (Index s = 0; s < Q.rows(); s += block) {
    const Index b = std::min(block, Q.rows() - s);
    auto Eb = E.topRows(b);
    Eb.noalias() = Q.middleRows(s, b) * W.transpose();
    // Per-row stabiliser: subtracting row i's maximum (which also absorbs the constant
    // -|q_i|^2/2) multiplies row i by one factor, which cancels in its normalisation.
    Eb.colwise() -= Eb.rowwise().maxCoeff();
    Eb = (Eb.array().exp() * inv_sqrt_r).matrix();
    const VectorXd norms = Eb * z;
    for (Index i = 0; i < b; ++i)
      require(norms(i) > 0, w + ": the weights of query " + std::to_string(s + i) +
                                " sum to " + number(norms(i)) +
                                ", not a positive number");
    out.middleRows(s, b).noalias() = norms.cwiseInverse().asDiagonal() * (Eb * S);
  }
  return out;
}

MatrixXd causal_linear_attention(const Eigen::Ref<const MatrixXd>& phiQ,
                                 const Eigen::Ref<const MatrixXd>& phiK,
                                 const Eigen::Ref<const MatrixXd>& V) {
  check_inputs("causal_linear_attention", phiQ, phiK, &V);
  require(phiQ.rows() == phiK.rows(),
          "causal_linear_attention: needs as many queries as keys");
  const Index n = phiQ.rows(), D = phiQ.cols(), dv = V.cols();
  MatrixXd out(n, dv);
  // [causal-rnn]
  MatrixXd S = MatrixXd::Zero(D, dv);  // the state: sum_{j<=t} phi(k_j) v_j^T
  VectorXd z = VectorXd::Zero(D);      // sum_{j<=t} phi(k_j)
  for (Index t = 0; t < n; ++t) {
    S.noalias() += phiK.row(t).transpose() * V.row(t);
    z += phiK.row(t).transpose();
    const double norm = phiQ.row(t).dot(z);
    require(norm > 0, "causal_linear_attention: the weights of query " +
                          std::to_string(t) + " sum to " + number(norm));
    out.row(t) = (phiQ.row(t) * S) / norm;
  }
  // [causal-rnn]
  return out;
}

}  // namespace attn
