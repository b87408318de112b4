#pragma once
/// \file units.hpp
/// \brief Matrices that carry a physical unit in their type, so that the compiler checks
/// the units argument of chapter 04.
///
/// `Quantity<A, V>` is an Eigen matrix whose entries are all measured in
/// \f$ \mathrm{A}^{A}\,\mathrm{V}^{V} \f$ (amperes and volts: the inputs \f$ x \f$ of the
/// source's example are currents, the outputs \f$ y \f$ voltages). Products add the
/// exponents, inverse() negates them, transpose() keeps them, sums exist only between
/// equal units, and the transcendental functions exp() and softmax_rows() accept only a
/// dimensionless argument: anything else stops the compilation with a `static_assert`
/// whose message states the rule.
///
/// This is a teaching device, a thin wrapper that makes one argument checkable, not a
/// units library. Production code that needs units uses mp-units (the basis of the
/// proposal to add units to the C++ standard), Boost.Units or Aurora's Au: they know
/// hundreds of units and their conversions, prefixes, affine quantities such as
/// temperatures, and give better diagnostics. The book needs two base dimensions and
/// matrices of them, and a wrapper of eighty lines shows the mechanism in full.
///
/// The numbers inside a `Quantity` are in the SI units A and V. Other units (mA, kA)
/// appear only when numbers enter or leave: from_units() and in_units().

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "attn/least_squares.hpp"
#include "attn/softmax.hpp"

namespace attn {

/// \brief A matrix in the unit \f$ \mathrm{A}^{A}\,\mathrm{V}^{V} \f$; the exponents are
/// part of the type.
template <int A, int V>
class Quantity {
 public:
  static constexpr int ampere_exponent = A;  ///< exponent of the ampere
  static constexpr int volt_exponent = V;    ///< exponent of the volt

  /// Wraps numbers that are already in \f$ \mathrm{A}^{A}\,\mathrm{V}^{V} \f$.
  explicit Quantity(Eigen::MatrixXd si_value) : value_(std::move(si_value)) {}

  /// A quantity converts only to its own unit: a mismatch is a compile-time error.
  template <int A2, int V2>
  Quantity(const Quantity<A2, V2>& other) : value_(other.si_value()) {
    static_assert(A2 == A && V2 == V,
                  "a quantity converts only to the same unit: the ampere and volt "
                  "exponents of both sides must agree");
  }

  /// The numbers, in \f$ \mathrm{A}^{A}\,\mathrm{V}^{V} \f$ (the escape hatch: from here
  /// on the compiler no longer checks units).
  const Eigen::MatrixXd& si_value() const { return value_; }
  Eigen::Index rows() const { return value_.rows(); }  ///< number of rows
  Eigen::Index cols() const { return value_.cols(); }  ///< number of columns

  /// \f$ M^\top \f$: same unit.
  Quantity transpose() const { return Quantity(value_.transpose()); }

  /// \f$ M^{-1} \f$ of a square invertible matrix: unit \f$ \mathrm{A}^{-A}
  /// \mathrm{V}^{-V} \f$ (computed by LU with full pivoting).
  /// \throws std::invalid_argument if the matrix is not square or is singular.
  Quantity<-A, -V> inverse() const {
    if (value_.rows() != value_.cols())
      throw std::invalid_argument("Quantity::inverse: the matrix must be square");
    const Eigen::FullPivLU<Eigen::MatrixXd> lu(value_);
    if (!lu.isInvertible())
      throw std::invalid_argument("Quantity::inverse: the matrix is singular");
    return Quantity<-A, -V>(lu.inverse());
  }

