// Library tests: attention plumbing (masks, biases, shapes).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"

using Eigen::MatrixXd;
using Eigen::VectorXd;

TEST_SUITE("lib") {
  TEST_CASE("the causal mask hides exactly the tokens after each query" *
            doctest::test_suite("ex01.6")) {
    const MatrixXd M = attn::causal_mask(4);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) CHECK((M(i, j) == 0.0) == (j <= i));
    CHECK(std::isinf(M(0, 3)));
    CHECK(M(0, 3) < 0);
  }

  TEST_CASE("attention equals softmax(Q K^T / sqrt(d_k) + M) V computed by hand") {
    attn::Rng rng(3);
    const MatrixXd Q = attn::random_normal(5, 3, rng), K = attn::random_normal(7, 3, rng);
    const MatrixXd V = attn::random_normal(7, 2, rng), M = attn::random_normal(5, 7, rng);
    const MatrixXd logits = Q * K.transpose() / std::sqrt(3.0) + M;
    MatrixXd A = logits.array().exp();
    A = A.array().colwise() / A.rowwise().sum().array();
    CHECK((attn::attention(Q, K, V, M) - A * V).cwiseAbs().maxCoeff() <= 1e-14);
  }

  TEST_CASE("self-attention adds each bias to every row of Q, K and V" *
            doctest::test_suite("ex01.6")) {
    attn::Rng rng(4);
    const MatrixXd X = attn::random_normal(6, 4, rng);
    attn::AttentionParams p{
        attn::random_normal(4, 3, rng), attn::random_normal(4, 3, rng),
        attn::random_normal(4, 5, rng), attn::random_normal(3, 1, rng),
        attn::random_normal(3, 1, rng), attn::random_normal(5, 1, rng)};
    const MatrixXd Q = (X * p.W_Q).rowwise() + p.b_Q.transpose();
    const MatrixXd K = (X * p.W_K).rowwise() + p.b_K.transpose();
    const MatrixXd V = (X * p.W_V).rowwise() + p.b_V.transpose();
    const MatrixXd expected = attn::attention(Q, K, V, attn::causal_mask(6));
    CHECK((attn::self_attention(X, p, attn::Masking::causal) - expected)
              .cwiseAbs()
              .maxCoeff() == 0.0);
  }

  TEST_CASE("attention rejects mismatched shapes with a message naming them") {
    const MatrixXd Q(2, 3), K(4, 2), V(4, 1);
    CHECK_THROWS_WITH_AS(attn::attention(Q, K, V, MatrixXd()),
                         doctest::Contains("Q is 2x3 and K is 4x2"),
                         std::invalid_argument);
    const MatrixXd K3 = MatrixXd::Zero(4, 3), V3 = MatrixXd::Zero(3, 1);
    CHECK_THROWS_WITH_AS(attn::attention(MatrixXd::Zero(2, 3), K3, V3, MatrixXd()),
                         doctest::Contains("V is 3x1"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::attention(MatrixXd::Zero(2, 3), K3, MatrixXd::Zero(4, 1),
                                         MatrixXd::Zero(3, 3)),
                         doctest::Contains("mask is 3x3, expected 2x4"),
                         std::invalid_argument);
    attn::AttentionParams p{MatrixXd::Zero(3, 2),
                            MatrixXd::Zero(3, 2),
                            MatrixXd::Zero(3, 2),
                            VectorXd::Zero(5),
                            {},
                            {}};
    CHECK_THROWS_WITH_AS(attn::self_attention(MatrixXd::Zero(2, 3), p),
                         doctest::Contains("b_Q has size 5, expected 2"),
                         std::invalid_argument);
  }

  TEST_CASE(
      "a causal mask on a query with no visible key is reported, not turned into NaN" *
      doctest::test_suite("ex01.6")) {
    const double inf = std::numeric_limits<double>::infinity();
    MatrixXd M = attn::causal_mask(3);
    M(0, 0) = -inf;  // token 0 may not even see itself
    const MatrixXd X = MatrixXd::Identity(3, 3);
    CHECK_THROWS_WITH_AS(attn::attention(X, X, X, M),
                         doctest::Contains("row 0 is fully masked"),
                         std::invalid_argument);
  }

  TEST_CASE("attention refuses NaN and infinite inputs instead of returning NaN" *
            doctest::test_suite("ex01.6")) {
    const double inf = std::numeric_limits<double>::infinity();
    const MatrixXd X = MatrixXd::Identity(3, 3);
    MatrixXd V = X;
    V(2, 0) = inf;  // a future value row, hidden by the causal mask from rows 0 and 1
    CHECK_THROWS_WITH_AS(attn::attention(X, X, V, attn::causal_mask(3)),
                         doctest::Contains("V has a NaN or infinite entry"),
                         std::invalid_argument);
    MatrixXd Q = X;
    Q(0, 1) = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH_AS(attn::attention(Q, X, X, MatrixXd()),
                         doctest::Contains("Q or K has a NaN"), std::invalid_argument);
  }

}  // TEST_SUITE
