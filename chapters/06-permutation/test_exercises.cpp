// Chapter 06 — tests of exercise 06.6 (the equivariance check, attn::equivariance_residual in
// code/src/equivariance_residual.cpp). Run them with `ctest -L ex06.6`.

#include <doctest/doctest.h>

#include "attn/random.hpp"
#include "attn/transformer_block.hpp"

using Eigen::Index;
using Eigen::MatrixXd;

TEST_CASE("an entry-wise map has equivariance residual exactly 0" *
          doctest::test_suite("ex06.6")) {
  attn::Rng rng(661);
  // x / (1 + |x|): an absolute value, an addition and a division, each correctly rounded by
  // IEEE 754 whatever code path (vector or scalar) computes it, and no multiply followed by an
  // add that a compiler could fuse into one FMA in one path and not in another.
  const attn::TokenMap f = [](const MatrixXd& X) -> MatrixXd {
    return (X.array() / (X.array().abs() + 1.0)).matrix();
  };
  for (const Index n : {2, 5, 9}) {
    const MatrixXd X = attn::random_normal(n, 4, rng);
    // Each output entry is computed from its own input entry by the same operations (no
    // sums whose order could depend on the row's position, as in a blocked X W): exact on
    // every machine.
    CHECK(attn::equivariance_residual(f, X, attn::random_permutation(n, rng)) == 0.0);
  }
}

TEST_CASE("adding a position-dependent row makes the equivariance residual of order 1" *
          doctest::test_suite("ex06.6")) {
  attn::Rng rng(662);
  const Index n = 6;
  const MatrixXd E = attn::random_normal(n, 3, rng);
  const attn::TokenMap f = [&](const MatrixXd& X) -> MatrixXd { return X + E; };
  const MatrixXd X = attn::random_normal(n, 3, rng);
  const attn::Permutation swap01 = {1, 0, 2, 3, 4, 5};
  // f(PX) - P f(X) = E - P E: rows 0 and 1 differ by E_0 - E_1, relative to |f(X)| ~ 1-3.
  CHECK(attn::equivariance_residual(f, X, swap01) > 0.05);
}

// BEGIN HIDDEN TESTS 06.6
TEST_CASE("the equivariance residual is relative to the size of the output" *
          doctest::test_suite("ex06.6")) {
  attn::Rng rng(663);
  const MatrixXd E = attn::random_normal(5, 2, rng);
  const MatrixXd X = attn::random_normal(5, 2, rng);
  const attn::Permutation perm = {4, 3, 2, 1, 0};
  const auto shifted = [&](double c) {
    return attn::TokenMap([&E, c](const MatrixXd& Z) -> MatrixXd { return c * (Z + E); });
  };
  // Scaling f by a power of 2 scales f(PX) - Pf(X) and max|f(X)| alike, exactly.
  CHECK(attn::equivariance_residual(shifted(1024.0), X, perm) ==
        attn::equivariance_residual(shifted(1.0), X, perm));
  CHECK(attn::equivariance_residual(shifted(1.0), X, attn::Permutation{0, 1, 2, 3, 4}) == 0.0);
}
// END HIDDEN TESTS
