#!/usr/bin/env python3
"""Tests of the homework product, book.homework (run by ctest in the instructor's copy; a few
seconds).

- the release: every solution region is a stub that throws attn::exercise_not_done with its
  id, hidden tests are gone (one placeholder line each), every other file is byte-identical,
  the marker file lists the exercises, and two releases are identical;
- bad input: a release into a non-empty directory, grading outside a student copy, an
  unknown exercise, a bad fence: one line on stderr, exit 2, nothing written;
- the grader's formats (Gradescope, PrairieLearn, GitHub Classroom, CSV) from known results,
  points per test case, hidden tests reduced to their claim, a failed test's feedback;
- hidden tests are restored from the instructor's copy exactly;
- the grading path runs on Ubuntu 22.04's Python 3.10 (Gradescope's default image): its
  modules parse as 3.10 and chapters/exercises.toml is read with tomli when tomllib is missing;
- chapters/exercises.toml: an exercise's points split over its tests by weight; each error in
  the file one line from ./book grade.
"""
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import time

from book import pages
from book.build import ROOT, chapter_numbers
from book.homework import UsageError, formats
from book.homework.course import (EXERCISES_FILE, claim_of, load_exercises, test_points,
                                  weight_errors)
from book.homework.grade import exercise_of, failure_feedback, hidden_restored, is_graded
from book.homework.run_tests import run_limited
from book.homework.markers import (INSTRUCTOR_ONLY, MARKER_FILE, book_files, hidden_copy,
                                   hidden_test_names, parse_regions, read_text, release_text,
                                   scan)
from checks import book, check, verdict


def one_line_exit_2(r, what):
    lines = [line for line in r.stderr.split("\n") if line.strip()]
    check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("book: "),
          f"{what}: exit 2 and one line (got {r.returncode}: {r.stderr.strip()!r})")


def run_leaving_a_process(tmp, script_text, time_limit):
    """(returncode, why stopped, pid the script printed, whether that process still runs,
    seconds): the script run as a graded test is, under run_limited."""
    script = os.path.join(tmp, "test_script.py")
    with open(script, "w") as f:
        f.write(script_text)
    t0 = time.monotonic()
    rc, output, stopped = run_limited([sys.executable, script], tmp, time_limit=time_limit)
    took = time.monotonic() - t0
    pid = int(output.split()[0]) if output.split() else 0
    time.sleep(0.5)
    alive = bool(pid) and os.path.exists(f"/proc/{pid}") and \
        open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    return rc, stopped, pid, alive, took


