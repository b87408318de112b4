#pragma once
// Internal to the library: the register-blocked kernel of the fast forward forms,
// attention_row_blocks() and tiled_attention() (code/src/tiled_attention.cpp).
//
// A chunk of `chunk` consecutive queries is the unit of work. Its queries sit in the lanes
// of Eigen's SIMD packets (8 doubles with AVX-512, 4 with AVX, 2 with SSE, 1 without: the
// WebAssembly build), so every step is the same for each query, lane by lane:
//   scores   s[j][i] = (q_i / sqrt(d)) . k_j for a tile of keys j, i in the chunk, a block
//            of chunk x key_group scores held in registers while the depth d runs;
//   softmax  the running maximum m_i, e^{s - m_i} and its sum l_i, column by column of the
//            tile (vertical, no horizontal reductions), while the tile is in L1;
//   values   o_i <- e^{m_i - m'_i} o_i + sum_j e^{s_ij - m'_i} v_j, a block of chunk x
//            value_group outputs in registers while the keys of the tile run.
// One tile of all the keys a chunk sees is attention_row_blocks()'s plain softmax; smaller
// tiles are tiled_attention()'s online softmax. Each query's result depends only on its
// own lane and the key tiles (fixed multiples of the tile size from key 0), not on the
// chunk or the thread that computes it: bit-identical for every thread count.
//
// Portable: Eigen's packet functions (ploadu, pset1, pmadd) map to AVX-512, AVX, SSE,
// NEON, or plain doubles, and the exponential is fast_exp in a loop the compiler
// vectorises, so the same code compiles for the browser.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attn/fast_exp.hpp"
#include "common.hpp"

