#!/usr/bin/env python3
"""The contract every chapter program keeps (DESIGN.md, "Program contract"; issue 18), checked
from outside, one table of cases run against each program.

usage: program_contract.py BINARY [--quick-args ARGS] [--slow-args ARGS] [--bad 'ARGS' OPTION]...
                           [--exercise NN.M]... [--steady-figure NAME]...

--exercise: an exercise whose code the program runs and this test grades (the student copy).
A run that ends with exit code 3 because some sections wait for OTHER exercises (results.json's
"exercises_not_done", harness::section) counts as a run: this test must not cost points of an
exercise it does not grade. Waiting for one of its own exercises fails it.

Usage errors (exit 2, exactly one line on stderr naming the option, nothing written):
- each --bad pair, an unknown flag, an --out under a file;
- `--out --quick` (a forgotten value): no directory named --quick appears;
- an --out that is a file, a symbolic link that leads nowhere (or to itself), a mount point
  (as root: a read-only tmpfs), an existing directory that is not an earlier output set (it holds
  notes.md), an output set whose results.json is a directory: all left as they were.

Runs (--quick, or ARGS of --quick-args):
- --help exits 0 and lists --seed, --out, --quick and every option of the --bad pairs;
- the same --seed gives an identical results.json, apart from measured wall-clock times (keys
  that start with time_, which no run can repeat), also into an --out named with a quote and a
  space, where the set of files is the same; integers are decimal (`--seed 010` records seed
  10, and a different seed gives a different results.json); the second run of the same seed
  runs as on a machine whose caches Eigen finds smaller, and must still agree bit for bit;
- output.txt holds no nan or inf;
- each --steady-figure NAME (a committed figure, figures/NAME.svg) is drawn the same when every
  result moves by rounding (the run rounds upward, as another CPU, compiler or order of a sum
  moves the last bits): no number of the SVG (a coordinate, a colour) moves by more than
  SVG_TOLERANCE, nothing appears or goes. A
  value at rounding level must be drawn at harness::rounding_floor, which no machine can move;
- a slow run (ARGS of --slow-args) stopped by SIGINT or SIGTERM (SIGINT also to a run started
  with SIGINT ignored, as a script's background job is) ends by that signal and leaves
  the earlier complete set in --out byte for byte, with nothing new beside it;
- as root, a run on a full filesystem (a small tmpfs) fails with one line on stderr and leaves
  the earlier set as it was; skipped where a tmpfs cannot be mounted.

No run may leave a staging directory (.NAME.partial-*) or a temporary file (.tmp-*) behind.
"""
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

failures = []
RUN_TIMEOUT = 120  # seconds; a --quick run takes a few


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def skip(what):
    print("skip: " + what, flush=True)


def default_signals():
    # A program started from a non-interactive shell's background job inherits SIGINT ignored;
    # the contract is about a program that can be interrupted.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def background_job():
    # as a non-interactive shell starts `program &`
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# The cache sizes (bytes) of another machine, as Eigen would detect them: 32 KiB, 256 KiB, 8 MiB.
OTHER_MACHINE = {"BOOK_TEST_DETECTED_CACHE_SIZES": "32768,262144,8388608"}
# Every result moved by rounding (harness/cli.cpp rounds upward instead of to nearest).
ROUNDED_UPWARD = {"BOOK_TEST_ROUND_UPWARD": "1"}
# An SVG coordinate may cross one of gnuplot's 0.01 px steps, a colour one of its 255 steps, a
# trained curve move a little; a value set by rounding moves by pixels, or appears or goes.
SVG_TOLERANCE = 1.0
OUTPUT_KEPT = 1 << 20  # bytes of a run's stdout and stderr read back (a --help is 2 KiB)
OUTPUT_FILE_LIMIT = 64 << 20  # a run that prints more is stopped (SIGXFSZ)


def limited_child():
    default_signals()
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_FILE_LIMIT, OUTPUT_FILE_LIMIT))


