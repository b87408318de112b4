#pragma once
// What chapter 01's test files share: tolerances and the shapes and seeds they sweep.

#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <vector>

namespace ch01_test {

inline constexpr double eps = std::numeric_limits<double>::epsilon();

struct Shape {
  Eigen::Index n, d;
};
inline const std::vector<Shape> shapes{{1, 1},  {2, 3},   {5, 4},
                                       {16, 8}, {33, 17}, {64, 64}};
inline const std::vector<std::uint64_t> seeds{1, 2, 3};

// The largest |entry|; 0 for an empty matrix (the tests with no queries).
inline double max_abs(const Eigen::MatrixXd& M) {
  return M.size() == 0 ? 0.0 : M.cwiseAbs().maxCoeff();
}

}  // namespace ch01_test
