#pragma once
// What chapter 05's test files share: tolerances and the shapes and seeds they sweep.

#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <vector>

namespace ch05_test {

using Eigen::Index;
using Eigen::MatrixXd;

inline constexpr double eps = std::numeric_limits<double>::epsilon();

inline double max_abs(const MatrixXd& M) {
  return M.cwiseAbs().maxCoeff();
}

struct Shape {
  Index n, d;
};
inline const std::vector<Shape> shapes{{1, 1}, {3, 2}, {7, 3}, {12, 5}};
inline const std::vector<std::uint64_t> seeds{1, 2, 3};

// max_ij |A_ij - B_ij| / S_ij.
inline double max_rel(const MatrixXd& A, const MatrixXd& B, const MatrixXd& S) {
  return ((A - B).array() / S.array()).abs().maxCoeff();
}

}  // namespace ch05_test
