#pragma once
// Chapter 01's computations, shared by the program (main.cpp prints, records and draws them),
// its tests and its live figures (live.cpp): the chapter's small hand-made data, the norm of
// the softmax Jacobian, and the toy sentence's attention weights.

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "attn/random.hpp"

namespace ch01 {

using Eigen::Index;

// Two-dimensional toy embeddings placed as in seed 004's picture: colours, speed and
// smell, furniture and animals in four quadrants.
inline const std::vector<std::string> words{"red",  "blue",     "green", "yellow", "fast",
                                            "slow", "fragrant", "table", "chair",  "dog",
                                            "cat",  "leopard",  "deer",  "horse"};

Eigen::MatrixXd word_embeddings();

// The six tokens of 今天天气很好 ("the weather is very good today"), romanised.
inline const std::vector<std::string> sentence{"jin", "tian", "tian", "qi", "hen", "hao"};

// Made-up four-dimensional embeddings for them (the seed gives none). Every row has norm
// sqrt(8), and the two "tian" are the same token, so they get the same row.
Eigen::MatrixXd sentence_embeddings();

// Seed 004's hand-written causal weight table for that sentence, as printed there.
Eigen::MatrixXd seed_weight_table();

// Section 1: every word a against the query word: a.q, |a - q|^2, |a|^2, and the largest
// |(|a|^2 + |q|^2 - 2 a.q) - |a - q|^2| (rounding: the identity is exact).
struct DotsAndDistances {
  Eigen::VectorXd dots, sq_dist, norms_sq;
  double identity_residual;
};
DotsAndDistances dots_and_distances(const Eigen::MatrixXd& E, Index query);

// Section 2: the context vectors C = W X of a weight table W (row t: c_t = sum_i w_ti x_i)
// and the row sums of W.
struct Context {
  Eigen::MatrixXd C;
  Eigen::VectorXd row_sums;
};
Context weighted_average(const Eigen::MatrixXd& W, const Eigen::MatrixXd& X);

// Section 5 looks at one query against this many keys (the figures' "16 keys").
constexpr Index keys = 16;

// The 2-norm of the softmax Jacobian J = diag(p) - p p^T at the weights p: J is symmetric
// positive semi-definite, so its 2-norm is its largest eigenvalue.
double jacobian_norm(const Eigen::VectorXd& p);

// Section 6: softmax attention of the tokens X (rows) on themselves with
// W_Q = W_K = W_V = I and the scores multiplied by s, softmax(s X X^T / sqrt(d) + M), M the
// causal mask or none.
Eigen::MatrixXd toy_attention_weights(const Eigen::MatrixXd& X, bool causal,
                                      double s = 1);

// The weight row t of A gives to the tokens after t (0 under the causal mask).
double later_weight(const Eigen::MatrixXd& A, Index t);

// The smallest weight a token may give: over every entry of A, or with the causal mask over
// the entries it leaves (i <= t), not the masked zeros.
double smallest_visible_weight(const Eigen::MatrixXd& A, bool causal);

// Section 6 on the tokens X: the weights without the mask (A_all) and with it (A), the causal
// outputs C = A X; how far outputs 0..n-2 move when the last token becomes a copy of the
// first, without and with the mask; and the largest difference between a causal row and the
// unmasked row cut to tokens 0..t and renormalised.
struct ToyMasks {
  Eigen::MatrixXd A_all, A, C;
  double past_change_all, past_change_causal, renormalised_residual;
};
ToyMasks toy_masks(const Eigen::MatrixXd& X);

// Section 7: causal multi-head self-attention on n random tokens of width d (weights with
// entries N(0, 1/d)); how far the earlier outputs move when the last token is redrawn
// (0, bit for bit), and the largest |row sum - 1| of every head's weights.
struct MultiHeadChecks {
  Eigen::MatrixXd Y;
  double earlier_change, rowsum_error;
};
MultiHeadChecks multi_head_checks(Index n, Index d, Index heads, attn::Rng& rng);

}  // namespace ch01
