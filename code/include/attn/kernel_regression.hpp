#pragma once
/// \file kernel_regression.hpp
/// \brief Nadaraya–Watson kernel regression, written as attention.
///
/// Data points are rows: the keys \f$ X \in \mathbb{R}^{n \times d} \f$ (row \f$ i \f$ is
/// \f$ x_i^\top \f$), the values \f$ Y \in \mathbb{R}^{n \times d_v} \f$ (one label row per
/// key) and the queries \f$ Q \in \mathbb{R}^{n_q \times d} \f$. With a kernel
/// \f$ \mathcal{K}_h(x, x') = g(\lVert x - x' \rVert / h) \f$ the estimate at a query
/// \f$ x \f$ is
/// \f[ \hat y(x) = \sum_i w_i(x)\, y_i, \qquad
///     w_i(x) = \frac{\mathcal{K}_h(x, x_i)}{\sum_j \mathcal{K}_h(x, x_j)} . \f]
/// The library computes the weights as a softmax of the log-kernel,
/// \f$ w(x) = \operatorname{softmax}(\log \mathcal{K}_h(x, x_1), \dots,
/// \log \mathcal{K}_h(x, x_n)) \f$, which is the same number (softmax of logarithms is
/// division by the sum) and, for the Gaussian kernel, cannot underflow to 0/0 however
/// small \f$ h \f$ is. Points outside a compact kernel's support get the logit
/// \f$ -\infty \f$, that is, weight exactly 0.

#include <Eigen/Dense>
#include <string>
#include <vector>

