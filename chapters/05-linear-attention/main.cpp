// Chapter 05 — Softmax attention as infinite-dimensional linear attention.
//
// Feature maps phi with phi(q).phi(k) ~ exp(q.k), how fast each converges, linear attention
// and its stabilisers, the rank of attention matrices, and the time per call. The sections
// follow the numbering of output.txt, which the README cites; one random stream runs
// through them in this order. The computations are the chapter's module (ch05.hpp, which
// the live figures call too) and, for the times, timing.hpp; this program prints, records
// and draws them.

#include <fmt/core.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attn/feature_maps.hpp"
#include "attn/random.hpp"
#include "ch05.hpp"  // the chapter's computations (namespace ch05)
#include "harness/cli.hpp"
#include "harness/output.hpp"
#include "harness/timing.hpp"
#include "timing.hpp"

namespace {

namespace fs = std::filesystem;
using ch05::d_poly;
using ch05::Estimator;
using ch05::Fit;
using ch05::key;
using ch05::plot;
using ch05::put_fit;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using harness::progress;
using harness::Report;

struct Options {
  harness::CommonOptions common;
  long d = 16, n = 256, r = 64;
  long taylor_p = 8;     // --order
  long exp_limit_p = 6;  // --exp-order
  long trials = 400, max_log2_n = 20, block = 256;
};

// Roughly the most bytes each part of the program holds at once (they run one after the
// other), each with the option that makes it large, for the program options `o` (d, n, r,
// taylor_p, exp_limit_p, trials, max_log2_n, block): the program refuses a run that would
// not fit before it starts.
std::vector<std::pair<const char*, double>> peak_bytes(const Options& o) {
  const double n = double(o.n), d = double(o.d), r = double(o.r), B = sizeof(double);
  // 1, 2: 16 rows of phi(Q) and phi(K), and the last two tensor powers of x being built.
  const double taylor = 16 * B *
                        (2 * attn::taylor_feature_dim(d_poly, int(o.taylor_p)) +
                         1.25 * std::pow(4.0, double(o.taylor_p)));
  const double exp_limit =
      16 * B * 2.2 * attn::exp_limit_feature_dim(d_poly, int(o.exp_limit_p));
  // 5, 6: up to ten n x r feature matrices at once, a pair with (d_k + 1)^2 columns and its
  // tensor power being built, n x n weights, and singular_values (a 2n x 2n eigenproblem).
  const double features = 10 * n * r, squares = 4 * n * (d + 1) * (d + 1),
               weights = 20 * n * n;
  const char* attention = squares > std::max(features, weights) ? "--d"
                          : features > weights                  ? "--r"
                                                                : "--n";
  // 7: Q, K, V and two outputs with 2^max-log2-n rows, and one block of features.
  const double rows = 5 * std::ldexp(d, int(o.max_log2_n)), block = double(o.block) * r;
  return {{"--order", taylor},
          {"--exp-order", exp_limit},
          {"--trials", 20 * B * double(o.trials)},  // 3: the r = 1 estimates
          {attention, B * (features + squares + weights + 12 * n * d)},
          {block > rows ? "--block" : "--max-log2-n", B * (rows + block + 2 * r * d)}};
}

// The identity phi_p(q).phi_p(k) = f_p(q.k) on 16 x 16 random pairs in d_k = 4, for
// p = first .. last: prints each order's dimension (recorded as <dim_key><p> if given) and
// residual (under `column`), and records the largest as <name>_identity_max_rel_residual.
template <typename Features>
void identity_table(Report& report, attn::Rng& rng, const std::string& name,
                    const std::string& column, int first, int last, Features features,
                    double (*exact)(double, int), const std::string& dim_key = "") {
  const MatrixXd Q = attn::random_normal(16, d_poly, rng),
                 K = attn::random_normal(16, d_poly, rng);
  report.say("     p   features {}\n", column);
  double worst = 0;
  for (const auto& [p, D, residual] :
       ch05::identity_residuals(Q, K, first, last, features, exact)) {
    worst = std::max(worst, residual);
    if (!dim_key.empty()) report.put(key(dim_key, p), D);
    report.say("   {:>3} {:>10} {:>{}.1e}\n", p, D, residual, column.size());
  }
  report.put(name + "_identity_max_rel_residual", worst);
}

// 1 (README section 2). The Taylor map: identity, truncation error, negative weights.
void taylor(const Options& o, attn::Rng& rng, const fs::path& out, Report& report) {
  report.say(
      "1. Taylor map phi_p(x) = [1, x, x(x)x/sqrt(2!), ..., x^(x)p/sqrt(p!)], d_k = 4\n");
  identity_table(
      report, rng, "taylor", "max rel |phi.phi - T_p|", 0, int(o.taylor_p),
      [](const MatrixXd& X, int p) { return attn::taylor_features(X, p); },
      attn::taylor_exp, "taylor_dim_p");

  const std::vector<double> ts = {-4, -1, 1, 4};
  const ch05::TaylorErrors errors = ch05::taylor_errors(ts);
  // The figure draws an error at rounding level on the floor (harness::rounding_floor), here
  // relative to e^|t|, the largest term of the sum: below it the digits change with the CPU.
  MatrixXd drawn = errors.table;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const double scale = std::exp(std::abs(ts[i]));
    drawn.col(1 + 2 * Index(i)) = (drawn.col(1 + 2 * Index(i)) / scale)
                                      .unaryExpr(&harness::at_least_rounding_floor) * scale;
  }
  plot(out, "05-taylor-error",
       {"p", "err_m4", "bound_m4", "err_m1", "bound_m1", "err_1", "bound_1", "err_4",
        "bound_4"},
       drawn, fmt::format("rounding={:g}", harness::rounding_floor));
  report.say(
      "   |e^t - T_p(t)| / Lagrange bound <= {:.3f} for t in {{-4, -1, 1, 4}}, p <= 20\n"
      "   |e^4 - T_p(4)|:",
      report.put("taylor_error_over_lagrange_bound_max", errors.worst_ratio));
  for (const int p : {4, 8, 12, 16})
    report.say("{} p = {}: {:.3g}", p == 4 ? "" : ",", p,
               report.put(key("taylor_error_t4_p", p), errors.table(p, 7)));

