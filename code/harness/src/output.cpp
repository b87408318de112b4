#include "harness/output.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "harness/cli.hpp"

extern char** environ;

namespace harness {

namespace fs = std::filesystem;

namespace {

fs::path temporary_name(const fs::path& path) {
  return path.parent_path() /
         (".tmp-" + std::to_string(::getpid()) + "-" + path.filename().string());
}

// The run of this process, once begin_output() has started it.
struct Staging {
  fs::path given;  // --out as the user wrote it, for messages
  fs::path out;    // --out, absolute
  fs::path dir;    // where the run writes: a hidden directory beside `out`
};
std::optional<Staging> staging;

// In the watcher process: the run it waits for, to pass on a signal; the signal that stopped
// it (0 while none did), which the watcher then ends by; whether SIGINT came in ignored.
volatile pid_t watched_run = 0;
volatile sig_atomic_t stopped_by = 0;
volatile sig_atomic_t sigint_came_ignored = 0;

// A shell starts a script's background job with SIGINT ignored, so that Ctrl-C in the terminal
// (sent by the kernel to the whole group) leaves it running. A SIGINT that a process sends to
// this pid alone (kill -INT, a supervisor) still stops the run, as Ctrl-C stops a foreground
// one. The run inherited the ignored SIGINT, so it is stopped with SIGTERM.
extern "C" void pass_on_signal(int signal, siginfo_t* info, void*) {
  const bool sent_by_a_process = info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  if (signal == SIGINT && sigint_came_ignored && !sent_by_a_process) return;
  stopped_by = signal;
  if (watched_run > 0) ::kill(watched_run, signal == SIGINT && sigint_came_ignored ? SIGTERM : signal);
}

// The set a chapter program writes, so that a swap never deletes anything else.
bool output_file_name(const fs::path& name) {
  const std::string ext = name.extension().string();
  return ext == ".csv" || ext == ".svg" || ext == ".json" || ext == ".txt";
}

// Why `dir` (an existing directory) must not be replaced by a run's output, or "".
std::string not_an_output_set(const fs::path& dir) {
  std::error_code ec;
  bool empty = true, has_results = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    empty = false;
    const fs::path name = entry.path().filename();
    if (!entry.is_regular_file(ec) || !output_file_name(name))
      return "it holds '" + name.string() + "'";
    has_results = has_results || name == "results.json";
  }
  if (ec) return ec.message();
  if (!empty && !has_results) return "it holds files but no results.json";
  return "";
}

// `path` as the user will find it: in --out rather than in the staging directory.
fs::path shown(const fs::path& path) {
  if (!staging || path.parent_path() != staging->dir) return path;
  return staging->given / path.filename();
}

// ".NAME.partial-": a staging directory for --out NAME, before the run's process id.
std::string staging_prefix(const fs::path& out) {
  return fmt::format(".{}.partial-", out.filename().string());
}

// Removes staging directories that runs killed outright (SIGKILL of the watcher too) left.
void remove_stale_staging(const fs::path& out) {
  const std::string prefix = staging_prefix(out);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      fs::remove_all(entry.path(), ec);
  }
}

fs::path old_set_name(const fs::path& dir) { return dir.string() + "-old"; }

// Waits for the run (the child), removes its staging directory whatever happened, and ends
// this process the way the run ended. Never returns.
// `created`: the directories begin_output() made for --out's parent, deepest first; removed
// again (those left empty) when the run does not finish.
[[noreturn]] void watch(pid_t run, const fs::path& dir, const std::vector<fs::path>& created) {
  watched_run = run;
  struct sigaction action {}, before {};
  action.sa_sigaction = pass_on_signal;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(signal, nullptr, &before);
    const bool ignored = before.sa_handler == SIG_IGN;
    if (signal == SIGINT) sigint_came_ignored = ignored;
    // An ignored SIGTERM or SIGHUP (nohup) stays ignored; SIGINT: see pass_on_signal.
    if (!ignored || signal == SIGINT) ::sigaction(signal, &action, nullptr);
  }
  int status = 0;
  while (::waitpid(run, &status, 0) < 0 && errno == EINTR) {
  }
  std::error_code ignored;
  for (int attempt = 0; attempt < 3; ++attempt) {  // a dying gnuplot may still add a file
    fs::remove_all(dir, ignored);
    fs::remove_all(old_set_name(dir), ignored);
    if (!fs::exists(dir)) break;
    ::usleep(100'000);
  }
  const bool finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!finished)
    for (const fs::path& made : created) fs::remove(made, ignored);  // only if empty
  // A run that finished before the signal reached it counts as finished.
  if (!finished && (stopped_by != 0 || WIFSIGNALED(status))) {
    const int signal = stopped_by != 0 ? static_cast<int>(stopped_by) : WTERMSIG(status);
    std::signal(signal, SIG_DFL);
    ::raise(signal);
  }
  std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