namespace attn {

/// The kernel profiles \f$ g(u) \f$, \f$ u = \lVert x - x' \rVert / h \ge 0 \f$, each with
/// \f$ g(0) = 1 \f$ (a constant factor cancels in the weights, so none is normalised).
enum class Kernel {
  gaussian,     ///< \f$ g(u) = e^{-u^2/2} \f$, never 0
  box,          ///< \f$ g(u) = \mathbf{1}[u \le 1] \f$ (uniform, "boxcar")
  triangle,     ///< \f$ g(u) = \max(0, 1 - u) \f$
  epanechnikov  ///< \f$ g(u) = \max(0, 1 - u^2) \f$ — not the triangle kernel
};

/// The four kernels, in the order the book shows them.
const std::vector<Kernel>& all_kernels();

/// \brief The kernel's name as the programs spell it: `gaussian`, `box`, `triangle`,
/// `epanechnikov`.
std::string kernel_name(Kernel kernel);

/// \brief The kernel called `name` (one of kernel_name()'s spellings).
/// \throws std::invalid_argument listing the allowed names otherwise.
Kernel parse_kernel(const std::string& name);

/// \brief The profile \f$ g(u) \f$ of `kernel` at \f$ u \ge 0 \f$.
double kernel_profile(Kernel kernel, double u);

/// \brief Whether the kernel is 0 beyond \f$ u = 1 \f$ (all but the Gaussian).
bool kernel_is_compact(Kernel kernel);

/// \brief Squared distances \f$ D_{ij} = \lVert q_i - x_j \rVert^2 \f$ between the rows of
/// `Q` (\f$ n_q \times d \f$) and of `X` (\f$ n \times d \f$), computed from the differences
/// (no cancellation, unlike \f$ \lVert q \rVert^2 + \lVert x \rVert^2 - 2 q^\top x \f$).
Eigen::MatrixXd squared_distances(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                  const Eigen::Ref<const Eigen::MatrixXd>& X);

/// \brief The log-kernel \f$ L_{ij} = \log \mathcal{K}_h(q_i, x_j) = \log g(\lVert q_i -
/// x_j \rVert / h) \f$: for the Gaussian \f$ -\lVert q_i - x_j \rVert^2 / 2h^2 \f$, and
/// \f$ -\infty \f$ where a compact kernel is 0. These are the attention logits of
/// Nadaraya–Watson regression.
/// \throws std::invalid_argument if \f$ h \f$ is not a finite positive number, the widths
/// differ, or an entry is not finite.
Eigen::MatrixXd kernel_logits(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                              const Eigen::Ref<const Eigen::MatrixXd>& X, Kernel kernel,
                              double h);

/// \brief Nadaraya–Watson weights \f$ W_{ij} = w_j(q_i) =
/// \operatorname{softmax}_{\text{rows}}(L)_{ij} \f$, \f$ n_q \times n \f$: non-negative,
/// each row sums to 1.
/// \throws std::domain_error if a compact kernel sees no key within \f$ h \f$ of a query
/// (the estimate would be 0/0); the message names the query's row and coordinates. The
/// library does not fall back to another estimate. The Gaussian kernel is never 0, but its
/// logits do reach \f$ -\infty \f$ when \f$ (\lVert q - x \rVert / h)^2 \f$ overflows
/// (\f$ h \f$ below about \f$ 10^{-154} \f$ times the distances): that is the same error.
Eigen::MatrixXd nw_weights(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                           const Eigen::Ref<const Eigen::MatrixXd>& X, Kernel kernel,
                           double h);

/// \brief The Nadaraya–Watson estimate at every query, \f$ \hat Y = W Y \f$
/// (\f$ n_q \times d_v \f$): attention with queries `Q`, keys `X`, values `Y` and logits
/// \f$ \log \mathcal{K}_h \f$. Throws as nw_weights().
Eigen::MatrixXd nadaraya_watson(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                const Eigen::Ref<const Eigen::MatrixXd>& X,
                                const Eigen::Ref<const Eigen::MatrixXd>& Y, Kernel kernel,
                                double h);

/// \brief The Gaussian kernel's logits in attention form,
/// \f$ S_{ij} = q_i^\top x_j / h^2 - \lVert x_j \rVert^2 / 2h^2 \f$: a dot-product score
/// at temperature \f$ h^2 \f$ plus a key bias. They differ from the log-kernel by
/// \f$ -\lVert q_i \rVert^2/2h^2 \f$, constant along each row, so
/// \f$ \operatorname{softmax}_{\text{rows}}(S) \f$ equals the Gaussian nw_weights().
/// \throws std::invalid_argument if \f$ h^2 \f$ underflows to 0 or \f$ 1/h^2 \f$
/// overflows (the expanded form cannot be evaluated there; nw_weights() can).
Eigen::MatrixXd gaussian_attention_logits(const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                          const Eigen::Ref<const Eigen::MatrixXd>& X,
                                          double h);

/// \brief Leave-one-out predictions \f$ \hat y_{-i}(x_i) \f$ at every data point, from one
/// kernel matrix instead of \f$ n \f$ refits: point \f$ i \f$'s own weight is removed,
/// \f[ \hat y_{-i}(x_i) = \frac{\sum_{j \ne i} \mathcal{K}_h(x_i, x_j)\, y_j}
///                             {\sum_{j \ne i} \mathcal{K}_h(x_i, x_j)}, \f]
/// which is self-attention of the data with the diagonal masked.
/// \throws std::domain_error if a point has no other point within \f$ h \f$ (compact
/// kernels), naming it; std::invalid_argument if \f$ n < 2 \f$.
Eigen::MatrixXd nw_loo_predictions(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                   const Eigen::Ref<const Eigen::MatrixXd>& Y,
                                   Kernel kernel, double h);

/// \brief Leave-one-out cross-validation error
/// \f$ \mathrm{CV}(h) = \frac{1}{n} \sum_i \lVert y_i - \hat y_{-i}(x_i) \rVert^2 \f$.
/// Throws as nw_loo_predictions().
double nw_loo_cv(const Eigen::Ref<const Eigen::MatrixXd>& X,
                 const Eigen::Ref<const Eigen::MatrixXd>& Y, Kernel kernel, double h);

/// The leave-one-out error of the Gaussian kernel and its derivative in \f$ \log h \f$.
struct LooGradient {
  double loss = 0;     ///< \f$ \mathrm{CV}(h) \f$
  double d_log_h = 0;  ///< \f$ \partial\, \mathrm{CV} / \partial \log h \f$
};

/// \brief \f$ \mathrm{CV}(h) \f$ for the Gaussian kernel and its exact derivative in
/// \f$ \theta = \log h \f$. With \f$ a_{ij} \f$ the leave-one-out weights and
/// \f$ D_{ij} = \lVert x_i - x_j \rVert^2 \f$, \f$ \partial s_{ij} / \partial\theta =
/// D_{ij}/h^2 \f$, so
/// \f[ \frac{\partial\,\mathrm{CV}}{\partial \theta} = \frac{2}{n} \sum_i
///     (\hat y_{-i} - y_i)^\top \sum_{j \ne i} a_{ij}\,(y_j - \hat y_{-i})\,
///     \frac{D_{ij}}{h^2} . \f]
LooGradient gaussian_loo_gradient(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                  const Eigen::Ref<const Eigen::MatrixXd>& Y, double h);

/// One step of the bandwidth's gradient descent.
struct BandwidthStep {
  double h;     ///< bandwidth before the step
  double loss;  ///< \f$ \mathrm{CV}(h) \f$
  double grad;  ///< \f$ \partial\,\mathrm{CV} / \partial \log h \f$
};

/// \brief A learned bandwidth ("parametric attention pooling"): gradient descent on
/// \f$ \theta = \log h \f$ (so \f$ h \f$ stays positive) to minimise the Gaussian
/// \f$ \mathrm{CV}(h) \f$, with a backtracking step: halved until the loss falls by at
/// least half of the decrease the gradient predicts (Armijo), doubled after each success.
/// Stops when \f$ |\partial\,\mathrm{CV}/\partial\theta| \le \f$ `tolerance` times the
/// loss, or after `max_steps`. Returns the path; its last entry is the final bandwidth.
std::vector<BandwidthStep> learn_bandwidth(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                           const Eigen::Ref<const Eigen::MatrixXd>& Y,
                                           double h0, int max_steps = 200,
                                           double tolerance = 1e-8);

}  // namespace attn
