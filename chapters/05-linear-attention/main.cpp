// Chapter 05 — Softmax attention as infinite-dimensional linear attention.
//
// Checks the three feature maps phi with phi(q).phi(k) ~ exp(q.k) (Taylor, exp-limit,
// positive random features) and their relatives (trigonometric and orthogonal random
// features), measures how fast each converges, compares them at equal feature dimension,
// checks linear attention against the quadratic form (plain and causal), the stabilisers
// real implementations use, the rank of the attention matrices, and times softmax against
// linear attention. Writes output.txt (this summary), results.json (deterministic, except
// the measured times under keys time_*), and the CSV + SVG of each figure into --out.

#include <fmt/core.h>
#if defined(__GLIBC__)
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "harness/cli.hpp"
#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "harness/output.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/svd.hpp"
#include "attn/tiled_attention.hpp"
#include "experiments.hpp"

namespace {

using harness::say;

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using ch05::Estimator;

// The deterministic maps have d^P features: their sections work in d = 4.
constexpr Index d_poly = 4;

struct Options {
  harness::CommonOptions common;
  long d = 16;           // head width of the attention and timing experiments
  long n = 256;          // tokens of the attention and rank experiments
  long m = 64;           // random features in the attention and timing experiments
  long order = 8;        // largest Taylor order whose feature map is built (d = 4)
  long exp_n = 6;        // largest exp-limit n whose feature map is built (d = 4)
  long trials = 400;     // Monte Carlo trials per point
  long max_log2_n = 20;  // timing: linear attention up to N = 2^this
  long block = 256;      // timing: rows per block of the streamed linear attention
};

// ------------------------------------------------------------------------------------
// 1. The Taylor map: identity, dimension, truncation error, negative weights.
void taylor(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
            std::string& text, harness::Results& results) {
  say(text,
      "1. Taylor map phi_p(x) = [1, x, x(x)x/sqrt(2!), ..., x^(x)p/sqrt(p!)], d_k = {}\n",
      d_poly);
  const MatrixXd Q = attn::random_normal(16, d_poly, rng),
                 K = attn::random_normal(16, d_poly, rng);
  double worst = 0;
  say(text, "   {:>3} {:>10} {:>22}\n", "p", "features", "max rel |phi.phi - T_p|");
  for (long P = 0; P <= o.order; ++P) {
    harness::progress(fmt::format("Taylor features of order {}", P));
    // [taylor-check]
    const MatrixXd phiQ = attn::taylor_features(Q, int(P)),
                   phiK = attn::taylor_features(K, int(P));
    const MatrixXd lhs = phiQ * phiK.transpose();  // phi_P(q_i) . phi_P(k_j)
    const MatrixXd T = (Q * K.transpose()).unaryExpr([&](double t) {
      return attn::taylor_exp(t, int(P));
    });
    // Relative to the size of the terms: T_P(sum_i |q_i k_i|).
    const MatrixXd scale =
        (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr([&](double t) {
          return attn::taylor_exp(t, int(P));
        });
    const double residual = ((lhs - T).array() / scale.array()).abs().maxCoeff();
    // [taylor-check]
    worst = std::max(worst, residual);
    say(text, "   {:>3} {:>10} {:>22.1e}\n", P, phiQ.cols(), residual);
    results[fmt::format("taylor_dim_p{}", P)] = phiQ.cols();
  }
  harness::progress("");
  results["taylor_identity_max_rel_residual"] = worst;

  // Truncation error against the Lagrange bound, for a few logits t.
  const std::vector<double> ts{-4, -1, 1, 4};
  MatrixXd table(21, 1 + 2 * ts.size());
  double worst_ratio = 0;
  for (int P = 0; P <= 20; ++P) {
    table(P, 0) = P;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const double t = ts[i];
      // [lagrange]
      const double error = std::abs(std::exp(t) - attn::taylor_exp(t, P));
      const double bound = std::exp(std::max(t, 0.0)) * std::pow(std::abs(t), P + 1) /
                           std::tgamma(P + 2.0);
      // [lagrange]
      table(P, 1 + 2 * Index(i)) = error;
      table(P, 2 + 2 * Index(i)) = bound;
      // Below ~1e-15 relative the "error" is rounding of exp(t), not truncation.
      if (error > 1e-13 * std::exp(t)) worst_ratio = std::max(worst_ratio, error / bound);
    }
  }
  harness::write_csv(out / "05-taylor-error.csv",
                  {"P", "err_m4", "bound_m4", "err_m1", "bound_m1", "err_1", "bound_1",
                   "err_4", "bound_4"},
                  table);
  say(text,
      "   |e^t - T_p(t)| / Lagrange bound <= {:.3f} for t in {{-4, -1, 1, 4}}, p <= 20\n",
      worst_ratio);
  say(text,
      "   |e^4 - T_p(4)|: p = 4: {:.3g}, p = 8: {:.3g}, p = 12: {:.3g}, p = 16: {:.3g}\n",
      table(4, 7), table(8, 7), table(12, 7), table(16, 7));
  results["taylor_error_over_lagrange_bound_max"] = worst_ratio;
  for (const int P : {4, 8, 12, 16})
    results[fmt::format("taylor_error_t4_p{}", P)] = table(P, 7);

  say(text,
      "   odd p: T_p(t) < 0 for t below its root; even p: min T_p = t*^p / p! > 0\n");
  for (int P = 1; P <= 9; ++P) {
    if (P % 2 == 1) {
      const double root = ch05::taylor_root(P);
      say(text, "   p = {}: root {:.4f}\n", P, root);
      results[fmt::format("taylor_root_p{}", P)] = root;
    } else {
      const double ts_min = ch05::taylor_even_minimum_point(P);
      say(text, "   p = {}: minimum {:.4g} at t* = {:.4f}\n", P,
          attn::taylor_exp(ts_min, P), ts_min);
      results[fmt::format("taylor_min_p{}", P)] = attn::taylor_exp(ts_min, P);
    }
  }
  say(text, "\n");
}

// ------------------------------------------------------------------------------------
// 2. The exp-limit map psi_n(x) = [1, x/sqrt(n)]^(x)n.
void exp_limit(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
               std::string& text, harness::Results& results) {
  say(text, "2. Exp-limit map psi_p(x) = [1, x/sqrt(p)]^(x)p, d_k = {}\n", d_poly);
  const MatrixXd Q = attn::random_normal(16, d_poly, rng),
                 K = attn::random_normal(16, d_poly, rng);
  double worst = 0;
  say(text, "   {:>3} {:>10} {:>28}\n", "p", "features", "max rel |psi.psi - (1+t/p)^p|");
  for (long n = 1; n <= o.exp_n; ++n) {
    harness::progress(fmt::format("exp-limit features, p = {}", n));
    const MatrixXd lhs = attn::exp_limit_features(Q, int(n)) *
                         attn::exp_limit_features(K, int(n)).transpose();
    const double nn = double(n);
    const MatrixXd t = Q * K.transpose();
    const MatrixXd rhs = t.unaryExpr([&](double x) { return std::pow(1 + x / nn, nn); });
    const MatrixXd scale =
        (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr([&](double x) {
          return std::pow(1 + x / nn, nn);
        });
    const double residual = ((lhs - rhs).array() / scale.array()).abs().maxCoeff();
    worst = std::max(worst, residual);
    say(text, "   {:>3} {:>10.0f} {:>28.1e}\n", n,
        attn::exp_limit_feature_dim(d_poly, int(n)), residual);
  }
  harness::progress("");
  results["exp_limit_identity_max_rel_residual"] = worst;

  // Error against n, on a log-log scale, with its asymptote e^t t^2 / (2n).
  const std::vector<double> ts{-2, 0.5, 1, 2};
  std::vector<std::vector<harness::CsvCell>> rows;
  for (int k = 0; k <= 20; ++k) {
    const double n = std::ldexp(1.0, k);
    std::vector<harness::CsvCell> row{n};
    for (double t : ts) {
      // (1 + t/n)^n as exp(n log1p(t/n)): no n-fold rounding of 1 + t/n (when 1 + t/n >
      // 0).
      const double approx =
          t / n > -1 ? std::exp(n * std::log1p(t / n)) : std::pow(1 + t / n, n);
      row.push_back(std::abs(std::exp(t) - approx));
      row.push_back(std::exp(t) * t * t / (2 * n));
    }
    rows.push_back(row);
  }
  harness::write_csv(out / "05-exp-limit-error.csv",
                  {"n", "err_m2", "asym_m2", "err_05", "asym_05", "err_1", "asym_1",
                   "err_2", "asym_2"},
                  rows);
  // Fit the slope for n >= 2^6, where the 1/n term dominates.
  // The largest |error / (e^t t^2 / (2p)) - 1| over t, at p = 2^20.
  double worst_ratio_deviation = 0;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    std::vector<double> x, y;
    for (std::size_t k = 6; k < rows.size(); ++k) {
      x.push_back(std::get<double>(rows[k][0]));
      y.push_back(std::get<double>(rows[k][1 + 2 * i]));
    }
    const ch05::Fit f = ch05::fit_loglog(x, y);
    const std::string key = fmt::format("{:g}", ts[i]);
    const double ratio = y.back() / (std::exp(ts[i]) * ts[i] * ts[i] / (2 * x.back()));
    worst_ratio_deviation = std::max(worst_ratio_deviation, std::abs(ratio - 1));
    say(text,
        "   t = {:>4}: error slope in p = {:.4f} +- {:.4f} (2 SE), error*2p/(e^t t^2) "
        "at p = 2^20: {:.5f}\n",
        key, f.slope, 2 * f.slope_se, ratio);
    results[fmt::format("exp_limit_error_slope_t{}", key)] = f.slope;
    results[fmt::format("exp_limit_error_slope_2se_t{}", key)] = 2 * f.slope_se;
  }
  results["exp_limit_leading_ratio_max_deviation"] = worst_ratio_deviation;
  say(text, "   odd p: (1 + t/p)^p < 0 for t < -p, e.g. p = 3, t = -4: {:.4f}\n\n",
      std::pow(1 - 4.0 / 3, 3));
}

// ------------------------------------------------------------------------------------
// 3. Random features: unbiased, error ~ m^(-1/2); trigonometric and orthogonal variants.
void random_features(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
                     std::string& text, harness::Results& results) {
  const Index d = o.d;
  const int trials = int(o.trials);
  say(text, "3. Random features in d_k = {}, {} trials per point\n", d, trials);
  // A pair with small |q + k| (the lognormal tail stays mild): |q| = |k| = 0.5, q.k =
  // 0.1.
  VectorXd q, k;
  ch05::pair_with_product(d, 0.5, 0.1, q, k);
  const double truth = std::exp(q.dot(k));

  // Unbiasedness: single-feature estimates (m = 1), mean within a few standard errors.
  {
    const VectorXd e =
        ch05::kernel_estimates(Estimator::positive, q, k, 1, 20 * trials, rng);
    const double mean = e.mean();
    const double se = std::sqrt((e.array() - mean).square().sum() / double(e.size() - 1) /
                                double(e.size()));
    say(text,
        "   r = 1, {} draws: mean estimate {:.5f} vs e^(q.k) = {:.5f}, z = {:.2f}\n",
        e.size(), mean, truth, (mean - truth) / se);
    results["positive_unbiased_z"] = (mean - truth) / se;
  }

  // Relative RMSE against m, for the three estimators.
  const int max_log2_m = o.common.quick ? 9 : 12;
  std::vector<std::vector<harness::CsvCell>> rows;
  std::vector<double> ms;
  std::vector<std::vector<double>> errs(3);
  for (int j = 2; j <= max_log2_m; ++j) {
    const Index m = Index(1) << j;
    harness::progress(fmt::format("random features: r = {} of {}", m, 1 << max_log2_m));
    std::vector<harness::CsvCell> row{double(m)};
    ms.push_back(double(m));
    for (int e = 0; e < 3; ++e) {
      // [rf-rmse]
      const VectorXd est = ch05::kernel_estimates(Estimator(e), q, k, m, trials, rng);
      const double rmse = ch05::relative_rmse(est, truth);
      // [rf-rmse]
      errs[std::size_t(e)].push_back(rmse);
      row.push_back(rmse);
    }
    row.push_back(std::sqrt(ch05::positive_relative_mse(q, k, double(m))));
    row.push_back(std::sqrt(ch05::trig_relative_mse(q, k, double(m))));
    rows.push_back(row);
  }
  harness::progress("");
  harness::write_csv(
      out / "05-rf-error.csv",
      {"m", "positive", "orthogonal", "trigonometric", "positive_theory", "trig_theory"},
      rows);
  say(text,
      "   |q| = |k| = 0.5, q.k = 0.1: relative RMSE ~ C r^slope (fit over r = 4..{})\n",
      1 << max_log2_m);
  for (int e = 0; e < 3; ++e) {
    const ch05::Fit f = ch05::fit_loglog(ms, errs[std::size_t(e)]);
    const std::string nm = ch05::name(Estimator(e));
    say(text, "   {:<14} slope {:.3f} +- {:.3f} (2 SE), RMSE at r = 256: {:.4f}\n", nm,
        f.slope, 2 * f.slope_se, errs[std::size_t(e)][6]);
    results["rf_slope_" + nm] = f.slope;
    results["rf_slope_2se_" + nm] = 2 * f.slope_se;
    results["rf_rmse_r256_" + nm] = errs[std::size_t(e)][6];
  }
  say(text, "   theory at r = 256: positive {:.4f}, trigonometric {:.4f}\n",
      std::sqrt(ch05::positive_relative_mse(q, k, 256)),
      std::sqrt(ch05::trig_relative_mse(q, k, 256)));
  results["rf_rmse_r256_theory_positive"] =
      std::sqrt(ch05::positive_relative_mse(q, k, 256));
  results["rf_rmse_r256_theory_trigonometric"] =
      std::sqrt(ch05::trig_relative_mse(q, k, 256));

  // Relative error against the kernel value: |q| = |k| = 1, q.k from -1 to 1, m = 64.
  const Index m = 64;
  std::vector<std::vector<harness::CsvCell>> rows2;
  say(text, "   r = {}, |q| = |k| = 1: relative RMSE and share of negative estimates\n",
      m);
  say(text, "   {:>6} {:>10} {:>10} {:>10} {:>12}\n", "q.k", "e^(q.k)", "positive",
      "trig", "trig < 0");
  for (int i = 0; i <= 16; ++i) {
    const double t = -1 + i / 8.0;
    VectorXd a, b;
    ch05::pair_with_product(d, 1.0, t, a, b);
    const VectorXd pos =
        ch05::kernel_estimates(Estimator::positive, a, b, m, trials, rng);
    const VectorXd trig =
        ch05::kernel_estimates(Estimator::trigonometric, a, b, m, trials, rng);
    const double negative = (trig.array() < 0).cast<double>().mean();
    const double rp = ch05::relative_rmse(pos, std::exp(t)),
                 rt = ch05::relative_rmse(trig, std::exp(t));
    rows2.push_back({t, std::exp(t), rp, rt,
                     std::sqrt(ch05::positive_relative_mse(a, b, m)),
                     std::sqrt(ch05::trig_relative_mse(a, b, m)), negative});
    if (i % 4 == 0) {
      say(text, "   {:>6.2f} {:>10.4f} {:>10.4f} {:>10.4f} {:>12.3f}\n", t, std::exp(t),
          rp, rt, negative);
      results[fmt::format("rf_rel_rmse_positive_qk{:g}", t)] = rp;
      results[fmt::format("rf_rel_rmse_trig_qk{:g}", t)] = rt;
      results[fmt::format("rf_trig_negative_share_qk{:g}", t)] = negative;
    }
  }
  harness::write_csv(out / "05-rf-kernel.csv",
                  {"qk", "kernel", "positive", "trig", "positive_theory", "trig_theory",
                   "trig_negative"},
                  rows2);
  say(text, "\n");
}

// ------------------------------------------------------------------------------------
// 4. The three maps at equal feature dimension (d = 4), on 64 x 64 pairs with q.k ~ 1.
void equal_dimension(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
                     std::string& text, harness::Results& results) {
  // Entries N(0, 1/4): |q|^2 ~ 1 and logits q.k with standard deviation 1/2.
  const double sigma = 0.5;
  const MatrixXd Q = attn::random_normal(64, d_poly, rng, sigma),
                 K = attn::random_normal(64, d_poly, rng, sigma);
  const MatrixXd exact = (Q * K.transpose()).array().exp();
  // Relative Frobenius error of an approximate kernel matrix, ||approx - exact|| /
  // ||exact||.
  auto rel_rms = [&](const MatrixXd& approx) {
    return (approx - exact).norm() / exact.norm();
  };
  std::vector<std::vector<harness::CsvCell>> rows;
  say(text, "4. Equal feature dimension D, d_k = {}, 64 x 64 pairs, q.k with std 1/2\n",
      d_poly);
  say(text, "   {:<14} {:>8} {:>16}\n", "map", "D", "rel. Frobenius");
  const int max_order = o.common.quick ? 5 : 7, max_n = o.common.quick ? 4 : 6;
  for (int P = 1; P <= max_order; ++P) {
    harness::progress(fmt::format("equal dimension: Taylor p = {}", P));
    const MatrixXd phiQ = attn::taylor_features(Q, P), phiK = attn::taylor_features(K, P);
    const double err = rel_rms(phiQ * phiK.transpose());
    rows.push_back({"taylor", double(phiQ.cols()), err});
    say(text, "   {:<14} {:>8} {:>16.3e}\n", fmt::format("Taylor p={}", P), phiQ.cols(),
        err);
    results[fmt::format("equal_dim_taylor_p{}", P)] = err;
  }
  for (int n = 1; n <= max_n; ++n) {
    harness::progress(fmt::format("equal dimension: exp-limit p = {}", n));
    const MatrixXd psiQ = attn::exp_limit_features(Q, n),
                   psiK = attn::exp_limit_features(K, n);
    const double err = rel_rms(psiQ * psiK.transpose());
    rows.push_back({"exp_limit", double(psiQ.cols()), err});
    say(text, "   {:<14} {:>8} {:>16.3e}\n", fmt::format("exp-limit p={}", n),
        psiQ.cols(), err);
    results[fmt::format("equal_dim_exp_limit_p{}", n)] = err;
  }
  for (int j = 2; j <= (o.common.quick ? 10 : 14); j += 2) {
    const Index m = Index(1) << j;
    harness::progress(fmt::format("equal dimension: random features r = {}", m));
    // Root-mean-square over 10 independent draws of the directions.
    double sq = 0;
    for (int draw = 0; draw < 10; ++draw) {
      const MatrixXd W = attn::gaussian_directions(m, d_poly, rng);
      sq += std::pow(rel_rms(attn::positive_random_features(Q, W) *
                             attn::positive_random_features(K, W).transpose()),
                     2) /
            10;
    }
    const double err = std::sqrt(sq);
    rows.push_back({"random", double(m), err});
    say(text, "   {:<14} {:>8} {:>16.3e}\n", fmt::format("random r={}", m), m, err);
    results[fmt::format("equal_dim_random_r{}", m)] = err;
  }
  harness::progress("");
  harness::write_csv(out / "05-equal-dimension.csv", {"map", "dim", "rel_frobenius_error"},
                  rows);
  say(text, "\n");
}

// ------------------------------------------------------------------------------------
// 5. Linear attention: equal to the quadratic form, causal recurrence, stabilisers, eps,
// and the approximation of softmax attention by each map.
void attention_checks(const Options& o, attn::Rng& rng, std::string& text,
                      harness::Results& results) {
  const Index N = o.n, d = o.d, m = o.m;
  say(text, "5. Attention, n = {} tokens, d_k = {}, r = {} random features\n", N, d, m);
  // Queries and keys already divided by d^(1/4), so softmax(Q K^T) is the scaled
  // attention; entries N(0, 2/d): |q|^2 ~ 2 and logits with standard deviation 2/sqrt(d).
  const double sigma = std::sqrt(2.0 / double(d));
  const MatrixXd Q = attn::random_normal(N, d, rng, sigma),
                 K = attn::random_normal(N, d, rng, sigma),
                 V = attn::random_normal(N, d, rng);
  const MatrixXd W = attn::gaussian_directions(m, d, rng);

  const MatrixXd phiQ = attn::positive_random_features(Q, W),
                 phiK = attn::positive_random_features(K, W);
  const MatrixXd fast = attn::linear_attention(phiQ, phiK, V);            // O(N m d)
  const MatrixXd slow = attn::kernel_attention_quadratic(phiQ, phiK, V);  // O(N^2 m)
  const MatrixXd rnn = attn::causal_linear_attention(phiQ, phiK, V);
  const MatrixXd masked =
      attn::kernel_attention_quadratic(phiQ, phiK, V, attn::Masking::causal);
  const double r_lin = (fast - slow).lpNorm<Eigen::Infinity>() / slow.lpNorm<Eigen::Infinity>();
  const double r_causal = (rnn - masked).lpNorm<Eigen::Infinity>() / masked.lpNorm<Eigen::Infinity>();
  say(text, "   max |linear - quadratic| / max |quadratic|               = {:.1e}\n",
      r_lin);
  say(text, "   max |causal recurrence - masked quadratic| / max |masked| = {:.1e}\n",
      r_causal);
  results["linear_vs_quadratic_rel_residual"] = r_lin;
  results["causal_rnn_vs_masked_rel_residual"] = r_causal;

  // Stabilisers: subtracting maxima cancels exactly, and rescues large norms.
  const MatrixXd stable = attn::linear_attention(
      attn::positive_random_features(Q, W, attn::Stabiliser::per_row),
      attn::positive_random_features(K, W, attn::Stabiliser::global), V);
  const double r_stab = (stable - fast).lpNorm<Eigen::Infinity>() / fast.lpNorm<Eigen::Infinity>();
  say(text,
      "   max-subtraction stabiliser changes the output by          {:.1e} (relative)\n",
      r_stab);
  results["stabiliser_rel_change"] = r_stab;
  // Large norms: omega.x - |x|^2/2 is very negative for every direction and every
  // feature underflows (Eigen's vectorised exp stops at a tiny floor instead of 0). All
  // weights become equal and the output silently turns into a plain average of V.
  const MatrixXd Qbig = 30 * Q, Kbig = 30 * K;
  const MatrixXd under_q = attn::positive_random_features(Qbig, W);
  const VectorXd average = V.colwise().mean().transpose();
  std::string unstable;
  try {
    const MatrixXd lost =
        attn::linear_attention(under_q, attn::positive_random_features(Kbig, W), V);
    unstable = fmt::format("max |output - plain average of V| = {:.1e}",
                           (lost.rowwise() - average.transpose()).lpNorm<Eigen::Infinity>());
  } catch (const std::invalid_argument&) {
    unstable = "0/0, refused";
  }
  const MatrixXd big = attn::linear_attention(
      attn::positive_random_features(Qbig, W, attn::Stabiliser::per_row),
      attn::positive_random_features(Kbig, W, attn::Stabiliser::global), V);
  say(text, "   queries and keys x30: largest unstabilised feature {:.1e}; {}\n",
      under_q.maxCoeff(), unstable);
  say(text, "   stabilised: max |output - plain average| = {:.2f}\n",
      (big.rowwise() - average.transpose()).lpNorm<Eigen::Infinity>());
  results["unstabilised_max_feature_x30"] = under_q.maxCoeff();
  results["stabilised_distance_from_average_x30"] =
      (big.rowwise() - average.transpose()).lpNorm<Eigen::Infinity>();

  // Performer's epsilon, added to every (stabilised) feature: total-variation distance of
  // the weights from those without it.
  const MatrixXd A0 = attn::kernel_attention_weights(
      attn::positive_random_features(Q, W, attn::Stabiliser::per_row),
      attn::positive_random_features(K, W, attn::Stabiliser::global));
  say(text,
      "   epsilon added to the stabilised features: mean total variation from eps = 0\n");
  for (const double eps : {1e-8, 1e-6, 1e-4, 1e-2}) {
    const MatrixXd A1 = attn::kernel_attention_weights(
        attn::positive_random_features(Q, W, attn::Stabiliser::per_row, eps),
        attn::positive_random_features(K, W, attn::Stabiliser::global, eps));
    const double tv = 0.5 * (A1 - A0).cwiseAbs().rowwise().sum().mean();
    say(text, "     eps = {:g}: {:.2e}\n", eps, tv);
    results[fmt::format("epsilon_tv_{:g}", eps)] = tv;
  }

  // How well each map approximates the softmax weights: mean total variation distance
  // between the rows of the approximate and the exact weight matrices.
  const MatrixXd target = attn::softmax_rows(Q * K.transpose());
  struct Row {
    std::string label, key;
    MatrixXd phiQ, phiK;
  };
  const MatrixXd Wo = attn::orthogonal_directions(m, d, rng);
  const MatrixXd Wt = attn::gaussian_directions(m / 2, d, rng);
  std::vector<Row> maps{
      {fmt::format("positive, r = {}", m), "positive", phiQ, phiK},
      {fmt::format("orthogonal, r = {}", m), "orthogonal",
       attn::positive_random_features(Q, Wo), attn::positive_random_features(K, Wo)},
      {fmt::format("trigonometric, r = {}", m / 2), "trigonometric",
       attn::trig_random_features(Q, Wt), attn::trig_random_features(K, Wt)},
      {"Taylor, p = 2", "taylor_p2", attn::taylor_features(Q, 2),
       attn::taylor_features(K, 2)},
      {"exp-limit, p = 2", "exp_limit_p2", attn::exp_limit_features(Q, 2),
       attn::exp_limit_features(K, 2)}};
  say(text, "   weights vs softmax(Q K^T): {:<22} {:>6} {:>12} {:>10}\n", "map", "D",
      "mean TV", "min w");
  for (const Row& r : maps) {
    // [tv-distance]
    const MatrixXd W_raw = r.phiQ * r.phiK.transpose();
    const MatrixXd A_hat = W_raw.rowwise().sum().cwiseInverse().asDiagonal() * W_raw;
    const double tv = 0.5 * (A_hat - target).cwiseAbs().rowwise().sum().mean();
    // [tv-distance]
    say(text, "   {:>27} {:<22} {:>6} {:>12.4f} {:>10.2e}\n", "", r.label, r.phiQ.cols(),
        tv, W_raw.minCoeff());
    results["attention_tv_" + r.key] = tv;
    results["attention_min_weight_" + r.key] = W_raw.minCoeff();
  }
  say(text,
      "   (TV: half the L1 distance between weight rows, averaged over queries; 0 is\n"
      "   exact, 1 is disjoint. min w: the smallest unnormalised weight)\n\n");
}

// ------------------------------------------------------------------------------------
// 6. Rank: phi(Q) phi(K)^T has rank <= m; exp(s Q K^T) is numerically full rank at s ~ 1.
void rank(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
          std::string& text, harness::Results& results) {
  const Index N = o.n, d = o.d;
  const double sigma = std::pow(double(d), -0.25);  // logits with variance 1
  const MatrixXd Q = attn::random_normal(N, d, rng, sigma),
                 K = attn::random_normal(N, d, rng, sigma);
  say(text,
      "6. Rank of n x n attention matrices, n = {}, d_k = {} (tolerance 1e-10 sigma_1)\n",
      N, d);
  // [rank]
  const MatrixXd A = attn::softmax_rows(Q * K.transpose());
  const Index small_m = std::min<Index>(16, N), big_m = std::min<Index>(o.m, N);
  const MatrixXd W16 = attn::gaussian_directions(small_m, d, rng),
                 Wm = attn::gaussian_directions(big_m, d, rng);
  const MatrixXd L16 = attn::kernel_attention_weights(
      attn::positive_random_features(Q, W16), attn::positive_random_features(K, W16));
  const MatrixXd Lm = attn::kernel_attention_weights(
      attn::positive_random_features(Q, Wm), attn::positive_random_features(K, Wm));
  const VectorXd sA = attn::singular_values(A);
  const VectorXd s16 = attn::singular_values(L16);
  const VectorXd sm = attn::singular_values(Lm);
  // [rank]
  MatrixXd spectra(N, 4);
  for (Index i = 0; i < N; ++i)
    spectra.row(i) << double(i + 1), sA(i) / sA(0), s16(i) / s16(0), sm(i) / sm(0);
  harness::write_csv(out / "05-spectra.csv",
                  {"index", "softmax", fmt::format("linear_r{}", small_m),
                   fmt::format("linear_r{}", big_m)},
                  spectra);
  const auto rank_of = [](const VectorXd& s) {
    return (s.array() > 1e-10 * s(0)).count();
  };
  say(text, "   numerical rank: softmax {}, linear r = {}: {}, linear r = {}: {}\n",
      rank_of(sA), small_m, rank_of(s16), big_m, rank_of(sm));
  say(text,
      "   sigma_(r+1)/sigma_1 of the linear ones: {:.1e} (r = {}), {:.1e} (r = {})\n",
      small_m < N ? s16(small_m) / s16(0) : 0.0, small_m,
      big_m < N ? sm(big_m) / sm(0) : 0.0, big_m);
  results["rank_softmax"] = rank_of(sA);
  results["rank_linear_r16"] = rank_of(s16);
  results["rank_linear_r"] = rank_of(sm);
  results["softmax_sigma_min_rel"] = sA(N - 1) / sA(0);
  if (small_m < N) results["linear_sigma_next_rel_r16"] = s16(small_m) / s16(0);
  if (big_m < N) results["linear_sigma_next_rel_r"] = sm(big_m) / sm(0);

  // Numerical rank of softmax(s Q K^T) as the logit scale s changes, and the distinct
  // keys that are some query's favourite: the rank of the one-hot limit s -> infinity.
  const MatrixXd logits = Q * K.transpose();
  std::vector<Index> favourite;
  double gap = std::numeric_limits<double>::infinity();  // smallest top-two logit gap
  for (Index r = 0; r < N; ++r) {
    Index j = 0;
    const double top = logits.row(r).maxCoeff(&j);
    Eigen::RowVectorXd rest = logits.row(r);
    rest(j) = -std::numeric_limits<double>::infinity();
    gap = std::min(gap, top - rest.maxCoeff());
    favourite.push_back(j);
  }
  std::sort(favourite.begin(), favourite.end());
  const double distinct = double(
      std::distance(favourite.begin(), std::unique(favourite.begin(), favourite.end())));
  std::vector<std::vector<harness::CsvCell>> rows;
  say(text, "   numerical rank of softmax(s Q K^T):");
  for (int i = 0; i <= 24; ++i) {
    const double s = std::pow(10.0, -2 + i / 6.0);  // 0.01 .. 1e2
    harness::progress(fmt::format("rank at logit scale {:.3g}", s));
    const MatrixXd As = attn::softmax_rows(s * logits);
    const Index r10 = attn::numerical_rank(As, 1e-10),
                r6 = attn::numerical_rank(As, 1e-6);
    rows.push_back({s, double(r10), double(r6), distinct});
    if (i % 6 == 0) {
      say(text, " s = {:g}: {}", s, r10);
      results[fmt::format("rank_softmax_scale_{:g}", s)] = r10;
    }
    if (i == 24) results["distinct_favourite_keys"] = distinct;
  }
  harness::progress("");
  // The saturated limit: at s = 100 / gap every weight but a row's largest is below
  // e^{-100}, so each row is one-hot to rounding and the rank is that of a 0/1 matrix.
  const Index r_saturated =
      attn::numerical_rank(attn::softmax_rows((100 / gap) * logits), 1e-10);
  results["rank_softmax_saturated"] = r_saturated;
  results["saturation_scale"] = 100 / gap;
  say(text,
      "\n   {} distinct keys are some query's largest logit; at s = 100 / (smallest gap "
      "between a\n   row's two largest logits) = {:.3g} every row is one-hot to rounding "
      "and the rank is {}\n\n",
      distinct, 100 / gap, r_saturated);
  harness::write_csv(out / "05-rank-scale.csv",
                  {"scale", "rank_1e10", "rank_1e6", "favourites"}, rows);
}

// ------------------------------------------------------------------------------------
// 7. Time: softmax attention O(N^2 d) against linear attention O(N m d).
double seconds_per_call(const std::function<void()>& f, bool quick) {
  using clock = std::chrono::steady_clock;
  std::vector<double> runs;
  double total = 0;
  // Five runs, or two once a point has taken a second (the largest n).
  // (--quick: three runs of at least 5 ms each.)
  const int reps = quick ? 3 : 5;
  const double min_run = quick ? 0.005 : 0.02;
  for (int rep = 0; rep < reps && (rep < 2 || total < 1.0); ++rep) {
    int calls = 0;
    const auto start = clock::now();
    double elapsed = 0;
    do {
      f();
      ++calls;
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
    } while (elapsed < min_run);
    runs.push_back(elapsed / calls);
    total += elapsed;
  }
  // The fastest run: other processes on a shared machine only ever add time.
  return *std::min_element(runs.begin(), runs.end());
}

// The times go to `terminal` (printed, not written to output.txt, which the book quotes and
// which is reproducible bit for bit from the seed) and to results.json under time_* keys.
void timing(const Options& o, attn::Rng& rng, const std::filesystem::path& out,
            std::string& text, std::string& terminal, harness::Results& results) {
  const Index d = o.d, m = o.m;
  const int max_soft = std::min<int>(12, int(o.max_log2_n));
  say(text,
      "7. Time per call, d_k = {}, r = {}, n = 2^5 .. 2^{}: printed on the terminal, not "
      "here\n   (times depend on the machine); results.json has them under time_* "
      "keys\n\n",
      d, m, o.max_log2_n);
  say(terminal, "7. Time per call (fastest of up to 5 runs), d_k = {}, r = {}\n", d, m);
  say(terminal, "   {:>8} {:>14} {:>14}\n", "n", "softmax (s)", "linear (s)");
  const MatrixXd W = attn::gaussian_directions(m, d, rng);
  const double qk_scale = std::pow(double(d), -0.25);
  std::vector<std::vector<harness::CsvCell>> rows;
  std::vector<double> Ns, soft, lin, Ns_soft;
  for (int j = 5; j <= o.max_log2_n; ++j) {
    const Index N = Index(1) << j;
    harness::progress(fmt::format("timing at n = 2^{}", j));
    const MatrixXd Q = attn::random_normal(N, d, rng), K = attn::random_normal(N, d, rng),
                   V = attn::random_normal(N, d, rng);
    const MatrixXd Qs = qk_scale * Q, Ks = qk_scale * K;  // the 1/sqrt(d_k), split
    double ts = std::nan("");
    if (j <= max_soft) {
      ts = seconds_per_call(
          [&] {
            const MatrixXd Y = attn::attention_row_blocks(Q, K, V);
            if (!Y.allFinite())
              throw std::runtime_error("softmax attention: non-finite output");
          },
          o.common.quick);
      soft.push_back(ts);
      Ns_soft.push_back(double(N));
    }
    // [timed-linear]
    const double tl = seconds_per_call(
        [&] {
          const MatrixXd Y =
              attn::streamed_positive_feature_attention(Qs, Ks, V, W, o.block);
          if (!Y.allFinite())
            throw std::runtime_error("linear attention: non-finite output");
        },
        o.common.quick);
    // [timed-linear]
    Ns.push_back(double(N));
    lin.push_back(tl);
    rows.push_back({double(N), std::isnan(ts) ? harness::CsvCell(std::string("")) : ts, tl});
    say(terminal, "   {:>8} {:>14} {:>14.3e}\n", N,
        std::isnan(ts) ? std::string("-") : fmt::format("{:.3e}", ts), tl);
    results[fmt::format("time_linear_seconds_n{}", N)] = tl;
    if (!std::isnan(ts)) results[fmt::format("time_softmax_seconds_n{}", N)] = ts;
  }
  harness::progress("");
  // Crossover: the first grid interval after which linear attention stays faster,
  // interpolated on the log-log scale.
  double crossover = std::nan("");
  for (std::size_t i = soft.size(); i-- > 0;) {
    if (lin[i] >= soft[i]) {
      if (i + 1 < soft.size()) {
        const double a = std::log(soft[i] / lin[i]),
                     b = std::log(soft[i + 1] / lin[i + 1]);
        crossover = Ns[i] * std::pow(2.0, a / (a - b));
      }
      break;
    }
    if (i == 0) crossover = Ns[0];  // faster everywhere we measured
  }
  // Slopes: softmax over its last 4 points, linear from N = 2^12 on (or its last 4).
  const auto tail = [](const std::vector<double>& v, std::size_t k) {
    return std::vector<double>(v.end() - long(std::min(k, v.size())), v.end());
  };
  const std::size_t lin_k = o.max_log2_n >= 15 ? std::size_t(o.max_log2_n - 12 + 1) : 4;
  const ch05::Fit fs = ch05::fit_loglog(tail(Ns_soft, 4), tail(soft, 4));
  const ch05::Fit fl = ch05::fit_loglog(tail(Ns, lin_k), tail(lin, lin_k));
  say(terminal,
      "   fitted slopes: softmax {:.2f} +- {:.2f}, linear {:.2f} +- {:.2f} (2 SE)\n",
      fs.slope, 2 * fs.slope_se, fl.slope, 2 * fl.slope_se);
  if (std::isnan(crossover))
    say(terminal, "   linear attention was not faster at any n <= 2^{}\n", max_soft);
  else
    say(terminal, "   crossover: linear attention is faster beyond n ~ {:.0f}\n",
        crossover);
  std::string ratios;
  for (std::size_t i = 1; i < Ns.size(); ++i)
    if (Ns[i] > 4096) ratios += fmt::format(" {:.2f}", lin[i] / lin[i - 1]);
  if (!ratios.empty())
    say(terminal, "   linear time ratio per doubling of n beyond 2^12:{}\n", ratios);
  say(terminal, "\n");
  results["time_softmax_slope"] = fs.slope;
  results["time_softmax_slope_2se"] = 2 * fs.slope_se;
  results["time_linear_slope"] = fl.slope;
  results["time_linear_slope_2se"] = 2 * fl.slope_se;
  results["time_crossover_n"] = std::isnan(crossover) ? -1.0 : crossover;
  harness::write_csv(out / "05-timing.csv", {"N", "softmax", "linear"}, rows);
}

void run(Options& o) {
  // Sizes that would not fit are refused before anything is written.
  const auto refuse = [](const std::string& option, auto&& check) {
    try {
      check();
    } catch (const attn::feature_size_error& e) {
      throw harness::usage_error(option, e.what());
    }
  };
  refuse("--order", [&] {
    attn::check_feature_size(
        fmt::format("the Taylor map of order {} in d_k = {}", o.order, d_poly), 16,
        attn::taylor_feature_dim(d_poly, int(o.order)));
  });
  refuse("--exp-order", [&] {
    attn::check_feature_size(
        fmt::format("the exp-limit map of power {} in d_k = {}", o.exp_n, d_poly), 16,
        attn::exp_limit_feature_dim(d_poly, int(o.exp_n)));
  });
  refuse("--d", [&] {
    attn::check_feature_size(fmt::format("the Taylor map of order 2 in d_k = {}", o.d),
                             o.n, attn::taylor_feature_dim(o.d, 2));
  });
  {  // the timing holds Q, K, V, their scaled copies and the output: six n x d_k matrices
    const double bytes = 6.0 * 8.0 * double(o.d) * std::ldexp(1.0, int(o.max_log2_n));
    if (bytes > attn::default_feature_memory_limit)
      throw harness::usage_error(
          "--max-log2-n",
          fmt::format(
              "timing at n = 2^{} needs six {} x {} matrices, {:.1f} GiB, over the "
              "limit of {:.1f} GiB",
              o.max_log2_n, Index(1) << o.max_log2_n, o.d, bytes / (1 << 30),
              attn::default_feature_memory_limit / (1 << 30)));
  }
  if (o.m < 2 || o.m % 2 != 0)
    throw harness::usage_error("--r", fmt::format("must be even and >= 2 (got {})", o.m));
  if (o.d < 2) throw harness::usage_error("--d", fmt::format("must be >= 2 (got {})", o.d));

  const std::filesystem::path out = harness::begin_output(o.common.out);
  attn::Rng rng(o.common.seed);
  std::string text;
  harness::Results results;
  results["seed"] = o.common.seed;
  results["d"] = o.d;
  results["n"] = o.n;
  results["r"] = o.m;
  results["order"] = o.order;
  results["exp_order"] = o.exp_n;
  results["trials"] = o.trials;

  taylor(o, rng, out, text, results);
  exp_limit(o, rng, out, text, results);
  random_features(o, rng, out, text, results);
  equal_dimension(o, rng, out, text, results);
  attention_checks(o, rng, text, results);
  rank(o, rng, out, text, results);
  attn::Rng timing_rng(o.common.seed + 1);
  std::string times;
  timing(o, timing_rng, out, text, times, results);

  // Figures; the numbers they print in their keys are passed as gnuplot variables.
  const auto num = [](const harness::Results& r, const char* key) { return r.number(key); };
  harness::render_figure(out, "05-taylor-error");
  harness::render_figure(
      out, "05-exp-limit-error", "",
      fmt::format("s1={};s2={};s3={};s4={}", num(results, "exp_limit_error_slope_t-2"),
                  num(results, "exp_limit_error_slope_t0.5"),
                  num(results, "exp_limit_error_slope_t1"),
                  num(results, "exp_limit_error_slope_t2")));
  harness::render_figure(
      out, "05-rf-error", "",
      fmt::format("in2='{}';sp={};so={};st={}", (out / "05-rf-kernel.csv").string(),
                  num(results, "rf_slope_positive"), num(results, "rf_slope_orthogonal"),
                  num(results, "rf_slope_trigonometric")));
  harness::render_figure(out, "05-equal-dimension");
  harness::render_figure(
      out, "05-spectra", "",
      fmt::format("in2='{}';ma={};mb={}", (out / "05-rank-scale.csv").string(),
                  std::min<long>(16, o.n), std::min(o.m, o.n)));
  harness::render_figure(out, "05-timing", "",
                      fmt::format("crossover={};ss={};sl={};d={};m={}",
                                  std::max(0.0, num(results, "time_crossover_n")),
                                  num(results, "time_softmax_slope"),
                                  num(results, "time_linear_slope"), o.d, o.m));
  // The times are printed but kept out of output.txt, which the book quotes: they depend on
  // the machine and on what else runs, unlike every other number here.
  harness::finish_program(out, results, text, times);
}

}  // namespace

