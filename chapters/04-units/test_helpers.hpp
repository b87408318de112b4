#pragma once
// What chapter 04's test files share: the shapes, seeds and unit factors they sweep, and the
// tolerance every comparison of c X against X uses.
// (eps, Shape and seeds come from tests/support/test_support.hpp.)

#include <Eigen/Dense>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "test_support.hpp"

#include "attn/least_squares.hpp"
#include "attn/svd.hpp"

namespace ch04_test {

using book_test::eps;
using book_test::seeds;
using book_test::Shape;

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

inline const std::vector<Shape> shapes{{5, 1}, {20, 3}, {100, 10}, {300, 40}};
inline const std::vector<double> factors{1e-6, 1e-3, 0.37, 2.0, 1e3, 1e6};

// Tolerance for a quantity computed from c X against the same from X: rounding of c X is
// amplified by at most kappa^2 (a few hundred eps for the arithmetic of the solve).
inline double tolerance(const MatrixXd& X) {
  const double k = attn::condition_number(X);
  return 300 * eps * k * k;
}

// sigma_max / (smallest gap between consecutive singular values of X), at least 1.
inline double gap_factor(const MatrixXd& X) {
  const VectorXd sv = attn::singular_values(X);
  double gap = sv(0);
  for (Index i = 1; i < sv.size(); ++i) gap = std::min(gap, sv(i - 1) - sv(i));
  return std::max(1.0, sv(0) / gap);
}

}  // namespace ch04_test
