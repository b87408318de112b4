// Chapter 06 — every claim of the chapter, as a test named after the claim.
//
// Tolerances. A permutation changes no number in these computations, only the order in
// which sums over tokens are accumulated (softmax denominators, weighted averages, means
// over the token axis). Reordering a sum of m terms of order 1 moves it by at most about
// m * eps relative, so an exact symmetry is checked at rounding(n, d) = 256 (n + d) eps
// relative to the size of the output: 256 leaves room for the handful of layers in a block
// and for LayerNorm's division by a standard deviation of order 1 (the inputs are random
// with unit-order variance). A claim that something BREAKS a symmetry is checked at a
// relative change of more than `broken` = 1e-3, billions of ulps above rounding.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/transformer_block.hpp"
#include "setup.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr double broken = 1e-3;

double rounding(Index n, Index d) {
  return 256.0 * static_cast<double>(n + d) * eps;
}

struct Case {
  Index n, d, heads;
};
// Sizes from the smallest that has a permutation (n = 2) up to a few dozen tokens.
const std::vector<Case> cases{{2, 4, 1}, {3, 4, 2}, {7, 8, 2}, {16, 12, 3}, {33, 16, 4}};
const std::vector<std::uint64_t> seeds{1, 2, 3};
constexpr int perms_per_case = 3;

double max_abs(const MatrixXd& M) {
  return M.cwiseAbs().maxCoeff();
}

// |A - B| relative to the size of B (or to 1 if B is tiny).
double rel(const MatrixXd& A, const MatrixXd& B) {
  return max_abs(A - B) / std::max(1.0, max_abs(B));
}

// Calls body(n, d, heads, rng, perm) for every case, seed and a few moving permutations.
template <typename Body>
void for_all(Body body) {
  for (const auto& c : cases)
    for (const auto seed : seeds) {
      attn::Rng rng(seed * 1000 + static_cast<std::uint64_t>(c.n));
      for (int k = 0; k < perms_per_case; ++k) {
        const attn::Permutation perm = ch06::moving_permutation(c.n, rng);
        body(c.n, c.d, c.heads, rng, perm);
      }
    }
}

}  // namespace