def run(binary, args, cwd=None, env=None):
    """Runs the program; one that overruns RUN_TIMEOUT is stopped by SIGTERM (its harness then
    cleans up), then killed with everything it started. Its output goes to files, not to this
    process's memory: a program that prints without end (a student's, when graded) is stopped
    at OUTPUT_FILE_LIMIT instead of filling the grader's memory through a pipe."""
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        p = subprocess.Popen([binary, *args], stdout=out_f, stderr=err_f, cwd=cwd,
                             env=dict(os.environ, **(env or {})),
                             preexec_fn=limited_child, start_new_session=True)
        try:
            p.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            return subprocess.CompletedProcess(p.args, -1, "", f"timed out ({RUN_TIMEOUT} s)")

        def text(f):
            f.seek(0)
            return f.read(OUTPUT_KEPT).decode("utf-8", "replace")
        return subprocess.CompletedProcess(p.args, p.returncode, text(out_f), text(err_f))


def tree(path):
    """Every file under `path` with its bytes, by relative name (directories as None)."""
    if not os.path.lexists(path):
        return None
    if not os.path.isdir(path):
        with open(path, "rb") as f:
            return f.read()
    out = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(root, name)
            if os.path.islink(full):  # symbolic links by target (some lead nowhere)
                out[os.path.relpath(full, path)] = "-> " + os.readlink(full)
            elif name in dirs:
                out[os.path.relpath(full, path)] = None
            else:
                with open(full, "rb") as f:
                    out[os.path.relpath(full, path)] = f.read()
    return out


def reproducible_text(out):
    """results.json as written, without the lines of measured times (keys time_*)."""
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        return "".join(line for line in f if not line.lstrip().startswith('"time_'))


def svg_moves(a, b):
    """How SVG text b differs from a beyond SVG_TOLERANCE (a description), or None."""
    number = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
    pa, pb = re.split(number, a), re.split(number, b)
    if len(pa) != len(pb):
        return f"{abs(len(pa) - len(pb)) // 2} numbers more or fewer"
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x == y:
            continue
        if i % 2 == 0:  # text between numbers
            return f"text {x[:40]!r} became {y[:40]!r}"
        if abs(float(x) - float(y)) > SVG_TOLERANCE:
            return f"{x} became {y}"
    return None


def one_line_naming(r, option, what):
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 1 and option in lines[0],
          f"{what}: one stderr line naming {option}: {r.stderr.strip()[:300]!r}")


def usage_error_case(binary, args, option, what, cwd=None):
    r = run(binary, args, cwd=cwd)
    check(r.returncode == 2, f"{what}: exits 2 (got {r.returncode})")
    one_line_naming(r, option, what)
    return r


