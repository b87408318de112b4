"""The command line of ./book: every command README.md describes (./book help lists them).

./book (bash) makes sure Debian's python3 is there and runs `python3 -m book.cli ARGS` in its
place, so an interrupt (SIGINT, SIGTERM) reaches this process directly. Bad input (an unknown
command or option, a missing value) gets one line on stderr and exit code 2, before anything
is installed, built or written. Build commands run in the book; release, grade and check keep
the caller's directory, for the relative paths given to them.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

from book.build import (BENCH_PACKAGES, BUILD_PACKAGES, GRADE_PACKAGES, ROOT, TEST_PACKAGES,
                        build, build_targets, chapter_numbers, configure, ctest, ensure_packages,
                        exit_code, finish_build, jobs, run_or_exit, say, stage_times,
                        start_build, stop_build)
from book.homework.__main__ import main as homework_main
from book.homework.markers import is_student_copy

USAGE = """\
usage: ./book [command]

  (none)          install missing Debian packages (as root), configure, build, run every
                  chapter program, render all figures and the site; prints where the site is
  test            the same, then every test: doctest via ctest, program contracts, site checks,
                  then the tests again under AddressSanitizer + UndefinedBehaviorSanitizer
  test NN         only chapter NN: build its program and tests, run them (release build)
  run NN [opts]   build and run chapter NN's program, e.g. ./book run 01 --help
  bench [opts]    build and run every benchmark in bench/ (medians of 3 repetitions); JSON
                  goes to build/release/out/bench/; without options it also runs the peers
                  (bench/peers/: PyTorch 2's scaled_dot_product_attention in a Debian 13 tree,
                  build/peers/trixie, which it makes as root with debootstrap; PyTorch 1.13
                  and NumPy, python3-torch installed as root) and chapter 03's reduced
                  experiment, then redraws figures/perf-*.svg, the tables of
                  docs/performance.md and chapter 03's comparison; the options are
                  Google Benchmark's, as --name=value (e.g. --benchmark_filter=Softmax)
  release --out DIR [--force]
                  write the student copy of the book: every solution replaced by a stub,
                  hidden tests removed (docs/instructors.md)
  release --autograder DIR [--force]
                  write the autograder bundle: setup.sh and run_autograder for Gradescope
                  (PrairieLearn reads the same), the book with its hidden tests, no solution
  grade [--exercise ID]... [--format F] [--out FILE] [--student ID] [--instructor DIR]
                  in a student copy: build what changed, run each exercise's tests
                  (ctest -L exNN.M), print the score table; --format json, gradescope,
                  prairielearn, github-classroom or csv writes the grade for that tool
                  (each exercise's points: chapters/exercises.toml); --instructor DIR also
                  runs the hidden tests from the instructor's copy DIR
  check ID...     build and run exercise ID's public tests (e.g. ./book check 03.1); print
                  each test's claim and, for a failed one, the failing expression's values
  validate        the instructor's check: the exercises' tests pass on the solutions and
                  fail on the stubs, the release builds, every other test passes in it, no
                  solution leaks into it (./book test runs it too)
  help            this text

Bad input (an unknown command or option, a missing value) gets one line on stderr and exit
code 2, before anything is installed, built or written.

In a student copy (it has the file .book-release), ./book test runs every test except the
exercises' own, then prints the exercises' scores (./book grade) instead of failing on them.
"""

COMMANDS = "test, run, bench, release, grade, check, validate, help"
# The two sites of one build (docs/CMakeLists.txt) and the PDF of the book (book.pdf).
SITE = os.path.join(ROOT, "build", "release", "site", "html", "index.html")
SITE_INSTRUCTOR = os.path.join(ROOT, "build", "release", "site-instructor", "html", "index.html")
PDF = os.path.join(ROOT, "build", "release", "site", "html", "attention-verified.pdf")
BENCH_OUT = os.path.join("build", "release", "out", "bench")
# The caller's directory: relative paths given to release, grade and check are the caller's.
CALLER_DIR = os.getcwd()


def refuse(message):
    """Bad input: one line on stderr, exit code 2, nothing done."""
    print(f"book: {message}", file=sys.stderr)
    sys.exit(2)


def chapter_list():
    return "".join(n + " " for n in chapter_numbers())


def require_chapter(command, nn):
    """Refuses (exit 2) unless chapters/NN-*/ exists."""
    if not re.fullmatch(r"[0-9][0-9]", nn) or not glob.glob(f"{ROOT}/chapters/{nn}-*/"):
        refuse(f"{command} needs a chapter number NN, one of: {chapter_list()}(got '{nn}')")


def homework(*argv):
    """A homework command, run from the caller's directory; a failure ends ./book with it."""
    os.chdir(CALLER_DIR)
    try:
        rc = homework_main(list(argv))
    finally:
        os.chdir(ROOT)
    if rc != 0:
        sys.exit(rc)


def sync_pages():
    """The page is the program: write what the build computed (code blocks, program output,
    marked numbers) into the Markdown pages; `./book test` fails while they differ."""
    run_or_exit([sys.executable, "-B", "-m", "book.pages", "sync", ROOT,
                 os.path.join("build", "release", "out")])


def where_it_is():
    """Where the build put the two sites and the PDF."""
    say(f"the reader's site (what would be published): {SITE}")
    if is_student_copy(ROOT):  # no worked solutions here: the reader's site and its guides
        say(f"the site with the instructors' and students' guides: {SITE_INSTRUCTOR}")
    else:
        say(f"the instructor's site (with the worked solutions): {SITE_INSTRUCTOR}")
    say(f"the book as one PDF: {PDF}")


def book_all():  # the site depends on every chapter program and its outputs
    ensure_packages(BUILD_PACKAGES)
    configure("release")
    build("release", ["site", "pdf"])
    sync_pages()
    say("done.")
    where_it_is()


def book_test_chapter(nn):  # the edit loop: one chapter's program and tests, release build
    ensure_packages(BUILD_PACKAGES)
    configure("release")
    build("release", [f"ch{nn}", f"test-{nn}"])
    say(f"testing chapter {nn} (release)")
    ctest("release", "-L", f"^ch{nn}$")


def book_test():
    ensure_packages(BUILD_PACKAGES + TEST_PACKAGES)
    configure("release")
    build("release", ["all", "site", "axe"])
    if is_student_copy(ROOT):
        # The pages quote the student's own code: bring them up to date rather than fail.
        sync_pages()
        # Open exercises fail their own tests by design: run the others, then the scores.
        say("testing (release; the exercises' own tests are graded below)")
        ctest("release", "-LE", "^ex")
        configure("asan")
        build("asan", ["all"])
        say("testing (ASan + UBSan; without the exercises' own tests)")
        ctest("asan", "-LE", "^ex")
        say("all tests unrelated to the exercises passed; the exercises:")
        homework("grade")
        where_it_is()
        return
    # The sanitizer build (about 6 minutes of both cores with nothing in ccache) runs beside
    # validate and the release tests, on the CPU time their throttled gradings leave idle.
    configure("asan")
    asan_build = start_build("asan", ["all"])
    try:
        # validate first: its lean builds (the student copy, the solutions) are the objects
        # the homework tests' own copies take back from ccache, instead of each compiling
        # them at once on a new machine.
        say("validating the exercises (the student release)")
        homework("validate", "--full-tests-follow", "--jobs", str(jobs()))
        say("testing (release)")
        ctest("release")
    except BaseException:  # they failed, or Ctrl-C: nothing goes on building after ./book
        stop_build(asan_build)
        raise
    finish_build(asan_build)
    say("testing (ASan + UBSan)")
    ctest("asan")
    say("all tests passed.")
    where_it_is()


def book_validate():
    if is_student_copy(ROOT):
        refuse("validate is the instructor's check; this is a student copy (use ./book grade)")
    ensure_packages(BUILD_PACKAGES)
    configure("release")
    build("release", build_targets())
    homework("validate", "--jobs", str(jobs()))


def book_run(args):
    nn = args[0] if args else ""
    require_chapter("run", nn)
    ensure_packages(BUILD_PACKAGES)
    configure("release")
    log = os.path.join("build", "release", "book-run-build.log")
    with open(log, "w") as f:
        rc = subprocess.run(["cmake", "--build", "--preset", "release", "--parallel",
                             str(jobs()), "--target", f"ch{nn}"],
                            stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        with open(log) as f:
            sys.stderr.write(f.read())
        print(f"book: building chapter {nn} failed (log: {log})", file=sys.stderr)
        sys.exit(1)
    program = os.path.join("build", "release", "bin", f"ch{nn}")
    os.execv(program, [program, *args[1:]])


# ---- bench --------------------------------------------------------------------------------------

# Google Benchmark's options (libbenchmark 1.7), which ./book bench passes to every benchmark;
# the output file and its format are ./book's. Checked here, before the build.
BOOLEAN = (r"(true|false)", "true or false")  # a flag alone means =true
BENCH_OPTIONS = (  # (name, the values it takes as a regular expression, in words)
    ("benchmark_filter", r".+", "a regular expression"),
    ("benchmark_list_tests", *BOOLEAN),
    ("benchmark_min_time", r"[0-9]+(\.[0-9]+)?s?", "seconds, e.g. 0.5 or 0.5s"),
    ("benchmark_min_warmup_time", r"[0-9]+(\.[0-9]+)?", "seconds, e.g. 0.1"),
    ("benchmark_repetitions", r"[1-9][0-9]{0,3}", "an integer in [1, 9999]"),
    ("benchmark_enable_random_interleaving", *BOOLEAN),
    ("benchmark_report_aggregates_only", *BOOLEAN),
    ("benchmark_display_aggregates_only", *BOOLEAN),
    ("benchmark_format", r"(console|json|csv)", "console, json or csv"),
    ("benchmark_color", r"(auto|true|false)", "auto, true or false"),
    ("benchmark_counters_tabular", *BOOLEAN),
    ("benchmark_time_unit", r"(ns|us|ms|s)", "ns, us, ms or s"),
    ("benchmark_context", r"[A-Za-z_][A-Za-z0-9_]*=[^,]*(,[A-Za-z_][A-Za-z0-9_]*=[^,]*)*",
     "key=value[,key=value...]"),
    ("v", r"[0-9]{1,2}", "an integer in [0, 99]"),
)


def check_bench_options(args):
    """Refuses (exit 2) the first option a benchmark would refuse or ./book owns."""
    takes = {name: (pattern, accepts) for name, pattern, accepts in BENCH_OPTIONS}
    names = " ".join("--" + name for name in takes)
    for arg in args:
        if re.match(r"--(benchmark_out|benchmark_out_format)(=|$)", arg):
            refuse(f"bench: {arg.split('=')[0]} is set by ./book (JSON in {BENCH_OUT}/)")
        m = re.fullmatch(r"--([a-z_]+)(?:=(.*))?", arg, re.S)
        if not m:
            refuse(f"bench: unknown option '{arg}' (options, each as --name=value: {names})")
        name, value = m.group(1), m.group(2)
        if name not in takes:
            refuse(f"bench: unknown option '--{name}' (options, each as --name=value: {names})")
        pattern, accepts = takes[name]
        if value is None:
            if (pattern, accepts) != BOOLEAN:
                refuse(f"bench: --{name} needs a value (--{name}=VALUE): {accepts}")
            value = "true"
        if not re.fullmatch(pattern, value, re.S):
            refuse(f"bench: --{name}={value}: --{name} takes {accepts}")


def book_bench(args):  # every bench/bench_*.cpp; arguments go to each
    check_bench_options(args)
    started = time.monotonic()
    ensure_packages(BUILD_PACKAGES)
    # The peers run on a full run only; a missing peer never stops the book's own benchmarks.
    if not args:
        try:
            ensure_packages(BENCH_PACKAGES)
        except SystemExit:  # (after its apt-get line, for a user who is not root)
            say("bench: the peers' packages are missing (above)")
    configure("release")
    build("release", ["benchmarks", "ch03"])
    os.makedirs(BENCH_OUT, exist_ok=True)
    for program in sorted(glob.glob(os.path.join("build", "release", "bin", "bench-*"))):
        name = os.path.basename(program)
        say(name)
        run_or_exit([program, f"--benchmark_out={BENCH_OUT}/{name[len('bench-'):]}.json",
                     "--benchmark_out_format=json", "--benchmark_repetitions=3",
                     "--benchmark_report_aggregates_only=true", *args])
    if not args:  # the peers, measured in the same run; no stale peer JSON survives
        peers_started = time.monotonic()
        run_peers()
        with open(os.path.join(BENCH_OUT, "bench-run.json"), "w") as f:
            json.dump({"seconds": time.monotonic() - started,
                       "peers_seconds": time.monotonic() - peers_started,
                       "load_end": list(os.getloadavg())}, f)
    say(f"JSON results: {BENCH_OUT}/")
    if not args:  # a full run: redraw the performance page's figures and tables
        run_or_exit([sys.executable, "-B", "-m", "book.performance", BENCH_OUT])
    else:
        say("arguments given, so figures/perf-*.svg and docs/performance.md are left as they were")


def run_peers():
    for stale in glob.glob(os.path.join(BENCH_OUT, "peers-*.json")):
        os.remove(stale)
    # Chapter 03's experiment at reduced length, as bench/peers/training.py runs it in PyTorch.
    say("ch03 --runs 2 --iterations 100 --threads 2 (chapter 03's experiment, reduced)")
    reduced = os.path.join(BENCH_OUT, "ch03-reduced")
    shutil.rmtree(reduced, ignore_errors=True)
    run_or_exit([os.path.join("build", "release", "bin", "ch03"), "--runs", "2", "--iterations",
                 "100", "--threads", "2", "--out", reduced], stdout=subprocess.DEVNULL)
    # Debian's python3-torch is Debian's python's.
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    if subprocess.run([py, "-c", "import torch, numpy"], stderr=subprocess.DEVNULL).returncode:
        say(f"bench: peers skipped: {py} cannot import torch and numpy "
            f"(Debian: {' '.join(BENCH_PACKAGES)})")
    else:
        for peer in ("attention", "training"):
            say(f"peers/{peer}")
            if subprocess.run([py, "-B", f"bench/peers/{peer}.py", BENCH_OUT]).returncode:
                say(f"bench: bench/peers/{peer}.py failed; the page is drawn without it")
                json_file = os.path.join(BENCH_OUT, f"peers-{peer}.json")
                if os.path.exists(json_file):
                    os.remove(json_file)
    run_sdpa_peer()


# PyTorch 2's fused attention (SDPA) comes from Debian 13, which this Debian 12 machine does not
# have: a minimal Debian 13 tree under build/ (gitignored), entered with chroot. PyTorch reads
# the CPU from /proc and /sys (without them it reports "NO AVX"), so those and /dev are
# bind-mounted into it, but only inside a private mount namespace (unshare --mount) that ends
# with the peer's process: however the run ends, even killed, no mount is left behind, and
# `rm -rf build` can never reach the host's /dev or /sys through one.
PEER_ROOT = os.path.join("build", "peers", "trixie")
PEER_SUITE, PEER_MIRROR = "trixie", "http://deb.debian.org/debian"
PEER_READY = ".book-peer-ready"  # written last: debootstrap finished and torch imports
# In the namespace: $1 the tree, $2 bench/peers, $3 the JSON folder, then the command.
IN_PEER_ROOT = """
root=$1 peers=$2 out=$3; shift 3
for d in proc sys dev; do mount --bind "/$d" "$root/$d"; done
mkdir -p "$root/opt/book/peers" "$root/opt/book/out"
mount --bind "$peers" "$root/opt/book/peers"
mount --bind "$out" "$root/opt/book/out"
exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
"""


def debootstrap_command(target):
    return ["debootstrap", "--variant=minbase", "--include=" + ",".join(BENCH_PACKAGES),
            PEER_SUITE, target, PEER_MIRROR]


def mounts_under(path):
    """The mount points at or under `path`, as this process sees them (/proc/self/mountinfo)."""
    real = os.path.realpath(path)
    points = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), line.split()[4])
                if point == real or point.startswith(real + "/"):
                    points.append(point)
    except OSError:
        pass
    return points


