// Tests of the shared summaries (code/experiments, namespace experiments): the median,
// quantiles and the least-squares line the programs and tests report.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "experiments/statistics.hpp"

using V = std::vector<double>;

TEST_SUITE("lib") {
  TEST_CASE("the median is the middle value, or the mean of the two middle values") {
    CHECK(experiments::median(V{3.0, 1.0, 2.0}) == 2.0);
    CHECK(experiments::median(V{4.0, 1.0, 3.0, 2.0}) == 2.5);
    CHECK(experiments::median(Eigen::VectorXd::LinSpaced(4, 1.0, 4.0)) == 2.5);
    CHECK_THROWS_AS(experiments::median(V{}), std::invalid_argument);
  }

  TEST_CASE("quantiles interpolate linearly between the order statistics") {
    const V v{5.0, 1.0, 4.0, 2.0, 3.0};
    CHECK(experiments::quantile(v, 0.0) == 1.0);
    CHECK(experiments::quantile(v, 1.0) == 5.0);
    CHECK(experiments::quantile(v, 0.1) == doctest::Approx(1.4));  // position 0.4
    CHECK(experiments::quantile(v, 0.5) == experiments::median(v));
    CHECK(experiments::quantile(V{1.0, 2.0, 3.0, 4.0}, 0.5) == 2.5);
    CHECK_THROWS_AS(experiments::quantile(v, 1.5), std::invalid_argument);
  }

  TEST_CASE("a line fit: slope, intercept and the residuals' slope error, by hand") {
    // x = 0..3, y = 0, 1, 1, 3: mean x 1.5, Sxx 5, Sxy 4.5, so slope 0.9 and intercept
    // 1.25 - 0.9 * 1.5 = -0.1; residuals 0.1, 0.2, -0.7, 0.4, RSS 0.7:
    // SE = sqrt(0.7 / 2 / 5) = sqrt(0.07).
    const experiments::LineFit f = experiments::fit_line({0, 1, 2, 3}, {0, 1, 1, 3});
    CHECK(f.slope == doctest::Approx(0.9).epsilon(1e-14));
    CHECK(f.intercept == doctest::Approx(-0.1).epsilon(1e-14));
    CHECK(f.slope_se == doctest::Approx(std::sqrt(0.07)).epsilon(1e-14));
    CHECK(std::isnan(experiments::fit_line({0, 1}, {2, 5}).slope_se));  // fits exactly
    CHECK_THROWS_AS(experiments::fit_line({0}, {1}), std::invalid_argument);
  }

  TEST_CASE("a line fit: the slope error from the points' own errors, by hand") {
    // The same line; c_k = (x_k - 1.5) / 5 = -0.3, -0.1, 0.1, 0.3 and se_k = 0.1 .. 0.4:
    // Var(slope) = 0.09 0.01 + 0.01 0.04 + 0.01 0.09 + 0.09 0.16 = 0.0166.
    const experiments::LineFit f =
        experiments::fit_line({0, 1, 2, 3}, {0, 1, 1, 3}, {0.1, 0.2, 0.3, 0.4});
    CHECK(f.slope == doctest::Approx(0.9).epsilon(1e-14));
    CHECK(f.intercept == doctest::Approx(-0.1).epsilon(1e-14));
    CHECK(f.slope_se == doctest::Approx(std::sqrt(0.0166)).epsilon(1e-14));
  }
}
