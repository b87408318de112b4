#pragma once
// Eigen splits a matrix product into blocks whose sizes it derives from the cache sizes it
// detects (cpuid), and the block sizes set the order in which each sum is added up: the same
// program, seed and instruction set round differently on a machine with other caches (seen
// on two AMD EPYC machines: singular values below the rank, error rates near eps). Every
// chapter program (harness::run_program) and every test binary (tests/doctest_main.cpp)
// fixes them before any product, so that a seed gives the same numbers, bit for bit, on every
// machine with the same instruction set. The sizes are those Eigen detects on the machine
// that made the committed figures (48 KiB, 1 MiB, 384 MiB); blocks a little off a machine's
// own caches cost some speed, not accuracy. The benchmarks keep the detected sizes.
#include <Eigen/Core>
#include <cstdio>
#include <cstdlib>

namespace harness {

inline void fix_eigen_blocking() {
  // A test pretends to be another machine by setting the sizes Eigen would have detected
  // (BOOK_TEST_DETECTED_CACHE_SIZES=l1,l2,l3, bytes); the fixed sizes below still win.
  if (const char* detected = std::getenv("BOOK_TEST_DETECTED_CACHE_SIZES")) {
    long l1 = 0, l2 = 0, l3 = 0;
    if (std::sscanf(detected, "%ld,%ld,%ld", &l1, &l2, &l3) == 3)
      Eigen::setCpuCacheSizes(l1, l2, l3);
  }
  Eigen::setCpuCacheSizes(48L << 10, 1L << 20, 384L << 20);
}

}  // namespace harness
