// Must not compile: a transformer's W_Q, W_K are plain numbers, so with X in amperes the
// scores X W_Q W_K^T X^T carry A^2.
#include "attn/units.hpp"

attn::Volts attend(const attn::Amperes& X, const attn::Volts& Y,
                   const attn::Dimensionless& W_Q, const attn::Dimensionless& W_K) {
  return attn::softmax_rows(X * W_Q * W_K.transpose() * X.transpose()) * Y;
}
