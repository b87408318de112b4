"""./book grade and ./book check: build a student copy's tests (with the hidden tests from the
instructor's copy, or in the autograder's bundle), run each exercise's tests, and score them:
each exercise's points split over its tests (chapters/exercises.toml, book.homework.course),
feedback for a failed public test, the compiler's message for a file that does not compile."""
import glob
import os
import re
import sys
import time

from book.build import (LEAN_BUILD, LIBRARY_TESTS, ROOT, build_targets,
                        cmake_build, labels_of, lean_configure, run_logged, say)
from book.homework import UsageError, formats
from book.homework.run_tests import (TIME_LIMIT_S, graded_tests, keep_from_tests, let_tests_run,
                                     open_to_tests, run_tests, unreachable_for_others)
from book.doctest_sources import test_case_names
from book.homework.markers import (MARKER_FILE, book_files, hidden_test_names, is_student_copy,
                                   load_marker, read_text, scan)
from book.homework.course import (EXERCISES_FILE, HIDDEN_EXERCISES_FILE, claim_of,
                                  load_exercises, test_points, weight_errors)
from book.homework.staging import check_out_path, sync_tree, write_atomically
from book.homework.student_copy import release_files


def targets_for(build, ids, src):
    """The binaries that hold the tests of the exercises `ids`: an edit to one exercise
    relinks only those. All test binaries and programs when some are not built yet (the
    test list of a binary exists only once it is built), except hidden tests' binaries that
    came later (a PrairieLearn image is built without them: --hidden-tests): of those, only
    the chapters of `ids` are built (exercise NN.M's hidden tests are chapter NN's)."""
    every = [t for t in build_targets(src) if not t.endswith("-handin")]  # (grade_handin's)
    missing = [t for t in every if not os.path.isfile(os.path.join(
        build, LIBRARY_TESTS.get(t) or ("bin" if t.startswith("ch") else "chapters"), t))]
    if any(not t.endswith("-hidden") for t in missing):
        return every
    binaries = {}
    labels = labels_of(build, binaries)
    wanted = {"ex" + i for i in ids}
    targets = sorted({b for name, labs in labels.items() if wanted & set(labs)
                      for b in binaries.get(name, [])}
                     | {f"test-{i[:2]}-hidden" for i in ids} & set(missing))
    return targets or every


def hidden_restored(student_root, instructor_root):
    """{rel: bytes} of the tree graded with --instructor: the instructor's autograder copy
    (every file, hidden tests kept, solutions stubbed) with only the exercises' files (the
    functions students write) and the hand-in files (HANDIN_FILE) taken from the student's
    copy. Tests, doctest_main.cpp, CMake
    files and the tooling are the instructor's: a student's edit to any of them does not
    count."""
    content, files, exercises = release_files(instructor_root, keep_hidden=True)
    if not any(r.kind == "hidden" for _, regions in files.values() for r in regions):
        raise UsageError(f"--instructor {instructor_root}: has no hidden tests")
    graded = {f["file"] for e in exercises.values() for f in e["functions"]}
    graded |= {rel for rel in content if HANDIN_FILE.fullmatch(rel)}
    for rel, data in content.items():
        if rel in graded and os.path.isfile(os.path.join(student_root, rel)):
            path = student_root
        elif data is None:
            path = instructor_root
        else:
            continue
        with open(os.path.join(path, rel), "rb") as f:
            content[rel] = f.read()
    return content


def failure_feedback(output, root):
    """What a failed test printed that helps: doctest's failing assertions with their values,
    or the exception, or a script's FAIL lines; paths relative to the book; a block repeated
    (a check in a loop) once; at most 30 lines."""
    lines = []
    for line in output.replace(root.rstrip("/") + "/", "").splitlines():
        s = line.strip()
        if (s.startswith(("[doctest]", "ok   ", "skip: ", "TEST SUITE:", "TEST CASE:"))
                or (s and set(s) <= set("=")) or re.fullmatch(r"\S+:\d+:", s)):
            continue
        line = re.sub(r"^(\s*)(?:\.\./)+", r"\1", line.rstrip())  # ../../chapters/...
        if s or (lines and lines[-1]):
            lines.append(line)
    blocks, seen = [], set()
    for block in "\n".join(lines).strip("\n").split("\n\n"):
        if block not in seen:
            seen.add(block)
            blocks.append(block)
    lines = "\n\n".join(blocks).split("\n") if blocks else []
    return "\n".join(lines[:30] + (["..."] if len(lines) > 30 else []))


