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

namespace {
// phi(q).phi(k) for `trials` fresh direction draws: one loop, so every estimator draws from
// rng in the same order.
template <class Draw, class Map>
VectorXd estimates_of(Draw draw, Map map, const VectorXd& q, const VectorXd& k, Index r,
                      int trials, attn::Rng& rng) {
  MatrixXd X(2, q.size());
  X.row(0) = q.transpose();
  X.row(1) = k.transpose();
  VectorXd est(trials);
  for (int trial = 0; trial < trials; ++trial) {
    const MatrixXd phi = map(X, draw(r, q.size(), rng));
    est(trial) = phi.row(0).dot(phi.row(1));
  }
  return est;
}
}  // namespace

VectorXd kernel_estimates(Estimator e, const VectorXd& q, const VectorXd& k, Index r,
                          int trials, attn::Rng& rng) {
  return estimates_of([e](Index r_, Index d, attn::Rng& g) { return directions(e, r_, d, g); },
                      [e](const MatrixXd& X, const MatrixXd& W) { return features(e, X, W); },
                      q, k, r, trials, rng);
}

VectorXd kernel_estimates(const FeatureMap& feature_map, const VectorXd& q, const VectorXd& k,
                          Index r, int trials, attn::Rng& rng) {
  return estimates_of(attn::gaussian_directions, feature_map, q, k, r, trials, rng);
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
  // The random features first (the only draws), listed last: in the student copy
  // exp_limit_features (exercise 05.6) throws, and the sections after this one must still
  // draw the same numbers as in the full book.
  std::vector<MapError> random;
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
    random.push_back({"random", "random r=" + std::to_string(r),
                      "random_r" + std::to_string(r), r, std::sqrt(mean_square)});
  }
  std::vector<MapError> rows;
  for (int p = 1; p <= max_taylor_p; ++p) {
    const MatrixXd phiQ = attn::taylor_features(Q, p), phiK = attn::taylor_features(K, p);
    rows.push_back({"taylor", "Taylor p=" + std::to_string(p),
                    "taylor_p" + std::to_string(p), phiQ.cols(), error(phiQ, phiK)});
  }
  for (int p = 1; p <= max_exp_limit_p; ++p) {
    const std::string label = "exp-limit p=" + std::to_string(p);
    try {
      const MatrixXd psiQ = attn::exp_limit_features(Q, p),
                     psiK = attn::exp_limit_features(K, p);
      rows.push_back({"exp_limit", label, "exp_limit_p" + std::to_string(p), psiQ.cols(),
                      error(psiQ, psiK)});
    } catch (const attn::exercise_not_done& e) {  // the student copy: the row says so
      rows.push_back({"exp_limit", "exp-limit", "exp_limit", 0, 0, e});
      break;
    }
  }
  rows.insert(rows.end(), random.begin(), random.end());
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

