// Chapter 05's live figures: what the page computes when a reader moves a control
// (code/live/live.hpp explains the mechanism; live.js draws the results).
//
// All three share one small problem: a query q and n = 12 keys in d_k = 4 (already divided by
// d_k^(1/4), as in the chapter, so softmax(q·k_j) are the attention weights), both times √s
// for a logit scale s (s multiplies the logits, and the squared norms that the random
// features' error depends on), and values in R^4. Each figure approximates the weights of q
// with a feature map, at the chosen order or number of features, and sweeps that parameter
// for the error curve.
#include "live.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "ch05.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr Index n_keys = 12, d_k = ch05::d_poly, d_v = 4;

// The query (1 x d_k), the keys (n x d_k), the values (n x d_v), the logits q·k_j,
// and the exact softmax weights a and output o = Σ a_j v_j.
struct Problem {
  MatrixXd q, K, V;
  VectorXd logits, a, o;
};

Problem problem(int seed, double s) {
  attn::Rng rng(static_cast<attn::Rng::result_type>(seed));
  // Entries N(0, s/√d_k): the logits are s·x·y/√d_k for standard normal x, y.
  const double sigma = std::sqrt(s) * std::pow(static_cast<double>(d_k), -0.25);
  Problem P;
  P.q = attn::random_normal(1, d_k, rng, sigma);
  P.K = attn::random_normal(n_keys, d_k, rng, sigma);
  P.V = attn::random_normal(n_keys, d_v, rng);
  P.logits = P.K * P.q.transpose();
  P.a = attn::softmax(P.logits);
  P.o = P.V.transpose() * P.a;
  return P;
}

// The normalised weights â = w / Σ w from unnormalised ones w_j ≈ e^{q·k_j} (a sum ≤ 0 is
// refused, as the library does), their largest error and the relative error of the output.
struct Errors {
  bool refused = true;
  double weights = 0, output = 0;
};

Errors errors_of(const Problem& P, const VectorXd& w) {
  Errors e;
  if (!(w.sum() > 0)) return e;
  const VectorXd a_hat = ch05::normalised_rows(w.transpose()).transpose();
  e.refused = false;
  e.weights = (a_hat - P.a).cwiseAbs().maxCoeff();
  e.output = (P.V.transpose() * a_hat - P.o).norm() / P.o.norm();
  return e;
}

// What every figure shows of the chosen approximation with unnormalised weights w_j: the
// logits, the exact weights, the number of features D and of negative w_j.
void common(live::Figure& f, const Problem& P, const VectorXd& w, Index D) {
  f.number("features", static_cast<double>(D));
  f.vector("logits", P.logits).vector("exact", P.a);
  f.number("min_logit", P.logits.minCoeff());
  f.number("max_abs_logit", P.logits.cwiseAbs().maxCoeff());
  f.number("negatives", static_cast<double>((w.array() < 0).count()));
}

// The normalised weights â and the output ô of the chosen approximation, or, if the weights
// sum to 0 or less (refused), that sum.
void approximation(live::Figure& f, const Problem& P, const VectorXd& a_hat,
                   const VectorXd& o_hat) {
  f.number("refused", 0).vector("approx", a_hat);
  f.number("max_error", (a_hat - P.a).cwiseAbs().maxCoeff());
  f.number("output_error", (o_hat - P.o).norm() / P.o.norm());
  f.number("min_weight", a_hat.minCoeff());
}
void refused(live::Figure& f, const VectorXd& w) {
  f.number("refused", 1).number("weight_sum", w.sum());
}

// The deterministic maps: the weights w_j = f_p(q·k_j) that phi_p(q)·phi_p(k_j) equals (the
// identity residual says to what rounding), normalised as the program's section 5 does. The
// feature products are not used for the errors: their sums over up to 87381 features round
// differently in every build (1e-13 at p = 8), which would make errors of 1e-6 differ in
// their sixth digit; f_p(q·k) is the same number in every build.
void deterministic(live::Figure& f, const Problem& P, const VectorXd& w, Index D) {
  common(f, P, w, D);
  if (!(w.sum() > 0)) return refused(f, w);
  const VectorXd a_hat = ch05::normalised_rows(w.transpose()).transpose();
  approximation(f, P, a_hat, P.V.transpose() * a_hat);
}

// The sweep of a parameter: the error of every setting that is not refused, and the refused
// settings apart (the curve has no point there).
struct Sweep {
  std::vector<double> x, weights, output, refused;
  void add(double xv, const Errors& e) {
    if (e.refused) {
      refused.push_back(xv);
      return;
    }
    x.push_back(xv);
    weights.push_back(e.weights);
    output.push_back(e.output);
  }
  void put(live::Figure& f) const {
    const auto vec = [](const std::vector<double>& v) {
      return Eigen::Map<const VectorXd>(v.data(), static_cast<Index>(v.size()));
    };
    f.vector("sweep_x", vec(x)).vector("sweep_weights", vec(weights));
    f.vector("sweep_output", vec(output)).vector("sweep_refused", vec(refused));
  }
};

