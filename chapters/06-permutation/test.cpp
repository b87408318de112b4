// Chapter 06 — every claim of the chapter, as a test named after the claim: attention and
// biases here; LayerNorm, the FFN, a whole block, positions, masks, pooling and
// cross-attention in test_block.cpp. Tolerances: see test_helpers.hpp.

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/transformer_block.hpp"
#include "ch06.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch06_test;

namespace {

// Self-attention with biases and a normalisation h of our choosing: h(S) V with
// S = QK^T / sqrt(d_k) (cross_attention offers only softmax and the identity).
MatrixXd attention_with(const MatrixXd& Y, const attn::AttentionParams& p,
                        const std::function<MatrixXd(const MatrixXd&)>& h) {
  MatrixXd Q = Y * p.W_Q, K = Y * p.W_K, V = Y * p.W_V;
  if (p.b_Q.size() > 0) Q.rowwise() += p.b_Q.transpose();
  if (p.b_K.size() > 0) K.rowwise() += p.b_K.transpose();
  if (p.b_V.size() > 0) V.rowwise() += p.b_V.transpose();
  return h(Q * K.transpose() / std::sqrt(static_cast<double>(p.W_Q.cols()))) * V;
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

  TEST_CASE("Figure 6.1's weights move with their tokens: A(PX) = P A(X) P^T") {
    // The program's and the live figure's computation (ch06.hpp), with and without biases.
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      for (const bool biases : {false, true}) {
        const attn::AttentionParams p = ch06::random_attention(d, d, d, biases, rng);
        const MatrixXd A = ch06::pattern_weights(X, p);
        const MatrixXd A_perm = ch06::pattern_weights(attn::permute_rows(X, perm), p);
        CHECK(rel(A_perm, ch06::permute_both(A, perm)) <= rounding(n, d));
        CHECK(rel(ch06::permute_both(A_perm, attn::inverse(perm)), A) <= rounding(n, d));
      }
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

  TEST_CASE(
      "self-attention is not permutation-invariant: its output rows move with the "
      "tokens") {
    // The source says reordering the tokens leaves the output as it was; it reorders it.
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      const attn::AttentionParams p = ch06::random_attention(d, d, d, true, rng);
      const auto self = [&](const MatrixXd& Y) { return attn::cross_attention(Y, Y, p); };
      CHECK(attn::invariance_residual(self, X, perm) > broken);
      CHECK(rel(self(attn::permute_rows(X, perm)), attn::permute_rows(self(X), perm)) <=
            rounding(n, d));
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
      CHECK(rel(attn::cross_attention(X, Z, p, attn::Normalisation::identity),
                attn::cross_attention(X, Z, p0, attn::Normalisation::identity)) > broken);
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

  TEST_CASE("the scale 1/sqrt(d_k) changes the output but not which biases cancel") {
    // The source drops the scale "because it does not affect the result": it does, only
    // the cancellations survive without it.
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation&) {
      const MatrixXd X = attn::random_normal(n, d, rng),
                     Z = attn::random_normal(n + 2, d, rng);
      const double root_d = std::sqrt(static_cast<double>(d));
      // cross_attention divides the scores by sqrt(d); queries times sqrt(d) undo that.
      const auto unscaled = [&](attn::AttentionParams q) {
        q.W_Q *= root_d;
        q.b_Q *= root_d;
        return attn::cross_attention(X, Z, q);
      };
      attn::AttentionParams p = ch06::random_attention(d, d, d, false, rng);
      const MatrixXd scaled = attn::cross_attention(X, Z, p), plain = unscaled(p);
      CHECK(rel(plain, scaled) > broken);
      // Without the scale the key bias still cancels: rounding grows with the shift q_i.b_K.
      p.b_K = ch06::vec(d, rng, 1.0);
      const double c = max_abs(X * p.W_Q * p.b_K);
      CHECK(rel(unscaled(p), plain) <= rounding(n, d) * (1.0 + c));
      // ...and the query bias still does not.
      p.b_Q = ch06::vec(d, rng, 1.0);
      CHECK(rel(unscaled(p), plain) > broken);
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
      const auto id = attn::Normalisation::identity;
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

  TEST_CASE(
      "an h that commutes with permutations keeps biased attention equivariant, an h "
      "that weighs key positions does not") {
    // Section 2 needs h(P S P^T) = P h(S) P^T, not "any h": the biases add no condition.
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      // Entry by entry, each row over its keys, each column over its queries: all commute.
      const std::vector<std::function<MatrixXd(const MatrixXd&)>> commuting{
          [](const MatrixXd& S) { return MatrixXd(S.array().tanh()); },
          [](const MatrixXd& S) { return attn::softmax_rows(S); },
          [](const MatrixXd& S) {
            return MatrixXd(attn::softmax_rows(S.transpose()).transpose());
          }};
      // Softmax, then a fixed weight per key position j: it treats the columns unalike.
      const VectorXd w = VectorXd::LinSpaced(n, 1.0, 2.0);
      const auto by_position = [&](const MatrixXd& S) {
        return MatrixXd(attn::softmax_rows(S) * w.asDiagonal());
      };
      for (const bool biases : {false, true}) {
        const attn::AttentionParams p = ch06::random_attention(d, d, d, biases, rng);
        const auto change = [&](const std::function<MatrixXd(const MatrixXd&)>& h) {
          return rel(attention_with(attn::permute_rows(X, perm), p, h),
                     attn::permute_rows(attention_with(X, p, h), perm));
        };
        for (const auto& h : commuting) CHECK(change(h) <= rounding(n, d));
        CHECK(change(by_position) > broken);
      }
    });
  }

  TEST_CASE("biases do not break the permutation equivariance of self-attention" *
            doctest::test_suite("ex06.6")) {
    for_all([](Index n, Index d, Index, attn::Rng& rng, const attn::Permutation& perm) {
      const MatrixXd X = attn::random_normal(n, d, rng);
      const attn::AttentionParams p = ch06::random_attention(d, d, d, true, rng);
      for (const auto h : {attn::Normalisation::softmax, attn::Normalisation::identity}) {
        const auto f = [&](const MatrixXd& Y) {
          return attn::cross_attention(Y, Y, p, h);
        };
        CHECK(attn::equivariance_residual(f, X, perm) <= rounding(n, d));
      }
    });
  }
}
