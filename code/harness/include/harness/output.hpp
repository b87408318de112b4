#pragma once
// What every chapter program writes: output.txt, results.json, CSV data and SVG figures —
// as one set. A run writes into a staging directory beside --out (begin_output()) and
// finish_program() swaps the whole set into place at once, so a reader of --out sees the
// previous complete set or the new one, never a mixture, also when the run fails or is
// interrupted.

#include <fmt/core.h>

#include <Eigen/Dense>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "attn/exercise.hpp"

namespace harness {

/// Throws std::runtime_error naming `what` if `x` is NaN or infinite: a result is never
/// printed or saved as "nan" or "inf".
void require_finite(double x, std::string_view what);

/// Appends formatted text to `text`: how a chapter program builds the summary it prints and
/// saves as output.txt. A NaN or infinite number among the arguments is an error, not "nan".
///
/// The format string is checked when the program compiles; the formatting itself is done by
/// the compiled fmt library (`fmt::vformat`), so a program does not compile it again.
template <typename... Args>
void say(std::string& text, fmt::format_string<Args...> format, Args&&... args) {
  [[maybe_unused]] const auto check = [&format](const auto& arg) {
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(arg)>>) {
      const fmt::string_view spec = format;  // the format string names the number
      require_finite(static_cast<double>(arg), std::string_view(spec.data(), spec.size()));
    }
  };
  (check(args), ...);
  text += fmt::vformat(format, fmt::make_format_args(args...));
}

/// Writes `content` to `path` atomically (temporary file, then rename).
/// Throws std::runtime_error naming the path if it cannot be written.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// A CSV cell: a number (written with 17 significant digits, so it reads back exactly) or
/// a label.
using CsvCell = std::variant<double, std::string>;

/// Writes a CSV file with a header line; every row must have as many cells as the
/// header.
void write_csv(const std::filesystem::path& path, const std::vector<std::string>& header,
               const std::vector<std::vector<CsvCell>>& rows);

/// Writes a numeric matrix as CSV, one row per line, under the given column names.
void write_csv(const std::filesystem::path& path, const std::vector<std::string>& header,
               const Eigen::Ref<const Eigen::MatrixXd>& data);

/// One entry of results.json: a number, a flag or a label.
///
/// Any arithmetic type converts to it: floating-point numbers are stored as double, signed
/// integers as int64, unsigned ones as uint64, so that results.json shows counts and seeds
/// as integers.
struct ResultValue {
  std::variant<std::monostate, double, std::int64_t, std::uint64_t, bool, std::string> value;

  ResultValue() = default;
  ResultValue(bool b) : value(b) {}
  template <std::floating_point T>
  ResultValue(T x) : value(static_cast<double>(x)) {}
  template <std::signed_integral T>
  ResultValue(T x) : value(static_cast<std::int64_t>(x)) {}
  template <std::unsigned_integral T>
    requires(!std::same_as<T, bool>)
  ResultValue(T x) : value(static_cast<std::uint64_t>(x)) {}
  ResultValue(std::string s) : value(std::move(s)) {}
  ResultValue(const char* s) : value(std::string(s)) {}
};

/// What a chapter program reports in results.json: named numbers (and a few labels),
/// flat, in the order they were first set. `results["key"] = value` adds or replaces one.
///
/// A flat list rather than a JSON document, because that is all results.json holds, and
/// because a program that includes no JSON library compiles several seconds faster.
class Results {
 public:
  /// The entry named `key`, added (with no value yet) if there is none.
  ResultValue& operator[](const std::string& key);
  /// The number stored under `key`. \throws std::out_of_range if there is no such entry or
  /// it holds no number.
  double number(const std::string& key) const;
  /// Every entry, in the order the keys were first set.
  const std::vector<std::pair<std::string, ResultValue>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, ResultValue>> entries_;
};

/// Writes `results` as a flat JSON object, pretty-printed, keys in insertion order.
/// Throws std::runtime_error if a number is NaN or infinite (JSON cannot hold it; never
/// silently) or an entry was never given a value.
void write_json(const std::filesystem::path& path, const Results& results);

/// What a chapter program reports: the summary it prints (output.txt) and the named numbers
/// of results.json, built side by side so that one line can do both:
/// `r.say("max residual {:.2e}\n", r.put("max_residual", x));`
struct Report {
  std::string text;
  Results results;
  /// The sections that did not run because they reached an exercise not done yet (the
  /// student copy; see section()), in the order met.
  struct Waiting {
    std::string section, exercise, function, file;
  };
  std::vector<Waiting> waiting;

