#include "attn/cli.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <system_error>

#include "attn/exercise.hpp"

namespace attn {

namespace fs = std::filesystem;

namespace {

// Strict parse: the whole text must be one integer that fits in T ("1e3", "12abc", "" all
// fail).
template <typename T>
bool parse_integer(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && ptr == end && !text.empty();
}

// Strict parse of a real number ("1e-3" yes; "1e-3x", "", " 1" no).
bool parse_number(const std::string& text, double& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && ptr == end && !text.empty();
}

}  // namespace

CommandLine::CommandLine(const std::string& description, const std::string& name)
    : app(std::make_unique<CLI::App>(description, name)) {}

CommandLine::~CommandLine() = default;

usage_error::usage_error(const std::string& option, const std::string& message)
    : std::runtime_error(option + ": " + message) {}

void add_common_options(CommandLine& cli, CommonOptions& options,
                        const fs::path& default_out) {
  CLI::App& app = *cli.app;
  options.out = default_out;
  app.add_option("--seed", options.seed,
                 "random seed, an integer in [0, 2^64-1]; the same seed gives the same "
                 "results.json")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            std::uint64_t parsed = 0;
            if (!parse_integer(text, parsed))
              return fmt::format(
                  "must be an integer in [0, 18446744073709551615] (got '{}')", text);
            return {};
          },
          "", "seed"));
  app.add_option("--out", options.out,
                 "output directory (results.json, CSV, SVG, output.txt)")
      ->capture_default_str();
  app.add_flag("--quick", options.quick, "small sizes: a run of a few seconds");
}

void add_int_option(CommandLine& cli, const std::string& name, long& value, long lo,
                    long hi, const std::string& description) {
  // A transform instead of CLI::Range so that the error names the option, its range and
  // the input.
  cli.app
      ->add_option(name, value,
                   fmt::format("{} (an integer in [{}, {}])", description, lo, hi))
      ->capture_default_str()
      ->check(CLI::Validator(
          [name, lo, hi](std::string& text) -> std::string {
            long parsed = 0;
            if (!parse_integer(text, parsed) || parsed < lo || parsed > hi)
              return fmt::format("must be an integer in [{}, {}] (got '{}')", lo, hi,
                                 text);
            return {};
          },
          "", "range"));
}

void add_real_option(CommandLine& cli, const std::string& name, double& value, double lo,
                     double hi, const std::string& description) {
  const std::string range = fmt::format("[{:g}, {:g}]", lo, hi);
  cli.app->add_option(name, value, fmt::format("{} (a number in {})", description, range))
      ->capture_default_str()
      ->check(CLI::Validator(
          [lo, hi, range](std::string& text) -> std::string {
            double parsed = 0;
            // The comparisons are false for NaN, so NaN is refused too.
            if (!parse_number(text, parsed) || !(parsed >= lo && parsed <= hi))
              return fmt::format("must be a number in {} (got '{}')", range, text);
            return {};
          },
          "", "range"));
}

void add_choice_option(CommandLine& cli, const std::string& name, std::string& value,
                       const std::vector<std::string>& choices,
                       const std::string& description) {
  const std::string list = fmt::format("{}", fmt::join(choices, ", "));
  cli.app->add_option(name, value, fmt::format("{} (one of: {})", description, list))
      ->capture_default_str()
      ->check(CLI::Validator(
          [choices, list](std::string& text) -> std::string {
            if (std::find(choices.begin(), choices.end(), text) != choices.end())
              return {};
            return fmt::format("must be one of: {} (got '{}')", list, text);
          },
          "", "choice"));
}

bool option_given(const CommandLine& cli, const std::string& name) {
  return cli.app->count(name) > 0;
}

void prepare_out_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw usage_error("--out",
                      "cannot create directory '" + dir.string() + "': " + ec.message());
  const fs::path probe = dir / (".probe-" + std::to_string(::getpid()));
  std::ofstream(probe) << "";
  if (!fs::exists(probe))
    throw usage_error("--out", "directory '" + dir.string() + "' is not writable");
  fs::remove(probe, ec);
}

void progress(const std::string& message) {
  static const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (!terminal) return;
  fmt::print(stderr, "\r\033[K{}", message);  // carriage return, then clear the line
  std::fflush(stderr);
}

int run_program(CommandLine& cli, int argc, char** argv,
                const std::function<void()>& body) {
  CLI::App& app = *cli.app;
  const std::string program = app.get_name();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return 0;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "{}: {} (see --help)\n", program, e.what());
    return 2;
  }
  try {
    body();
  } catch (const usage_error& e) {
    fmt::print(stderr, "{}: {} (see --help)\n", program, e.what());
    return 2;
  } catch (const exercise_not_done& e) {
    // The student copy of the book: one line that says which exercise to do, exit code 3.
    const bool chapter = program.size() == 4 && program.rfind("ch", 0) == 0;
    fmt::print(stderr, "{} needs exercise {} ({} in {}): not done yet\n",
               chapter ? "chapter " + program.substr(2) : program, e.id(), e.function(),
               e.file());
    return 3;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", program, e.what());
    return 1;
  }
  return 0;
}

}  // namespace attn
