// Chapter 01 — tests of exercise 01.6 (the causal mask, attn::causal_mask in
// code/src/causal_mask.cpp). Run them with `ctest -L ex01.6`.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attn/attention.hpp"
#include "attn/random.hpp"

using Eigen::Index;
using Eigen::MatrixXd;

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("the causal mask is 0 on and below the diagonal and -inf above it" *
          doctest::test_suite("ex01.6")) {
  for (Index n = 1; n <= 7; ++n) {
    const MatrixXd M = attn::causal_mask(n);
    REQUIRE(M.rows() == n);
    REQUIRE(M.cols() == n);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j) CHECK(M(i, j) == (j > i ? -inf : 0.0));  // exact
  }
}

TEST_CASE("with the causal mask, token t gives weight exactly 0 to every later token" *
          doctest::test_suite("ex01.6")) {
  attn::Rng rng(601);
  for (const Index n : {1, 2, 5, 12}) {
    const MatrixXd Q = attn::random_normal(n, 4, rng), K = attn::random_normal(n, 4, rng);
    const MatrixXd A = attn::attention_weights(Q, K, attn::causal_mask(n));
    for (Index i = 0; i < n; ++i) {
      for (Index j = i + 1; j < n; ++j) CHECK(A(i, j) == 0.0);  // e^{-inf} is exactly 0
      // Row sums: n terms of size <= 1, each rounded once: a few eps.
      CHECK(std::abs(A.row(i).sum() - 1.0) < 1e-14);
    }
  }
}

// BEGIN HIDDEN TESTS 01.6
TEST_CASE("the causal mask of 0 tokens is empty, and of one token is a single 0" *
          doctest::test_suite("ex01.6")) {
  CHECK(attn::causal_mask(0).size() == 0);
  const MatrixXd M1 = attn::causal_mask(1);
  REQUIRE(M1.size() == 1);
  CHECK(M1(0, 0) == 0.0);
}

TEST_CASE("causal attention makes the first output row the first value row" *
          doctest::test_suite("ex01.6")) {
  attn::Rng rng(602);
  const Index n = 9;
  const MatrixXd Q = attn::random_normal(n, 3, rng), K = attn::random_normal(n, 3, rng),
                 V = attn::random_normal(n, 5, rng);
  const MatrixXd O = attn::attention(Q, K, V, attn::causal_mask(n));
  CHECK((O.row(0) - V.row(0)).cwiseAbs().maxCoeff() == 0.0);  // weight 1 on itself, exact
}
// END HIDDEN TESTS
