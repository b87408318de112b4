// Library tests: singular values (QR, then the eigenvalues of [0 R; R^T 0]) agree with the
// Jacobi SVD, recover a prescribed spectrum, and give the numerical rank.
//
// Tolerance: both methods are backward stable, so each singular value is within a small
// multiple of eps * sigma_max of the exact one; at these sizes (at most 60) 50 eps * sigma_max
// is ample, and a wrong method (eigenvalues of R^T R, a wrong order, a lost transpose) misses
// it by orders of magnitude.
#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "attn/random.hpp"
#include "attn/svd.hpp"

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double eps = std::numeric_limits<double>::epsilon();

// An n x n orthogonal matrix, from the QR factorisation of a Gaussian one.
MatrixXd random_orthogonal(Eigen::Index n, attn::Rng& rng) {
  return Eigen::HouseholderQR<MatrixXd>(attn::random_normal(n, n, rng)).householderQ();
}

}  // namespace

TEST_SUITE("lib") {
  TEST_CASE("singular values agree with the Jacobi SVD for tall, wide and square matrices") {
    attn::Rng rng(7);
    struct Shape {
      Eigen::Index rows, cols;
    };
    for (const Shape s : std::vector<Shape>{{60, 8}, {8, 60}, {30, 30}, {1, 5}, {5, 1}}) {
      CAPTURE(s.rows);
      CAPTURE(s.cols);
      const MatrixXd M = attn::random_normal(s.rows, s.cols, rng);
      const VectorXd sv = attn::singular_values(M);
      const VectorXd jacobi = attn::thin_svd(M).s;
      REQUIRE(sv.size() == jacobi.size());
      CHECK((sv - jacobi).cwiseAbs().maxCoeff() <= 50 * eps * jacobi(0));
    }
  }

  TEST_CASE("singular values recover a prescribed spectrum, and the numerical rank counts it") {
    attn::Rng rng(11);
    const VectorXd s{{3.0, 1.0, 1e-3, 1e-8, 0.0, 0.0}};
    const MatrixXd U = random_orthogonal(40, rng).leftCols(6);
    const MatrixXd V = random_orthogonal(6, rng);
    const MatrixXd M = U * s.asDiagonal() * V.transpose();  // 40 x 6, rank 4
    const VectorXd sv = attn::singular_values(M);
    CHECK((sv - s).cwiseAbs().maxCoeff() <= 50 * eps * s(0));
    CHECK(attn::numerical_rank(M, 1e-10) == 4);
    CHECK(attn::numerical_rank(M, 1e-6) == 3);
    CHECK(attn::numerical_rank(M.transpose(), 1e-10) == 4);
    CHECK(attn::numerical_rank(MatrixXd::Zero(3, 4)) == 0);
    CHECK(attn::singular_values(MatrixXd(0, 3)).size() == 0);
  }
}
