// live-reference: the live figures' compute functions, run natively.
//
//   live-reference NAME QUERY [NAME QUERY]...   one JSON line per pair
//   live-reference --list                       the registered names
//
// The page test (tests/site/check_live.py) runs the widgets in Chromium, then this with the
// same names and queries, and compares the numbers.
#include <cstdio>
#include <string>

#include "live.hpp"

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto& name : live::names()) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc < 3 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: live-reference NAME QUERY [NAME QUERY]... | --list\n");
    return 2;
  }
  for (int k = 1; k + 1 < argc; k += 2)
    std::printf("%s\n", live::compute(argv[k], argv[k + 1]).c_str());
  return 0;
}
