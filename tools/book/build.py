"""The build, in one place: the Debian packages the book needs, configure/build/ctest, the
chapters (chapters/NN-slug/) and the targets their tests need. ./book's commands (book.cli)
and the homework product (book.homework) both build through here."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

# tools/book/build.py: the book is two folders up from the package.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Debian packages the book needs.
BUILD_PACKAGES = ("cmake", "make", "ninja-build", "g++", "ccache", "libeigen3-dev", "doctest-dev",
                  "libcli11-dev", "nlohmann-json3-dev", "libfmt-dev", "libbenchmark-dev",
                  "gnuplot-nox", "doxygen", "graphviz", "libjs-mathjax", "fonts-mathjax",
                  "python3", "python3-pygments", "python3-markdown-it", "doxygen-awesome-css",
                  "libjs-lunr", "python3-pylatexenc", "emscripten", "python3-yaml",
                  # the PDF of the book: Chromium prints the pages, pdfunite joins them;
                  # a font with Chinese glyphs for the sources' titles and the errata's quotes
                  "chromium", "poppler-utils", "fonts-noto-cjk")
# What grading needs (the exercises' tests: no site, no benchmarks), in Debian and Ubuntu alike:
# ./book grade on a GitHub-hosted runner and the autograder's setup.sh install only these.
GRADE_PACKAGES = ("cmake", "ninja-build", "g++", "ccache", "libeigen3-dev", "doctest-dev",
                  "libcli11-dev", "nlohmann-json3-dev", "libfmt-dev", "python3")
# npm installs axe-core, the accessibility engine of the page test (tests/site/package.json).
# python3-jsonschema checks grades against Gradescope's results spec (tests/platforms.py).
# qemu-user runs the grading binaries on a CPU without AVX-512 (tests/test_portable.py);
# python3-tomli is what grading reads chapters/exercises.toml with on Python 3.10 (tests/test_homework.py).
TEST_PACKAGES = ("npm", "python3-jsonschema", "qemu-user", "python3-tomli")
# The peers of the benchmarks (bench/peers/): PyTorch and NumPy on OpenBLAS, the BLAS a user has.
BENCH_PACKAGES = ("python3-torch", "python3-numpy", "libopenblas0-pthread")


# (start time, message) of each stage said so far: a slow stage shows in ./book's own output.
STAGES = []
# (start time, end time or None, message) of each stage run beside the others (a background
# build).
BESIDE = []


def say(message, stage=True):
    """Starts a stage (or, with stage=False, only says something): its message, with the time
    since the command started."""
    now = time.monotonic()
    if stage or not STAGES:
        STAGES.append((now, message))
    line = f"==> [{now - STAGES[0][0]:5.0f} s] {message}"
    print(f"\033[1m{line}\033[0m" if sys.stderr.isatty() else line, file=sys.stderr, flush=True)


def stage_times():
    """Each stage said so far and how long it took (the last one until now), then the total."""
    if not STAGES:
        return ""
    ends = [t for t, _ in STAGES[1:]] + [time.monotonic()]
    rows = [f"  {end - start:6.0f} s  {message}" for (start, message), end in zip(STAGES, ends)]
    rows += [f"  {(end or ends[-1]) - start:6.0f} s  {message}, beside the stages above"
             for start, end, message in BESIDE]
    return "\n".join(rows + [f"  {ends[-1] - STAGES[0][0]:6.0f} s  in all"])


def jobs():
    """How many compile jobs: the processors this process may run on (as nproc counts)."""
    try:
        return len(os.sched_getaffinity(0)) or 2
    except (AttributeError, OSError):
        return os.cpu_count() or 2


def exit_code(returncode):
    """A child's exit code as a shell reports it: 128 + N for a child killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def run_or_exit(cmd, **kw):
    """Runs `cmd` in the book; a failure ends ./book with the command's exit code."""
    rc = subprocess.run(cmd, cwd=kw.pop("cwd", ROOT), **kw).returncode
    if rc != 0:
        sys.exit(exit_code(rc))