namespace attn::detail {

using Packet = Eigen::internal::packet_traits<double>::type;
constexpr Eigen::Index lanes = Eigen::internal::packet_traits<double>::size;
constexpr int chunk_packets = 4;  // packets of queries per register block
constexpr Eigen::Index chunk = chunk_packets * lanes;  // queries per chunk
// Keys per register block of scores, and output columns per register block of values: a
// block holds chunk_packets x group accumulators besides its operands, 24 of AVX-512's 32
// registers, 12 of the 16 of AVX or SSE (measured best; more would spill to memory).
constexpr int key_group = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 6 : 3;
constexpr int value_group = key_group;
constexpr Eigen::Index value_run = 128;  // keys per run of chunk_values()

using Buffer = std::vector<double, Eigen::aligned_allocator<double>>;

// Calls block.template operator()<G>(j) for j = 0, G, 2G, ... while a whole group of G fits
// in n, then once with the remainder as its group size: every register block has its size
// fixed at compile time, and nothing is read or written past n.
template <int G, class Block>
void remainder_group(Eigen::Index r, Eigen::Index j, const Block& block) {
  if constexpr (G > 0) {
    if (r == G) return block.template operator()<G>(j);
    remainder_group<G - 1>(r, j, block);
  }
}
template <int G, class Block>
void in_groups(Eigen::Index n, const Block& block) {
  Eigen::Index j = 0;
  for (; j + G <= n; j += G) block.template operator()<G>(j);
  remainder_group<G - 1>(n - j, j, block);
}

// One thread's scratch memory for blocks of up to max_queries queries, d_k = d, d_v = dv,
// and tiles of up to key_tile keys. Chunk t of a block keeps its own queries and running
// state (q, o, m, l at offset t times their size); the tile's scores and the per-step
// vectors are shared.
struct BlockWorkspace {
  BlockWorkspace(Eigen::Index max_queries, Eigen::Index d, Eigen::Index dv,
                 Eigen::Index key_tile)
      : chunks((max_queries + chunk - 1) / chunk),
        q(static_cast<std::size_t>(chunks * d * chunk)),
        o(static_cast<std::size_t>(chunks * dv * chunk)),
        m(static_cast<std::size_t>(chunks * chunk)),
        l(static_cast<std::size_t>(chunks * chunk)),
        s(static_cast<std::size_t>(key_tile * chunk)),
        shift(chunk),
        alpha(chunk),
        sum(chunk) {}
  Eigen::Index chunks;
  Buffer q;  // q[k chunk + i] = Q(r0 + i, k) / sqrt(d), zero past the block's last query
  Buffer o;  // o[f chunk + i]: running numerator of output (r0 + i, f)
  Buffer m, l;  // per query: running maximum and sum
  Buffer s;  // s[j chunk + i]: the score, then the weight, of query r0 + i and key j0 + j
  Buffer shift, alpha, sum;  // per query of a chunk: this tile's shift m', rescaling
                             // e^{m - m'}, and sum
};

// s[j][.] = q . k_{j0 + j} for j < c; K points at K(j0, 0), column stride ldk. K is read
// where it is (no copy): a register block's keys are neighbours in each column.
inline void chunk_scores(const double* q, Eigen::Index d, const double* K,
                         Eigen::Index ldk, Eigen::Index c, double* s) {
  in_groups<key_group>(c, [&]<int G>(Eigen::Index j) {
    using namespace Eigen::internal;
    Packet acc[chunk_packets][G];
    for (auto& row : acc)
      for (Packet& a : row) a = pset1<Packet>(0.0);
    for (Eigen::Index k = 0; k < d; ++k) {
      Packet qk[chunk_packets];
      for (int p = 0; p < chunk_packets; ++p)
        qk[p] = ploadu<Packet>(q + k * chunk + p * lanes);
      const double* key = K + k * ldk + j;
      for (int r = 0; r < G; ++r) {
        const Packet kr = pset1<Packet>(key[r]);
        for (int p = 0; p < chunk_packets; ++p) acc[p][r] = pmadd(qk[p], kr, acc[p][r]);
      }
    }
    for (int r = 0; r < G; ++r)
      for (int p = 0; p < chunk_packets; ++p)
        pstoreu(s + (j + r) * chunk + p * lanes, acc[p][r]);
  });
}

// o[f][i] = alpha_i o[f][i] + sum_{j < c} s[j][i] V(j0 + j, f) for f < dv; V points at
// V(j0, 0), column stride ldv. The keys go in runs of value_run, each run's weights (32 KiB
// with AVX-512) staying in L1 while every group of outputs uses them; a register block is
// stored and reloaded between runs, which changes no rounding.
inline void chunk_values(const double* s, Eigen::Index c, const double* V,
                         Eigen::Index ldv, Eigen::Index dv, const double* alpha,
                         double* o) {
  for (Eigen::Index j0 = 0; j0 < c; j0 += value_run) {
    const Eigen::Index j1 = std::min(c, j0 + value_run);
    in_groups<value_group>(dv, [&]<int G>(Eigen::Index f) {
      using namespace Eigen::internal;
      Packet acc[chunk_packets][G];
      for (int p = 0; p < chunk_packets; ++p) {
        const Packet a = ploadu<Packet>(alpha + p * lanes);
        for (int r = 0; r < G; ++r) {
          const Packet running = ploadu<Packet>(o + (f + r) * chunk + p * lanes);
          acc[p][r] = j0 == 0 ? pmul(a, running) : running;
        }
      }
      const double* v = V + f * ldv;
      for (Eigen::Index j = j0; j < j1; ++j) {
        Packet w[chunk_packets];
        for (int p = 0; p < chunk_packets; ++p)
          w[p] = ploadu<Packet>(s + j * chunk + p * lanes);
        for (int r = 0; r < G; ++r) {
          const Packet vr = pset1<Packet>(v[r * ldv + j]);
          for (int p = 0; p < chunk_packets; ++p) acc[p][r] = pmadd(w[p], vr, acc[p][r]);
        }
      }
      for (int r = 0; r < G; ++r)
        for (int p = 0; p < chunk_packets; ++p)
          pstoreu(o + (f + r) * chunk + p * lanes, acc[p][r]);
    });
  }
}

// One step of the online softmax over a tile of c keys whose scores are in w.s, for the
// chunk whose running maxima and sums are m and l: the new maxima, the rescaling factors
// e^{m - m'} (w.alpha), the weights e^{s - m'} in place and their sums. A query that has
// seen only masked keys keeps m' = -inf and gets weights 0 (its shift is 0, not -inf, so
// no -inf - -inf). An overflowed score (+inf) makes NaN, which reaches l.
inline void chunk_softmax_step(BlockWorkspace& w, Eigen::Index c, double* m, double* l) {
  double* s = w.s.data();
  double *shift = w.shift.data(), *alpha = w.alpha.data(), *sum = w.sum.data();
  // [online-softmax]
  for (Eigen::Index i = 0; i < chunk; ++i) shift[i] = m[i];  // m' = max(m, max_j s_j)
  for (Eigen::Index j = 0; j < c; ++j)
    for (Eigen::Index i = 0; i < chunk; ++i)
      shift[i] = s[j * chunk + i] > shift[i] ? s[j * chunk + i] : shift[i];
  for (Eigen::Index i = 0; i < chunk; ++i) {
    const double m_new = shift[i];
    shift[i] = m_new == -inf ? 0.0 : m_new;       // every key so far hidden: weights 0
    alpha[i] = fast_exp_weight(m[i] - shift[i]);  // e^{m - m'}; 0 on the first tile
    m[i] = m_new;
  }
  for (Eigen::Index i = 0; i < chunk; ++i) sum[i] = 0.0;
  for (Eigen::Index j = 0; j < c; ++j)
    for (Eigen::Index i = 0; i < chunk; ++i) {
      s[j * chunk + i] = fast_exp_weight(s[j * chunk + i] - shift[i]);  // e^{s - m'}
      sum[i] += s[j * chunk + i];
    }
  for (Eigen::Index i = 0; i < chunk; ++i) l[i] = alpha[i] * l[i] + sum[i];
  // [online-softmax]
}

// Attention for the queries i0 .. i0 + b - 1 of Q (b <= the workspace's max_queries) into
// the same rows of out, the keys in tiles of key_tile (any size >= 1) from key 0. Each tile
// of K and V is used by every chunk of the block while it is in cache. Under the causal
// mask a chunk sees the keys up to its last query only, the future ones masked to -inf.
// Throws std::invalid_argument naming the block's first row whose sum is not finite (a
// score that overflowed): `who` names the caller.
inline void attend_block(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                         const Eigen::Ref<const Eigen::MatrixXd>& K,
                         const Eigen::Ref<const Eigen::MatrixXd>& V, Eigen::Index i0,
                         Eigen::Index b, Eigen::Index key_tile, bool causal, double scale,
                         BlockWorkspace& w, Eigen::Ref<Eigen::MatrixXd> out,
                         const char* who) {
  const Eigen::Index d = Q.cols(), dv = V.cols(), nk = K.rows();
  const Eigen::Index chunks = (b + chunk - 1) / chunk;
  for (Eigen::Index t = 0; t < chunks; ++t) {  // chunk t's queries from (t d) chunk on
    const Eigen::Index r0 = i0 + t * chunk, rows = std::min(chunk, i0 + b - r0);
    double* q = w.q.data() + t * d * chunk;
    for (Eigen::Index k = 0; k < d; ++k)
      for (Eigen::Index i = 0; i < chunk; ++i)
        q[k * chunk + i] = i < rows ? scale * Q(r0 + i, k) : 0.0;
  }
  std::fill(w.m.begin(), w.m.end(), -inf);
  std::fill(w.l.begin(), w.l.end(), 0.0);
  std::fill(w.o.begin(), w.o.end(), 0.0);
  const Eigen::Index block_key_end = causal ? std::min(nk, i0 + b) : nk;
  for (Eigen::Index j0 = 0; j0 < block_key_end; j0 += key_tile)
    for (Eigen::Index t = 0; t < chunks; ++t) {
      const Eigen::Index r0 = i0 + t * chunk, rows = std::min(chunk, i0 + b - r0);
      const Eigen::Index key_end = causal ? std::min(nk, r0 + rows) : nk;
      if (j0 >= key_end) continue;  // every key of the tile is hidden from the chunk
      const Eigen::Index c = std::min(key_tile, key_end - j0);
      chunk_scores(w.q.data() + t * d * chunk, d, K.data() + j0, K.outerStride(), c,
                   w.s.data());
      if (causal && j0 + c - 1 > r0)  // key j0 + j is hidden from query r0 + i if j > i
        for (Eigen::Index j = std::max<Eigen::Index>(0, r0 + 1 - j0); j < c; ++j)
          for (Eigen::Index i = 0; i < chunk; ++i)
            if (j0 + j > r0 + i) w.s[j * chunk + i] = -inf;
      chunk_softmax_step(w, c, w.m.data() + t * chunk, w.l.data() + t * chunk);
      chunk_values(w.s.data(), c, V.data() + j0, V.outerStride(), dv, w.alpha.data(),
                   w.o.data() + t * dv * chunk);
    }
  // l >= 1 once a query has seen a key: its largest term is e^0 = 1.
  for (Eigen::Index i = 0; i < b; ++i)
    require(std::isfinite(w.l[i]), std::string(who) + ": row " + std::to_string(i0 + i) +
                                       " has an infinite score");
  for (Eigen::Index t = 0; t < chunks; ++t) {
    const Eigen::Index r0 = i0 + t * chunk, rows = std::min(chunk, i0 + b - r0);
    const double* o = w.o.data() + t * dv * chunk;
    const double* l = w.l.data() + t * chunk;
    for (Eigen::Index f = 0; f < dv; ++f)
      for (Eigen::Index i = 0; i < rows; ++i) out(r0 + i, f) = o[f * chunk + i] / l[i];
  }
}

}  // namespace attn::detail
