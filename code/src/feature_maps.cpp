#include "attn/feature_maps.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "attn/exercise.hpp"
#include "common.hpp"
#include "tensor_power.hpp"

namespace attn {

namespace {

using detail::next_power;
using detail::number;
using Eigen::Index;
using Eigen::MatrixXd;

// Human-readable byte count: "3.2 GiB", "1.6e+21 GiB".
std::string bytes(double b) {
  const double kib = 1024.0, mib = kib * 1024, gib = mib * 1024;
  if (b < mib) return number(b / kib, "%.0f") + " KiB";
  if (b < gib) return number(b / mib, "%.0f") + " MiB";
  if (b < 1e6 * gib) return number(b / gib, "%.1f") + " GiB";
  return number(b / gib, "%.2g") + " GiB";
}


}  // namespace

double taylor_feature_dim(Index d, int p) {
  double dim = 0, power = 1;
  for (int l = 0; l <= p; ++l, power *= static_cast<double>(d)) dim += power;
  return dim;
}

double exp_limit_feature_dim(Index d, int p) {
  return std::pow(static_cast<double>(d + 1), p);
}

void check_feature_size(const std::string& what, Index rows, double dim,
                        double limit_bytes) {
  const double need = static_cast<double>(rows) * dim * sizeof(double);
  if (need > limit_bytes) {
    std::string need_text = bytes(need), limit_text = bytes(limit_bytes);
    if (need_text == limit_text) {  // rounded alike: say the bytes
      need_text = number(need, "%.0f") + " bytes";
      limit_text = number(limit_bytes, "%.0f") + " bytes";
    }
    throw feature_size_error(what + " has " + number(dim, "%.4g") + " features; " +
                             std::to_string(rows) + " rows of them need " + need_text +
                             ", over the limit of " + limit_text);
  }
}

double taylor_exp(double t, int p) {
  double sum = 1, term = 1;  // l = 0: t^0 / 0! = 1 (the seed's sum starts at 1)
  for (int l = 1; l <= p; ++l) {
    term *= t / l;  // t^l / l!
    sum += term;
  }
  return sum;
}

MatrixXd taylor_features(const Eigen::Ref<const MatrixXd>& X, int p, double limit_bytes) {
  if (p < 0)
    throw std::invalid_argument("taylor_features: order p = " + std::to_string(p) +
                                " < 0");
  const Index d = X.cols();
  const double dim = taylor_feature_dim(d, p);
  check_feature_size(
      "the Taylor map of order " + std::to_string(p) + " in d_k = " + std::to_string(d),
      X.rows(), dim, limit_bytes);
  MatrixXd phi(X.rows(), static_cast<Index>(dim));
  // [taylor-features]
  MatrixXd block = MatrixXd::Ones(X.rows(), 1);  // x^{(x)0} = 1
  Index col = 0;
  double factorial = 1;  // l!
  for (int l = 0; l <= p; ++l) {
    if (l > 0) {
      block = next_power(block, X);  // x^{(x)l}: d^l columns
      factorial *= l;
    }
    phi.middleCols(col, block.cols()) = block / std::sqrt(factorial);
    col += block.cols();
  }
  // [taylor-features]
  return phi;
}

MatrixXd gaussian_directions(Index r, Index d, Rng& rng) {
  return random_normal(r, d, rng);
}

MatrixXd orthogonal_directions(Index r, Index d, Rng& rng) {
  MatrixXd W(r, d);
  for (Index start = 0; start < r; start += d) {
    const MatrixXd G = random_normal(d, d, rng);
    const Eigen::HouseholderQR<MatrixXd> qr(G);
    MatrixXd Qm = qr.householderQ();
    // Make the factorisation unique (R with a positive diagonal): Q is then Haar.
    for (Index j = 0; j < d; ++j)
      if (qr.matrixQR()(j, j) < 0) Qm.col(j) = -Qm.col(j);
    const Index rows = std::min(d, r - start);
    // Row lengths of independent N(0, I_d) vectors (chi with d degrees of freedom).
    const Eigen::VectorXd lengths = random_normal(rows, d, rng).rowwise().norm();
    W.middleRows(start, rows) = lengths.asDiagonal() * Qm.topRows(rows);
  }
  return W;
}

MatrixXd positive_random_features(const Eigen::Ref<const MatrixXd>& X,
                                  const Eigen::Ref<const MatrixXd>& W,
                                  Stabiliser stabiliser, double epsilon) {
  if (X.cols() != W.cols())
    throw std::invalid_argument("positive_random_features: X has width " +
                                std::to_string(X.cols()) + ", directions W have " +
                                std::to_string(W.cols()));
  // [positive-features]
  // Exponents omega_i . x - |x|^2 / 2, one row per x, one column per direction.
  MatrixXd E = X * W.transpose();
  E.colwise() -= 0.5 * X.rowwise().squaredNorm();
  if (stabiliser == Stabiliser::per_row && E.size() > 0)
    E.colwise() -= E.rowwise().maxCoeff();  // e^{-c_i} cancels in row i's normalisation
  else if (stabiliser == Stabiliser::global && E.size() > 0)
    E.array() -= E.maxCoeff();  // one common factor e^{-c}
  MatrixXd phi = E.array().exp() / std::sqrt(static_cast<double>(W.rows()));
  // [positive-features]
  if (epsilon != 0.0) phi.array() += epsilon;
  if (!phi.allFinite())
    throw std::invalid_argument(
        "positive_random_features: a feature overflowed (exponent above 709); use a "
        "stabiliser");
  return phi;
}

MatrixXd trig_random_features(const Eigen::Ref<const MatrixXd>& X,
                              const Eigen::Ref<const MatrixXd>& W) {
  if (X.cols() != W.cols())
    throw std::invalid_argument("trig_random_features: X has width " +
                                std::to_string(X.cols()) + ", directions W have " +
                                std::to_string(W.cols()));
  const Index r = W.rows();
  const MatrixXd P = X * W.transpose();
  const Eigen::VectorXd scale =
      (0.5 * X.rowwise().squaredNorm()).array().exp() / std::sqrt(static_cast<double>(r));
  MatrixXd phi(X.rows(), 2 * r);
  phi.leftCols(r) = scale.asDiagonal() * P.array().cos().matrix();
  phi.rightCols(r) = scale.asDiagonal() * P.array().sin().matrix();
  if (!phi.allFinite())
    throw std::invalid_argument("trig_random_features: a feature overflowed");
  return phi;
}

}  // namespace attn