  // T_(p+1)' = T_p: the minimum of T_(p+1) lies at the root of T_p.
  report.say("\n   odd p: T_p(t) < 0 below its root t*; min T_(p+1) = T_(p+1)(t*) > 0\n");
  for (int p = 1; p <= 9; p += 2) {
    const double root = report.put(key("taylor_root_p", p), ch05::taylor_root(p));
    report.say("   p = {}: root t* = {:.4f}", p, root);
    if (p < 9)
      report.say(", p = {}: minimum {:.4g}", p + 1,
                 report.put(key("taylor_min_p", p + 1), attn::taylor_exp(root, p + 1)));
    report.say("{}", p < 9 ? "\n" : "\n\n");
  }
}

// 2 (README section 3). The exp-limit map psi_p(x) = [1, x/sqrt(p)]^(x)p: identity, and
// its error e^t t^2 / (2p).
void exp_limit(const Options& o, attn::Rng& rng, const fs::path& out, Report& report) {
  report.say("2. Exp-limit map psi_p(x) = [1, x/sqrt(p)]^(x)p, d_k = 4\n");
  identity_table(
      report, rng, "exp_limit", "max rel |psi.psi - (1+t/p)^p|", 1, int(o.exp_limit_p),
      [](const MatrixXd& X, int p) { return attn::exp_limit_features(X, p); },
      ch05::exp_limit_kernel);

  // The error for p = 1 .. 2^20 against its leading term: slopes fitted for p >= 2^6, where
  // the 1/p term dominates, and error / leading term at p = 2^20 (row 20).
  const std::vector<double> ts{-2, 0.5, 1, 2};
  const MatrixXd table = ch05::exp_limit_errors(ts);
  report.say("      t   error slope in p (2 SE)   error / (e^t t^2 / 2p) at p = 2^20\n");
  std::string slopes;
  double worst_deviation = 0;
  for (int i = 0; i < 4; ++i) {
    const Fit f =
        put_fit(report, "exp_limit_error_slope", key("_t", ts[i]),
                ch05::fit_loglog(table.col(0).tail(15), table.col(1 + 2 * i).tail(15)));
    const double ratio = table(20, 1 + 2 * i) / table(20, 2 + 2 * i);
    worst_deviation = std::max(worst_deviation, std::abs(ratio - 1));
    report.say("   {:>4} {:>12.4f} +- {:.4f} {:>20.5f}\n", ts[i], f.slope, 2 * f.slope_se,
               ratio);
    slopes += fmt::format("s{}={};", i + 1, f.slope);
  }
  report.put("exp_limit_leading_ratio_max_deviation", worst_deviation);
  plot(out, "05-exp-limit-error",
       {"p", "err_m2", "asym_m2", "err_05", "asym_05", "err_1", "asym_1", "err_2",
        "asym_2"},
       table, slopes);
  report.say("   odd p: (1 + t/p)^p < 0 for t < -p, e.g. p = 3, t = -4: {:.4f}\n\n",
             std::pow(1 - 4.0 / 3, 3));
}

