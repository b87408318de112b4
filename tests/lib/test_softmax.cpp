// Library tests: softmax edge cases the chapters rely on.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/fast_exp.hpp"
#include "attn/random.hpp"
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

TEST_SUITE("lib") {
  TEST_CASE("fast_exp agrees with std::exp to 2 ulp on [-708, 0]") {
    // The range a stable softmax uses: every exponent is a score minus its row maximum,
    // clamped at -708. Measured worst case about 1 ulp (2.3e-16 relative), from the
    // rounding of the 13-term polynomial; 2 ulp (4.4e-16) leaves a margin. A wrong
    // reduction constant or a missing Taylor term is off by 1e-10 or more.
    const double ulp = std::numeric_limits<double>::epsilon();
    double worst = 0.0;
    const auto check = [&](double v) {
      const double want = std::exp(v);
      worst = std::max(worst, std::abs(attn::fast_exp(v) - want) / want);
    };
    const int steps = 1 << 20;
    for (int i = 0; i <= steps; ++i) check(-708.0 * i / steps);  // an even grid
    attn::Rng rng(9);
    const Eigen::MatrixXd u = attn::random_uniform(1 << 16, 1, rng, -2.0, 0.0);
    for (const double v : u.reshaped()) check(v);  // where softmax weights are not tiny
    for (const double v : {0.0, -708.0, -0.5 * std::log(2.0), -1e-300, -std::log(2.0)})
      check(v);
    CHECK(worst <= 2 * ulp);
    CHECK(attn::fast_exp(0.0) == 1.0);
  }

  TEST_CASE("fast_exp_shifted gives e^{x - m}, exactly 0 below e^-708 and for -inf") {
    constexpr double inf = std::numeric_limits<double>::infinity();
    Eigen::VectorXd x(5);
    x << 3.0, 1.0, -inf, 3.0 - 709.0, 3.0 - 700.0;
    attn::fast_exp_shifted(x, 3.0);
    CHECK(x(0) == 1.0);  // the maximum: e^0
    const double ulp = std::numeric_limits<double>::epsilon();
    CHECK(std::abs(x(1) / std::exp(-2.0) - 1) <= 2 * ulp);  // 2 ulp, as above
    CHECK(x(2) == 0.0);                                     // a masked score
    CHECK(x(3) == 0.0);                                     // below e^-708
    CHECK(std::abs(x(4) / std::exp(-700.0) - 1) <= 2 * ulp);
  }
}
