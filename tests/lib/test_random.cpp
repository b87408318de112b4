// Library tests: the seeded random helpers are reproducible and have the right moments.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/random.hpp"

TEST_SUITE("lib") {
  TEST_CASE("mt19937_64 is the engine the C++ standard specifies") {
    attn::Rng rng;  // default seed 5489
    rng.discard(9999);
    CHECK(rng() == 9981545732273789042ULL);  // [rand.predef]: the 10000th output
  }

  TEST_CASE("the same seed gives the same matrix bit for bit and another seed does not") {
    attn::Rng a(42), b(42), c(43);
    const Eigen::MatrixXd A = attn::random_normal(20, 7, a),
                          B = attn::random_normal(20, 7, b);
    CHECK((A.array() == B.array()).all());
    CHECK((A.array() != attn::random_normal(20, 7, c).array()).any());
  }

  TEST_CASE("uniform draws lie between lo and hi and have the right mean and variance") {
    attn::Rng rng(1);
    const long N = 200000;
    const Eigen::MatrixXd U = attn::random_uniform(N, 1, rng, -10.0, 10.0);
    CHECK(U.minCoeff() >= -10.0);
    CHECK(U.maxCoeff() < 10.0);
    // Mean 0, variance 400/12; standard errors sqrt(400/12/N) = 0.013 and about 0.07.
    CHECK(std::abs(U.mean()) < 4 * std::sqrt(400.0 / 12 / N));
    const double var = (U.array() - U.mean()).square().sum() / (N - 1);
    // Fourth central moment of U[-10, 10] is 10^4 / 5.
    CHECK(std::abs(var - 400.0 / 12) <
          4 * std::sqrt((10000.0 / 5 - 400.0 * 400 / 144) / N));
  }

  TEST_CASE("normal draws have mean 0, variance sigma^2 and normal tails") {
    attn::Rng rng(2);
    const long N = 200000;
    const Eigen::MatrixXd Z = attn::random_normal(N, 1, rng, 3.0);
    CHECK(std::abs(Z.mean()) < 4 * 3.0 / std::sqrt(double(N)));
    const double var = (Z.array() - Z.mean()).square().sum() / (N - 1);
    CHECK(std::abs(var - 9.0) < 4 * 9.0 * std::sqrt(2.0 / N));
    // P(|Z| > 2 sigma) = 0.0455; a uniform or a wrong Box-Muller would miss it by far.
    const double tail = (Z.array().abs() > 6.0).cast<double>().mean();
    CHECK(std::abs(tail - 0.0455) < 4 * std::sqrt(0.0455 * 0.9545 / N));
  }

}  // TEST_SUITE
