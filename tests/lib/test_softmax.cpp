// Library tests: softmax edge cases the chapters rely on.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attn/softmax.hpp"

TEST_SUITE("lib") {
  TEST_CASE("softmax refuses NaN and +inf logits, naming the row") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    Eigen::MatrixXd Z{{0.0, 1.0}, {nan, 0.0}};
    CHECK_THROWS_WITH_AS(attn::softmax_rows(Z), doctest::Contains("row 1"),
                         std::invalid_argument);
    Z(1, 0) = inf;
    CHECK_THROWS_WITH_AS(attn::softmax_rows(Z), doctest::Contains("+inf"),
                         std::invalid_argument);
  }

  TEST_CASE("softmax of one logit is 1 and of an empty row set is empty") {
    CHECK(attn::softmax(Eigen::VectorXd::Constant(1, -3.0))(0) == 1.0);
    CHECK(attn::softmax_rows(Eigen::MatrixXd(0, 4)).rows() == 0);
  }

  TEST_CASE("softmax matches the textbook formula where the textbook formula is safe") {
    const Eigen::VectorXd z{{0.3, -1.2, 2.0, 0.0}};
    const Eigen::VectorXd naive = z.array().exp() / z.array().exp().sum();
    CHECK((attn::softmax(z) - naive).cwiseAbs().maxCoeff() <=
          4 * std::numeric_limits<double>::epsilon());
  }

  TEST_CASE("entropy is log n for uniform weights and 0 for one-hot weights") {
    CHECK(attn::entropy(Eigen::VectorXd::Constant(8, 0.125)) ==
          doctest::Approx(std::log(8.0)).epsilon(1e-15));
    CHECK(attn::entropy(Eigen::VectorXd::Unit(5, 2)) == 0.0);
  }

}  // TEST_SUITE
