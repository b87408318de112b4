#include "attn/output.hpp"

#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>

extern char** environ;

namespace attn {

namespace fs = std::filesystem;

namespace {

fs::path temporary_name(const fs::path& path) {
  return path.parent_path() /
         (".tmp-" + std::to_string(::getpid()) + "-" + path.filename().string());
}

std::string cell_text(const CsvCell& cell) {
  if (const double* x = std::get_if<double>(&cell)) {
    if (!std::isfinite(*x))
      throw std::runtime_error("write_csv: refusing to write a NaN or infinite number");
    return fmt::format("{:.17g}", *x);
  }
  return std::get<std::string>(cell);
}

// The JSON value of one entry; `where` names it in the error for a NaN or a missing value.
nlohmann::ordered_json to_json(const ResultValue& entry, const std::string& where) {
  return std::visit(
      [&](const auto& x) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          throw std::runtime_error("write_json: " + where + " was never given a value");
        else {
          if constexpr (std::is_same_v<T, double>)
            if (!std::isfinite(x))
              throw std::runtime_error("write_json: " + where + " is NaN or infinite");
          return x;
        }
      },
      entry.value);
}

}  // namespace

void write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path tmp = temporary_name(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw std::runtime_error("cannot write " + path.string() + ": " +
                               std::strerror(errno));
    }
  }
  fs::rename(tmp, path);
}

void write_csv(const fs::path& path, const std::vector<std::string>& header,
               const std::vector<std::vector<CsvCell>>& rows) {
  std::string text;
  const auto append_line = [&text](const auto& cells, const auto& to_text) {
    for (std::size_t j = 0; j < cells.size(); ++j) {
      if (j > 0) text += ',';
      text += to_text(cells[j]);
    }
    text += '\n';
  };
  append_line(header, [](const std::string& s) { return s; });
  for (const auto& row : rows) {
    if (row.size() != header.size())
      throw std::invalid_argument("write_csv: a row of " + path.filename().string() +
                                  " has " + std::to_string(row.size()) +
                                  " cells, the header " + std::to_string(header.size()));
    append_line(row, cell_text);
  }
  write_file_atomic(path, text);
}

void write_csv(const fs::path& path, const std::vector<std::string>& header,
               const Eigen::Ref<const Eigen::MatrixXd>& data) {
  std::vector<std::vector<CsvCell>> rows(static_cast<std::size_t>(data.rows()));
  for (Eigen::Index i = 0; i < data.rows(); ++i)
    for (Eigen::Index j = 0; j < data.cols(); ++j)
      rows[static_cast<std::size_t>(i)].emplace_back(data(i, j));
  write_csv(path, header, rows);
}

ResultValue& Results::operator[](const std::string& key) {
  for (auto& [k, v] : entries_)
    if (k == key) return v;
  return entries_.emplace_back(key, ResultValue()).second;
}

double Results::number(const std::string& key) const {
  for (const auto& [k, v] : entries_) {
    if (k != key) continue;
    if (const double* x = std::get_if<double>(&v.value)) return *x;
    if (const auto* i = std::get_if<std::int64_t>(&v.value)) return static_cast<double>(*i);
    if (const auto* u = std::get_if<std::uint64_t>(&v.value)) return static_cast<double>(*u);
    throw std::out_of_range("results: " + key + " holds no number");
  }
  throw std::out_of_range("results: no entry " + key);
}

void write_json(const fs::path& path, const Results& results) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, value] : results.entries())
    j[key] = to_json(value, path.filename().string() + "." + key);
  write_file_atomic(path, j.dump(2) + "\n");
}

void finish_program(const fs::path& out, const Results& results,
                    const std::string& text, const std::string& note) {
  write_json(out / "results.json", results);
  write_file_atomic(out / "output.txt", text);
  fmt::print("{}\n{}wrote {}\n", text, note, out.string());
}

bool render_figure(const fs::path& dir, const std::string& name,
                   const std::string& script_name, const std::string& variables) {
  const fs::path script =
      fs::path(ATTN_FIGURES_DIR) / ((script_name.empty() ? name : script_name) + ".gp");
  const fs::path csv = dir / (name + ".csv");
  const fs::path svg = dir / (name + ".svg");
  const fs::path tmp = temporary_name(svg);
  for (const fs::path& p : {csv, tmp})
    if (p.string().find('\'') != std::string::npos)
      throw std::runtime_error("render_figure: path contains a quote: " + p.string());
  std::string vars = "in='" + csv.string() + "'; out='" + tmp.string() + "'";
  if (!variables.empty()) vars += "; " + variables;
  std::vector<std::string> args{"gnuplot", "-e", vars, script.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  const int spawn_error =
      ::posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ);
  if (spawn_error == ENOENT) {
    fmt::print(
        stderr,
        "note: gnuplot is not installed, so {}.svg was not drawn (its data is in {})\n",
        name, csv.string());
    return false;
  }
  if (spawn_error != 0)
    throw std::runtime_error("cannot start gnuplot: " +
                             std::string(std::strerror(spawn_error)));
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(tmp)) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("gnuplot failed on " + script.string());
  }
  fs::rename(tmp, svg);
  return true;
}

}  // namespace attn
