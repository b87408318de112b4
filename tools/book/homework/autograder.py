"""The autograder bundle (Gradescope; PrairieLearn reads the same results): what
./book release --autograder writes (the book with its hidden tests and no solution, the
stubs, setup.sh, run_autograder), and `autograde`, which those two scripts run."""
import glob
import json
import os
import sys

from book.build import (GRADE_PACKAGES, LEAN_BUILD, build_targets, cmake_build, lean_configure,
                        say)
from book.homework import UsageError, formats
from book.homework.course import EXERCISES_FILE, HIDDEN_EXERCISES_FILE
from book.homework.grade import chosen_exercises, grade_run, print_table
from book.homework.run_tests import PROGRAM_TEST_FACTOR, TIME_LIMIT_S, grading_jobs, test_user
from book.homework.markers import MARKER_FILE, load_marker, read_text
from book.homework.staging import (existing_ancestor, probe_writable, write_atomically,
                                   write_if_changed)
from book.homework.student_copy import release_files

AUTOGRADER_MARKER = ".book-autograder"
EXECUTABLES = ("setup.sh", "run_autograder", "book/book")

SETUP_SH = """#!/usr/bin/env bash
# The autograder's setup (Gradescope runs it once, as root, when it builds the image): installs
# the packages the book's tests need, then builds the tests with the exercises' stubs, so that
# grading a submission compiles only the files it changes. Made by ./book release --autograder.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
packages=(%s)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Python 3.10 (Ubuntu 22.04, Gradescope's default base image) has no tomllib: python3-tomli
if ! python3 -c 'import tomllib' 2>/dev/null && ! python3 -c 'import tomli' 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-tomli
fi
export PYTHONPATH="$here/book/tools"  # the book's tooling, the package book
exec python3 -B -m book.homework autograde --source "$here" --prepare
""" % " ".join(GRADE_PACKAGES)

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Grades one submission (Gradescope copies this file to /autograder/run_autograder and runs it
# for every submission). Made by ./book release --autograder.
#
#   run_autograder [--submission DIR] [--results DIR] [--format gradescope|prairielearn]
#                  [--exercise ID] [--hidden-tests DIR] [--time-limit S] [--jobs N]
#
# DIR defaults: /autograder/submission and /autograder/results (Gradescope's). The submitted
# files (see README.md) are built into the book, the exercises' tests run, hidden ones
# included (from hidden-tests/ beside this file, or --hidden-tests), and DIR/results.json is
# written.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$here
[ -d "$source_dir/book" ] || source_dir=/autograder/source
export PYTHONPATH="$source_dir/book/tools"  # the book's tooling, the package book
exec python3 -B -m book.homework autograde --source "$source_dir" "$@"
"""


def autograder_readme(exercises, files):
    rows = "\n".join(f"| {e['id']} | `{f['function']}` | `{f['file']}` |"
                      for e in exercises.values() for f in e["functions"])
    return f"""# Autograder of Attention, Verified

Made by `./book release --autograder DIR` from the instructor's copy. It holds the student copy
(`book/`, no solution), the hidden tests apart from it (`{HIDDEN_TESTS}/`), the exercises'
stubs (`stubs/`), and:

- `setup.sh`: installs the packages ({" ".join(GRADE_PACKAGES)}) and builds the tests once;
- `run_autograder [--submission DIR] [--results DIR] [--format gradescope|prairielearn]
  [--exercise ID] [--hidden-tests DIR] [--time-limit S] [--jobs N]`: builds the submitted
  files into the book, runs the exercises' tests (hidden ones too: from `{HIDDEN_TESTS}/`, or
  DIR) and writes `DIR/results.json`.

A test passes only when doctest's own report says it passed (a submission that calls
`exit(0)` or `std::_Exit(0)` fails the tests it ends). Each test case runs under a time limit
(`--time-limit`, default {TIME_LIMIT_S} s; a program's contract test {PROGRAM_TEST_FACTOR}
times that) and an output limit (1 MiB); a test that reaches either fails with a message saying
which. Run as root (as the platforms do), the grader runs student code as `nobody`, with the
hidden tests out of its reach until the public tests are done. Jobs default to what the
container's CPU quota and memory allow (one compile per GiB). If the compiler is killed (out of
memory) even with one job, `run_autograder` exits 3 without a grade rather than give 0 for the
machine's failure.

