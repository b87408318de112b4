// Chapter 06 — Permutation symmetry and bias terms.
//
// Measures, for random tokens and random permutations, how far each layer variant is from
// permutation equivariance (or invariance): attention with and without biases, LayerNorm,
// the FFN, whole blocks, and the things that break the symmetry (positional encoding,
// causal mask, per-position parameters). Then measures what each bias does to the output,
// with and without softmax, and draws an attention pattern before and after permuting the
// tokens. Writes output.txt (this summary), results.json, and the CSV + SVG of each figure;
// the computations themselves are chapter 06's module (ch06.hpp), which the live figure
// calls too.
//
// The sections run in the order of the output, which is not quite the chapter's (its
// section 1 is the pattern, drawn last here): all four draw from one random stream in the
// order of ch06::sections(), and results.json must stay the same for the same seed.

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attn/random.hpp"
#include "ch06.hpp"
#include "harness/cli.hpp"
#include "harness/output.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;

struct Options {
  harness::CommonOptions common;
  ch06::Sizes sizes;  // --n, --d, --heads, --d-ff, --perms
};

// ------------------------------------------------------------------------------------
// 1. Symmetry residuals of every variant, over --perms random permutations (chapter
// sections 1, 2, 5, 6 and 7; Figure 6.2).
void symmetry_residuals(const ch06::Sizes& s,
                        const std::vector<ch06::VariantResidual>& residuals,
                        const std::filesystem::path& out, harness::Report& r) {
  r.say("1. Symmetry residuals, max and min over {} random permutations\n", s.perms);
  r.say("   n = {} tokens, d = {}, {} heads, d_ff = {}; second sequence: {} tokens\n",
        s.n, s.d, s.heads, s.d_ff, s.n + 3);
  r.say(
      "   residual = max|f(PX) - P f(X)| / max|f(X)|   (inv.: max|f(PX) - f(X)| / "
      "...)\n");
  r.say("   {:<38} {:>10} {:>10}  {}\n", "variant", "max", "min", "claim");
  std::vector<std::vector<harness::CsvCell>> rows;
  double worst_symmetric = 0, weakest_broken = std::numeric_limits<double>::infinity();
  bool all_rows = true;
  for (std::size_t k = 0; k < residuals.size(); ++k) {
    const ch06::VariantResidual& v = residuals[k];
    if (v.not_done) {
      harness::part_waits(r, "   " + v.label, *v.not_done);
      all_rows = false;
      continue;
    }
    if (v.symmetric)
      worst_symmetric = std::max(worst_symmetric, v.max);
    else
      weakest_broken = std::min(weakest_broken, v.min);
    r.put("residual_max_" + v.key, v.max);
    r.put("residual_min_" + v.key, v.min);
    r.say("   {:<38} {:>10.2e} {:>10.2e}  {}\n", v.label, v.max, v.min,
          v.symmetric ? (v.invariance ? "invariant" : "equivariant") : "broken");
    // The figure draws a residual at rounding level on the floor (harness::rounding_floor):
    // its digits, and whether it is exactly 0, change with the CPU.
    rows.push_back({double(rows.size()), v.label, harness::at_least_rounding_floor(v.max),
                    harness::at_least_rounding_floor(v.min), v.symmetric ? 1.0 : 0.0});
  }
  const double eps = std::numeric_limits<double>::epsilon();
  harness::write_csv(out / "06-symmetry-residuals.csv",
                     {"index", "variant", "residual_max", "residual_min", "symmetric"},
                     rows);
  harness::render_figure(out, "06-symmetry-residuals", "",
                         fmt::format("rounding={:g}; nvar={}", harness::rounding_floor,
                                     rows.size()));
  if (!all_rows) {  // the summary below is over every variant
    r.say("\n");
    return;
  }
  r.say("   largest residual of a symmetric variant: {:.2e} (eps = {:.1e})\n",
        r.put("worst_symmetric_residual", worst_symmetric), eps);
  r.say("   smallest residual of a broken variant:   {:.2e}\n\n",
        r.put("weakest_broken_residual", weakest_broken));
  // The gap between the two groups: the largest symmetric residual over the smallest broken one.
  r.put("symmetric_over_broken", worst_symmetric / weakest_broken);
  // The three arrangements of a whole block, together.
  r.put("worst_block_residual",
        std::max({r.results.number("residual_max_block_post_ln"),
                  r.results.number("residual_max_block_pre_ln"),
                  r.results.number("residual_max_block_source_ln")}));
}

// ------------------------------------------------------------------------------------
// 2. What each bias does to the output, with softmax weights and with h = id (chapter
// sections 3 and 4).
void bias_effects(const ch06::Sizes& s, const ch06::BiasEffects& e, harness::Report& r) {
  r.say("2. Adding one bias at a time (self-attention, n = {}, d = {}); max |change|\n",
        s.n, s.d);
  r.say("   {:<14} {:>12} {:>12}\n", "bias", "softmax", "h = id");
  for (const ch06::BiasEffect& b : e.one_bias) {
    const double soft = r.put("bias_change_softmax_" + b.bias, b.softmax);
    const double id = r.put("bias_change_identity_" + b.bias, b.identity);
    r.say("   {:<14} {:>12.3e} {:>12.3e}\n", b.bias, soft, id);
  }
  r.say("   softmax: max |change - 1 b_V^T|       = {:.2e}  (rows of A sum to 1)\n",
        r.put("value_bias_softmax_shift_residual", e.softmax_shift_residual));
  r.say("   h = id:  max |change - (S 1) b_V^T|   = {:.2e}\n",
        r.put("value_bias_identity_rowsum_residual", e.identity_rowsum_residual));
  const double id_vs_plain =
      r.put("value_bias_identity_vs_plain_shift", e.identity_vs_plain_shift);
  const double lo = r.put("identity_row_sum_min", e.row_sum_min);
  const double hi = r.put("identity_row_sum_max", e.row_sum_max);
  r.say(
      "            max |change - 1 b_V^T|       = {:.2e}  (row sums of S: {:.2f} .. "
      "{:.2f})\n\n",
      id_vs_plain, lo, hi);
}

