#pragma once
// Internal to the library (not installed, not in the API reference): the argument checks
// the source files share, so that each error message is built the same way.

#include <Eigen/Core>
#include <limits>
#include <stdexcept>
#include <string>

namespace attn::detail {

constexpr double inf = std::numeric_limits<double>::infinity();

// Throws std::invalid_argument(message) unless ok.
inline void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

// "rows x cols", as in "X is 3x4".
inline std::string shape(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

inline std::string shape(const Eigen::Ref<const Eigen::MatrixXd>& M) {
  return shape(M.rows(), M.cols());
}

}  // namespace attn::detail