def main():
    files, exercises = scan(ROOT)
    check(len(exercises) >= 6, f"at least six exercises ({', '.join(exercises)})")
    chapters = {i[:2] for i in exercises}
    check(chapters >= set(chapter_numbers(ROOT)), "a code exercise in every chapter")

    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        r = book(ROOT, "release", "--out", a)
        check(r.returncode == 0, f"release into a new directory ({r.stderr.strip()})")
        book(ROOT, "release", "--out", b)
        cmp = filecmp.dircmp(a, b)
        same = not cmp.left_only and not cmp.right_only
        for rel in book_files(a):
            same = same and filecmp.cmp(os.path.join(a, rel), os.path.join(b, rel), False)
        check(same, "two releases are identical")

        marker = json.load(open(os.path.join(a, MARKER_FILE)))
        check([e["id"] for e in marker["exercises"]] == list(exercises),
              "the marker file lists the exercises")
        for rel in book_files(ROOT):
            if INSTRUCTOR_ONLY.fullmatch(rel):
                check(not os.path.exists(os.path.join(a, rel)),
                      f"{rel} (a worked solution) is not in the student copy")
            elif rel in files:
                text = open(os.path.join(a, rel)).read()
                for reg in files[rel][1]:
                    if reg.kind == "solution":
                        flat = " ".join(text.split())
                        check(f'throw attn::exercise_not_done( "{reg.id}", __func__, "{rel}"'
                              in flat.replace("exercise_not_done(\"",
                                              "exercise_not_done( \""),
                              f"{rel}: the stub of {reg.id} throws with its id")
                    else:
                        check(f"// Hidden tests of exercise {reg.id}:" in text,
                              f"{rel}: hidden tests of {reg.id} replaced by one line")
                check(not parse_regions(rel, text), f"{rel}: no markers left")
            elif rel == EXERCISES_FILE:
                text = read_text(os.path.join(a, rel))
                named = [n for n in hidden_test_names(files) if n in text]
                check(not named, f"{rel}: the student's copy names no hidden test {named}")
            elif rel.endswith(".md") and not filecmp.cmp(os.path.join(ROOT, rel),
                                                          os.path.join(a, rel), False):
                # a page's code blocks quote the release's sources: the stubs
                want = pages.expected(a, None, os.path.join(a, rel),
                                      read_text(os.path.join(ROOT, rel)),
                                      code_only=True)
                check(read_text(os.path.join(a, rel)) == want,
                      f"{rel}: copied with its code blocks quoting the release's stubs")
            elif not filecmp.cmp(os.path.join(ROOT, rel), os.path.join(a, rel), False):
                check(False, f"{rel} is copied unchanged")
        check(os.access(os.path.join(a, "book"), os.X_OK), "./book stays executable")

        # Hidden tests come back exactly as in the instructor's copy; only the exercises'
        # files are the student's: an edit to a test, to doctest_main.cpp or to a CMake file
        # does not count.
        harness = [os.path.join("chapters", "03-least-squares", "test_exercises.cpp"),
                   os.path.join("tests", "doctest_main.cpp"), "CMakeLists.txt"]
        for rel in harness:
            with open(os.path.join(a, rel), "a") as f:
                f.write("\n// a student's edit\n")
        answer = exercises["03.1"]["functions"][0]["file"]
        with open(os.path.join(a, answer), "a") as f:
            f.write("\n// the student's answer\n")
        handin = os.path.join("chapters", "01-self-attention", "test_handin.cpp")
        with open(os.path.join(a, handin), "a") as f:
            f.write("\n// the student's hand-in\n")
        restored = hidden_restored(a, ROOT)
        for rel, (text, regions) in files.items():
            if any(r.kind == "hidden" for r in regions):
                want = release_text(text, regions, keep_hidden=True).encode()
                check(restored[hidden_copy(rel)] == want and
                      restored[rel] == release_text(text, regions).encode(),
                      f"{rel}: hidden tests restored for grading, in a file of their own")
        check(not any(b"a student's edit" in restored[rel] for rel in harness),
              f"grading ignores the student's edits to {', '.join(harness)}")
        check(restored[answer].endswith(b"// the student's answer\n"),
              f"grading takes the student's {answer}")
        check(restored[handin].endswith(b"// the student's hand-in\n"),
              f"grading --instructor takes the student's hand-in code ({handin})")

        # Bad input: exit 2, one line, nothing written.
        stamp = os.path.join(a, "README.md")
        before = os.stat(stamp).st_mtime_ns
        one_line_exit_2(book(ROOT, "release", "--out", a), "release into a non-empty dir")
        check(os.stat(stamp).st_mtime_ns == before, "... and nothing is overwritten")
        other = os.path.join(tmp, "other")
        os.makedirs(other)
        open(os.path.join(other, "notes.txt"), "w").write("mine\n")
        one_line_exit_2(book(ROOT, "release", "--out", other, "--force"),
                        "release --force into a directory that is not a student copy")
        check(os.listdir(other) == ["notes.txt"], "... and nothing is written there")
        one_line_exit_2(book(ROOT, "grade"), "grade in the instructor's copy")
        one_line_exit_2(book(a, "grade", "--exercise", "99.9"), "grade --exercise 99.9")
        one_line_exit_2(book(a, "release", "--out", os.path.join(tmp, "c")),
                        "release from a student copy")
        one_line_exit_2(book(a, "validate"), "validate in a student copy")
        one_line_exit_2(book(a, "grade", "--instructor", tmp), "grade --instructor not-a-book")
        check(not os.path.exists(os.path.join(a, "build")), "... and nothing was built")

    for bad in ["// BEGIN SOLUTION 01.1\nint x;\n", "// END SOLUTION\n",
                "// BEGIN SOLUTION 01.1\n// BEGIN HIDDEN TESTS 01.1\n"]:
        try:
            parse_regions("x.cpp", bad)
            check(False, f"a bad fence is refused: {bad!r}")
        except ValueError:
            check(True, f"a bad fence is refused: {bad!r}")

    # The grader's numbers: points per test case, each format's fields.
    run = {"book": "B", "student": "ada", "elapsed": 2.4, "build_ok": True, "build_message": "",
           "broken_exercises": [], "notes": [],
           "exercises": [{"id": "01.1", "functions": [], "tests": 2, "passed": 1, "points": 2.0,
                          "max_points": 3.0, "status": "partly done"}],
           "tests": [{"exercise": "01.1", "name": "01:a public claim", "claim": "a public claim",
                      "passed": True, "hidden": False, "points": 2.0, "max_points": 2.0,
                      "feedback": ""},
                     {"exercise": "01.1", "name": "01:a hidden claim", "claim": "a hidden claim",
                      "passed": False, "hidden": True, "points": 0.0, "max_points": 1.0,
                      "feedback": ""}]}
    gs = formats.gradescope(run)
    check(gs["score"] == 2.0 and gs["execution_time"] == 2 and
          [(t["score"], t["max_score"], t["visibility"]) for t in gs["tests"]]
          == [(2.0, 2.0, "visible"), (0.0, 1.0, "after_published")],
          "gradescope: score, per-test points and visibility")
    check(gs["tests"][1]["name"] == "01.1 a hidden claim" and
          gs["tests"][1]["output"].startswith("failed ("),
          "gradescope: a hidden test shows its claim and pass/fail only")
    pl = formats.prairielearn(run)
    check(pl["gradable"] and abs(pl["score"] - 2 / 3) < 1e-4 and
          [(t["points"], t["max_points"]) for t in pl["tests"]] == [(2.0, 2.0), (0.0, 1.0)],
          "prairielearn: score in [0, 1] and points per test")
    gc = formats.github_classroom(run)
    check(gc["status"] == "fail" and gc["max_score"] == 3.0 and
          [(t["status"], t["score"]) for t in gc["tests"]] == [("pass", 2.0), ("fail", 0.0)],
          "github-classroom: status, max_score and tests")
    broken = dict(run, build_ok=False, broken_exercises=["01.1"], build_message="x.cpp:1:1: error")
    check(formats.prairielearn(broken)["gradable"] is False,
          "prairielearn: gradable false when the submission does not compile")
    old = formats.merged_csv("", dict(run, student="bob"))
    both = formats.merged_csv(old, run)
    again = formats.merged_csv(both, run)
    check(both.splitlines()[0] == ",".join(formats.CSV_HEADER) and
          both.splitlines()[1:] == ["ada,01.1,2,3,1,2,partly done",
                                    "bob,01.1,2,3,1,2,partly done"] and again == both,
          "csv: one row per student and exercise; a regrade replaces the student's rows")
    zero = dict(run, exercises=[dict(run["exercises"][0], points=0, max_points=2.5)])
    check(formats.merged_csv("", zero).splitlines()[1] == "ada,01.1,0,2.5,1,2,partly done",
          "csv: points written one way (0 as 0, whole points without .0, 2.5 as 2.5)")
    with tempfile.TemporaryDirectory() as tmp:
        # A test stopped at its time limit takes with it what it started, also a program
        # started in a session of its own (as the contract test starts each run): such a
        # program once looped on for an hour after its test was graded.
        rc, stopped, started, alive, took = run_leaving_a_process(
            tmp, "import subprocess, sys, time\n"
                 "p = subprocess.Popen([sys.executable, '-c', 'while True: pass'],\n"
                 "                     start_new_session=True, stdout=subprocess.DEVNULL)\n"
                 "print(p.pid, flush=True)\n"
                 "time.sleep(600)\n", time_limit=2)
        check(rc is None and "time limit" in stopped and started and not alive and took < 10,
              "a test stopped at its time limit leaves no process behind (also one in its own "
              f"session): {stopped!r}, pid {started} {'still runs' if alive else 'gone'}")
        # A test that passes but leaves a daemon behind (a double fork: out of its process
        # tree) holding its output open: the test ends when it ends, and the daemon goes too.
        rc, stopped, daemon, alive, took = run_leaving_a_process(
            tmp, "import os, sys, time\n"
                 "if os.fork() == 0:\n"
                 "    os.setsid()\n"
                 "    if os.fork() == 0:\n"
                 "        print(os.getpid(), flush=True)\n"
                 "        while True: time.sleep(0.1)\n"
                 "    os._exit(0)\n"
                 "time.sleep(0.5)\n", time_limit=30)
        check(rc == 0 and not stopped and daemon and not alive and took < 10,
              f"a test that leaves a daemon holding its output ends in {took:.1f} s, not at "
              f"its time limit, and the daemon (pid {daemon}) is "
              f"{'still running' if alive else 'gone'}")
    exercise_points()
    check(claim_of("03:the hat matrix is symmetric") == "the hat matrix is symmetric" and
          claim_of("lib: softmax rows sum to 1") == "softmax rows sum to 1",
          "a test's claim is its name without the binary's prefix")
    check(exercise_of(["ch03", "ex03.1"]) == "03.1" and exercise_of(["ch06"]) is None and
          exercise_of(["ch06", "contract", "ex06.6", "ex01.6"]) is None,
          "a test is graded for its one exercise; one that runs two exercises' code for none")
    # (a hidden test's name from the sources: written here, it would be in every bundle)
    hidden = hidden_test_names(files)[:1]
    check(is_graded("03-hidden:" + hidden[0], hidden) and
          not is_graded("03-hidden:the hat matrix is symmetric", hidden) and
          is_graded("03:the hat matrix is symmetric", hidden),
          "from a hidden tests' binary only its hidden tests are graded, not its copies of "
          "the public ones")
    fb = failure_feedback(
        "[doctest] doctest version\n=====\n/r/chapters/t.cpp:20:\nTEST SUITE: ex03.1\n"
        "TEST CASE:  c\n\n/r/chapters/t.cpp:25: ERROR: CHECK( a == b ) is NOT correct!\n"
        "  values: CHECK( 1 == 2 )\n\n=====\n[doctest] test cases: 1 | 0 passed\n", "/r")
    check(fb == "chapters/t.cpp:25: ERROR: CHECK( a == b ) is NOT correct!\n"
               "  values: CHECK( 1 == 2 )", f"a failed test's feedback is its assertion and values ({fb!r})")
    hidden = hidden_test_names(files)
    check(hidden and all(n for n in hidden), f"hidden test names are found ({len(hidden)})")

    grading_on_python_310()
    interrupt_as_a_file_is_made()
    return verdict()


