// Wrong answers to exercise 01.6 (attn::causal_mask, code/src/causal_mask.cpp): mistakes a
// student plausibly makes, each of which the exercise's tests must reject (./book validate
// builds every one; docs/instructors.md says how to add one). The instructor's copy only:
// the release leaves this file out, no build compiles it as it stands.
//
// Each block `// WRONG ANSWER 01.6 name: what is wrong` ... `// END WRONG ANSWER` replaces the
// body of the solution region; the #include lines below are added to the solution's file.
#include <limits>

// WRONG ANSWER 01.6 diagonal-masked: Upper instead of StrictlyUpper also hides each token from itself
Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
M.triangularView<Eigen::Upper>().setConstant(-std::numeric_limits<double>::infinity());
return M;
// END WRONG ANSWER

// WRONG ANSWER 01.6 transposed: StrictlyLower masks the past and lets every token read the future
Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
M.triangularView<Eigen::StrictlyLower>().setConstant(-std::numeric_limits<double>::infinity());
return M;
// END WRONG ANSWER

// WRONG ANSWER 01.6 off-by-one: masks j > i + 1, so each token also sees the next one
Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
for (Eigen::Index i = 0; i < n; ++i)
  for (Eigen::Index j = i + 2; j < n; ++j) M(i, j) = -std::numeric_limits<double>::infinity();
return M;
// END WRONG ANSWER

// WRONG ANSWER 01.6 positive-min: numeric_limits::min() is the smallest positive double, not -inf
Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
M.triangularView<Eigen::StrictlyUpper>().setConstant(std::numeric_limits<double>::min());
return M;
// END WRONG ANSWER

// WRONG ANSWER 01.6 finite-mask: -1e9 instead of -inf, a weight that vanishes only for small scores
Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
M.triangularView<Eigen::StrictlyUpper>().setConstant(-1e9);
return M;
// END WRONG ANSWER

// WRONG ANSWER 01.6 lowest: numeric_limits::lowest(), the most negative finite double, instead of -inf
Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
M.triangularView<Eigen::StrictlyUpper>().setConstant(std::numeric_limits<double>::lowest());
return M;
// END WRONG ANSWER

// WRONG ANSWER 01.6 multiplicative: a 0/1 mask (1 where visible), added to the scores as if it multiplied them
Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
M.triangularView<Eigen::Lower>().setOnes();
return M;
// END WRONG ANSWER

// WRONG ANSWER 01.6 no-mask: returns all zeros, which hides nothing
return Eigen::MatrixXd::Zero(n, n);
// END WRONG ANSWER
