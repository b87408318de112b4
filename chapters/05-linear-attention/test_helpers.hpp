#pragma once
// What chapter 05's test files share: tolerances and the shapes and seeds they sweep.
// (eps, Shape, seeds and max_abs come from tests/support/test_support.hpp.)

#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <vector>

#include "test_support.hpp"

namespace ch05_test {

using book_test::eps;
using book_test::max_abs;
using book_test::seeds;
using book_test::Shape;

using Eigen::Index;
using Eigen::MatrixXd;

inline const std::vector<Shape> shapes{{1, 1}, {3, 2}, {7, 3}, {12, 5}};

// max_ij |A_ij - B_ij| / S_ij.
inline double max_rel(const MatrixXd& A, const MatrixXd& B, const MatrixXd& S) {
  return ((A - B).array() / S.array()).abs().maxCoeff();
}

}  // namespace ch05_test
