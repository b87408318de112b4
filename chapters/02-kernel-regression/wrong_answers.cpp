// Wrong answers to exercise 02.6 (attn::nw_loo_predictions, code/src/nw_loo_predictions.cpp):
// mistakes a student plausibly makes, each of which the exercise's tests must reject
// (./book validate builds every one; docs/instructors.md says how to add one). The
// instructor's copy only: the release leaves this file out, no build compiles it as it stands.
//
// Each block `// WRONG ANSWER 02.6 name: what is wrong` ... `// END WRONG ANSWER` replaces the
// body of the solution region; the #include lines below are added to the solution's file.
#include <cmath>

// WRONG ANSWER 02.6 no-mask: keeps each point's own term, so it votes for its own label
Eigen::MatrixXd L = kernel_logits(X, X, kernel, h);
check_rows_have_keys("nw_loo_predictions", L, X, kernel, h, "point");
return softmax_rows(L) * Y;
// END WRONG ANSWER

// WRONG ANSWER 02.6 finite-mask: the diagonal set to -1e9, so an isolated point still votes for itself
Eigen::MatrixXd L = kernel_logits(X, X, kernel, h);
L.diagonal().setConstant(-1e9);
check_rows_have_keys("nw_loo_predictions", L, X, kernel, h, "point");
return softmax_rows(L) * Y;
// END WRONG ANSWER

// WRONG ANSWER 02.6 no-row-check: no check that a point has another point in range (softmax's error, not the domain_error naming the point)
Eigen::MatrixXd L = kernel_logits(X, X, kernel, h);
L.diagonal().setConstant(-inf);
return softmax_rows(L) * Y;
// END WRONG ANSWER

// WRONG ANSWER 02.6 no-max-subtraction: exponentiates the logits and divides by the row sums without subtracting each row's maximum
Eigen::MatrixXd L = kernel_logits(X, X, kernel, h);
L.diagonal().setConstant(-inf);
check_rows_have_keys("nw_loo_predictions", L, X, kernel, h, "point");
const Eigen::MatrixXd E = L.unaryExpr([](double l) { return std::exp(l); });
return (E.array().colwise() / E.rowwise().sum().array()).matrix() * Y;
// END WRONG ANSWER

// WRONG ANSWER 02.6 numerator-only: leaves the point out of the weighted sum but not out of the normalisation
const Eigen::MatrixXd L = kernel_logits(X, X, kernel, h);
check_rows_have_keys("nw_loo_predictions", L, X, kernel, h, "point");
Eigen::MatrixXd W = softmax_rows(L);
W.diagonal().setZero();
return W * Y;
// END WRONG ANSWER

// WRONG ANSWER 02.6 transposed-weights: multiplies Y by the transpose of the weight matrix, whose rows do not sum to 1
Eigen::MatrixXd L = kernel_logits(X, X, kernel, h);
L.diagonal().setConstant(-inf);
check_rows_have_keys("nw_loo_predictions", L, X, kernel, h, "point");
return softmax_rows(L).transpose() * Y;
// END WRONG ANSWER

// WRONG ANSWER 02.6 kernel-ignored: always uses the Gaussian kernel, whatever kernel is asked for
Eigen::MatrixXd L = kernel_logits(X, X, Kernel::gaussian, h);
L.diagonal().setConstant(-inf);
check_rows_have_keys("nw_loo_predictions", L, X, kernel, h, "point");
return softmax_rows(L) * Y;
// END WRONG ANSWER

// WRONG ANSWER 02.6 bandwidth-squared: passes h * h as the bandwidth (confusing h with the Gaussian's variance)
Eigen::MatrixXd L = kernel_logits(X, X, kernel, h * h);
L.diagonal().setConstant(-inf);
check_rows_have_keys("nw_loo_predictions", L, X, kernel, h, "point");
return softmax_rows(L) * Y;
// END WRONG ANSWER