TEST_SUITE("ch06") {
  TEST_CASE(
      "permute_rows is multiplication by the permutation matrix P and P^T undoes it") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      const MatrixXd P = attn::permutation_matrix(perm);
      // Exact: P has one 1 per row, every other product is an exact 0.
      CHECK(max_abs(attn::permute_rows(X, perm) - P * X) == 0.0);
      CHECK(max_abs(P.transpose() * P - MatrixXd::Identity(n, n)) == 0.0);
      CHECK(max_abs(attn::permute_rows(attn::permute_rows(X, perm), attn::inverse(perm)) -
                    X) == 0.0);
    });
    attn::Permutation not_a_perm{0, 0, 1};
    CHECK_THROWS_AS(attn::permute_rows(MatrixXd::Zero(3, 2), not_a_perm),
                    std::invalid_argument);
  }

  TEST_CASE("attention weights become P A P'^T when queries and keys are permuted") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const Index n_k = n + 3;
      const attn::Permutation perm_k = attn::random_permutation(n_k, rng);
      const MatrixXd Q = attn::random_normal(n, d, rng),
                     K = attn::random_normal(n_k, d, rng);
      const MatrixXd A = attn::attention_weights(Q, K, MatrixXd());
      const MatrixXd A2 = attn::attention_weights(
          attn::permute_rows(Q, perm), attn::permute_rows(K, perm_k), MatrixXd());
      const MatrixXd PAPt =
          attn::permute_rows(attn::permute_rows(A, perm).transpose(), perm_k).transpose();
      CHECK(rel(A2, PAPt) <= rounding(n_k, d));
    });
  }

  TEST_CASE("attention is invariant to permuting keys and values together") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
      const Index n_k = n + 2;
      const attn::Permutation perm_k = ch06::moving_permutation(n_k, rng);
      const MatrixXd Q = attn::random_normal(n, d, rng),
                     K = attn::random_normal(n_k, d, rng),
                     V = attn::random_normal(n_k, d, rng);
      const MatrixXd out = attn::attention(Q, K, V, MatrixXd());
      const MatrixXd out2 = attn::attention(Q, attn::permute_rows(K, perm_k),
                                            attn::permute_rows(V, perm_k), MatrixXd());
      CHECK(rel(out2, out) <= rounding(n_k, d));
      // Keys and values must move together: permuting the keys alone changes the output.
      const MatrixXd keys_only =
          attn::attention(Q, attn::permute_rows(K, perm_k), V, MatrixXd());
      CHECK(rel(keys_only, out) > broken);
    });
  }

  TEST_CASE("attention is equivariant to permuting the queries") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd Q = attn::random_normal(n, d, rng),
                     K = attn::random_normal(n + 1, d, rng),
                     V = attn::random_normal(n + 1, d, rng);
      const MatrixXd out = attn::attention(Q, K, V, MatrixXd());
      const MatrixXd out2 =
          attn::attention(attn::permute_rows(Q, perm), K, V, MatrixXd());
      CHECK(rel(out2, attn::permute_rows(out, perm)) <= rounding(n, d));
    });
  }

  TEST_CASE("self-attention is permutation-equivariant: Attn(PX) = P Attn(X)" *
            doctest::test_suite("ex06.6")) {
    for_all(
        [](Index n, Index d, Index heads, attn::Rng& rng, const attn::Permutation& perm) {
          const MatrixXd X = attn::random_normal(n, d, rng);
          const attn::AttentionParams p = ch06::random_attention(d, d, d, false, rng);
          const auto self = [&](const MatrixXd& Y) { return attn::self_attention(Y, p); };
          CHECK(attn::equivariance_residual(self, X, perm) <= rounding(n, d));
          const attn::BlockParams b =
              ch06::random_block(d, heads, 2 * d, rng, attn::NormPlacement::post);
          const auto mha = [&](const MatrixXd& Y) {
            return attn::multi_head_attention(Y, b.attention);
          };
          CHECK(attn::equivariance_residual(mha, X, perm) <= rounding(n, d));
        });
  }

  TEST_CASE("a bias added to every token commutes with permutations") {
    // P (XW + 1 b^T) = (PX) W + 1 b^T because P 1 = 1: the source's worry is unfounded.
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng), W = ch06::weights(d, d, rng);
      const VectorXd b = ch06::vec(d, rng, 1.0);
      MatrixXd Y = X * W, Y2 = attn::permute_rows(X, perm) * W;
      Y.rowwise() += b.transpose();
      Y2.rowwise() += b.transpose();
      CHECK(rel(Y2, attn::permute_rows(Y, perm)) <= rounding(n, d));
    });
  }

  TEST_CASE("the key bias cancels in softmax attention") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
      const MatrixXd X = attn::random_normal(n, d, rng),
                     Z = attn::random_normal(n + 2, d, rng);
      attn::AttentionParams p = ch06::random_attention(d, d, d, false, rng);
      const MatrixXd plain = attn::cross_attention(X, Z, p);
      p.b_K = ch06::vec(d, rng, 1.0);
      const MatrixXd with_bK = attn::cross_attention(X, Z, p);
      // The bias shifts each query's scores by c_i = q_i.b_K / sqrt(d): not a small change...
      const double c = max_abs(X * p.W_Q * p.b_K) / std::sqrt(static_cast<double>(d));
      CHECK(c > 1e-2);
      // ...yet softmax removes it; the shift costs rounding of about eps * |c| per score.
      CHECK(rel(with_bK, plain) <= rounding(n, d) * (1.0 + c));
      // The bias does reach the scores: without softmax the same b_K changes the output.
      attn::AttentionParams p0 = p;
      p0.b_K.resize(0);
      CHECK(rel(attn::cross_attention(X, Z, p, attn::Weighting::identity),
                attn::cross_attention(X, Z, p0, attn::Weighting::identity)) > broken);
    });
  }

  TEST_CASE(
      "the value bias adds b_V to every output row and folds into the output bias") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      attn::AttentionParams p = ch06::random_attention(d, d, d, false, rng);
      const MatrixXd plain = attn::cross_attention(X, X, p);
      p.b_V = ch06::vec(d, rng, 1.0);
      const MatrixXd with_bV = attn::cross_attention(X, X, p);
      MatrixXd expected = plain;
      expected.rowwise() +=
          p.b_V.transpose();  // rows of A sum to 1: A (V + 1 b^T) = AV + 1 b^T
      CHECK(rel(with_bV, expected) <= rounding(n, d));
      // Through an output projection: (AV + 1 b_V^T) W_O + 1 b_O^T
      //                              = AV W_O + 1 (W_O^T b_V + b_O)^T.
      const MatrixXd W_O = ch06::weights(d, d, rng);
      const VectorXd b_O = ch06::vec(d, rng), folded = W_O.transpose() * p.b_V + b_O;
      MatrixXd lhs = with_bV * W_O, rhs = plain * W_O;
      lhs.rowwise() += b_O.transpose();
      rhs.rowwise() += folded.transpose();
      CHECK(rel(lhs, rhs) <= rounding(n, d));
    });
  }

  TEST_CASE(
      "the query bias changes the output: it adds b_Q.k_j / sqrt(d_k) to the scores") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
      const MatrixXd X = attn::random_normal(n, d, rng),
                     Z = attn::random_normal(n + 2, d, rng);
      attn::AttentionParams p = ch06::random_attention(d, d, d, false, rng);
      const MatrixXd plain = attn::cross_attention(X, Z, p);
      p.b_Q = ch06::vec(d, rng, 1.0);
      const MatrixXd with_bQ = attn::cross_attention(X, Z, p);
      CHECK(rel(with_bQ, plain) > broken);
      // The exact change: an extra score b_Q.k_j / sqrt(d) that depends on the key j only,
      // passed to the library as an additive "mask" (a row repeated for every query).
      const MatrixXd K = Z * p.W_K, V = Z * p.W_V;
      const VectorXd key_term = K * p.b_Q / std::sqrt(static_cast<double>(d));
      const MatrixXd extra = VectorXd::Ones(n) * key_term.transpose();
      CHECK(rel(with_bQ, attn::attention(X * p.W_Q, K, V, extra)) <= rounding(n + 2, d));
    });
  }

  TEST_CASE(
      "without softmax the key bias does not cancel and the value bias is scaled by "
      "the row sums") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
      const MatrixXd X = attn::random_normal(n, d, rng),
                     Z = attn::random_normal(n + 2, d, rng);
      const attn::AttentionParams p0 = ch06::random_attention(d, d, d, false, rng);
      const attn::AttentionParams pb = ch06::random_attention(d, d, d, true, rng);
      const auto id = attn::Weighting::identity;
      const MatrixXd Q = X * p0.W_Q, K = Z * p0.W_K, V = Z * p0.W_V;
      const double s = 1.0 / std::sqrt(static_cast<double>(d));
      const MatrixXd S = s * Q * K.transpose();  // the weights, h = id
      const MatrixXd plain = attn::cross_attention(X, Z, p0, id);
      const VectorXd ones = VectorXd::Ones(n);

      attn::AttentionParams p = p0;
      p.b_K = pb.b_K;  // key bias: + (Q b_K / sqrt d)(1^T V), a different shift per query
      const MatrixXd dK = attn::cross_attention(X, Z, p, id) - plain;
      const MatrixXd expect_K = (s * Q * p.b_K) * V.colwise().sum();
      CHECK(max_abs(dK - expect_K) <= rounding(n, d) * std::max(1.0, max_abs(expect_K)));
      CHECK(max_abs(dK) > broken);

      p = p0;
      p.b_V = pb.b_V;  // value bias: + (S 1) b_V^T, row i scaled by its weight sum
      const MatrixXd dV = attn::cross_attention(X, Z, p, id) - plain;
      const MatrixXd expect_V = S.rowwise().sum() * p.b_V.transpose();
      CHECK(max_abs(dV - expect_V) <= rounding(n, d) * std::max(1.0, max_abs(expect_V)));
      CHECK(max_abs(dV - ones * p.b_V.transpose()) > broken);  // not simply + b_V

      p = p0;
      p.b_Q = pb.b_Q;  // query bias: + 1 (b_Q^T K^T V)/sqrt d, the same for every query
      const MatrixXd dQ = attn::cross_attention(X, Z, p, id) - plain;
      const MatrixXd expect_Q = ones * (s * p.b_Q.transpose() * K.transpose() * V);
      CHECK(max_abs(dQ - expect_Q) <= rounding(n, d) * std::max(1.0, max_abs(expect_Q)));
    });
  }

  TEST_CASE("biases do not break the permutation equivariance of self-attention" *
            doctest::test_suite("ex06.6")) {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      const attn::AttentionParams p = ch06::random_attention(d, d, d, true, rng);
      for (const auto h : {attn::Weighting::softmax, attn::Weighting::identity}) {
        const auto f = [&](const MatrixXd& Y) {
          return attn::cross_attention(Y, Y, p, h);
        };
        CHECK(attn::equivariance_residual(f, X, perm) <= rounding(n, d));
      }
    });
  }

  TEST_CASE("LayerNorm gives every token mean 0 and variance s^2/(s^2 + eps0)") {
    attn::Rng rng(5);
    for (const Index d : {2, 5, 64}) {
      const MatrixXd X = attn::random_normal(9, d, rng, 3.0).array() + 2.0;
      const MatrixXd Y = attn::layer_norm(X, VectorXd(), VectorXd(), 1e-5);
      for (Index t = 0; t < X.rows(); ++t) {
        const double mean = X.row(t).mean();
        const double s2 = (X.row(t).array() - mean).square().mean();
        CHECK(std::abs(Y.row(t).mean()) <= 64 * d * eps);
        CHECK(Y.row(t).squaredNorm() / static_cast<double>(d) ==
              doctest::Approx(s2 / (s2 + 1e-5)).epsilon(64 * d * eps));
      }
    }
    CHECK_THROWS_AS(attn::layer_norm(MatrixXd::Ones(2, 3), VectorXd::Ones(2), VectorXd()),
                    std::invalid_argument);
  }

  TEST_CASE("LayerNorm and the FFN act on each token alone so they are equivariant" *
            doctest::test_suite("ex06.6")) {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      const attn::NormParams ln = ch06::random_layer_norm(d, rng);
      const attn::BlockParams b =
          ch06::random_block(d, 1, 3 * d, rng, attn::NormPlacement::post);
      const auto f_ln = [&](const MatrixXd& Y) { return attn::normalise(Y, ln); };
      const auto f_ffn = [&](const MatrixXd& Y) { return attn::feed_forward(Y, b.ffn); };
      CHECK(attn::equivariance_residual(f_ln, X, perm) <= rounding(n, d));
      CHECK(attn::equivariance_residual(f_ffn, X, perm) <= rounding(n, 3 * d));
    });
  }

  TEST_CASE("LayerNorm removes a bias only along the all-ones direction") {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
      const MatrixXd Y = attn::random_normal(n, d, rng);
      const MatrixXd base = attn::layer_norm(Y, VectorXd(), VectorXd());
      const VectorXd ones = VectorXd::Ones(n);
      // b = c 1_d adds the same number to every feature of a token: centring removes it.
      const MatrixXd shifted = Y.array() + 0.7;
      CHECK(rel(attn::layer_norm(shifted, VectorXd(), VectorXd()), base) <=
            rounding(n, d) * 2.0);  // |Y + 0.7| is at most about twice |Y|
      // A general b (a value bias, say) survives.
      const MatrixXd biased = Y + ones * ch06::vec(d, rng, 1.0).transpose();
      CHECK(rel(attn::layer_norm(biased, VectorXd(), VectorXd()), base) > broken);
    });
  }

  TEST_CASE("normalising over the token axis removes a bias added to every token") {
    // What the source says of BatchNorm after a linear layer: the bias is subtracted with
    // the mean over tokens. (Here the mean is over the tokens of one sequence.)
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
      const MatrixXd X = attn::random_normal(n, d, rng), W = ch06::weights(d, d, rng);
      const VectorXd b = ch06::vec(d, rng, 1.0);
      MatrixXd XWb = X * W;
      XWb.rowwise() += b.transpose();
      const MatrixXd base = attn::token_norm(X * W, VectorXd(), VectorXd());
      const MatrixXd with_b = attn::token_norm(XWb, VectorXd(), VectorXd());
      // Rounding of x + b is about eps |b|, divided by a column's standard deviation; for
      // n = 2 that deviation can be small, so the bound uses the actual smallest one.
      const MatrixXd centred = (X * W).rowwise() - (X * W).colwise().mean();
      const double min_sd =
          std::sqrt(centred.colwise().squaredNorm().minCoeff() / static_cast<double>(n));
      CHECK(max_abs(with_b - base) <=
            rounding(n, d) * (1.0 + max_abs(XWb)) / std::min(1.0, min_sd));
    });
  }

  TEST_CASE("a transformer block is permutation-equivariant with post-LN or pre-LN or the "
      "source's placement" * doctest::test_suite("ex06.6")) {
    for_all([](Index n, Index d, Index heads, attn::Rng& rng,
               const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      for (const auto placement : {attn::NormPlacement::post, attn::NormPlacement::pre,
                                   attn::NormPlacement::inner}) {
        const attn::BlockParams b = ch06::random_block(d, heads, 2 * d, rng, placement);
        const auto f = [&](const MatrixXd& Y) { return attn::transformer_block(Y, b); };
        CHECK(attn::equivariance_residual(f, X, perm) <= rounding(n, 2 * d));
      }
    });
  }

  TEST_CASE("sinusoidal positional encoding breaks permutation equivariance" *
            doctest::test_suite("ex06.6")) {
    for_all([](Index n, Index d, Index heads, attn::Rng& rng,
               const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      const MatrixXd E = attn::sinusoidal_encoding(n, d);
      const attn::BlockParams b =
          ch06::random_block(d, heads, 2 * d, rng, attn::NormPlacement::post);
      const auto f = [&](const MatrixXd& Y) { return attn::transformer_block(Y + E, b); };
      CHECK(attn::equivariance_residual(f, X, perm) > broken);
    });
  }

  TEST_CASE("a causal mask breaks permutation equivariance" *
            doctest::test_suite("ex06.6")) {
    for_all(
        [](Index n, Index d, Index heads, attn::Rng& rng, const attn::Permutation& perm) {
          const MatrixXd X = attn::random_normal(n, d, rng);
          const attn::BlockParams b =
              ch06::random_block(d, heads, 2 * d, rng, attn::NormPlacement::pre);
          const auto f = [&](const MatrixXd& Y) {
            return attn::transformer_block(Y, b, attn::Masking::causal);
          };
          CHECK(attn::equivariance_residual(f, X, perm) > broken);
        });
  }

  TEST_CASE("token-axis normalisation is equivariant without per-position parameters and "
      "not with them" * doctest::test_suite("ex06.6")) {
    for_all(
        [](Index n, Index d, Index heads, attn::Rng& rng, const attn::Permutation& perm) {
          const MatrixXd X = attn::random_normal(n, d, rng);
          for (const bool per_position : {false, true}) {
            const attn::NormParams tn = ch06::random_token_norm(n, per_position, rng);
            attn::BlockParams b =
                ch06::random_block(d, heads, 2 * d, rng, attn::NormPlacement::post);
            b.norm1 = tn;
            b.norm2 = ch06::random_token_norm(n, per_position, rng);
            const auto f_norm = [&](const MatrixXd& Y) { return attn::normalise(Y, tn); };
            const auto f_block = [&](const MatrixXd& Y) {
              return attn::transformer_block(Y, b);
            };
            if (per_position) {
              CHECK(attn::equivariance_residual(f_norm, X, perm) > broken);
              CHECK(attn::equivariance_residual(f_block, X, perm) > broken);
            } else {
              CHECK(attn::equivariance_residual(f_norm, X, perm) <= rounding(n, d));
              CHECK(attn::equivariance_residual(f_block, X, perm) <= rounding(n, 2 * d));
            }
          }
        });
  }

  TEST_CASE("mean pooling after a block is permutation-invariant") {
    for_all([](Index n, Index d, Index heads, attn::Rng& rng,
               const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      const attn::BlockParams b =
          ch06::random_block(d, heads, 2 * d, rng, attn::NormPlacement::pre);
      const auto pooled = [&](const MatrixXd& Y) {
        return attn::mean_pool(attn::transformer_block(Y, b));
      };
      const auto block = [&](const MatrixXd& Y) { return attn::transformer_block(Y, b); };
      CHECK(attn::invariance_residual(pooled, X, perm) <= rounding(n, 2 * d));
      // The block alone is equivariant, not invariant: its rows move.
      CHECK(attn::invariance_residual(block, X, perm) > broken);
    });
  }

  TEST_CASE("cross-attention is invariant in its keys and values and equivariant in its "
      "queries" * doctest::test_suite("ex06.6")) {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const Index n_k = n + 4;
      const MatrixXd X = attn::random_normal(n, d, rng),
                     Z = attn::random_normal(n_k, d, rng);
      const attn::AttentionParams p = ch06::random_attention(d, d, d, true, rng);
      const attn::Permutation perm_k = ch06::moving_permutation(n_k, rng);
      const auto of_Z = [&](const MatrixXd& Y) { return attn::cross_attention(X, Y, p); };
      const auto of_X = [&](const MatrixXd& Y) { return attn::cross_attention(Y, Z, p); };
      CHECK(attn::invariance_residual(of_Z, Z, perm_k) <= rounding(n_k, d));
      CHECK(attn::equivariance_residual(of_X, X, perm) <= rounding(n, d));
    });
  }

  TEST_CASE(
      "the sinusoidal encoding follows its formula and gives every position its own "
      "row") {
    for (const Index d : {1, 2, 7, 16}) {
      const Index n = 50;
      const MatrixXd E = attn::sinusoidal_encoding(n, d);
      for (Index t = 0; t < n; ++t) {
        CHECK(E(t, 0) == std::sin(static_cast<double>(t)));
        if (d > 1) CHECK(E(t, 1) == std::cos(static_cast<double>(t)));
        // sin^2 + cos^2 = 1 for each pair of columns (and the lone last column if d is odd).
        if (d % 2 == 0)
          CHECK(E.row(t).squaredNorm() ==
                doctest::Approx(static_cast<double>(d) / 2).epsilon(8 * d * eps));
        if (d > 1)  // (sin t, cos t) alone already differs between integers t < 50
          for (Index u = 0; u < t; ++u) CHECK((E.row(t) - E.row(u)).norm() > 1e-3);
      }
    }
  }
}
