#include "attn/random.hpp"

#include <cmath>
#include <cstdint>
#include <numbers>

namespace attn {

namespace {

// SplitMix64 (Steele, Lea & Flood 2014): a bijective mixer whose outputs for consecutive
// inputs look independent; a good way to derive seeds for mt19937_64.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

double uniform01(Rng& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

double standard_normal(Rng& rng) {
  const double u1 = 1.0 - uniform01(rng);  // in (0, 1]: log(u1) is finite
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

Eigen::MatrixXd random_normal(Eigen::Index rows, Eigen::Index cols, Rng& rng,
                              double sigma) {
  // Both outputs of each Box-Muller pair are used: half the logarithms and square roots.
  Eigen::MatrixXd M(rows, cols);
  double* x = M.data();  // column-major: filled column by column
  const Eigen::Index size = M.size();
  for (Eigen::Index k = 0; k < size; k += 2) {
    const double r = sigma * std::sqrt(-2.0 * std::log(1.0 - uniform01(rng)));
    const double angle = 2.0 * std::numbers::pi * uniform01(rng);
    x[k] = r * std::cos(angle);
    if (k + 1 < size) x[k + 1] = r * std::sin(angle);
  }
  return M;
}

Eigen::MatrixXd random_uniform(Eigen::Index rows, Eigen::Index cols, Rng& rng, double lo,
                               double hi) {
  Eigen::MatrixXd M(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) M(i, j) = lo + (hi - lo) * uniform01(rng);
  return M;
}

std::uint64_t run_seed(std::uint64_t base_seed, int run, int stream) {
  return splitmix64(splitmix64(base_seed) ^
                    splitmix64((static_cast<std::uint64_t>(run) << 8) |
                               static_cast<std::uint64_t>(stream & 0xff)));
}

}  // namespace attn