def interrupt_as_a_file_is_made():
    """A signal that comes just after a release's staging directory (or a directory above
    --out, or a grade's temporary file, or the writability probe) is made, before the code
    has recorded it, leaves nothing behind: each os.mkdir or os.open in turn sends SIGINT to
    this process right after it made its file (as `kill -INT` from outside can)."""
    import signal
    from book.homework.staging import replace_tree, write_atomically, check_out_path
    real = {"mkdir": os.mkdir, "open": os.open}

    def interrupted_after(name, k):
        calls = [0]

        def call(*args, **kw):
            result = real[name](*args, **kw)
            calls[0] += 1
            if calls[0] == k + 1:
                os.kill(os.getpid(), signal.SIGINT)
            return result
        return call

    steps = {  # what runs, and how many calls of os.mkdir or os.open it makes at most
        "mkdir": lambda out: replace_tree(ROOT, {"a/b.txt": b"x\n"}, os.path.join(out, "new",
                                                                              "copy"), False),
        "open": lambda out: (check_out_path("--out", os.path.join(out, "g.json")),
                             write_atomically(os.path.join(out, "g.json"), "{}\n", "--out")),
    }
    left = []
    for name, step in steps.items():
        for k in range(12):
            with tempfile.TemporaryDirectory() as out:
                setattr(os, name, interrupted_after(name, k))
                try:
                    step(out)
                    done = True
                except KeyboardInterrupt:
                    done = False
                finally:
                    setattr(os, name, real[name])
                names = sorted(os.listdir(out))
                if not done and names:
                    left.append(f"os.{name} call {k + 1}: {names}")
                if done:
                    break
    check(not left, "a SIGINT just after a file or directory of a release or a grade is "
          f"made leaves nothing behind ({left[:3]})")


