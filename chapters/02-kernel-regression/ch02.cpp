#include "ch02.hpp"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "attn/attention.hpp"
#include "attn/softmax.hpp"
#include "experiments/statistics.hpp"

namespace ch02 {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

std::vector<double> to_vector(const VectorXd& v) {
  return {v.data(), v.data() + v.size()};
}

}  // namespace

// [problem]
// The regression function the data are drawn from: y = f(x) + noise, x uniform on [0, 1].
double truth(double x) {
  return std::sin(2 * std::numbers::pi * x);
}

Data make_data(Index n, double noise, attn::Rng& rng) {
  Data data{attn::random_uniform(n, 1, rng, 0.0, 1.0), MatrixXd(n, 1)};
  const MatrixXd eps = attn::random_normal(n, 1, rng);
  for (Index i = 0; i < n; ++i) data.Y(i, 0) = truth(data.X(i, 0)) + noise * eps(i, 0);
  return data;
}
// [problem]

VectorXd truth_on(const MatrixXd& T) {
  return T.col(0).unaryExpr([](double x) { return truth(x); });
}

double mse_against_truth(const MatrixXd& T, const MatrixXd& fit) {
  return (fit - T.unaryExpr([](double x) { return truth(x); })).squaredNorm() /
         static_cast<double>(T.rows());
}

GridFit fit_on_grid(const MatrixXd& T, const Data& data, attn::Kernel kernel, double h) {
  const Index m = T.rows();
  GridFit g{VectorXd(m)};
  for (Index j = 0; j < m; ++j) {  // row by row, so that a gap is one query's
    try {
      g.fit(j) = attn::nadaraya_watson(T.row(j), data.X, data.Y, kernel, h)(0, 0);
    } catch (const std::domain_error&) {  // no key within h: 0/0
      g.fit(j) = nan;
    }
  }
  const Eigen::ArrayXd error = g.fit - truth_on(T);
  g.gaps = error.isNaN().count();
  g.mse = g.gaps == m ? nan
                      : error.isNaN().select(0, error).square().sum() /
                            static_cast<double>(m - g.gaps);
  return g;
}

MatrixXd map_queries() {
  return VectorXd::LinSpaced(40, 0.0125, 0.9875);
}

MatrixXd sorted_keys(const Data& data) {
  MatrixXd X = data.X;
  std::sort(X.data(), X.data() + X.size());
  return X;
}

MatrixXd weight_map(const MatrixXd& T, const MatrixXd& X, attn::Kernel k, double h) {
  const Index m = T.rows();
  // [weights]
  // Row j: the weights of query t_j over the keys x_i, a row of attention weights.
  MatrixXd W(m, X.rows());
  for (Index j = 0; j < m; ++j) {
    try {
      W.row(j) = attn::nw_weights(T.row(j), X, k, h);
    } catch (const std::domain_error&) {  // no key within h: this row is 0/0
      W.row(j).setConstant(nan);
    }
  }
  // [weights]
  return W;
}

Index empty_rows(const MatrixXd& W) {
  return W.col(0).array().isNaN().count();
}

double effective_keys(const MatrixXd& W) {
  const Eigen::ArrayXd keys = W.rowwise().squaredNorm().cwiseInverse();
  const Index empty = keys.isNaN().count();
  return keys.isNaN().select(0, keys).sum() /
         double(std::max<Index>(1, W.rows() - empty));
}

MatrixXd attention_at_bandwidth(const MatrixXd& Q, const MatrixXd& K, double h,
                                bool key_bias) {
  const Index nq = Q.rows(), d = Q.cols();
  // [bridge-check]
  // The library's attention, softmax(Q' K^T / sqrt(d) + M), with Q' = Q sqrt(d) / h^2
  // and the key bias M_ij = -|k_j|^2 / 2h^2 as its additive matrix (or no M at all):
  const double s = std::sqrt(static_cast<double>(d)) / (h * h);
  if (!key_bias) return attn::attention_weights(s * Q, K, MatrixXd());
  const Eigen::RowVectorXd bias = -K.rowwise().squaredNorm().transpose() / (2 * h * h);
  const MatrixXd M = MatrixXd::Ones(nq, 1) * bias;
  return attn::attention_weights(s * Q, K, M);
  // [bridge-check]
}

