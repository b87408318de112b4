#pragma once
// Internal to the library (not installed, not in the API reference): the argument checks
// the source files share, so that each error message is built the same way, and the one
// way to add a bias to every row.

#include <Eigen/Core>
#include <cmath>
#include <cstdio>
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

// A number for a message, printf-style: number(0.25) is "0.25", number(x, "%.1f").
inline std::string number(double x, const char* format = "%g") {
  char text[64];
  std::snprintf(text, sizeof text, format, x);
  return text;
}

// M + 1 b^T: the row vector b^T added to every row of M; an empty b is no bias. `name`
// names b in the error message ("self_attention b_Q").
inline Eigen::MatrixXd add_to_rows(Eigen::MatrixXd M, const Eigen::VectorXd& b,
                                   const std::string& name) {
  if (b.size() == 0) return M;
  require(b.size() == M.cols(), name + " has size " + std::to_string(b.size()) +
                                    ", expected " + std::to_string(M.cols()));
  M.rowwise() += b.transpose();
  return M;
}

// The exponent e with max|M| = m 2^e, m in [0.5, 1); 0 for a zero or empty M.
inline int largest_exponent(const Eigen::Ref<const Eigen::MatrixXd>& M) {
  int e = 0;
  if (M.size() > 0) std::frexp(M.cwiseAbs().maxCoeff(), &e);
  return e;
}

// M 2^k, exact but for entries that become subnormal (far below eps of the largest). A
// factorisation that squares entries (Householder, X^T X) gets M 2^-largest_exponent(M):
// its squares then neither overflow nor underflow, whatever the scale of M.
template <class Derived>
auto times_power_of_two(const Eigen::MatrixBase<Derived>& M, int k) {
  return M.unaryExpr([k](double x) { return std::ldexp(x, k); }).eval();
}

}  // namespace attn::detail
