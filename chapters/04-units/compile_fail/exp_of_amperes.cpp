// Must not compile: e^x = 1 + x + x^2/2 + ... adds A^0, A^1, A^2, ...
#include "attn/units.hpp"

attn::Dimensionless growth(const attn::Amperes& X) {
  return attn::exp(X);
}
