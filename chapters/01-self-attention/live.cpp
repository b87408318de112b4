// Chapter 01's live figures: what the page computes when a reader moves a control
// (code/live/live.hpp explains the mechanism; live.js draws the results).
#include <algorithm>
#include <cmath>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "ch01.hpp"
#include "live.hpp"

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// Figures 1.1 and 1.2 live: one query against ch01::keys = 16 keys with N(0,1) entries in dimension d,
// scores s·q·k, divided by √d or not.
live::Figure softmax_scale(const live::Params& p) {
  const int d = p.integer("d", 1, 1024);
  const double s = p.real("s", 0.01, 100);
  const bool scaled = p.integer("scaled", 0, 1) == 1;
  const int seed = p.integer("seed", 0, 1000000);
  attn::Rng rng(static_cast<attn::Rng::result_type>(seed));
  const MatrixXd q = attn::random_normal(1, d, rng);
  const MatrixXd K = attn::random_normal(ch01::keys, d, rng);
  VectorXd z = s * (K * q.transpose());
  if (scaled) z /= std::sqrt(static_cast<double>(d));
  const VectorXd w = attn::softmax(z);
  live::Figure f;
  f.vector("scores", z).vector("weights", w);
  f.number("max_weight", w.maxCoeff()).number("entropy", attn::entropy(w));
  f.number("log_n", std::log(double(ch01::keys)));
  f.number("jacobian_norm", ch01::jacobian_norm(w));
  f.number("score_std",
           std::sqrt((z.array() - z.mean()).square().sum() / (ch01::keys - 1)));
  return f;
}

// Figure 1.3 live: the toy sentence's weights softmax(s·XXᵀ/√4 + M), with or without the
// causal mask M.
live::Figure causal_toy(const live::Params& p) {
  const bool causal = p.integer("causal", 0, 1) == 1;
  const double s = p.real("s", 0.05, 5);
  const MatrixXd X = ch01::sentence_embeddings();
  const MatrixXd A = ch01::toy_attention_weights(X, causal, s);
  live::Figure f;
  f.labels("tokens", ch01::sentence).matrix("weights", A);
  f.number("future_weight_jin", ch01::later_weight(A, 0));
  f.number("min_weight", ch01::smallest_visible_weight(A, causal));
  return f;
}

const bool added = live::add("ch01_softmax_scale", softmax_scale) &&
                   live::add("ch01_causal_toy", causal_toy);

}  // namespace