int main(int argc, char** argv) {
  attn::keep_freed_memory();  // time the arithmetic, not page faults
  Options o;
  harness::CommandLine cli{
      "Chapter 05 — Softmax attention as infinite-dimensional linear attention.", "ch05"};
  harness::add_common_options(cli, o.common, ATTN_DEFAULT_OUT);
  harness::add_int_option(cli, "--d", o.d, 2, 1024,
                       "head width d_k (attention, random features, timing)");
  harness::add_int_option(cli, "--n", o.n, 2, 4096,
                       "tokens of the attention and rank experiments");
  harness::add_int_option(cli, "--r", o.m, 2, 65536, "random features r (even)");
  harness::add_int_option(cli, "--order", o.order, 1, 64,
                       "largest Taylor order p whose feature map is built, in d_k = 4");
  harness::add_int_option(
      cli, "--exp-order", o.exp_n, 1, 64,
      "largest power p whose exp-limit feature map is built, in d_k = 4");
  harness::add_int_option(cli, "--trials", o.trials, 20, 1'000'000,
                       "Monte Carlo trials per point");
  harness::add_int_option(cli, "--max-log2-n", o.max_log2_n, 8, 24,
                       "timing: linear attention up to N = 2^this (softmax up to 2^12)");
  harness::add_int_option(cli, "--block", o.block, 1, 65536,
                       "timing: rows per block of the streamed linear attention");
  return harness::run_program(cli, argc, argv, [&] {
    if (o.common.quick) {  // --quick shrinks only what the user did not set
      if (!harness::option_given(cli, "--trials")) o.trials = 100;
      if (!harness::option_given(cli, "--max-log2-n")) o.max_log2_n = 10;
      if (!harness::option_given(cli, "--n")) o.n = 128;
    }
    run(o);
  });
}
