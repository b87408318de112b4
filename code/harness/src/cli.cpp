#include "harness/cli.hpp"
#include "harness/eigen_blocking.hpp"
#include "harness/output.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cfenv>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <system_error>

#include "attn/exercise.hpp"  // the one thing the harness knows of the library

namespace harness {

namespace fs = std::filesystem;

namespace {

// Remembers `value` as the parameter `name` (see record_options()).
template <typename T>
void add_parameter(CommandLine& cli, const std::string& name, const T& value) {
  cli.parameters.emplace_back(
      name, [&value](Results& results, const std::string& key) { results[key] = value; });
}

// Strict decimal parse: the whole text must be one integer that fits in T ("1e3", "12abc",
// "0x10", "" all fail; "010" is ten: CLI11's own conversion would read it as octal eight).
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

fs::path default_out_dir(const std::string& chapter) {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return fs::path("out") / chapter;
  return exe.parent_path().parent_path() / "out" / chapter;
}

void add_common_options(CommandLine& cli, CommonOptions& options, const std::string& chapter) {
  CLI::App& app = *cli.app;
  options.out = default_out_dir(chapter);
  app.add_option_function<std::string>(
         "--seed",
         [&options](const std::string& text) { parse_integer(text, options.seed); },
         "random seed, an integer in [0, 2^64-1]; the same seed gives the same "
         "results.json")
      ->type_name("INT")
      ->default_str(std::to_string(options.seed))
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
  add_parameter(cli, "--seed", options.seed);
}

// " (default 10, 3 with --quick)" after the range in --help.
template <typename T>
std::string with_quick(const std::optional<T>& quick) {
  return quick ? fmt::format("; {} with --quick", *quick) : "";
}

void add_int_option(CommandLine& cli, const std::string& name, long& value, long lo,
                    long hi, const std::string& description, std::optional<long> quick) {
  if (value < lo || value > hi || (quick && (*quick < lo || *quick > hi)))
    throw std::logic_error(name + ": the default lies outside the option's range");
  if (quick)
    cli.quick_defaults.push_back([&cli, &value, name, q = *quick] {
      if (!option_given(cli, name)) value = q;
    });
  add_parameter(cli, name, value);
  // A check instead of CLI::Range so that the error names the option, its range and the
  // input.
  cli.app
      ->add_option_function<std::string>(
          name, [&value](const std::string& text) { parse_integer(text, value); },
          fmt::format("{} (an integer in [{}, {}]{})", description, lo, hi,
                      with_quick(quick)))
      ->type_name("INT")
      ->default_str(std::to_string(value))
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
                     double hi, const std::string& description, std::optional<double> quick) {
  if (!(value >= lo && value <= hi) || (quick && !(*quick >= lo && *quick <= hi)))
    throw std::logic_error(name + ": the default lies outside the option's range");
  if (quick)
    cli.quick_defaults.push_back([&cli, &value, name, q = *quick] {
      if (!option_given(cli, name)) value = q;
    });
  add_parameter(cli, name, value);
  const std::string range = fmt::format("[{:g}, {:g}]", lo, hi);
  cli.app
      ->add_option_function<std::string>(
          name, [&value](const std::string& text) { parse_number(text, value); },
          fmt::format("{} (a number in {}{})", description, range, with_quick(quick)))
      ->type_name("FLOAT")
      ->default_str(fmt::format("{:g}", value))
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
  add_parameter(cli, name, value);
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

void record_options(const CommandLine& cli, Results& results,
                    const std::vector<std::string>& except) {
  for (const auto& [name, record] : cli.parameters) {
    if (std::find(except.begin(), except.end(), name) != except.end()) continue;
    std::string key = name.substr(2);  // without "--"
    std::replace(key.begin(), key.end(), '-', '_');
    record(results, key);
  }
}

bool option_given(const CommandLine& cli, const std::string& name) {
  return cli.app->count(name) > 0;
}

// "1.2 GiB", "640 MiB", with enough digits that two different sizes read differently.
std::string bytes_text(double bytes) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  if (bytes >= gib) return fmt::format("{:.3g} GiB", bytes / gib);
  return fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024.0));
}

void require_memory(const std::string& option, double bytes) {
  const double available = 0.5 * static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                           static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (bytes > available)
    throw usage_error(option, fmt::format("this run would need {} of memory, more than the {} "
                                          "it may use here (half of this machine's memory)",
                                          bytes_text(bytes), bytes_text(available)));
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
  if (option_given(cli, "--quick"))
    for (const auto& apply : cli.quick_defaults) apply();
  fix_eigen_blocking();  // the same numbers on every machine with this instruction set
  // A test moves every result by rounding (another CPU, compiler or summation order would move
  // the last bits): what a committed figure shows must not change (tests/program_contract.py).
  if (std::getenv("BOOK_TEST_ROUND_UPWARD")) std::fesetround(FE_UPWARD);
  try {
    body();
  } catch (const usage_error& e) {
    fmt::print(stderr, "{}: {} (see --help)\n", program, e.what());
    return 2;
  } catch (const sections_waiting& e) {
    // The student copy: the sections that do not need the unfinished exercises ran and their
    // output set is written; the summary and this line say which sections wait.
    fmt::print(stderr, "{}: {}\n", program, e.what());
    return 3;
  } catch (const attn::exercise_not_done& e) {
    // The student copy of the book: one line that says which exercise to do, exit code 3.
    fmt::print(stderr, "{} needs exercise {} ({} in {}): not done yet\n", program, e.id(),
               e.function(), e.file());
    return 3;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", program, e.what());
    return 1;
  }
  return 0;
}

}  // namespace harness
