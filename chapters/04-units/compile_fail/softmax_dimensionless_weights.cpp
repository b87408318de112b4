// Must not compile: a transformer's W_q, W_k are plain numbers, so with X in amperes the
// scores X W_q^T W_k X^T carry A^2.
#include "attn/units.hpp"

attn::Volts attend(const attn::Amperes& X, const attn::Volts& Y,
                   const attn::Dimensionless& W_q, const attn::Dimensionless& W_k) {
  return attn::softmax_rows(X * W_q.transpose() * W_k * X.transpose()) * Y;
}
