#pragma once
// The command-line contract every chapter program keeps (README, "Running one chapter"):
// `--help` lists every option with its default and range; bad input gets one line on stderr
// naming the option and what it accepts, exit code 2, before any work starts and before
// anything is written.
//
// Not part of the library: this is the programs' plumbing, kept apart from the mathematics
// in namespace attn. CLI11 does the parsing, compiled once in cli.cpp (a file that includes
// CLI11 is slow to compile: docs/performance.md, "Building the book").

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace harness {

class Results;  // harness/output.hpp

/// A program's command line: its name (`ch06`), a one-line description, its options.
struct CommandLine {
  CommandLine(const std::string& description, const std::string& name);
  ~CommandLine();
  std::unique_ptr<CLI::App> app;  // the parser (defined in cli.cpp only)
  // What --quick changes: run after parsing, for the options the user did not give.
  std::vector<std::function<void()>> quick_defaults;
  // Each option's name and how to record its value (see record_options()).
  std::vector<std::pair<std::string, std::function<void(Results&, const std::string&)>>>
      parameters;
};

/// A bad option value. The message reads `--option: what is allowed (got what)`.
struct usage_error : std::runtime_error {
  usage_error(const std::string& option, const std::string& message);
};

/// Options every chapter program has.
struct CommonOptions {
  std::uint64_t seed = 1;     // --seed: every random draw of the run follows from it
  std::filesystem::path out;  // --out: the output directory
  bool quick = false;         // --quick: small sizes, a run of seconds
};

/// Adds --seed, --out (default default_out_dir(chapter)) and --quick.
void add_common_options(CommandLine& cli, CommonOptions& options, const std::string& chapter);

/// Where a chapter program writes by default: out/<chapter> beside the bin/ directory of the
/// running executable (build/<preset>/out/NN-slug). Found at run time rather than compiled in,
/// so that the same program compiled in another copy of the book is the same object file
/// (ccache reuses it).
std::filesystem::path default_out_dir(const std::string& chapter);

/// Adds an integer option that must lie in [lo, hi], written in decimal ("010" is ten, not
/// eight). `quick`, if given, is its value under --quick unless the user set it; --help
/// shows the range, the default and the --quick value.
void add_int_option(CommandLine& cli, const std::string& name, long& value, long lo,
                    long hi, const std::string& description,
                    std::optional<long> quick = std::nullopt);

/// Adds a real-valued option that must be a number in [lo, hi] ("nan", "inf", "1e-3x" and
/// out-of-range values are usage errors); `quick` as for add_int_option().
void add_real_option(CommandLine& cli, const std::string& name, double& value, double lo,
                     double hi, const std::string& description,
                     std::optional<double> quick = std::nullopt);

/// Adds an option whose value must be one of `choices`; --help lists them.
void add_choice_option(CommandLine& cli, const std::string& name, std::string& value,
                       const std::vector<std::string>& choices,
                       const std::string& description);

/// Whether the command line gave option `name` (after parsing).
bool option_given(const CommandLine& cli, const std::string& name);

/// Records the run's parameters in `results`: --seed, then every option declared with
/// add_*_option() in the order declared, each under its name without the dashes ("--max-d"
/// → "max_d"), so that a results.json says which run made it. Options named in `except`
/// are left out (a thread count, which must not change the file; a size that the run does
/// not use unless given).
void record_options(const CommandLine& cli, Results& results,
                    const std::vector<std::string>& except = {});

/// Refuses (usage_error naming `option`) a run that would need more than the memory this
/// machine can give it: half its physical memory, so that the run never swaps or meets the
/// out-of-memory killer. `bytes` is the run's estimate of its largest allocation at once.
void require_memory(const std::string& option, double bytes);

/// Shows one line of progress on stderr, replacing the previous one; an empty message clears
/// it. Prints nothing when stderr is not a terminal (logs, pipes, CI).
void progress(const std::string& message);

/// Parses the command line (applying the --quick values), then runs `body`. Returns the
/// process exit code: 0 on success or --help; 2 on a usage error (one line on stderr); 3 in the
/// student copy when the run reached the stub of an exercise that is not done: either some
/// sections waited for it (harness::section(); the others ran and their output set is written)
/// or `body` met it outside a section (attn::exercise_not_done; nothing written) — one line
/// names the exercise, the function and its file; 1 on any other
/// failure (one line); a run stopped by a signal ends by that signal. Whatever happens, the
/// output directory holds the previous complete output set or the new one (see
/// begin_output()).
int run_program(CommandLine& cli, int argc, char** argv, const std::function<void()>& body);

}  // namespace harness
