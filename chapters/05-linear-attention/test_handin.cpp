// Chapter 05 — your hand-in code: what a hand-graded exercise of this chapter asks you to
// write (a function, a test of your own) goes here, functions and their doctest TEST_CASEs.
// `./book grade` builds this file as a binary of its own (test-05-handin) and reports whether
// each of your tests passes; your instructor grades it by hand, with the exercise's rubric (it
// earns no autograded points, and code here that does not compile costs none). Run it with
//   cmake --build --preset release --target test-05-handin && ctest --test-dir build/release -L handin
// The library (attn/*.hpp) and this chapter's ch05.hpp are on the include path.

#include <doctest/doctest.h>
