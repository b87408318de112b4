// Chapter 03, the trainer on several threads: the softmax system's blocks of 64 queries are
// shared by threads (loss_and_gradient(), train(), run_experiment()), and the numbers must
// not depend on how many. Each block is computed whole by one thread and the calling thread
// sums the blocks' shares in block order, so the claim is exact: every comparison here is
// `==` on every entry, no tolerance. The sizes are the smallest at which
// evaluation_threads() really starts the threads (checked first, so no test passes by
// running on one thread only).

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/random.hpp"
#include "experiments/regression_experiment.hpp"

using attn::AttentionRegressor;
using attn::Normalisation;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

struct Shape {
  Index n, d;
};
// Several blocks each, the last one short (n not a multiple of 64): 8 to 13 blocks.
const std::vector<Shape> shapes{{450, 20}, {520, 9}, {800, 3}, {520, 40}};
const std::vector<Normalisation> both{Normalisation::identity, Normalisation::softmax};

struct Case {
  MatrixXd X;
  VectorXd Y;
  AttentionRegressor p;
};

// The source's data and the book's initial parameters (softmax neither uniform nor
// saturated), so every entry of the gradient is a sum of many unequal terms.
Case source_case(Shape s, std::uint64_t seed, Normalisation h) {
  attn::Rng rng(seed);
  const attn::RegressionData data = attn::regression_data(s.n, s.d, rng);
  Case c{data.X, data.Y, attn::random_regressor(s.d, rng)};
  c.p.w_v = attn::initial_value_weight(c.p, c.X, c.Y, h);
  return c;
}

bool same(const MatrixXd& a, const MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

bool same(const AttentionRegressor& a, const AttentionRegressor& b) {
  return same(a.W_Q, b.W_Q) && same(a.W_K, b.W_K) && a.w_v == b.w_v;
}

}  // namespace

TEST_CASE("an evaluation starts threads only when each gets enough work, one per block") {
  // The test sizes below do run on several threads.
  for (const Shape s : shapes) CHECK(attn::evaluation_threads(s.n, s.d, 2) == 2);
  CHECK(attn::evaluation_threads(800, 3, 3) == 3);
  CHECK(attn::evaluation_threads(520, 40, 3) == 3);
  // The source's smallest size is too small to share, and so is (320, 10), where a second
  // thread made an evaluation slower; (1000, 10) is work for 8 threads (16 blocks).
  CHECK(attn::evaluation_threads(100, 10, 2) == 1);
  CHECK(attn::evaluation_threads(320, 10, 2) == 1);
  CHECK(attn::evaluation_threads(1000, 10, 64) == 8);
  CHECK(attn::evaluation_threads(1000, 100, 2) == 2);
  CHECK(attn::evaluation_threads(1, 1, 8) == 1);
  CHECK_THROWS_AS(attn::evaluation_threads(100, 10, 0), std::invalid_argument);
}

TEST_CASE("the loss and its gradient are bit-identical on 1, 2 and 3 threads") {
  for (const Shape s : shapes)
    for (const Normalisation h : both)
      for (const std::uint64_t seed : {1, 2}) {
        CAPTURE(s.n);
        CAPTURE(s.d);
        CAPTURE(attn::to_string(h));
        CAPTURE(seed);
        const Case c = source_case(s, seed, h);
        AttentionRegressor g1;
        const double L1 = attn::loss_and_gradient(c.p, c.X, c.Y, h, &g1, 1);
        REQUIRE(std::isfinite(L1));
        REQUIRE(g1.W_Q.cwiseAbs().maxCoeff() > 0);  // a gradient worth comparing
        for (const int threads : {2, 3}) {
          CAPTURE(threads);
          AttentionRegressor g;
          CHECK(attn::loss_and_gradient(c.p, c.X, c.Y, h, &g, threads) == L1);
          CHECK(same(g, g1));
          CHECK(attn::loss_and_gradient(c.p, c.X, c.Y, h, nullptr, threads) == L1);
        }
      }
}

TEST_CASE("a short training run ends at the same parameters bit for bit on 1 and 2 threads") {
  for (const Normalisation h : both) {
    CAPTURE(attn::to_string(h));
    const Case c = source_case({520, 10}, 7, h);
    const attn::TrainingResult one =
        attn::train(c.X, c.Y, h, c.p, 6, attn::experiment_adam, 1);
    const attn::TrainingResult two =
        attn::train(c.X, c.Y, h, c.p, 6, attn::experiment_adam, 2);
    CHECK(one.loss.back() < one.loss.front());  // it did train
    CHECK(one.loss == two.loss);
    CHECK(same(one.parameters, two.parameters));
  }
}

TEST_CASE("run_experiment gives one run's threads to its evaluations, with the same results") {
  // One run on two threads (both inside the run), and three runs on four (one run gets two).
  for (const int runs : {1, 3}) {
    CAPTURE(runs);
    experiments::ExperimentConfig config;
    config.n = 520;
    config.d = 10;
    config.h = Normalisation::softmax;
    config.runs = runs;
    config.iterations = 4;
    config.seed = 11;
    config.threads = 1;
    const std::vector<experiments::RunResult> one = experiments::run_experiment(config);
    config.threads = runs + 1;
    const std::vector<experiments::RunResult> more = experiments::run_experiment(config);
    REQUIRE(more.size() == one.size());
    for (std::size_t r = 0; r < one.size(); ++r) {
      CHECK(one[r].loss == more[r].loss);
      CHECK(one[r].test_loss == more[r].test_loss);
      CHECK(same(one[r].parameters, more[r].parameters));
    }
  }
}

TEST_CASE("a diverged softmax evaluation is NaN on every thread count, and train() says so") {
  // Projections of 1e160 make the scores overflow to infinity: every row's softmax is
  // undefined, and the loss must come out NaN (not a finite number from the rows that a
  // thread happened to skip).
  Case c = source_case({520, 9}, 3, Normalisation::softmax);
  c.p.W_Q *= 1e160;
  c.p.W_K *= 1e160;
  for (const int threads : {1, 2, 3}) {
    CAPTURE(threads);
    AttentionRegressor g;
    CHECK(std::isnan(
        attn::loss_and_gradient(c.p, c.X, c.Y, Normalisation::softmax, &g, threads)));
    CHECK_THROWS_AS(attn::train(c.X, c.Y, Normalisation::softmax, c.p, 3,
                                attn::experiment_adam, threads),
                    std::runtime_error);
  }
}
