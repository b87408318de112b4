#pragma once
// What every chapter's tests share: machine epsilon (tolerances are written as multiples of
// it), the (n, d) shape of a sweep, the seeds every sweep repeats with, and the largest
// |entry| of a matrix. Each chapter's test_helpers.hpp adds its own shapes and tolerances.

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <vector>

namespace book_test {

inline constexpr double eps = std::numeric_limits<double>::epsilon();

// n rows (samples, tokens), d columns (features).
struct Shape {
  Eigen::Index n, d;
};

inline const std::vector<std::uint64_t> seeds{1, 2, 3};

// The largest |entry|; 0 for an empty matrix (the tests with no queries).
inline double max_abs(const Eigen::MatrixXd& M) {
  return M.size() == 0 ? 0.0 : M.cwiseAbs().maxCoeff();
}

}  // namespace book_test
