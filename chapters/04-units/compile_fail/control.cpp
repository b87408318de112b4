// Must compile: the unit-correct versions of every snippet in this directory.
#include "attn/units.hpp"

void control(const attn::Amperes& X, const attn::Volts& Y, const attn::Amperes& Xq) {
  const auto beta = attn::least_squares(X, Y);           // V/A
  const attn::Volts y_ls = Xq * beta;                    // V
  const auto L = attn::whitening_map(X);                 // 1/A
  const attn::Quantity<-2, 0> M = L.transpose() * L;     // 1/A^2
  const attn::Dimensionless S = Xq * M * X.transpose();  // no unit
  const attn::Volts y = attn::softmax_rows(S) * Y;       // V
  const attn::Dimensionless E = attn::exp(S);
  const attn::Volts sum = y_ls + y;
  static_cast<void>(E);
  static_cast<void>(sum);
}
