#pragma once
/// \file output.hpp
/// \brief What every chapter program writes: CSV data, results.json, SVG figures —
/// atomically.
///
/// A reader of a program's output directory never sees a half-written file: each file is
/// written to a temporary name in the same directory and renamed into place, which POSIX
/// makes atomic.

#include <fmt/format.h>

#include <Eigen/Dense>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace attn {

/// \brief Appends formatted text to `text`: how a chapter program builds the summary it
/// prints and saves as output.txt.
template <typename... Args>
void say(std::string& text, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(text), format, std::forward<Args>(args)...);
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

/// \brief Writes `results.json`-style output: pretty-printed, keys in insertion order.
/// \throws std::runtime_error if a number is NaN or infinite (JSON cannot hold it; never
/// silently).
void write_json(const std::filesystem::path& path, const nlohmann::ordered_json& value);

/// \brief How every chapter program ends: writes `results` to `out`/results.json and the
/// summary `text` to `out`/output.txt, then prints the summary, `note` (if any; for what
/// must not go into output.txt, such as a wall time) and where the files are.
void finish_program(const std::filesystem::path& out, const nlohmann::ordered_json& results,
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