class Contract:
    def __init__(self, binary, quick, slow, bad_cases, tmp, exercises=(), steady_figures=()):
        self.binary, self.quick, self.slow, self.bad_cases, self.tmp = binary, quick, slow, bad_cases, tmp
        self.exercises, self.steady_figures = exercises, steady_figures
        self.reference = None  # --out of a complete --quick --seed 7 run

    def dir(self, name):
        """A new directory under the temporary one, the parent of one case's --out."""
        path = os.path.join(self.tmp, name)
        os.mkdir(path)
        return path

    # ---- the cases, in the order they run ------------------------------------------------

    def help(self):
        h = run(self.binary, ["--help"])
        check(h.returncode == 0, "--help exits 0")
        for opt in ["--seed", "--out", "--quick"] + [o for _, o in self.bad_cases]:
            check(opt in h.stdout, f"--help lists {opt}")

    def bad_arguments(self):
        parent = self.dir("bad")
        blocker = os.path.join(parent, "a-file")
        open(blocker, "w").close()
        cases = list(self.bad_cases) + [("--no-such-flag", "--no-such-flag"),
                                        (f"--out {shlex.quote(blocker)}/sub", "--out")]
        for i, (args, option) in enumerate(cases):
            out = os.path.join(parent, f"bad-{i}")
            argv = shlex.split(args)
            if "--out" not in argv:
                argv += ["--out", out]
            usage_error_case(self.binary, argv, option, f"'{args}'")
            check(not os.path.exists(out), f"'{args}' writes nothing")
        check(os.listdir(parent) == ["a-file"], f"bad arguments leave nothing behind: {os.listdir(parent)}")

    def out_without_value(self):
        cwd = self.dir("cwd")
        usage_error_case(self.binary, ["--out", "--quick"], "--out", "'--out --quick'", cwd=cwd)
        check(os.listdir(cwd) == [], f"'--out --quick' creates nothing: {os.listdir(cwd)}")

    def out_not_an_output_set(self):
        parent = self.dir("not-a-set")
        notes = os.path.join(parent, "notes")
        os.mkdir(notes)
        with open(os.path.join(notes, "notes.md"), "w") as f:
            f.write("my notes\n")
        a_file = os.path.join(parent, "a-file")
        with open(a_file, "w") as f:
            f.write("not a directory\n")
        odd_set = os.path.join(parent, "odd-set")
        os.makedirs(os.path.join(odd_set, "results.json"))
        loop, dangling = os.path.join(parent, "loop"), os.path.join(parent, "dangling")
        os.symlink(loop, loop)
        os.symlink(os.path.join(parent, "nowhere", "out"), dangling)
        before = tree(parent)
        for out, what in [(notes, "--out holding notes.md"), (a_file, "--out naming a file"),
                          (odd_set, "--out whose results.json is a directory"),
                          (loop, "--out naming a symbolic link to itself"),
                          (dangling, "--out naming a symbolic link that leads nowhere")]:
            usage_error_case(self.binary, self.quick + ["--out", out], "--out", what)
        check(tree(parent) == before, "such an --out is left as it was, nothing added beside it")
        if os.geteuid() != 0:
            return skip("not root, so no filesystem to mount for --out")
        # The top of a filesystem cannot be renamed away: refused before the run, not after.
        top = self.dir("mount-point")
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", top],
                           capture_output=True, text=True)
        if m.returncode != 0:
            return skip(f"cannot mount a tmpfs: {m.stderr.strip()[:200]}")
        try:
            usage_error_case(self.binary, self.quick + ["--out", top], "--out",
                             "--out naming a mount point (a read-only filesystem's top)")
        finally:
            subprocess.run(["umount", top])

    def same_seed_same_results(self):
        parent = self.dir("runs")
        outs = {}
        # b runs as on a machine whose caches Eigen finds smaller (it derives the block sizes of
        # its products from them, and with them the order of each sum: harness/eigen_blocking.hpp)
        for name, seed, env in [("a", "7", None), ("it's b", "7", OTHER_MACHINE),
                                ("c", "010", None)]:
            out = os.path.join(parent, name)
            r = run(self.binary, self.quick + ["--seed", seed, "--out", out], env=env)
            # Exit code 0 alone is no proof: code that calls exit(0) midway exits 0 too.
            ok = self.completed(r, out)
            check(ok, f"{shlex.join(self.quick)} --seed {seed} --out {shlex.quote(name)} runs "
                  f"and writes its results.json (exit code {r.returncode}, stderr: "
                  f"{r.stderr.strip()[:300]!r})")
            outs[name] = out if ok else None
        check(set(os.listdir(parent)) <= set(outs),
              f"the runs leave nothing beside their --out: {sorted(os.listdir(parent))}")
        a, b, c = outs["a"], outs["it's b"], outs["c"]
        if a:
            names = set(os.listdir(a))
            check({"results.json", "output.txt"} <= names, f"a run writes results.json and output.txt: {sorted(names)}")
            if shutil.which("gnuplot"):
                csvs = [n for n in names if n.endswith(".csv")]
                check(not csvs or any(n.endswith(".svg") for n in names),
                      "with gnuplot installed, a run that writes CSVs draws figures")
            with open(os.path.join(a, "output.txt"), encoding="utf-8") as f:
                numbers = re.findall(r"\b(?:nan|-?inf)\b", f.read(), re.IGNORECASE)
            check(not numbers, f"output.txt prints no nan or inf: {numbers[:5]}")
            self.reference = a
        if a and b:
            check(set(os.listdir(a)) == set(os.listdir(b)),
                  "an --out named with a quote and a space gets the same set of files: "
                  f"{sorted(set(os.listdir(a)) ^ set(os.listdir(b)))}")
            check(reproducible_text(a) == reproducible_text(b),
                  "same seed, also on a machine with other caches: identical results.json "
                  "(apart from time_* keys)")
        if c:
            with open(os.path.join(c, "results.json"), encoding="utf-8") as f:
                seed = re.search(r'^\s*"seed":\s*(\S+?),?$', f.read(), re.MULTILINE)
            check(seed is not None and seed.group(1) == "10",
                  f"--seed 010 is ten: results.json records \"seed\": {seed.group(1) if seed else None}")
        if a and c:
            check(reproducible_text(a) != reproducible_text(c), "other seed: different results.json")

    def figures_free_of_rounding(self):
        if not self.steady_figures or not self.reference or not shutil.which("gnuplot"):
            return
        out = os.path.join(self.dir("rounded"), "d")
        r = run(self.binary, self.quick + ["--seed", "7", "--out", out], env=ROUNDED_UPWARD)
        ok = self.completed(r, out)
        check(ok, "a run that rounds upward completes "
              f"(exit code {r.returncode}, stderr: {r.stderr.strip()[:300]!r})")
        if not ok:
            return
        for name in self.steady_figures:
            drawn = []
            for d in (self.reference, out):
                path = os.path.join(d, name + ".svg")
                drawn.append(open(path, encoding="utf-8").read() if os.path.isfile(path) else "")
            moved = svg_moves(*drawn) if all(drawn) else "not drawn"
            check(moved is None, f"{name}.svg is drawn the same when every result moves by "
                  f"rounding (a value at rounding level goes on harness::rounding_floor): {moved}")

    def completed(self, r, out):
        """Whether run `r` wrote its output set in `out`: exit code 0, or 3 with sections that
        wait only for exercises other than this test's own."""
        try:
            with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
                waiting = set(json.load(f).get("exercises_not_done", "").split())
        except (OSError, ValueError):
            return False
        if r.returncode == 0:
            return not waiting
        return r.returncode == 3 and bool(waiting) and not waiting & set(self.exercises)

    def interrupted(self):
        if not self.slow:
            return skip("no --slow-args, so no run to interrupt")
        if not self.reference:
            return skip("no complete run to keep")
        # The signals at once, each to its own run: one wait of 1.5 s instead of three. The
        # third run starts as a script's background job does, with SIGINT ignored; a SIGINT
        # sent to its pid alone (kill -INT, a supervisor) must stop it all the same.
        runs = []
        for sig, how in [(signal.SIGINT, default_signals), (signal.SIGTERM, default_signals),
                         (signal.SIGINT, background_job)]:
            parent = self.dir(f"signal-{sig.name}-{how.__name__}")
            out = os.path.join(parent, "out")
            shutil.copytree(self.reference, out)
            before = tree(parent)
            log = open(os.path.join(self.tmp, f"slow-{sig.name}.log"), "w")
            p = subprocess.Popen([self.binary, *self.slow, "--seed", "7", "--out", out],
                                 stdout=log, stderr=log, preexec_fn=how,
                                 start_new_session=True)
            runs.append((sig, how, parent, before, p, log))
        time.sleep(1.5)
        ended = []
        for sig, how, parent, before, p, log in runs:
            still_running = p.poll() is None
            p.send_signal(sig)
            try:
                code = p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                code = p.wait()
            log.close()
            ended.append((sig, how, parent, before, still_running, code))
        time.sleep(0.2)  # a figure being drawn when the run stopped may still be ending
        for sig, how, parent, before, still_running, code in ended:
            what = f"{shlex.join(self.slow)} stopped by {sig.name}" + (
                " sent to its pid alone, started with SIGINT ignored (a script's background job)"
                if how is background_job else "")
            check(still_running, f"{what}: still running after 1.5 s (if not, choose slower --slow-args)")
            check(code == -sig, f"{what}: ends by the signal (exit status {code})")
            after = tree(parent)
            check(after == before,
                  f"{what}: --out holds the earlier set byte for byte, nothing new beside it: "
                  f"{sorted(set(after or {}) ^ set(before))}")

    def full_filesystem(self):
        if not self.reference:
            return skip("no complete run to put on a full filesystem")
        if os.geteuid() != 0:
            return skip("not root, so no tmpfs to fill")
        # Room for the earlier set and part of a new one: the run starts and cannot finish.
        pages = sum(-(-os.path.getsize(os.path.join(self.reference, n)) // 4096)
                    for n in os.listdir(self.reference))
        mount = self.dir("full")
        for extra in [0.5, 0.25, 0.75, 0.1]:
            size_k = 4 * (pages + max(1, int(pages * extra)))
            m = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_k}k", "tmpfs", mount],
                               capture_output=True, text=True)
            if m.returncode != 0:
                return skip(f"cannot mount a tmpfs: {m.stderr.strip()[:200]}")
            try:
                out = os.path.join(mount, "out")
                shutil.copytree(self.reference, out)
                before = tree(mount)
                r = run(self.binary, self.quick + ["--seed", "8", "--out", out])
                after = tree(mount)
            finally:
                if subprocess.run(["umount", mount]).returncode != 0:
                    subprocess.run(["umount", "-l", mount])  # busy: detach it anyway
            if r.returncode == 0:
                continue  # it fitted: try with less room
            what = f"a run on a full filesystem ({size_k} KiB)"
            check(r.returncode not in (0, 2), f"{what}: fails after starting (exit {r.returncode})")
            lines = r.stderr.strip().splitlines()
            check(len(lines) == 1, f"{what}: one stderr line: {r.stderr.strip()[:300]!r}")
            check(after == before,
                  f"{what}: --out holds the earlier set, nothing new beside it: "
                  f"{sorted(set(after) ^ set(before))}")
            return
        check(False, "a full filesystem: no tmpfs size made the run fail")

    def no_leftovers(self):
        left = [os.path.relpath(os.path.join(root, n), self.tmp)
                for root, dirs, files in os.walk(self.tmp) for n in dirs + files
                if n.startswith(".tmp-") or ".partial-" in n or n.endswith("-old")]
        check(not left, f"no staging directory or temporary file anywhere: {left}")