**Gradescope.** Zip the *contents* of this directory (`cd DIR && zip -qr ../autograder.zip .`)
and upload it as a programming assignment's autograder; the default base image (Ubuntu
22.04) or 24.04 will do, with Gradescope's default limits (768 MB, 0.5 CPU). The tests are
compiled for any x86-64 CPU (no `-march=native`): an image built on one machine grades on
another. Students submit the files below, alone or inside their copy of the book (a file is
found by its path, e.g. `code/src/causal_mask.cpp`, or by its name); nothing else is taken
from a submission. A file they do not submit is graded as its stub (0 points for its
exercise); a file that does not compile is replaced by its stub and its exercise scores 0 with
the compiler's message.

**PrairieLearn** pulls public images: move `{HIDDEN_TESTS}/` into the course's
`serverFilesCourse/` before building the image from this directory, and give each question
`--exercise ID --hidden-tests /grade/serverFilesCourse/...` (the book's docs/instructors.md
says how, with the timeout to set).

Each exercise's points, and how an autograded one's are split over its tests, are set in
`{EXERCISES_FILE}` of the instructor's copy (edit it there and make the bundle again; the
bundle's full copy is `{HIDDEN_TESTS}/{HIDDEN_EXERCISES_FILE}`, beside the hidden tests whose
names it may hold). Hidden tests appear as pass/fail with their claim only, after the grades
are published (Gradescope's `after_published`).

| exercise | function | file to submit |
|---|---|---|
{rows}
"""


# The bundle's hidden tests: chapters/NN-slug/hidden/test*.cpp (markers.hidden_copy) and the
# names of their test cases. run_autograder copies them into book/ (from here, or from
# --hidden-tests DIR: PrairieLearn's serverFilesCourse).
HIDDEN_TESTS = "hidden-tests"
HIDDEN_NAMES = "names.json"


def public_marker(data):
    """The student copy's marker without the hidden tests' names (they are in HIDDEN_TESTS)."""
    marker = json.loads(data)
    marker.pop("hidden_test_names", None)
    marker["hidden_tests"] = HIDDEN_TESTS
    return (json.dumps(marker, indent=2) + "\n").encode()


def bring_hidden_tests(source, book):
    """Copies the hidden tests from `source` (a HIDDEN_TESTS directory) into `book` (a file
    unchanged keeps its mtime: nothing to rebuild) and returns their names; [] and nothing
    copied when `source` does not exist."""
    if not os.path.isdir(source):
        return []
    for path in sorted(glob.glob(os.path.join(source, "chapters", "*", "hidden", "test*.cpp"))
                       + glob.glob(os.path.join(source, HIDDEN_EXERCISES_FILE))):
        with open(path, "rb") as f:
            write_if_changed(os.path.join(book, os.path.relpath(path, source)), f.read())
    with open(os.path.join(source, HIDDEN_NAMES), encoding="utf-8") as f:
        return json.load(f)


def autograder_files(root):
    """{rel: bytes} of the bundle, the marked files and the exercises."""
    content, files, exercises = release_files(root, keep_hidden=True)
    bundle = {}
    for rel, data in content.items():
        if data is None:
            with open(os.path.join(root, rel), "rb") as f:
                data = f.read()
        # The hidden tests and their names go apart (HIDDEN_TESTS): an image that must be
        # public (PrairieLearn's) is built without them.
        if "/hidden/" in rel:
            bundle[f"{HIDDEN_TESTS}/{rel}"] = data
        else:
            bundle["book/" + rel] = public_marker(data) if rel == MARKER_FILE else data
    names = json.loads(content[MARKER_FILE])["hidden_test_names"]
    bundle[f"{HIDDEN_TESTS}/{HIDDEN_NAMES}"] = (json.dumps(names, indent=2) + "\n").encode()
    submitted = sorted({f["file"] for e in exercises.values() for f in e["functions"]})
    for rel in submitted:
        bundle["stubs/" + rel] = bundle["book/" + rel]
    bundle["setup.sh"] = SETUP_SH.encode()
    bundle["run_autograder"] = RUN_AUTOGRADER.encode()
    bundle["README.md"] = autograder_readme(exercises, files).encode()
    bundle[AUTOGRADER_MARKER] = (json.dumps({"book": "Attention, Verified", "format": 1,
                                             "files": submitted}, indent=2) + "\n").encode()
    return bundle, files, exercises


def find_submitted(submission, rel):
    """The submitted file for `rel`: at its path, at its path one folder down (a repository
    uploaded as a folder), or anywhere by its name."""
    candidates = [os.path.join(submission, rel)]
    candidates += sorted(glob.glob(os.path.join(submission, "*", rel)))
    candidates += sorted(glob.glob(os.path.join(submission, "**", os.path.basename(rel)),
                                   recursive=True), key=lambda p: (p.count(os.sep), p))
    return next((c for c in candidates if os.path.isfile(c)), None)


def cmd_autograde(args):
    bundle = os.path.abspath(args.source)
    book = os.path.join(bundle, "book")
    if not os.path.isfile(os.path.join(bundle, AUTOGRADER_MARKER)):
        raise UsageError(f"--source {args.source}: not an autograder bundle (made by ./book "
                         "release --autograder)")
    with open(os.path.join(bundle, AUTOGRADER_MARKER)) as f:
        files = json.load(f)["files"]
    marker = load_marker(book)
    build = os.path.join(book, LEAN_BUILD)
    log = os.path.join(bundle, "build.log")
    jobs_n = args.jobs or grading_jobs()
    hidden_source = os.path.abspath(args.hidden_tests or os.path.join(bundle, HIDDEN_TESTS))
    if args.hidden_tests and not os.path.isfile(os.path.join(hidden_source, HIDDEN_NAMES)):
        raise UsageError(f"--hidden-tests {args.hidden_tests}: not the hidden tests of an "
                         f"autograder bundle (its {HIDDEN_TESTS}/ directory, with "
                         f"{HIDDEN_NAMES})")
    hidden_names = bring_hidden_tests(hidden_source, book)
    if args.prepare:
        open(log, "w").close()
        say(f"building the book's tests with the stubs (log: {log})")
        rc = lean_configure(book, log) or cmake_build(build, build_targets(book), log, jobs_n)
        if rc != 0:
            with open(log) as f:
                sys.stderr.write(f.read()[-4000:])
        return rc
    exercises = chosen_exercises(marker, args.exercise, "--exercise")
    submission = os.path.abspath(args.submission)
    results = os.path.abspath(args.results)
    if not os.path.isdir(submission):
        raise UsageError(f"--submission {args.submission}: not a directory")
    base = existing_ancestor(results)
    if os.path.exists(results) and not os.path.isdir(results) or not os.path.isdir(base):
        raise UsageError(f"--results {args.results}: not a directory")
    probe_writable("--results", args.results, base)
    stubs = {rel: read_text(os.path.join(bundle, "stubs", rel)) for rel in files}
    notes = []
    graded = {f["file"] for e in exercises for f in e["functions"]}
    for rel, stub in stubs.items():
        found = find_submitted(submission, rel)
        text = stub
        if found:
            with open(found, "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
            if rel in graded:
                notes.append(f"graded {os.path.relpath(found, submission)} as {rel}")
        elif rel in graded:
            notes.append(f"not submitted: {rel} (graded as its stub)")
        write_if_changed(os.path.join(book, rel), text.encode())
    open(log, "w").close()
    if lean_configure(book, log) != 0:
        raise RuntimeError(f"the bundle's book does not configure (log: {log})")
    if not hidden_names:
        notes.append("graded without hidden tests (none in the bundle, no --hidden-tests)")
    result = grade_run(book, build, exercises, hidden_names,
                       "", jobs_n, log, stubs=stubs, time_limit=args.time_limit,
                       user=test_user(), also_hidden=[p for p in [hidden_source]
                                                      if os.path.isdir(p)])
    result["notes"] = notes
    text = formats.render(args.format, result)
    os.makedirs(results, exist_ok=True)
    write_atomically(os.path.join(results, "results.json"), text, "--results")
    print_table(result, True)
    print(f"results: {os.path.join(results, 'results.json')} ({result['elapsed']:.1f} s)")
    return 0

