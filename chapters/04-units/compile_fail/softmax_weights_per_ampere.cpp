// Must not compile: W_Q W_K^T carries 1/A, one power short of the 1/A^2 that the scores
// X W_Q W_K^T X^T need to be pure numbers.
#include "attn/units.hpp"

attn::Volts attend(const attn::Amperes& X, const attn::Volts& Y,
                   const attn::Quantity<-1, 0>& W_Q, const attn::Dimensionless& W_K) {
  return attn::softmax_rows(X * W_Q * W_K.transpose() * X.transpose()) * Y;
}
