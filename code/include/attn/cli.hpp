#pragma once
/// \file cli.hpp
/// \brief The command-line contract every chapter program keeps.
///
/// `--help` lists every option with its default; bad input gets one line on stderr naming
/// the option and what it accepts, and exit code 2; `--out` is checked before any work
/// starts.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn {

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

/// \brief Adds `--seed`, `--out` (default `default_out`) and `--quick` to `app`.
void add_common_options(CLI::App& app, CommonOptions& options,
                        const std::filesystem::path& default_out);

/// \brief Adds an integer option that must lie in \f$ [lo, hi] \f$; --help shows the
/// range.
CLI::Option* add_int_option(CLI::App& app, const std::string& name, long& value, long lo,
                            long hi, const std::string& description);

/// \brief Adds a real-valued option that must be a number in \f$ [lo, hi] \f$ ("nan",
/// "inf", "1e-3x" and out-of-range values are usage errors); --help shows the range.
CLI::Option* add_real_option(CLI::App& app, const std::string& name, double& value,
                             double lo, double hi, const std::string& description);

/// \brief Adds an option whose value must be one of `choices`; --help lists them.
CLI::Option* add_choice_option(CLI::App& app, const std::string& name, std::string& value,
                               const std::vector<std::string>& choices,
                               const std::string& description);

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
int run_program(CLI::App& app, int argc, char** argv, const std::function<void()>& body);

}  // namespace attn