def installed_names():
    """The installed packages and the names they provide (NodeSource's nodejs provides npm,
    and conflicts with Debian's npm: asking for that one would break the machine's node)."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Status}|${Package}|${Provides}\n"],
                       capture_output=True, text=True)
    names = set()
    for line in r.stdout.splitlines():
        status, package, provides = (line.split("|") + ["", ""])[:3]
        if status == "installed":
            names.add(package)
            names.update(p.split()[0] for p in provides.split(",") if p.strip())
    return names


def ensure_packages(packages):
    """Installs the missing Debian packages as root; otherwise prints the apt-get line that
    would and exits 1. Off Debian it only names them."""
    if not shutil.which("dpkg-query"):
        say("not a Debian system: make sure these (or their equivalents) are installed: "
            + " ".join(packages))
        return
    have = installed_names()
    missing = [p for p in packages if p not in have]
    if not missing:
        return
    if os.geteuid() != 0:
        print(f"book: missing Debian packages: {' '.join(missing)}", file=sys.stderr)
        print("book: install them with:", file=sys.stderr)
        print("  sudo apt-get update && sudo apt-get install -y --no-install-recommends "
              + " ".join(missing), file=sys.stderr)
        sys.exit(1)
    say(f"installing {' '.join(missing)}")
    run_or_exit(["apt-get", "update", "-qq"])
    run_or_exit(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def configure(preset):
    """Configures build/PRESET once; cmake re-runs itself later when a CMakeLists.txt changes."""
    if os.path.isfile(os.path.join(ROOT, "build", preset, "CMakeCache.txt")):
        return
    say(f"configuring (preset {preset})")
    run_or_exit(["cmake", "--preset", preset], stdout=subprocess.DEVNULL)


def build_command(preset, targets=()):
    return ["cmake", "--build", "--preset", preset, "--parallel", str(jobs()),
            *(["--target", *targets] if targets else [])]


def build(preset, targets=()):
    say(f"building (preset {preset}{': ' + ' '.join(targets) if targets else ''})")
    run_or_exit(build_command(preset, targets))


def start_build(preset, targets):
    """Starts `build(preset, targets)` beside what follows, at the lowest CPU priority (it takes
    only what the other stages leave idle), its output in build/PRESET/book-build.log; returns
    what finish_build waits for."""
    log = os.path.join(ROOT, "build", preset, "book-build.log")
    message = f"building (preset {preset}: {' '.join(targets)})"
    say(f"{message}, beside the next stages (log: {os.path.relpath(log, ROOT)})", stage=False)
    with open(log, "w") as f:
        process = subprocess.Popen(["nice", "-n", "19", *build_command(preset, targets)],
                                   cwd=ROOT, stdout=f, stderr=subprocess.STDOUT,
                                   start_new_session=True)  # stop_build ends it whole
    BESIDE.append([time.monotonic(), None, message])
    return process, log, preset, BESIDE[-1]


def finish_build(started):
    """Waits for a build start_build began; a failure shows the end of its log and ends ./book
    with its exit code."""
    process, log, preset, record = started
    if process.poll() is None:
        say(f"waiting for the build of preset {preset} (log: {os.path.relpath(log, ROOT)})")
    rc = process.wait()
    record[1] = time.monotonic()
    if rc != 0:
        with open(log, errors="replace") as f:
            sys.stderr.write("".join(f.readlines()[-40:]))
        print(f"the build failed (exit {exit_code(rc)}); its whole output: {log}",
              file=sys.stderr)
        sys.exit(exit_code(rc))


def stop_build(started):
    """Ends a build start_build began, if it still runs (./book stops early)."""
    process, _, _, record = started
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # cmake, ninja and the compilers
        process.wait()
        record[2] += " (stopped unfinished)"
    elif process.returncode != 0:
        record[2] += f" (failed, exit {exit_code(process.returncode)})"
    record[1] = record[1] or time.monotonic()  # (or a little after it ended)


def ctest(preset, *args):
    run_or_exit(["ctest", "--preset", preset, *args])


# ---- the chapters and the targets their tests need ----------------------------------------------

def chapter_numbers(root=ROOT):
    """NN of every chapters/NN-slug/, sorted."""
    return sorted(d[:2] for d in os.listdir(os.path.join(root, "chapters"))
                  if re.match(r"\d\d-", d) and os.path.isdir(os.path.join(root, "chapters", d)))


# Target: its folder in the build tree. The test binaries of tests/ (every chapter's are
# test-NN) and live-reference, which a test runs (the live figures' compute functions).
LIBRARY_TESTS = {"test-lib": "tests", "test-harness": "tests", "test-live": "tests",
                 "live-reference": "bin"}


def build_targets(root=ROOT):
    """Every test binary (a grading tree's hidden tests' and the students' hand-in code's too:
    a test binary not built leaves a failing placeholder test in ctest) and chapter program
    (what the exercises' tests need; no site)."""
    nn = chapter_numbers(root)
    hidden = [f"test-{n}-hidden" for n in nn
              if glob.glob(os.path.join(root, "chapters", f"{n}-*", "hidden", "test*.cpp"))]
    handin = [f"test-{n}-handin" for n in nn
              if glob.glob(os.path.join(root, "chapters", f"{n}-*", "test_handin.cpp"))]
    return (list(LIBRARY_TESTS) + [f"test-{n}" for n in nn] + hidden + handin
            + [f"ch{n}" for n in nn])


# ---- a build tree of a copy of the book (validate's, a grader's, an autograder's) ---------------

def run_logged(cmd, log=None, **kw):
    """Runs `cmd`, its output appended to `log` (after the command line) when given."""
    if log:
        with open(log, "a") as f:
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **kw).returncode
    return subprocess.run(cmd, **kw).returncode