MatrixXd plain_softmax_fit(const MatrixXd& T, const Data& data, double h) {
  return attn::softmax_rows(T * data.X.transpose() / (h * h)) * data.Y;
}

MatrixXd interior_grid(Index m) {
  return VectorXd::LinSpaced(m, 0.25, 0.75);
}

double interior_mse(const Data& data, attn::Kernel kernel, double h, Index m) {
  const MatrixXd T = interior_grid(m);
  const MatrixXd fit = attn::nadaraya_watson(T, data.X, data.Y, kernel, h);
  double sum = 0;
  for (Index j = 0; j < m; ++j) sum += std::pow(fit(j, 0) - truth(T(j, 0)), 2);
  return sum / static_cast<double>(m);
}

// [rate]
// Bandwidth of the consistency experiment: h = c n^{-1/5}, which balances squared bias
// (~ h^4) against variance (~ 1 / (n h)); both then fall like n^{-4/5}. Compact kernels
// get a wider h, so that every kernel averages with the same spread (standard deviation
// c n^{-1/5}): the box kernel's spread is h / sqrt(3), the triangle's h / sqrt(6), and
// Epanechnikov's h / sqrt(5).
constexpr double bandwidth_constant = 0.15;
double rate_bandwidth(Index n, attn::Kernel kernel) {
  const double scale[] = {1.0, std::sqrt(3.0), std::sqrt(6.0), std::sqrt(5.0)};
  return scale[static_cast<int>(kernel)] * bandwidth_constant *
         std::pow(static_cast<double>(n), -0.2);
}
// [rate]

// Bias^2 ~ A h^4 with A = mean over [0.25, 0.75] of (mu_2 f''/2)^2 = 2 pi^4 for the kernel's
// spread mu_2 h^2 = c^2 n^{-2/5}; variance ~ noise^2 R / (n h) with R = the integral of the
// kernel normalised to area 1 (and to its support's radius) squared, and h = scale c n^{-1/5}.
double rate_scaled_mse_limit(double noise, attn::Kernel kernel) {
  const double pi = std::numbers::pi;
  const double scale[] = {1.0, std::sqrt(3.0), std::sqrt(6.0), std::sqrt(5.0)};
  const double R[] = {1 / (2 * std::sqrt(pi)), 1.0 / 2, 2.0 / 3, 3.0 / 5};
  const int k = static_cast<int>(kernel);
  const double c = bandwidth_constant, A = 2 * std::pow(pi, 4);
  return A * std::pow(c, 4) + noise * noise * R[k] / (scale[k] * c);
}

// std::log, not Eigen's vectorised log, which trips GCC 12's -Wuninitialized inside the
// AVX-512 intrinsics under -march=native.
VectorXd log_of(const VectorXd& v) {
  return v.unaryExpr([](double x) { return std::log(x); });
}

Index replicates_at(Index n, Index n0, Index replicates) {
  const double r = static_cast<double>(replicates) *
                   std::sqrt(static_cast<double>(n0) / static_cast<double>(n));
  return std::max<Index>(4, static_cast<Index>(std::lround(r)));
}

