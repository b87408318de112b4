// Wrong answers to exercise 03.1 (attn::hat_matrix, code/src/hat_matrix.cpp): mistakes a
// student plausibly makes, each of which the exercise's tests must reject (./book validate
// builds every one; docs/instructors.md says how to add one). The instructor's copy only:
// the release leaves this file out, no build compiles it as it stands.
//
// Each block `// WRONG ANSWER 03.1 name: what is wrong` ... `// END WRONG ANSWER` replaces the
// body of the solution region.

// WRONG ANSWER 03.1 normal-equations: X (X^T X)^-1 X^T written literally: an error of kappa^2 eps, not a projection for an ill-conditioned X
return X * (X.transpose() * X).inverse() * X.transpose();
// END WRONG ANSWER

// WRONG ANSWER 03.1 full-q: Q Q^T with the full n x n Q, which is the identity
const Eigen::HouseholderQR<MatrixXd> qr(X);
const MatrixXd Q = qr.householderQ();
return Q * Q.transpose();
// END WRONG ANSWER

// WRONG ANSWER 03.1 transposed-product: Q_1^T Q_1 (d x d, the identity) instead of Q_1 Q_1^T
const MatrixXd Q1 = thin_q(Eigen::HouseholderQR<MatrixXd>(X));
return Q1.transpose() * Q1;
// END WRONG ANSWER

// WRONG ANSWER 03.1 residual-maker: I - Q_1 Q_1^T, the projection onto the residuals
const MatrixXd Q1 = thin_q(Eigen::HouseholderQR<MatrixXd>(X));
return MatrixXd::Identity(X.rows(), X.rows()) - Q1 * Q1.transpose();
// END WRONG ANSWER

// WRONG ANSWER 03.1 no-inverse: X X^T, the Gram matrix of the rows without (X^T X)^-1
return X * X.transpose();
// END WRONG ANSWER

// WRONG ANSWER 03.1 normalised-columns: unit-length columns of X in place of an orthonormal basis (no orthogonalisation)
const MatrixXd U = X.array().rowwise() / X.colwise().norm().array();
return U * U.transpose();
// END WRONG ANSWER

// WRONG ANSWER 03.1 leverages-only: the diagonal of H (the leverages) as a diagonal matrix
const MatrixXd Q1 = thin_q(Eigen::HouseholderQR<MatrixXd>(X));
return Q1.rowwise().squaredNorm().asDiagonal();
// END WRONG ANSWER

// WRONG ANSWER 03.1 r-transposed: X (T T^T)^-1 X^T, the triangular factor's product in the wrong order
const Eigen::HouseholderQR<MatrixXd> qr(X);
const MatrixXd T = qr.matrixQR().topRows(X.cols()).triangularView<Eigen::Upper>();
return X * (T * T.transpose()).inverse() * X.transpose();
// END WRONG ANSWER
