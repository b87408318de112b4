// Must not compile: beta_LS = (X^T X)^-1 X^T Y carries V/A, not V.
#include "attn/units.hpp"

attn::Volts coefficients(const attn::Amperes& X, const attn::Volts& Y) {
  const attn::Volts beta = attn::least_squares(X, Y);
  return beta;
}
