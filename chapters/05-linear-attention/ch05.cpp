// Chapter 05's computations (ch05.hpp says what they are for).
#include "ch05.hpp"

#include <limits>

#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "attn/softmax.hpp"
#include "attn/svd.hpp"

namespace ch05 {

const char* name(Estimator e) {
  switch (e) {
    case Estimator::positive:
      return "positive";
    case Estimator::orthogonal:
      return "orthogonal";
    default:
      return "trigonometric";
  }
}

VectorXd kernel_estimates(Estimator e, const VectorXd& q, const VectorXd& k, Index r,
                          int trials, attn::Rng& rng) {
  MatrixXd X(2, q.size());
  X.row(0) = q.transpose();
  X.row(1) = k.transpose();
  VectorXd est(trials);
  for (int trial = 0; trial < trials; ++trial) {
    const MatrixXd phi = features(e, X, directions(e, r, q.size(), rng));
    est(trial) = phi.row(0).dot(phi.row(1));
  }
  return est;
}

double relative_rmse(const VectorXd& est, double truth) {
  return std::sqrt((est.array() - truth).square().mean()) / truth;
}

double positive_relative_mse(const VectorXd& q, const VectorXd& k, double r) {
  return std::expm1((q + k).squaredNorm()) / r;
}

double trig_relative_mse(const VectorXd& q, const VectorXd& k, double r) {
  const double D = (q - k).squaredNorm();
  return std::exp(D) * std::pow(-std::expm1(-D), 2) / (2 * r);
}

MatrixXd rmse_against_r(const VectorXd& q, const VectorXd& k, int max_log2_r, int trials,
                        attn::Rng& rng,
                        const std::function<void(const std::string&)>& progress) {
  const double truth = std::exp(q.dot(k));
  MatrixXd table(max_log2_r - 1, 6);
  for (int j = 2; j <= max_log2_r; ++j) {
    const Index r = Index(1) << j;
    progress("random features: r = " + std::to_string(r) + " of " +
             std::to_string(1 << max_log2_r));
    table(j - 2, 0) = double(r);
    for (int e = 0; e < 3; ++e) {
      // [rf-rmse]
      const VectorXd est = kernel_estimates(Estimator(e), q, k, r, trials, rng);
      table(j - 2, 1 + e) = relative_rmse(est, truth);
      // [rf-rmse]
    }
    table(j - 2, 4) = std::sqrt(positive_relative_mse(q, k, double(r)));
    table(j - 2, 5) = std::sqrt(trig_relative_mse(q, k, double(r)));
  }
  progress("");
  return table;
}

void pair_with_product(Index d, double norm, double t, VectorXd& q, VectorXd& k) {
  if (d < 2 || std::abs(t) > norm * norm)
    throw std::invalid_argument("pair_with_product");
  const double c = t / (norm * norm);
  q = VectorXd::Zero(d);
  k = VectorXd::Zero(d);
  q(0) = norm;
  k(0) = norm * c;
  k(1) = norm * std::sqrt(std::max(0.0, 1 - c * c));
}

MatrixXd rmse_against_kernel(Index d, Index r, int trials, attn::Rng& rng) {
  MatrixXd table(17, 7);
  for (int i = 0; i <= 16; ++i) {
    const double t = -1 + i / 8.0;
    VectorXd q, k;
    pair_with_product(d, 1.0, t, q, k);
    const VectorXd pos = kernel_estimates(Estimator::positive, q, k, r, trials, rng);
    const VectorXd trig =
        kernel_estimates(Estimator::trigonometric, q, k, r, trials, rng);
    table.row(i) << t, std::exp(t), relative_rmse(pos, std::exp(t)),
        relative_rmse(trig, std::exp(t)),
        std::sqrt(positive_relative_mse(q, k, double(r))),
        std::sqrt(trig_relative_mse(q, k, double(r))),
        (trig.array() < 0).cast<double>().mean();
  }
  return table;
}

TaylorErrors taylor_errors(const std::vector<double>& ts) {
  TaylorErrors e{MatrixXd(21, 1 + 2 * Index(ts.size()))};
  for (int p = 0; p <= 20; ++p) {
    e.table(p, 0) = p;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const double t = ts[i];
      // [lagrange]
      const double error = std::abs(std::exp(t) - attn::taylor_exp(t, p));
      const double bound = std::exp(std::max(t, 0.0)) * std::pow(std::abs(t), p + 1) /
                           std::tgamma(p + 2.0);
      // [lagrange]
      e.table(p, 1 + 2 * Index(i)) = error;
      e.table(p, 2 + 2 * Index(i)) = bound;
      // Below ~1e-15 relative the "error" is rounding of exp(t), not truncation.
      if (error > 1e-13 * std::exp(t))
        e.worst_ratio = std::max(e.worst_ratio, error / bound);
    }
  }
  return e;
}

double exp_limit(double t, double p) {
  return t / p > -1 ? std::exp(p * std::log1p(t / p)) : std::pow(1 + t / p, p);
}

MatrixXd exp_limit_errors(const std::vector<double>& ts) {
  MatrixXd table(21, 1 + 2 * Index(ts.size()));
  for (int k = 0; k <= 20; ++k) {
    const double p = std::ldexp(1.0, k);
    table(k, 0) = p;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const double t = ts[i];
      table(k, 1 + 2 * Index(i)) = std::abs(std::exp(t) - exp_limit(t, p));
      table(k, 2 + 2 * Index(i)) = std::exp(t) * t * t / (2 * p);
    }
  }
  return table;
}

