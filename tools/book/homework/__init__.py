"""The homework product of Attention, Verified: the student release, the autograder bundle, the
grader and its formats, the validator. `./book release|grade|check|validate` run it; CMake runs
`python -m book.homework labels|run-chapter|leak-test` (book/homework/__main__.py lists every
subcommand).

    markers.py      the solution and hidden-test regions of the sources, and the marker file
    release.py      the student copy (release --out)
    autograder.py   the autograder bundle (release --autograder) and its grading (autograde)
    course.py       chapters/exercises.toml: each exercise's kind, points, minutes, test weights
    grade.py        grade and check: build, run the exercises' tests, points, feedback; the
                    students' hand-in code (chapters/NN-slug/test_handin.cpp), reported
    formats.py      the grade in the formats course tools read
    validate.py     the instructor's check, both directions
    leak_test.py    no solution and no hidden test in a release
    staging.py      whole-or-nothing writes: staged beside, renamed into place; interrupts
    cmake_steps.py  build steps: ctest labels exNN.M, a chapter program in a student copy

Markers (in .cpp/.hpp files under code/, chapters/, tests/, bench/):
  // BEGIN SOLUTION NN.M [unused(a, b)]  ...  // END SOLUTION
      the body of a function (or its tail, after the argument checks); the release replaces
      it by a stub that throws attn::exercise_not_done. unused(...) names the parameters
      the stub passes along so that it compiles without unused-parameter warnings.
      Lines like `// [tag]` (Doxygen snippet markers) inside are kept.
  // BEGIN HIDDEN TESTS NN.M  ...  // END HIDDEN TESTS
      tests the release removes (one comment line stays in their place); `grade
      --instructor DIR` puts them back.

Exit codes: 0 done; 1 a check or a build failed; 2 bad input (one line on stderr, nothing
written). Only the Python standard library is used, except that a release quotes the
stubs in the pages through book.pages.
"""


class UsageError(Exception):
    """Bad input: one line on stderr, exit code 2."""