LEAN_BUILD = os.path.join("build", "lean")


def lean_configure(src, log):
    """Configures SRC/build/lean: the tests and programs only (no site, no benchmarks), for
    x86-64's baseline CPU, never -march=native: a grader's image is built on one machine and
    run on others (a binary with AVX-512 dies with SIGILL on a CPU without it), and a grade
    must not depend on the CPU that computed it (vector width changes the last bits).
    Every lean tree (validate's, grade --instructor's, an autograder's) sits at the same place
    inside its own copy of the book, and the compiler runs through ccache with base_dir set to
    the copy (CMakeLists.txt): the same file compiled in another copy is a cache hit, so only
    what differs is compiled."""
    build = os.path.join(src, LEAN_BUILD)
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.isfile(cache):  # configured; one from before BOOK_NATIVE=OFF is configured again
        with open(cache, errors="replace") as f:
            if "BOOK_NATIVE:BOOL=OFF" in f.read():
                return 0
    return run_logged(["cmake", "-S", src, "-B", build, "-G", "Ninja",
                       "-DCMAKE_BUILD_TYPE=Release", "-DBOOK_WITH_SITE=OFF",
                       "-DBOOK_WITH_BENCH=OFF", "-DBOOK_NATIVE=OFF"], log)


def cmake_build(build, targets, log, jobs):
    return run_logged(["cmake", "--build", build, "--parallel", str(jobs), "--target", *targets],
                      log)


def run_ctest(build, label_regex=None, exclude_regex=None, jobs=2, log=None, name_regex=None,
              env=None, timeout=None):
    """{test name: (status, output)} of one ctest run; status is passed, failed or skipped,
    output what the test printed (ctest's JUnit report). `env`: the tests' environment;
    `timeout`: seconds a test may take."""
    junit = os.path.join(build, "homework-ctest.xml")
    if os.path.exists(junit):
        os.remove(junit)
    cmd = ["ctest", "--test-dir", build, "-j", str(jobs), "--output-junit", junit,
           "--no-tests=ignore"]
    if label_regex:
        cmd += ["-L", label_regex]
    if exclude_regex:
        cmd += ["-LE", exclude_regex]
    if name_regex:
        cmd += ["-R", name_regex]
    if timeout:
        cmd += ["--timeout", str(timeout)]
    run_logged(cmd, log, env=env)
    results = {}
    if not os.path.isfile(junit):
        return results
    for case in ET.parse(junit).getroot().iter("testcase"):
        status = case.get("status", "")
        failed = case.find("failure") is not None or case.find("error") is not None
        skipped = status in ("notrun", "disabled") or case.find("skipped") is not None
        out = case.find("system-out")
        results[case.get("name")] = ("skipped" if skipped
                                     else "failed" if failed or status == "fail" else "passed",
                                     out.text or "" if out is not None else "")
    return results


def labels_of(build, binaries=None):
    """{test name: [labels]} from `ctest --show-only=json-v1`; with `binaries` (a dict),
    also {test name: the book's binaries its command runs (test-NN, chNN)}."""
    r = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                       capture_output=True, text=True)
    out = {}
    if r.returncode != 0:
        return out
    for t in json.loads(r.stdout).get("tests", []):
        labels = []
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                labels = p.get("value", [])
        out[t["name"]] = labels
        if binaries is not None:
            binaries[t["name"]] = [os.path.basename(c) for c in t.get("command", [])
                                   if re.fullmatch(r"test-[\w-]+|ch\d\d", os.path.basename(c))]
    return out
