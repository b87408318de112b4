// Chapter 01 — Self-attention from scratch. Computes every quantity the chapter shows, in
// the chapter's order (the output's sections carry its section numbers): dot products and
// distances, the source's causal weight table, the variance of q·k and the saturation of
// softmax with and without 1/sqrt(d), a toy sentence with and without the causal mask, and
// multi-head causal self-attention with its checks. Writes output.txt (this summary),
// results.json, and the CSV + SVG of each figure into --out. The chapter's module (ch01.hpp,
// which the live figures call too) computes sections 1, 2, 6 and 7; section 5's Monte Carlo
// sweeps, summarised by quantiles, are still computed here.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "ch01.hpp"
#include "experiments/statistics.hpp"
#include "harness/cli.hpp"
#include "harness/output.hpp"

namespace {

using ch01::jacobian_norm;
using ch01::keys;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using experiments::quantile;  // linear interpolation between order statistics
using std::filesystem::path;

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
void dot_versus_distance(harness::Report& r) {
  const MatrixXd E = ch01::word_embeddings();
  const Index cat = 10;
  const ch01::DotsAndDistances dd = ch01::dots_and_distances(E, cat);
  const VectorXd &dots = dd.dots, &sq_dist = dd.sq_dist, &norms_sq = dd.norms_sq;
  r.say("1. Dot product vs distance, query = cat (2, -1)\n");
  r.say("   {:<9} {:>8} {:>8} {:>10}\n", "word", "a.q", "|a-q|^2", "|a|^2");
  for (Index i = 0; i < E.rows(); ++i)
    r.say("   {:<9} {:>8.0f} {:>8.0f} {:>10.0f}\n", ch01::words[std::size_t(i)], dots(i),
          sq_dist(i), norms_sq(i));
  Index best_dot = 0, best_dist = 0;
  dots.maxCoeff(&best_dot);
  sq_dist.minCoeff(&best_dist);
  r.say("   largest a.q: {}; smallest distance: {}\n", ch01::words[std::size_t(best_dot)],
        ch01::words[std::size_t(best_dist)]);
  r.say("   max |(|a|^2 + |q|^2 - 2 a.q) - |a-q|^2| = {:.1e}\n\n",
        r.put("dot_vs_distance_identity_residual", dd.identity_residual));
  r.put("cat_dot_cat", dots(cat));
  r.put("cat_dot_leopard", dots(11));
  r.put("cat_dot_deer", dots(12));
  r.put("cat_distance_cat", std::sqrt(sq_dist(cat)));
}

// ------------------------------------------------------------------------------------
// 2. Context as a weighted average: the source's hand-written causal weight table.
void weight_table(harness::Report& r) {
  const MatrixXd W = ch01::seed_weight_table();
  const MatrixXd X = ch01::sentence_embeddings();
  const ch01::Context context = ch01::weighted_average(W, X);
  const MatrixXd& C = context.C;
  const VectorXd& row_sums = context.row_sums;
  r.say("2. The source's causal weight table W and toy embeddings X (6 x 4)\n");
  for (Index t = 0; t < 6; ++t)
    r.say("   x_{} = [{:>2.0f}, {:>2.0f}, {:>2.0f}, {:>2.0f}]  {}\n", t, X(t, 0), X(t, 1),
          X(t, 2), X(t, 3), ch01::sentence[std::size_t(t)]);
  r.say("   row sums of W:");
  for (Index t = 0; t < 6; ++t)
    r.say(" {:.2f}", r.put(fmt::format("seed_table_row_sum_{}", t), row_sums(t)));
  r.say("\n   c_2 = 0.25 x_0 + 0.25 x_1 + 0.5 x_2 = [{:.2f}, {:.2f}, {:.2f}, {:.2f}]\n",
        C(2, 0), C(2, 1), C(2, 2), C(2, 3));
  const VectorXd c5 = C.row(5).transpose() / row_sums(5);
  r.say("   the last row sums to {:.2f}, so c_5 is inflated; c_5 / {:.1f} =", row_sums(5),
        row_sums(5));
  r.say(" [{:.4f}, {:.4f}, {:.4f}, {:.4f}]\n\n", c5(0), c5(1), c5(2), c5(3));
  r.put("seed_table_last_row_excess_percent", 100 * (row_sums(5) - 1.0));  // 20
  for (Index j = 0; j < 4; ++j) r.put(fmt::format("context_c2_{}", j), C(2, j));
}

// ------------------------------------------------------------------------------------
// 5. Why divide by sqrt(d): the variance of q·k grows like d, and softmax saturates.

void qk_variance(const Options& o, attn::Rng& rng, const path& out, harness::Report& r) {
  r.say("5. Var(q.k) for q, k with i.i.d. N(0,1) entries ({} samples per d)\n",
        o.samples);
  r.say("   {:>6} {:>12} {:>16} {:>12} {:>10}\n", "d", "Var(q.k)", "Var(q.k/sqrt d)",
        "max weight", "(scaled)");
  const long draws = std::min(o.samples, 1000L);  // of one query against `keys` keys
  MatrixXd table(0, 7);
  std::string medians;
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
    // Saturation: the largest of the softmax weights of one query against `keys` keys. The
    // same draws give the median entropy and Jacobian norm, unscaled (column 0) and scaled
    // (column 1): what the 1/sqrt(d) does to a layer at the same initialisation.
    const double dd = static_cast<double>(d);
    Eigen::Vector2d max_w = Eigen::Vector2d::Zero();
    Eigen::MatrixX2d H(draws, 2), J(draws, 2);
    for (long s = 0; s < draws; ++s) {
      const VectorXd logits =
          attn::random_normal(keys, d, rng) * attn::random_normal(d, 1, rng);
      for (int c = 0; c < 2; ++c) {
        const VectorXd p = attn::softmax(c == 0 ? logits : logits / std::sqrt(dd));
        max_w(c) += p.maxCoeff() / static_cast<double>(draws);
        H(s, c) = attn::entropy(p);
        J(s, c) = jacobian_norm(p);
      }
    }
    // Standard error of a sample variance: sqrt((mu4 - sigma^4) / S), mu4 = 3d^2 + 6d here.
    const double se = std::sqrt((2 * dd * dd + 6 * dd) / S);
    table.conservativeResize(table.rows() + 1, Eigen::NoChange);
    table.row(table.rows() - 1) << dd, var, var / dd, se, se / dd, max_w(0), max_w(1);
    const auto key = [d](const char* name) { return fmt::format("{}_d{}", name, d); };
    r.say("   {:>6} {:>12.3f} {:>16.4f} {:>12.3f} {:>10.3f}\n", d,
          r.put(key("var_qk"), var), r.put(key("var_qk_scaled"), var / dd),
          r.put(key("mean_max_weight"), max_w(0)),
          r.put(key("mean_max_weight_scaled"), max_w(1)));
    const double medians_d[] = {
        r.put(key("median_entropy"), quantile(H.col(0), 0.5)),
        r.put(key("median_entropy_scaled"), quantile(H.col(1), 0.5)),
        r.put(key("median_jacobian_norm"), quantile(J.col(0), 0.5)),
        r.put(key("median_jacobian_norm_scaled"), quantile(J.col(1), 0.5))};
    if (d == 8 || d == 64 || 2 * d > o.max_d)  // 64: the paper's head width
      harness::say(medians, "   {:>6} {:>#9.3g} {:>#9.3g} {:>#11.3g} {:>#9.3g}\n", d,
                   medians_d[0], medians_d[1], medians_d[2], medians_d[3]);
  }
  harness::progress("");
  r.say(
      "   (max weight: mean largest softmax weight of a query over {} keys, {} draws)\n",
      keys, draws);
  r.say(
      "   the same draws, medians (log {} = {:.3f} is the entropy of uniform weights):\n",
      keys, std::log(static_cast<double>(keys)));
  r.say("   {:>6} {:>9} {:>9} {:>11} {:>9}\n{}\n", "d", "entropy", "(scaled)", "||J||_2",
        "(scaled)", medians);
  r.put("mean_max_weight_scaled_min", table.col(6).minCoeff());
  r.put("mean_max_weight_scaled_max", table.col(6).maxCoeff());
  harness::write_csv(
      out / "01-qk-variance.csv",
      {"d", "var", "var_scaled", "se", "se_scaled", "max_weight", "max_weight_scaled"},
      table);
}

