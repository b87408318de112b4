// Chapter 01's live figures: what the page computes when a reader moves a control
// (code/live/live.hpp explains the mechanism; live.js draws the results).
#include <algorithm>
#include <cmath>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "live.hpp"
#include "toy.hpp"

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// Figures 1.1 and 1.2 live: one query against 16 keys with N(0,1) entries in dimension d,
// scores s·q·k, divided by √d or not.
live::Figure softmax_scale(const live::Params& p) {
  const int d = p.integer("d", 1, 1024);
  const double s = p.real("s", 0.01, 100);
  const bool scaled = p.integer("scaled", 0, 1) == 1;
  const int seed = p.integer("seed", 0, 1000000);
  attn::Rng rng(static_cast<attn::Rng::result_type>(seed));
  const MatrixXd q = attn::random_normal(1, d, rng);
  const MatrixXd K = attn::random_normal(16, d, rng);
  VectorXd z = s * (K * q.transpose());
  if (scaled) z /= std::sqrt(static_cast<double>(d));
  const VectorXd w = attn::softmax(z);
  const double jacobian_norm =  // largest eigenvalue of diag(w) - w wᵀ, as in main.cpp
      Eigen::SelfAdjointEigenSolver<MatrixXd>(attn::softmax_jacobian(w), Eigen::EigenvaluesOnly)
          .eigenvalues()
          .maxCoeff();
  live::Figure f;
  f.vector("scores", z).vector("weights", w);
  f.number("max_weight", w.maxCoeff()).number("entropy", attn::entropy(w));
  f.number("log_n", std::log(16.0)).number("jacobian_norm", jacobian_norm);
  f.number("score_std", std::sqrt((z.array() - z.mean()).square().sum() / 15));
  return f;
}

// Figure 1.3 live: the toy sentence's weights softmax(s·XXᵀ/√4 + M), with or without the
// causal mask M.
live::Figure causal_toy(const live::Params& p) {
  const bool causal = p.integer("causal", 0, 1) == 1;
  const double s = p.real("s", 0.05, 5);
  const MatrixXd X = ch01::sentence_embeddings();
  const MatrixXd mask = causal ? attn::causal_mask(X.rows()) : MatrixXd();
  const MatrixXd A = attn::attention_weights(s * X, X, mask);
  live::Figure f;
  f.labels("tokens", ch01::sentence).matrix("weights", A);
  f.number("future_weight_jin", A.row(0).tail(X.rows() - 1).sum());
  double min_visible = 1;  // the smallest weight a token may give (masked ones are 0)
  for (Eigen::Index i = 0; i < A.rows(); ++i)
    for (Eigen::Index j = 0; j <= (causal ? i : A.cols() - 1); ++j)
      min_visible = std::min(min_visible, A(i, j));
  f.number("min_weight", min_visible);
  return f;
}

const bool added = live::add("ch01_softmax_scale", softmax_scale) &&
                   live::add("ch01_causal_toy", causal_toy);

}  // namespace
