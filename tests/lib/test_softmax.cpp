// Library tests: softmax edge cases the chapters rely on.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

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
  TEST_CASE("fast_exp is within 1 ulp of std::exp on [-708, 0]") {
    // The range a stable softmax uses: every exponent is a score minus its row maximum,
    // clamped at -708. The distance is counted in representable doubles (units in the last
    // place of std::exp's result): 0 where the two agree, 1 where they are neighbours. The
    // rounding of the 13-term polynomial makes 6-10% of these values a neighbour (fewer with
    // fused multiply-adds), never further. Dropping the last Taylor term (r^13 / 13!) already
    // gives 2 ulp, which this bound catches and a 2-ulp bound would not; a wrong reduction
    // constant is off by 1e9 ulp. The vectorised loop the fast attention forms call
    // (fast_exp_shifted) is held to the same bound.
    const auto ulps = [](double a, double b) {  // both positive and finite
      const auto ia = std::bit_cast<std::int64_t>(a), ib = std::bit_cast<std::int64_t>(b);
      return ia > ib ? ia - ib : ib - ia;
    };
    std::vector<double> v;
    const int steps = 1 << 20;
    for (int i = 0; i <= steps; ++i) v.push_back(-708.0 * i / steps);  // an even grid
    attn::Rng rng(9);
    const Eigen::MatrixXd u = attn::random_uniform(1 << 16, 1, rng, -2.0, 0.0);
    for (const double x : u.reshaped()) v.push_back(x);  // where softmax weights are not tiny
    for (const double x : {0.0, -708.0, -0.5 * std::log(2.0), -1e-300, -std::log(2.0)})
      v.push_back(x);
    Eigen::VectorXd shifted = Eigen::Map<const Eigen::VectorXd>(v.data(), Eigen::Index(v.size()));
    attn::fast_exp_shifted(shifted, 0.0);
    std::int64_t worst = 0, worst_shifted = 0, neighbours = 0;
    for (std::size_t j = 0; j < v.size(); ++j) {
      const double want = std::exp(v[j]);
      const std::int64_t d = ulps(attn::fast_exp(v[j]), want);
      worst = std::max(worst, d);
      neighbours += d == 1;
      worst_shifted = std::max(worst_shifted, ulps(shifted(Eigen::Index(j)), want));
    }
    CAPTURE(neighbours);
    CHECK(worst <= 1);
    CHECK(worst_shifted <= 1);
    CHECK(neighbours > 0);  // the bound is reached: 0 ulp would be a different claim
    CHECK(attn::fast_exp(0.0) == 1.0);
  }

  TEST_CASE("fast_exp_shifted gives e^{x - m}, exactly 0 below e^-708 and for -inf") {
    constexpr double inf = std::numeric_limits<double>::infinity();
    Eigen::VectorXd x(5);
    x << 3.0, 1.0, -inf, 3.0 - 709.0, 3.0 - 700.0;
    attn::fast_exp_shifted(x, 3.0);
    CHECK(x(0) == 1.0);  // the maximum: e^0
    const double ulp = std::numeric_limits<double>::epsilon();
    CHECK(std::abs(x(1) / std::exp(-2.0) - 1) <= ulp);  // 1 ulp, as above
    CHECK(x(2) == 0.0);                                     // a masked score
    CHECK(x(3) == 0.0);                                     // below e^-708
    CHECK(std::abs(x(4) / std::exp(-700.0) - 1) <= ulp);
  }
}
