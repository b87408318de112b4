#pragma once
// Chapter 03 — summaries of the training experiments (section 7 of the chapter): a
// configuration's runs, timed; numbers over the runs (medians, the loss curves' geometric
// mean and spread); what the identity system's training found. main.cpp reports them and
// writes the figures.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "harness/output.hpp"

namespace ch03 {

using Eigen::Index;
using Eigen::MatrixXd;

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The runs of one configuration and one h.
struct Trained {
  std::vector<attn::RunResult> runs;  // empty: this h was not trained
  double seconds = 0;                 // wall time of all runs (not reproducible)
};

inline Trained train(const attn::ExperimentConfig& config) {
  const auto start = std::chrono::steady_clock::now();
  Trained t{attn::run_experiment(config)};
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  t.seconds = elapsed.count();
  return t;
}

// f(run) for every run.
template <typename F>
std::vector<double> each(const Trained& t, F f) {
  std::vector<double> v;
  for (const attn::RunResult& run : t.runs) v.push_back(f(run));
  return v;
}

// Geometric mean and geometric standard deviation factor of positive numbers.
inline std::pair<double, double> geometric(const std::vector<double>& v) {
  double s = 0, s2 = 0;
  for (const double x : v) {
    s += std::log(x);
    s2 += std::log(x) * std::log(x);
  }
  const double m = s / double(v.size());
  const double var =
      v.size() > 1 ? (s2 - double(v.size()) * m * m) / double(v.size() - 1) : 0;
  return {std::exp(m), std::exp(std::sqrt(std::max(var, 0.0)))};
}

// Training time of one Adam iteration (forward, backward, update), averaged over the runs.
inline double ms_per_iteration(const Trained& t) {
  double s = 0;
  for (const auto& run : t.runs) s += run.seconds / double(run.loss.size() - 1);
  return 1e3 * s / double(t.runs.size());
}

// The loss curves of one configuration, the data of its figure: per iteration, for h = id
// and h = softmax, the geometric mean over the runs and a x/÷ one geometric-sd band (empty
// cells for an h not trained), then the least-squares loss `ls`; and the first iteration
// at which the id curve is within 1% of `ls` (-1: none).
struct LossCurves {
  std::vector<std::vector<harness::CsvCell>> rows;
  long within_1pct = -1;
};

inline LossCurves loss_curves(const Trained& id, const Trained& sm, double ls) {
  LossCurves curves;
  const std::size_t points = (id.runs.empty() ? sm : id).runs.front().loss.size();
  for (std::size_t t = 0; t < points; ++t) {
    std::vector<harness::CsvCell> row{double(t)};
    for (const Trained* h : {&id, &sm}) {
      if (h->runs.empty()) {
        row.insert(row.end(), 3, std::string());
        continue;
      }
      const auto [m, f] = geometric(each(*h, [t](auto& run) { return run.loss[t]; }));
      row.insert(row.end(), {m, m / f, m * f});
      if (h == &id && curves.within_1pct < 0 && m <= 1.01 * ls)
        curves.within_1pct = long(t);
    }
    row.push_back(ls);
    curves.rows.push_back(row);
  }
  return curves;
}

// What the identity system's training found, median over the runs: small projections
// (mean |entry| of W_Q and W_K, |w_v|), and a product w_v W_Q W_K^T that is not
// (X^T X)^-1 (its relative distance from it), although beta_eq is beta_LS: d equations
// for d^2 unknowns. Each run's X is drawn again from its seed, as run_experiment() drew it.
struct Found {
  double mean_abs_W = 0, abs_w_v = 0, product_vs_xtx_inverse = 0;
};

inline Found what_training_found(const Trained& id, std::uint64_t seed, Index n,
                                 Index d) {
  std::vector<double> size_w, size_v, product;
  for (std::size_t k = 0; k < id.runs.size(); ++k) {
    const attn::AttentionRegressor& p = id.runs[k].parameters;
    attn::Rng data_rng(attn::run_seed(seed, int(k), 0));
    const MatrixXd X = attn::regression_data(n, d, data_rng).X;
    size_w.push_back(0.5 * (p.W_Q.cwiseAbs().mean() + p.W_K.cwiseAbs().mean()));
    size_v.push_back(std::abs(p.w_v));
    product.push_back(attn::relative_error(p.w_v * p.W_Q * p.W_K.transpose(),
                                           (X.transpose() * X).inverse()));
  }
  return {median(size_w), median(size_v), median(product)};
}

}  // namespace ch03