// 3 (README section 4). Random features: unbiased, relative error ~ r^(-1/2); the
// trigonometric and orthogonal variants.
void random_features(const Options& o, attn::Rng& rng, const fs::path& out,
                     Report& report) {
  const int trials = int(o.trials);
  report.say("3. Random features in d_k = {}, {} trials per point\n", o.d, trials);
  // A pair with small |q + k| (the lognormal tail stays mild): |q| = |k| = 0.5, q.k = 0.1.
  VectorXd q, k;
  ch05::pair_with_product(o.d, 0.5, 0.1, q, k);
  const double truth = std::exp(q.dot(k));

  // Unbiased: single-feature estimates (r = 1), mean within a few standard errors.
  const VectorXd e1 =
      ch05::kernel_estimates(Estimator::positive, q, k, 1, 20 * trials, rng);
  const double mean = e1.mean();
  const double se = std::sqrt((e1.array() - mean).square().sum() / double(e1.size() - 1) /
                              double(e1.size()));
  report.say("   r = 1, {} draws: mean estimate {:.5f} vs e^(q.k) = {:.5f}, z = {:.2f}\n",
             e1.size(), mean, truth,
             report.put("positive_unbiased_z", (mean - truth) / se));

  // Relative RMSE against r for the three estimators (row 6 is r = 256), and the theory
  // for the positive and trigonometric ones (columns 4 and 5).
  const int max_log2_r = o.common.quick ? 9 : 12;
  const MatrixXd table = ch05::rmse_against_r(q, k, max_log2_r, trials, rng, progress);
  report.say(
      "   |q| = |k| = 0.5, q.k = 0.1: relative RMSE ~ C r^slope (fit over r = 4..{})\n",
      1 << max_log2_r);
  std::string slopes = "in2='05-rf-kernel.csv'";
  for (int e = 0; e < 3; ++e) {
    const std::string name = ch05::name(Estimator(e));
    const Fit f = put_fit(report, "rf_slope", "_" + name,
                          ch05::fit_loglog(table.col(0), table.col(1 + e)));
    report.say("   {:<14} slope {:.3f} +- {:.3f} (2 SE), RMSE at r = 256: {:.4f}\n", name,
               f.slope, 2 * f.slope_se,
               report.put("rf_rmse_r256_" + name, table(6, 1 + e)));
    slopes += fmt::format(";slope_{}={}", name, f.slope);
  }
  report.put("rf_rmse_r256_theory_positive", table(6, 4));
  report.say("   theory at r = 256: positive {:.4f}, trigonometric {:.4f}\n", table(6, 4),
             report.put("rf_rmse_r256_theory_trigonometric", table(6, 5)));

  // Relative error against the kernel value: |q| = |k| = 1, q.k from -1 to 1, r = 64.
  report.say(
      "   r = 64, |q| = |k| = 1: relative RMSE and share of negative estimates\n"
      "      q.k    e^(q.k)   positive       trig     trig < 0\n");
  const MatrixXd sweep = ch05::rmse_against_kernel(o.d, 64, trials, rng);
  for (int i = 0; i <= 16; i += 4) {
    const double t = sweep(i, 0);
    report.put(key("rf_rel_rmse_positive_qk", t), sweep(i, 2));
    report.put(key("rf_rel_rmse_trig_qk", t), sweep(i, 3));
    report.put(key("rf_trig_negative_share_qk", t), sweep(i, 6));
    report.say("   {:>6.2f} {:>10.4f} {:>10.4f} {:>10.4f} {:>12.3f}\n", t, std::exp(t),
               sweep(i, 2), sweep(i, 3), sweep(i, 6));
  }
  harness::write_csv(out / "05-rf-kernel.csv",
                     {"qk", "kernel", "positive", "trig", "positive_theory",
                      "trig_theory", "trig_negative"},
                     sweep);
  plot(out, "05-rf-error",
       {"r", "positive", "orthogonal", "trigonometric", "positive_theory", "trig_theory"},
       table, slopes);
  report.say("\n");
}

