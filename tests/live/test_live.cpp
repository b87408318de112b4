// The live figures' bridge (code/live): parameters from a page, results as JSON, errors as
// messages. The chapters' compute functions are checked against the page by site.live.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "attn/exercise.hpp"
#include "live.hpp"

namespace {

live::Figure echo_sum(const live::Params& p) {
  live::Figure f;
  f.number("sum", p.real("a", -10, 10) + p.integer("b", 0, 5));
  return f;
}
live::Figure stub(const live::Params&) {
  throw attn::exercise_not_done("01.6", "causal_mask", "code/src/causal_mask.cpp");
}
const bool added = live::add("test_echo_sum", echo_sum) && live::add("test_stub", stub);

std::string message_of(const live::Params& p, void (*read)(const live::Params&)) {
  try {
    read(p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a live figure's parameters are read with their ranges, and refused with the range") {
  const live::Params p("d=64&s=0.25&kernel=gaussian&order=2,0,1&neg=-3");
  CHECK(p.integer("d", 1, 1024) == 64);
  CHECK(p.real("s", 0.01, 100) == 0.25);
  CHECK(p.real("neg", -5, 5) == -3);
  CHECK(p.choice("kernel", {"box", "gaussian"}) == "gaussian");
  CHECK(p.integers("order", 0, 2) == std::vector<int>{2, 0, 1});
  CHECK(message_of(p, [](const live::Params& q) { q.integer("d", 1, 32); }) ==
        "d must be an integer in [1, 32] (got '64')");
  CHECK(message_of(p, [](const live::Params& q) { q.integer("s", 0, 1); }) ==
        "s must be an integer in [0, 1] (got '0.25')");
  CHECK(message_of(p, [](const live::Params& q) { q.real("s", 1, 2); }) ==
        "s must be a number in [1, 2] (got '0.25')");
  CHECK(message_of(p, [](const live::Params& q) { q.real("kernel", 0, 1); }) ==
        "kernel must be a number in [0, 1] (got 'gaussian')");
  CHECK(message_of(p, [](const live::Params& q) { q.choice("kernel", {"box", "epanechnikov"}); }) ==
        "kernel must be one of box, epanechnikov (got 'gaussian')");
  CHECK(message_of(p, [](const live::Params& q) { q.integers("order", 0, 1); }) ==
        "order must be a list of integers in [0, 1] (got '2,0,1')");
  CHECK(message_of(p, [](const live::Params& q) { q.real("r", 0, 1); }) ==
        "parameter 'r' is missing");
  CHECK_THROWS_WITH_AS(live::Params("x=1&&y=2"), "malformed parameter '' (expected name=value)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(live::Params("x=1&y"), "malformed parameter 'y' (expected name=value)",
                       std::invalid_argument);
  CHECK(message_of(live::Params("r=nan"), [](const live::Params& q) { q.real("r", 0, 1); }) ==
        "r must be a number in [0, 1] (got 'nan')");
  CHECK(message_of(live::Params("o=1,,2"), [](const live::Params& q) { q.integers("o", 0, 9); }) ==
        "o must be a list of integers in [0, 9] (got '1,,2')");
}

TEST_CASE("a live figure's numbers reach the page exactly, and never as NaN or inf") {
  Eigen::MatrixXd M(2, 2);
  M << 0.1, 1.0 / 3, -2, 1e-300;
  live::Figure f;
  f.number("x", 0.1).vector("v", Eigen::Vector2d(1, -0.5)).matrix("M", M);
  f.labels("tokens", {"a\"b", "c"});
  CHECK(f.json() ==
        "{\"x\":0.10000000000000001,\"v\":[1,-0.5],\"M\":[[0.10000000000000001,"
        "0.33333333333333331],[-2,1e-300]],\"tokens\":[\"a\\\"b\",\"c\"]}");
  // 17 significant digits read back as the same double
  CHECK(std::strtod("0.33333333333333331", nullptr) == 1.0 / 3);
  live::Figure g;
  CHECK_THROWS_WITH_AS(g.number("entropy", std::numeric_limits<double>::quiet_NaN()),
                       "live figure value 'entropy' is not finite", std::domain_error);
  M(1, 1) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(g.matrix("M", M), std::domain_error);
  CHECK(g.json() == "{}");  // nothing half-written
}

TEST_CASE("live::compute returns a figure's JSON, or its error as a message") {
  CHECK(live::compute("test_echo_sum", "a=1.5&b=2") == "{\"sum\":3.5}");
  CHECK(live::compute("test_echo_sum", "a=1.5&b=9") ==
        "{\"error\":\"b must be an integer in [0, 5] (got '9')\"}");
  CHECK(live::compute("no_such_figure", "") == "{\"error\":\"no live figure 'no_such_figure'\"}");
  // a student copy: the figure says which exercise it waits for
  CHECK(live::compute("test_stub", "") ==
        "{\"error\":\"exercise 01.6 is not done yet: write causal_mask in "
        "code/src/causal_mask.cpp\",\"exercise\":\"01.6\"}");
  const auto names = live::names();
  CHECK(std::find(names.begin(), names.end(), "test_echo_sum") != names.end());
}
