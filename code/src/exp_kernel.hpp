#pragma once
// Internal to the library (not installed, not in the API reference): the vectorised
// exponential of the softmax kernels in attention.cpp, tiled_attention.cpp and
// attention_regression.cpp.

#include <Eigen/Core>
#include <bit>
#include <cstdint>

namespace attn::detail {

// e^v for v in [-708, 0]: Cody and Waite's reduction v = k ln2 + r, |r| <= ln2/2, then
// Taylor to r^13 (the truncation error r^14/14! < 5e-18). Within 2.3e-16 relative of
// std::exp on [-708, 0]. Branch-free, so that loops calling it vectorise (8 doubles at
// a time with AVX-512), about twice as fast as Eigen's exp, which divides.
inline double exp_in_range(double v) {
  constexpr double log2e = 1.4426950408889634;
  // ln2 = ln2_hi + ln2_lo (fdlibm's split): ln2_hi ends in 32 zero bits, so k ln2_hi is
  // exact for |k| < 2^21 and the reduction loses nothing.
  constexpr double ln2_hi = 6.93147180369123816490e-01;
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  // 1.5 * 2^52: adding it rounds to an integer, which lands in the low mantissa bits.
  constexpr double shifter = 0x1.8p52;
  constexpr std::uint64_t shifter_bits = std::bit_cast<std::uint64_t>(shifter);
  double k = v * log2e + shifter;
  const std::uint64_t k_bits = std::bit_cast<std::uint64_t>(k);
  k -= shifter;                                    // k = round(v / ln 2), in [-1021, 0]
  const double r = (v - k * ln2_hi) - k * ln2_lo;  // v - k ln2, |r| <= 0.347
  double p = 1.0 / 6227020800.0;                   // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;  // e^r
  // 2^k built from its bits: biased exponent k + 1023 >= 2, a normal number.
  return p * std::bit_cast<double>((k_bits - shifter_bits + 1023) << 52);
}

// x[j] = e^{x[j]} for x[j] in [-708, 0], in place (the caller clamps).
inline void exp_nonpositive(double* x, Eigen::Index size) {
  for (Eigen::Index j = 0; j < size; ++j) x[j] = exp_in_range(x[j]);
}

// x[j] = e^{x[j] - m}, in place, for x[j] <= m. Terms below e^{-708} (about 3e-308 of
// the largest) become exactly 0, as a masked logit of -inf must; std::exp would return a
// subnormal there, which changes no sum visibly. (No sum here: a floating-point sum in
// this loop would stop the compiler from vectorising it; Eigen's sum() is vectorised.)
inline void exp_shifted(double* x, Eigen::Index size, double m) {
  for (Eigen::Index j = 0; j < size; ++j) {
    const double v = x[j] - m;
    const double e = exp_in_range(v < -708.0 ? -708.0 : v);
    x[j] = v < -708.0 ? 0.0 : e;
  }
}

}  // namespace attn::detail