// 4 (README section 6). The three maps at equal feature dimension D, d_k = 4: relative
// Frobenius error of the 64 x 64 kernel matrix.
void equal_dimension(const Options& o, attn::Rng& rng, const fs::path& out,
                     Report& report) {
  // Entries N(0, 1/4): |q|^2 ~ 1 and logits q.k with standard deviation 1/2.
  const MatrixXd Q = attn::random_normal(64, d_poly, rng, 0.5),
                 K = attn::random_normal(64, d_poly, rng, 0.5);
  report.say(
      "4. Equal feature dimension D, d_k = 4, 64 x 64 pairs, q.k with std 1/2\n"
      "   map                   D   rel. Frobenius\n");
  std::vector<std::vector<harness::CsvCell>> rows;
  const bool quick = o.common.quick;
  for (const ch05::MapError& e : ch05::errors_at_dimension(
           Q, K, quick ? 5 : 7, quick ? 4 : 6, quick ? 10 : 14, rng)) {
    if (e.not_done) {
      harness::part_waits(report, "   " + e.label, *e.not_done);
      continue;
    }
    rows.push_back({e.map, double(e.D), e.error});
    report.say("   {:<14} {:>8} {:>16.3e}\n", e.label, e.D,
               report.put("equal_dim_" + e.name, e.error));
  }
  plot(out, "05-equal-dimension", {"map", "dim", "rel_frobenius_error"}, rows);
  report.say("\n");
}

// 5 (README sections 1, 5 and 6). Linear attention equals the quadratic form, plain and
// causal; the stabilisers and Performer's epsilon; each map's weights against softmax's.
void attention_checks(const Options& o, attn::Rng& rng, Report& report) {
  report.say("5. Attention, n = {} tokens, d_k = {}, r = {} random features\n", o.n, o.d,
             o.r);
  const ch05::AttentionChecks c = ch05::attention_checks(o.n, o.d, o.r, rng);
  report.say("   max |linear - quadratic| / max |quadratic|               = {:.1e}\n",
             report.put("linear_vs_quadratic_rel_residual", c.linear_vs_quadratic));
  report.say("   max |causal recurrence - masked quadratic| / max |masked| = {:.1e}\n",
             report.put("causal_rnn_vs_masked_rel_residual", c.causal_rnn_vs_masked));
  // Subtracting the maxima (per query, once over all keys) cancels exactly.
  report.say("   max-subtraction stabiliser changes the output by          {:.1e}\n",
             report.put("stabiliser_rel_change", c.stabiliser_change));

  // At 30 times the norms the features underflow; the stabilisers keep the output attention.
  const ch05::Underflow& x30 = c.x30;
  report.say("   queries and keys x30: largest unstabilised feature {:.1e}; {}\n",
             report.put("unstabilised_max_feature_x30", x30.largest_feature),
             x30.unstabilised.empty()
                 ? fmt::format("max |output - plain average of V| = {:.1e}",
                               x30.unstabilised_distance)
                 : x30.unstabilised);
  report.say("   stabilised: max |output - plain average| = {:.2f}\n",
             report.put("stabilised_distance_from_average_x30", x30.stabilised_distance));

  // Performer's epsilon, added to every (stabilised) feature, does not cancel.
  report.say(
      "   epsilon added to the stabilised features: mean total variation from 0\n");
  for (const auto& [eps, tv] : c.epsilon_tv)
    report.say("     eps = {:g}: {:.2e}\n", eps, report.put(key("epsilon_tv_", eps), tv));

  report.say("   weights vs softmax(Q K^T)         D    mean TV      min w\n");
  for (const ch05::MapWeights& w : c.maps) {
    if (w.not_done) {
      harness::part_waits(report, "     " + w.label, *w.not_done);
      continue;
    }
    report.put("attention_tv_" + w.name, w.tv);
    report.say("     {:<24} {:>8} {:>10.4f} {:>10.2e}\n", w.label, w.D, w.tv,
               report.put("attention_min_weight_" + w.name, w.min_weight));
  }
  report.say(
      "   (TV: half the L1 distance between weight rows, averaged over queries; 0 is\n"
      "   exact, 1 is disjoint. min w: the smallest unnormalised weight)\n\n");
}

