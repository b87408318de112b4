#include "attn/units.hpp"

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
  return std::pow(ampere_unit, ampere_exponent) * std::pow(volt_unit, volt_exponent);
  // [unit-factor]
  // END SOLUTION
}

}  // namespace attn
