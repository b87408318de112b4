// Chapter 01 — Self-attention from scratch.
//
// Computes every quantity the chapter shows: dot products against distances on toy
// embeddings, the source's causal weight table and its context vectors, causal softmax
// attention on a toy sentence, the variance of q·k with and without the 1/sqrt(d) scale,
// softmax saturation, and a multi-head causal self-attention with its checks. Writes
// output.txt (this summary), results.json, and the CSV + SVG of each figure into --out.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/cli.hpp"
#include "attn/output.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "toy.hpp"

namespace {

using attn::say;

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Sections 4 and 5 look at one query against this many keys (the figures' "16 keys").
constexpr Index keys = 16;

struct Options {
  attn::CommonOptions common;
  long n = 16;           // tokens in the random multi-head example
  long d = 8;            // model width of the multi-head example
  long heads = 2;        // number of heads; must divide d
  long samples = 10000;  // Monte Carlo samples of q·k per width d
  long max_d = 1024;     // widest d in the variance sweep (powers of two up to it)
};

// ------------------------------------------------------------------------------------
// 1. Dot product versus distance, on the 2-D toy embeddings of the source's picture.
void dot_versus_distance(std::string& text, attn::Results& results) {
  const MatrixXd E = ch01::word_embeddings();
  const Index cat = 10;
  // [dot-vs-distance]
  const VectorXd q = E.row(cat).transpose();  // the query: cat
  const VectorXd dots = E * q;                // a.q, every word a
  const VectorXd sq_dist = (E.rowwise() - q.transpose()).rowwise().squaredNorm();
  const VectorXd norms_sq = E.rowwise().squaredNorm();  // |a|^2
  const VectorXd identity = norms_sq.array() + q.squaredNorm() - 2 * dots.array();
  // [dot-vs-distance]
  say(text, "1. Dot product vs distance, query = cat (2, -1)\n");
  say(text, "   {:<9} {:>8} {:>8} {:>10}\n", "word", "a.q", "|a-q|^2", "|a|^2");
  for (Index i = 0; i < E.rows(); ++i)
    say(text, "   {:<9} {:>8.0f} {:>8.0f} {:>10.0f}\n", ch01::words[std::size_t(i)],
        dots(i), sq_dist(i), norms_sq(i));
  Index best_dot = 0, best_dist = 0;
  dots.maxCoeff(&best_dot);
  sq_dist.minCoeff(&best_dist);
  const double residual = (identity - sq_dist).cwiseAbs().maxCoeff();
  say(text, "   largest a.q: {}; smallest distance: {}\n",
      ch01::words[std::size_t(best_dot)], ch01::words[std::size_t(best_dist)]);
  say(text, "   max |(|a|^2 + |q|^2 - 2 a.q) - |a-q|^2| = {:.1e}\n\n", residual);
  results["dot_vs_distance_identity_residual"] = residual;
  results["cat_dot_cat"] = dots(cat);
  results["cat_dot_leopard"] = dots(11);
}

// ------------------------------------------------------------------------------------
// 2. Context as a weighted average: the source's hand-written causal weight table.
void weight_table(std::string& text, attn::Results& results) {
  const MatrixXd W = ch01::seed_weight_table();
  const MatrixXd X = ch01::sentence_embeddings();
  // [weighted-average]
  // Row t of C is c_t = sum_i w_ti x_i over i <= t (W is lower triangular).
  const MatrixXd C = W * X;
  const VectorXd row_sums = W.rowwise().sum();
  // [weighted-average]
  say(text, "2. The source's causal weight table W and toy embeddings X (6 x 4)\n");
  for (Index t = 0; t < 6; ++t)
    say(text, "   x_{} = [{:>2.0f}, {:>2.0f}, {:>2.0f}, {:>2.0f}]  {}\n", t, X(t, 0),
        X(t, 1), X(t, 2), X(t, 3), ch01::sentence[std::size_t(t)]);
  say(text, "   row sums of W:");
  for (Index t = 0; t < 6; ++t) say(text, " {:.2f}", row_sums(t));
  say(text,
      "\n   c_2 = 0.25 x_0 + 0.25 x_1 + 0.5 x_2 = [{:.2f}, {:.2f}, {:.2f}, {:.2f}]\n",
      C(2, 0), C(2, 1), C(2, 2), C(2, 3));
  const VectorXd c5 = C.row(5).transpose() / row_sums(5);
  say(text,
      "   the last row sums to {:.2f}, so c_5 is inflated; c_5 / {:.1f} =", row_sums(5),
      row_sums(5));
  say(text, " [{:.4f}, {:.4f}, {:.4f}, {:.4f}]\n\n", c5(0), c5(1), c5(2), c5(3));
  for (Index t = 0; t < 6; ++t)
    results[fmt::format("seed_table_row_sum_{}", t)] = row_sums(t);
  for (Index j = 0; j < 4; ++j) results[fmt::format("context_c2_{}", j)] = C(2, j);
}

// ------------------------------------------------------------------------------------
// 3. Causal softmax attention on the toy sentence (W_Q = W_K = W_V = I): the heatmap
// figure.
void causal_sentence(const std::filesystem::path& out, std::string& text, attn::Results& results) {
  const MatrixXd X = ch01::sentence_embeddings();
  // [causal-toy]
  const MatrixXd A = attn::attention_weights(X, X, attn::causal_mask(X.rows()));
  const MatrixXd C = A * X;  // row t: a weighted average of rows 0..t
  // [causal-toy]
  std::vector<std::vector<attn::CsvCell>> rows;
  for (Index t = 0; t < 6; ++t)
    for (Index i = 0; i < 6; ++i)
      rows.push_back({static_cast<double>(t), static_cast<double>(i), A(t, i),
                      ch01::sentence[std::size_t(t)], ch01::sentence[std::size_t(i)],
                      static_cast<double>(i > t)});
  attn::write_csv(out / "01-causal-weights.csv",
                  {"query", "key", "weight", "query_token", "key_token", "masked"}, rows);
  say(text,
      "3. Causal softmax attention on the toy sentence, A = softmax(X X^T / sqrt(4) + "
      "M)\n");
  say(text, "   {:>6}", "");
  for (const auto& w : ch01::sentence) say(text, " {:>6}", w);
  say(text, "\n");
  for (Index t = 0; t < 6; ++t) {
    say(text, "   {:>6}", ch01::sentence[std::size_t(t)]);
    for (Index i = 0; i < 6; ++i) say(text, " {:>6.3f}", A(t, i));
    say(text, "\n");
  }
  say(text, "   output row of 'hao' (good): [{:.3f}, {:.3f}, {:.3f}, {:.3f}]\n\n",
      C(5, 0), C(5, 1), C(5, 2), C(5, 3));
  results["causal_toy_weight_hao_hao"] = A(5, 5);
  results["causal_toy_max_future_weight"] =
      A.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().maxCoeff();
}

// ------------------------------------------------------------------------------------
// 4. Why divide by sqrt(d): the variance of q·k grows like d; softmax saturates.
void qk_variance(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
                 std::string& text, attn::Results& results) {
  say(text, "4. Var(q.k) for q, k with i.i.d. N(0,1) entries ({} samples per d)\n",
      o.samples);
  say(text, "   {:>6} {:>12} {:>16} {:>12} {:>10}\n", "d", "Var(q.k)", "Var(q.k/sqrt d)",
      "max weight", "(scaled)");
  MatrixXd table(0, 7);
  for (long d = 1; d <= o.max_d; d *= 2) {
    attn::progress(fmt::format("variance of q.k: d = {} of {}", d, o.max_d));
    // [qk-variance]
    double sum = 0, sum_sq = 0;
    for (long s = 0; s < o.samples; ++s) {
      const VectorXd q = attn::random_normal(d, 1, rng),
                     k = attn::random_normal(d, 1, rng);
      const double x = q.dot(k);
      sum += x;
      sum_sq += x * x;
    }
    const double S = static_cast<double>(o.samples);
    const double mean = sum / S;
    const double var = (sum_sq - S * mean * mean) / (S - 1);  // unbiased sample variance
    // [qk-variance]
    // Saturation: the largest of the n softmax weights of one query against n keys.
    const long S_max = std::min(o.samples, 1000L);
    double max_w = 0, max_w_scaled = 0;
    for (long s = 0; s < S_max; ++s) {
      const VectorXd logits =
          attn::random_normal(keys, d, rng) * attn::random_normal(d, 1, rng);
      max_w += attn::softmax(logits).maxCoeff() / static_cast<double>(S_max);
      max_w_scaled +=
          attn::softmax(logits / std::sqrt(static_cast<double>(d))).maxCoeff() /
          static_cast<double>(S_max);
    }
    const double dd = static_cast<double>(d);
    // Standard error of a sample variance: sqrt((mu4 - sigma^4) / S), with mu4 = 3d^2 +
    // 6d here.
    const double se = std::sqrt((2 * dd * dd + 6 * dd) / S);
    table.conservativeResize(table.rows() + 1, Eigen::NoChange);
    table.row(table.rows() - 1) << dd, var, var / dd, se, se / dd, max_w, max_w_scaled;
    say(text, "   {:>6} {:>12.3f} {:>16.4f} {:>12.3f} {:>10.3f}\n", d, var, var / dd,
        max_w, max_w_scaled);
    results[fmt::format("var_qk_d{}", d)] = var;
    results[fmt::format("var_qk_scaled_d{}", d)] = var / dd;
    results[fmt::format("mean_max_weight_d{}", d)] = max_w;
    results[fmt::format("mean_max_weight_scaled_d{}", d)] = max_w_scaled;
  }
  attn::progress("");
  say(text,
      "   (max weight: mean largest softmax weight of a query over {} keys, {} "
      "draws)\n\n",
      keys, std::min(o.samples, 1000L));
  attn::write_csv(
      out / "01-qk-variance.csv",
      {"d", "var", "var_scaled", "se", "se_scaled", "max_weight", "max_weight_scaled"},
      table);
}

// 5. Softmax saturation: entropy and Jacobian norm as the logits are scaled up.
// Quantile of the values in v (linear interpolation between order statistics).
double quantile(VectorXd v, double q) {
  std::sort(v.data(), v.data() + v.size());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<Index>(std::floor(pos));
  const Index hi = std::min<Index>(lo + 1, v.size() - 1);
  return v(lo) + (pos - static_cast<double>(lo)) * (v(hi) - v(lo));
}

void saturation(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
                std::string& text, attn::Results& results) {
  const int draws = o.common.quick ? 50 : 400;
  const int points = 61;
  const MatrixXd Z = attn::random_normal(draws, keys, rng);  // one row of logits per draw
  MatrixXd table(points, 7);
  say(text, "5. Softmax of s*z, z with {} N(0,1) logits: median over {} draws\n", keys,
      draws);
  say(text, "   {:>8} {:>10} {:>10}\n", "s", "entropy", "||J||_2");
  for (int k = 0; k < points; ++k) {
    const double s = std::pow(10.0, -2.0 + 4.5 * k / (points - 1));  // 0.01 .. 10^2.5
    VectorXd H(draws), J(draws);
    for (int r = 0; r < draws; ++r) {
      // [saturation]
      const VectorXd p = attn::softmax(s * Z.row(r).transpose());
      H(r) = attn::entropy(p);
      // J = diag(p) - p p^T is symmetric positive semi-definite:
      // its 2-norm is its largest eigenvalue.
      const MatrixXd Jp = attn::softmax_jacobian(p);
      using Solver = Eigen::SelfAdjointEigenSolver<MatrixXd>;
      J(r) = Solver(Jp, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
      // [saturation]
    }
    table.row(k) << s, quantile(H, 0.5), quantile(H, 0.1), quantile(H, 0.9),
        quantile(J, 0.5), quantile(J, 0.1), quantile(J, 0.9);
    if (k % 10 == 0)
      say(text, "   {:>8.3g} {:>10.4f} {:>10.3e}\n", s, table(k, 1), table(k, 4));
    if (k % 20 == 0) {
      results[fmt::format("median_entropy_at_scale_{:g}", s)] = table(k, 1);
      results[fmt::format("median_jacobian_norm_at_scale_{:g}", s)] = table(k, 4);
    }
  }
  say(text, "   (log {} = {:.4f}, the entropy of uniform weights)\n\n", keys,
      std::log(static_cast<double>(keys)));
  attn::write_csv(out / "01-softmax-saturation.csv",
                  {"scale", "entropy_median", "entropy_p10", "entropy_p90",
                   "jacobian_median", "jacobian_p10", "jacobian_p90"},
                  table);
}

// ------------------------------------------------------------------------------------
// 6. Multi-head causal self-attention on random tokens, with the checks the tests make.
void multi_head(const Options& o, attn::Rng& rng, std::string& text, attn::Results& results) {
  const Index n = o.n, d = o.d;
  const double init = 1.0 / std::sqrt(static_cast<double>(d));  // keeps q.k of order 1
  // [multi-head-use]
  attn::MultiHeadParams p;
  p.heads = o.heads;
  p.W_Q = attn::random_normal(d, d, rng, init);
  p.W_K = attn::random_normal(d, d, rng, init);
  p.W_V = attn::random_normal(d, d, rng, init);
  p.W_O = attn::random_normal(d, d, rng, init);
  MatrixXd X = attn::random_normal(n, d, rng);
  attn::progress("multi-head attention");
  const MatrixXd Y = attn::multi_head_attention(X, p, attn::Masking::causal);
  // [multi-head-use]

  // Changing the last token must leave every earlier output row unchanged, bit for bit.
  X.row(n - 1) = attn::random_normal(1, d, rng);
  attn::progress("multi-head attention, after editing the last token");
  const MatrixXd Y2 = attn::multi_head_attention(X, p, attn::Masking::causal);
  const double earlier_change =
      n > 1 ? (Y2.topRows(n - 1) - Y.topRows(n - 1)).cwiseAbs().maxCoeff() : 0.0;

  // Row sums of every head's weights.
  double rowsum_error = 0;
  const Index dh = d / o.heads;
  for (Index i = 0; i < o.heads; ++i) {
    attn::progress(
        fmt::format("row sums of the weights of head {} of {}", i + 1, o.heads));
    const MatrixXd A =
        attn::attention_weights(X * p.W_Q.middleCols(i * dh, dh),
                                X * p.W_K.middleCols(i * dh, dh), attn::causal_mask(n));
    rowsum_error =
        std::max(rowsum_error, (A.rowwise().sum().array() - 1.0).abs().maxCoeff());
  }
  attn::progress("");
  say(text, "6. Multi-head causal self-attention: n = {}, d = {}, {} heads of width {}\n",
      n, d, o.heads, dh);
  say(text, "   output is {} x {}; max |row sum - 1| of the weights = {:.1e}\n", Y.rows(),
      Y.cols(), rowsum_error);
  say(text,
      "   after changing the last token, max change of the earlier outputs = {:g}\n",
      earlier_change);
  results["mha_max_rowsum_error"] = rowsum_error;
  results["mha_earlier_rows_change_after_future_edit"] = earlier_change;
}

void run(Options& o) {
  if (o.heads > o.d || o.d % o.heads != 0)
    throw attn::usage_error("--heads",
                            fmt::format("must divide --d = {} (got {})", o.d, o.heads));
  const std::filesystem::path out = o.common.out;
  attn::prepare_out_dir(out);

  attn::Rng rng(o.common.seed);
  std::string text;
  attn::Results results;
  results["seed"] = o.common.seed;
  results["n"] = o.n;
  results["d"] = o.d;
  results["heads"] = o.heads;
  results["samples"] = o.samples;
  results["max_d"] = o.max_d;

  dot_versus_distance(text, results);
  weight_table(text, results);
  causal_sentence(out, text, results);
  qk_variance(o, rng, out, text, results);
  saturation(o, rng, out, text, results);
  multi_head(o, rng, text, results);

  for (const char* figure :
       {"01-causal-weights", "01-qk-variance", "01-softmax-saturation"})
    attn::render_figure(out, figure);
  attn::finish_program(out, results, text);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  attn::CommandLine cli{
      "Chapter 01 — Self-attention from scratch: dot products, softmax, sqrt(d), masks, "
      "heads.",
      "ch01"};
  attn::add_common_options(cli, o.common, ATTN_DEFAULT_OUT);
  attn::add_int_option(cli, "--n", o.n, 1, 4096, "tokens in the multi-head example");
  attn::add_int_option(cli, "--d", o.d, 1, 4096, "model width of the multi-head example");
  attn::add_int_option(cli, "--heads", o.heads, 1, 4096,
                       "attention heads; must divide --d");
  attn::add_int_option(cli, "--samples", o.samples, 10, 10'000'000,
                       "Monte Carlo samples of q.k per width d");
  attn::add_int_option(cli, "--max-d", o.max_d, 1, 8192,
                       "largest d of the variance sweep (powers of two)");
  return attn::run_program(cli, argc, argv, [&] {
    if (o.common.quick) {  // --quick shrinks only what the user did not set
      if (!attn::option_given(cli, "--samples")) o.samples = 2000;
      if (!attn::option_given(cli, "--max-d")) o.max_d = 128;
    }
    run(o);
  });
}
