#pragma once
/// \file random.hpp
/// \brief Seeded random matrices, reproducible bit for bit.
///
/// The engine is std::mt19937_64, whose output sequence the C++ standard fixes. The
/// standard library's distributions are not fixed (each library may draw differently), so
/// the book turns engine output into numbers itself: a uniform from the top 53 bits, a
/// normal by Box–Muller. Matrices are filled column by column. The same seed gives the
/// same matrix, run after run.

#include <Eigen/Dense>
#include <cstdint>
#include <random>

namespace attn {

/// The book's random engine; construct it with an explicit seed: `attn::Rng rng(seed);`.
using Rng = std::mt19937_64;

/// \brief Uniform draw on \f$ [0, 1) \f$ with 53 random bits.
double uniform01(Rng& rng);

/// \brief Standard normal draw \f$ \mathcal{N}(0, 1) \f$ (Box–Muller, one draw per two
/// uniforms).
double standard_normal(Rng& rng);

/// \brief Matrix with i.i.d. \f$ \mathcal{N}(0, \sigma^2) \f$ entries (both values of
/// each Box–Muller pair, so it differs from calling standard_normal() entry by entry).
Eigen::MatrixXd random_normal(Eigen::Index rows, Eigen::Index cols, Rng& rng,
                              double sigma = 1.0);

/// \brief Matrix with i.i.d. entries uniform on \f$ [lo, hi) \f$.
Eigen::MatrixXd random_uniform(Eigen::Index rows, Eigen::Index cols, Rng& rng, double lo,
                               double hi);

/// \brief The seeds of run `run`: `stream` 0 draws the data, 1 the initial parameters, 2
/// the held-out rows (other streams are the chapters' own).
/// A fixed function (SplitMix64) of its arguments, so a run does not depend on the order
/// or the thread it runs in, and both normalisations see the same data and the same
/// initial \f$ W_Q, W_K \f$.
std::uint64_t run_seed(std::uint64_t base_seed, int run, int stream);

}  // namespace attn
