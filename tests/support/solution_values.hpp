#pragma once
// The numbers the worked solutions print (chapters/*/solutions.md), recorded by the code that
// computes them (chapters/*/test_solutions.cpp): solution_value("02.1.nw_slope", x) keeps x
// under that key. When the test binary runs with BOOK_SOLUTIONS_OUT set (the build's
// solutions step, chapters/CMakeLists.txt) the values are written there as one JSON object
// at exit, and the page marks <!--#sol:02.1.nw_slope .3f--> read them (book.pages.sync).
// Under ctest the variable is unset: nothing is written, and full_solution_run() is false, so
// the tests run their small sizes; the solutions step runs the full experiments.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

namespace book_test {

namespace detail {

// Written once, when the binary exits after its tests.
struct SolutionValues {
  std::map<std::string, double> values;
  ~SolutionValues() {
    const char* path = std::getenv("BOOK_SOLUTIONS_OUT");
    if (!path || !*path) return;
    std::FILE* f = std::fopen(path, "w");
    if (!f) return;  // the solutions step then fails: its output is missing
    std::fputs("{", f);
    const char* sep = "\n";
    for (const auto& [key, value] : values) {
      std::fprintf(f, "%s  \"%s\": %.17g", sep, key.c_str(), value);
      sep = ",\n";
    }
    std::fputs("\n}\n", f);
    std::fclose(f);
  }
};

inline SolutionValues solution_values;

}  // namespace detail

// True in the build's solutions step (the full experiments), false under ctest.
inline bool full_solution_run() {
  const char* path = std::getenv("BOOK_SOLUTIONS_OUT");
  return path && *path;
}

// Records the number a worked solution prints under `key` ("NN.M.name": exercise NN.M);
// returns it, so a test can check it in the same expression. A key recorded twice with two
// values is a mistake (two computations claiming one printed number), as is a value that is
// not finite.
inline double solution_value(const std::string& key, double value) {
  if (!std::isfinite(value))
    throw std::invalid_argument("solution_value: " + key + " is not finite");
  const auto [at, added] = detail::solution_values.values.emplace(key, value);
  if (!added && at->second != value)
    throw std::invalid_argument("solution_value: " + key + " recorded with two values");
  return value;
}

}  // namespace book_test
