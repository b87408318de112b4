// Must not compile: W_q^T W_k carries 1/A, one power short of the 1/A^2 that the scores
// X W_q^T W_k X^T need to be pure numbers.
#include "attn/units.hpp"

attn::Volts attend(const attn::Amperes& X, const attn::Volts& Y,
                   const attn::Quantity<-1, 0>& W_q, const attn::Dimensionless& W_k) {
  return attn::softmax_rows(X * W_q.transpose() * W_k * X.transpose()) * Y;
}
