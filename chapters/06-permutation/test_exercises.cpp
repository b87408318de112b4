// Chapter 06 — tests of exercise 06.6 (the equivariance check, attn::equivariance_residual in
// code/src/equivariance_residual.cpp). Run them with `ctest -L ex06.6`.

#include <doctest/doctest.h>

#include <cstddef>
#include <utility>

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

TEST_CASE("the equivariance residual is the largest change over the largest entry of f(X), "
          "whatever the number of tokens" * doctest::test_suite("ex06.6")) {
  // f(X) = X + E with X = 1/2 everywhere and E = 1 in row 0: swapping tokens 0 and 1 changes
  // two rows by 1, and max |f(X)| = 1.5. The largest entry gives 1 / 1.5 for 4 tokens and for
  // 400 alike; a summing norm depends on how many tokens did not move (the Frobenius ratio
  // differs at both sizes, the sum of absolute entries at 400). Every number here is exact.
  for (const Index n : {4, 400}) {
    CAPTURE(n);
    const MatrixXd X = MatrixXd::Constant(n, 3, 0.5);
    MatrixXd E = MatrixXd::Zero(n, 3);
    E.row(0).setOnes();
    const attn::TokenMap f = [&E](const MatrixXd& Z) -> MatrixXd { return Z + E; };
    attn::Permutation swap01(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) swap01[static_cast<std::size_t>(i)] = i;
    std::swap(swap01[0], swap01[1]);
    CHECK(attn::equivariance_residual(f, X, swap01) == 1.0 / 1.5);
  }
}

TEST_CASE("a map with f(X) = 0 has a residual that is a number: 0, or the change itself" *
          doctest::test_suite("ex06.6")) {
  attn::Rng rng(664);
  const MatrixXd X = attn::random_normal(5, 2, rng);
  const attn::Permutation perm = {2, 0, 1, 4, 3};
  // f = 0: nothing to divide by and nothing changed; the residual is 0, not 0/0.
  const attn::TokenMap zero = [](const MatrixXd& Z) -> MatrixXd {
    return MatrixXd::Zero(Z.rows(), Z.cols());
  };
  CHECK(attn::equivariance_residual(zero, X, perm) == 0.0);
  // f(Z) = Z - X: f(X) = 0 but f(PX) = PX - X is not; the residual is that change (divided
  // by 1), not 0.
  const attn::TokenMap minus_X = [&X](const MatrixXd& Z) -> MatrixXd { return Z - X; };
  const double change = (attn::permute_rows(X, perm) - X).cwiseAbs().maxCoeff();
  REQUIRE(change > 0.0);
  CHECK(attn::equivariance_residual(minus_X, X, perm) == change);
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
