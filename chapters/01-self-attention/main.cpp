// Chapter 01 — Self-attention from scratch.
//
// Computes every quantity the chapter shows: dot products against distances on toy
// embeddings, the source's causal weight table and its context vectors, softmax attention
// on a toy sentence without a mask and with the causal one, the variance of q·k and the
// saturation of softmax with and without the 1/sqrt(d) scale, the entropy and Jacobian of
// softmax as the logits grow, and a multi-head causal self-attention with its checks. Writes
// output.txt (this summary), results.json, and the CSV + SVG of each figure into --out.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "harness/cli.hpp"
#include "harness/output.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "toy.hpp"

namespace {

using harness::say;

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Sections 4 and 5 look at one query against this many keys (the figures' "16 keys").
constexpr Index keys = 16;

struct Options {
  harness::CommonOptions common;
  long n = 16;           // tokens in the random multi-head example
  long d = 8;            // model width of the multi-head example
  long heads = 2;        // number of heads; must divide d
  long samples = 10000;  // Monte Carlo samples of q·k per width d
  long max_d = 1024;     // widest d in the variance sweep (powers of two up to it)
};

// ------------------------------------------------------------------------------------
// 1. Dot product versus distance, on the 2-D toy embeddings of the source's picture.
void dot_versus_distance(std::string& text, harness::Results& results) {
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
  results["cat_dot_deer"] = dots(12);
  results["cat_distance_cat"] = std::sqrt(sq_dist(cat));
}

// ------------------------------------------------------------------------------------
// 2. Context as a weighted average: the source's hand-written causal weight table.
void weight_table(std::string& text, harness::Results& results) {
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
  results["seed_table_last_row_excess_percent"] = 100 * (row_sums(5) - 1.0);  // 20
  for (Index j = 0; j < 4; ++j) results[fmt::format("context_c2_{}", j)] = C(2, j);
}

// ------------------------------------------------------------------------------------
// 3. Softmax attention on the toy sentence (W_Q = W_K = W_V = I), without a mask (an
// encoder) and with the causal mask (a decoder): the heatmap figure.
void print_weights(std::string& text, const MatrixXd& A) {
  say(text, "   {:>6}", "");
  for (const auto& w : ch01::sentence) say(text, " {:>6}", w);
  say(text, "\n");
  for (Index t = 0; t < A.rows(); ++t) {
    say(text, "   {:>6}", ch01::sentence[std::size_t(t)]);
    for (Index i = 0; i < A.cols(); ++i) say(text, " {:>6.3f}", A(t, i));
    say(text, "\n");
  }
}

void causal_sentence(const std::filesystem::path& out, std::string& text,
                     harness::Results& results) {
  const MatrixXd X = ch01::sentence_embeddings();
  const Index n = X.rows();
  // [causal-toy]
  const MatrixXd A_all = attn::attention_weights(X, X, MatrixXd());  // no mask: encoder
  const MatrixXd A = attn::attention_weights(X, X, attn::causal_mask(n));  // decoder
  const MatrixXd C = A * X;  // row t: a weighted average of rows 0..t
  // [causal-toy]
  // Change the last token ("hao", good, becomes a copy of "jin", today) and see which
  // outputs move: without the mask every earlier output does; with it none does.
  MatrixXd X2 = X;
  X2.row(n - 1) = X.row(0);
  const MatrixXd C_all = A_all * X;
  const MatrixXd C2_all = attn::attention_weights(X2, X2, MatrixXd()) * X2;
  const MatrixXd C2 = attn::attention_weights(X2, X2, attn::causal_mask(n)) * X2;
  const double past_change_all = (C2_all - C_all).topRows(n - 1).cwiseAbs().maxCoeff();
  const double past_change_causal = (C2 - C).topRows(n - 1).cwiseAbs().maxCoeff();
  // The causal row t is the unmasked row t cut to tokens 0..t and renormalised.
  double renormalised_residual = 0;
  for (Index t = 0; t < n; ++t) {
    const Eigen::RowVectorXd head = A_all.row(t).head(t + 1);
    renormalised_residual =
        std::max(renormalised_residual,
                 (A.row(t).head(t + 1) - head / head.sum()).cwiseAbs().maxCoeff());
  }
  const double future_weight_jin = A_all.row(0).tail(n - 1).sum();

  std::vector<std::vector<harness::CsvCell>> rows;
  for (Index t = 0; t < n; ++t)
    for (Index i = 0; i < n; ++i)
      rows.push_back({static_cast<double>(t), static_cast<double>(i), A(t, i),
                      ch01::sentence[std::size_t(t)], ch01::sentence[std::size_t(i)],
                      static_cast<double>(i > t), A_all(t, i)});
  harness::write_csv(
      out / "01-causal-weights.csv",
      {"query", "key", "weight", "query_token", "key_token", "masked", "weight_unmasked"},
      rows);
  say(text,
      "3. Softmax attention on the toy sentence, A = softmax(X X^T / sqrt(4) + M)\n");
  say(text, "   no mask (M = 0, an encoder): every token reads the whole sentence\n");
  print_weights(text, A_all);
  say(text, "   causal mask (a decoder): token t reads tokens 0..t\n");
  print_weights(text, A);
  say(text,
      "   jin's weight on the {} tokens after it: {:.3f} without the mask, {:g} with "
      "it\n",
      n - 1, future_weight_jin, A.row(0).tail(n - 1).sum());
  say(text,
      "   hao replaced by jin: outputs 0..{} move by up to {:.3f} without the mask, {:g} "
      "with it\n",
      n - 2, past_change_all, past_change_causal);
  say(text, "   causal output row of 'hao' (good): [{:.3f}, {:.3f}, {:.3f}, {:.3f}]\n\n",
      C(5, 0), C(5, 1), C(5, 2), C(5, 3));
  results["causal_toy_weight_hao_hao"] = A(5, 5);
  results["causal_toy_weight_tian_tian"] = A(2, 2);  // = A(2, 1): the two tian are equal
  results["causal_toy_max_future_weight"] =
      A.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().maxCoeff();
  results["causal_toy_past_change_after_edit"] = past_change_causal;
  results["causal_vs_renormalised_unmasked_residual"] = renormalised_residual;
  results["unmasked_toy_min_weight"] = A_all.minCoeff();
  results["unmasked_toy_weight_jin_jin"] = A_all(0, 0);
  results["unmasked_toy_future_weight_jin"] = future_weight_jin;
  results["unmasked_toy_past_change_after_edit"] = past_change_all;
}

// Quantile of the values in v (linear interpolation between order statistics).
double quantile(VectorXd v, double q) {
  std::sort(v.data(), v.data() + v.size());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<Index>(std::floor(pos));
  const Index hi = std::min<Index>(lo + 1, v.size() - 1);
  return v(lo) + (pos - static_cast<double>(lo)) * (v(hi) - v(lo));
}

// The 2-norm of the softmax Jacobian diag(p) - p p^T: its largest eigenvalue (it is
// symmetric positive semi-definite).
double jacobian_norm(const VectorXd& p) {
  using Solver = Eigen::SelfAdjointEigenSolver<MatrixXd>;
  return Solver(attn::softmax_jacobian(p), Eigen::EigenvaluesOnly)
      .eigenvalues()
      .maxCoeff();
}

// ------------------------------------------------------------------------------------
// 4. Why divide by sqrt(d): the variance of q·k grows like d; softmax saturates.
void qk_variance(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
                 std::string& text, harness::Results& results) {
  say(text, "4. Var(q.k) for q, k with i.i.d. N(0,1) entries ({} samples per d)\n",
      o.samples);
  say(text, "   {:>6} {:>12} {:>16} {:>12} {:>10}\n", "d", "Var(q.k)", "Var(q.k/sqrt d)",
      "max weight", "(scaled)");
  MatrixXd table(0, 7);
  std::vector<std::string> summary;
  for (long d = 1; d <= o.max_d; d *= 2) {
    harness::progress(fmt::format("variance of q.k: d = {} of {}", d, o.max_d));
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
    // The same draws give the median entropy and Jacobian norm, unscaled and scaled: what
    // the 1/sqrt(d) does to a layer at the same initialisation.
    const long S_max = std::min(o.samples, 1000L);
    const double S_w = static_cast<double>(S_max);
    double max_w = 0, max_w_scaled = 0;
    VectorXd H(S_max), H_scaled(S_max), J(S_max), J_scaled(S_max);
    for (long s = 0; s < S_max; ++s) {
      const VectorXd logits =
          attn::random_normal(keys, d, rng) * attn::random_normal(d, 1, rng);
      const VectorXd p = attn::softmax(logits);
      const VectorXd p_scaled = attn::softmax(logits / std::sqrt(static_cast<double>(d)));
      max_w += p.maxCoeff() / S_w;
      max_w_scaled += p_scaled.maxCoeff() / S_w;
      H(s) = attn::entropy(p);
      H_scaled(s) = attn::entropy(p_scaled);
      J(s) = jacobian_norm(p);
      J_scaled(s) = jacobian_norm(p_scaled);
    }
    const double H_med = quantile(H, 0.5), H_scaled_med = quantile(H_scaled, 0.5),
                 J_med = quantile(J, 0.5), J_scaled_med = quantile(J_scaled, 0.5);
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
    results[fmt::format("median_entropy_d{}", d)] = H_med;
    results[fmt::format("median_entropy_scaled_d{}", d)] = H_scaled_med;
    results[fmt::format("median_jacobian_norm_d{}", d)] = J_med;
    results[fmt::format("median_jacobian_norm_scaled_d{}", d)] = J_scaled_med;
    if (d == 8 || d == 64 || 2 * d > o.max_d)  // 64: the paper's head width
      summary.push_back(fmt::format("   {:>6} {:>#9.3g} {:>#9.3g} {:>#11.3g} {:>#9.3g}\n",
                                    d, H_med, H_scaled_med, J_med, J_scaled_med));
  }
  harness::progress("");
  say(text,
      "   (max weight: mean largest softmax weight of a query over {} keys, {} "
      "draws)\n",
      keys, std::min(o.samples, 1000L));
  say(text,
      "   the same draws, medians (log {} = {:.3f} is the entropy of uniform weights):\n",
      keys, std::log(static_cast<double>(keys)));
  say(text, "   {:>6} {:>9} {:>9} {:>11} {:>9}\n", "d", "entropy", "(scaled)", "||J||_2",
      "(scaled)");
  for (const auto& line : summary) say(text, "{}", line);
  say(text, "\n");
  results["mean_max_weight_scaled_min"] = table.col(6).minCoeff();
  results["mean_max_weight_scaled_max"] = table.col(6).maxCoeff();
  harness::write_csv(
      out / "01-qk-variance.csv",
      {"d", "var", "var_scaled", "se", "se_scaled", "max_weight", "max_weight_scaled"},
      table);
}

// 5. Softmax saturation: entropy and Jacobian norm as the logits are scaled up.
void saturation(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
                std::string& text, harness::Results& results) {
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
  const double log_n = std::log(static_cast<double>(keys));
  say(text, "   (log {} = {:.4f}, the entropy of uniform weights)\n", keys, log_n);
  // Where the median entropy falls below 99% and below 1% of log n, and where the median
  // Jacobian norm peaks (grid points of the sweep).
  Index start = points - 1, end = points - 1, peak = 0;
  for (Index k = points - 1; k >= 0; --k) {
    if (table(k, 1) < 0.99 * log_n) start = k;
    if (table(k, 1) < 0.01 * log_n) end = k;
  }
  table.col(4).maxCoeff(&peak);
  say(text,
      "   median entropy below 99% of log {} from s = {:.3g}, below 1% from s = {:.3g}\n",
      keys, table(start, 0), table(end, 0));
  say(text, "   median ||J||_2 largest at s = {:.3g}: {:.3f}\n\n", table(peak, 0),
      table(peak, 4));
  results["keys"] = static_cast<double>(keys);
  results["log_keys"] = log_n;
  results["saturation_draws"] = draws;
  results["entropy_drop_start_scale"] = table(start, 0);
  results["entropy_drop_end_scale"] = table(end, 0);
  results["jacobian_peak_scale"] = table(peak, 0);
  results["jacobian_peak_median"] = table(peak, 4);
  harness::write_csv(out / "01-softmax-saturation.csv",
                  {"scale", "entropy_median", "entropy_p10", "entropy_p90",
                   "jacobian_median", "jacobian_p10", "jacobian_p90"},
                  table);
}

// ------------------------------------------------------------------------------------
// 6. Multi-head causal self-attention on random tokens, with the checks the tests make.
void multi_head(const Options& o, attn::Rng& rng, std::string& text,
                harness::Results& results) {
  const Index n = o.n, d = o.d;
  const double init = 1.0 / std::sqrt(static_cast<double>(d));  // keeps q.k of order 1
  attn::MultiHeadParams p;
  p.heads = o.heads;
  p.W_Q = attn::random_normal(d, d, rng, init);
  p.W_K = attn::random_normal(d, d, rng, init);
  p.W_V = attn::random_normal(d, d, rng, init);
  p.W_O = attn::random_normal(d, d, rng, init);
  MatrixXd X = attn::random_normal(n, d, rng);
  harness::progress("multi-head attention");
  const MatrixXd Y = attn::multi_head_attention(X, p, attn::Masking::causal);

  // Changing the last token must leave every earlier output row unchanged, bit for bit.
  X.row(n - 1) = attn::random_normal(1, d, rng);
  harness::progress("multi-head attention, after editing the last token");
  const MatrixXd Y2 = attn::multi_head_attention(X, p, attn::Masking::causal);
  const double earlier_change =
      n > 1 ? (Y2.topRows(n - 1) - Y.topRows(n - 1)).cwiseAbs().maxCoeff() : 0.0;

  // Row sums of every head's weights.
  double rowsum_error = 0;
  const Index dh = d / o.heads;
  for (Index i = 0; i < o.heads; ++i) {
    harness::progress(
        fmt::format("row sums of the weights of head {} of {}", i + 1, o.heads));
    const MatrixXd A =
        attn::attention_weights(X * p.W_Q.middleCols(i * dh, dh),
                                X * p.W_K.middleCols(i * dh, dh), attn::causal_mask(n));
    rowsum_error =
        std::max(rowsum_error, (A.rowwise().sum().array() - 1.0).abs().maxCoeff());
  }
  harness::progress("");
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
    throw harness::usage_error("--heads",
                            fmt::format("must divide --d = {} (got {})", o.d, o.heads));
  const std::filesystem::path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  std::string text;
  harness::Results results;
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
    harness::render_figure(out, figure);
  harness::finish_program(out, results, text);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{
      "Chapter 01 — Self-attention from scratch: dot products, softmax, sqrt(d), masks, "
      "heads.",
      "ch01"};
  harness::add_common_options(cli, o.common, ATTN_DEFAULT_OUT);
  harness::add_int_option(cli, "--n", o.n, 1, 4096, "tokens in the multi-head example");
  harness::add_int_option(cli, "--d", o.d, 1, 4096, "model width of the multi-head example");
  harness::add_int_option(cli, "--heads", o.heads, 1, 4096,
                       "attention heads; must divide --d");
  harness::add_int_option(cli, "--samples", o.samples, 10, 10'000'000,
                       "Monte Carlo samples of q.k per width d");
  harness::add_int_option(cli, "--max-d", o.max_d, 1, 8192,
                       "largest d of the variance sweep (powers of two)");
  return harness::run_program(cli, argc, argv, [&] {
    if (o.common.quick) {  // --quick shrinks only what the user did not set
      if (!harness::option_given(cli, "--samples")) o.samples = 2000;
      if (!harness::option_given(cli, "--max-d")) o.max_d = 128;
    }
    run(o);
  });
}