// [consistency]
// For each n: `replicates_at` independent data sets, h = rate_bandwidth(n), the interior
// MSE of each fit; then the least-squares line of log(mean MSE) against log(n). The
// slope's standard error propagates each level's sampling error: Var(b) = sum_k c_k^2
// Var(log e_k), where b = sum_k c_k log e_k is the least-squares slope.
RateFit consistency(const std::vector<Index>& ns, Index replicates, double noise,
                    attn::Kernel kernel, Index grid, attn::Rng& rng,
                    const std::function<void(Index, Index)>& progress) {
  const auto K = static_cast<Index>(ns.size());
  RateFit fit{VectorXd(K), VectorXd(K), VectorXd(K), VectorXd(K)};
  for (Index k = 0; k < K; ++k) {
    const Index n = ns[std::size_t(k)];
    const Index R = replicates_at(n, ns.front(), replicates);
    progress(k, K);
    VectorXd e(R);
    for (Index r = 0; r < R; ++r)
      e(r) =
          interior_mse(make_data(n, noise, rng), kernel, rate_bandwidth(n, kernel), grid);
    const double mean = e.mean();
    const double sd = std::sqrt((e.array() - mean).square().sum() / double(R - 1));
    fit.n(k) = static_cast<double>(n);
    fit.mean_error(k) = mean;
    fit.log_error_se(k) = sd / (mean * std::sqrt(static_cast<double>(R)));
    fit.replicates(k) = static_cast<double>(R);
  }
  const experiments::LineFit line =
      experiments::fit_line(to_vector(log_of(fit.n)), to_vector(log_of(fit.mean_error)),
                            to_vector(fit.log_error_se));
  fit.slope = line.slope;
  fit.slope_se = line.slope_se;
  fit.intercept = line.intercept;
  return fit;
}
// [consistency]

NearestLimit nearest_limit(const MatrixXd& q, const MatrixXd& X, const MatrixXd& Y,
                           double per_unit) {
  // The limit is a fact of double arithmetic with its default rounding, to nearest: rounding
  // upward (the contract test runs every program so once) e^{-s} never underflows to 0, and
  // the estimate never becomes the nearest label exactly. Computed to nearest whatever the
  // caller's mode, which is restored on return.
  struct ToNearest {
    const int saved = std::fegetround();
    ToNearest() { std::fesetround(FE_TONEAREST); }
    ~ToNearest() { std::fesetround(saved); }
  } to_nearest;
  const VectorXd D = attn::squared_distances(q, X).row(0).transpose();
  Index a = 0, b = 0;
  D.minCoeff(&a);
  VectorXd rest = D;
  rest(a) = std::numeric_limits<double>::infinity();
  rest.minCoeff(&b);
  const double delta = D(b) - D(a);
  if (!(delta > 0))
    throw std::invalid_argument("nearest_limit: the two nearest keys tie");
  const auto h = [&](double s) { return std::sqrt(delta / (2 * s)); };
  const auto exact = [&](double s) {
    return attn::nadaraya_watson(q, X, Y, attn::Kernel::gaussian, h(s))(0, 0) == Y(a, 0);
  };
  // From a grid point where the estimate is exact (at the latest where every other weight
  // has underflowed, s > 746), down to the first one where it is not.
  auto k = static_cast<Index>(48 * per_unit);
  while (!exact(double(k) / per_unit)) {
    if (double(k) / per_unit > 4096)  // past e^{-2048} = 0: exact by now, or never
      throw std::logic_error("nearest_limit: the estimate never becomes the nearest label");
    k *= 2;
  }
  while (k > 1 && exact(double(k - 1) / per_unit)) --k;
  NearestLimit limit;
  limit.exact_from = double(k) / per_unit;
  limit.second_weight_at_exact =
      attn::nw_weights(q, X, attn::Kernel::gaussian, h(limit.exact_from))(0, b);
  // The second-nearest weight e^{-s} / (1 + ...) falls with s: bisect for where it is 0.
  double lo = 1, hi = 2048;  // e^{-2048} is 0 in double precision
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    const double w = attn::nw_weights(q, X, attn::Kernel::gaussian, h(mid))(0, b);
    (w == 0.0 ? hi : lo) = mid;
  }
  limit.zero_from = hi;
  return limit;
}

}  // namespace ch02