// Puts the finished set in `dir` in place of `out`, in one step where the filesystem can
// (renameat2's exchange), else in two renames.
void swap_into_place(const fs::path& dir, const fs::path& out) {
  if (!fs::exists(out)) {
    fs::rename(dir, out);
    return;
  }
  if (::renameat2(AT_FDCWD, dir.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(dir);  // now the previous set
    return;
  }
  fs::rename(out, old_set_name(dir));
  fs::rename(dir, out);
  fs::remove_all(old_set_name(dir));
}

std::string cell_text(const CsvCell& cell, const fs::path& path, const std::string& column) {
  if (const double* x = std::get_if<double>(&cell)) {
    require_finite(*x, path.filename().string() + ", column " + column);
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
          if constexpr (std::is_same_v<T, double>) require_finite(x, where);
          return x;
        }
      },
      entry.value);
}

}  // namespace

void require_finite(double x, std::string_view what) {
  if (!std::isfinite(x))
    throw std::runtime_error("refusing to report a NaN or infinite number (" +
                             std::string(what) + ")");
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path tmp = temporary_name(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw std::runtime_error("cannot write " + shown(path).string() + ": " +
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
      text += to_text(cells[j], j);
    }
    text += '\n';
  };
  append_line(header, [](const std::string& s, std::size_t) { return s; });
  for (const auto& row : rows) {
    if (row.size() != header.size())
      throw std::invalid_argument("write_csv: a row of " + path.filename().string() +
                                  " has " + std::to_string(row.size()) +
                                  " cells, the header " + std::to_string(header.size()));
    append_line(row, [&](const CsvCell& cell, std::size_t j) {
      return cell_text(cell, path, header[j]);
    });
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

fs::path begin_output(const fs::path& given) {
  if (staging) throw std::logic_error("begin_output: called twice");
  const std::string text = given.string();
  if (text.empty()) throw usage_error("--out", "must name a directory (got '')");
  if (text.front() == '-')
    throw usage_error("--out", "must name a directory, not an option (got '" + text +
                                   "'; write ./" + text + " for a directory of that name)");
  fs::path out = fs::absolute(given).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();  // "dir/" names dir
  if (out == out.root_path())
    throw usage_error("--out", "must not be the root directory (got '" + text + "')");
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(out, ec))) {
    const fs::path target = fs::canonical(out, ec);
    if (ec)
      throw usage_error("--out", "'" + text + "' is a symbolic link that leads nowhere (" +
                                     ec.message() + "); name a directory");
    out = target;  // a run replaces the directory the link names, not the link
  }
  const fs::file_status status = fs::status(out, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      throw usage_error("--out", "'" + text + "' exists and is not a directory");
    struct stat self {}, parent {};
    if (::stat(out.c_str(), &self) == 0 && ::stat(out.parent_path().c_str(), &parent) == 0 &&
        self.st_dev != parent.st_dev)
      throw usage_error("--out", "'" + text + "' is a mount point (the top of a filesystem), "
                                     "which a run cannot replace; name a directory inside it");
    const std::string why = not_an_output_set(out);
    if (!why.empty())
      throw usage_error("--out", "'" + text + "' is not an earlier output directory (" + why +
                                     "), so a run would delete it; name a new or empty one");
  }
  std::vector<fs::path> created;  // deepest first
  for (fs::path p = out.parent_path(); !fs::exists(p, ec) && p != p.root_path();
       p = p.parent_path())
    created.push_back(p);
  fs::create_directories(out.parent_path(), ec);
  if (ec) {
    const std::string why = ec.message();
    for (const fs::path& made : created) fs::remove(made, ec);
    throw usage_error("--out",
                      "cannot create directory '" + out.parent_path().string() + "': " + why);
  }
  remove_stale_staging(out);
  const fs::path dir = out.parent_path() / (staging_prefix(out) + std::to_string(::getpid()));
  fs::create_directory(dir, ec);
  if (ec) {
    const std::string why = ec.message();
    for (const fs::path& made : created) fs::remove(made, ec);
    throw usage_error("--out", "cannot write in '" + out.parent_path().string() + "': " + why);
  }
  std::fflush(nullptr);  // or the run and the watcher would both print what is buffered
  const pid_t run = ::fork();
  if (run < 0) {
    fs::remove_all(dir, ec);
    throw std::runtime_error(std::string("cannot start the run: ") + std::strerror(errno));
  }
  if (run > 0) watch(run, dir, created);
  staging = Staging{given, out, dir};
  return dir;
}