def unmount_leftovers(path):
    """Unmounts what an earlier hand-made chroot left mounted under `path`, deepest first;
    returns what is still mounted there (nothing may be, before the tree is used or removed)."""
    for point in sorted(mounts_under(path), key=len, reverse=True):
        say(f"bench: unmounting {point}, left mounted from before")
        subprocess.run(["umount", "--recursive", point])
    return mounts_under(path)


def ensure_peer_root():
    """PEER_ROOT, made with debootstrap when missing (as root); None, after a line saying what
    to run, when it cannot be."""
    command = " ".join(debootstrap_command(PEER_ROOT))
    if os.geteuid() != 0:
        say(f"bench: PyTorch 2 (SDPA) skipped: it runs in a Debian 13 tree, {PEER_ROOT}, "
            f"which only root can make and enter: run ./book bench as root (it runs `{command}` "
            "once, about 1.5 GB and a few minutes)")
        return None
    missing = [tool for tool in ("unshare", "chroot", "mount") if not shutil.which(tool)]
    if missing:  # util-linux and coreutils: on Debian they always are
        say(f"bench: PyTorch 2 (SDPA) skipped: {', '.join(missing)} not found")
        return None
    if os.path.isfile(os.path.join(PEER_ROOT, PEER_READY)):
        return PEER_ROOT
    try:
        ensure_packages(("debootstrap",))
    except SystemExit:
        say("bench: PyTorch 2 (SDPA) skipped: debootstrap could not be installed")
        return None
    partial = PEER_ROOT + ".partial"
    for tree in (PEER_ROOT, partial):  # an unfinished tree is made again from the start
        if unmount_leftovers(tree):
            say(f"bench: PyTorch 2 (SDPA) skipped: something is still mounted under {tree}; "
                "unmount it (umount --recursive) and run ./book bench again")
            return None
        shutil.rmtree(tree, ignore_errors=True)
    say(f"making the Debian 13 tree for PyTorch 2: {command}")
    # In its own mount namespace too: debootstrap mounts /proc and /sys inside the tree.
    rc = subprocess.run(["unshare", "--mount", "--propagation", "private", "--",
                         *debootstrap_command(partial)]).returncode
    if rc != 0 or mounts_under(partial):
        say(f"bench: PyTorch 2 (SDPA) skipped: debootstrap failed (exit {rc}); "
            f"it left {partial} to look at")
        return None
    if in_peer_root(partial, "python3", "-c", "import torch, numpy"):
        say(f"bench: PyTorch 2 (SDPA) skipped: torch does not import in {partial}")
        return None
    with open(os.path.join(partial, PEER_READY), "w") as f:
        f.write(command.replace(partial, PEER_ROOT) + "\n")
    os.rename(partial, PEER_ROOT)
    return PEER_ROOT