  /// Appends formatted text to the summary (see harness::say()).
  template <typename... Args>
  void say(fmt::format_string<Args...> format, Args&&... args) {
    harness::say(text, format, std::forward<Args>(args)...);
  }
  /// Stores `value` under `key` in results.json and returns it.
  template <typename T>
  T put(const std::string& key, T value) {
    results[key] = value;
    return value;
  }
};

/// Runs `body`, one section of a chapter program, which adds to `report` and may write files
/// into `dir` (the directory begin_output() returned). In the student copy a section can reach
/// the stub of an exercise not done yet (attn::exercise_not_done): then everything the
/// section added to `report` and to `dir` is taken back, the summary says in one line that
/// section `title` waits for that exercise, and the program goes on with its next section.
/// So the exercises of a chapter can be done in any order: what does not need an unfinished
/// exercise still runs. finish_program() then ends the run with exit code 3. Returns whether
/// the section ran (for what needs two sections, such as a figure drawn from both).
///
/// A section must not draw from a random stream that a later section uses before it can
/// reach a stub, or the later sections would see other numbers than in the full book
/// (`./book validate` compares them).
bool section(Report& report, const std::filesystem::path& dir, const std::string& title,
             const std::function<void()>& body);

/// Records that `part` of a section (a row of its table) waits for the exercise `e` while the
/// rest of the section runs (in the student copy): one line in the summary, as for a whole
/// section, and the exercise among those finish_program() lists. For a part that another
/// exercise's code reaches (chapter 06's causal block needs 01.6's causal_mask): the section's
/// own exercise is still graded on the rest.
void part_waits(Report& report, const std::string& part, const attn::exercise_not_done& e);

/// Thrown by finish_program() after it has written the output set of a run in which some
/// sections waited for exercises (Report::waiting); run_program() prints its one line and
/// returns exit code 3.
struct sections_waiting : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Where a run writes: checks `out` (the --out option), creates a staging directory beside
/// it and returns that. Call it once, after every option is checked and before any work.
///
/// Throws usage_error for --out if `out` cannot be written, or is an existing directory
/// that holds anything but a previous output set (files named *.csv, *.svg, *.json, *.txt,
/// with a results.json), which the swap would otherwise delete.
///
/// From here until the program ends, a watcher process waits for the run: if the run fails,
/// crashes or is stopped by SIGINT, SIGTERM or SIGHUP, it removes the staging directory and
/// leaves `out` as it was; the process then ends the way the run did.
std::filesystem::path begin_output(const std::filesystem::path& out);

/// How every chapter program ends: writes `results` to results.json and the summary `text`
/// to output.txt in `dir` (the directory begin_output() returned), swaps the whole set into
/// --out at once, then prints the summary, `note` (if any; for what must not go into
/// output.txt, such as a wall time) and where the files are.
void finish_program(const std::filesystem::path& dir, const Results& results,
                    const std::string& text, const std::string& note = "");

/// finish_program() for a Report. When sections waited for exercises, results.json says
/// which under "exercises_not_done" (their ids, space-separated) and, once the set is written,
/// throws sections_waiting.
void finish_program(const std::filesystem::path& dir, const Report& report,
                    const std::string& note = "");

/// The rounding level of a figure, relative to the largest value of its kind (the first
/// singular value, the size of the answer): below it a value is zero but for rounding, and its
/// digits change with the CPU, the compiler and the order of each sum. A figure draws such a
/// value at this floor, labelled "rounding level", so that no machine can move it; the
/// program's results.json keeps the value itself. 1e-13 is about 450 machine epsilons, far
/// below every value that is not rounding in the figures that use it.
inline constexpr double rounding_floor = 1e-13;

/// `relative` (a value over its figure's scale), or rounding_floor if it is smaller.
inline double at_least_rounding_floor(double relative) {
  return relative < rounding_floor ? rounding_floor : relative;
}

/// Renders `figures/<script>.gp` with gnuplot: reads `<dir>/<name>.csv`, writes
/// `<dir>/<name>.svg`. gnuplot runs in `dir` and is given the file names only, so any
/// directory name works.
///
/// The script receives the variables `in` and `out`, plus `variables` (gnuplot statements such
/// as `title='n = 100'`), so one script can draw several figures. `script` defaults to `name`.
/// Returns false (after one line on stderr) when gnuplot is not installed; throws if gnuplot
/// fails on the script.
bool render_figure(const std::filesystem::path& dir, const std::string& name,
                   const std::string& script = "", const std::string& variables = "");

}  // namespace harness
