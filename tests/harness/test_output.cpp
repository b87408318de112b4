// Harness tests: output files are exact, atomic, and never hold NaN.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "harness/cli.hpp"
#include "harness/output.hpp"

namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("attn-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}
std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("CSV numbers read back exactly") {
    const fs::path dir = fresh_dir("csv");
    Eigen::MatrixXd M{{0.1, 1.0 / 3.0}, {-2.5e-300, 6.02214076e23}};
    harness::write_csv(dir / "m.csv", {"a", "b"}, M);
    std::istringstream in(read(dir / "m.csv"));
    std::string header, line;
    std::getline(in, header);
    CHECK(header == "a,b");
    for (int i = 0; i < 2; ++i) {
      std::getline(in, line);
      const auto comma = line.find(',');
      CHECK(std::strtod(line.substr(0, comma).c_str(), nullptr) == M(i, 0));
      CHECK(std::strtod(line.substr(comma + 1).c_str(), nullptr) == M(i, 1));
    }
    fs::remove_all(dir);
  }

  TEST_CASE("results are never written with NaN, and a refused write leaves no file") {
    const fs::path dir = fresh_dir("json");
    harness::Results r;
    r["good"] = 1.5;
    r["bad"] = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH_AS(harness::write_json(dir / "results.json", r),
                         doctest::Contains("NaN or infinite number (results.json.bad)"), std::runtime_error);
    CHECK(fs::is_empty(dir));
    harness::Results unset;
    unset["forgotten"];
    CHECK_THROWS_WITH_AS(harness::write_json(dir / "results.json", unset),
                         doctest::Contains("forgotten was never given a value"),
                         std::runtime_error);
    CHECK(fs::is_empty(dir));
    Eigen::MatrixXd M{{std::numeric_limits<double>::infinity()}};
    CHECK_THROWS_WITH_AS(harness::write_csv(dir / "m.csv", {"x"}, M),
                         doctest::Contains("m.csv, column x"), std::runtime_error);
    CHECK(fs::is_empty(dir));
    fs::remove_all(dir);
  }

  TEST_CASE("the printed summary never shows nan or inf") {
    std::string text;
    harness::say(text, "x = {:.3f}, n = {}\n", 0.5, 3);
    CHECK(text == "x = 0.500, n = 3\n");
    CHECK_THROWS_WITH_AS(harness::say(text, "ratio = {:.2e}\n", 1.0 / 0.0),
                         doctest::Contains("ratio = {:.2e}"), std::runtime_error);
    CHECK_THROWS_AS(harness::say(text, "{}", std::numeric_limits<float>::quiet_NaN()),
                    std::runtime_error);
    CHECK(text == "x = 0.500, n = 3\n");  // nothing appended by a refused line
  }

  TEST_CASE("a report prints and records a number in one line") {
    harness::Report r;
    r.say("slope {:.2f}\n", r.put("slope", -0.8012));
    r.say("n = {}\n", r.put("n", 100));
    CHECK(r.text == "slope -0.80\nn = 100\n");
    CHECK(r.results.number("slope") == -0.8012);
    CHECK(r.results.number("n") == 100.0);
    CHECK_THROWS_AS(r.say("{}", r.put("bad", 0.0 / 0.0)), std::runtime_error);
  }

  TEST_CASE("record_options records every option under its name, after parsing") {
    harness::CommandLine cli{"test", "prog"};
    harness::CommonOptions common;
    long n = 5, threads = 1;
    double h = 0.25;
    std::string kernel = "gaussian";
    harness::add_common_options(cli, common, "out");
    harness::add_int_option(cli, "--max-n", n, 1, 100, "sizes");
    harness::add_real_option(cli, "--h", h, 0.0, 1.0, "bandwidth");
    harness::add_choice_option(cli, "--kernel", kernel, {"gaussian", "box"}, "kernel");
    harness::add_int_option(cli, "--threads", threads, 1, 8, "threads");
    const char* argv[] = {"prog", "--max-n", "012", "--kernel", "box", "--seed", "3"};
    CHECK(harness::run_program(cli, 7, const_cast<char**>(argv), [] {}) == 0);
    harness::Results r;
    harness::record_options(cli, r, {"--threads"});
    std::vector<std::string> keys;
    for (const auto& [key, value] : r.entries()) keys.push_back(key);
    CHECK(keys == std::vector<std::string>{"seed", "max_n", "h", "kernel"});
    CHECK(r.number("seed") == 3.0);
    CHECK(r.number("max_n") == 12.0);  // decimal, the parsed value
    CHECK(r.number("h") == 0.25);       // the default
    CHECK(std::get<std::string>(r.entries()[3].second.value) == "box");
  }

  TEST_CASE("results.json keeps the order keys were first set, and writes counts as integers") {
    const fs::path dir = fresh_dir("results");
    harness::Results r;
    r["b"] = 0.5;
    r["seed"] = std::uint64_t{18446744073709551615ULL};
    r["n"] = -3;
    r["flag"] = true;
    r["name"] = "id";
    r["b"] = 2.0;  // replaces the value, keeps the place
    CHECK(r.number("b") == 2.0);
    CHECK(r.number("n") == -3.0);
    CHECK_THROWS_AS(r.number("name"), std::out_of_range);
    CHECK_THROWS_AS(r.number("missing"), std::out_of_range);
    harness::write_json(dir / "r.json", r);
    CHECK(read(dir / "r.json") ==
          "{\n  \"b\": 2.0,\n  \"seed\": 18446744073709551615,\n  \"n\": -3,\n"
          "  \"flag\": true,\n  \"name\": \"id\"\n}\n");
    fs::remove_all(dir);
  }

  TEST_CASE("an atomic write replaces the file whole and leaves no temporary behind") {
    const fs::path dir = fresh_dir("atomic");
    harness::write_file_atomic(dir / "f.txt", "old contents\n");
    harness::write_file_atomic(dir / "f.txt", "new\n");
    CHECK(read(dir / "f.txt") == "new\n");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
    CHECK_THROWS_AS(harness::write_file_atomic(dir / "missing-subdir" / "f.txt", "x"),
                    std::exception);
    fs::remove_all(dir);
  }

}  // TEST_SUITE