def in_peer_root(root, *command):
    """`command` run in the Debian 13 tree `root`, with /proc, /sys and /dev, bench/peers/ as
    /opt/book/peers and the JSON folder as /opt/book/out, in a mount namespace of its own."""
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "--",
                           "sh", "-euc", IN_PEER_ROOT, "sh", os.path.abspath(root),
                           os.path.abspath(os.path.join("bench", "peers")),
                           os.path.abspath(BENCH_OUT), *command]).returncode


def run_sdpa_peer():
    say("peers/sdpa (PyTorch 2's scaled_dot_product_attention, Debian 13)")
    root = ensure_peer_root()
    if root is None:
        return
    if unmount_leftovers(root):
        say(f"bench: PyTorch 2 (SDPA) skipped: something is still mounted under {root}; "
            "unmount it (umount --recursive) and run ./book bench again")
        return
    rc = in_peer_root(root, "python3", "-B", "/opt/book/peers/sdpa.py", "/opt/book/out")
    if rc != 0:
        say(f"bench: bench/peers/sdpa.py failed (exit {rc}); the page is drawn without it")
        json_file = os.path.join(BENCH_OUT, "peers-sdpa.json")
        if os.path.exists(json_file):
            os.remove(json_file)
    if mounts_under(root):  # cannot happen (the namespace has ended): say so if it does
        say(f"bench: mounts left under {root}: {' '.join(mounts_under(root))}")


