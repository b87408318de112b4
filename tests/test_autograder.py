#!/usr/bin/env python3
"""End to end: the autograder bundle grades submissions as Gradescope would run it.

./book release --autograder T/ag writes the bundle; T/ag/setup.sh installs nothing here (the
packages are present) and builds the book's tests with the stubs; then T/ag/run_autograder
--submission S --results R grades, for S:

1. the instructor's files (the solutions): full marks, every test passed;
2. nothing submitted: 0 points, each public test says which stub to write, each hidden test
   shows pass/fail and its claim only, after the grades are published;
3. the solutions with one file that does not compile: that exercise scores 0 with the
   compiler's message, the others full marks, and no crash;
4. the same in PrairieLearn's format: `gradable: false`, so the attempt is not counted;
5. hostile code, each in one exercise's file, the others the solutions: std::_Exit(0) (04.6),
   an endless loop (03.1), an output flood (02.6), a 3 MB failure message (05.6), a call of
   a function defined nowhere (06.6: it compiles but does not link). Each costs
   its own exercise every point, each of its doctest tests saying why, and nothing else; the results
   file stays under PrairieLearn's 1 MiB.

Bad input (a bundle inside the book) is refused before anything is written. The builds reuse
the full book's objects through ccache: only the files that differ are compiled.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from book.build import ROOT
from book.homework.leak_test import distinctive_lines, leaks
from book.homework.markers import scan

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def grade(bundle, submission, results, *extra):
    r = subprocess.run([os.path.join(bundle, "run_autograder"), "--submission", submission,
                        "--results", results, *extra], capture_output=True, text=True)
    path = os.path.join(results, "results.json")
    doc = json.load(open(path)) if os.path.isfile(path) else None
    if r.returncode != 0 or doc is None:
        print(r.stdout[-3000:], r.stderr[-3000:])
    return r, doc


def main():
    _, exercises = scan(ROOT)
    files = sorted({f["file"] for e in exercises.values() for f in e["functions"]})
    with tempfile.TemporaryDirectory() as tmp:
        inside = os.path.join(ROOT, "build", "autograder-inside")
        r = subprocess.run([sys.executable, "-B", "-m", "book.homework", "release",
                            "--autograder", inside], capture_output=True, text=True)
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        check(r.returncode == 2 and len(lines) == 1 and not os.path.exists(inside),
              f"a bundle inside the book is refused in one line, exit 2 ({r.stderr.strip()})")

        bundle = os.path.join(tmp, "ag")
        r = subprocess.run([sys.executable, "-B", "-m", "book.homework", "release",
                            "--autograder", bundle], capture_output=True, text=True)
        check(r.returncode == 0, f"release --autograder writes the bundle ({r.stderr.strip()})")
        for name in ("setup.sh", "run_autograder"):
            check(os.access(os.path.join(bundle, name), os.X_OK), f"{name} is executable")
        check(not any("BEGIN SOLUTION" in open(os.path.join(bundle, "book", f)).read()
                      for f in files), "the bundle's book holds stubs, not solutions")
        # (The bundle keeps the hidden tests: a worked solution's line that is also a hidden
        # test's is not a leak there.)
        files_marked = scan(ROOT)[0]
        hidden_text = "\n".join(line for _, regions in files_marked.values() for r in regions
                                if r.kind == "hidden" for line in r.lines)
        leaked = leaks(os.path.join(bundle, "book"),
                       [x for x in distinctive_lines(files_marked)
                        if x[1] == "solution" or (x[1].startswith("worked")
                                                  and x[2] not in hidden_text)])
        check(not leaked, f"no solution text in the bundle ({leaked[:2]})")

        r = subprocess.run([os.path.join(bundle, "setup.sh")], capture_output=True, text=True)
        check(r.returncode == 0, "setup.sh builds the tests with the stubs"
              + ("" if r.returncode == 0 else f" ({r.stderr[-2000:]})"))
        if r.returncode != 0:
            return 1

        # 1. The solutions: full marks.
        correct = os.path.join(tmp, "correct")
        for rel in files:  # as a student's repository, one folder down
            dst = os.path.join(correct, "my-book", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, rel), dst)
        r, doc = grade(bundle, correct, os.path.join(tmp, "r1"))
        check(r.returncode == 0 and doc is not None, "a correct submission is graded")
        if doc is None:
            return 1
        top = sum(t["max_score"] for t in doc["tests"])
        check(doc["score"] == top and top > 0 and
              all(t["score"] == t["max_score"] for t in doc["tests"]),
              f"the solutions score full marks ({doc['score']} of {top})")
        check(all(k in doc for k in ("score", "execution_time", "output", "tests")) and
              all(set(t) >= {"name", "score", "max_score", "output", "visibility"}
                  for t in doc["tests"]), "Gradescope's fields are all there")
        ids = {t["name"].split()[0] for t in doc["tests"]}
        check(ids == set(exercises), f"every exercise is graded ({sorted(ids)})")

        # 2. Nothing submitted: the stubs, 0 points, clear messages, hidden tests quiet.
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        r, doc = grade(bundle, empty, os.path.join(tmp, "r2"))
        check(doc is not None and doc["score"] == 0, "the stubs score 0")
        public = [t for t in doc["tests"] if t["visibility"] == "visible"]
        hidden = [t for t in doc["tests"] if t["visibility"] == "after_published"]
        unclear = [t["name"] for t in public if "not done yet" not in t["output"]]
        check(public and not unclear, "every public test says which exercise is not done and "
              f"what to write ({unclear[:3]})")
        check(hidden and all(t["output"].startswith("failed") and "CHECK" not in t["output"]
                             and "values" not in t["output"] and len(t["output"]) < 80
                             for t in hidden),
              f"{len(hidden)} hidden tests show pass/fail and their claim only")
        check("not submitted: code/src/unit_factor.cpp" in doc["output"],
              "the output says which files were not submitted")

        # 3. One file does not compile: its exercise 0 with the compiler's message.
        broken = os.path.join(tmp, "broken")
        shutil.copytree(os.path.join(correct, "my-book"), broken)
        with open(os.path.join(broken, "code", "src", "unit_factor.cpp"), "a") as f:
            f.write("\nint this_does_not_compile( {\n")
        r, doc = grade(bundle, broken, os.path.join(tmp, "r3"))
        check(r.returncode == 0 and doc is not None, "a submission that does not compile is "
              "graded without a crash")
        units = [t for t in doc["tests"] if t["name"].startswith("04.6")]
        others = [t for t in doc["tests"] if not t["name"].startswith("04.6")]
        check(units and all(t["score"] == 0 for t in units) and
              any("unit_factor.cpp" in t["output"] and "error" in t["output"] for t in units),
              "the exercise whose file does not compile scores 0 with the compiler's message")
        check(others and all(t["score"] == t["max_score"] for t in others),
              "the other exercises keep their full marks")
        check("error" in doc["output"], "the overall output shows the compiler's message")

        # 4. PrairieLearn: a submission that does not compile costs no attempt.
        r, doc = grade(bundle, broken, os.path.join(tmp, "r4"), "--format", "prairielearn")
        check(doc is not None and doc.get("gradable") is False and "error" in doc["output"],
              "PrairieLearn: gradable false, with the compiler's message")
        r, doc = grade(bundle, correct, os.path.join(tmp, "r5"), "--format", "prairielearn")
        check(doc is not None and doc.get("gradable") is True and doc["score"] == 1.0,
              "PrairieLearn: the solutions score 1")

        # 5. Hostile code: each costs its own exercise only, with a message saying why.
        hostile = os.path.join(tmp, "hostile")
        shutil.copytree(os.path.join(correct, "my-book"), hostile)
        planted = {  # exercise: (file, first statement of its function, what the grade says)
            "04.6": ("unit_factor.cpp", "std::_Exit(0);", "before doctest finished"),
            "03.1": ("hat_matrix.cpp", "for (volatile bool forever = true; forever;) {}",
                     "time limit"),
            "02.6": ("nw_loo_predictions.cpp",
                     'for (;;) std::fputs("flood flood flood flood\\n", stdout);',
                     "output limit"),
            "05.6": ("exp_limit_features.cpp",
                     "throw std::runtime_error(std::string(3000000, 'x'));", "more characters"),
            "06.6": ("equivariance_residual.cpp",
                     "double helper_never_defined(); if (helper_never_defined() > 0) return 0;",
                     "helper_never_defined"),
        }
        for exercise, (name, statement, _) in planted.items():
            path = os.path.join(hostile, "code", "src", name)
            text = open(path).read().replace(f"  // BEGIN SOLUTION {exercise}",
                                             f"  {statement}\n  // BEGIN SOLUTION {exercise}")
            with open(path, "w") as f:
                f.write("#include <cstdio>\n#include <cstdlib>\n#include <stdexcept>\n"
                        "#include <string>\n" + text)
        # (20 s: a chapter program's contract test takes 6 s on a busy machine.)
        r, doc = grade(bundle, hostile, os.path.join(tmp, "r6"), "--time-limit", "20")
        check(r.returncode == 0 and doc is not None, "hostile code is graded without a crash")
        if doc is None:
            return 1
        for exercise, (name, _, says) in planted.items():
            mine = [t for t in doc["tests"] if t["name"].startswith(exercise + " ")]
            # (the program's contract test runs the code in a child: it fails its own way)
            public = [t for t in mine if t["visibility"] == "visible"
                      and "command-line contract" not in t["name"]]
            odd = [t for t in mine if t["score"] != 0 or
                   t in public and says not in t["output"]]
            check(mine and not odd,
                  f"{exercise} ({name}) scores 0 of {sum(t['max_score'] for t in mine)}, "
                  f"each public test saying '{says}'" +
                  "".join(f"\n     {t['name']}: {t['score']}, {t['output'][:300]!r}"
                          for t in odd[:3]))
        others = [t for t in doc["tests"] if t["name"].split()[0] not in planted]
        lost = [t for t in others if t["score"] != t["max_score"]]
        check(others and not lost, "the other exercise keeps full marks "
              f"({sorted({t['name'].split()[0] for t in others})})" +
              "".join(f"\n     {t['name']}: {t['output'][:300]!r}" for t in lost[:3]))
        size = os.path.getsize(os.path.join(tmp, "r6", "results.json"))
        check(size < 1 << 20, f"results.json is {size} bytes, under 1 MiB")
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