COMPILER_ERROR = re.compile(r"^(\S+?\.(?:cpp|hpp|h)):\d+:\d+: (?:fatal )?error:")
# What gcc says about a file: diagnostics, the context lines before them, the quoted source
# with its carets (not the build tool's lines or the compile command).
DIAGNOSTIC = re.compile(r"^(\S+?:\d+:\d+: |\S+?: In |In file included from |\s+from |"
                        r"\s*\d*\s*\|)")


LINK_ERROR = re.compile(r"undefined reference to|multiple definition of|\bld: ")


def compiler_message(log, src, limit=40):
    """The compiler's errors in `log`, paths relative to the copy, and the files they are in."""
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read().replace(src.rstrip("/") + "/", "")
    files, keep = [], []
    for line in text.splitlines():
        line = re.sub(r"^(\s*(?:In file included )?(?:from )?)(?:\.\./)+", r"\1", line)
        m = COMPILER_ERROR.match(line)
        if m and m.group(1) not in files:
            files.append(m.group(1))
        if DIAGNOSTIC.match(line):
            keep.append(line.rstrip())
    if not any(COMPILER_ERROR.match(line) for line in keep):  # a link error, or another
        lines = text.splitlines()
        keep = [line for line in lines if "error" in line.lower() or LINK_ERROR.search(line)
                and not line.startswith("FAILED")][-limit:] or lines[-limit:]
    return "\n".join(keep[:limit] + (["..."] if len(keep) > limit else [])) + "\n", files


# What g++ prints when the kernel kills it (out of memory under a container's limit).
COMPILER_KILLED = re.compile(r"Killed signal terminated program|internal compiler error: Killed"
                             r"|signal 9|fatal error: Killed")


class InfrastructureError(RuntimeError):
    """The grader itself failed (not the student's code): no grade must be given."""


def build_tests(build, targets, log, jobs):
    """cmake_build, but a compiler killed by a signal is the machine's failure, not the
    student's: built again with one job, and if it is killed again, InfrastructureError."""
    for attempt_jobs in dict.fromkeys([jobs, 1]):
        start = os.path.getsize(log) if os.path.isfile(log) else 0
        rc = cmake_build(build, targets, log, attempt_jobs)
        with open(log, encoding="utf-8", errors="replace") as f:
            f.seek(start)
            killed = rc != 0 and COMPILER_KILLED.search(f.read())
        if not killed:
            return rc
        say(f"the compiler was killed (out of memory with {attempt_jobs} jobs?)"
            + ("; building again with one job" if attempt_jobs > 1 else ""))
    raise InfrastructureError(f"the compiler was killed even with one job (log: {log}): the "
                              "grader needs more memory; this is not the submission's fault")


def files_in_link_errors(log, exercises):
    """The exercises' files a linker error names: by the object file it is in
    (.../hat_matrix.cpp.o) or by an exercise's function left undefined or defined twice."""
    with open(log, encoding="utf-8", errors="replace") as f:
        text = "\n".join(line for line in f if LINK_ERROR.search(line))
    return [fn["file"] for e in exercises for fn in e["functions"]
            if re.search(re.escape(os.path.basename(fn["file"])) + r"\.o\b", text)
            or re.search(r"(undefined reference to|multiple definition of) `[^']*\b"
                         + re.escape(fn["function"]) + r"\(", text)]


def exercise_of(labels):
    """The exercise a test with these ctest labels grades, or None. A test that runs the code
    of several exercises (chapter 06's program uses 01.6's causal mask, so its contract test
    is labelled ex06.6 and ex01.6) is graded for none: a failure could be either's, and one
    exercise's mistake must not cost another's points. `ctest -L exNN.M` still runs it."""
    found = [lab[2:] for lab in labels if re.fullmatch(r"ex\d\d\.\d+", lab)]
    return found[0] if len(found) == 1 else None