 private:
  Eigen::MatrixXd value_;
};

using Dimensionless = Quantity<0, 0>;  ///< a pure number
using Amperes = Quantity<1, 0>;        ///< a current
using Volts = Quantity<0, 1>;          ///< a voltage

// [units-product]
/// \brief Matrix product: the exponents add,
/// \f$ [MN] = \mathrm{A}^{A_1 + A_2}\,\mathrm{V}^{V_1 + V_2} \f$.
template <int A1, int V1, int A2, int V2>
Quantity<A1 + A2, V1 + V2> operator*(const Quantity<A1, V1>& M,
                                     const Quantity<A2, V2>& N) {
  return Quantity<A1 + A2, V1 + V2>(M.si_value() * N.si_value());
}
// [units-product]

/// \brief A pure number times a quantity: same unit.
template <int A, int V>
Quantity<A, V> operator*(double s, const Quantity<A, V>& M) {
  return Quantity<A, V>(s * M.si_value());
}

/// \brief Sum of two quantities of the same unit (one may not add amperes to volts).
template <int A1, int V1, int A2, int V2>
Quantity<A1, V1> operator+(const Quantity<A1, V1>& M, const Quantity<A2, V2>& N) {
  static_assert(A1 == A2 && V1 == V2,
                "only quantities of the same unit can be added: the ampere and volt "
                "exponents of both terms must agree");
  return Quantity<A1, V1>(M.si_value() + N.si_value());
}

/// \brief Difference of two quantities of the same unit.
template <int A1, int V1, int A2, int V2>
Quantity<A1, V1> operator-(const Quantity<A1, V1>& M, const Quantity<A2, V2>& N) {
  static_assert(A1 == A2 && V1 == V2,
                "only quantities of the same unit can be subtracted: the ampere and volt "
                "exponents of both terms must agree");
  return Quantity<A1, V1>(M.si_value() - N.si_value());
}

/// \brief Entry-wise \f$ e^{M} \f$: defined only for a dimensionless \f$ M \f$, since
/// \f$ e^{m} = 1 + m + m^2/2 + \dots \f$ adds powers of \f$ m \f$, and these have different
/// units unless \f$ m \f$ has none.
template <int A, int V>
Dimensionless exp(const Quantity<A, V>& M) {
  static_assert(A == 0 && V == 0,
                "exp needs a dimensionless argument: its ampere and volt exponents "
                "must be 0");
  return Dimensionless(M.si_value().array().exp().matrix());
}

// [units-softmax]
/// \brief Row-wise softmax (through the library's stable attn::softmax_rows()): defined
/// only for dimensionless scores, because softmax is built from exp().
template <int A, int V>
Dimensionless softmax_rows(const Quantity<A, V>& S) {
  static_assert(A == 0 && V == 0,
                "softmax needs a dimensionless argument: the ampere and volt exponents "
                "of the scores must be 0");
  return Dimensionless(softmax_rows(S.si_value()));
}
// [units-softmax]

/// \brief Least squares with units: for \f$ X \f$ in \f$ u_X \f$ and \f$ Y \f$ in
/// \f$ u_Y \f$, \f$ \hat\beta = (X^\top X)^{-1} X^\top Y \f$ has the unit
/// \f$ u_Y / u_X \f$ (computed by attn::least_squares_qr()).
template <int AX, int VX, int AY, int VY>
Quantity<AY - AX, VY - VX> least_squares(const Quantity<AX, VX>& X,
                                         const Quantity<AY, VY>& Y) {
  if (Y.cols() != 1)
    throw std::invalid_argument("least_squares: Y must be a single column");
  return Quantity<AY - AX, VY - VX>(least_squares_qr(X.si_value(), Y.si_value().col(0)));
}

/// \brief The whitening map \f$ L = \Lambda^{-1} R^\top \f$ of \f$ X \f$ (see
/// attn::whitening_map()): it divides by singular values of \f$ X \f$, so its unit is the
/// inverse of that of \f$ X \f$, and \f$ L X^\top \f$ is dimensionless.
template <int A, int V>
Quantity<-A, -V> whitening_map(const Quantity<A, V>& X) {
  return Quantity<-A, -V>(whitening_map(X.si_value()));
}

/// \brief The size of the unit \f$ (a\,\mathrm{A})^{A} (v\,\mathrm{V})^{V} \f$ in SI units:
/// \f$ a^{A} v^{V} \f$ (e.g. \f$ a = 10^{-3} \f$, \f$ A = 1 \f$: a milliampere is
/// \f$ 10^{-3} \f$ A). from_units() multiplies by it, in_units() divides by it.
/// \throws std::invalid_argument unless \f$ a \f$ and \f$ v \f$ are finite and > 0.
double unit_factor(int ampere_exponent, int volt_exponent, double ampere_unit,
                   double volt_unit);

/// \brief Numbers measured in the unit \f$ (a\,\mathrm{A})^{A} (v\,\mathrm{V})^{V} \f$
/// (e.g. \f$ a = 10^{-3} \f$ for milliamperes) as a quantity in SI units: each entry is
/// multiplied by \f$ a^{A} v^{V} \f$.
template <int A, int V>
Quantity<A, V> from_units(const Eigen::Ref<const Eigen::MatrixXd>& numbers,
                          double ampere_unit = 1.0, double volt_unit = 1.0) {
  return Quantity<A, V>(numbers * unit_factor(A, V, ampere_unit, volt_unit));
}

/// \brief The numbers of a quantity in the unit \f$ (a\,\mathrm{A})^{A}
/// (v\,\mathrm{V})^{V} \f$: each SI entry divided by \f$ a^{A} v^{V} \f$.
template <int A, int V>
Eigen::MatrixXd in_units(const Quantity<A, V>& q, double ampere_unit = 1.0,
                         double volt_unit = 1.0) {
  return q.si_value() / unit_factor(A, V, ampere_unit, volt_unit);
}

}  // namespace attn