def exercise_points():
    """An exercise's points split over its tests by weight (hidden ones too), whatever their
    number; each error in chapters/exercises.toml is one line from ./book grade."""
    names = ["01:a claim", "01:another claim", "01-hidden:a hidden claim"]
    exercise = {"id": "01.6", "points": 10, "weights": {"01: a claim": 2}}
    split = test_points(exercise, names)
    check(split == {"01:a claim": 5.0, "01:another claim": 2.5, "01-hidden:a hidden claim": 2.5},
          f"an exercise's 10 points split 2:1:1 over its tests by weight ({split})")
    check(sum(test_points(exercise, names[:2]).values()) == 10,
          "without the hidden tests the exercise is still worth its points")
    thirds = test_points(dict(exercise, weights={}), names)
    check(sorted(thirds.values()) == [3.33, 3.33, 3.34] and round(sum(thirds.values()), 9) == 10,
          f"points split in hundredths that add up to the exercise's ({thirds})")
    check(weight_errors({"01.6": dict(exercise, weights={"01: no such test": 1})},
                        lambda i: names) == [f'{EXERCISES_FILE}: ["01.6"].weights: '
                                             "'01: no such test' is not a test of exercise 01.6"],
          "a weight naming no test of its exercise is one line")
    table = load_exercises(ROOT)
    check(all(i in table for i in scan(ROOT)[1]), f"every autograded exercise is in "
          f"{EXERCISES_FILE} ({len(table)} exercises there)")
    with tempfile.TemporaryDirectory() as tmp:
        a = os.path.join(tmp, "a")
        book(ROOT, "release", "--out", a)
        path = os.path.join(a, EXERCISES_FILE)
        good = read_text(path)
        r = book(a, "grade", "--check-only")
        check(r.returncode == 0, f"grade --check-only reads the released file ({r.stderr})")
        for bad, says in [('["07.1"]\ntitle = "x"\nkind = "derive"\npoints = 1\nminutes = 5\n',
                           '["07.1"]: unknown exercise'),
                          ('["01.9"]\ntitle = "x"\nkind = "proof"\npoints = 1\nminutes = 5\n',
                           "kind = 'proof'"),
                          ('["01.9"]\ntitle = "x"\nkind = "derive"\npoints = 0\nminutes = 5\n',
                           "points = 0; it takes points > 0")]:
            with open(path, "w") as f:
                f.write(good + "\n" + bad)
            r = book(a, "grade", "--check-only")
            one_line_exit_2(r, f"{EXERCISES_FILE} with {bad.splitlines()[0]} ...")
            check(says in r.stderr, f"... says {says!r}")
        with open(path, "w") as f:
            f.write(good.replace('"01.6"', '"01.7"'))
        r = book(a, "grade", "--check-only")
        one_line_exit_2(r, f"{EXERCISES_FILE} without 01.6 (autograded)")