# A test of a hidden tests' binary, test-NN-hidden (markers.hidden_copy): "NN-hidden:claim".
HIDDEN_BINARY = re.compile(r"^(\d\d)-hidden:\s?")


def is_graded(name, hidden):
    """Whether test `name` counts: a hidden test from its own binary; any other test from the
    public binaries (a hidden tests' binary also holds copies of its file's public tests)."""
    return claim_of(name) in hidden if HIDDEN_BINARY.match(name) else True


def hidden_artifacts(src, build):
    """What holds the hidden tests' text or names in a grading tree: the hidden/ sources, the
    hidden tests' binaries with their objects and test lists, the marker file and the full
    exercises.toml (both name hidden tests)."""
    return (glob.glob(os.path.join(src, "chapters", "*", "hidden"))
            + glob.glob(os.path.join(build, "chapters", "*-hidden*"))
            + glob.glob(os.path.join(build, "chapters", "CMakeFiles", "*-hidden*"))
            + [p for p in [os.path.join(src, MARKER_FILE),
                           os.path.join(src, HIDDEN_EXERCISES_FILE)] if os.path.exists(p)])


def run_graded_tests(src, build, tests, jobs, log, time_limit, user, also_hidden=()):
    """Runs the public tests, then the hidden ones. With a test `user` (the autograder as
    root), student code cannot read the hidden tests while the public tests run, whose
    feedback it could print them into: their sources, binaries and objects are the grader's
    alone until then. The hidden tests' own feedback is never shown."""
    hidden = [t for t in tests if HIDDEN_BINARY.match(t["name"])]
    public = [t for t in tests if t not in hidden]
    if user:
        open_to_tests(src)
        blocked = unreachable_for_others(build)
        if blocked:
            raise InfrastructureError(
                f"student code runs as user nobody, who cannot enter {blocked}: put the "
                "autograder where every user may enter (unzipped as root with umask 022, as "
                "Gradescope does, it is)")
        keep_from_tests(hidden_artifacts(src, build) + list(also_hidden))
    results = run_tests(public, jobs, log=log, time_limit=time_limit, user=user)
    if hidden:
        if user:
            let_tests_run(sorted({t["command"][0] for t in hidden}))
        results |= run_tests(hidden, jobs, log=log, time_limit=time_limit, user=user)
    return results


