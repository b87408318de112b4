#include "attn/units.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "attn/exercise.hpp"

namespace attn {

double unit_factor(int ampere_exponent, int volt_exponent, double ampere_unit,
                   double volt_unit) {
  if (!(std::isfinite(ampere_unit) && ampere_unit > 0 && std::isfinite(volt_unit) &&
        volt_unit > 0))
    throw std::invalid_argument("unit_factor: the units must be finite and > 0 (got " +
                                std::to_string(ampere_unit) + " A and " +
                                std::to_string(volt_unit) + " V)");
  // BEGIN SOLUTION 04.6 unused(ampere_exponent, volt_exponent)
  // [unit-factor]
  // (a A)^A (v V)^V = a^A v^V A^A V^V: the prefix of each unit raised to its exponent.
  // a^A alone may be out of range when a^A v^V is not (a = 1e-200, v = 1e200, A = V = 3):
  // with a = m_a 2^e_a (m_a in [0.5, 1)), likewise v, the powers of two add up as integers.
  int e_a = 0, e_v = 0, e_m = 0;
  const double m = std::frexp(std::pow(std::frexp(ampere_unit, &e_a), ampere_exponent) *
                                  std::pow(std::frexp(volt_unit, &e_v), volt_exponent),
                              &e_m);
  const long long e = e_m + static_cast<long long>(ampere_exponent) * e_a +
                      static_cast<long long>(volt_exponent) * e_v;
  return std::ldexp(m, static_cast<int>(std::clamp(e, -4000LL, 4000LL)));  // beyond: 0 or inf
  // [unit-factor]
  // END SOLUTION
}

}  // namespace attn
