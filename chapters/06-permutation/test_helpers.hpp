#pragma once
// What chapter 06's test files share: the sizes, seeds and permutations every symmetry test
// runs over, and its two tolerances. (eps, seeds and max_abs come from
// tests/support/test_support.hpp.)
//
// Tolerances. A permutation changes no number in these computations, only the order in
// which sums over tokens are accumulated (softmax denominators, weighted averages, means
// over the token axis). Reordering a sum of m terms of order 1 moves it by at most about
// m * eps relative, so an exact symmetry is checked at rounding(n, d) = 256 (n + d) eps
// relative to the size of the output: 256 leaves room for the handful of layers in a block
// and for LayerNorm's division by a standard deviation of order 1 (the inputs are random
// with unit-order variance). A claim that something BREAKS a symmetry is checked at a
// relative change of more than `broken` = 1e-3, billions of ulps above rounding.

#include <Eigen/Dense>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "attn/random.hpp"
#include "ch06.hpp"
#include "test_support.hpp"

namespace ch06_test {

using book_test::eps;
using book_test::max_abs;
using book_test::seeds;

using Eigen::Index;
using Eigen::MatrixXd;

inline constexpr double broken = 1e-3;

inline double rounding(Index n, Index d) {
  return 256.0 * static_cast<double>(n + d) * eps;
}

struct Case {
  Index n, d, heads;
};
// Sizes from the smallest that has a permutation (n = 2) up to a few dozen tokens.
inline const std::vector<Case> cases{{2, 4, 1}, {3, 4, 2}, {7, 8, 2}, {16, 12, 3}, {33, 16, 4}};
inline constexpr int perms_per_case = 3;

// |A - B| relative to the size of B (or to 1 if B is tiny).
inline double rel(const MatrixXd& A, const MatrixXd& B) {
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

}  // namespace ch06_test
