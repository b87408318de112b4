#pragma once
// Internal to the library: the 0/0 check that kernel_regression.cpp and nw_loo_predictions.cpp
// share (a query or point whose every kernel value is 0).

#include <Eigen/Core>
#include <stdexcept>
#include <string>

#include "attn/kernel_regression.hpp"
#include "common.hpp"

namespace attn::detail {

// "[0.5, 1.25]": point i of P, for a message.
inline std::string point_text(const Eigen::Ref<const Eigen::MatrixXd>& P,
                              Eigen::Index i) {
  std::string text = "[";
  for (Eigen::Index j = 0; j < P.cols(); ++j) {
    if (j > 0) text += ", ";
    text += number(P(i, j), "%.6g");
  }
  return text + "]";
}

// Throws the 0/0 error for the first row of L with no finite logit.
inline void check_rows_have_keys(const char* where, const Eigen::MatrixXd& L,
                                 const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                 Kernel kernel, double h, const char* what) {
  const Eigen::VectorXd m = L.rowwise().maxCoeff();
  for (Eigen::Index i = 0; i < L.rows(); ++i)
    if (m(i) == -inf) {
      const char* other = what[0] == 'q' ? "key" : "other point";
      if (kernel == Kernel::gaussian)  // only when (distance / h)^2 overflows a double
        throw std::domain_error(
            std::string(where) + ": " + what + " " + std::to_string(i) +
            " (x = " + point_text(Q, i) +
            "): every Gaussian kernel value underflows to 0 at h = " + number(h) +
            ", so its estimate would be 0/0; use a larger h");
      throw std::domain_error(std::string(where) + ": " + what + " " + std::to_string(i) +
                              " (x = " + point_text(Q, i) + ") has no " + other +
                              " within the " + kernel_name(kernel) +
                              " kernel's bandwidth h = " + number(h) +
                              ", so its estimate would be 0/0; use a larger h or the "
                              "Gaussian kernel");
    }
}

}  // namespace attn::detail