void finish_program(const fs::path& dir, const Results& results, const std::string& text,
                    const std::string& note) {
  if (!staging || dir != staging->dir)
    throw std::logic_error("finish_program: not the directory begin_output() returned");
  write_json(dir / "results.json", results);
  write_file_atomic(dir / "output.txt", text);
  swap_into_place(dir, staging->out);
  fmt::print("{}\n{}wrote {}\n", text, note, staging->given.string());
}

bool section(Report& report, const fs::path& dir, const std::string& title,
             const std::function<void()>& body) {
  const std::size_t text_before = report.text.size();
  const Results results_before = report.results;
  std::vector<fs::path> files_before;
  for (const auto& entry : fs::directory_iterator(dir)) files_before.push_back(entry.path());
  try {
    body();
    return true;
  } catch (const attn::exercise_not_done& e) {
    report.text.resize(text_before);
    report.results = results_before;
    for (const auto& entry : fs::directory_iterator(dir))
      if (std::find(files_before.begin(), files_before.end(), entry.path()) ==
          files_before.end())
        fs::remove_all(entry.path());
    part_waits(report, title, e);
    report.say("\n");
    return false;
  }
}

void part_waits(Report& report, const std::string& part, const attn::exercise_not_done& e) {
  report.say("{} waits for exercise {}: write {} in {}, then run the program again.\n", part,
             e.id(), e.function(), e.file());
  const std::size_t name = part.find_first_not_of(' ');  // a row's indentation
  report.waiting.push_back(
      {part.substr(name == std::string::npos ? 0 : name), e.id(), e.function(), e.file()});
}

void finish_program(const fs::path& dir, const Report& report, const std::string& note) {
  if (report.waiting.empty()) return finish_program(dir, report.results, report.text, note);
  Results results = report.results;
  std::vector<std::string> ids;
  std::string sections;
  for (const Report::Waiting& w : report.waiting) {
    if (std::find(ids.begin(), ids.end(), w.exercise) == ids.end()) ids.push_back(w.exercise);
    sections += (sections.empty() ? "" : "; ") + w.section + " (exercise " + w.exercise + ")";
  }
  results["exercises_not_done"] = fmt::format("{}", fmt::join(ids, " "));
  finish_program(dir, results, report.text, note);
  throw sections_waiting(fmt::format("waiting for exercises not done yet: {}. The rest ran.",
                                     sections));
}

namespace {

// gnuplot on `script` in `dir` with the statements `vars`: false when gnuplot is not installed;
// throws when it fails or does not write `out`.
bool run_gnuplot(const fs::path& dir, const fs::path& script, std::string vars,
                 const fs::path& out) {
  std::vector<std::string> args{"gnuplot", "-e", vars, script.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  pid_t pid = 0;
  const int spawn_error =
      ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error == ENOENT) return false;
  if (spawn_error != 0)
    throw std::runtime_error("cannot start gnuplot: " +
                             std::string(std::strerror(spawn_error)));
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(out)) {
    std::error_code ignored;
    fs::remove(out, ignored);
    throw std::runtime_error("gnuplot failed on " + script.string());
  }
  return true;
}

}  // namespace

bool render_figure(const fs::path& dir, const std::string& name,
                   const std::string& script_name, const std::string& variables) {
  const fs::path script =
      fs::path(BOOK_FIGURES_DIR) / ((script_name.empty() ? name : script_name) + ".gp");
  const fs::path csv = dir / (name + ".csv");
  const fs::path svg = dir / (name + ".svg");
  const fs::path tmp = temporary_name(svg);
  // gnuplot runs in `dir` and sees bare file names (ours: no quotes), whatever --out is.
  const auto statements = [&](const fs::path& out) {
    std::string vars = "in='" + csv.filename().string() + "'; out='" +
                       out.filename().string() + "'";
    if (!variables.empty()) vars += "; " + variables;
    return vars;
  };
  if (!run_gnuplot(dir, script, statements(tmp), tmp)) {
    fmt::print(
        stderr,
        "note: gnuplot is not installed, so {}.svg was not drawn (its data is in {})\n",
        name, shown(csv).string());
    return false;
  }
  fs::rename(tmp, svg);
  // The site build also wants each figure drawn for a phone's width (the script's variable
  // `narrow`), outside the program's output set: into $BOOK_NARROW_FIGURES/<name>.svg.
  const char* narrow_dir = std::getenv("BOOK_NARROW_FIGURES");
  if (narrow_dir && *narrow_dir) {
    run_gnuplot(dir, script, statements(tmp) + "; narrow=1", tmp);
    fs::create_directories(narrow_dir);
    fs::copy_file(tmp, fs::path(narrow_dir) / svg.filename(),
                  fs::copy_options::overwrite_existing);
    fs::remove(tmp);
  }
  return true;
}

}  // namespace harness
