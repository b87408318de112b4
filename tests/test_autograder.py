#!/usr/bin/env python3
"""End to end: the autograder bundle grades submissions as Gradescope and PrairieLearn run it,
under their memory and CPU limits, and hostile submissions cannot game or break it.

./book release --autograder T/ag writes the bundle; T/ag/setup.sh installs nothing here (the
packages are present) and builds the book's tests with the stubs; then T/ag/run_autograder
--submission S --results R grades. Where this machine can (root, cgroup v1), each grading runs
in a cgroup with a platform's default limits: Gradescope's 768 MB and half a CPU,
PrairieLearn's 2 GiB and 0.9 CPU; the grading time and the cgroup's peak memory are printed.
Every results.json is checked by the platform's own rules (tests/platforms.py).

1. the instructor's files (the solutions): full marks;
2. nothing submitted: 0 points, each public test says which stub to write, each hidden test
   shows pass/fail and its claim only;
3. hostile code, one kind in each exercise's file: std::abort (01.6), an output flood (02.6),
   an endless loop (03.1), std::_Exit(0) (04.6), a 3 MB failure message (05.6), a call of a
   function defined nowhere (06.6: it compiles but does not link). Each costs its own exercise
   every point, each public test saying why, and nothing else; graded for both platforms;
4. more hostile code: a file that does not compile (04.6), code that searches every file it
   can read for the hidden tests and prints what it finds (03.1), and edited harness files
   (tests/doctest_main.cpp that passes everything, CMake files, points) in the submission.
   The hidden tests appear in nothing a student sees; the harness edits change nothing;
5. PrairieLearn, one question per exercise (--exercise), graded by an image made without the
   bundle's hidden-tests/ (PrairieLearn pulls public images; no hidden test's name or line is
   anywhere in it, build included), the hidden tests brought in with --hidden-tests from the
   course's serverFilesCourse: the exercise's own score; a file that does not compile makes
   the attempt not gradable.

Bad input (a bundle inside the book) is refused before anything is written. The builds reuse
the full book's objects through ccache: only the files that differ are compiled.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import platforms
from book.build import ROOT
from book.homework.course import EXERCISES_FILE, load_exercises
from book.homework.leak_test import distinctive_lines, leaks
from book.homework.markers import hidden_test_names, scan
from checks import check, verdict


measured = []  # (limits, submission, seconds, peak MiB) for the table at the end

# A platform's default limits for a grader: (memory in bytes, CPUs).
LIMITS = {"Gradescope": (768 * 10**6, 0.5), "PrairieLearn": (2 << 30, 0.9)}
# Its timeout for a whole grading: Gradescope's "It took longer than 600 seconds to run",
# PrairieLearn's maximum; and the one docs/instructors.md tells a PrairieLearn question of one
# exercise to set. A grading here must end within it, and its CPU time, spread over the
# platform's CPU share, must take at most half of it (the platforms' machines differ from this
# one; and here other tests can take part of that share).
TIMEOUT_S = {"Gradescope": 600, "PrairieLearn": 600}
QUESTION_TIMEOUT_S = 120


def cgroup(platform):
    """[memory dir, cpu dir] of a cgroup v1 with `platform`'s limits, or None where this
    machine cannot make one (not root, or no cgroup v1 memory and cpu controllers)."""
    memory, cpus = LIMITS[platform]
    dirs = [f"/sys/fs/cgroup/memory/book-test-{platform.lower()}",
            f"/sys/fs/cgroup/cpu/book-test-{platform.lower()}"]
    try:
        for d in dirs:
            os.makedirs(d, exist_ok=True)
        write(dirs[0], "memory.limit_in_bytes", memory)
        write(dirs[1], "cpu.cfs_period_us", 100000)
        write(dirs[1], "cpu.cfs_quota_us", int(cpus * 100000))
    except OSError as e:
        print(f"skip: no cgroup with {platform}'s limits on this machine ({e})")
        return None
    return dirs


# Runs a command and writes the largest resident set any process under it reached (KiB; the
# cgroup's own peak counts the page cache, which fills any limit and is given back on demand)
# and the CPU seconds they all used.
RSS_PROBE = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[2:]); "
             "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
             "open(sys.argv[1], 'w').write(f'{u.ru_maxrss} {u.ru_utime + u.ru_stime}'); "
             "sys.exit(rc)")


def read_oom_kills(memory_dir):
    """How many processes the kernel has killed in this memory cgroup for lack of memory."""
    with open(os.path.join(memory_dir, "memory.oom_control")) as f:
        fields = dict(line.split() for line in f if line.strip())
    return int(fields.get("oom_kill", 0))


def write(directory, name, value):
    with open(os.path.join(directory, name), "w") as f:
        f.write(f"{value}\n")


def grade(bundle, submission, results, *extra, limits=None, what="", env=None, timeout=None):
    """(completed process, results.json as a dict or None, its bytes); with `limits` (a
    platform's name), run inside that platform's cgroup, time and peak memory recorded."""
    groups = cgroup(limits) if limits else None
    if groups:
        oom_kills = read_oom_kills(groups[0])
    rss_file = os.path.join(os.path.dirname(results), "max-rss-" + os.path.basename(results))
    # A shell puts itself into the cgroup, then becomes the grading: no preexec_fn, which is
    # not safe while another thread grades beside this one.
    enter = "".join(f'echo $$ > "{d}/tasks" && ' for d in groups or [])
    t0 = time.monotonic()
    r = subprocess.run(["sh", "-c", enter + 'exec "$@"', "sh", sys.executable, "-c", RSS_PROBE,
                        rss_file, os.path.join(bundle, "run_autograder"), "--submission",
                        submission, "--results", results, *extra], capture_output=True,
                       text=True, env=dict(os.environ, **(env or {})))
    seconds = time.monotonic() - t0
    if groups:
        with open(rss_file) as f:
            rss_kib, cpu_seconds = f.read().split()
        peak = int(rss_kib) / 1024
        # The time it takes with the platform's whole CPU share: this machine's other tests
        # can take part of that share (the wall time is then longer than the platform's).
        own_share = float(cpu_seconds) / LIMITS[limits][1]
        killed = read_oom_kills(groups[0]) - oom_kills
        measured.append((limits, what, seconds, peak))
        check(killed == 0, f"{what}: no process killed for lack of memory under {limits}'s "
              "limits (an output flood once filled the contract test's memory)")
        timeout = timeout or TIMEOUT_S[limits]
        check(seconds < timeout and own_share < timeout / 2,
              f"{what}: graded in {seconds:.0f} s under {limits}'s limits, within the timeout "
              f"({timeout} s); {float(cpu_seconds):.0f} CPU-s, {own_share:.0f} s with the "
              f"platform's {LIMITS[limits][1]} CPU, within half of it")
        print(f"     ({what}: {seconds:.1f} s under {limits}'s limits; the largest process "
              f"peaked at {peak:.0f} MiB; {killed} processes killed for lack of memory)")
    else:
        print(f"     ({what}: {seconds:.1f} s, no limits)")
    path = os.path.join(results, "results.json")
    raw = open(path, "rb").read() if os.path.isfile(path) else None
    if r.returncode != 0 or raw is None:
        print(r.stdout[-3000:], r.stderr[-3000:])
    return r, (json.loads(raw) if raw else None), raw


def run_timed(what, cmd):
    """subprocess.run(cmd), its wall time printed: a slow step shows in the test's output."""
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(f"     ({what}: {time.monotonic() - t0:.1f} s)")
    return r


def exercise_of(test_name):
    return test_name.split()[0]


def plant(tree, rel, exercise, statement, includes=""):
    """Puts `statement` first in the function of `exercise` in tree/rel."""
    path = os.path.join(tree, rel)
    text = open(path).read()
    marker = f"  // BEGIN SOLUTION {exercise}"
    assert marker in text, (rel, exercise)
    with open(path, "w") as f:
        f.write("#include <cstdio>\n#include <cstdlib>\n#include <stdexcept>\n#include <string>\n"
                + includes + text.replace(marker, f"  {statement}\n{marker}"))


def visible_text(doc):
    """Everything a student sees of a results.json before grades are published."""
    if "tests" not in doc:
        return json.dumps(doc)
    shown = [t for t in doc["tests"] if t.get("visibility", "visible") == "visible"]
    return json.dumps({k: v for k, v in doc.items() if k != "tests"}) + json.dumps(shown)


def main():
    files_marked, exercises = scan(ROOT)
    files = sorted({f["file"] for e in exercises.values() for f in e["functions"]})
    file_of = {i: e["functions"][0]["file"] for i, e in exercises.items()}
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # as /autograder is: student code runs as nobody and enters it
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
        hidden_text = "\n".join(line for _, regions in files_marked.values() for r in regions
                                if r.kind == "hidden" for line in r.lines)
        leaked = leaks(os.path.join(bundle, "book"),
                       [x for x in distinctive_lines(files_marked)
                        if x[1] == "solution" or (x[1].startswith("worked")
                                                  and x[2] not in hidden_text)])
        check(not leaked, f"no solution text in the bundle ({leaked[:2]})")

        # PrairieLearn pulls public images: its image gets the bundle without hidden-tests/,
        # which the course keeps in serverFilesCourse (docs/instructors.md).
        image = os.path.join(tmp, "pl-image", "grader")
        course_files = os.path.join(tmp, "serverFilesCourse", "attention-verified-hidden")
        shutil.copytree(bundle, image, symlinks=True)
        shutil.move(os.path.join(image, "hidden-tests"), course_files)

        r = run_timed("the bundle's setup.sh", [os.path.join(bundle, "setup.sh")])
        check(r.returncode == 0, "setup.sh builds the tests with the stubs"
              + ("" if r.returncode == 0 else f" ({r.stderr[-2000:]})"))
        if r.returncode != 0:
            return 1

        # The bundle's binaries are portable: an image built on one host grades on another.
        lean = os.path.join(bundle, "book", "build", "lean")
        binaries = [os.path.join(lean, "tests", "test-lib")] + sorted(
            glob.glob(os.path.join(lean, "chapters", "test-[0-9][0-9]")))
        r = run_timed("the test binaries on a Haswell", [
            sys.executable, "-B", os.path.join(ROOT, "tests", "test_portable.py"), *binaries])
        print(r.stdout, end="")
        check(r.returncode == 0, f"the bundle's {len(binaries)} test binaries run on a CPU "
              "without AVX-512 (qemu-user, Haswell)" + ("" if r.returncode == 0
                                                         else f" ({r.stderr[-1000:]})"))

        # 1. The solutions: full marks.
        correct = os.path.join(tmp, "correct")
        for rel in files:  # as a student's repository, one folder down
            dst = os.path.join(correct, "my-book", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, rel), dst)
        r, doc, raw = grade(bundle, correct, os.path.join(tmp, "r1"), limits="Gradescope",
                            what="the solutions")
        check(r.returncode == 0 and doc is not None, "a correct submission is graded")
        if doc is None:
            return 1
        check(not platforms.gradescope_problems(doc),
              f"Gradescope accepts it ({platforms.gradescope_problems(doc)[:3]})")
        top = round(sum(t["max_score"] for t in doc["tests"]), 4)
        want = sum(e["points"] for i, e in load_exercises(ROOT).items() if i in exercises)
        check(doc["score"] == top == want and top > 0 and
              all(t["score"] == t["max_score"] for t in doc["tests"]),
              f"the solutions score full marks ({doc['score']} of {top}; "
              f"{EXERCISES_FILE} gives {want})")
        ids = {exercise_of(t["name"]) for t in doc["tests"]}
        check(ids == set(exercises), f"every exercise is graded ({sorted(ids)})")
        full = {t["name"]: t["max_score"] for t in doc["tests"]}

        # 2. Nothing submitted: the stubs, 0 points, clear messages, hidden tests quiet.
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        r, doc, raw = grade(bundle, empty, os.path.join(tmp, "r2"), what="nothing submitted")
        check(doc is not None and doc["score"] == 0 and not platforms.gradescope_problems(doc),
              "the stubs score 0, in a results.json Gradescope accepts")
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

        # 3. Hostile code, one kind in each exercise; graded for Gradescope and PrairieLearn.
        hostile = os.path.join(tmp, "hostile")
        shutil.copytree(os.path.join(correct, "my-book"), hostile)
        planted = {  # exercise: (first statement of its function, what its public tests say)
            "01.6": ("std::abort();", "CRASHED: SIGABRT"),
            "02.6": ('for (;;) std::fputs("flood flood flood flood\\n", stdout);',
                     "output limit"),
            "03.1": ("for (volatile bool forever = true; forever;) {}", "time limit"),
            "04.6": ("std::_Exit(0);", "before doctest finished"),
            "05.6": ("throw std::runtime_error(std::string(3000000, 'x'));", "more characters"),
            "06.6": ("double helper_never_defined(); if (helper_never_defined() > 0) return 0;",
                     "helper_never_defined"),
        }
        for exercise, (statement, _) in planted.items():
            plant(hostile, file_of[exercise], exercise, statement)

        # 4. A file that does not compile, code that hunts for the hidden tests, and the
        #    harness edited in the submission.
        sneaky = os.path.join(tmp, "sneaky")
        shutil.copytree(os.path.join(correct, "my-book"), sneaky)
        with open(os.path.join(sneaky, file_of["04.6"]), "a") as f:
            f.write("\nint this_does_not_compile( {\n")
        # (from the sources: a needle written here would be found in this file, which the
        # bundle holds)
        needles = hidden_test_names(files_marked)[:3] + [
            x[2] for x in distinctive_lines(files_marked) if x[:2] == ("03.1", "hidden")][:1]
        hunt = (
            # (the bundle, not /: this machine also holds the instructor's book, which no
            # grading container has)
            "{ std::string found; std::error_code ec;"
            f' const std::filesystem::path top = R"({bundle})";'
            " for (std::filesystem::recursive_directory_iterator it(top,"
            " std::filesystem::directory_options::skip_permission_denied, ec), end;"
            " !ec && it != end; it.increment(ec)) {"
            " std::error_code e2; if (!it->is_regular_file(e2)) continue;"
            " std::ifstream in(it->path(), std::ios::binary);"
            " const std::string text((std::istreambuf_iterator<char>(in)),"
            " std::istreambuf_iterator<char>());"
            # (the needles reversed: written as they are, this file would hold them)
            " for (std::string needle : {" + ", ".join(f'R"({n[::-1]})"' for n in needles)
            + "}) { std::reverse(needle.begin(), needle.end());"
            " const auto at = text.find(needle);"
            " if (at != std::string::npos) found += it->path().string() + \": \" +"
            " text.substr(at, 200) + \"\\n\"; } }"
            " std::fputs(found.c_str(), stdout);"
            " throw std::runtime_error(\"hidden tests found: [\" + found + \"]\"); }")
        plant(sneaky, file_of["03.1"], "03.1", hunt,
              "#include <algorithm>\n#include <filesystem>\n#include <fstream>\n"
              "#include <iterator>\n")
        harness = {"tests/doctest_main.cpp": "int main() { return 0; }\n",
                   "chapters/CMakeLists.txt": "this is not CMake\n",
                   "chapters/exercises.toml": '["03.1"]\npoints = 1000\n',
                   "chapters/03-least-squares/test_exercises.cpp": "// no tests\n"}
        for rel, text in harness.items():
            os.makedirs(os.path.dirname(os.path.join(sneaky, rel)), exist_ok=True)
            with open(os.path.join(sneaky, rel), "w") as f:
                f.write(text)

        # 5. PrairieLearn, one question per exercise, from an image without the hidden tests.
        r = run_timed("PrairieLearn's image's setup.sh", [os.path.join(image, "setup.sh")])
        check(r.returncode == 0, "PrairieLearn's image (no hidden-tests/) builds"
              + ("" if r.returncode == 0 else f" ({r.stderr[-2000:]})"))
        secret = hidden_test_names(files_marked) + [x[2] for x in distinctive_lines(files_marked)
                                                    if x[1] == "hidden"]
        found = [(os.path.relpath(os.path.join(d, f), image), x[:40])
                 for d, _, names in os.walk(image) for f in names
                 for data in [open(os.path.join(d, f), "rb").read()]
                 for x in secret if x.encode() in data]
        check(secret and not found, f"no hidden test's name or line anywhere in the image, "
              f"its build included ({len(secret)} looked for; {found[:3]})")

        # (--time-limit 5: a test case takes milliseconds, a contract test 5 to 14 s on half a
        # CPU and gets 6 times the limit.)
        # The gradings of 3, 4 and 5 run side by side in their two containers, each under its
        # own platform's limits (a platform's CPU limit is per container, and a grading
        # changes its container's book): the bundle grades hostile code for Gradescope, then
        # the sneaky code; PrairieLearn's image grades its questions from the image as set
        # up, then the hostile code, the hidden tests brought from serverFilesCourse.
        questions = ((correct, "03.1", 1.0), (sneaky, "03.1", 0.0), (sneaky, "04.6", None))

        def in_bundle():
            return [grade(bundle, hostile, os.path.join(tmp, "r3-gradescope"), "--format",
                          "gradescope", "--time-limit", "5", limits="Gradescope",
                          what="hostile code in every exercise"),
                    grade(bundle, sneaky, os.path.join(tmp, "r4"), "--time-limit", "5",
                          limits="Gradescope", what="sneaky code")]

        def in_image():
            return [grade(image, sub, os.path.join(tmp, f"r5-{exercise}-{want}"),
                          "--format", "prairielearn", "--exercise", exercise,
                          "--hidden-tests", course_files,
                          "--time-limit", "5", limits="PrairieLearn",
                          what=f"one question ({exercise}), no ccache",
                          # (each PrairieLearn job starts from the image: no object of
                          # the hidden tests' binary, and no ccache, is there)
                          env={"CCACHE_DISABLE": "1"}, timeout=QUESTION_TIMEOUT_S)
                    for sub, exercise, want in questions] + [
                grade(image, hostile, os.path.join(tmp, "r3-prairielearn"), "--format",
                      "prairielearn", "--hidden-tests", course_files, "--time-limit", "5",
                      limits="PrairieLearn", what="hostile code in every exercise")]
        with ThreadPoolExecutor(2) as pool:
            bundle_graded, image_graded = pool.submit(in_bundle), pool.submit(in_image)
            bundle_graded, image_graded = bundle_graded.result(), image_graded.result()

        # 3. Hostile code: each exercise scores 0, for both platforms.
        for platform, fmt, graded in (("Gradescope", "gradescope", bundle_graded[0]),
                                      ("PrairieLearn", "prairielearn", image_graded[-1])):
            r, doc, raw = graded
            check(r.returncode == 0 and doc is not None, f"{platform}: hostile code is graded "
                  "without a crash")
            if doc is None:
                return 1
            problems = (platforms.gradescope_problems(doc) if fmt == "gradescope"
                        else platforms.prairielearn_problems(raw))
            check(not problems, f"{platform} accepts the results ({len(raw)} bytes; "
                  f"{problems[:3]})")
            score = "score" if fmt == "gradescope" else "points"
            for exercise, (statement, says) in planted.items():
                mine = [t for t in doc["tests"] if exercise_of(t["name"]) == exercise]
                # (the program's contract test runs the code in a child: it fails its own
                # way; hidden tests say nothing)
                shown = [t for t in mine if "command-line contract" not in t["name"]
                         and t["name"].split(" ", 1)[1] not in hidden_test_names(files_marked)]
                odd = [t for t in mine if t[score] != 0 or t in shown and says not in t["output"]]
                check(mine and not odd,
                      f"{platform}: {exercise} ({statement[:30]}...) scores 0 of "
                      f"{round(sum(full[t['name']] for t in mine), 4):g}, each public test saying '{says}'"
                      + "".join(f"\n     {t['name']}: {t[score]}, {t['output'][:300]!r}"
                                for t in odd[:3]))
            others = [t for t in doc["tests"] if exercise_of(t["name"]) not in planted]
            check(not others, f"{platform}: every exercise was hostile ({len(others)} others)")

        # 4. The sneaky code.
        r, doc, raw = bundle_graded[1]
        check(r.returncode == 0 and doc is not None and not platforms.gradescope_problems(doc),
              "a submission that does not compile, hunts for hidden tests and edits the "
              "harness is graded without a crash, in a results.json Gradescope accepts")
        if doc is None:
            return 1
        units = [t for t in doc["tests"] if exercise_of(t["name"]) == "04.6"]
        check(units and all(t["score"] == 0 for t in units) and
              round(sum(t["max_score"] for t in units), 4) == round(sum(
                  v for n, v in full.items() if exercise_of(n) == "04.6"), 4) and
              any("unit_factor.cpp" in t["output"] and "error" in t["output"] for t in units),
              "the exercise whose file does not compile scores 0 of its real maximum, with "
              "the compiler's message")
        hat = [t for t in doc["tests"] if exercise_of(t["name"]) == "03.1"]
        searched = [t for t in hat if "hidden tests found: [" in t["output"]]
        seen = visible_text(doc)
        shown = [n for n in needles + [x for x in hidden_text.split("\n") if len(x) > 40]
                 if n.strip() in seen]
        if os.geteuid() == 0:
            check(searched and not shown and all(t["score"] == 0 for t in hat),
                  f"code that searches every file it can read for the hidden tests finds "
                  f"none ({len(searched)} public tests show its empty search; hidden text "
                  f"visible: {shown[:2]})")
        else:
            print("skip: the grader is not root here, so student code runs as this user "
                  "and can read the hidden tests (the platforms grade as root)")
        others = {t["name"]: t["score"] for t in doc["tests"]
                  if exercise_of(t["name"]) not in ("04.6", "03.1")}
        check(others and others == {n: v for n, v in full.items() if n in others},
              "the harness files in the submission change nothing: the other exercises "
              f"keep exactly their full marks ({sum(others.values())})")

        # 5. The questions.
        for (sub, exercise, want), (r, doc, raw) in zip(questions, image_graded):
            hidden_graded = [t for t in (doc or {}).get("tests", [])
                             if t["name"].split(" ", 1)[1] in hidden_test_names(files_marked)]
            check(want is None or hidden_graded,
                  f"PrairieLearn, question {exercise}: its hidden tests, brought from "
                  f"serverFilesCourse, are graded ({len(hidden_graded)})")
            problems = platforms.prairielearn_problems(raw) if raw else ["no results"]
            names = {exercise_of(t["name"]) for t in (doc or {}).get("tests", [])}
            ok = doc is not None and not problems and (
                doc.get("gradable") is False and "error" in doc.get("output", "")
                if want is None else doc.get("score") == want and names == {exercise})
            check(ok, f"PrairieLearn, question {exercise}: " + (
                "not gradable, with the compiler's message" if want is None else
                f"score {want}, its own tests only") + f" ({problems[:2]}, "
                f"{doc and doc.get('score')}, {sorted(names)})")

    if measured:
        print("\ngrading time and the largest process's peak resident memory:")
        for platform, what, seconds, peak in measured:
            memory, cpus = LIMITS[platform]
            print(f"  {platform:<13}({memory / 1e6:.0f} MB, {cpus} CPU)  {what:<34}"
                  f"{seconds:6.1f} s  {peak:6.0f} MiB")
    for platform in LIMITS:
        for d in ("memory", "cpu"):
            try:
                os.rmdir(f"/sys/fs/cgroup/{d}/book-test-{platform.lower()}")
            except OSError:
                pass
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
