#pragma once
// Chapter 05 — for the program only (not part of the chapter's module ch05.hpp, which the
// live figures share): how it records fits and draws figures, and the timing of
// softmax attention against streamed linear attention (README section 8). The times depend
// on the machine, so they are printed on the terminal and kept in results.json under time_*
// keys, never in output.txt.

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "attn/random.hpp"
#include "attn/tiled_attention.hpp"
#include "ch05.hpp"
#include "harness/output.hpp"

namespace ch05 {

inline std::string key(std::string_view prefix, double x) {
  return fmt::format("{}{:g}", prefix, x);
}

// Records a fitted slope and two standard errors as <prefix><suffix>, <prefix>_2se<suffix>.
inline Fit put_fit(harness::Report& report, const std::string& prefix,
                   const std::string& suffix, Fit f) {
  report.put(prefix + suffix, f.slope);
  report.put(prefix + "_2se" + suffix, 2 * f.slope_se);
  return f;
}

// Writes `table` (a matrix or CSV rows) as <name>.csv and draws figures/<name>.gp from it.
template <typename Table>
void plot(const std::filesystem::path& out, const std::string& name,
          const std::vector<std::string>& header, const Table& table,
          const std::string& variables = "") {
  harness::write_csv(out / (name + ".csv"), header, table);
  harness::render_figure(out, name, "", variables);
}

// Seconds per call of f: the fastest of five runs (two once a point has taken a second),
// each of repeated calls for at least 20 ms; --quick: three runs of at least 5 ms. The
// fastest, because other processes on a shared machine only ever add time.
inline double seconds_per_call(const std::function<void()>& f, bool quick) {
  using clock = std::chrono::steady_clock;
  std::vector<double> runs;
  double total = 0;
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
  return *std::min_element(runs.begin(), runs.end());
}

// Seconds per call of softmax attention (up to n = 2^12) and of streamed linear attention
// with r positive random features, for n = 2^5 .. 2^max_log2_n and head width d.
struct Timings {
  std::vector<double> n, softmax, linear;
};

inline Timings time_attention(Index d, Index r, int max_log2_n, Index block, bool quick,
                              attn::Rng& rng) {
  const auto require_finite = [](const MatrixXd& Y, const char* what) {
    if (!Y.allFinite())
      throw std::runtime_error(std::string(what) + ": non-finite output");
  };
  const MatrixXd W = attn::gaussian_directions(r, d, rng);
  Timings t;
  for (int j = 5; j <= max_log2_n; ++j) {
    harness::progress(fmt::format("timing at n = 2^{}", j));
    const Index n = Index(1) << j;
    MatrixXd Q = attn::random_normal(n, d, rng), K = attn::random_normal(n, d, rng);
    const MatrixXd V = attn::random_normal(n, d, rng);
    if (j <= 12)
      t.softmax.push_back(seconds_per_call(
          [&] {
            require_finite(attn::attention_row_blocks(Q, K, V, attn::Masking::none, 1),
                           "softmax attention");
          },
          quick));
    Q *= std::pow(double(d), -0.25);  // the 1/sqrt(d_k), split between queries and keys
    K *= std::pow(double(d), -0.25);  // (in place: no copies of the largest matrices)
    // [timed-linear]
    const double seconds = seconds_per_call(
        [&] {
          const MatrixXd Y = attn::streamed_positive_feature_attention(Q, K, V, W, block);
          require_finite(Y, "linear attention");
        },
        quick);
    // [timed-linear]
    t.n.push_back(double(n));
    t.linear.push_back(seconds);
  }
  harness::progress("");
  return t;
}

// The sequence length beyond which linear attention stays faster than softmax attention:
// the first grid interval after which it is faster at every n where both were measured,
// interpolated on the log-log scale; n[0] if it was faster everywhere, -1 if it was not
// faster at the largest n.
inline double crossover(const Timings& t) {
  for (std::size_t i = t.softmax.size(); i-- > 0;) {
    if (t.linear[i] >= t.softmax[i]) {
      if (i + 1 == t.softmax.size()) return -1;
      const double a = std::log(t.softmax[i] / t.linear[i]),
                   b = std::log(t.softmax[i + 1] / t.linear[i + 1]);
      return t.n[i] * std::pow(2.0, a / (a - b));
    }
  }
  return t.softmax.empty() ? -1 : t.n[0];
}

// Records the timings: results.json gets each time, the fitted slopes (softmax over its last 4
// points, linear from n = 2^12 on, or its last 4) with two standard errors and the crossover
// (-1: none) under time_* keys; 05-timing.csv and its figure go to `out`. Returns what the
// program prints about them, which stays out of output.txt: times depend on the machine.
inline std::string report_timings(Index d, Index r, const Timings& t,
                                  const std::filesystem::path& out,
                                  harness::Report& report) {
  std::string text = fmt::format(
      "7. Time per call (fastest of up to 5 runs), d_k = {}, r = {}\n"
      "          n    softmax (s)     linear (s)\n",
      d, r);
  std::vector<std::vector<harness::CsvCell>> rows;
  for (std::size_t i = 0; i < t.n.size(); ++i) {
    const bool softmax = i < t.softmax.size();  // measured up to n = 2^12
    const long n = long(t.n[i]);
    report.put(fmt::format("time_linear_seconds_n{}", n), t.linear[i]);
    if (softmax) report.put(fmt::format("time_softmax_seconds_n{}", n), t.softmax[i]);
    rows.push_back({t.n[i], softmax ? harness::CsvCell(t.softmax[i]) : "", t.linear[i]});
    text += fmt::format("   {:>8} {:>14} {:>14.3e}\n", n,
                        softmax ? fmt::format("{:.3e}", t.softmax[i]) : "-", t.linear[i]);
  }
  const Fit fs = put_fit(report, "time_softmax_slope", "",
                         fit_loglog_tail(t.n, t.softmax, 4)),
            fl = put_fit(report, "time_linear_slope", "",
                         fit_loglog_tail(t.n, t.linear,
                                         std::max<std::size_t>(t.n.size(), 11) - 7));
  const double n_cross = report.put("time_crossover_n", crossover(t));
  plot(out, "05-timing", {"n", "softmax", "linear"}, rows,
       fmt::format("crossover={};ss={};sl={};d={};r={}", std::max(0.0, n_cross), fs.slope,
                   fl.slope, d, r));
  text += fmt::format(
      "   fitted slopes: softmax {:.2f} +- {:.2f}, linear {:.2f} +- {:.2f} (2 SE)\n",
      fs.slope, 2 * fs.slope_se, fl.slope, 2 * fl.slope_se);
  text +=
      n_cross < 0
          ? "   linear attention was not faster at the largest n timed for both\n"
          : fmt::format("   crossover: linear attention is faster beyond n ~ {:.0f}\n",
                        n_cross);
  if (t.n.size() > 8) text += "   linear time ratio per doubling of n beyond 2^12:";
  for (std::size_t i = 8; i < t.n.size(); ++i)
    text += fmt::format(" {:.2f}", t.linear[i] / t.linear[i - 1]);
  return text + (t.n.size() > 8 ? "\n\n" : "\n");
}

}  // namespace ch05
