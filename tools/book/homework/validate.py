"""./book validate, the instructor's check in three directions: the exercises' tests pass on
the solutions, fail on the stubs and fail on every catalogued wrong answer
(book.homework.wrong_answers); every other test passes in the release, the release and the
student copy proper build, and no solution leaks into the student copy."""
import os
import re
import sys
import tempfile
import time

from book.build import (LEAN_BUILD, ROOT, build_targets, cmake_build, labels_of, lean_configure,
                        run_ctest, say)
from book.homework import UsageError
from book.homework.course import EXERCISES_FILE, load_exercises, weight_errors
from book.homework.leak_test import distinctive_lines, leaks
from book.homework.markers import ID, book_files, is_student_copy, scan
from book.homework.staging import sync_tree
from book.homework.student_copy import release_files
from book.homework.student_runs import program_problems, run_programs
from book.homework.wrong_answers import check_wrong_answers

def cmd_validate(args):
    if is_student_copy(ROOT):
        raise UsageError("validate is the instructor's check; this is a student copy "
                         "(use ./book grade)")
    t0 = time.monotonic()
    problems = []
    ref = os.path.join(ROOT, "build", "release")
    base = os.path.join(ROOT, "build", "validate")
    src = os.path.join(base, "src")
    build = os.path.join(src, LEAN_BUILD)
    os.makedirs(base, exist_ok=True)
    log = os.path.join(base, "validate.log")
    open(log, "w").close()
    jobs = args.jobs
    if args.wrong_answers is not None:  # that direction alone
        try:
            files, exercises = scan(ROOT)
        except ValueError as e:
            raise UsageError(str(e))
        unknown = [i for i in args.wrong_answers if i not in exercises]
        if unknown:
            raise UsageError(f"--wrong-answers: no exercise {unknown[0]} "
                             f"(exercises: {', '.join(exercises)})")
        problems = check_wrong_answers(ROOT, files, exercises, base, jobs, log,
                                       args.wrong_answers or None)
        return report(problems, "the wrong answers", f"{time.monotonic() - t0:.0f} s")

    # 1. The full book passes every test: ./book test has just run them all; alone, the
    #    exercises' own tests are run on the solutions.
    try:
        content, files, exercises = release_files(ROOT, keep_hidden=True)
    except ValueError as e:
        raise UsageError(str(e))
    ref_labels = labels_of(ref)
    for i, e in exercises.items():
        n = sum(1 for labs in ref_labels.values() if "ex" + i in labs)
        if n == 0:
            problems.append(f"exercise {i} has no test labelled ex{i} in {ref}")
        if e["hidden_blocks"] == 0:
            problems.append(f"exercise {i} has no hidden tests")
        if not e["functions"]:
            problems.append(f"exercise {i} has hidden tests but no solution region")
    unknown = sorted({lab for labs in ref_labels.values() for lab in labs
                      if lab.startswith("ex") and lab[2:] not in exercises})
    if unknown:
        problems.append(f"tests carry labels of unknown exercises: {', '.join(unknown)}")
    try:
        table = load_exercises(ROOT)
        problems += [f"{EXERCISES_FILE}: exercise {i} (autograded) has no entry"
                     for i in exercises if i not in table]
        problems += [f"{EXERCISES_FILE}: [\"{i}\"] sets weights, but exercise {i} is "
                     "hand-graded (no BEGIN SOLUTION region)"
                     for i, e in table.items() if e["weights"] and i not in exercises]
        problems += weight_errors({i: e for i, e in table.items() if i in exercises},
                                  lambda i: [n for n, labs in ref_labels.items()
                                             if "ex" + i in labs])
    except UsageError as e:
        problems += str(e).splitlines()
    if args.full_tests_follow:
        say("validate 1/4: the exercises' tests on the solutions: with every other test, "
            "after validate (./book test)")
    else:
        say("validate 1/4: the exercises' tests on the solutions")
        res = run_ctest(ref, label_regex="^ex", jobs=jobs, log=log)
        bad = sorted(n for n, (s, _) in res.items() if s != "passed")
        problems += [f"fails in the full book: {n}" for n in bad]

    # 2. The student copy: no solution leaks into it (text check).
    say("validate 2/4: the student copy leaks no solution text")
    student, _, _ = release_files(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        sync_tree(ROOT, student, tmp)
        problems += ["leak: " + b for b in leaks(tmp, distinctive_lines(files))]

    # 3. The release builds and its tests behave: built with the hidden tests kept (as
    #    grading with --instructor does). ccache gives back every object the full book's
    #    build compiled from the same source; the stubs and tests are compiled.
    say(f"validate 3/4: building the release with stubs (lean, in {build})")
    t_build, t_wrong = time.monotonic(), 0.0
    sync_tree(ROOT, content, src)
    rc = lean_configure(src, log)
    if rc == 0:
        rc = cmake_build(build, build_targets(src), log, jobs)
    if rc != 0:
        problems.append(f"the release does not build (log: {log})")
    t_build = time.monotonic() - t_build
    if rc == 0:
        say("validate 4/4: every exercise's tests fail on its stub, every other test passes")
        # The compile-fail tests of chapter 04 (half a minute) are left out: they compile
        # snippets against the headers, which the stubs (all in .cpp files) do not change.
        res = run_ctest(build, exclude_regex="^compile-fail$", jobs=jobs, log=log)
        labs = labels_of(build)
        for name, (status, _) in sorted(res.items()):
            ex = [lab for lab in labs.get(name, []) if re.fullmatch("ex" + ID, lab)]
            if ex and status == "passed":
                problems.append(f"passes on the stub of {ex[0]} (a test that cannot tell): "
                                f"{name}")
            elif not ex and status != "passed":
                problems.append(f"fails in the release but carries no exercise label: {name}")
        for i in exercises:
            if not any("ex" + i in labs.get(n, []) for n in res):
                problems.append(f"exercise {i}: no tests ran in the release")
        # Every exercise can be started in order: the programs run what needs no stub, and
        # compute what the full book computes (the same tree with the solutions back in).
        say("validate: the chapter programs with every exercise a stub, then with the solutions")
        stub_runs = run_programs(os.path.join(build, "bin"), os.path.join(base, "stub-runs"),
                                 src)
        sync_tree(ROOT, {rel: None for rel in book_files(ROOT)}, src)
        if cmake_build(build, [f"ch{nn}" for nn in stub_runs], log, jobs) != 0:
            problems.append(f"the full book does not build in {src} (log: {log})")
        else:
            full_runs = run_programs(os.path.join(build, "bin"),
                                     os.path.join(base, "full-runs"), src)
            problems += program_problems(stub_runs, full_runs, exercises)
        # The student copy proper (hidden tests removed) must build too. It is kept in
        # build/validate/student; ccache gives back the objects above: only the files with
        # hidden tests are compiled, and only the test binaries that hold them are linked.
        say("validate: building the student copy proper (hidden tests removed)")
        s_src = os.path.join(base, "student")
        s_build = os.path.join(s_src, LEAN_BUILD)
        os.makedirs(s_src, exist_ok=True)
        sync_tree(ROOT, student, s_src)
        rc2 = lean_configure(s_src, log)
        if rc2 == 0:
            hidden_dirs = sorted({rel.split("/")[1][:2] if rel.startswith("chapters/")
                                  else "lib" for rel, (_, regs) in files.items()
                                  if any(r.kind == "hidden" for r in regs)})
            rc2 = cmake_build(s_build, [f"test-{d}" for d in hidden_dirs], log, jobs)
        if rc2 != 0:
            problems.append(f"the student copy (hidden tests removed) does not build "
                            f"(log: {log})")
        # The third direction: every catalogued wrong answer fails its exercise's tests.
        t_wrong = time.monotonic()
        problems += check_wrong_answers(ROOT, files, exercises, base, jobs, log)
        t_wrong = time.monotonic() - t_wrong
    return report(problems, f"{len(exercises)} exercises",
                  f"{time.monotonic() - t0:.0f} s ({t_build:.0f} s building the release, "
                  f"{t_wrong:.0f} s the wrong answers)")


def report(problems, what, took):
    """The problems, one PROBLEM line each, then one line; the exit code."""
    for p in problems:
        print("PROBLEM " + p, file=sys.stderr)
    found = f"{len(problems)} problems" if problems else "no problems"
    print(f"validate: {what}, {found}; {took}")
    return 1 if problems else 0

