#!/usr/bin/env python3
"""The contract of ./book's commands on bad input (run by ctest in the instructor's copy;
about ten seconds, nothing is built).

Every case runs the real ./book and expects one line on stderr naming the option (or the
command) and what it accepts, exit code 2, nothing on stdout, nothing written (no --out
directory, no JSON file, no temporary file, no build/ in the student copy) and no build
started (a build announces itself on stderr, which would make more than one line).

Also: a release or a grade's JSON onto a read-only or a full filesystem (a tmpfs; skipped
with "skip: ..." where mounting is not possible), a release that runs out of space half-way
(nothing left behind), SIGINT/SIGTERM during a release (the complete copy or nothing, never
a temporary directory), and --force keeping an earlier release's build/ and the mtimes of
unchanged files.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

from book.build import ROOT
from book.homework import UsageError, release, staging
from book.homework.markers import is_student_copy
from book.homework.staging import Interrupted, write_atomically
from checks import check, verdict


BOOK = os.path.join(ROOT, "book")
def tree(path):
    """Every path under `path` (relative), to see that a refusal wrote nothing."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, name), path))
    return out


def run_book(args, cwd, timeout=60):
    return subprocess.run([BOOK, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def refused(args, cwd, names, watch, book=BOOK):
    """`book args` in `cwd`: exit 2, one line on stderr containing every string of `names`,
    no stdout, and the directory `watch` unchanged."""
    before = tree(watch)
    new_paths = [a for a in args if os.path.isabs(a) and not os.path.lexists(a)]
    t0 = time.monotonic()
    r = subprocess.run([book, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    dt = time.monotonic() - t0
    lines = [line for line in r.stderr.split("\n") if line.strip()]
    ok = (r.returncode == 2 and len(lines) == 1 and lines[0].startswith("book: ")
          and all(n in lines[0] for n in names) and not r.stdout.strip())
    written = sorted(tree(watch) - before) + [a for a in new_paths if os.path.lexists(a)]
    label = "./book " + " ".join(repr(a) if not a or " " in a else a for a in args)
    wrote = f"; wrote {written}" if written else ""
    check(ok and not written,
          f"{label}: exit 2, one line naming {names}, nothing written ({dt:.1f} s; got "
          f"{r.returncode}: {r.stderr.strip()[:300]!r}{wrote})")


class Mount:
    """A tmpfs mounted on a new directory, or None where mounting is not possible."""

    def __init__(self, parent, name, options):
        self.path = os.path.join(parent, name)
        os.makedirs(self.path)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", self.path],
                           capture_output=True, text=True)
        self.mounted = r.returncode == 0
        if not self.mounted:
            print(f"skip: cannot mount a tmpfs ({options}) on {self.path}: "
                  f"{r.stderr.strip() or 'mount failed'}")

    def fill(self):
        """Writes until the filesystem is full."""
        fd = os.open(os.path.join(self.path, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)

    def close(self):
        if self.mounted:
            subprocess.run(["umount", self.path], check=False)
        os.rmdir(self.path)


def main():
    with tempfile.TemporaryDirectory(prefix="book-commands-") as tmp:
        work = os.path.join(tmp, "work")  # the caller's directory: nothing may appear here
        os.makedirs(work)
        nonempty = os.path.join(tmp, "nonempty")
        os.makedirs(nonempty)
        open(os.path.join(nonempty, "notes.txt"), "w").write("mine\n")
        a_file = os.path.join(tmp, "a-file")
        open(a_file, "w").write("x\n")
        student = os.path.join(tmp, "student")
        r = run_book(["release", "--out", student], cwd=work)
        check(r.returncode == 0 and is_student_copy(student),
              f"./book release into a new directory ({r.stderr.strip()[-200:]})")
        sbook = os.path.join(student, "book")

        mounts = []
        ro = Mount(tmp, "ro", "ro,size=64k")
        full = Mount(tmp, "full", "size=64k")
        mounts += [ro, full]
        try:
            if full.mounted:
                full.fill()
            # (arguments, strings the one line must contain, the ./book to run)
            cases = [
                (["frobnicate"], ["unknown command 'frobnicate'", "release", "grade"], BOOK),
                ([""], ["unknown command ''"], BOOK),
                (["--quick"], ["unknown command '--quick'"], BOOK),
                (["help", "x"], ["help takes no arguments"], BOOK),
                (["run"], ["run needs a chapter number", "01", "(got '')"], BOOK),
                (["run", "07"], ["run needs a chapter number", "(got '07')"], BOOK),
                (["run", "1"], ["run needs a chapter number", "(got '1')"], BOOK),
                (["run", "--help"], ["run needs a chapter number"], BOOK),
                (["test", "07"], ["test needs a chapter number", "(got '07')"], BOOK),
                (["test", ""], ["test needs a chapter number"], BOOK),
                (["test", "01", "x"], ["test takes at most a chapter number"], BOOK),
                (["validate", "--jobs", "2"], ["validate takes no options"], BOOK),
                (["bench", "--frob"], ["bench: unknown option '--frob'",
                                       "--benchmark_filter"], BOOK),
                (["bench", "quick"], ["bench: unknown option 'quick'"], BOOK),
                (["bench", "--benchmark_repetitions=0"], ["--benchmark_repetitions",
                                                          "[1, 9999]"], BOOK),
                (["bench", "--benchmark_repetitions=010x"], ["--benchmark_repetitions"], BOOK),
                (["bench", "--benchmark_filter"], ["--benchmark_filter needs a value"], BOOK),
                (["bench", "--benchmark_time_unit=h"], ["--benchmark_time_unit",
                                                        "ns, us, ms or s"], BOOK),
                (["bench", "--benchmark_out=x.json"], ["--benchmark_out is set by ./book"],
                 BOOK),
                (["release"], ["--out DIR", "is required"], BOOK),
                (["release", "--out"], ["--out needs a value"], BOOK),
                (["release", "--out", ""], ["--out: empty"], BOOK),
                (["release", "--o", "x"], ["unknown option '--o'", "--out DIR"], BOOK),
                (["release", "--out", "x", "--bogus"], ["unknown option '--bogus'"], BOOK),
                (["release", "--out", "x", "y"], ["unknown argument 'y'"], BOOK),
                (["release", "--out", ROOT], ["--out", "the book"], BOOK),
                (["release", "--out", os.path.join(ROOT, "build", "student")],
                 ["--out", "inside it"], BOOK),
                (["release", "--out", os.path.dirname(ROOT)], ["--out", "above it"], BOOK),
                (["release", "--out", "/proc/x"], ["--out /proc/x", "cannot write"], BOOK),
                (["release", "--out", a_file], ["--out", "not a directory"], BOOK),
                (["release", "--out", os.path.join(a_file, "x")], ["--out",
                                                                   "not a directory"], BOOK),
                (["release", "--out", nonempty], ["--out", "not empty", "--force"], BOOK),
                (["release", "--out", nonempty, "--force"], ["--out", "not an earlier release"],
                 BOOK),
                (["grade"], ["grade works in a student copy"], BOOK),
                (["release", "--out", os.path.join(tmp, "c")], ["student copy"], sbook),
                (["validate"], ["validate is the instructor's check"], sbook),
                (["grade", "--exercise", "99.9"], ["--exercise 99.9", "known: "], sbook),
                (["grade", "--exercise"], ["--exercise needs a value", "exercise id"], sbook),
                (["grade", "--exercise", "03.1", "--frob"], ["unknown option '--frob'",
                                                             "--format F"], sbook),
                (["grade", "--ex", "03.1"], ["unknown option '--ex'"], sbook),
                (["grade", "--jobs", "0"], ["--jobs 0", "[1, 256]"], sbook),
                (["grade", "--jobs", "abc"], ["--jobs abc", "[1, 256]"], sbook),
                (["grade", "--format", "moodle"], ["--format moodle", "gradescope"], sbook),
                (["grade", "--format"], ["--format needs a value", "gradescope"], sbook),
                (["grade", "--out", "g.json"], ["--out", "give --format"], sbook),
                (["grade", "--format", "json", "--out"], ["--out needs a value"], sbook),
                (["grade", "--format", "json", "--out", ""], ["--out: empty"], sbook),
                (["grade", "--format", "json", "--out", tmp], ["--out", "is a directory"],
                 sbook),
                (["grade", "--format", "json", "--out", os.path.join(tmp, "missing", "g.json")],
                 ["--out", "does not exist"], sbook),
                (["grade", "--format", "gradescope", "--out", "/proc/x.json"],
                 ["--out /proc/x.json", "cannot write"], sbook),
                (["grade", "--format", "csv", "--out", a_file], ["--out", "not a grade CSV"],
                 sbook),
                (["grade", "--student", "a b"], ["--student", "letters"], sbook),
                (["check"], ["exercise id is required"], sbook),
                (["check", "99.9"], ["99.9", "unknown exercise"], sbook),
                (["check", "03.1", "--frob"], ["unknown option '--frob'"], sbook),
                (["release", "--autograder", os.path.join(ROOT, "build", "ag")],
                 ["--autograder", "inside it"], BOOK),
                (["release", "--autograder", nonempty], ["--autograder", "not empty"], BOOK),
                (["release", "--autograder", nonempty, "--force"],
                 ["--autograder", "not an earlier autograder bundle"], BOOK),
                (["release", "--autograder", "/proc/x"], ["--autograder /proc/x",
                                                          "cannot write"], BOOK),
                (["release", "--out", "x", "--autograder", "y"], ["give one"], BOOK),
                (["grade", "--instructor", ""], ["--instructor", "not the instructor's copy"],
                 sbook),
                (["grade", "--instructor", tmp], ["--instructor", "not the instructor's copy"],
                 sbook),
            ]
            if ro.mounted:
                cases += [(["release", "--out", os.path.join(ro.path, "copy")],
                           ["--out", "Read-only file system"], BOOK),
                          (["grade", "--format", "json", "--out",
                            os.path.join(ro.path, "g.json")],
                           ["--out", "Read-only file system"], sbook)]
            if full.mounted:
                cases += [(["release", "--out", os.path.join(full.path, "a", "copy")],
                           ["--out", "No space left"], BOOK),
                          (["grade", "--format", "json", "--out",
                            os.path.join(full.path, "g.json")],
                           ["--out", "No space left"], sbook)]
            for args, names, book in cases:
                refused(args, work, names, tmp, book)
            check(not os.path.exists(os.path.join(student, "build")),
                  "no refusal started a build in the student copy")

            # A filesystem with room for the probe, not for the copy: refused up front with
            # the size needed; and when the space check is fooled, the copy that fails
            # half-way leaves nothing (not even the parent directories it created).
            small = Mount(tmp, "small", "size=1m")
            mounts.append(small)
            if small.mounted:
                refused(["release", "--out", os.path.join(small.path, "copy")], work,
                        ["--out", "needs", "MiB", "free"], tmp)
                real_statvfs = release.os.statvfs
                release.os.statvfs = lambda p: argparse.Namespace(f_bavail=1 << 30,
                                                                  f_frsize=4096)
                try:
                    release.cmd_release(argparse.Namespace(
                        out=os.path.join(small.path, "a", "b"), autograder=None, force=False))
                    check(False, "a release onto a full filesystem fails")
                except UsageError as e:
                    check("No space left" in str(e) and os.listdir(small.path) == [],
                          f"a release that fills the disk half-way leaves nothing ({e})")
                finally:
                    release.os.statvfs = real_statvfs
        finally:
            for m in mounts:
                m.close()

        # The JSON of a grade is written whole or not at all.
        target = os.path.join(tmp, "grades.json")
        write_atomically(target, '{"score": 1}\n', "--out")
        write_atomically(target, '{"score": 2}\n', "--out")
        check(open(target).read() == '{"score": 2}\n'
              and sorted(os.listdir(tmp)).count("grades.json") == 1
              and not [f for f in os.listdir(tmp) if ".tmp-" in f],
              "the JSON file is replaced whole, no temporary file left")

        # --force: replaces an earlier release, keeps its build/ and the mtimes of the files
        # whose bytes are unchanged (an incremental build recompiles only what changed).
        os.makedirs(os.path.join(student, "build"))
        open(os.path.join(student, "build", "keep"), "w").write("objects\n")
        open(os.path.join(student, "stray.txt"), "w").write("x\n")
        readme = os.path.join(student, "README.md")
        os.utime(readme, (1e9, 1e9))
        r = run_book(["release", "--out", os.path.relpath(student, work), "--force"], cwd=work)
        check(r.returncode == 0 and os.path.isfile(os.path.join(student, "build", "keep"))
              and not os.path.exists(os.path.join(student, "stray.txt"))
              and os.stat(readme).st_mtime == 1e9,
              f"release --force (a relative --out) keeps build/ and unchanged mtimes "
              f"({r.stderr.strip()[-200:]})")
        check(not [f for f in os.listdir(tmp) if f.startswith(".")],
              "no temporary directory beside --out")

        # SIGINT and SIGTERM during a release: the complete copy or nothing, and no
        # temporary directory, whenever the signal comes.
        expected = tree(student) - {"build", os.path.join("build", "keep")}
        for sig in (signal.SIGTERM, signal.SIGINT):
            outcomes = set()
            for delay in (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.6):
                parent = os.path.join(tmp, f"sig-{int(sig)}-{delay}")
                os.makedirs(parent)
                out = os.path.join(parent, "copy")
                p = subprocess.Popen([BOOK, "release", "--out", out], cwd=work,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                time.sleep(delay)
                p.send_signal(sig)
                _, err = p.communicate(timeout=60)
                left = os.listdir(parent)
                complete = left == ["copy"] and tree(out) == expected
                outcomes.add("complete" if complete else "nothing" if not left else "partial")
                check((complete or not left) and (p.returncode != 0 or complete),
                      f"{signal.Signals(sig).name} after {delay} s: "
                      f"{'the complete copy' if complete else 'nothing' if not left else left}"
                      f" (exit {p.returncode}: {err.strip()[-160:]!r})")
            print(f"     ({signal.Signals(sig).name}: outcomes {sorted(outcomes)})")

        # An interrupt in the middle of the copy, made certain: sync_tree stops half-way.
        # A new release leaves nothing; a --force release leaves the earlier one as it was.
        real_sync = staging.sync_tree

        def half_then_interrupt(root, content, out, keep=("build",)):
            half = dict(list(content.items())[:len(content) // 2])
            real_sync(root, half, out, keep)
            raise Interrupted(signal.SIGTERM)
        staging.sync_tree = half_then_interrupt
        before = {rel: os.stat(os.path.join(student, rel)).st_mtime_ns
                  for rel in tree(student) if os.path.isfile(os.path.join(student, rel))}
        try:
            for out, force in ((os.path.join(tmp, "mid", "copy"), False), (student, True)):
                try:
                    release.cmd_release(argparse.Namespace(out=out, autograder=None, force=force))
                    check(False, "the interrupt stops the release")
                except Interrupted:
                    pass
            check(not os.path.exists(os.path.join(tmp, "mid")),
                  "an interrupt half-way through a new release leaves nothing")
            after = {rel: os.stat(os.path.join(student, rel)).st_mtime_ns
                     for rel in tree(student) if os.path.isfile(os.path.join(student, rel))}
            check(after == before and not [f for f in os.listdir(tmp) if f.startswith(".")],
                  "an interrupt half-way through release --force leaves the earlier release "
                  "untouched (build/ included) and no temporary directory")
        finally:
            staging.sync_tree = real_sync

    return verdict()


if __name__ == "__main__":
    sys.exit(main())