def grade_run(src, build, exercises, hidden, student, jobs, log, stubs=None,
              time_limit=TIME_LIMIT_S, user=None, also_hidden=(), handin=False):
    """Builds the tests of `exercises` in `build`, runs them (book.homework.run_tests: each
    under a time and output limit, passed only on doctest's own report; the public tests
    first, then the hidden ones: run_graded_tests), and returns the grading run that
    book.homework.formats renders. `stubs` ({file: text}, the autograder's): a submitted file
    that does not compile is replaced by its stub, so that the other exercises are still
    graded; its exercises score 0 with the compiler's message. `user` (run_tests.test_user):
    the user student code runs as; `also_hidden`: more paths it must not read (the
    autograder's hidden-tests/). `handin`: the students' hand-in code is built and run too,
    after the graded tests (grade_handin)."""
    t0 = time.monotonic()
    table = graded_table(src, exercises)
    ids = [e["id"] for e in exercises]
    rc = build_tests(build, targets_for(build, ids, src), log, jobs)
    message, broken = "", []
    if rc != 0 and stubs:
        message, files = compiler_message(log, src)
        bad = ([f for f in files if f in stubs] or files_in_link_errors(log, exercises)
               or list(stubs))
        broken = sorted({e["id"] for e in exercises for fn in e["functions"]
                         if fn["file"] in bad})
        for rel in bad:
            with open(os.path.join(src, rel), "w", encoding="utf-8") as f:
                f.write(stubs[rel])
        say(f"did not compile: {', '.join(bad)}; graded with the stubs in their place")
        rc = build_tests(build, targets_for(build, ids, src), log, jobs)
    elif rc != 0:
        message, _ = compiler_message(log, src)
    tests, rows = [], []
    results = {}
    if rc == 0:
        regex = "^ex(" + "|".join(re.escape(i) for i in ids) + ")$"
        tests_log = os.path.join(os.path.dirname(log), "grade-tests.log")
        open(tests_log, "w").close()
        results = run_graded_tests(src, build, [t for t in graded_tests(build, regex)
                                                if exercise_of(t["labels"]) in ids
                                                and is_graded(t["name"], hidden)],
                                   jobs, tests_log, time_limit, user, also_hidden)
    # (a build that failed still lists the tests of its earlier build: their real maximum)
    labels = labels_of(build)
    for e in exercises:
        names = sorted(n for n, labs in labels.items()
                       if exercise_of(labs) == e["id"] and is_graded(n, hidden))
        errors = weight_errors({e["id"]: table[e["id"]]}, lambda _: names)
        if errors and rc == 0:
            raise UsageError("\n".join(errors))
        points = test_points(table[e["id"]], names)
        for n in names:
            status, output = results.get(n, ("failed", ""))
            ok = status == "passed" and e["id"] not in broken
            is_hidden = claim_of(n) in hidden
            max_points = points[n]
            feedback = "" if ok or is_hidden else (
                "did not compile or link:\n" + message if e["id"] in broken or rc != 0
                else failure_feedback(output, src))
            tests.append({"exercise": e["id"], "name": n, "claim": claim_of(n), "passed": ok,
                          "hidden": is_hidden, "points": max_points if ok else 0.0,
                          "max_points": max_points, "feedback": feedback})
        mine = [t for t in tests if t["exercise"] == e["id"]]
        passed = sum(t["passed"] for t in mine)
        status = ("did not compile" if e["id"] in broken or rc != 0
                  else "no tests" if not mine else "done" if passed == len(mine)
                  else "not done" if passed == 0 else "partly done")
        rows.append({"id": e["id"], "functions": e["functions"], "tests": len(mine),
                     "passed": passed, "points": sum(t["points"] for t in mine),
                     "max_points": sum(t["max_points"] for t in mine), "status": status})
    return {"book": "Attention, Verified", "student": student,
            "elapsed": time.monotonic() - t0, "build_ok": rc == 0,
            "build_message": message, "broken_exercises": broken,
            "exercises": rows, "tests": tests,
            "handin": grade_handin(src, build, jobs, log, time_limit) if handin else []}


# A chapter's hand-in file: the code and tests that hand-graded exercises ask for.
HANDIN_FILE = re.compile(r"chapters/(\d\d)-[^/]+/test_handin\.cpp")


def grade_handin(src, build, jobs, log, time_limit=TIME_LIMIT_S):
    """The hand-in code of each chapter whose file holds a test case: built apart (its binary
    test-NN-handin: code that does not compile costs no graded test), its tests run under the
    same limits. Graded by hand with the exercises' rubrics, so it earns no points here:
    [{chapter, file, compiled, message, tests: [{name, claim, passed, feedback}]}]."""
    found = []
    for path in sorted(glob.glob(os.path.join(src, "chapters", "*", "test_handin.cpp"))):
        rel = os.path.relpath(path, src).replace(os.sep, "/")
        m = HANDIN_FILE.fullmatch(rel)
        if not m or not test_case_names(read_text(path)):
            continue
        nn = m.group(1)
        chapter_log = os.path.join(os.path.dirname(log), f"handin-{nn}.log")
        open(chapter_log, "w").close()
        say(f"building the hand-in code of chapter {nn} ({rel}; log: {chapter_log})")
        rc = build_tests(build, [f"test-{nn}-handin"], chapter_log, jobs)
        entry = {"chapter": nn, "file": rel, "compiled": rc == 0, "message": "", "tests": []}
        if rc != 0:
            entry["message"] = compiler_message(chapter_log, src)[0]
        else:
            mine = [t for t in graded_tests(build, "^handin$")
                    if t["name"].startswith(f"{nn}-handin:")]
            results = run_tests(mine, jobs, log=chapter_log, time_limit=time_limit)
            entry["tests"] = [{"name": n, "claim": claim_of(n), "passed": st == "passed",
                               "feedback": "" if st == "passed" else failure_feedback(out, src)}
                              for n, (st, out) in sorted(results.items())]
        found.append(entry)
    return found


def graded_table(root, exercises):
    """The exercises.toml entries of the autograded `exercises` (a UsageError when one has
    none or the file has an error)."""
    table = load_exercises(root)
    missing = [e["id"] for e in exercises if e["id"] not in table]
    if missing:
        raise UsageError(f"{EXERCISES_FILE}: exercise {missing[0]} has no entry (its title, "
                         "kind, points and minutes)")
    return table