def grading_on_python_310():
    """The modules `autograde` and `grade` import parse as Python 3.10, and load_exercises works
    without tomllib (3.11+), through python3-tomli."""
    import ast
    r = subprocess.run([sys.executable, "-B", "-c", "import sys, book.homework.__main__, "
                        "book.homework.autograder, book.homework.grade; print('\\n'.join("
                        "m.__file__ for m in list(sys.modules.values()) if "
                        "getattr(m, '__file__', None) and m.__name__.startswith('book')))"],
                       capture_output=True, text=True)
    modules = r.stdout.split()
    too_new = []
    for path in modules:
        try:
            ast.parse(read_text(path), path, feature_version=(3, 10))
        except SyntaxError as e:
            too_new.append(f"{os.path.relpath(path, ROOT)}:{e.lineno}: {e.msg}")
    check(len(modules) > 5 and not too_new, f"the {len(modules)} modules grading imports parse "
          f"as Python 3.10 {too_new or ''}")
    r = subprocess.run([sys.executable, "-B", "-c", "import sys; sys.modules['tomllib'] = None; "
                        "from book.homework.course import load_exercises; "
                        f"print(len(load_exercises({ROOT!r})))"], capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.strip() == str(len(load_exercises(ROOT))),
          f"exercises.toml is read without tomllib (python3-tomli) {r.stderr.strip()[-200:]}")


if __name__ == "__main__":
    sys.exit(main())