// Softmax saturation: entropy and Jacobian norm as the logits are scaled up.
void saturation(const Options& o, attn::Rng& rng, const path& out, harness::Report& r) {
  const int draws = r.put("saturation_draws", o.common.quick ? 50 : 400);
  const int points = 61;
  const MatrixXd Z = attn::random_normal(draws, keys, rng);  // one row of logits per draw
  MatrixXd table(points, 7);
  r.say("5. Softmax of s*z, z with {} N(0,1) logits: median over {} draws\n", keys,
        draws);
  r.say("   {:>8} {:>10} {:>10}\n", "s", "entropy", "||J||_2");
  for (int k = 0; k < points; ++k) {
    const double s = std::pow(10.0, -2.0 + 4.5 * k / (points - 1));  // 0.01 .. 10^2.5
    VectorXd H(draws), J(draws);
    for (int j = 0; j < draws; ++j) {
      // [saturation]
      const VectorXd p = attn::softmax(s * Z.row(j).transpose());
      H(j) = attn::entropy(p);
      J(j) = jacobian_norm(p);  // the largest eigenvalue of diag(p) - p p^T
      // [saturation]
    }
    table.row(k) << s, quantile(H, 0.5), quantile(H, 0.1), quantile(H, 0.9),
        quantile(J, 0.5), quantile(J, 0.1), quantile(J, 0.9);
    if (k % 10 == 0)
      r.say("   {:>8.3g} {:>10.4f} {:>10.3e}\n", s, table(k, 1), table(k, 4));
    if (k % 20 == 0) {
      r.put(fmt::format("median_entropy_at_scale_{:g}", s), table(k, 1));
      r.put(fmt::format("median_jacobian_norm_at_scale_{:g}", s), table(k, 4));
    }
  }
  const double log_n = std::log(static_cast<double>(keys));
  r.say("   (log {} = {:.4f}, the entropy of uniform weights)\n", keys, log_n);
  // Where the median entropy falls below 99% and below 1% of log n, and where the median
  // Jacobian norm peaks (grid points of the sweep).
  Index start = points - 1, end = points - 1, peak = 0;
  for (Index k = points - 1; k >= 0; --k) {
    if (table(k, 1) < 0.99 * log_n) start = k;
    if (table(k, 1) < 0.01 * log_n) end = k;
  }
  table.col(4).maxCoeff(&peak);
  r.say(
      "   median entropy below 99% of log {} from s = {:.3g}, below 1% from s = {:.3g}\n",
      keys, r.put("entropy_drop_start_scale", table(start, 0)),
      r.put("entropy_drop_end_scale", table(end, 0)));
  r.say("   median ||J||_2 largest at s = {:.3g}: {:.3f}\n\n",
        r.put("jacobian_peak_scale", table(peak, 0)),
        r.put("jacobian_peak_median", table(peak, 4)));
  r.put("keys", static_cast<double>(keys));
  r.put("log_keys", log_n);
  // The figure draws a Jacobian norm at rounding level (far along, where the weights are
  // one-hot but for rounding) on the floor (harness::rounding_floor): below it the digits
  // change with the CPU. The norm is at most 1/2, so the floor is relative to 1.
  MatrixXd drawn = table;
  drawn.rightCols(3) = drawn.rightCols(3).unaryExpr(&harness::at_least_rounding_floor);
  harness::write_csv(out / "01-softmax-saturation.csv",
                     {"scale", "entropy_median", "entropy_p10", "entropy_p90",
                      "jacobian_median", "jacobian_p10", "jacobian_p90"},
                     drawn);
}

