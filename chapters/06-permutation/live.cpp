// Chapter 06's live figures: what the page computes when a reader reorders the tokens or
// switches a bias (code/live/live.hpp explains the mechanism; live.js draws the results).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/transformer_block.hpp"
#include "live.hpp"
#include "setup.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// The tokens and the layer of Figure 6.1: the chapter program's section 4 with its default
// options (seed 1, n = 8, d = 16, 2 heads, d_ff = 32, 20 permutations). All sections of
// main.cpp draw from one random stream, so this replays the draws of sections 1 to 3 (the
// same ch06:: calls in the same order, results discarded) before drawing section 4's. The
// page test checks the replay: max|A(PX) - A(X)| at the figure's order is the program's
// pattern_change_in_place.
struct PatternData {
  MatrixXd X;                // 8 tokens x 16 features
  attn::AttentionParams p;   // one head with all three biases
  attn::Permutation perm;    // the order of the figure's middle panel
};

PatternData program_pattern_data() {
  const Index n = 8, d = 16, heads = 2, d_ff = 32, perms = 20;
  attn::Rng rng(1);
  // Section 1: X, Z, two attention layers, three blocks, LayerNorm, two token norms, then
  // `perms` permutations for each of the 19 variants (two of them permute Z, n + 3 rows).
  attn::random_normal(n, d, rng);
  attn::random_normal(n + 3, d, rng);
  ch06::random_attention(d, d, d, false, rng);
  ch06::random_attention(d, d, d, true, rng);
  for (const auto placement :
       {attn::NormPlacement::post, attn::NormPlacement::pre, attn::NormPlacement::inner})
    ch06::random_block(d, heads, d_ff, rng, placement);
  ch06::random_layer_norm(d, rng);
  ch06::random_token_norm(n, false, rng);
  ch06::random_token_norm(n, true, rng);
  for (int variant = 0; variant < 19; ++variant) {
    const bool permutes_Z = variant == 13 || variant == 15;  // cross-attention keys; keys alone
    for (Index k = 0; k < perms; ++k) ch06::moving_permutation(permutes_Z ? n + 3 : n, rng);
  }
  // Section 2: tokens and two layers; section 3: tokens and a bias.
  attn::random_normal(n, d, rng);
  ch06::random_attention(d, d, d, false, rng);
  ch06::random_attention(d, d, d, true, rng);
  attn::random_normal(n, d, rng);
  ch06::vec(d, rng, 1.0);
  // Section 4: Figure 6.1.
  PatternData data;
  data.X = attn::random_normal(n, d, rng);
  data.p = ch06::random_attention(d, d, d, true, rng);
  data.perm = ch06::moving_permutation(n, rng);
  return data;
}

const PatternData& pattern_data() {
  static const PatternData data = program_pattern_data();
  return data;
}

// The weights A = softmax(QKᵀ/√d_k) of the tokens Y, as main.cpp computes Figure 6.1's.
MatrixXd weights(const MatrixXd& Y, const attn::AttentionParams& p) {
  MatrixXd Q = Y * p.W_Q, K = Y * p.W_K;
  if (p.b_Q.size() > 0) Q.rowwise() += p.b_Q.transpose();
  if (p.b_K.size() > 0) K.rowwise() += p.b_K.transpose();
  return attn::attention_weights(Q, K, MatrixXd());
}

// P A Pᵀ: entry (i, j) is A(π(i), π(j)), the weights moved with their query and key.
MatrixXd permute_both(const MatrixXd& A, const attn::Permutation& perm) {
  return attn::permute_rows(attn::permute_rows(A, perm).transpose(), perm).transpose();
}

// Figure 6.1 live: the eight tokens in the reader's order, the layer with the biases the
// reader switches on, and the sinusoidal encoding E added at the positions (or not).
// f(X) = Attn(X + E): equivariant without E, not with it.
live::Figure reorder(const live::Params& p) {
  const PatternData& data = pattern_data();
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
  const MatrixXd A = weights(data.X + E, layer);    // the tokens in order 0..n-1
  const MatrixXd A_perm = weights(PX + E, layer);   // row and column i hold token perm[i]
  const MatrixXd A_moved = permute_both(A, perm);   // P A(X) Pᵀ

  // How far f(PX) moves when one bias is switched (the other settings as they are).
  const auto bias_change = [&](VectorXd attn::AttentionParams::*bias) {
    attn::AttentionParams on = layer, off = layer;
    on.*bias = data.p.*bias;
    off.*bias = VectorXd();
    return (f_with(on)(PX) - f_with(off)(PX)).lpNorm<Eigen::Infinity>();
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