// Figure 5.1 live: the Taylor map phi_p of order p on the problem; the sweep p = 0..20 uses
// T_p(q·k) = phi_p(q)·phi_p(k) from taylor_exp (phi_p itself would need 4^p·4/3 features).
live::Figure taylor(const live::Params& p) {
  const int order = p.integer("p", 0, 8);
  const double s = p.real("s", 0.25, 4);
  const Problem P = problem(p.integer("seed", 0, 1000000), s);
  const MatrixXd phiQ = attn::taylor_features(P.q, order);
  const MatrixXd phiK = attn::taylor_features(P.K, order);
  const auto T_p = [order](double t) { return attn::taylor_exp(t, order); };
  live::Figure f;
  deterministic(f, P, P.logits.unaryExpr(T_p), phiQ.cols());
  f.number("identity_residual", ch05::identity_residual(P.q, P.K, phiQ, phiK, T_p));
  // Odd p: T_p < 0 below its root; even p: the minimum of T_p (positive).
  if (order % 2 == 1)
    f.number("root", ch05::taylor_root(order));
  else
    f.number("minimum", attn::taylor_exp(ch05::taylor_even_minimum_point(order), order));
  Sweep sweep;
  for (int k = 0; k <= 20; ++k)
    sweep.add(k, errors_of(P, P.logits.unaryExpr(
                                  [k](double t) { return attn::taylor_exp(t, k); })));
  sweep.put(f);
  return f;
}

// Figure 5.2 live: the exp-limit map psi_p of power p on the problem; the sweep runs to
// p = 2^16 with (1 + q·k/p)^p = psi_p(q)·psi_p(k) (psi_p has 5^p features).
live::Figure exp_limit_figure(const live::Params& p) {
  const int power = p.integer("p", 1, 6);
  const double s = p.real("s", 0.25, 4);
  const Problem P = problem(p.integer("seed", 0, 1000000), s);
  const MatrixXd psiQ = attn::exp_limit_features(P.q, power);
  const MatrixXd psiK = attn::exp_limit_features(P.K, power);
  live::Figure f;
  deterministic(f, P,
                P.logits.unaryExpr([power](double t) { return ch05::exp_limit(t, power); }),
                psiQ.cols());
  f.number("identity_residual",
           ch05::identity_residual(P.q, P.K, psiQ, psiK, [power](double t) {
             return ch05::exp_limit_kernel(t, power);
           }));
  Sweep sweep;
  std::vector<double> powers{1, 2, 3, 4, 5, 6};
  for (int k = 3; k <= 16; ++k) powers.push_back(std::ldexp(1.0, k));
  for (const double pw : powers)
    sweep.add(
        pw,
        errors_of(P, P.logits.unaryExpr([pw](double t) { return ch05::exp_limit(t, pw); })));
  sweep.put(f);
  // The line C/p through the point at p = 64, where the 1/p term has taken over (anchored
  // there rather than at 2^16: rounding in an error of 1e-6 is not multiplied by 2^16).
  const auto at64 = std::find(sweep.x.begin(), sweep.x.end(), 64.0);
  const double c =
      at64 == sweep.x.end() ? 0.0 : 64 * sweep.weights[at64 - sweep.x.begin()];
  VectorXd reference(static_cast<Index>(powers.size()));
  for (std::size_t i = 0; i < powers.size(); ++i)
    reference(static_cast<Index>(i)) = c / powers[i];
  f.vector("reference_x", Eigen::Map<const VectorXd>(powers.data(), reference.size()));
  f.vector("reference", reference);
  return f;
}

constexpr int draws = 8;       // draws of the directions for the sweep
constexpr Index r_max = 1024;  // the sweep's largest number of directions