def print_table(run, hidden, out=sys.stdout):
    print(f"\nExercises ({'with' if hidden else 'without'} the hidden tests); each exercise's "
          f"points ({EXERCISES_FILE}) split over its tests:", file=out)
    print(f"  {'exercise':<9}{'function (file)':<62}{'tests':>9}  {'points':>11}  status",
          file=out)
    for r in run["exercises"]:
        where = "; ".join(f"{f['function']} ({f['file']})" for f in r["functions"])
        print(f"  {r['id']:<9}{where:<62}{r['passed']:>4} / {r['tests']:<3} "
              f"{round(r['points'], 2):>5g} / {round(r['max_points'], 2):<5g} {r['status']}",
              file=out)
    got = sum(r["points"] for r in run["exercises"])
    top = sum(r["max_points"] for r in run["exercises"])
    print(f"  total {round(got, 2):g} of {round(top, 2):g} points", file=out)
    if not run["build_ok"]:
        print("\nThe build failed:\n" + run["build_message"], file=out)
    for h in run.get("handin", []):
        passed = sum(t["passed"] for t in h["tests"])
        print(f"\nHand-in code of chapter {h['chapter']} ({h['file']}; graded by hand, no "
              "points here): " + (f"{passed} of {len(h['tests'])} tests pass" if h["compiled"]
                                  else "does not compile"), file=out)
        for t in h["tests"]:
            print(f"  {'PASS' if t['passed'] else 'FAIL'}  {t['claim']}", file=out)
        if not h["compiled"]:
            print(h["message"], file=out)



def old_csv(path):
    """An existing grade CSV at `path` (its other students' rows are kept), or ''."""
    if not os.path.isfile(path):
        return ""
    text = read_text(path)
    try:
        formats.merged_csv(text, {"student": "", "exercises": []})
    except ValueError as e:
        raise UsageError(f"--out {path}: {e}; give a new file or a CSV written by "
                         "./book grade --format csv")
    return text