AttentionChecks attention_checks(Index n, Index d, Index r, attn::Rng& rng) {
  AttentionChecks c;
  // Entries N(0, 2/d_k): |q|^2 ~ 2 and logits with standard deviation 2/sqrt(d_k).
  const double sigma = std::sqrt(2.0 / double(d));
  const MatrixXd Q = attn::random_normal(n, d, rng, sigma),
                 K = attn::random_normal(n, d, rng, sigma),
                 V = attn::random_normal(n, d, rng);
  const MatrixXd W = attn::gaussian_directions(r, d, rng);
  using enum attn::Stabiliser;
  const auto features = [&](const MatrixXd& X, attn::Stabiliser s = none,
                            double eps = 0) {
    return attn::positive_random_features(X, W, s, eps);
  };
  const auto relative = [](const MatrixXd& a, const MatrixXd& b) {
    return (a - b).lpNorm<Eigen::Infinity>() / b.lpNorm<Eigen::Infinity>();
  };
  const MatrixXd phiQ = features(Q), phiK = features(K);
  const MatrixXd fast = attn::linear_attention(phiQ, phiK, V);            // O(n r d_k)
  const MatrixXd slow = attn::kernel_attention_quadratic(phiQ, phiK, V);  // O(n^2 r)
  const MatrixXd rnn = attn::causal_linear_attention(phiQ, phiK, V);
  const MatrixXd masked =
      attn::kernel_attention_quadratic(phiQ, phiK, V, attn::Masking::causal);
  c.linear_vs_quadratic = relative(fast, slow);
  c.causal_rnn_vs_masked = relative(rnn, masked);
  // Subtracting the maxima (per query, once over all keys) cancels exactly.
  const MatrixXd sQ = features(Q, per_row), sK = features(K, global);
  c.stabiliser_change = relative(attn::linear_attention(sQ, sK, V), fast);

  // At 30 times the norms the features underflow; the stabilisers keep the output attention.
  c.x30 = scaled_by_30(Q, K, V, W);

  // Performer's epsilon, added to every (stabilised) feature, does not cancel: total
  // variation distance of the weights from those without it.
  const MatrixXd A0 = attn::kernel_attention_weights(sQ, sK);
  for (const double eps : {1e-8, 1e-6, 1e-4, 1e-2}) {
    const MatrixXd A1 = attn::kernel_attention_weights(features(Q, per_row, eps),
                                                       features(K, global, eps));
    c.epsilon_tv.emplace_back(eps, 0.5 * (A1 - A0).cwiseAbs().rowwise().sum().mean());
  }

  // Each map's normalised weights against softmax's: mean total variation distance per row.
  const MatrixXd target = attn::softmax_rows(Q * K.transpose());
  const auto compare = [&](const std::string& label, const std::string& name,
                           const MatrixXd& phiQ, const MatrixXd& phiK) {
    // [tv-distance]
    const MatrixXd W_raw = phiQ * phiK.transpose();
    const MatrixXd A_hat = normalised_rows(W_raw);  // rows divided by their sums
    const double tv = 0.5 * (A_hat - target).cwiseAbs().rowwise().sum().mean();
    // [tv-distance]
    c.maps.push_back({label, name, phiQ.cols(), tv, W_raw.minCoeff()});
  };
  const MatrixXd Wo = attn::orthogonal_directions(r, d, rng),
                 Wt = attn::gaussian_directions(r / 2, d, rng);
  compare("positive, r = " + std::to_string(r), "positive", phiQ, phiK);
  compare("orthogonal, r = " + std::to_string(r), "orthogonal",
          attn::positive_random_features(Q, Wo), attn::positive_random_features(K, Wo));
  compare("trigonometric, r = " + std::to_string(r / 2), "trigonometric",
          attn::trig_random_features(Q, Wt), attn::trig_random_features(K, Wt));
  // About d_k^2 features each: the program checked the run's memory, so the feature
  // maps' own limit of 1 GiB is lifted.
  const double no_limit = std::numeric_limits<double>::infinity();
  compare("Taylor, p = 2", "taylor_p2", attn::taylor_features(Q, 2, no_limit),
          attn::taylor_features(K, 2, no_limit));
  try {
    compare("exp-limit, p = 2", "exp_limit_p2", attn::exp_limit_features(Q, 2, no_limit),
            attn::exp_limit_features(K, 2, no_limit));
  } catch (const attn::exercise_not_done& e) {  // the student copy: the row says so
    c.maps.push_back({"exp-limit, p = 2", "exp_limit_p2", 0, 0, 0, e});
  }
  return c;
}

MatrixXd normalised_rows(const MatrixXd& W) {
  return W.rowwise().sum().cwiseInverse().asDiagonal() * W;
}

double exp_limit_kernel(double t, int p) {
  return std::pow(1 + t / p, double(p));
}

Ranks ranks(Index n, Index d, Index r_max, attn::Rng& rng,
            const std::function<void(const std::string&)>& progress) {
  const double sigma = std::pow(double(d), -0.25);  // logits with variance 1
  const MatrixXd Q = attn::random_normal(n, d, rng, sigma),
                 K = attn::random_normal(n, d, rng, sigma);
  Ranks k;
  // [rank]
  const MatrixXd A = attn::softmax_rows(Q * K.transpose());
  const auto linear = [&](Index r) {  // diag(W 1)^-1 W, W = phi(Q) phi(K)^T, r features
    const MatrixXd W = attn::gaussian_directions(r, d, rng);
    return attn::kernel_attention_weights(attn::positive_random_features(Q, W),
                                          attn::positive_random_features(K, W));
  };
  const Index r_small = std::min<Index>(16, n), r_big = std::min<Index>(r_max, n);
  const VectorXd sA = attn::singular_values(A);
  const VectorXd s16 = attn::singular_values(linear(r_small));
  const VectorXd sr = attn::singular_values(linear(r_big));
  // [rank]
  k.r_small = r_small;
  k.r_big = r_big;
  k.s_softmax = sA;
  k.s_small = s16;
  k.s_big = sr;
  const MatrixXd logits = Q * K.transpose();
  k.favourites = favourite_keys(logits);
  k.by_scale = rank_against_scale(logits, k.favourites, progress);
  k.saturation_scale = 100 / k.favourites.smallest_gap;
  k.rank_saturated =
      attn::numerical_rank(attn::softmax_rows(k.saturation_scale * logits), 1e-10);
  return k;
}

Index rank_of(const VectorXd& s) {
  return (s.array() > 1e-10 * s(0)).count();
}

}  // namespace ch05
