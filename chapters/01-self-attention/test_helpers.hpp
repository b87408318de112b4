#pragma once
// What chapter 01's test files share: tolerances and the shapes and seeds they sweep.
// (eps, Shape, seeds and max_abs come from tests/support/test_support.hpp.)

#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <vector>

#include "test_support.hpp"

namespace ch01_test {

using book_test::eps;
using book_test::max_abs;
using book_test::seeds;
using book_test::Shape;

inline const std::vector<Shape> shapes{{1, 1},  {2, 3},   {5, 4},
                                       {16, 8}, {33, 17}, {64, 64}};

}  // namespace ch01_test
