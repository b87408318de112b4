#pragma once
/// \file output.hpp
/// \brief What every chapter program writes: CSV data, results.json, SVG figures —
/// atomically.
///
/// A reader of a program's output directory never sees a half-written file: each file is
/// written to a temporary name in the same directory and renamed into place, which POSIX
/// makes atomic.

#include <fmt/core.h>

#include <Eigen/Dense>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace attn {

/// \brief Appends formatted text to `text`: how a chapter program builds the summary it
/// prints and saves as output.txt.
///
/// The format string is checked when the program compiles; the formatting itself is done by
/// the compiled fmt library (`fmt::vformat`), so a program does not compile it again.
template <typename... Args>
void say(std::string& text, fmt::format_string<Args...> format, Args&&... args) {
  text += fmt::vformat(format, fmt::make_format_args(args...));
}

/// \brief Writes `content` to `path` atomically (temporary file, then rename).
/// \throws std::runtime_error naming the path if it cannot be written.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// A CSV cell: a number (written with 17 significant digits, so it reads back exactly) or
/// a label.
using CsvCell = std::variant<double, std::string>;

/// \brief Writes a CSV file with a header line; every row must have as many cells as the
/// header.
void write_csv(const std::filesystem::path& path, const std::vector<std::string>& header,
               const std::vector<std::vector<CsvCell>>& rows);

/// \brief Writes a numeric matrix as CSV, one row per line, under the given column names.
void write_csv(const std::filesystem::path& path, const std::vector<std::string>& header,
               const Eigen::Ref<const Eigen::MatrixXd>& data);

/// \brief One entry of results.json: a number, a flag or a label.
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

/// \brief What a chapter program reports in results.json: named numbers (and a few labels),
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

/// \brief Writes `results` as a flat JSON object, pretty-printed, keys in insertion order.
/// \throws std::runtime_error if a number is NaN or infinite (JSON cannot hold it; never
/// silently) or an entry was never given a value.
void write_json(const std::filesystem::path& path, const Results& results);

/// \brief How every chapter program ends: writes `results` to `out`/results.json and the
/// summary `text` to `out`/output.txt, then prints the summary, `note` (if any; for what
/// must not go into output.txt, such as a wall time) and where the files are.
void finish_program(const std::filesystem::path& out, const Results& results,
                    const std::string& text, const std::string& note = "");

/// \brief Renders `figures/<script>.gp` with gnuplot: reads `<dir>/<name>.csv`, writes
/// `<dir>/<name>.svg`.
///
/// The script receives the variables `in` and `out`, plus `variables` (gnuplot statements such
/// as `title='n = 100'`), so one script can draw several figures. `script` defaults to `name`.
/// Returns false (after one line on stderr) when gnuplot is not installed; throws if gnuplot
/// fails on the script.
bool render_figure(const std::filesystem::path& dir, const std::string& name,
                   const std::string& script = "", const std::string& variables = "");

}  // namespace attn
