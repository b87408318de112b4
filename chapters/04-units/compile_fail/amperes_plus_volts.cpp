// Must not compile: tokens that glue currents to voltages (Garg et al.'s (x_i, y_i) with y
// padded by zeros) add amperes to volts as soon as a linear map mixes the coordinates.
#include "attn/units.hpp"

attn::Volts mixed(const attn::Amperes& X, const attn::Volts& Y) {
  return X + Y;
}
