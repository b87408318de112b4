// Must not compile: the scores X X^T carry A^2, and softmax needs a pure number.
#include "attn/units.hpp"

attn::Dimensionless scores(const attn::Amperes& X) {
  return attn::softmax_rows(X * X.transpose());
}