// ------------------------------------------------------------------------------------
// 3. LayerNorm and token-axis normalisation against a bias added to every token (chapter
// section 5).
void bias_then_normalisation(const ch06::NormalisationChanges& c, harness::Report& r) {
  r.say("3. A bias b added to every token, then a normalisation; max |change|\n");
  r.say("   LayerNorm, general b:          {:.3e}\n",
        r.put("layer_norm_change_general_bias", c.layer_norm_general_bias));
  r.say("   LayerNorm, b = mean(b) 1_d:    {:.3e}\n",
        r.put("layer_norm_change_constant_bias", c.layer_norm_constant_bias));
  r.say("   token-axis norm, general b:    {:.3e}\n\n",
        r.put("token_norm_change_general_bias", c.token_norm_general_bias));
}

// ------------------------------------------------------------------------------------
// 4. An attention pattern before and after permuting the tokens (chapter section 1;
// Figure 6.1).
void permuted_pattern(const ch06::Pattern& pt, const std::filesystem::path& out,
                      harness::Report& r) {
  const Index n = pt.X.rows();
  // Three panels: A(X); A(PX), labelled with the tokens its rows and columns hold; P^T A(PX) P.
  std::vector<std::vector<harness::CsvCell>> rows;
  const MatrixXd* panels[] = {&pt.A, &pt.A_perm, &pt.A_back};
  for (int panel = 0; panel < 3; ++panel)
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j) {
        const auto token = [&](Index t) {
          return fmt::format("x{}", panel == 1 ? pt.perm[std::size_t(t)] : t);
        };
        rows.push_back({double(panel), double(i), double(j), (*panels[panel])(i, j),
                        token(i), token(j)});
      }
  harness::write_csv(out / "06-permuted-pattern.csv",
                     {"panel", "row", "col", "weight", "row_token", "col_token"}, rows);
  harness::render_figure(out, "06-permuted-pattern", "", fmt::format("n={}", n));

  r.put("pattern_tokens", n);
  r.put("pattern_permuted_back_residual", pt.permuted_back_residual);
  const double in_place = r.put("pattern_change_in_place", pt.change_in_place);
  r.say("4. Attention weights of {} tokens (one head, with biases), permutation:", n);
  for (const auto j : pt.perm) r.say(" {}", j);
  r.say("\n   max |P^T A(PX) P - A(X)| = {:.2e}; max |A(PX) - A(X)| = {:.3f}\n",
        pt.permuted_back_residual, in_place);
}

void run(const Options& o, const harness::CommandLine& cli) {
  const ch06::Sizes& s = o.sizes;
  if (s.d % s.heads != 0)
    throw harness::usage_error(
        "--heads", fmt::format("must divide --d = {} (got {})", s.d, s.heads));
  // At most: three blocks (4 d x d and 2 d x d_ff weights each) and a few n x d_ff and n x n
  // matrices alive at once.
  const double n = double(s.n), d = double(s.d), d_ff = double(s.d_ff);
  harness::require_memory("--d-ff", 8 * (3 * (4 * d * d + 2 * d * d_ff) + 8 * d * d +
                                         8 * n * (d + d_ff) + 4 * n * n));
  const std::filesystem::path out = harness::begin_output(o.common.out);

  attn::Rng rng(o.common.seed);
  harness::Report r;
  harness::record_options(cli, r.results);

  // The four sections of ch06::sections(), in its order, each on its own
  // (harness::section): in the student copy, 1 waits for exercise 06.6 (equivariance_residual;
  // and for 01.6, causal_mask, in its causal block) and the others still run.
  harness::section(r, out, "1. Symmetry residuals", [&] {
    symmetry_residuals(s, ch06::symmetry_residuals(s, rng, harness::progress), out, r);
  });
  harness::section(r, out, "2. Adding one bias at a time",
                   [&] { bias_effects(s, ch06::bias_effects(s, rng), r); });
  harness::section(r, out, "3. A bias, then a normalisation",
                   [&] { bias_then_normalisation(ch06::bias_then_normalisation(s, rng), r); });
  harness::section(r, out, "4. The permuted pattern",
                   [&] { permuted_pattern(ch06::permuted_pattern(s, rng), out, r); });
  harness::finish_program(out, r);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  harness::CommandLine cli{"Chapter 06 — Permutation symmetry and bias terms.", "ch06"};
  harness::add_common_options(cli, o.common, ATTN_CHAPTER);
  harness::add_int_option(cli, "--n", o.sizes.n, 2, 1024,
                          "tokens (a permutation needs two)");
  harness::add_int_option(cli, "--d", o.sizes.d, 2, 1024, "model width");
  harness::add_int_option(cli, "--heads", o.sizes.heads, 1, 1024,
                          "attention heads in the blocks; must divide --d");
  harness::add_int_option(cli, "--d-ff", o.sizes.d_ff, 1, 8192,
                          "hidden width of the FFN");
  harness::add_int_option(cli, "--perms", o.sizes.perms, 1, 100'000,
                          "random permutations per variant", 5);
  return harness::run_program(cli, argc, argv, [&] { run(o, cli); });
}