// ------------------------------------------------------------------------------------
// 6. Causal masks: softmax attention on the toy sentence (W_Q = W_K = W_V = I), without a
// mask (an encoder) and with the causal mask (a decoder): the heatmap figure.
void print_weights(harness::Report& r, const MatrixXd& A) {
  r.say("   {:>6}", "");
  for (const auto& w : ch01::sentence) r.say(" {:>6}", w);
  r.say("\n");
  for (Index t = 0; t < A.rows(); ++t) {
    r.say("   {:>6}", ch01::sentence[std::size_t(t)]);
    for (Index i = 0; i < A.cols(); ++i) r.say(" {:>6.3f}", A(t, i));
    r.say("\n");
  }
}

void causal_sentence(const path& out, harness::Report& r) {
  const MatrixXd X = ch01::sentence_embeddings();
  const Index n = X.rows();
  const ch01::ToyMasks toy = ch01::toy_masks(X);
  const MatrixXd &A_all = toy.A_all, &A = toy.A, &C = toy.C;
  const double past_change_all = toy.past_change_all,
               past_change_causal = toy.past_change_causal,
               renormalised_residual = toy.renormalised_residual;
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

  r.say("6. Softmax attention on the toy sentence, A = softmax(X X^T / sqrt(4) + M)\n");
  r.say("   no mask (M = 0, an encoder): every token reads the whole sentence\n");
  print_weights(r, A_all);
  r.say("   causal mask (a decoder): token t reads tokens 0..t\n");
  print_weights(r, A);
  r.say(
      "   jin's weight on the {} tokens after it: {:.3f} without the mask, {:g} with "
      "it\n",
      n - 1, r.put("unmasked_toy_future_weight_jin", ch01::later_weight(A_all, 0)),
      ch01::later_weight(A, 0));
  r.say(
      "   hao replaced by jin: outputs 0..{} move by up to {:.3f} without the mask, {:g} "
      "with it\n",
      n - 2, r.put("unmasked_toy_past_change_after_edit", past_change_all),
      r.put("causal_toy_past_change_after_edit", past_change_causal));
  r.say("   causal output row of 'hao' (good): [{:.3f}, {:.3f}, {:.3f}, {:.3f}]\n\n",
        C(5, 0), C(5, 1), C(5, 2), C(5, 3));
  r.put("causal_toy_weight_hao_hao", A(5, 5));
  r.put("causal_toy_weight_tian_tian", A(2, 2));  // = A(2, 1): the two tian are equal
  r.put("causal_toy_max_future_weight",
        A.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().maxCoeff());
  r.put("causal_vs_renormalised_unmasked_residual", renormalised_residual);
  r.put("unmasked_toy_min_weight", ch01::smallest_visible_weight(A_all, false));
  r.put("unmasked_toy_weight_jin_jin", A_all(0, 0));
}

