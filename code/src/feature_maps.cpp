#include "attn/feature_maps.hpp"

#include "attn/exercise.hpp"

#include <fmt/core.h>

#include <cmath>
#include <stdexcept>

namespace attn {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;

// Human-readable byte count: "3.2 GiB", "1.6e+21 GiB".
std::string bytes(double b) {
  const double kib = 1024.0, mib = kib * 1024, gib = mib * 1024;
  if (b < mib) return fmt::format("{:.0f} KiB", b / kib);
  if (b < gib) return fmt::format("{:.0f} MiB", b / mib);
  if (b < 1e6 * gib) return fmt::format("{:.1f} GiB", b / gib);
  return fmt::format("{:.2g} GiB", b / gib);
}

// The next tensor power, row by row: from Y (n x c) and Z (n x d) the n x cd matrix with
// column i d + j equal to Y(:, i) * Z(:, j).
MatrixXd next_power(const MatrixXd& Y, const Eigen::Ref<const MatrixXd>& Z) {
  const Index d = Z.cols();
  MatrixXd out(Y.rows(), Y.cols() * d);
  for (Index i = 0; i < Y.cols(); ++i)
    for (Index j = 0; j < d; ++j) out.col(i * d + j) = Y.col(i).cwiseProduct(Z.col(j));
  return out;
}

}  // namespace

double taylor_feature_dim(Index d, int order) {
  double dim = 0, power = 1;
  for (int l = 0; l <= order; ++l, power *= static_cast<double>(d)) dim += power;
  return dim;
}

double exp_limit_feature_dim(Index d, int p) {
  return std::pow(static_cast<double>(d + 1), p);
}

void check_feature_size(const std::string& what, Index rows, double dim,
                        double limit_bytes) {
  const double need = static_cast<double>(rows) * dim * sizeof(double);
  if (need > limit_bytes)
    throw feature_size_error(fmt::format(
        "{} has {:.4g} features; {} rows of them need {}, over the limit of {}", what,
        dim, rows, bytes(need), bytes(limit_bytes)));
}

double taylor_exp(double t, int order) {
  // [taylor-exp]
  double sum = 1, term = 1;  // l = 0: t^0 / 0! = 1 (the seed's sum starts at 1)
  for (int l = 1; l <= order; ++l) {
    term *= t / l;  // t^l / l!
    sum += term;
  }
  // [taylor-exp]
  return sum;
}

MatrixXd taylor_features(const Eigen::Ref<const MatrixXd>& X, int order,
                         double limit_bytes) {
  if (order < 0)
    throw std::invalid_argument(fmt::format("taylor_features: order {} < 0", order));
  const Index d = X.cols();
  const double dim = taylor_feature_dim(d, order);
  check_feature_size(fmt::format("the Taylor map of order {} in d_k = {}", order, d),
                     X.rows(), dim, limit_bytes);
  MatrixXd phi(X.rows(), static_cast<Index>(dim));
  // [taylor-features]
  MatrixXd block = MatrixXd::Ones(X.rows(), 1);  // x^{(x)0} = 1
  Index col = 0;
  double factorial = 1;  // l!
  for (int l = 0; l <= order; ++l) {
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

MatrixXd exp_limit_features(const Eigen::Ref<const MatrixXd>& X, int p,
                            double limit_bytes) {
  if (p < 1)
    throw std::invalid_argument(fmt::format("exp_limit_features: power {} < 1", p));
  const Index d = X.cols();
  check_feature_size(fmt::format("the exp-limit map of power {} in d_k = {}", p, d),
                     X.rows(), exp_limit_feature_dim(d, p), limit_bytes);
  // BEGIN SOLUTION 05.6
  // [exp-limit-features]
  MatrixXd Z(X.rows(), d + 1);  // rows [1, x / sqrt(p)]
  Z.col(0).setOnes();
  Z.rightCols(d) = X / std::sqrt(static_cast<double>(p));
  MatrixXd psi = Z;
  for (int l = 1; l < p; ++l) psi = next_power(psi, Z);  // p-fold tensor power of Z rows
  // [exp-limit-features]
  return psi;
  // END SOLUTION
}

MatrixXd gaussian_directions(Index m, Index d, Rng& rng) {
  return random_normal(m, d, rng);
}

MatrixXd orthogonal_directions(Index m, Index d, Rng& rng) {
  MatrixXd W(m, d);
  for (Index start = 0; start < m; start += d) {
    const MatrixXd G = random_normal(d, d, rng);
    const Eigen::HouseholderQR<MatrixXd> qr(G);
    MatrixXd Qm = qr.householderQ();
    // Make the factorisation unique (R with a positive diagonal): Q is then Haar.
    for (Index j = 0; j < d; ++j)
      if (qr.matrixQR()(j, j) < 0) Qm.col(j) = -Qm.col(j);
    const Index rows = std::min(d, m - start);
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
    throw std::invalid_argument(
        fmt::format("positive_random_features: X has width {}, directions W have {}",
                    X.cols(), W.cols()));
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
    throw std::invalid_argument(
        fmt::format("trig_random_features: X has width {}, directions W have {}",
                    X.cols(), W.cols()));
  const Index m = W.rows();
  const MatrixXd P = X * W.transpose();
  const Eigen::VectorXd scale =
      (0.5 * X.rowwise().squaredNorm()).array().exp() / std::sqrt(static_cast<double>(m));
  MatrixXd phi(X.rows(), 2 * m);
  phi.leftCols(m) = scale.asDiagonal() * P.array().cos().matrix();
  phi.rightCols(m) = scale.asDiagonal() * P.array().sin().matrix();
  if (!phi.allFinite())
    throw std::invalid_argument("trig_random_features: a feature overflowed");
  return phi;
}

}  // namespace attn
