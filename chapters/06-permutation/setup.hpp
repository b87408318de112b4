#pragma once
// Random layers for chapter 06, shared by the program (main.cpp) and its tests, so both
// check the same kind of block.

#include <cmath>
#include <stdexcept>

#include "attn/random.hpp"
#include "attn/transformer_block.hpp"

namespace ch06 {

using Eigen::Index;

// Weights with entries N(0, 1/d), so that scores and activations stay of order 1.
inline Eigen::MatrixXd weights(Index rows, Index cols, attn::Rng& rng) {
  return attn::random_normal(rows, cols, rng, 1.0 / std::sqrt(static_cast<double>(rows)));
}

inline Eigen::VectorXd vec(Index size, attn::Rng& rng, double sigma = 0.5) {
  return attn::random_normal(size, 1, rng, sigma);
}

// One attention layer d -> d_k (queries, keys) and d -> d_v (values), with or without
// biases.
inline attn::AttentionParams random_attention(Index d, Index d_k, Index d_v, bool biases,
                                              attn::Rng& rng) {
  attn::AttentionParams p;
  p.W_Q = weights(d, d_k, rng);
  p.W_K = weights(d, d_k, rng);
  p.W_V = weights(d, d_v, rng);
  if (biases) {
    p.b_Q = vec(d_k, rng);
    p.b_K = vec(d_k, rng);
    p.b_V = vec(d_v, rng);
  }
  return p;
}

// LayerNorm parameters near the usual initialisation (gamma = 1, delta = 0), perturbed so
// that they matter.
inline attn::NormParams random_layer_norm(Index d, attn::Rng& rng) {
  attn::NormParams p;
  p.axis = attn::NormAxis::features;
  p.gamma = Eigen::VectorXd::Ones(d) + vec(d, rng, 0.2);
  p.delta = vec(d, rng, 0.2);
  return p;
}

// A whole block: n_h heads, output bias, FFN with biases, two LayerNorms.
inline attn::BlockParams random_block(Index d, Index heads, Index d_ff, attn::Rng& rng,
                                      attn::NormPlacement placement) {
  attn::BlockParams p;
  p.attention.heads = heads;
  p.attention.W_Q = weights(d, d, rng);
  p.attention.W_K = weights(d, d, rng);
  p.attention.W_V = weights(d, d, rng);
  p.attention.W_O = weights(d, d, rng);
  p.b_O = vec(d, rng);
  p.ffn.W_1 = weights(d, d_ff, rng);
  p.ffn.b_1 = vec(d_ff, rng);
  p.ffn.W_2 = weights(d_ff, d, rng);
  p.ffn.b_2 = vec(d, rng);
  p.norm1 = random_layer_norm(d, rng);
  p.norm2 = random_layer_norm(d, rng);
  p.placement = placement;
  return p;
}

// Normalisation over the token axis, with one scale and one shift per position 0..n-1
// (or none).
inline attn::NormParams random_token_norm(Index n, bool per_position, attn::Rng& rng) {
  attn::NormParams p;
  p.axis = attn::NormAxis::tokens;
  if (per_position) {
    p.gamma = Eigen::VectorXd::Ones(n) + vec(n, rng, 0.5);
    p.delta = vec(n, rng, 0.5);
  }
  return p;
}

// A permutation of 0..n-1 that moves at least one token (n >= 2).
inline attn::Permutation moving_permutation(Index n, attn::Rng& rng) {
  if (n < 2) throw std::invalid_argument("moving_permutation: needs n >= 2 tokens");
  for (;;) {
    attn::Permutation perm = attn::random_permutation(n, rng);
    for (Index i = 0; i < n; ++i)
      if (perm[std::size_t(i)] != i) return perm;
  }
}

}  // namespace ch06
