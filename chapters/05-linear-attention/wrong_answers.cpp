// Wrong answers to exercise 05.6 (attn::exp_limit_features, code/src/exp_limit_features.cpp):
// mistakes a student plausibly makes, each of which the exercise's tests must reject
// (./book validate builds every one; docs/instructors.md says how to add one). The
// instructor's copy only: the release leaves this file out, no build compiles it as it stands.
//
// Each block `// WRONG ANSWER 05.6 name: what is wrong` ... `// END WRONG ANSWER` replaces the
// body of the solution region.

// WRONG ANSWER 05.6 one-power-too-many: loops p times after starting from Z: the power p + 1
MatrixXd Z(X.rows(), d + 1);
Z.col(0).setOnes();
Z.rightCols(d) = X / std::sqrt(static_cast<double>(p));
MatrixXd psi = Z;
for (int l = 0; l < p; ++l) psi = next_power(psi, Z);
return psi;
// END WRONG ANSWER

// WRONG ANSWER 05.6 one-power-too-few: starts the loop at 2: the power p - 1 (and [1, x/sqrt(p)] for p = 1 and 2 alike)
MatrixXd Z(X.rows(), d + 1);
Z.col(0).setOnes();
Z.rightCols(d) = X / std::sqrt(static_cast<double>(p));
MatrixXd psi = Z;
for (int l = 2; l < p; ++l) psi = next_power(psi, Z);
return psi;
// END WRONG ANSWER

// WRONG ANSWER 05.6 scaled-by-p: x / p instead of x / sqrt(p), so the kernel is (1 + q.k/p^2)^p
MatrixXd Z(X.rows(), d + 1);
Z.col(0).setOnes();
Z.rightCols(d) = X / static_cast<double>(p);
MatrixXd psi = Z;
for (int l = 1; l < p; ++l) psi = next_power(psi, Z);
return psi;
// END WRONG ANSWER

// WRONG ANSWER 05.6 unscaled: x not divided by sqrt(p), so the kernel is (1 + q.k)^p
MatrixXd Z(X.rows(), d + 1);
Z.col(0).setOnes();
Z.rightCols(d) = X;
MatrixXd psi = Z;
for (int l = 1; l < p; ++l) psi = next_power(psi, Z);
return psi;
// END WRONG ANSWER

// WRONG ANSWER 05.6 scaled-by-sqrt-d: x / sqrt(d_k), attention's scale, instead of x / sqrt(p)
MatrixXd Z(X.rows(), d + 1);
Z.col(0).setOnes();
Z.rightCols(d) = X / std::sqrt(static_cast<double>(d));
MatrixXd psi = Z;
for (int l = 1; l < p; ++l) psi = next_power(psi, Z);
return psi;
// END WRONG ANSWER

// WRONG ANSWER 05.6 no-constant: rows x / sqrt(p) without the leading 1, so the kernel is (q.k/p)^p
MatrixXd Z = X / std::sqrt(static_cast<double>(p));
MatrixXd psi = Z;
for (int l = 1; l < p; ++l) psi = next_power(psi, Z);
return psi;
// END WRONG ANSWER

// WRONG ANSWER 05.6 squaring: next_power(psi, psi) squares the power at each step (2, 4, 8, ...)
MatrixXd Z(X.rows(), d + 1);
Z.col(0).setOnes();
Z.rightCols(d) = X / std::sqrt(static_cast<double>(p));
MatrixXd psi = Z;
for (int l = 1; l < p; ++l) psi = next_power(psi, psi);
return psi;
// END WRONG ANSWER
