// The one main() every doctest binary links (doctest 2.4.9 ships no doctest_with_main
// target). It fixes Eigen's block sizes first, as the chapter programs do: the numbers the
// worked solutions print come from these binaries (harness/eigen_blocking.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "harness/eigen_blocking.hpp"

int main(int argc, char** argv) {
  harness::fix_eigen_blocking();
  doctest::Context context(argc, argv);
  return context.run();
}
