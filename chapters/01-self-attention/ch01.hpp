#pragma once
// Chapter 01's computations, shared by the program (main.cpp prints, records and draws them),
// its tests and its live figures (live.cpp): the chapter's small hand-made data, the norm of
// the softmax Jacobian, and the toy sentence's attention weights.

#include <Eigen/Dense>
#include <string>
#include <vector>

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

}  // namespace ch01
