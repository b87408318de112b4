#!/usr/bin/env python3
"""End to end (a student copy graded as a student and as the instructor; a few minutes, most
objects from ccache): the hand-in path for the code hand-graded exercises ask for.

In a fresh student copy with exercise 01.6 done and code in chapters/01-*/test_handin.cpp:

1. `./book grade` builds the hand-in code apart, runs its tests and reports each one's pass or
   fail, with no points: 01.6 is worth its points in chapters/exercises.toml, the hand-in
   adds none;
2. hand-in code that does not compile is reported with the compiler's message, and costs no
   autograded point (01.6 keeps its points, grade exits 0);
3. `./book grade --instructor` keeps the student's hand-in file (it takes the tests from the
   instructor's copy, the hand-in from the submission) and reports it too.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from book.build import ROOT
from book.homework.course import load_exercises
from checks import book, check, verdict


HANDIN = """#include <doctest/doctest.h>

#include "attn/softmax.hpp"

// The student's merge of two online-softmax states (exercise 01.5), and a test of it.
double merged_max(double a, double b) { return a > b ? a : b; }

TEST_CASE("my merge keeps the larger maximum") { CHECK(merged_max(1.0, 2.0) == 2.0); }
TEST_CASE("my merge is wrong on purpose") { CHECK(merged_max(1.0, 2.0) == 1.0); }
"""


def graded(copy, *extra):
    r = book(copy, "grade", "--exercise", "01.6", "--format", "json", *extra)
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        print(r.stderr[-3000:])
        return r, None


def main():
    points = load_exercises(ROOT)["01.6"]["points"]
    with tempfile.TemporaryDirectory() as tmp:
        a = os.path.join(tmp, "a")
        r = book(ROOT, "release", "--out", a)
        check(r.returncode == 0, f"release ({r.stderr.strip()})")
        shutil.copy(os.path.join(ROOT, "code", "src", "causal_mask.cpp"),
                    os.path.join(a, "code", "src", "causal_mask.cpp"))
        handin = os.path.join(a, "chapters", "01-self-attention", "test_handin.cpp")
        check(os.path.isfile(handin), "the student copy has chapter 01's hand-in file")
        with open(handin, "w") as f:
            f.write(HANDIN)

        r, doc = graded(a)
        h = doc and doc["handin"]
        check(r.returncode == 0 and doc and doc["score"] == doc["max_score"] == points,
              f"01.6 done scores its {points:g} points, the hand-in adds none "
              f"({doc and doc['score']} of {doc and doc['max_score']})")
        check(bool(h) and [x["chapter"] for x in h] == ["01"] and h[0]["compiled"] and
              [(t["claim"], t["passed"]) for t in h[0]["tests"]] ==
              [("my merge is wrong on purpose", False), ("my merge keeps the larger maximum",
                                                         True)]
              and "merged_max(1.0, 2.0) == 1.0" in h[0]["tests"][0]["feedback"],
              f"the hand-in's tests are reported pass/fail, a failure with its values ({h})")
        check("Hand-in code of chapter 01" in r.stderr and "FAIL  my merge is wrong" in r.stderr,
              "the table shows the hand-in's tests")

        with open(handin, "a") as f:
            f.write("double broken( { return 1; }\n")
        r, doc = graded(a)
        h = doc and doc["handin"]
        check(r.returncode == 0 and doc and doc["score"] == points,
              f"a hand-in that does not compile costs no autograded point "
              f"({doc and doc['score']} of {points:g}, exit {r.returncode})")
        check(bool(h) and not h[0]["compiled"] and "test_handin.cpp" in h[0]["message"]
              and "error" in h[0]["message"],
              f"... and is reported with the compiler's message ({h and h[0]['message'][:80]!r})")

        with open(handin, "w") as f:
            f.write(HANDIN)
        r, doc = graded(a, "--instructor", ROOT)
        h = doc and doc["handin"]
        hidden = doc and [t for t in doc["tests"] if t["hidden"]]
        check(r.returncode == 0 and doc and doc["score"] == points and hidden and
              bool(h) and len(h[0]["tests"]) == 2,
              f"grade --instructor runs the hidden tests ({len(hidden or [])}) and keeps the "
              f"student's hand-in ({h})")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
