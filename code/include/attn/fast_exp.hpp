#pragma once
/// \file fast_exp.hpp
/// \brief The vectorised exponential of the fast softmax forms: attention_row_blocks(),
/// tiled_attention(), attention_backward() and chapter 03's trainer.
///
/// The reference forms (softmax_rows(), attention()) call `std::exp`. These functions
/// compute the same \f$ e^v \f$ on the range a stable softmax needs, \f$ v \in [-708, 0]
/// \f$ (every exponent is a score minus its row's maximum), within one unit in the last
/// place of `std::exp`: the same double or its neighbour (test: `fast_exp is within 1 ulp
/// of std::exp on [-708, 0]`). They have no branch, so a loop that calls them vectorises;
/// that makes them about twice as fast as Eigen's `exp`, which divides.

#include <Eigen/Core>
#include <bit>
#include <cstdint>
#include <cstring>

namespace attn {

namespace detail {
// std::bit_cast where the standard library has it (GCC 12); a copy of the bytes where it does
// not (emscripten 3.1.6's libc++), so the same header compiles for the browser.
template <typename To, typename From>
constexpr To bits_as(const From& x) {
#if defined(__cpp_lib_bit_cast)
  return std::bit_cast<To>(x);
#else
  To y;
  std::memcpy(&y, &x, sizeof y);
  return y;
#endif
}
}  // namespace detail

/// \brief \f$ e^v \f$ for \f$ v \in [-708, 0] \f$ (outside that range the result is
/// meaningless: the caller clamps).
///
/// Cody and Waite's reduction \f$ v = k \ln 2 + r \f$, \f$ |r| \le \ln 2 / 2 \f$, then
/// Taylor's series of \f$ e^r \f$ to \f$ r^{13} \f$ (the truncation error
/// \f$ r^{14}/14! < 5 \cdot 10^{-18} \f$), times \f$ 2^k \f$ built from its bits.
inline double fast_exp(double v) {
  constexpr double log2e = 1.4426950408889634;
  // ln2 = ln2_hi + ln2_lo (fdlibm's split): ln2_hi ends in 32 zero bits, so k ln2_hi is
  // exact for |k| < 2^21 and the reduction loses nothing.
  constexpr double ln2_hi = 6.93147180369123816490e-01;
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  // 1.5 * 2^52: adding it rounds to an integer, which lands in the low mantissa bits.
  constexpr double shifter = 0x1.8p52;
  constexpr std::uint64_t shifter_bits = 0x4338000000000000;  // the bits of 1.5 * 2^52
  double k = v * log2e + shifter;
  const std::uint64_t k_bits = detail::bits_as<std::uint64_t>(k);
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
  return p * detail::bits_as<double>((k_bits - shifter_bits + 1023) << 52);
}

/// \brief \f$ e^v \f$ for \f$ v \le 0 \f$, the weight of a score \f$ v \f$ below its
/// row's maximum: fast_exp() where \f$ v \ge -708 \f$, exactly 0 below (a masked score,
/// \f$ -\infty \f$, included); NaN stays NaN. No branch, so a loop that calls it vectorises.
inline double fast_exp_weight(double v) {
  const double e = fast_exp(v < -708.0 ? -708.0 : v);
  return v < -708.0 ? 0.0 : e;
}

/// \brief \f$ x_j \leftarrow e^{x_j} \f$ in place, for entries in \f$ [-708, 0] \f$
/// (the caller clamps). `x` must be contiguous (a vector, or a column of a matrix).
inline void fast_exp_nonpositive(Eigen::Ref<Eigen::VectorXd> x) {
  double* data = x.data();
  for (Eigen::Index j = 0; j < x.size(); ++j) data[j] = fast_exp(data[j]);
}

/// \brief \f$ x_j \leftarrow e^{x_j - m} \f$ in place, for \f$ x_j \le m \f$: the
/// numerators of a stable softmax whose row maximum is \f$ m \f$.
///
/// Terms below \f$ e^{-708} \f$ (about \f$ 3 \cdot 10^{-308} \f$ of the largest) become
/// exactly 0, as a masked score of \f$ -\infty \f$ must; `std::exp` would return a
/// subnormal there, which changes no sum visibly. (No sum here: a floating-point sum in
/// this loop would stop the compiler from vectorising it; Eigen's sum() is vectorised.)
inline void fast_exp_shifted(Eigen::Ref<Eigen::VectorXd> x, double m) {
  double* data = x.data();
  for (Eigen::Index j = 0; j < x.size(); ++j) data[j] = fast_exp_weight(data[j] - m);
}

}  // namespace attn
