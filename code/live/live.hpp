#pragma once
// The live figures' bridge between a page and the attn library (not part of the library).
//
// A chapter's live.cpp defines compute functions, Figure f(const Params&), and registers each
// under a name with live::add. The page calls live::compute(name, query) through WebAssembly
// (code/live/live.js); the native tool live-reference calls the very same functions, so a
// test can compare what the page shows with what the native build computes.

#include <Eigen/Dense>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace live {

/// A widget's parameters, from a query string "d=64&s=2.5&kernel=gaussian".
class Params {
 public:
  explicit Params(std::string_view query);
  /// The number `name`, which must lie in [lo, hi]; throws std::invalid_argument otherwise.
  double real(const std::string& name, double lo, double hi) const;
  /// The integer `name` in [lo, hi].
  int integer(const std::string& name, int lo, int hi) const;
  /// The text `name`, one of `choices`.
  std::string choice(const std::string& name, const std::vector<std::string>& choices) const;
  /// A comma-separated list of integers in [lo, hi], e.g. an order of tokens "2,0,1".
  std::vector<int> integers(const std::string& name, int lo, int hi) const;

 private:
  const std::string& text(const std::string& name) const;
  std::map<std::string, std::string> values_;
};

/// What a compute function returns: named numbers, vectors, matrices and labels, written as
/// one JSON object. Every number must be finite (a non-finite one throws std::domain_error,
/// so a page shows an error instead of NaN).
class Figure {
 public:
  Figure& number(std::string_view key, double x);
  Figure& vector(std::string_view key, const Eigen::Ref<const Eigen::VectorXd>& v);
  /// A matrix as an array of its rows.
  Figure& matrix(std::string_view key, const Eigen::Ref<const Eigen::MatrixXd>& m);
  Figure& labels(std::string_view key, const std::vector<std::string>& texts);
  std::string json() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view k);
  std::string body_;
};

using Compute = Figure (*)(const Params&);

/// Registers `f` under `name` (use: `const bool added = live::add("ch01_softmax", f);` at
/// namespace scope). Returns true; a name registered twice is a programming error (abort).
bool add(const std::string& name, Compute f);

/// Runs the compute function `name` on `query`: its Figure as JSON, or {"error": "..."} with
/// the message of what it threw (an unknown name, a parameter out of range); in a student
/// copy, {"error": "...", "exercise": "NN.M"} when it reached an exercise not done yet.
std::string compute(const std::string& name, const std::string& query);

/// The registered names, sorted.
std::vector<std::string> names();

}  // namespace live