// 6 (README section 7). Rank: phi(Q) phi(K)^T has rank <= r; exp(s Q K^T) is numerically
// full rank at s ~ 1 and falls to the number of favourite keys as s grows.
void rank(const Options& o, attn::Rng& rng, const fs::path& out, Report& report) {
  const Index n = o.n, d = o.d;
  report.say(
      "6. Rank of n x n attention matrices, n = {}, d_k = {} (tolerance 1e-10 sigma_1)\n",
      n, d);
  const ch05::Ranks k = ch05::ranks(n, d, o.r, rng, progress);
  const VectorXd &sA = k.s_softmax, &s16 = k.s_small, &sr = k.s_big;
  const Index r_small = k.r_small, r_big = k.r_big;
  const auto rank_of = ch05::rank_of;
  const double sigma_min = report.put("softmax_sigma_min_rel", sA(n - 1) / sA(0));
  report.say("   softmax         rank {:>5}, sigma_n/sigma_1     = {:.1e}\n",
             report.put("rank_softmax", rank_of(sA)), sigma_min);
  for (const auto& [r, s, suffix] :
       {std::tuple{r_small, &s16, "_r16"}, {r_big, &sr, "_r"}}) {
    report.say("   linear r = {:<4} rank {:>5}", r,
               report.put(std::string("rank_linear") + suffix, rank_of(*s)));
    if (r < n)  // sigma_(r+1) is zero but for rounding
      report.say(
          ", sigma_(r+1)/sigma_1 = {:.1e}",
          report.put(std::string("linear_sigma_next_rel") + suffix, (*s)(r) / (*s)(0)));
    report.say("\n");
  }

  // The rank of softmax(s Q K^T) as the logit scale s grows, and the keys that are some
  // query's favourite: the rank of the one-hot limit.
  const MatrixXd& by_scale = k.by_scale;
  report.say("   numerical rank of softmax(s Q K^T):");
  for (int i = 0; i <= 24; i += 6)
    report.say(
        "{} s = {:g}: {}", i == 0 ? "" : ",", by_scale(i, 0),
        report.put(key("rank_softmax_scale_", by_scale(i, 0)), Index(by_scale(i, 1))));
  report.put("distinct_favourite_keys", k.favourites.distinct_keys);
  const double saturation = report.put("saturation_scale", k.saturation_scale);
  report.say(
      "\n   {} distinct keys are some query's largest logit; at s = 100 / (smallest gap "
      "between a\n   row's two largest logits) = {:.3g} every row is one-hot to "
      "rounding and the rank is {}\n\n",
      k.favourites.distinct_keys, saturation,
      report.put("rank_softmax_saturated", k.rank_saturated));
  harness::write_csv(out / "05-rank-scale.csv",
                     {"scale", "rank_1e10", "rank_1e6", "favourites"}, by_scale);
  // The figure draws a singular value at rounding level on the floor (harness::rounding_floor):
  // those beyond the rank r are zero but for rounding, and their digits change with the CPU.
  const auto floored = [](const VectorXd& s) {
    return VectorXd((s / s(0)).unaryExpr(&harness::at_least_rounding_floor));
  };
  MatrixXd spectra(n, 4);
  spectra << VectorXd::LinSpaced(n, 1, double(n)), floored(sA), floored(s16), floored(sr);
  plot(out, "05-spectra",
       {"index", "softmax", key("linear_r", r_small), key("linear_r", r_big)}, spectra,
       fmt::format("in2='05-rank-scale.csv';r_small={};r_big={};rounding={:g}", r_small, r_big,
                   harness::rounding_floor));
}

