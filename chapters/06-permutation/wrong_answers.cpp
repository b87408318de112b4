// Wrong answers to exercise 06.6 (attn::equivariance_residual,
// code/src/equivariance_residual.cpp): mistakes a student plausibly makes, each of which the
// exercise's tests must reject (./book validate builds every one; docs/instructors.md says how
// to add one). The instructor's copy only: the release leaves this file out, no build compiles
// it as it stands.
//
// Each block `// WRONG ANSWER 06.6 name: what is wrong` ... `// END WRONG ANSWER` replaces the
// body of the solution region.

// WRONG ANSWER 06.6 frobenius: the Frobenius norm (every entry's square summed) instead of the largest entry
const Eigen::MatrixXd Y = f(X);
const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - permute_rows(Y, perm);
const double scale = Y.norm();
return diff.norm() / (scale > 0 ? scale : 1.0);
// END WRONG ANSWER

// WRONG ANSWER 06.6 sum-of-entries: the sum of absolute entries (a summing norm) instead of the largest one
const Eigen::MatrixXd Y = f(X);
const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - permute_rows(Y, perm);
const double scale = Y.lpNorm<1>();
return diff.lpNorm<1>() / (scale > 0 ? scale : 1.0);
// END WRONG ANSWER

// WRONG ANSWER 06.6 no-zero-guard: divides by max |f(X)| even when f(X) = 0, which gives NaN
const Eigen::MatrixXd Y = f(X);
const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - permute_rows(Y, perm);
return diff.lpNorm<Eigen::Infinity>() / Y.lpNorm<Eigen::Infinity>();
// END WRONG ANSWER

// WRONG ANSWER 06.6 zero-guard-returns-zero: returns 0 when f(X) = 0, hiding a change of f(PX)
const Eigen::MatrixXd Y = f(X);
const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - permute_rows(Y, perm);
const double scale = Y.lpNorm<Eigen::Infinity>();
if (scale == 0) return 0.0;
return diff.lpNorm<Eigen::Infinity>() / scale;
// END WRONG ANSWER

// WRONG ANSWER 06.6 inverse-permutation: permutes f(X) by P^T (inverse(perm)) instead of P
const Eigen::MatrixXd Y = f(X);
const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - permute_rows(Y, inverse(perm));
const double scale = Y.lpNorm<Eigen::Infinity>();
return diff.lpNorm<Eigen::Infinity>() / (scale > 0 ? scale : 1.0);
// END WRONG ANSWER

// WRONG ANSWER 06.6 invariance: compares f(PX) with f(X), the invariance residual
const Eigen::MatrixXd Y = f(X);
const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - Y;
const double scale = Y.lpNorm<Eigen::Infinity>();
return diff.lpNorm<Eigen::Infinity>() / (scale > 0 ? scale : 1.0);
// END WRONG ANSWER

// WRONG ANSWER 06.6 relative-to-input: divides by max |X| instead of max |f(X)|
const Eigen::MatrixXd Y = f(X);
const Eigen::MatrixXd diff = f(permute_rows(X, perm)) - permute_rows(Y, perm);
const double scale = X.lpNorm<Eigen::Infinity>();
return diff.lpNorm<Eigen::Infinity>() / (scale > 0 ? scale : 1.0);
// END WRONG ANSWER

// WRONG ANSWER 06.6 absolute: the largest change without dividing by the size of f(X)
const Eigen::MatrixXd Y = f(X);
return (f(permute_rows(X, perm)) - permute_rows(Y, perm)).lpNorm<Eigen::Infinity>();
// END WRONG ANSWER
