#pragma once
/// \file tiled_attention.hpp
/// \brief The fast forms of softmax attention, without the \f$ n \times n \f$ matrix:
/// row blocks, the online-softmax (tiled) forward pass, and the backward pass.
///
/// Each is tested equal to the reference attention() (or, for the backward pass, to
/// finite differences of it).
///
/// Tokens are rows, as everywhere in the book: \f$ Q \in \mathbb{R}^{n_q \times d_k} \f$,
/// \f$ K \in \mathbb{R}^{n_k \times d_k} \f$, \f$ V \in \mathbb{R}^{n_k \times d_v} \f$,
/// \f$ O = \operatorname{softmax}_{\text{rows}}(QK^\top/\sqrt{d_k} + M)\,V \f$.

#include <Eigen/Dense>

#include "attn/attention.hpp"
#include "attn/parallel.hpp"  // available_threads()

namespace attn {

/// \brief Softmax attention a block of queries at a time: the same numbers as attention()
/// up to rounding, without the \f$ n_q \times n_k \f$ matrix of weights.
///
/// The queries go in blocks of as many as four SIMD registers hold (32 with AVX-512), the
/// unit a thread takes. A block takes its whole rows of scores, \f$ n_k \times 32 \f$ numbers,
/// computes their stable softmax numerators with fast_exp_weight() and multiplies them by
/// \f$ V \f$, then divides each output row by its sum: tiled_attention()'s kernel with one
/// tile of every key. Both products run in blocks of registers on data in the processor's
/// cache, and the exponentials run between them, so this form runs close to the speed of a
/// plain matrix product. Memory: \f$ O((n_q + n_k)\,d) \f$ plus one block's rows per thread.
///
/// \param Q queries, \f$ n_q \times d_k \f$ (one per row).
/// \param K keys, \f$ n_k \times d_k \f$.
/// \param V values, \f$ n_k \times d_v \f$.
/// \param masking Masking::causal lets query \f$ i \f$ see keys \f$ j \le i \f$ only
///        (needs \f$ n_q = n_k \f$); a block of queries \f$ i_0 \dots i_0 + B - 1 \f$
///        computes the scores of keys \f$ 0 \dots i_0 + B - 1 \f$ only, about half the work.
/// \param threads threads to share the blocks of queries (available_threads() by default;
///        at most one per block, so fewer queries than one block run on the caller's thread
///        alone). Each output row is computed by one thread with the same operations in the
///        same order, so the result is bit-identical for every thread count.
/// \throws std::invalid_argument on mismatched shapes, a NaN or infinite entry of
///         \f$ Q, K, V \f$, a score that overflows to \f$ \pm\infty \f$ or NaN, masked or
///         not, as in attention() (the same error, naming the same first row, for every
///         thread count), or `threads` below 1.
Eigen::MatrixXd attention_row_blocks(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                     const Eigen::Ref<const Eigen::MatrixXd>& K,
                                     const Eigen::Ref<const Eigen::MatrixXd>& V,
                                     Masking masking = Masking::none,
                                     int threads = available_threads());

/// \brief Tile sizes of tiled_attention(): queries per tile and keys per tile.
struct AttentionTiles {
  Eigen::Index queries = 64;  ///< \f$ B_q \f$, rows of \f$ Q \f$ processed together
  Eigen::Index keys = 256;    ///< \f$ B_k \f$, rows of \f$ K, V \f$ per step
};

/// \brief Softmax attention by the online-softmax recurrence, one tile of keys at a time.
///
/// For each query row \f$ i \f$ and each tile \f$ J \f$ of keys, with scores
/// \f$ s_{ij} = q_i \cdot k_j / \sqrt{d_k} \f$ (\f$ -\infty \f$ where masked):
/// \f[
///   m' = \max\bigl(m, \max_{j \in J} s_{ij}\bigr), \quad
///   \ell' = e^{m - m'}\,\ell + \sum_{j \in J} e^{s_{ij} - m'}, \quad
///   o' = e^{m - m'}\,o + \sum_{j \in J} e^{s_{ij} - m'}\, v_j ,
/// \f]
/// starting from \f$ m = -\infty,\ \ell = 0,\ o = 0 \f$; the result row is \f$ o/\ell \f$.
/// This is exactly softmax attention (the factors \f$ e^{-m} \f$ cancel), not an
/// approximation; only rounding differs. Memory: the inputs and output, \f$ O(n d) \f$,
/// plus the scores of one tile of \f$ B_k \f$ keys for one chunk of queries (below); the
/// \f$ n_q \times n_k \f$ matrix is never formed. Tiles need not divide \f$ n \f$.
///
/// The kernel (shared with attention_row_blocks()) puts the queries in the lanes of SIMD
/// registers, a chunk of 32 (with AVX-512) at a time, so the maxima, exponentials and sums
/// run lane by lane on the tile while it is in the L1 cache, and the two products run in
/// register blocks of 32 queries by 6 keys and 32 queries by 6 outputs (16 by 3 with
/// AVX). Each query's numbers depend only on its own lane and on where the key tiles start,
/// not on the chunk or the thread that computes it.
///
/// \param Q queries, \f$ n_q \times d_k \f$ (one per row).
/// \param K keys, \f$ n_k \times d_k \f$.
/// \param V values, \f$ n_k \times d_v \f$.
/// \param masking Masking::causal lets query \f$ i \f$ see keys \f$ j \le i \f$ only (needs
///        \f$ n_q = n_k \f$); key tiles entirely after a query tile are skipped.
/// \param tiles queries and keys per tile (AttentionTiles; 64 and 256 by default).
/// \param threads threads to share the tiles of queries (available_threads() by default;
///        at most one per tile, so fewer queries than one tile run on the caller's thread
///        alone). Each output row is computed by one thread with the same operations in the
///        same order, so the result is bit-identical for every thread count.
/// \throws std::invalid_argument on mismatched shapes, tile sizes below 1, a NaN or
///         infinite entry of \f$ Q, K, V \f$, a score that overflows to
///         \f$ \pm\infty \f$ or NaN, masked or not, as in attention() (the same error,
///         naming the same first row, for every thread count), or `threads` below 1.
Eigen::MatrixXd tiled_attention(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                const Eigen::Ref<const Eigen::MatrixXd>& K,
                                const Eigen::Ref<const Eigen::MatrixXd>& V,
                                Masking masking = Masking::none,
                                AttentionTiles tiles = {},
                                int threads = available_threads());

/// \brief Gradients of a scalar loss \f$ L \f$ with respect to \f$ Q, K, V \f$.
struct AttentionGradients {
  Eigen::MatrixXd dQ;  ///< \f$ \partial L / \partial Q \f$, \f$ n_q \times d_k \f$
  Eigen::MatrixXd dK;  ///< \f$ \partial L / \partial K \f$, \f$ n_k \times d_k \f$
  Eigen::MatrixXd dV;  ///< \f$ \partial L / \partial V \f$, \f$ n_k \times d_v \f$
};

/// \brief Backward pass of \f$ O = \operatorname{softmax}_{\text{rows}}(S)\,V \f$,
/// \f$ S = QK^\top/\sqrt{d_k} + M \f$, given \f$ dO = \partial L / \partial O \f$.
///
/// With \f$ A = \operatorname{softmax}_{\text{rows}}(S) \f$:
/// \f[
///   dV = A^\top dO, \quad dA = dO\,V^\top, \quad
///   dS_{ij} = A_{ij}\bigl(dA_{ij} - \textstyle\sum_k A_{ik}\, dA_{ik}\bigr), \quad
///   dQ = dS\,K/\sqrt{d_k}, \quad dK = dS^\top Q/\sqrt{d_k} .
/// \f]
/// The weights are recomputed a block of queries at a time (attention_row_block()), so
/// no \f$ n_q \times n_k \f$ matrix is stored. Flops: \f$ 2 n_q n_k d \f$ for each of the
/// five products (the recomputed scores and the four above), \f$ n_q n_k \f$
/// exponentials.
///
/// Threads: each block's rows of \f$ dQ \f$ are computed whole by one thread, but
/// \f$ dK \f$ and \f$ dV \f$ are sums over all the blocks, and a sum's rounding depends on
/// its order. So the order is fixed, whatever `threads` is: the blocks form groups of about
/// 512 consecutive queries; each group sums its blocks in order (the first group straight
/// into the result, the others into their thread's partial sums), and the groups' sums are
/// added to the result in group order (a thread whose group is done waits for the groups
/// before it). The threads share the groups, so the result is bit-identical for every
/// thread count; up to about 512 queries run on one thread. Memory:
/// \f$ O((n_q + n_k)\,d) \f$, namely the inputs and gradients and, per thread, one block of
/// \f$ 2 n_k B \f$ numbers and partial sums of \f$ n_k (d_k + d_v) \f$.
///
/// \param Q queries, \f$ n_q \times d_k \f$ (one per row).
/// \param K keys, \f$ n_k \times d_k \f$.
/// \param V values, \f$ n_k \times d_v \f$.
/// \param dO \f$ \partial L / \partial O \f$, \f$ n_q \times d_v \f$.
/// \param masking Masking::causal lets query \f$ i \f$ see keys \f$ j \le i \f$ only
///        (needs \f$ n_q = n_k \f$).
/// \param threads threads to share the groups of queries (available_threads() by default;
///        at most one per group).
/// \throws std::invalid_argument on mismatched shapes, a NaN or infinite entry, a score
///         that overflows to \f$ \pm\infty \f$ or NaN, masked or not, as in attention()
///         (the same error, naming the same first row, for every thread count), or
///         `threads` below 1.
AttentionGradients attention_backward(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                      const Eigen::Ref<const Eigen::MatrixXd>& K,
                                      const Eigen::Ref<const Eigen::MatrixXd>& V,
                                      const Eigen::Ref<const Eigen::MatrixXd>& dO,
                                      Masking masking = Masking::none,
                                      int threads = available_threads());

/// \brief Queries per block in attention_backward() for \f$ n_k \f$ keys: a multiple of 8
/// chosen so that the block of scores, \f$ n_k \times B \f$ doubles, takes about 1 MiB (a
/// typical L2 cache), but between 32 and 128: fewer queries per block make the block's matrix
/// products inefficient.
Eigen::Index attention_row_block(Eigen::Index n_keys);

}  // namespace attn