double taylor_root(int p) {
  if (p % 2 == 0) throw std::invalid_argument("taylor_root: even orders have none");
  double lo = -(p + 1.0), hi = 0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (attn::taylor_exp(mid, p) < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double taylor_even_minimum_point(int p) {
  return p == 0 ? 0.0 : taylor_root(p - 1);
}

Underflow scaled_by_30(const MatrixXd& Q, const MatrixXd& K, const MatrixXd& V,
                       const MatrixXd& W) {
  using enum attn::Stabiliser;
  const auto from_average = [&](const MatrixXd& Y) {
    return (Y.rowwise() - V.colwise().mean()).lpNorm<Eigen::Infinity>();
  };
  const MatrixXd phiQ = attn::positive_random_features(30 * Q, W);
  Underflow u{phiQ.maxCoeff(), "0/0, refused"};
  try {
    const MatrixXd Y =
        attn::linear_attention(phiQ, attn::positive_random_features(30 * K, W), V);
    u.unstabilised = Y.allFinite() ? "" : "the output is not finite";
    if (Y.allFinite()) u.unstabilised_distance = from_average(Y);
  } catch (const std::invalid_argument&) {
  }
  u.stabilised_distance = from_average(
      attn::linear_attention(attn::positive_random_features(30 * Q, W, per_row),
                             attn::positive_random_features(30 * K, W, global), V));
  return u;
}

std::vector<MapError> errors_at_dimension(const MatrixXd& Q, const MatrixXd& K,
                                          int max_taylor_p, int max_exp_limit_p,
                                          int max_log2_r, attn::Rng& rng) {
  const MatrixXd exact = (Q * K.transpose()).array().exp();
  const auto error = [&](const MatrixXd& phiQ, const MatrixXd& phiK) {
    return (phiQ * phiK.transpose() - exact).norm() / exact.norm();
  };
  std::vector<MapError> rows;
  for (int p = 1; p <= max_taylor_p; ++p) {
    const MatrixXd phiQ = attn::taylor_features(Q, p), phiK = attn::taylor_features(K, p);
    rows.push_back({"taylor", "Taylor p=" + std::to_string(p),
                    "taylor_p" + std::to_string(p), phiQ.cols(), error(phiQ, phiK)});
  }
  for (int p = 1; p <= max_exp_limit_p; ++p) {
    const MatrixXd psiQ = attn::exp_limit_features(Q, p),
                   psiK = attn::exp_limit_features(K, p);
    rows.push_back({"exp_limit", "exp-limit p=" + std::to_string(p),
                    "exp_limit_p" + std::to_string(p), psiQ.cols(), error(psiQ, psiK)});
  }
  for (int j = 2; j <= max_log2_r; j += 2) {
    const Index r = Index(1) << j;
    double mean_square = 0;
    for (int draw = 0; draw < 10; ++draw) {
      const MatrixXd W = attn::gaussian_directions(r, Q.cols(), rng);
      mean_square += std::pow(error(attn::positive_random_features(Q, W),
                                    attn::positive_random_features(K, W)),
                              2) /
                     10;
    }
    rows.push_back({"random", "random r=" + std::to_string(r),
                    "random_r" + std::to_string(r), r, std::sqrt(mean_square)});
  }
  return rows;
}

Favourites favourite_keys(const MatrixXd& logits) {
  std::vector<Index> favourite;
  double gap = std::numeric_limits<double>::infinity();
  for (Index i = 0; i < logits.rows(); ++i) {
    Index j = 0;
    const double top = logits.row(i).maxCoeff(&j);
    Eigen::RowVectorXd rest = logits.row(i);
    rest(j) = -std::numeric_limits<double>::infinity();
    gap = std::min(gap, top - rest.maxCoeff());
    favourite.push_back(j);
  }
  std::sort(favourite.begin(), favourite.end());
  const auto end = std::unique(favourite.begin(), favourite.end());
  return {double(end - favourite.begin()), gap};
}

MatrixXd rank_against_scale(const MatrixXd& logits, const Favourites& favourites,
                            const std::function<void(const std::string&)>& progress) {
  MatrixXd table(25, 4);
  for (int i = 0; i <= 24; ++i) {
    const double s = std::pow(10.0, -2 + i / 6.0);
    progress("rank at logit scale " + std::to_string(i + 1) + " of 25");
    const MatrixXd A = attn::softmax_rows(s * logits);
    table.row(i) << s, double(attn::numerical_rank(A, 1e-10)),
        double(attn::numerical_rank(A, 1e-6)), favourites.distinct_keys;
  }
  progress("");
  return table;
}

MatrixXd directions(Estimator e, Index r, Index d, attn::Rng& rng) {
  return e == Estimator::orthogonal ? attn::orthogonal_directions(r, d, rng)
                                    : attn::gaussian_directions(r, d, rng);
}

MatrixXd features(Estimator e, const MatrixXd& X, const MatrixXd& W) {
  return e == Estimator::trigonometric ? attn::trig_random_features(X, W)
                                       : attn::positive_random_features(X, W);
}

MatrixXd normalised_rows(const MatrixXd& W) {
  return W.rowwise().sum().cwiseInverse().asDiagonal() * W;
}

double exp_limit_kernel(double t, int p) {
  return std::pow(1 + t / p, double(p));
}

}  // namespace ch05
