#pragma once
/// \file attention_regression.hpp
/// \brief Training one attention layer to do linear regression (chapter 03; the least-squares
/// paper, section 5).
///
/// The training data are \f$ X \in \mathbb{R}^{n \times d} \f$ (tokens are rows
/// \f$ x_i^\top \f$) and \f$ Y \in \mathbb{R}^n \f$. Every training row attends to all
/// rows, with keys \f$ X \f$ and values \f$ Y \f$:
/// \f[ \hat y = h(S)\,Y\,w_v, \qquad S = QK^\top = X W_Q W_K^\top X^\top, \qquad
///     S_{ij} = (x_i^\top W_Q) \cdot (x_j^\top W_K), \f]
/// with \f$ Q = XW_Q \f$, \f$ K = XW_K \f$ as in AttentionParams,
/// \f$ W_Q, W_K \in \mathbb{R}^{d \times d} \f$, a scalar \f$ w_v \f$ and \f$ h \f$
/// either the identity or the row-wise softmax.
///
/// **Notation.** The book's row notation throughout. The least-squares paper writes
/// projections acting on column vectors, \f$ q = W_q x \f$: its \f$ W_q, W_k \f$ are
/// \f$ W_Q^\top, W_K^\top \f$ here (see the notation page). As in the source there is no
/// \f$ 1/\sqrt d \f$ scale (it would only rescale \f$ W_Q W_K^\top \f$). The loss is the
/// mean squared error \f$ L = \frac1n \lVert \hat y - Y \rVert^2 \f$, minimised by Adam.
///
/// With \f$ h = \mathrm{id} \f$ the prediction is linear in the query,
/// \f$ \hat y = X \beta_{eq} \f$ with \f$ \beta_{eq} = w_v W_Q W_K^\top X^\top Y \f$, so
/// the best attainable loss is the least-squares residual loss and training should drive
/// \f$ \beta_{eq} \f$ to \f$ \beta_{LS} \f$.

#include <Eigen/Dense>
#include <vector>

#include "attn/attention.hpp"  // Normalisation
#include "attn/random.hpp"

