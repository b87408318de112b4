#pragma once
// Chapter 06's computations, shared by the program (main.cpp prints, records and draws them),
// its tests and its live figure (live.cpp): random layers, the symmetry residual of every layer
// variant, what each bias does, and the attention pattern of Figure 6.1. The four sections
// draw from one random stream in the program's order (sections()), so the live figure gets
// the program's tokens and layer by running the same sections.

#include <Eigen/Dense>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/exercise.hpp"
#include "attn/random.hpp"
#include "attn/transformer_block.hpp"

namespace ch06 {

using Eigen::Index;

// ---- Random layers (the tests build their own from these too) ----

// Weights with entries N(0, 1/d), so that scores and activations stay of order 1.
Eigen::MatrixXd weights(Index rows, Index cols, attn::Rng& rng);

Eigen::VectorXd vec(Index size, attn::Rng& rng, double sigma = 0.5);

// One attention layer d -> d_k (queries, keys) and d -> d_v (values), with or without
// biases.
attn::AttentionParams random_attention(Index d, Index d_k, Index d_v, bool biases,
                                       attn::Rng& rng);

// LayerNorm parameters near the usual initialisation (gamma = 1, delta = 0), perturbed so
// that they matter.
attn::NormParams random_layer_norm(Index d, attn::Rng& rng);

// A whole block: n_h heads, output bias, FFN with biases, two LayerNorms.
attn::BlockParams random_block(Index d, Index heads, Index d_ff, attn::Rng& rng,
                               attn::NormPlacement placement);

// Normalisation over the token axis, with one scale and one shift per position 0..n-1
// (or none).
attn::NormParams random_token_norm(Index n, bool per_position, attn::Rng& rng);

// A permutation of 0..n-1 that moves at least one token (n >= 2).
attn::Permutation moving_permutation(Index n, attn::Rng& rng);

// ---- The program's sections ----

// The sizes of a run (the program's options, with their defaults).
struct Sizes {
  long n = 8;       // tokens
  long d = 16;      // model width
  long heads = 2;   // attention heads in the blocks; must divide d
  long d_ff = 32;   // hidden width of the FFN
  long perms = 20;  // random permutations per variant
};

// Told what is being computed ("" when done); may be empty.
using Progress = std::function<void(const std::string&)>;

// 1. One layer variant and the largest and smallest of its symmetry residuals over the
// random permutations: max|f(PX) - P f(X)| / max|f(X)| (invariance: max|f(PX) - f(X)| / ..).
struct VariantResidual {
  std::string key;    // name in results.json
  std::string label;  // name in the figure and the table
  bool invariance;    // f(PX) = f(X) rather than f(PX) = P f(X)
  bool symmetric;     // what the chapter claims
  double max, min;
  // In the student copy: the unfinished exercise this variant's layer needs (the causal
  // block: 01.6's causal_mask); its residuals are then not computed.
  std::optional<attn::exercise_not_done> not_done = {};
};
std::vector<VariantResidual> symmetry_residuals(const Sizes& s, attn::Rng& rng,
                                                const Progress& progress = {});

// How the self-attention output of the tokens X moves when the layer p0 becomes p, with
// weights h: Attn_p(X) - Attn_p0(X).
Eigen::MatrixXd output_shift(const Eigen::MatrixXd& X, const attn::AttentionParams& p,
                             const attn::AttentionParams& p0,
                             attn::Normalisation h = attn::Normalisation::softmax);

// 2. What each bias does to the output of self-attention, with softmax weights and with
// h = id: max |change| when b_Q, b_K or b_V is added alone, and the value bias exactly.
struct BiasEffect {
  std::string bias;  // "b_Q", "b_K", "b_V"
  double softmax, identity;
};
struct BiasEffects {
  std::vector<BiasEffect> one_bias;
  double softmax_shift_residual;    // max |change - 1 b_V^T| with softmax
  double identity_rowsum_residual;  // max |change - (S 1) b_V^T| with h = id
  double identity_vs_plain_shift;   // max |change - 1 b_V^T| with h = id
  double row_sum_min, row_sum_max;  // of S
};
BiasEffects bias_effects(const Sizes& s, attn::Rng& rng);

// 3. A bias b added to every token, then a normalisation: max |change|.
struct NormalisationChanges {
  double layer_norm_general_bias, layer_norm_constant_bias, token_norm_general_bias;
};
NormalisationChanges bias_then_normalisation(const Sizes& s, attn::Rng& rng);

// 4. Figure 6.1: the attention weights of min(n, 10) tokens (one head with all three
// biases) before and after a permutation.
struct Pattern {
  Eigen::MatrixXd X;                  // the tokens
  attn::AttentionParams p;            // the layer
  attn::Permutation perm;             // the figure's order
  Eigen::MatrixXd A, A_perm, A_back;  // A(X), A(PX), P^T A(PX) P
  double permuted_back_residual;      // max |P^T A(PX) P - A(X)|
  double change_in_place;             // max |A(PX) - A(X)|
};
Pattern permuted_pattern(const Sizes& s, attn::Rng& rng);

// The weights A = softmax(Q K^T / sqrt(d_k)) of the tokens Y, Q = Y W_Q + b_Q and
// K = Y W_K + b_K (a bias left empty is not added).
Eigen::MatrixXd pattern_weights(const Eigen::MatrixXd& Y, const attn::AttentionParams& p);

// P A P^T: entry (i, j) is A(perm[i], perm[j]), the weights moved with their query and key.
Eigen::MatrixXd permute_both(const Eigen::MatrixXd& A, const attn::Permutation& perm);

// The four sections in the program's order, from one random stream.
struct Sections {
  std::vector<VariantResidual> residuals;
  BiasEffects bias;
  NormalisationChanges normalisation;
  Pattern pattern;
};
Sections sections(const Sizes& s, attn::Rng& rng, const Progress& progress = {});

}  // namespace ch06