def main():
    # Parsed by hand: the values themselves look like options ("--bad '--d 0' --d").
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    binary, quick, slow, bad_cases = os.path.abspath(argv[0]), ["--quick"], [], []
    exercises, steady_figures = [], []
    i = 1
    while i < len(argv):
        if argv[i] in ("--quick-args", "--slow-args") and i + 1 < len(argv):
            words = shlex.split(argv[i + 1])
            if argv[i] == "--quick-args":
                quick = words
            else:
                slow = words
            i += 2
        elif argv[i] == "--exercise" and i + 1 < len(argv):
            exercises.append(argv[i + 1])
            i += 2
        elif argv[i] == "--steady-figure" and i + 1 < len(argv):
            steady_figures.append(argv[i + 1])
            i += 2
        elif argv[i] == "--bad" and i + 2 < len(argv):
            bad_cases.append((argv[i + 1], argv[i + 2]))
            i += 3
        else:
            print(f"program_contract.py: unexpected argument {argv[i]!r}", file=sys.stderr)
            return 2

    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        c = Contract(binary, quick, slow, bad_cases, tmp, exercises, steady_figures)
        for case in [c.help, c.bad_arguments, c.out_without_value, c.out_not_an_output_set,
                     c.same_seed_same_results, c.figures_free_of_rounding, c.interrupted, c.full_filesystem, c.no_leftovers]:
            case()
    print(f"{len(failures)} failure(s), {time.monotonic() - start:.1f} s")

    if failures:
        print(f"{len(failures)} contract check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