def emit(run, fmt, out_path, hidden):
    """Writes the run in format `fmt` to `out_path` (or stdout), the table to the terminal."""
    if fmt == "table":
        print_table(run, hidden)
        return
    print_table(run, hidden, out=sys.stderr)
    old = old_csv(out_path) if fmt == "csv" and out_path else ""
    text = formats.render(fmt, run, old)
    if out_path:
        write_atomically(out_path, text, "--out")
        print(f"{fmt}: {out_path}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if fmt == "github-classroom" and os.environ.get("GITHUB_OUTPUT"):
        # Inside a GitHub Actions step: the grading reporter reads the step's `result`.
        import base64
        with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as f:
            f.write("result=" + base64.b64encode(text.encode()).decode() + "\n")


def chosen_exercises(marker, wanted, option):
    exercises = marker["exercises"]
    ids = [e["id"] for e in exercises]
    for x in wanted or []:
        if x not in ids:
            raise UsageError(f"{option} {x}: unknown exercise (known: {', '.join(ids)})")
    return [e for e in exercises if not wanted or e["id"] in wanted]


def check_student_id(given):
    if not re.fullmatch(r"[\w.@+-]{1,100}", given):
        raise UsageError(f"--student {given!r}: it takes an id of letters, digits and . @ + - _ "
                         "(at most 100)")


def cmd_grade(args):
    if not is_student_copy(ROOT):
        raise UsageError(f"grade works in a student copy (made by ./book release; it has "
                         f"{MARKER_FILE}); {ROOT} is not one")
    marker = load_marker(ROOT)
    exercises = chosen_exercises(marker, args.exercise, "--exercise")
    if args.instructor is not None:
        inst = os.path.abspath(args.instructor) if args.instructor else ""
        if not inst or not os.path.isdir(inst) or is_student_copy(inst) \
                or not os.path.isdir(os.path.join(inst, "tools", "book", "homework")):
            raise UsageError(f"--instructor {args.instructor}: not the instructor's copy of "
                             "the book; it takes the directory of the book with the solutions")
    if args.out is not None:
        if args.format == "table":
            raise UsageError("--out: the table goes to the terminal; give --format too "
                             f"({', '.join(formats.FORMATS[1:])})")
        check_out_path("--out", args.out)
        if args.format == "csv":
            old_csv(os.path.abspath(args.out))
    student = args.student if args.student is not None else os.path.basename(ROOT)
    check_student_id(student)
    graded_table(args.instructor and inst or ROOT, exercises)
    if args.check_only:
        return 0
    if args.instructor:
        src = os.path.join(ROOT, "build", "grade", "src")
        content = hidden_restored(ROOT, inst)
        os.makedirs(src, exist_ok=True)
        sync_tree(ROOT, content, src)
        build = os.path.join(src, LEAN_BUILD)
        log = os.path.join(ROOT, "build", "grade", "build.log")
        hidden = hidden_test_names(scan(inst)[0])
    else:
        # Graded in a copy, like --instructor: a file that does not compile is put back to its
        # stub there (never in the student's files), so the other exercises still get graded
        # and every exercise shows its real maximum (a fresh GitHub runner has no earlier build).
        src = os.path.join(ROOT, "build", "grade", "src")
        os.makedirs(src, exist_ok=True)
        sync_tree(ROOT, {rel: None for rel in book_files(ROOT)
                         if not rel.startswith("build/")}, src)  # (even if not git-ignored)
        build = os.path.join(src, LEAN_BUILD)
        log = os.path.join(ROOT, "build", "grade", "build.log")
        hidden = marker.get("hidden_test_names", [])
    open(log, "w").close()
    rc = lean_configure(src, log)
    if rc != 0:
        with open(log) as f:
            sys.stderr.write(f.read()[-3000:])
        print(f"grade: configuring failed (log: {log})", file=sys.stderr)
        return 1
    say(f"building the tests ({'hidden tests restored from ' + inst if args.instructor else 'the student copy'}; log: {log})")
    result = grade_run(src, build, exercises, hidden, student, args.jobs, log,
                       stubs=marker.get("stubs"), time_limit=args.time_limit, handin=True)
    if result["build_ok"]:
        say("ran the exercises' tests")
    emit(result, args.format, args.out and os.path.abspath(args.out), bool(args.instructor))
    print(f"(graded in {result['elapsed']:.1f} s)", file=sys.stderr)
    if not result["build_ok"] or result["broken_exercises"]:
        print(f"grade: the build failed (log: {log}); fix the compile errors first",
              file=sys.stderr)
        return 1
    return 0


def cmd_check(args):
    """The student's loop: one exercise's public tests, each with its claim, and for a
    failed one the failing expression and its values."""
    marker = load_marker(ROOT) if is_student_copy(ROOT) else {
        "exercises": list(scan(ROOT)[1].values())}
    exercises = chosen_exercises(marker, args.ids, "check:")
    if args.check_only:
        return 0
    build = os.path.join(ROOT, "build", "release")
    log = os.path.join(ROOT, "build", "check-build.log")
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    open(log, "w").close()
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")) and \
            run_logged(["cmake", "--preset", "release"], log, cwd=ROOT) != 0:
        print(f"check: configuring failed (log: {log})", file=sys.stderr)
        return 1
    say(f"building exercise {', '.join(e['id'] for e in exercises)}'s tests (log: {log})")
    result = grade_run(ROOT, build, exercises, [], "", args.jobs, log)
    if not result["build_ok"]:
        print("\nThe build failed; the compiler says:\n\n" + result["build_message"])
        return 1
    for e in result["exercises"]:
        where = "; ".join(f"{f['function']} in {f['file']}" for f in e["functions"])
        print(f"\nexercise {e['id']} ({where}): {e['passed']} of {e['tests']} tests pass")
        for t in (t for t in result["tests"] if t["exercise"] == e["id"]):
            print(f"  {'PASS' if t['passed'] else 'FAIL'}  {t['claim']}")
            if not t["passed"] and t["feedback"]:
                print("\n".join("        " + line for line in t["feedback"].splitlines()))
    done = all(e["status"] == "done" for e in result["exercises"])
    print(f"\n{'all pass' if done else 'not yet'} ({result['elapsed']:.1f} s)")
    return 0 if done else 1