// ------------------------------------------------------------------------------------
// 7. Multi-head causal self-attention on random tokens, with the checks the tests make.
void multi_head(const Options& o, attn::Rng& rng, harness::Report& r) {
  const Index n = o.n, d = o.d, dh = d / o.heads;
  harness::progress("multi-head attention");  // the longest section at large n and d
  const ch01::MultiHeadChecks m = ch01::multi_head_checks(n, d, o.heads, rng);
  const MatrixXd& Y = m.Y;
  const double earlier_change = m.earlier_change, rowsum_error = m.rowsum_error;
  harness::progress("");
  r.say("7. Multi-head causal self-attention: n = {}, d = {}, {} heads of width {}\n", n,
        d, o.heads, dh);
  r.say("   output is {} x {}; max |row sum - 1| of the weights = {:.1e}\n", Y.rows(),
        Y.cols(), r.put("mha_max_rowsum_error", rowsum_error));
  r.say("   after changing the last token, max change of the earlier outputs = {:g}\n",
        r.put("mha_earlier_rows_change_after_future_edit", earlier_change));
}

void run(const Options& o, const harness::CommandLine& cli) {
  if (o.d % o.heads != 0)
    throw harness::usage_error(
        "--heads", fmt::format("must divide --d = {} (got {})", o.d, o.heads));
  // The largest allocation: section 7's matrices, n x d and d x d ones and, per head, a few
  // n x n ones (scores, weights, the causal mask).
  const double n = static_cast<double>(o.n), d = static_cast<double>(o.d);
  harness::require_memory("--n", 8 * (4 * n * n + 6 * n * d + 4 * d * d));
  const path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  harness::Report r;
  harness::record_options(cli, r.results);

  // Each section on its own (harness::section): in the student copy, 6 and 7 wait for
  // exercise 01.6 (causal_mask) and the others still run. 7 is last: it draws from `rng`.
  harness::section(r, out, "1. Dot product vs distance", [&] { dot_versus_distance(r); });
  harness::section(r, out, "2. The weight table", [&] { weight_table(r); });
  harness::section(r, out, "5. Var(q.k)", [&] {
    qk_variance(o, rng, out, r);
    harness::render_figure(out, "01-qk-variance");
  });
  harness::section(r, out, "5. Softmax saturation", [&] {
    saturation(o, rng, out, r);
    harness::render_figure(out, "01-softmax-saturation", "",
                           fmt::format("rounding={:g}", harness::rounding_floor));
  });
  harness::section(r, out, "6. Causal attention on the toy sentence", [&] {
    causal_sentence(out, r);
    harness::render_figure(out, "01-causal-weights");
  });
  harness::section(r, out, "7. Multi-head causal self-attention",
                   [&] { multi_head(o, rng, r); });
  harness::finish_program(out, r);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{"Chapter 01 — Self-attention from scratch.", "ch01"};
  harness::add_common_options(cli, o.common, ATTN_CHAPTER);
  harness::add_int_option(cli, "--n", o.n, 1, 4096, "tokens in the multi-head example");
  harness::add_int_option(cli, "--d", o.d, 1, 4096,
                          "model width of the multi-head example");
  harness::add_int_option(
      cli, "--heads", o.heads, 1, 64,
      "attention heads; must divide --d");
  harness::add_int_option(cli, "--samples", o.samples, 10, 100'000,
                          "Monte Carlo samples of q.k per width d (time grows as "
                          "samples x max-d)",
                          2000);
  harness::add_int_option(cli, "--max-d", o.max_d, 1, 8192,
                          "largest d of the variance sweep (powers of two)", 128);
  return harness::run_program(cli, argc, argv, [&] { run(o, cli); });
}
