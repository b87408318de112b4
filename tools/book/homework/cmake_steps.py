"""Build steps CMake runs (python -m book.homework labels|run-chapter): the ctest labels exNN.M
of a test binary, and a chapter program that in a student copy, where some of its sections wait
for exercises not done, leaves the book's figures in their place instead of failing the
build."""
import json
import os
import re
import shutil
import subprocess
import sys

from book.build import ROOT
from book.homework.markers import ID, is_student_copy, read_text

EXIT_NOT_DONE = 3  # harness::run_program's exit code when the run waits for an exercise

def doctest_list(binary, *args):
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{binary} {' '.join(args)} failed: {r.stderr or r.stdout}")
    return [line for line in r.stdout.split("\n")
            if line and not line.startswith("[doctest]") and not line.startswith("=====")]


def cmd_labels(args):
    suites = [s for s in doctest_list(args.binary, "--list-test-suites", "--no-version")
              if re.fullmatch(r"ex" + ID, s)]
    lines = [f"# ctest labels exNN.M of {os.path.basename(args.binary)}, from its doctest "
             "test suites (python -m book.homework labels)"]
    # doctest.cmake passes TEST_PREFIX through a -D argument, which loses trailing spaces:
    # "01: " names the tests "01:name".
    prefix = args.prefix.rstrip()
    for suite in sorted(suites):
        for name in doctest_list(args.binary, "--list-test-cases", "--no-version",
                                 f"--test-suite={suite}"):
            labels = ";".join([lab for lab in args.labels.split(";") if lab] + [suite])
            lines.append(f'set_tests_properties([==[{prefix}{name}]==] PROPERTIES '
                         f'LABELS "{labels}")')
    text = "\n".join(lines) + "\n"
    if not os.path.exists(args.out) or read_text(args.out) != text:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


def cmd_run_chapter(args):
    r = subprocess.run([args.exe, "--out", args.out], stderr=subprocess.PIPE, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode == 0:
        return 0
    if r.returncode != EXIT_NOT_DONE or not is_student_copy(ROOT):
        return r.returncode
    # The student copy: the site still builds. Either the program ran every section that does
    # not wait for an exercise (its results.json says which exercises it waits for) or it
    # stopped before writing anything: then output.txt says which exercise to do. The
    # committed figures stand in for the ones the program did not draw.
    line = r.stderr.strip().split("\n")[-1]
    if not exercises_not_done(args.out):
        os.makedirs(args.out, exist_ok=True)
        ident = re.search(r"exercise " + ID, line)
        with open(os.path.join(args.out, "output.txt"), "w", encoding="utf-8") as f:
            f.write(f"{line}\n\nThis is the student copy of the book. The program's output "
                    "appears here once the exercise is done\n(then run ./book again).\n")
        with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
            json.dump({"exercises_not_done": ident.group(1) if ident else "?"}, f)
    for name in args.figure:
        src = os.path.join(args.figures_dir, name + ".svg")
        dst = os.path.join(args.out, name + ".svg")
        if os.path.isfile(src) and not os.path.isfile(dst):
            shutil.copyfile(src, dst)
    print(f"(student copy) the book's figures stand in for those the program did not draw, "
          f"in {args.out}")
    return 0


def exercises_not_done(out):
    """The exercises a program's output set in `out` waits for ("01.6 06.6"), or "" when it
    has none or no output set (its results.json: harness::finish_program)."""
    try:
        with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
            return json.load(f).get("exercises_not_done", "")
    except (OSError, ValueError):
        return ""

