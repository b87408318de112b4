// Chapter 05 — tests of exercise 05.6 (the exp-limit feature map, attn::exp_limit_features
// in code/src/exp_limit_features.cpp). Run them with `ctest -L ex05.6`.

#include <doctest/doctest.h>

#include <cmath>

#include "attn/feature_maps.hpp"
#include "attn/random.hpp"

using Eigen::Index;
using Eigen::MatrixXd;

TEST_CASE("exp-limit features have (d + 1)^p coordinates and inner products (1 + q.k/p)^p" *
          doctest::test_suite("ex05.6")) {
  attn::Rng rng(651);
  for (const Index d : {1, 2, 4})
    for (const int p : {1, 2, 3}) {
      CAPTURE(d);
      CAPTURE(p);
      const MatrixXd Q = attn::random_normal(5, d, rng, 0.5);
      const MatrixXd K = attn::random_normal(6, d, rng, 0.5);
      const MatrixXd PQ = attn::exp_limit_features(Q, p), PK = attn::exp_limit_features(K, p);
      REQUIRE(PQ.cols() == static_cast<Index>(std::pow(d + 1, p)));
      const MatrixXd G = PQ * PK.transpose();
      for (Index i = 0; i < Q.rows(); ++i)
        for (Index j = 0; j < K.rows(); ++j) {
          const double t = Q.row(i).dot(K.row(j));
          // Sums of (d+1)^p products of size <= ~2: a few hundred eps at most.
          CHECK(G(i, j) == doctest::Approx(std::pow(1.0 + t / p, p)).epsilon(1e-12));
        }
    }
}

TEST_CASE("exp-limit features of power 1 are the rows [1, x]" *
          doctest::test_suite("ex05.6")) {
  attn::Rng rng(652);
  const MatrixXd X = attn::random_normal(4, 3, rng);
  const MatrixXd P = attn::exp_limit_features(X, 1);
  REQUIRE(P.cols() == 4);
  CHECK((P.col(0).array() == 1.0).all());
  CHECK((P.rightCols(3) - X).cwiseAbs().maxCoeff() == 0.0);  // x / sqrt(1): exact
}

// BEGIN HIDDEN TESTS 05.6
TEST_CASE("exp-limit kernels approach exp(q.k) from below as p grows, for q.k > 0" *
          doctest::test_suite("ex05.6")) {
  MatrixXd q(1, 2), k(1, 2);
  q << 0.6, 0.3;
  k << 0.5, 0.8;  // q.k = 0.54
  double previous = 0.0;
  for (const int p : {1, 2, 4, 6}) {
    const double g = (attn::exp_limit_features(q, p) * attn::exp_limit_features(k, p).transpose())(0, 0);
    CHECK(g < std::exp(0.54));
    CHECK(g > previous);  // (1 + t/p)^p increases with p for t > 0
    previous = g;
  }
  // (1 + t/p)^p = e^t (1 - t^2/(2p) + ...): about 0.04 below e^t at p = 6.
  CHECK(std::exp(0.54) - previous < 0.05);
}
// END HIDDEN TESTS