// Figure 5.3 live: random features, r directions of one draw; the sweep r = 1 .. 1024 gives the
// root mean square over 8 other draws of the largest weight error (and of the output error),
// leaving out refused draws, with the share refused at each r.
live::Figure random_features(const live::Params& p) {
  using ch05::Estimator;
  const std::vector<Estimator> estimators{Estimator::positive, Estimator::orthogonal,
                                          Estimator::trigonometric};
  std::vector<std::string> names;
  for (const Estimator e : estimators) names.push_back(ch05::name(e));
  const std::string name = p.choice("method", names);
  const Estimator method = estimators[static_cast<std::size_t>(
      std::find(names.begin(), names.end(), name) - names.begin())];
  const int r = p.integer("r", 1, static_cast<int>(r_max));
  if ((r & (r - 1)) != 0)
    throw std::invalid_argument("r = " + std::to_string(r) + " is not a power of two");
  const double s = p.real("s", 0.25, 4);
  const Problem P = problem(p.integer("seed", 0, 1000000), s);
  const int draw = p.integer("draw", 0, 1000000);
  attn::Rng rng(static_cast<attn::Rng::result_type>(draw));
  const MatrixXd W = ch05::directions(method, r, d_k, rng);
  const MatrixXd phiQ = ch05::features(method, P.q, W),
                 phiK = ch05::features(method, P.K, W);
  live::Figure f;
  const VectorXd w = phiK * phiQ.transpose();
  common(f, P, w, phiQ.cols());
  try {  // the library's normalisation; it refuses weights that sum to 0 or less
    approximation(f, P, attn::kernel_attention_weights(phiQ, phiK).row(0).transpose(),
                  attn::linear_attention(phiQ, phiK, P.V).row(0).transpose());
  } catch (const std::invalid_argument&) {
    refused(f, w);
  }
  // The theory of section 4 for i.i.d. directions: r times the relative MSE of the estimate
  // of e^{q·k_j}, for the worst key. Below r of this size the estimates are mostly noise.
  double worst = 0;
  for (Index j = 0; j < n_keys; ++j) {
    const VectorXd q = P.q.row(0).transpose(), k = P.K.row(j).transpose();
    worst = std::max(worst, method == Estimator::trigonometric
                                ? ch05::trig_relative_mse(q, k, 1)
                                : ch05::positive_relative_mse(q, k, 1));
  }
  f.number("relative_mse_times_r", worst);

  // The sweep: per draw, r_max directions and their features (library calls), and the weights
  // of the first r directions, r = 1, 2, 4, .., r_max, as partial sums over features. The
  // first r of the r_max directions are distributed as r directions drawn alone (orthogonal
  // ones too, block by block), so each draw is one reader adding directions.
  attn::Rng sweep_rng(static_cast<attn::Rng::result_type>(draw) + 1000003);
  const auto steps =
      static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(r_max))) + 1;
  std::vector<double> sum_w(steps), sum_o(steps), kept(steps);
  for (int k = 0; k < draws; ++k) {
    const MatrixXd Wk = ch05::directions(method, r_max, d_k, sweep_rng);
    const MatrixXd phiQk = ch05::features(method, P.q, Wk),
                   phiK_k = ch05::features(method, P.K, Wk);
    // Column i: phi_i(q) phi_i(k_j) for the n keys; trigonometric features have the sines of
    // the directions in columns r_max and on.
    const MatrixXd terms = (phiK_k.array().rowwise() * phiQk.row(0).array()).matrix();
    VectorXd partial = VectorXd::Zero(n_keys);
    Index summed = 0;
    for (std::size_t i = 0; i < steps; ++i) {
      const Index rk = Index(1) << i;
      for (; summed < rk; ++summed) {
        partial += terms.col(summed);
        if (method == Estimator::trigonometric) partial += terms.col(r_max + summed);
      }
      // phi for rk directions is sqrt(r_max / rk) times these columns of phi for r_max
      const Errors e = errors_of(P, partial * (static_cast<double>(r_max) / rk));
      if (e.refused) continue;
      sum_w[i] += e.weights * e.weights;
      sum_o[i] += e.output * e.output;
      ++kept[i];
    }
  }
  std::vector<double> rs, rms_w, rms_o, refused_share;
  for (std::size_t i = 0; i < steps; ++i) {
    refused_share.push_back(1.0 - kept[i] / draws);
    if (kept[i] == 0) continue;
    rs.push_back(std::ldexp(1.0, static_cast<int>(i)));
    rms_w.push_back(std::sqrt(sum_w[i] / kept[i]));
    rms_o.push_back(std::sqrt(sum_o[i] / kept[i]));
    if (rs.back() == r) f.number("rms_at_r", rms_w.back());
  }
  const auto vec = [](const std::vector<double>& v) {
    return Eigen::Map<const VectorXd>(v.data(), static_cast<Index>(v.size()));
  };
  f.vector("sweep_x", vec(rs)).vector("sweep_weights", vec(rms_w));
  f.vector("sweep_output", vec(rms_o)).vector("refused_share", vec(refused_share));
  f.number("refused_share_at_r", refused_share[static_cast<std::size_t>(
                                     std::countr_zero(static_cast<unsigned>(r)))]);
  // Slope of log RMS against log r from r = 4 on, and the line C r^(-1/2) through the last
  // point.
  std::vector<double> tail_r, tail_e;
  for (std::size_t i = 0; i < rs.size(); ++i)
    if (rs[i] >= 4) tail_r.push_back(rs[i]), tail_e.push_back(rms_w[i]);
  if (tail_r.size() >= 3) f.number("slope", ch05::fit_loglog(tail_r, tail_e).slope);
  VectorXd reference(static_cast<Index>(rs.size()));
  for (std::size_t i = 0; i < rs.size(); ++i)
    reference(static_cast<Index>(i)) = rms_w.back() * std::sqrt(rs.back() / rs[i]);
  f.vector("reference", reference);
  return f;
}

const bool added = live::add("ch05_taylor", taylor) &&
                   live::add("ch05_exp_limit", exp_limit_figure) &&
                   live::add("ch05_random_features", random_features);

}  // namespace
