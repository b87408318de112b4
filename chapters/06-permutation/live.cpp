// Chapter 06's live figures: what the page computes when a reader reorders the tokens or
// switches a bias (code/live/live.hpp explains the mechanism; live.js draws the results).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/transformer_block.hpp"
#include "ch06.hpp"
#include "live.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// The tokens and the layer of Figure 6.1: the chapter program's section 4 with its default
// options and seed 1. All sections of the program draw from one random stream, so this runs
// them all (ch06::sections, as the program does) and keeps the pattern; the page test checks
// that max|A(PX) - A(X)| at the figure's order is the program's pattern_change_in_place.
const ch06::Pattern& pattern_data() {
  static const ch06::Pattern data = [] {
    attn::Rng rng(1);
    return ch06::sections(ch06::Sizes{}, rng).pattern;
  }();
  return data;
}

// Figure 6.1 live: the eight tokens in the reader's order, the layer with the biases the
// reader switches on, and the sinusoidal encoding E added at the positions (or not).
// f(X) = Attn(X + E): equivariant without E, not with it.
live::Figure reorder(const live::Params& p) {
  const ch06::Pattern& data = pattern_data();
  const Index n = data.X.rows(), d = data.X.cols();
  const std::vector<int> order = p.integers("order", 0, int(n) - 1);
  attn::Permutation perm(order.begin(), order.end());
  std::vector<Index> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = Index(sorted.size()) == n;
  for (Index i = 0; is_permutation && i < n; ++i) is_permutation = sorted[std::size_t(i)] == i;
  if (!is_permutation) {
    std::string message = "order must list each of the tokens 0..";
    message += std::to_string(n - 1);
    message += " once";
    throw std::invalid_argument(message);
  }
  attn::AttentionParams layer = data.p;
  const auto keep = [&p](const std::string& name, VectorXd& bias) {
    if (p.integer(name, 0, 1) == 0) bias = VectorXd();
  };
  keep("bq", layer.b_Q);
  keep("bk", layer.b_K);
  keep("bv", layer.b_V);
  const bool encoded = p.integer("pe", 0, 1) == 1;
  const MatrixXd E = encoded ? attn::sinusoidal_encoding(n, d) : MatrixXd::Zero(n, d);

  const auto f_with = [&E](const attn::AttentionParams& q) {
    return [&E, q](const MatrixXd& Y) { return attn::cross_attention(Y + E, Y + E, q); };
  };
  const MatrixXd PX = attn::permute_rows(data.X, perm);
  // A: the tokens in order 0..n-1; A_perm: row and column i hold token perm[i]
  const MatrixXd A = ch06::pattern_weights(data.X + E, layer);
  const MatrixXd A_perm = ch06::pattern_weights(PX + E, layer);
  const MatrixXd A_moved = ch06::permute_both(A, perm);  // P A(X) Pᵀ

  // How far f(PX) moves when one bias is switched (the other settings as they are).
  const auto bias_change = [&](VectorXd attn::AttentionParams::*bias) {
    attn::AttentionParams on = layer, off = layer;
    on.*bias = data.p.*bias;
    off.*bias = VectorXd();
    return ch06::output_shift(PX + E, on, off).lpNorm<Eigen::Infinity>();
  };

  std::vector<std::string> tokens;
  for (const Index t : perm) {
    std::string label = "x";  // (not "x" + ...: GCC 12 warns wrongly about that at -O3)
    label += std::to_string(t);
    tokens.push_back(label);
  }
  std::vector<std::string> figure_order;
  for (const Index t : data.perm) figure_order.push_back(std::to_string(t));
  live::Figure fig;
  fig.labels("tokens", tokens).labels("figure_order", figure_order);
  fig.matrix("weights", A_perm).matrix("weights_moved", A_moved);
  // the same in percent, as Figure 6.1 prints them (the cells' text)
  fig.matrix("weights_pct", 100 * A_perm).matrix("weights_moved_pct", 100 * A_moved);
  fig.number("equivariance", attn::equivariance_residual(f_with(layer), data.X, perm));
  fig.number("weights_residual", (A_perm - A_moved).lpNorm<Eigen::Infinity>());
  fig.number("change_in_place", (A_perm - A).lpNorm<Eigen::Infinity>());
  fig.number("bias_change_K", bias_change(&attn::AttentionParams::b_K));
  fig.number("bias_change_Q", bias_change(&attn::AttentionParams::b_Q));
  fig.number("bias_change_V", bias_change(&attn::AttentionParams::b_V));
  fig.number("max_abs_bV", data.p.b_V.lpNorm<Eigen::Infinity>());
  return fig;
}

const bool added = live::add("ch06_reorder", reorder);

}  // namespace