namespace attn {

/// \brief Parameters of the attention regressor, in the book's notation: the projections
/// act from the right on the rows of \f$ X \f$, as in AttentionParams.
struct AttentionRegressor {
  /// \f$ d \times d \f$, query projection: \f$ Q = XW_Q \f$ (the paper's \f$ W_q^\top \f$)
  Eigen::MatrixXd W_Q;
  /// \f$ d \times d \f$, key projection: \f$ K = XW_K \f$ (the paper's \f$ W_k^\top \f$)
  Eigen::MatrixXd W_K;
  double w_v = 1.0;  ///< the scalar value projection
};

/// \brief The attention matrix \f$ h(S) \f$, \f$ n \times n \f$, formed explicitly
/// (softmax through softmax_rows(): exact zeros, max subtracted).
///
/// For figures and tests; training never forms \f$ S \f$ for the identity.
/// \throws std::invalid_argument on mismatched shapes or non-finite entries.
Eigen::MatrixXd attention_matrix(const AttentionRegressor& p,
                                 const Eigen::Ref<const Eigen::MatrixXd>& X,
                                 Normalisation h);

/// \brief Prediction for new queries (rows of `X_query`) from the keys `X` and values
/// `Y`: \f$ \hat y = h(X_{query} W_Q W_K^\top X^\top)\,Y\,w_v \f$ (softmax through
/// softmax_rows()). For held-out losses; \f$ O(mnd) \f$ for \f$ m \f$ queries.
/// \throws std::invalid_argument on mismatched shapes or non-finite entries.
Eigen::VectorXd predict(const AttentionRegressor& p,
                        const Eigen::Ref<const Eigen::MatrixXd>& X,
                        const Eigen::Ref<const Eigen::VectorXd>& Y,
                        const Eigen::Ref<const Eigen::MatrixXd>& X_query,
                        Normalisation h);

/// \brief Prediction on the training rows, \f$ \hat y = h(S)\,Y\,w_v \f$.
///
/// Identity: computed as \f$ \hat y = w_v\,X\,(W_Q (W_K^\top (X^\top Y))) \f$ in
/// \f$ O(nd + d^2) \f$ without forming \f$ S \f$. Softmax: \f$ O(n^2 d) \f$, in blocks of
/// 64 queries, so that \f$ S \f$ is never stored whole.
/// \throws std::invalid_argument on mismatched shapes or non-finite entries.
Eigen::VectorXd predict_training(const AttentionRegressor& p,
                                 const Eigen::Ref<const Eigen::MatrixXd>& X,
                                 const Eigen::Ref<const Eigen::VectorXd>& Y,
                                 Normalisation h);

/// \brief The loss \f$ L = \frac1n \lVert \hat y - Y \rVert^2 \f$ and, if `gradient` is
/// not null, its gradient with respect to \f$ W_Q, W_K, w_v \f$ (written into `*gradient`,
/// which is resized).
///
/// With \f$ G = \partial L/\partial \hat y = \frac2n(\hat y - Y) \f$ and
/// \f$ C = \partial L/\partial (W_Q W_K^\top) \f$:
/// \f$ \partial L/\partial W_Q = C W_K \f$, \f$ \partial L/\partial W_K = C^\top W_Q \f$.
/// Identity: \f$ C = w_v X^\top G\,(X^\top Y)^\top \f$,
/// \f$ \partial L/\partial w_v = G^\top X W_Q W_K^\top X^\top Y \f$.
/// Softmax, \f$ A = h(S) \f$, \f$ z = AY \f$:
/// \f$ (\partial L/\partial S)_{ij} = w_v G_i A_{ij} (Y_j - z_i) \f$,
/// \f$ C = X^\top (\partial L/\partial S) X \f$, \f$ \partial L/\partial w_v = G^\top z \f$.
///
/// Softmax: the blocks of 64 queries are shared by up to `threads` threads
/// (evaluation_threads() says how many are used). Each block's rows and its share
/// \f$ X_{blk}^\top E_{blk} X \f$ of \f$ C \f$ are computed whole by one thread, and the
/// calling thread sums the shares in block order and the rows' losses in row order, so the
/// result is bit for bit the same for every thread count. The identity system,
/// \f$ O(nd + d^2) \f$, always runs on the calling thread.
/// \throws std::invalid_argument on mismatched shapes or non-finite entries, or
///         `threads` below 1.
double loss_and_gradient(const AttentionRegressor& p,
                         const Eigen::Ref<const Eigen::MatrixXd>& X,
                         const Eigen::Ref<const Eigen::VectorXd>& Y, Normalisation h,
                         AttentionRegressor* gradient = nullptr, int threads = 1);

/// \brief The threads one softmax evaluation at \f$ (n, d) \f$ uses when given
/// `threads`: at most one per block of 64 queries, and one unless every thread gets at
/// least \f$ 2^{21} \f$ units of the work \f$ n^2 (d + 8) \f$ (below that, starting a
/// thread costs more than it saves: at the source's \f$ (100, 10) \f$ it is one, at
/// \f$ (1000, 10) \f$ up to 8).
/// \throws std::invalid_argument if `threads` is below 1.
int evaluation_threads(Eigen::Index n, Eigen::Index d, int threads);

/// \brief The equivalent least-squares parameter of the identity system,
/// \f$ \beta_{eq} = w_v W_Q W_K^\top X^\top Y \f$: then \f$ \hat y = X \beta_{eq} \f$.
Eigen::VectorXd equivalent_beta(const AttentionRegressor& p,
                                const Eigen::Ref<const Eigen::MatrixXd>& X,
                                const Eigen::Ref<const Eigen::VectorXd>& Y);

/// \brief Adam (Kingma & Ba, arXiv:1412.6980), bias-corrected, with an optional
/// exponential learning-rate decay: step \f$ t = 1, 2, \dots \f$ uses
/// \f$ \eta_t = \eta\,\gamma^{t-1} \f$ and
/// \f[ m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \quad
///     v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2, \quad
///     \theta_t = \theta_{t-1} - \eta_t \frac{m_t/(1-\beta_1^t)}
///                                          {\sqrt{v_t/(1-\beta_2^t)} + \epsilon}. \f]
struct Adam {
  double learning_rate = 1e-3;  ///< \f$ \eta \f$
  double beta1 = 0.9;           ///< \f$ \beta_1 \f$
  double beta2 = 0.999;         ///< \f$ \beta_2 \f$
  double epsilon = 1e-8;        ///< \f$ \epsilon \f$
  double decay = 1.0;           ///< \f$ \gamma \in (0, 1] \f$; 1 = constant rate
};

/// \brief The book's Adam settings for the source's experiment, for both normalisations:
/// \f$ \eta = 10^{-3} \f$ (PyTorch's default), \f$ \beta_1 = 0.9 \f$,
/// \f$ \beta_2 = 0.999 \f$, \f$ \epsilon = 10^{-8} \f$, and the decay
/// \f$ \gamma = 0.997 \f$: the rate falls to 5% of \f$ \eta \f$ over 1000 steps.
///
/// Why the decay: Adam moves every coordinate by about \f$ \eta_t \f$ per step however
/// small the gradient, once \f$ v_t \f$ has forgotten the large early gradients (after
/// \f$ \sim 1/(1-\beta_2) \f$ steps). At the identity system's optimum the entries of
/// \f$ W_Q, W_K \f$ are small (mean magnitude \f$ \approx 3 \cdot 10^{-2} \f$ at
/// \f$ d = 10 \f$, \f$ 5 \cdot 10^{-3} \f$ at \f$ d = 100 \f$), so a constant
/// \f$ \eta = 10^{-3} \f$ ends in oscillations and loss spikes: in 300 runs per size it left
/// 4 runs at \f$ (n, d) = (100, 10) \f$, 60 at (1000, 10) and 131 at (1000, 100) above error
/// rate \f$ 10^{-4} \f$ after 1000 steps. With \f$ \gamma \in \{0.995, 0.997, 0.999\} \f$ and
/// \f$ \eta \in \{5 \cdot 10^{-4}, 10^{-3}, 2 \cdot 10^{-3}\} \f$ every run (120 per setting,
/// 1080 in all) ended below \f$ 2 \cdot 10^{-7} \f$; at the chosen point, below
/// \f$ 10^{-15} \f$.
inline constexpr Adam experiment_adam{1e-3, 0.9, 0.999, 1e-8, 0.997};

/// \brief Adam's moment estimates and step counter, for one parameter vector.
struct AdamState {
  Eigen::VectorXd m;  ///< first moment \f$ m_t \f$
  Eigen::VectorXd v;  ///< second moment \f$ v_t \f$
  long step = 0;      ///< \f$ t \f$, the number of updates made
};

/// \brief One Adam update of `theta` with `gradient`; `state` starts empty (zero moments).
/// \throws std::invalid_argument on bad settings (see validate()) or mismatched sizes.
void adam_step(const Adam& adam, AdamState& state, Eigen::Ref<Eigen::VectorXd> theta,
               const Eigen::Ref<const Eigen::VectorXd>& gradient);

/// \brief Checks Adam's settings: \f$ \eta > 0 \f$ finite, \f$ \beta_1, \beta_2 \in [0,1)
/// \f$, \f$ \epsilon \ge 0 \f$, \f$ \gamma \in (0, 1] \f$.
/// \throws std::invalid_argument naming the bad setting.
void validate(const Adam& adam);

/// \brief The loss curve and the final parameters of one training run.
struct TrainingResult {
  /// Loss before each of the `iterations` updates, then the final loss (size
  /// iterations + 1).
  std::vector<double> loss;
  AttentionRegressor parameters;  ///< after the last update
};

/// \brief Full-batch training by Adam: `iterations` updates from `initial`, each
/// evaluation on up to `threads` threads (as in loss_and_gradient(): the same numbers bit
/// for bit for every thread count).
/// \throws std::invalid_argument on mismatched shapes, non-finite data or parameters,
///         negative `iterations`, `threads` below 1 or bad Adam settings.
/// \throws std::runtime_error if the loss becomes NaN or infinite (the training
///         diverged), naming the iteration.
TrainingResult train(const Eigen::Ref<const Eigen::MatrixXd>& X,
                     const Eigen::Ref<const Eigen::VectorXd>& Y, Normalisation h,
                     const AttentionRegressor& initial, int iterations, const Adam& adam,
                     int threads = 1);

/// Standard deviation of a feature drawn uniformly on \f$ [-10, 10] \f$, as in the
/// source's experiment: \f$ 20/\sqrt{12} = 10/\sqrt3 \f$.
inline constexpr double experiment_feature_scale = 5.773502691896258;

/// \brief Random initial projections: \f$ W_Q, W_K \f$ with i.i.d.
/// \f$ \mathcal{N}(0, s^2) \f$ entries, \f$ s = 1/(\sigma_x d^{3/4}) \f$; \f$ w_v = 0 \f$
/// (set it with initial_value_weight(), as experiments::run_experiment() does).
///
/// For features with standard deviation \f$ \sigma_x \f$ (`feature_scale`), a score
/// \f$ S_{ij} = \sum_{a} (x_i^\top W_Q)_a (x_j^\top W_K)_a \f$ sums \f$ d \f$ products of two entries
/// of standard deviation \f$ s\sigma_x\sqrt d \f$, so its standard deviation is
/// \f$ s^2\sigma_x^2 d^{3/2} = 1 \f$: the softmax starts neither uniform nor saturated,
/// whatever the data's units or \f$ d \f$.
AttentionRegressor random_regressor(Eigen::Index d, Rng& rng,
                                    double feature_scale = experiment_feature_scale);

/// \brief The value weight that minimises the loss for the given \f$ W_Q, W_K \f$:
/// with \f$ u = h(S)\,Y \f$, \f$ \frac1n\lVert w u - Y \rVert^2 \f$ is least at
/// \f$ w = u^\top Y / u^\top u \f$ (0 if \f$ u = 0 \f$); `p.w_v` is ignored.
double best_value_weight(const AttentionRegressor& p,
                         const Eigen::Ref<const Eigen::MatrixXd>& X,
                         const Eigen::Ref<const Eigen::VectorXd>& Y, Normalisation h);

/// \brief The book's initial \f$ w_v \f$: the one that puts the first prediction on the
/// scale of \f$ Y \f$.
///
/// Softmax: 1, since \f$ AY \f$ is a weighted mean of \f$ Y \f$. Identity:
/// best_value_weight() (\f$ |w_v| \approx 10^{-2} \f$ to \f$ 10^{-4} \f$), so the first loss
/// is at most \f$ \frac1n \lVert Y \rVert^2 \f$. With \f$ w_v = 1 \f$ the identity system's
/// \f$ SY \f$, a sum of \f$ n \f$ terms \f$ S_{ij} Y_j \f$ with \f$ S_{ij} = O(1) \f$,
/// starts \f$ 10^3 \f$ to \f$ 3 \cdot 10^5 \f$ times above that in the source's sizes, and
/// those first gradients then dominate Adam's second moment for about
/// \f$ 1/(1-\beta_2) = 1000 \f$ steps: in some runs it stalls far from \f$ \beta_{LS} \f$.
double initial_value_weight(const AttentionRegressor& p,
                            const Eigen::Ref<const Eigen::MatrixXd>& X,
                            const Eigen::Ref<const Eigen::VectorXd>& Y, Normalisation h);

/// \brief The source's data: \f$ X_{ij} \sim U[-10, 10] \f$, \f$ \beta \sim
/// \mathcal{N}(0, I_d) \f$, \f$ \varepsilon \sim \mathcal{N}(0, I_n) \f$,
/// \f$ Y = X\beta + \varepsilon \f$ (drawn in this order).
struct RegressionData {
  Eigen::MatrixXd X;     ///< \f$ n \times d \f$
  Eigen::VectorXd Y;     ///< \f$ n \f$
  Eigen::VectorXd beta;  ///< the true \f$ \beta \f$
};

/// \brief Draws the source's data set.
/// \throws std::invalid_argument unless \f$ 1 \le d \le n \f$.
RegressionData regression_data(Eigen::Index n, Eigen::Index d, Rng& rng);

}  // namespace attn