// 7 (README section 8). Time per call: softmax attention O(n^2 d_k) against linear
// attention O(n r d_k). Returns the table of times to print: they go to results.json as
// time_* but stay out of output.txt, which the seed reproduces bit for bit.
std::string timing(const Options& o, attn::Rng& rng, const fs::path& out,
                   Report& report) {
  report.say(
      "7. Time per call, d_k = {}, r = {}, n = 2^5 .. 2^{}: on the terminal and in\n"
      "   results.json (time_*), not here: times depend on the machine\n\n",
      o.d, o.r, o.max_log2_n);
  return ch05::report_timings(
      o.d, o.r,
      ch05::time_attention(o.d, o.r, int(o.max_log2_n), o.block, o.common.quick, rng),
      out, report);
}

void run(const Options& o, const harness::CommandLine& cli) {
  if (o.r % 2 != 0)  // the trigonometric map of section 5 has r/2 directions
    throw harness::usage_error(
        "--r", fmt::format("must be an even number in [2, 65536] (got {})", o.r));
  // Every size the options allow either fits in memory or is refused here, before any work.
  for (const auto& [option, bytes] : peak_bytes(o))
    harness::require_memory(option, bytes);
  const fs::path out = harness::begin_output(o.common.out);
  Report report;
  harness::record_options(cli, report.results);
  attn::Rng rng(o.common.seed);
  // Each section on its own (harness::section): in the student copy, those that use
  // exp_limit_features wait for exercise 05.6 and the others still run. Each draws its random
  // inputs before it calls exp_limit_features, so the later sections see the same stream.
  harness::section(report, out, "1. Taylor map", [&] { taylor(o, rng, out, report); });
  harness::section(report, out, "2. Exp-limit map", [&] { exp_limit(o, rng, out, report); });
  harness::section(report, out, "3. Random features",
                   [&] { random_features(o, rng, out, report); });
  harness::section(report, out, "4. Equal feature dimension",
                   [&] { equal_dimension(o, rng, out, report); });
  harness::section(report, out, "5. Attention", [&] { attention_checks(o, rng, report); });
  harness::section(report, out, "6. Rank", [&] { rank(o, rng, out, report); });
  attn::Rng timing_rng(o.common.seed + 1);
  harness::finish_program(out, report, timing(o, timing_rng, out, report));
}

}  // namespace

int main(int argc, char** argv) {
  harness::keep_freed_memory();  // time the arithmetic, not page faults
  Options o;
  harness::CommandLine cli{
      "Chapter 05 — Softmax attention as infinite-dimensional linear attention.", "ch05"};
  harness::add_common_options(cli, o.common, ATTN_CHAPTER);
  using harness::add_int_option;
  add_int_option(cli, "--d", o.d, 2, 1024,
                 "head width d_k (attention, random features, rank, timing)");
  add_int_option(cli, "--n", o.n, 2, 4096,
                 "tokens n of the attention and rank experiments", 128);
  add_int_option(cli, "--r", o.r, 2, 65536, "random features r (even)");
  // Order 12 in d_k = 4 has 2.2e7 features, over the feature maps' limit of 1 GiB for
  // 16 rows; so has power 10 of the exp-limit map (9.8e6 features).
  add_int_option(cli, "--order", o.taylor_p, 1, 11,
                 "largest Taylor order p whose feature map is built, in d_k = 4");
  add_int_option(cli, "--exp-order", o.exp_limit_p, 1, 9,
                 "largest power p whose exp-limit feature map is built, in d_k = 4");
  add_int_option(cli, "--trials", o.trials, 20, 1'000'000, "Monte Carlo trials per point",
                 100);
  add_int_option(cli, "--max-log2-n", o.max_log2_n, 8, 24,
                 "timing: linear attention up to n = 2^this (softmax up to 2^12)", 10);
  add_int_option(cli, "--block", o.block, 1, 65536,
                 "timing: rows per block of the streamed linear attention");
  return harness::run_program(cli, argc, argv, [&] { run(o, cli); });
}
