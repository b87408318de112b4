#pragma once
/// \file cli.hpp
/// \brief The command-line contract every chapter program keeps.
///
/// `--help` lists every option with its default; bad input gets one line on stderr naming
/// the option and what it accepts, and exit code 2; `--out` is checked before any work
/// starts.
///
/// CLI11 does the parsing, behind attn::CommandLine: compiled once, in cli.cpp. In a file
/// that includes it, CLI11 alone costs about 10 s of CPU at -O3, as much as the rest of a
/// chapter program.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace attn {

/// \brief A program's command line: its name, description and options.
struct CommandLine {
  CommandLine(const std::string& description, const std::string& name);
  ~CommandLine();
  std::unique_ptr<CLI::App> app;  ///< the parser (defined in cli.cpp only)
};

/// \brief A bad option value. The message reads `--option: what is allowed (got what)`.
struct usage_error : std::runtime_error {
  usage_error(const std::string& option, const std::string& message);
};

/// \brief Options every chapter program has.
struct CommonOptions {
  std::uint64_t seed = 1;     ///< `--seed`: every random draw of the run follows from it
  std::filesystem::path out;  ///< `--out`: output directory
  bool quick = false;         ///< `--quick`: small sizes, a run of seconds
};

/// \brief Adds `--seed`, `--out` (default `default_out`) and `--quick`.
void add_common_options(CommandLine& cli, CommonOptions& options,
                        const std::filesystem::path& default_out);

/// \brief Adds an integer option that must lie in \f$ [lo, hi] \f$; --help shows the
/// range.
void add_int_option(CommandLine& cli, const std::string& name, long& value, long lo,
                    long hi, const std::string& description);

/// \brief Adds a real-valued option that must be a number in \f$ [lo, hi] \f$ ("nan",
/// "inf", "1e-3x" and out-of-range values are usage errors); --help shows the range.
void add_real_option(CommandLine& cli, const std::string& name, double& value, double lo,
                     double hi, const std::string& description);

/// \brief Adds an option whose value must be one of `choices`; --help lists them.
void add_choice_option(CommandLine& cli, const std::string& name, std::string& value,
                       const std::vector<std::string>& choices,
                       const std::string& description);

/// \brief Whether the command line gave option `name` (after parsing): `--quick` shrinks
/// only what the user did not set.
bool option_given(const CommandLine& cli, const std::string& name);

/// \brief Creates `dir` (with parents) and proves it writable.
/// \throws usage_error for `--out` otherwise, before the program has written anything.
void prepare_out_dir(const std::filesystem::path& dir);

/// \brief Shows one line of progress on stderr, replacing the previous one; an empty
/// message clears it. Prints nothing when stderr is not a terminal (logs, pipes, CI).
void progress(const std::string& message);

/// \brief Parses the command line, then runs `body`. Returns the process exit code:
/// 0 on success or `--help`; 2 on a usage error (one line on stderr); 3 when `body` reached
/// the stub of an exercise that is not done (attn::exercise_not_done, in the student copy:
/// one line naming the exercise, the function and its file); 1 on any other failure.
int run_program(CommandLine& cli, int argc, char** argv,
                const std::function<void()>& body);

}  // namespace attn
