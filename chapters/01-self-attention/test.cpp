// Chapter 01 — every claim of the chapter about dot products, attention, sqrt(d), masks and
// heads, as a test named after the claim (softmax itself: test_softmax.cpp; the tiled form:
// test_tiled.cpp).
//
// Tolerances: softmax and attention are well conditioned in these tests (logits of order
// 1-10, matrices of at most 64 x 64), so exact identities are checked to a small multiple
// of machine epsilon times the size of the numbers involved; each tolerance says why next
// to it. Statistical claims use fixed seeds and bounds of a few standard errors that a
// wrong formula would miss by far.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "experiments/statistics.hpp"
#include "test_helpers.hpp"
#include "ch01.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch01_test;

TEST_SUITE("ch01") {
  TEST_CASE("squared distance equals |a|^2 + |b|^2 - 2 a.b") {
    for (const auto seed : seeds)
      for (const Index d : {1, 2, 10, 300}) {
        attn::Rng rng(seed);
        const VectorXd a = attn::random_normal(d, 1, rng),
                       b = attn::random_normal(d, 1, rng, 10.0);
        const double lhs = (a - b).squaredNorm();
        const double rhs = a.squaredNorm() + b.squaredNorm() - 2 * a.dot(b);
        // Rounding: a few d * eps relative to the size of the terms, |a|^2 + |b|^2.
        CHECK(std::abs(lhs - rhs) <= 4 * d * eps * (a.squaredNorm() + b.squaredNorm()));
      }
  }

  TEST_CASE("the largest dot product with cat is leopard while the nearest word is cat") {
    const MatrixXd E = ch01::word_embeddings();
    const VectorXd cat = E.row(10).transpose();
    Index best_dot = 0, nearest = 0;
    (E * cat).maxCoeff(&best_dot);
    (E.rowwise() - cat.transpose()).rowwise().squaredNorm().minCoeff(&nearest);
    CHECK(ch01::words[std::size_t(best_dot)] == "leopard");  // 7 > deer 6 > cat itself 5
    CHECK(ch01::words[std::size_t(nearest)] == "cat");
  }

  TEST_CASE("dropping the square root changes no ranking by distance") {
    // The square root is increasing, so the squared distance orders candidates exactly as the
    // distance does (the course notes say the root cannot be dropped). Every word of the toy
    // picture against every other, and random candidates in d = 300.
    const auto order = [](const VectorXd& score) {
      std::vector<Index> idx(std::size_t(score.size()));
      for (Index i = 0; i < score.size(); ++i) idx[std::size_t(i)] = i;
      std::stable_sort(idx.begin(), idx.end(),
                       [&](Index a, Index b) { return score(a) < score(b); });
      return idx;
    };
    const MatrixXd E = ch01::word_embeddings();
    attn::Rng rng(3);
    const MatrixXd R = attn::random_normal(50, 300, rng);
    for (const MatrixXd* candidates : {&E, &R})
      for (Index query = 0; query < candidates->rows(); ++query) {
        const VectorXd sq_dist =
            (candidates->rowwise() - candidates->row(query)).rowwise().squaredNorm();
        // Nearest first by squared distance is nearest first by distance too (ties of the
        // rounded roots allowed).
        const std::vector<Index> nearest_first = order(sq_dist);
        CHECK(std::is_sorted(nearest_first.begin(), nearest_first.end(), [&](Index a, Index b) {
          return std::sqrt(sq_dist(a)) < std::sqrt(sq_dist(b));
        }));
      }
  }

  TEST_CASE("a key orthogonal to the query gets a positive weight and more than a key pointing away") {
    // The course notes read a dot product of 0 as "no relation at all". Softmax turns a
    // score of 0 into an ordinary positive weight, larger than the weight of a negative
    // score. The toy sentence without a mask: qi . jin = 0 and qi . hen = -4 (scores 0 and
    // -2 after the scale 1/sqrt(4)).
    const MatrixXd X = ch01::sentence_embeddings();
    const Index jin = 0, qi = 3, hen = 4;
    REQUIRE(X.row(qi).dot(X.row(jin)) == 0.0);
    REQUIRE(X.row(qi).dot(X.row(hen)) == -4.0);
    const MatrixXd A = ch01::toy_attention_weights(X, false);
    CHECK(A(qi, jin) > 0.01);  // e^0 / sum, about 0.013
    // e^2 ~ 7.4 times the weight of hen (the scores differ by 2; rounding only)
    CHECK(A(qi, jin) / A(qi, hen) == doctest::Approx(std::exp(2.0)).epsilon(1e-14));
  }

  TEST_CASE("the source's weight table: its last row sums to 1.2, not 1") {
    const MatrixXd W = ch01::seed_weight_table();
    const VectorXd sums = W.rowwise().sum();
    for (Index t = 0; t < 5; ++t) CHECK(sums(t) == doctest::Approx(1.0).epsilon(1e-14));
    CHECK(sums(5) == doctest::Approx(1.2).epsilon(1e-14));
    // Causal: no weight above the diagonal.
    CHECK(max_abs(W.triangularView<Eigen::StrictlyUpper>().toDenseMatrix()) == 0.0);
  }

  TEST_CASE("the source's weight table counts tokens from 0") {
    // The context of the second "tian" is 0.25 x_0 + 0.25 x_1 + 0.5 x_2 for any
    // embeddings: the table counts tokens from 0 and every sum runs over i = 0..t (from
    // i = 1, as the notes' formula reads, c_2 would lose x_0 and c_0 would be 0).
    const MatrixXd W = ch01::seed_weight_table();
    attn::Rng rng(7);
    const MatrixXd X = attn::random_normal(6, 4, rng);
    const MatrixXd C = ch01::weighted_average(W, X).C;
    CHECK(max_abs(C.row(2) - (0.25 * X.row(0) + 0.25 * X.row(1) + 0.5 * X.row(2))) <=
          8 * eps * max_abs(X));
    CHECK(max_abs(C.row(0) - X.row(0)) == 0.0);  // the first token's context is itself
    // The table gives the two "tian" (tokens 1 and 2, the same character) different weights
    // in rows 2 to 5; attention without positions cannot ("two identical tokens ...").
    for (Index t = 2; t < 6; ++t) CHECK(W(t, 1) != W(t, 2));
  }

  TEST_CASE("attention outputs lie in the convex hull of the value rows") {
    // Checked without looking at the weights: for every direction u, u.o <= max_j u.v_j.
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd Q = attn::random_normal(n, d, rng, 2.0),
                       K = attn::random_normal(n + 3, d, rng, 2.0);
        const MatrixXd V = attn::random_normal(n + 3, 3, rng);
        const MatrixXd O = attn::attention(Q, K, V, MatrixXd());
        const MatrixXd U = attn::random_normal(3, 200, rng);  // 200 random directions
        const MatrixXd OU = O * U, VU = V * U;
        const Eigen::RowVectorXd support = VU.colwise().maxCoeff();
        const double slack =
            1e-12 * max_abs(VU);  // rounding of a weighted average of n + 3 numbers
        CHECK((OU.rowwise() - support).maxCoeff() <= slack);
      }
  }

  TEST_CASE("causal attention ignores future tokens, bit for bit" *
            doctest::test_suite("ex01.6")) {
    for (const auto seed : seeds)
      for (const Index heads : {1, 2, 4}) {
        attn::Rng rng(seed);
        const Index n = 12, d = 8;
        attn::MultiHeadParams p{
            heads, attn::random_normal(d, d, rng), attn::random_normal(d, d, rng),
            attn::random_normal(d, d, rng), attn::random_normal(d, d, rng)};
        MatrixXd X = attn::random_normal(n, d, rng);
        const MatrixXd Y = attn::multi_head_attention(X, p, attn::Masking::causal);
        for (Index t = 0; t + 1 < n; ++t) {
          MatrixXd X2 = X;
          X2.bottomRows(n - t - 1) =
              attn::random_normal(n - t - 1, d, rng, 5.0);  // rewrite the future
          const MatrixXd Y2 = attn::multi_head_attention(X2, p, attn::Masking::causal);
          CHECK((Y2.topRows(t + 1).array() == Y.topRows(t + 1).array())
                    .all());  // exact equality
          CHECK(max_abs(Y2.bottomRows(n - t - 1) - Y.bottomRows(n - t - 1)) > 0.0);
        }
        // Without the mask, the past does see the future.
        MatrixXd X3 = X;
        X3.row(n - 1) *= 2.0;
        CHECK(max_abs(attn::multi_head_attention(X3, p).row(0) -
                      attn::multi_head_attention(X, p).row(0)) > 1e-6);
      }
  }

  TEST_CASE("without a mask a later token changes every earlier output" *
            doctest::test_suite("ex01.6")) {
    // Encoder self-attention: token t reads the tokens after it too. Contrast with the
    // causal mask, under which the same edit leaves every earlier output bit for bit equal.
    for (const auto seed : seeds)
      for (const Index n : {2, 5, 16, 33}) {
        attn::Rng rng(seed);
        const Index d = 8;
        const double init =
            1.0 / std::sqrt(double(d));  // entries of q and k of variance ~1
        const attn::AttentionParams p{attn::random_normal(d, d, rng, init),
                                      attn::random_normal(d, d, rng, init),
                                      attn::random_normal(d, d, rng, init),
                                      {},
                                      {},
                                      {}};
        MatrixXd X = attn::random_normal(n, d, rng);
        CHECK(attn::attention_weights(X * p.W_Q, X * p.W_K, MatrixXd()).minCoeff() > 0.0);
        const MatrixXd Y = attn::self_attention(X, p);
        const MatrixXd Y_causal = attn::self_attention(X, p, attn::Masking::causal);
        X.row(n - 1) = attn::random_normal(1, d, rng, 3.0);  // rewrite the last token
        const MatrixXd Y2 = attn::self_attention(X, p);
        const MatrixXd Y2_causal = attn::self_attention(X, p, attn::Masking::causal);
        CAPTURE(n);
        // Every earlier output moves by about its weight on the last token (~1/n) times the
        // change of that token's value (~1): far above 1e-6.
        for (Index t = 0; t + 1 < n; ++t) CHECK(max_abs(Y2.row(t) - Y.row(t)) > 1e-6);
        CHECK(
            (Y2_causal.topRows(n - 1).array() == Y_causal.topRows(n - 1).array()).all());
      }
    // The chapter's toy sentence, scores x_0.x_j / 2 = 4, 2, 2, 0, 2, 2 for jin: without
    // the mask jin gives (4e^2 + 1) / (e^4 + 4e^2 + 1) ~ 0.359 of its weight to the five
    // tokens after it (the program's and the live figure's computation, ch01.hpp).
    const MatrixXd X = ch01::sentence_embeddings();
    const MatrixXd A = ch01::toy_attention_weights(X, false);
    const double e2 = std::exp(2.0), e4 = std::exp(4.0);
    CHECK(ch01::later_weight(A, 0) ==
          doctest::Approx((4 * e2 + 1) / (e4 + 4 * e2 + 1)).epsilon(1e-14));
    CHECK(ch01::smallest_visible_weight(A, false) > 0.0);
  }

  TEST_CASE("causal weights are the unmasked weights of tokens 0..t, renormalised" *
            doctest::test_suite("ex01.6")) {
    // The mask removes exactly the later tokens, and softmax renormalises what is left.
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd Q = attn::random_normal(n, d, rng),
                       K = attn::random_normal(n, d, rng);
        const MatrixXd A = attn::attention_weights(Q, K, MatrixXd());
        const MatrixXd A_causal = attn::attention_weights(Q, K, attn::causal_mask(n));
        CAPTURE(n);
        CAPTURE(d);
        for (Index t = 0; t < n; ++t) {
          const Eigen::RowVectorXd kept =
              A.row(t).head(t + 1) / A.row(t).head(t + 1).sum();
          // The two forms subtract different row maxima (logits of at most ~10 here), so each
          // weight carries a relative rounding of ~10 eps, and each row sum ~n eps.
          CHECK(max_abs(A_causal.row(t).head(t + 1) - kept) <= (16 + 2 * n) * eps);
          CHECK(max_abs(A_causal.row(t).tail(n - t - 1)) == 0.0);  // exactly 0
        }
      }
  }

  TEST_CASE("sqrt(d) can be absorbed into W_Q, but the same init without it saturates") {
    attn::Rng rng(512);
    const Index n = 64, d = 1024;
    const double init = 1.0 / std::sqrt(double(d));  // q and k entries of variance ~1
    const MatrixXd X = attn::random_normal(n, d, rng);
    const MatrixXd W_Q = attn::random_normal(d, d, rng, init),
                   W_K = attn::random_normal(d, d, rng, init);
    const MatrixXd Q = X * W_Q, K = X * W_K;
    const MatrixXd A = attn::attention_weights(Q, K, MatrixXd());
    // 1. The function class: softmax(Q K^T / sqrt d) is softmax((X W') K^T) with
    //    W' = W_Q / sqrt(d), a layer without the scale. Scores of size ~1 (5 at most),
    //    rounded differently in the two orders (sums of 1024 products): ~1e-13 at most.
    const MatrixXd A_absorbed =
        attn::softmax_rows((X * (W_Q / std::sqrt(double(d)))) * K.transpose());
    CHECK(max_abs(A - A_absorbed) <= 1e-12);
    // 2. The same initialisation without the scale: scores of standard deviation
    //    sqrt(1024) = 32 instead of 1. Over these 64 keys the medians are ~3.7 nats and
    //    ~0.09 with the scale, ~0.007 nats and ~0.002 without it (the top two of 64 scores
    //    are closer than of section 5's 16, so saturation is a little slower): the bounds
    //    below hold with a margin of 5 or more, and fail if the scale is missing.
    const MatrixXd A_raw = attn::softmax_rows(Q * K.transpose());
    VectorXd H(n), H_raw(n), J(n), J_raw(n);
    using Solver = Eigen::SelfAdjointEigenSolver<MatrixXd>;
    const auto norm = [](const VectorXd& p) {
      return Solver(attn::softmax_jacobian(p), Eigen::EigenvaluesOnly)
          .eigenvalues()
          .maxCoeff();
    };
    for (Index t = 0; t < n; ++t) {
      H(t) = attn::entropy(A.row(t).transpose());
      H_raw(t) = attn::entropy(A_raw.row(t).transpose());
      J(t) = norm(A.row(t).transpose());
      J_raw(t) = norm(A_raw.row(t).transpose());
    }
    using experiments::median;
    CAPTURE(median(H));
    CAPTURE(median(H_raw));
    CAPTURE(median(J));
    CAPTURE(median(J_raw));
    CHECK(median(H) > 0.5 * std::log(double(n)));  // the scaled rows spread their weight
    CHECK(median(H_raw) < 0.1 * median(H));        // the unscaled ones are near one-hot
    CHECK(median(J_raw) < 0.1 * median(J));  // and pass a tenth of the gradient or less
  }

  TEST_CASE("two identical tokens receive equal weight from every query, to rounding") {
    // Attention sees only the contents of a token, not where it stands. Mathematically the
    // weights are equal; in floating point a vectorised matrix product may round two identical
    // rows differently when they sit at different positions of its kernel (with FMA and
    // AVX-512 it does), so the check allows 8 eps relative to the largest weight, while a
    // position-dependent formula would differ by O(1).
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const Index n = 7, d = 5;
      MatrixXd X = attn::random_normal(n, d, rng);
      X.row(4) = X.row(2);
      const attn::AttentionParams p{attn::random_normal(d, d, rng),
                                    attn::random_normal(d, d, rng),
                                    attn::random_normal(d, d, rng),
                                    {},
                                    {},
                                    {}};
      const MatrixXd A = attn::attention_weights(X * p.W_Q, X * p.W_K, MatrixXd());
      const double tol = 8 * std::numeric_limits<double>::epsilon() * A.maxCoeff();
      CHECK((A.col(2) - A.col(4)).cwiseAbs().maxCoeff() <= tol);
      CHECK((A.row(2) - A.row(4)).cwiseAbs().maxCoeff() <= tol);  // identical queries too
    }
  }

  TEST_CASE("Var(q.k) = d for q and k with unit-variance entries") {
    // q.k = sum of d products q_i k_i, each with mean 0, variance 1 and fourth moment 9,
    // so Var(q.k) = d and the fourth central moment of q.k is 3d^2 + 6d. The sample
    // variance of S draws has standard error sqrt((3d^2 + 6d - d^2) / S), about 1% of d
    // for S = 20000: a variance of d/2, 2d, sqrt(d) or 1 misses by far more than 4 of
    // them.
    attn::Rng rng(2024);
    const long S = 20000;
    for (const long d : {4, 16, 64, 256}) {
      double sum = 0, sum_sq = 0;
      for (long s = 0; s < S; ++s) {
        const VectorXd q = attn::random_normal(d, 1, rng);
        const VectorXd k = attn::random_normal(d, 1, rng);
        const double x = q.dot(k);
        sum += x;
        sum_sq += x * x;
      }
      const double mean = sum / S;
      const double var = (sum_sq - S * mean * mean) / (S - 1);
      const double se = std::sqrt((2.0 * d * d + 6.0 * d) / S);
      CAPTURE(d);
      CHECK(std::abs(var - d) <= 4 * se);
      CHECK(std::abs(mean) <= 4 * std::sqrt(double(d) / S));  // E[q.k] = 0
    }
  }

  TEST_CASE("Var(q.k) = d needs independent entries of variance 1: other keys give 4d or 2d") {
    // The sqrt(d) argument's assumption, broken twice at d = 64: keys with entries of
    // variance 4 (Var = 4d), and keys equal to the queries, not independent of them
    // (q.q is a chi-square with d degrees of freedom: Var = 2d). The sample variance's
    // standard error is about 1.5% of either value; 10% is generous, and Var = d, the
    // law without the assumption, misses by 75% and 50%.
    attn::Rng rng(2025);
    const long S = 20000, d = 64;
    const auto variance = [&](auto key) {
      double sum = 0, sum_sq = 0;
      for (long s = 0; s < S; ++s) {
        const VectorXd q = attn::random_normal(d, 1, rng);
        const double x = q.dot(key(q));
        sum += x;
        sum_sq += x * x;
      }
      const double mean = sum / S;
      return (sum_sq - S * mean * mean) / (S - 1);
    };
    const double wide =
        variance([&](const VectorXd&) { return VectorXd(2 * attn::random_normal(d, 1, rng)); });
    const double same = variance([](const VectorXd& q) { return q; });
    CHECK(wide == doctest::Approx(4.0 * d).epsilon(0.1));
    CHECK(same == doctest::Approx(2.0 * d).epsilon(0.1));
  }

  TEST_CASE("attention divides the scores by sqrt(d_k)") {
    // The reference is computed here without the library: exp of the scaled scores,
    // normalised per row.
    for (const auto seed : seeds)
      for (const Index dk : {1, 2, 16, 64}) {
        attn::Rng rng(seed);
        const MatrixXd Q = attn::random_normal(5, dk, rng);
        const MatrixXd K = attn::random_normal(7, dk, rng);
        MatrixXd expected = (Q * K.transpose() / std::sqrt(double(dk))).array().exp();
        expected = expected.array().colwise() / expected.rowwise().sum().array();
        CAPTURE(dk);
        // Scores are at most ~5 here; exp turns their rounding into ~1e-15 relative.
        CHECK(max_abs(attn::attention_weights(Q, K, MatrixXd()) - expected) <= 1e-13);
      }
  }

  TEST_CASE("softmax saturates at large d without the sqrt(d) scale but not with it") {
    attn::Rng rng(99);
    const Index d = 512, n = 16;
    const int S = 500;
    double max_w = 0, max_w_scaled = 0;
    for (int s = 0; s < S; ++s) {
      const VectorXd q = attn::random_normal(d, 1, rng);
      const MatrixXd K = attn::random_normal(n, d, rng);
      const VectorXd logits = K * q;
      max_w += attn::softmax(logits).maxCoeff() / S;
      max_w_scaled += attn::softmax(logits / std::sqrt(double(d))).maxCoeff() / S;
    }
    // Unscaled logits have standard deviation sqrt(512) ~ 22.6: the top one usually beats
    // the next by several units and takes almost all the weight (mean ~0.95 here; its
    // standard error over 500 draws is below 0.01). Scaled logits have standard deviation
    // 1: the largest of 16 weights averages ~0.3. Either bound fails if the scale is
    // applied wrongly or not at all.
    CHECK(max_w > 0.9);
    CHECK(max_w_scaled < 0.5);
  }

  TEST_CASE("attention is invariant to a common shift of every logit") {
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd Q = attn::random_normal(n, d, rng),
                       K = attn::random_normal(n, d, rng);
        const MatrixXd V = attn::random_normal(n, d, rng);
        const MatrixXd O = attn::attention(Q, K, V, MatrixXd());
        for (const double c : {-500.0, 3.25, 500.0}) {
          const MatrixXd O_shift = attn::attention(Q, K, V, MatrixXd::Constant(n, n, c));
          // The shift rounds each logit by ulp(500) ~ 1e-13, which moves each weight
          // relatively by as much.
          CHECK(max_abs(O - O_shift) <= 1e-12 * (1 + max_abs(V)));
        }
      }
  }

  TEST_CASE("one-head attention equals single-head attention followed by W_O") {
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        attn::MultiHeadParams p{
            1, attn::random_normal(d, d, rng), attn::random_normal(d, d, rng),
            attn::random_normal(d, d, rng), attn::random_normal(d, d, rng)};
        const MatrixXd X = attn::random_normal(n, d, rng);
        const MatrixXd single =
            attn::self_attention(X, {p.W_Q, p.W_K, p.W_V, {}, {}, {}}) * p.W_O;
        // Same arithmetic in the same order, so agreement is to the last bits.
        CHECK(max_abs(attn::multi_head_attention(X, p) - single) <=
              1e-12 * (1 + max_abs(single)));
      }
  }

  TEST_CASE("multi-head attention gives each head its own value projection") {
    attn::Rng rng(11);
    const Index n = 9, d = 12, h = 3, dh = d / h;
    attn::MultiHeadParams p{
        h, attn::random_normal(d, d, rng), attn::random_normal(d, d, rng),
        attn::random_normal(d, d, rng), attn::random_normal(d, d, rng)};
    const MatrixXd X = attn::random_normal(n, d, rng);
    MatrixXd concat(n, d), concat_v1(n, d);
    for (Index i = 0; i < h; ++i) {
      const MatrixXd Qi = X * p.W_Q.middleCols(i * dh, dh),
                     Ki = X * p.W_K.middleCols(i * dh, dh);
      concat.middleCols(i * dh, dh) =
          attn::attention(Qi, Ki, X * p.W_V.middleCols(i * dh, dh), MatrixXd());
      // The source's formula uses V_1 in every head:
      concat_v1.middleCols(i * dh, dh) =
          attn::attention(Qi, Ki, X * p.W_V.leftCols(dh), MatrixXd());
    }
    const MatrixXd expected = concat * p.W_O;
    CHECK(max_abs(attn::multi_head_attention(X, p) - expected) <=
          1e-12 * (1 + max_abs(expected)));
    // Reusing V_1 is a different function: heads 2..h could never read the values of
    // their own subspace.
    CHECK(max_abs(concat_v1 * p.W_O - expected) > 0.1);
  }

  TEST_CASE("a sum of context vectors keeps the order only through the causal mask") {
    // The notes write the context as getContext(x_t), a function of one token, and sum the
    // contexts, H = sum_t c_t, to keep the order that H = sum_t x_t loses. A function of one
    // token cannot: sum_t f(x_t) is unchanged by any reordering. Nor can self-attention
    // without a mask: it is permutation-equivariant, so its sum is unchanged too. With the
    // causal mask c_t depends on tokens 0..t in their order, and the sum does change.
    const Index n = 6, d = 4;
    attn::Rng rng(31);
    const double init = 1.0 / std::sqrt(double(d));
    const attn::AttentionParams p{attn::random_normal(d, d, rng, init),
                                  attn::random_normal(d, d, rng, init),
                                  attn::random_normal(d, d, rng, init),
                                  {},
                                  {},
                                  {}};
    const MatrixXd X = attn::random_normal(n, d, rng);
    const MatrixXd X_reversed = X.colwise().reverse();  // the same tokens, last one first
    const auto sum_of = [](const MatrixXd& C) { return Eigen::RowVectorXd(C.colwise().sum()); };
    const auto per_token = [&](const MatrixXd& Z) { return MatrixXd(Z * p.W_V); };
    const auto encoder = [&](const MatrixXd& Z) { return attn::self_attention(Z, p); };
    // The causal mask written out here: attn::causal_mask is exercise 01.6, a stub in the
    // student copy, where this test must still run.
    MatrixXd causal = MatrixXd::Zero(n, n);
    for (Index i = 0; i < n; ++i)
      for (Index j = i + 1; j < n; ++j) causal(i, j) = -std::numeric_limits<double>::infinity();
    const auto decoder = [&](const MatrixXd& Z) {
      return attn::attention(Z * p.W_Q, Z * p.W_K, Z * p.W_V, causal);
    };
    // Rounding only: sums of 6 terms of size ~1, in another order.
    CHECK(max_abs(sum_of(per_token(X)) - sum_of(per_token(X_reversed))) <= 1e-13);
    CHECK(max_abs(sum_of(encoder(X)) - sum_of(encoder(X_reversed))) <= 1e-13);
    CHECK(max_abs(sum_of(decoder(X)) - sum_of(decoder(X_reversed))) > 1e-3);
  }

  TEST_CASE("C = Q K V X is not attention; of the products of Q, K and V only Q K^T V is") {
    // Distinct sizes, so that a product is defined only where its inner sizes agree.
    const Index n = 5, d = 3, dk = 4, dv = 2;
    attn::Rng rng(47);
    const MatrixXd X = attn::random_normal(n, d, rng);
    const MatrixXd Q = X * attn::random_normal(d, dk, rng), K = X * attn::random_normal(d, dk, rng);
    const MatrixXd V = X * attn::random_normal(d, dv, rng);
    const auto defined = [](const MatrixXd& A, const MatrixXd& B) { return A.cols() == B.rows(); };
    // Tokens as rows: the notes' Q K is n x dk times n x dk, undefined (unless dk = n).
    CHECK_FALSE(defined(Q, K));
    CHECK_FALSE(defined(Q.transpose() * K, V));  // Q^T K is dk x dk: the next factor fails
    CHECK(defined(Q * K.transpose(), V));        // the scores, n x n, one row per query
    const MatrixXd QKV = Q * K.transpose() * V;  // n x dv: one output row per token
    CHECK_FALSE(defined(QKV, X));                // the notes' trailing X does not fit
    // The defined product, with the scale and a softmax on each row, is the attention.
    const MatrixXd A = attn::softmax_rows(Q * K.transpose() / std::sqrt(double(dk)));
    CHECK(max_abs(A * V - attn::attention(Q, K, V, MatrixXd())) <= 1e-14 * (1 + max_abs(V)));
    // Tokens as columns, the notes' get(X) = W X: Q^T (dk x n) times K (n x dk) is the
    // dk x dk matrix of feature pairs, not the n x n scores of token pairs, and its product
    // with the values V^T (dv x n) is undefined.
    CHECK((Q.transpose() * K).rows() == dk);
    CHECK_FALSE(defined(Q.transpose() * K, V.transpose()));
    // Read with square projections (d_k = d_v = d) instead, Q K V X is defined but is one
    // linear map applied to each token: output t depends on x_t alone, no context. In
    // attention, output t moves when another token changes.
    const attn::AttentionParams p{attn::random_normal(d, d, rng), attn::random_normal(d, d, rng),
                                  attn::random_normal(d, d, rng), {}, {}, {}};
    const auto notes_product = [&](const MatrixXd& Z) {  // (W_Q^T W_K^T W_V^T Z^T)^T
      return MatrixXd(Z * p.W_V * p.W_K * p.W_Q);
    };
    MatrixXd X2 = X;
    X2.row(0) = attn::random_normal(1, d, rng, 3.0);  // change token 0 only
    CHECK(max_abs((notes_product(X2) - notes_product(X)).bottomRows(n - 1)) == 0.0);
    const MatrixXd moved = attn::self_attention(X2, p) - attn::self_attention(X, p);
    for (Index t = 1; t < n; ++t) CHECK(max_abs(moved.row(t)) > 1e-6);
  }

  TEST_CASE("every head reads every token: the heads split the width, not the sequence") {
    // The course notes' diagrams "split the sequence" before Q, K, V and before the heads.
    // Each head projects all n tokens to its own d_h columns: with W_O = I the output is
    // [C_1 ... C_{n_h}], and changing the last token moves the first row of every head's block.
    for (const Index heads : {1, 2, 4}) {
      attn::Rng rng(5);
      const Index n = 8, d = 8, dh = d / heads;
      const double init = 1.0 / std::sqrt(double(d));  // scores of order 1: no saturation
      attn::MultiHeadParams p{heads, attn::random_normal(d, d, rng, init),
                              attn::random_normal(d, d, rng, init),
                              attn::random_normal(d, d, rng, init), MatrixXd::Identity(d, d)};
      MatrixXd X = attn::random_normal(n, d, rng);
      const MatrixXd Y = attn::multi_head_attention(X, p);
      X.row(n - 1) = attn::random_normal(1, d, rng, 3.0);
      const MatrixXd Y2 = attn::multi_head_attention(X, p);
      CAPTURE(heads);
      for (Index i = 0; i < heads; ++i)
        CHECK(max_abs(Y2.block(0, i * dh, 1, dh) - Y.block(0, i * dh, 1, dh)) > 1e-6);
    }
  }

  TEST_CASE("multi-head attention refuses a head count that does not divide d") {
    attn::Rng rng(1);
    attn::MultiHeadParams p{
        3, attn::random_normal(8, 8, rng), attn::random_normal(8, 8, rng),
        attn::random_normal(8, 8, rng), attn::random_normal(8, 8, rng)};
    CHECK_THROWS_WITH_AS(attn::multi_head_attention(attn::random_normal(4, 8, rng), p),
                         doctest::Contains("3 heads do not divide the width d = 8"),
                         std::invalid_argument);
  }
}