# ---- the commands -------------------------------------------------------------------------------

def main(argv):
    os.chdir(ROOT)
    command, args = (argv[0], argv[1:]) if argv else (None, [])
    if command is None:
        book_all()
    elif command == "":
        refuse(f"unknown command '' (commands: {COMMANDS})")
    elif command == "test":
        if len(args) > 1:
            refuse(f"test takes at most a chapter number NN, one of: {chapter_list()}"
                   f"(got '{' '.join(args)}')")
        if args:
            require_chapter("test", args[0])
            book_test_chapter(args[0])
        else:
            try:
                book_test()
            finally:  # also when a stage fails: how far it got, and how long each part took
                print("time per stage:\n" + stage_times(), file=sys.stderr)
    elif command == "run":
        book_run(args)
    elif command == "bench":
        book_bench(args)
    elif command == "release":
        homework("release", *args)
    elif command in ("grade", "check"):
        homework(command, "--check-only", *args)  # the options, before installing or building
        # grade builds the tests only (a lean tree): on a GitHub-hosted runner, not root, it
        # asks for the few packages that takes, not the site's
        ensure_packages(GRADE_PACKAGES if command == "grade" else BUILD_PACKAGES)
        homework(command, "--jobs", str(jobs()), *args)
    elif command == "validate":
        if args:
            refuse(f"validate takes no options (got '{' '.join(args)}')")
        book_validate()
    elif command in ("help", "-h", "--help"):
        if args:
            refuse(f"help takes no arguments (got '{' '.join(args)}')")
        sys.stdout.write(USAGE)
    else:
        refuse(f"unknown command '{command}' (commands: {COMMANDS}; ./book help explains them)")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:  # SIGINT while a build or a test ran: it has stopped too
        sys.exit(exit_code(-2))
