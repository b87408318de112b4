#!/usr/bin/env python3
"""Homework tooling of Attention, Verified: the student release, the grader, the validator.

usage (normally through ./book):
  homework.py release --out DIR [--force]          write the student copy of this book
  homework.py release --autograder DIR [--force]   write the autograder bundle (Gradescope,
                                                   PrairieLearn): setup.sh, run_autograder
  homework.py grade [--exercise ID] [--format F] [--out FILE] [--student ID] [--instructor DIR]
                                                   grade a student copy (run inside one);
                                                   F: table, json, gradescope, prairielearn,
                                                   github-classroom, csv (tests/grade_formats.py)
  homework.py check ID...                          one exercise's public tests, claim by claim
  homework.py autograde --source DIR [--submission DIR] [--results DIR] [--prepare]
                                                   (run_autograder, setup.sh) grade a submission
  homework.py validate [--full-tests-passed]       the instructor's check, both directions
  homework.py list                                 the exercises and their files
  homework.py leak-test                            a release into a temporary directory
                                                   contains no solution and no hidden test
  homework.py labels --binary B --prefix P --labels L --out F
                                                   (build step) ctest labels exNN.M
  homework.py run-chapter --exe B --out DIR --figures-dir D [--figure NAME ...]
                                                   (build step) run a chapter program; in a
                                                   student copy an exercise not done gives
                                                   placeholders instead of a failed build

Markers (in .cpp/.hpp files under code/, chapters/, tests/, bench/):
  // BEGIN SOLUTION NN.M [unused(a, b)]  ...  // END SOLUTION
      the body of a function (or its tail, after the argument checks); the release replaces
      it by a stub that throws attn::exercise_not_done. unused(...) names the parameters
      the stub passes along so that it compiles without unused-parameter warnings.
      Lines like `// [tag]` (Doxygen snippet markers) inside are kept.
  // BEGIN HIDDEN TESTS NN.M  ...  // END HIDDEN TESTS
      tests the release removes (one comment line stays in their place); `grade
      --instructor DIR` puts them back.

Exit codes: 0 done; 1 a check or a build failed; 2 bad input (one line on stderr, nothing
written). Only the Python standard library is used.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

# Bridge until book.homework replaces this file: the page tools live in tools/book/pages/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
from book import doctest_sources, pages  # noqa: E402  (the chapters' quoted code, test names)
import grade_formats  # noqa: E402  (tests/grade_formats.py, beside this file)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER_FILE = ".book-release"
SOURCE_DIRS = ("code", "chapters", "tests", "bench")
SOURCE_EXT = (".cpp", ".hpp", ".h")
ID = r"(\d\d\.\d+)"
BEGIN_SOLUTION = re.compile(r"^(\s*)// BEGIN SOLUTION " + ID + r"(?:\s+unused\(([^)]*)\))?\s*$")
END_SOLUTION = re.compile(r"^\s*// END SOLUTION\s*$")
BEGIN_HIDDEN = re.compile(r"^(\s*)// BEGIN HIDDEN TESTS " + ID + r"\s*$")
END_HIDDEN = re.compile(r"^\s*// END HIDDEN TESTS\s*$")
SNIPPET_TAG = re.compile(r"^\s*// \[[\w.-]+\]\s*$")
FUNCTION_NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")
# The instructor's copy only: the worked solutions (page and tests); the release leaves them out.
INSTRUCTOR_ONLY = re.compile(r"chapters/[^/]+/(solutions\.md|test_solutions\.cpp)")
EXIT_NOT_DONE = 3  # harness::run_program's exit code for attn::exercise_not_done


class UsageError(Exception):
    """Bad input: one line on stderr, exit code 2."""


def say(message):
    print(f"\033[1m==> {message}\033[0m" if sys.stderr.isatty() else f"==> {message}",
          file=sys.stderr, flush=True)


# ---- the book's files and their markers -------------------------------------------------------

def book_files(root):
    """Paths (relative, '/'-separated, sorted) of the book: git's files when it is a
    checkout, otherwise every file outside build/ and caches."""
    if os.path.exists(os.path.join(root, ".git")):
        r = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True)
        if r.returncode == 0:
            files = [p for p in r.stdout.decode().split("\0") if p]
            return sorted(p for p in files if os.path.isfile(os.path.join(root, p)))
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames
                             if not (rel == "." and d in ("build", ".git"))
                             and d != "__pycache__")
        for f in filenames:
            out.append(os.path.normpath(os.path.join(rel, f)).replace(os.sep, "/"))
    return sorted(out)


def is_source(rel):
    return rel.split("/")[0] in SOURCE_DIRS and rel.endswith(SOURCE_EXT)


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Region:
    def __init__(self, kind, ident, rel, start, end, indent, unused, lines):
        self.kind, self.id, self.rel = kind, ident, rel
        self.start, self.end = start, end  # line numbers (1-based) of the two markers
        self.indent, self.unused, self.lines = indent, unused, lines

    def function(self, all_lines):
        """The name of the function the region is in: the last `name(` before it that
        starts a definition (the line with the region's opening brace)."""
        for i in range(self.start - 2, -1, -1):
            line = all_lines[i]
            if line.startswith((" ", "\t", "//", "#")) or not line.strip():
                continue
            names = [n for n in FUNCTION_NAME.findall(line)
                     if n not in ("if", "for", "while", "switch", "return")]
            if names:
                return names[0]
        return "?"


def parse_regions(rel, text):
    """The solution and hidden-test regions of one file; raises ValueError on a bad fence."""
    regions, lines, open_ = [], text.split("\n"), None
    for n, line in enumerate(lines, 1):
        b_sol, b_hid = BEGIN_SOLUTION.match(line), BEGIN_HIDDEN.match(line)
        e_sol, e_hid = END_SOLUTION.match(line), END_HIDDEN.match(line)
        if b_sol or b_hid:
            if open_:
                raise ValueError(f"{rel}:{n}: a region begins inside the region of line "
                                 f"{open_[3]}")
            m = b_sol or b_hid
            unused = (b_sol.group(3) if b_sol and b_sol.group(3) else "")
            open_ = ("solution" if b_sol else "hidden", m.group(2), m.group(1), n, unused)
        elif e_sol or e_hid:
            kind = "solution" if e_sol else "hidden"
            if not open_ or open_[0] != kind:
                raise ValueError(f"{rel}:{n}: END {kind.upper()} without its BEGIN")
            k, ident, indent, start, unused = open_
            args = [a.strip() for a in unused.split(",") if a.strip()]
            regions.append(Region(k, ident, rel, start, n, indent, args, lines[start:n - 1]))
            open_ = None
    if open_:
        raise ValueError(f"{rel}:{open_[3]}: region {open_[1]} is never closed")
    return regions


def scan(root):
    """{rel: (text, regions)} for every source file with markers, and the exercises:
    {id: {"id", "regions": [(rel, function)], "hidden": n}}."""
    files, exercises = {}, {}
    for rel in book_files(root):
        if not is_source(rel):
            continue
        text = read_text(os.path.join(root, rel))
        if "// BEGIN SOLUTION" not in text and "// BEGIN HIDDEN TESTS" not in text:
            continue
        regions = parse_regions(rel, text)
        if not regions:
            continue
        files[rel] = (text, regions)
        lines = text.split("\n")
        for r in regions:
            e = exercises.setdefault(r.id, {"id": r.id, "functions": [], "hidden_blocks": 0})
            if r.kind == "solution":
                e["functions"].append({"function": r.function(lines), "file": rel})
            else:
                e["hidden_blocks"] += 1
    return files, dict(sorted(exercises.items()))


def stub_lines(region, all_lines):
    """What the release puts in place of a solution region (snippet tags kept)."""
    ind = region.indent
    args = "".join(", " + a for a in region.unused)
    call = f'"{region.id}", __func__, "{region.rel}"{args});'
    stub = [f"{ind}// Exercise {region.id}: write the rest of this function here "
            f"(ctest -L ex{region.id} checks it)."]
    if len(ind) + len("throw attn::exercise_not_done(") + len(call) <= 90:
        stub.append(f"{ind}throw attn::exercise_not_done({call}")
    else:
        stub += [f"{ind}throw attn::exercise_not_done(", f"{ind}    {call}"]
    tags = [line for line in region.lines if SNIPPET_TAG.match(line)]
    return tags[:1] + stub + tags[1:]


def release_text(text, regions, keep_hidden=False):
    lines, out, i = text.split("\n"), [], 0
    for r in sorted(regions, key=lambda r: r.start):
        out += lines[i:r.start - 1]
        if r.kind == "solution":
            out += stub_lines(r, lines)
        elif keep_hidden:
            out += lines[r.start - 1:r.end]
        else:
            out.append(f"{r.indent}// Hidden tests of exercise {r.id}: run by "
                       f"./book grade --instructor DIR.")
        i = r.end
    out += lines[i:]
    return "\n".join(out)


def release_files(root, keep_hidden=False):
    """{rel: bytes or None (copy as is)} of the student copy, plus the marker file."""
    files, exercises = scan(root)
    if not exercises:
        raise UsageError("no exercises found (no // BEGIN SOLUTION markers)")
    content = {}
    for rel in book_files(root):
        if INSTRUCTOR_ONLY.fullmatch(rel):
            continue
        if rel in files:
            text, regions = files[rel]
            content[rel] = release_text(text, regions, keep_hidden).encode()
        else:
            content[rel] = None
    # The pages quote code in fenced blocks (docs/pages.py): quote the stubs, not the solutions.
    def released(path):
        data = content.get(os.path.relpath(path, root))
        return data.decode() if data is not None else read_text(path)
    for rel in content:
        if rel.endswith(".md") and content[rel] is None:
            text = read_text(os.path.join(root, rel))
            new = pages.expected(root, None, os.path.join(root, rel), text, code_only=True,
                                 read_source=released)
            if new != text:
                content[rel] = new.encode()
    marker = {"book": "Attention, Verified", "format": 1,
              "hidden_tests": "kept" if keep_hidden else "removed",
              "exercises": list(exercises.values())}
    if keep_hidden:  # the grader shows these tests' claims only, never their expressions
        marker["hidden_test_names"] = hidden_test_names(files)
    content[MARKER_FILE] = (json.dumps(marker, indent=2) + "\n").encode()
    return content, files, exercises


def sync_tree(root, content, out, keep=("build",)):
    """Makes `out` hold exactly `content`; a file whose bytes are unchanged is not rewritten
    (its mtime stays, so an incremental build recompiles only what changed). Top-level
    names in `keep` are left alone."""
    written = 0
    for rel, data in content.items():
        dst = os.path.join(out, rel)
        src = os.path.join(root, rel)
        if data is None:
            with open(src, "rb") as f:
                data = f.read()
        if os.path.isfile(dst):
            with open(dst, "rb") as f:
                if f.read() == data:
                    continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst + ".tmp", "wb") as f:
            f.write(data)
        if os.path.exists(src):
            shutil.copymode(src, dst + ".tmp")
        os.replace(dst + ".tmp", dst)
        written += 1
    wanted = set(content)
    for dirpath, dirnames, filenames in os.walk(out, topdown=True):
        rel_dir = os.path.relpath(dirpath, out)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in keep]
        for f in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, f)).replace(os.sep, "/")
            if rel not in wanted and not (rel_dir == "." and f in keep):
                os.remove(os.path.join(dirpath, f))
    return written


def is_student_copy(root):
    return os.path.isfile(os.path.join(root, MARKER_FILE))


def load_marker(root):
    with open(os.path.join(root, MARKER_FILE), encoding="utf-8") as f:
        return json.load(f)


# ---- release ----------------------------------------------------------------------------------

def existing_ancestor(path):
    """The nearest path at or above `path` that exists (where new directories would be
    created)."""
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def probe_writable(option, given, directory):
    """Refuses (UsageError) unless a file can be created in `directory`: a read-only or
    full filesystem, or a directory such as /proc, is found before any work."""
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".book-probe-")
        try:
            os.write(fd, b"probe\n")
        finally:
            os.close(fd)
            os.remove(probe)
    except OSError as e:
        raise UsageError(f"{option} {given}: cannot write in {directory} "
                         f"({e.strerror or e}); it takes a path on a writable filesystem")


def make_dirs(path, created):
    """os.makedirs, appending each directory it creates to `created` (deepest last), so
    that a failed run can remove them again."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        path = os.path.dirname(path)
    for d in reversed(missing):
        os.mkdir(d)
        created.append(d)


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like SIGINT so that every `finally` cleans up."""


def raise_interrupted(signum, frame):
    raise Interrupted(signum)


def cmd_release(args):
    if is_student_copy(ROOT):
        raise UsageError("this is a student copy; make a release from the instructor's copy")
    if args.out is not None and args.autograder is not None:
        raise UsageError("release: --out and --autograder are two different things; give one "
                         "(--out DIR: the student copy; --autograder DIR: the grading bundle)")
    bundle = args.autograder is not None
    option, given = ("--autograder", args.autograder) if bundle else ("--out", args.out)
    kind = "autograder bundle" if bundle else "release"
    what = (f"it takes a new or empty directory outside the book, or an earlier {kind} "
            "with --force")
    if given is None:
        raise UsageError(f"release: --out DIR (the student copy) or --autograder DIR (the "
                         "grading bundle) is required")
    if not given:
        raise UsageError(f"{option}: empty; {what}")
    out = os.path.realpath(given)
    root = os.path.realpath(ROOT)
    if out == root or out.startswith(root + os.sep) or root.startswith(out + os.sep):
        raise UsageError(f"{option} {given}: is the book, inside it or above it; {what}")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise UsageError(f"{option} {given}: exists and is not a directory; {what}")
    replacing = os.path.isdir(out) and bool(os.listdir(out))
    if replacing and not args.force:
        raise UsageError(f"{option} {given}: directory is not empty (--force replaces an "
                         f"earlier {kind} there)")
    earlier = (os.path.isfile(os.path.join(out, AUTOGRADER_MARKER)) if bundle
               else is_student_copy(out))
    if replacing and not earlier:
        raise UsageError(f"{option} {given}: not empty and not an earlier {kind}; --force "
                         f"replaces only an earlier {kind}")
    parent = os.path.dirname(out)
    base = existing_ancestor(parent)
    if not os.path.isdir(base):
        raise UsageError(f"{option} {given}: {base} is not a directory; {what}")
    probe_writable(option, given, base)
    try:
        content, _, exercises = autograder_files(ROOT) if bundle else release_files(ROOT)
    except ValueError as e:
        raise UsageError(str(e))
    size = sum(len(d) if d is not None else os.path.getsize(os.path.join(ROOT, rel))
               for rel, d in content.items())
    vfs = os.statvfs(base)
    free = vfs.f_bavail * vfs.f_frsize
    need = size + 4096 * (len(content) + 64)  # the files, and a block's slack for each
    if need > free:
        raise UsageError(f"{option} {given}: the {kind} needs {need / 2**20:.1f} MiB, "
                         f"{base} has {free / 2**20:.1f} MiB free")
    t0 = time.monotonic()
    # Staged in a directory beside --out and renamed into place: a failure or an interrupt
    # leaves the earlier state (no copy, or the earlier release) and no temporary directory.
    created, stage, old, committed = [], None, None, False
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    try:
        make_dirs(parent, created)
        name = os.path.basename(out)
        stage = tempfile.mkdtemp(dir=parent, prefix=f".{name}.book-release-")
        if replacing:  # an unchanged file keeps its mtime: the build recompiles what changed
            for rel in content:
                if os.path.isfile(os.path.join(out, rel)):
                    dst = os.path.join(stage, rel)
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy2(os.path.join(out, rel), dst)
        n = sync_tree(ROOT, content, stage)
        for rel in EXECUTABLES if bundle else ():
            os.chmod(os.path.join(stage, rel), 0o777 & ~current_umask())
        os.chmod(stage, 0o777 & ~current_umask())
        signal.pthread_sigmask(signal.SIG_BLOCK, signals)  # the swap is not interrupted
        if os.path.isdir(out):
            old = tempfile.mkdtemp(dir=parent, prefix=f".{name}.book-old-")
            os.rmdir(old)
            os.rename(out, old)
            try:
                os.rename(stage, out)
            except OSError:
                os.rename(old, out)
                old = None
                raise
            stage = None
            committed = True
            try:  # --force keeps build/ (if this fails, the next build starts afresh)
                if os.path.isdir(os.path.join(old, "build")):
                    os.rename(os.path.join(old, "build"), os.path.join(out, "build"))
            except OSError:
                pass
        else:
            os.rename(stage, out)
            stage = None
        created, committed = [], True
    except OSError as e:
        raise UsageError(f"{option} {given}: writing the {kind} failed "
                         f"({e.strerror or e}); nothing was written")
    finally:
        for d in (stage, old):
            if d:
                shutil.rmtree(d, ignore_errors=True)
        for d in reversed(created):
            try:
                os.rmdir(d)
            except OSError:
                pass
        try:  # a signal that came during the swap arrives now
            signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)
        except KeyboardInterrupt:
            if not committed:
                raise  # (after the swap it is too late to stop: the copy is complete)
    say(f"{'autograder bundle' if bundle else 'student copy'} in {out}: {len(content)} files "
        f"({n} written), exercises {', '.join(exercises)} ({time.monotonic() - t0:.1f} s)")
    if bundle:
        say(f"upload it as a zip of its contents: (cd {out} && zip -qr ../autograder.zip .); "
            f"its README.md says what students submit")
    return 0


# ---- the autograder bundle (Gradescope; PrairieLearn reads the same results) ----------------------

AUTOGRADER_MARKER = ".book-autograder"
EXECUTABLES = ("setup.sh", "run_autograder", "book/book")
# What grading needs (no site, no benchmarks): Debian and Ubuntu packages.
GRADE_PACKAGES = ("cmake ninja-build g++ ccache libeigen3-dev doctest-dev libcli11-dev "
                  "nlohmann-json3-dev libfmt-dev python3")

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
exec python3 "$here/book/tests/homework.py" autograde --source "$here" --prepare
""" % GRADE_PACKAGES

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Grades one submission (Gradescope copies this file to /autograder/run_autograder and runs it
# for every submission). Made by ./book release --autograder.
#
#   run_autograder [--submission DIR] [--results DIR] [--format gradescope|prairielearn]
#
# DIR defaults: /autograder/submission and /autograder/results (Gradescope's). The submitted
# files (see README.md) are built into the book, the exercises' tests run, hidden ones
# included, and DIR/results.json is written.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$here
[ -d "$source_dir/book" ] || source_dir=/autograder/source
exec python3 "$source_dir/book/tests/homework.py" autograde --source "$source_dir" "$@"
"""


def autograder_readme(exercises, files):
    rows = "\n".join(f"| {e['id']} | `{f['function']}` | `{f['file']}` |"
                      for e in exercises.values() for f in e["functions"])
    return f"""# Autograder of Attention, Verified

Made by `./book release --autograder DIR` from the instructor's copy. It holds the student copy
with the hidden tests kept (`book/`, no solution), the exercises' stubs (`stubs/`), and:

- `setup.sh`: installs the packages ({GRADE_PACKAGES}) and builds the tests once;
- `run_autograder [--submission DIR] [--results DIR] [--format gradescope|prairielearn]`:
  builds the submitted files into the book, runs every exercise's tests (hidden ones too) and
  writes `DIR/results.json`.

**Gradescope.** Zip the *contents* of this directory (`cd DIR && zip -qr ../autograder.zip .`)
and upload it as a programming assignment's autograder; choose the Ubuntu 24.04 base image
(CMake 3.25 or newer is needed). Students submit the files below, alone or inside their copy of
the book (a file is found by its path, e.g. `code/src/causal_mask.cpp`, or by its name). A file
they do not submit is graded as its stub (0 points for its exercise); a file that does not
compile is replaced by its stub and its exercise scores 0 with the compiler's message.

**PrairieLearn.** Run `run_autograder --submission /grade/student --results /grade/results
--format prairielearn` in an external-grader image built with `setup.sh`.

Points per test case are set in `book/{POINTS_FILE}` (edit it in the instructor's copy and make
the bundle again). Hidden tests appear as pass/fail with their claim only, after the grades
are published (Gradescope's `after_published`).

| exercise | function | file to submit |
|---|---|---|
{rows}
"""


def autograder_files(root):
    """{rel: bytes} of the bundle, the marked files and the exercises."""
    content, files, exercises = release_files(root, keep_hidden=True)
    bundle = {}
    for rel, data in content.items():
        if data is None:
            with open(os.path.join(root, rel), "rb") as f:
                data = f.read()
        bundle["book/" + rel] = data
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
    jobs_n = args.jobs or os.cpu_count() or 2
    if args.prepare:
        open(log, "w").close()
        say(f"building the book's tests with the stubs (log: {log})")
        rc = lean_configure(book, log) or cmake_build(build, build_targets(book), log, jobs_n)
        if rc != 0:
            with open(log) as f:
                sys.stderr.write(f.read()[-4000:])
        return rc
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
    for rel, stub in stubs.items():
        found = find_submitted(submission, rel)
        text = stub
        if found:
            with open(found, "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
            notes.append(f"graded {os.path.relpath(found, submission)} as {rel}")
        else:
            notes.append(f"not submitted: {rel} (graded as its stub)")
        path = os.path.join(book, rel)
        if read_text(path) != text:  # an unchanged file keeps its mtime: nothing to rebuild
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    open(log, "w").close()
    if lean_configure(book, log) != 0:
        raise RuntimeError(f"the bundle's book does not configure (log: {log})")
    result = grade_run(book, build, marker["exercises"], marker.get("hidden_test_names", []),
                       "", jobs_n, log, stubs=stubs)
    result["notes"] = notes
    text = grade_formats.render(args.format, result)
    os.makedirs(results, exist_ok=True)
    write_atomically(os.path.join(results, "results.json"), text, "--results")
    print_table(result, True)
    print(f"results: {os.path.join(results, 'results.json')} ({result['elapsed']:.1f} s)")
    return 0


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def cmd_list(args):
    _, exercises = scan(ROOT) if not is_student_copy(ROOT) else (None, {
        e["id"]: e for e in load_marker(ROOT)["exercises"]})
    for e in exercises.values():
        where = "; ".join(f"{f['function']} in {f['file']}" for f in e["functions"])
        print(f"{e['id']}  {where}")
    return 0


# ---- leak test --------------------------------------------------------------------------------

def distinctive_lines(files):
    """Lines of solution and hidden regions, and of the worked solutions (INSTRUCTOR_ONLY),
    that appear nowhere else in the book: if one of them is in the release, a solution or
    hidden test leaked."""
    outside, worked = [], []
    for rel in book_files(ROOT):
        path = os.path.join(ROOT, rel)
        if INSTRUCTOR_ONLY.fullmatch(rel):
            worked.append(rel)
        elif rel in files:
            text, regions = files[rel]
            outside.append(release_text(text, regions))
        elif rel.endswith(".md"):  # code blocks quote the sources, solutions included
            outside.append(pages.without_code(read_text(path)))
        elif rel.endswith((".cpp", ".hpp", ".h", ".txt", ".py", ".cmake", ".gp")):
            outside.append(read_text(path))
    outside = "\n".join(outside)
    found = []
    for rel, (_, regions) in files.items():
        for r in regions:
            for line in r.lines:
                s = line.strip()
                if len(s) >= 12 and not SNIPPET_TAG.match(line) and s not in outside:
                    found.append((r.id, r.kind, s))
    # The worked solutions (pages and their tests), line by line.
    for rel in worked:
        for line in read_text(os.path.join(ROOT, rel)).splitlines():
            s = line.strip()
            if len(s) >= 12 and not SNIPPET_TAG.match(line) and s not in outside:
                found.append((rel.split("/")[1][:2], "worked solution (" + rel + ")", s))
    return found


def leaks(release_root, lines):
    texts = {}
    for rel in book_files(release_root):
        try:
            texts[rel] = read_text(os.path.join(release_root, rel))
        except UnicodeDecodeError:
            continue
    bad = []
    for ident, kind, s in lines:
        for rel, text in texts.items():
            if s in text:
                bad.append(f"{rel}: {kind} text of exercise {ident}: {s}")
    return bad


def cmd_leak_test(args):
    if is_student_copy(ROOT):
        print("leak-test: a student copy has no solutions to leak; nothing to do")
        return 0
    content, files, exercises = release_files(ROOT)
    lines = distinctive_lines(files)
    with tempfile.TemporaryDirectory() as tmp:
        sync_tree(ROOT, content, tmp)
        bad = leaks(tmp, lines)
        # The release is deterministic: a second one into another directory is identical.
        with tempfile.TemporaryDirectory() as tmp2:
            sync_tree(ROOT, release_files(ROOT)[0], tmp2)
            differ = [rel for rel in content
                      if open(os.path.join(tmp, rel), "rb").read()
                      != open(os.path.join(tmp2, rel), "rb").read()]
    for b in bad:
        print("LEAK " + b)
    for d in differ:
        print(f"NOT DETERMINISTIC {d}")
    per = {i: sum(1 for x in lines if x[0] == i) for i in exercises}
    worked = sum(1 for x in lines if x[1].startswith("worked"))
    print(f"{len(lines)} distinctive lines ({len(lines) - worked} of solution and hidden "
          f"regions over {len(exercises)} exercises: "
          f"{', '.join(f'{i}: {n}' for i, n in per.items())}; {worked} of the worked "
          f"solutions) searched in "
          f"{len(content)} released files: {len(bad)} found")
    missing = [i for i, n in per.items() if n == 0]
    if missing:
        print(f"exercises with no distinctive line to search for: {', '.join(missing)}")
    return 1 if bad or differ or missing else 0


# ---- ctest labels (a build step) ----------------------------------------------------------------

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
             "test suites (tests/homework.py labels)"]
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


# ---- a chapter program as a build step ----------------------------------------------------------

def cmd_run_chapter(args):
    r = subprocess.run([args.exe, "--out", args.out], stderr=subprocess.PIPE, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode == 0:
        return 0
    if r.returncode != EXIT_NOT_DONE or not is_student_copy(ROOT):
        return r.returncode
    # The student copy: the site still builds. output.txt says which exercise to do, the
    # committed figures stand in for the ones the program would have drawn.
    os.makedirs(args.out, exist_ok=True)
    line = r.stderr.strip().split("\n")[-1]
    with open(os.path.join(args.out, "output.txt"), "w", encoding="utf-8") as f:
        f.write(f"{line}\n\nThis is the student copy of the book. The program's output "
                "appears here once the exercise is done\n(then run ./book again).\n")
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        f.write('{"exercise_not_done": true}\n')
    for name in args.figure:
        src = os.path.join(args.figures_dir, name + ".svg")
        if os.path.isfile(src):
            shutil.copyfile(src, os.path.join(args.out, name + ".svg"))
    print(f"(student copy) {line}; placeholders written in {args.out}")
    return 0


# ---- building and running tests ------------------------------------------------------------------

def run(cmd, log=None, **kw):
    if log:
        with open(log, "a") as f:
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **kw).returncode
    return subprocess.run(cmd, **kw).returncode


def chapter_numbers(root):
    return sorted(d[:2] for d in os.listdir(os.path.join(root, "chapters"))
                  if re.match(r"\d\d-", d) and os.path.isdir(os.path.join(root, "chapters", d)))


# Target: its folder in the build tree. The test binaries of tests/ (every chapter's are
# test-NN) and live-reference, which a test runs (the live figures' compute functions).
LIBRARY_TESTS = {"test-lib": "tests", "test-harness": "tests", "test-live": "tests",
                 "live-reference": "bin"}


def build_targets(root):
    nn = chapter_numbers(root)
    return list(LIBRARY_TESTS) + [f"test-{n}" for n in nn] + [f"ch{n}" for n in nn]


LEAN_BUILD = os.path.join("build", "lean")


def lean_configure(src, log):
    """Configures SRC/build/lean: the tests and programs only (no site, no benchmarks).
    Every lean tree (validate's, grade --instructor's, an autograder's) sits at the same place
    inside its own copy of the book, and the compiler runs through ccache with base_dir set to
    the copy (CMakeLists.txt): the same file compiled in another copy is a cache hit, so only
    what differs is compiled."""
    build = os.path.join(src, LEAN_BUILD)
    if os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        return 0
    return run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                "-DBOOK_WITH_SITE=OFF", "-DBOOK_WITH_BENCH=OFF"], log)


def cmake_build(build, targets, log, jobs):
    return run(["cmake", "--build", build, "--parallel", str(jobs), "--target", *targets], log)


def run_ctest(build, label_regex=None, exclude_regex=None, jobs=2, log=None, name_regex=None):
    """{test name: (status, output)} of one ctest run; status is passed, failed or skipped,
    output what the test printed (ctest's JUnit report)."""
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
    run(cmd, log)
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
                                   if re.fullmatch(r"test-\w+|ch\d\d", os.path.basename(c))]
    return out


def targets_for(build, ids, src):
    """The binaries that hold the tests of the exercises `ids`: an edit to one exercise
    relinks only those. All test binaries and programs when some are not built yet (the
    test list of a binary exists only once it is built)."""
    nn = chapter_numbers(src)
    built = [os.path.join(build, d, t) for t, d in LIBRARY_TESTS.items()] + \
        [os.path.join(build, "chapters", f"test-{n}") for n in nn] + \
        [os.path.join(build, "bin", f"ch{n}") for n in nn]
    if not all(os.path.isfile(b) for b in built):
        return build_targets(src)
    binaries = {}
    labels = labels_of(build, binaries)
    wanted = {"ex" + i for i in ids}
    targets = sorted({b for name, labs in labels.items() if wanted & set(labs)
                      for b in binaries.get(name, [])})
    return targets or build_targets(src)


# ---- grade ------------------------------------------------------------------------------------

TEST_FILE = re.compile(r"(chapters/[^/]+/test[^/]*|tests/(lib|harness)/[^/]+)\.cpp")


def hidden_restored(student_root, instructor_root):
    """The tree graded with --instructor: the student's copy, except that every test file
    (chapters/*/test*.cpp, tests/lib/*.cpp, tests/harness/*.cpp) is the instructor's, hidden tests included, so
    the hidden tests run and a student's edits to the tests do not count."""
    content = {rel: None for rel in book_files(student_root)}
    inst_files, _ = scan(instructor_root)
    found = False
    for rel in book_files(instructor_root):
        if not TEST_FILE.fullmatch(rel) or INSTRUCTOR_ONLY.fullmatch(rel):
            continue
        text = read_text(os.path.join(instructor_root, rel))
        if rel in inst_files:
            text = release_text(text, inst_files[rel][1], keep_hidden=True)
            found = found or any(r.kind == "hidden" for r in inst_files[rel][1])
        content[rel] = text.encode()
    if not found:
        raise UsageError(f"--instructor {instructor_root}: has no hidden tests")
    return content


POINTS_FILE = os.path.join("tests", "points.toml")


def load_points(root):
    """(default points, {test name: points}) from tests/points.toml, the one place where an
    instructor sets what each test case of an exercise is worth."""
    import tomllib
    path = os.path.join(root, POINTS_FILE)
    if not os.path.isfile(path):
        return 1.0, {}
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{POINTS_FILE}: not readable TOML ({e})")
    def points(key, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1000:
            raise UsageError(f"{POINTS_FILE}: {key} = {v!r}; points are numbers in [0, 1000]")
        return float(v)
    unknown = set(data) - {"default", "tests"}
    if unknown:
        raise UsageError(f"{POINTS_FILE}: unknown key {sorted(unknown)[0]!r} (keys: default, "
                         "[tests])")
    return (points("default", data.get("default", 1)),
            {name: points(repr(name), v) for name, v in data.get("tests", {}).items()})


def hidden_test_names(files):
    """The doctest names of the test cases inside hidden regions."""
    names = set()
    for _, (_, regions) in files.items():
        for r in regions:
            if r.kind == "hidden":
                names.update(doctest_sources.test_case_names("\n".join(r.lines)))
    return sorted(names)


def claim_of(test_name):
    """A ctest name without its binary's prefix ("03:" or "03: "): the claim it checks."""
    return re.sub(r"^[\w-]+:\s?", "", test_name)


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
        keep = [line for line in lines if "error" in line.lower()][-limit:] or lines[-limit:]
    return "\n".join(keep[:limit] + (["..."] if len(keep) > limit else [])) + "\n", files


def grade_run(src, build, exercises, hidden, student, jobs, log, stubs=None, book_root=None):
    """Builds the tests of `exercises` in `build`, runs them, and returns the grading run
    that tests/grade_formats.py renders. `stubs` ({file: text}, the autograder's): a
    submitted file that does not compile is replaced by its stub, so that the other
    exercises are still graded; its exercises score 0 with the compiler's message."""
    t0 = time.monotonic()
    default, points = load_points(book_root or src)
    ids = [e["id"] for e in exercises]
    rc = cmake_build(build, targets_for(build, ids, src), log, jobs)
    message, broken = "", []
    if rc != 0 and stubs:
        message, files = compiler_message(log, src)
        bad = [f for f in files if f in stubs] or list(stubs)
        broken = sorted({e["id"] for e in exercises for fn in e["functions"]
                         if fn["file"] in bad})
        for rel in bad:
            with open(os.path.join(src, rel), "w", encoding="utf-8") as f:
                f.write(stubs[rel])
        say(f"did not compile: {', '.join(bad)}; graded with the stubs in their place")
        rc = cmake_build(build, targets_for(build, ids, src), log, jobs)
    elif rc != 0:
        message, _ = compiler_message(log, src)
    tests, rows = [], []
    results = {}
    if rc == 0:
        regex = "^ex(" + "|".join(re.escape(i) for i in ids) + ")$"
        results = run_ctest(build, label_regex=regex, jobs=jobs,
                            log=os.path.join(os.path.dirname(log), "grade-ctest.log"))
    labels = labels_of(build) if rc == 0 else {}
    for e in exercises:
        names = sorted(n for n, labs in labels.items() if "ex" + e["id"] in labs)
        for n in names:
            status, output = results.get(n, ("failed", ""))
            ok = status == "passed" and e["id"] not in broken
            is_hidden = claim_of(n) in hidden
            max_points = points.get(n, default)
            feedback = "" if ok or is_hidden else (
                "did not compile:\n" + message if e["id"] in broken
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
            "exercises": rows, "tests": tests}


def print_table(run, hidden, out=sys.stdout):
    print(f"\nExercises ({'with' if hidden else 'without'} the hidden tests); points per "
          f"test case from {POINTS_FILE}:", file=out)
    print(f"  {'exercise':<9}{'function (file)':<62}{'tests':>9}  {'points':>11}  status",
          file=out)
    for r in run["exercises"]:
        where = "; ".join(f"{f['function']} ({f['file']})" for f in r["functions"])
        print(f"  {r['id']:<9}{where:<62}{r['passed']:>4} / {r['tests']:<3} "
              f"{r['points']:>5g} / {r['max_points']:<5g} {r['status']}", file=out)
    got = sum(r["points"] for r in run["exercises"])
    top = sum(r["max_points"] for r in run["exercises"])
    print(f"  total {got:g} of {top:g} points", file=out)
    if not run["build_ok"]:
        print("\nThe build failed:\n" + run["build_message"], file=out)


def check_out_path(option, given):
    """Refuses (UsageError) an output FILE that could not be written, before any grading."""
    what = "it takes a file name in an existing, writable directory"
    if not given:
        raise UsageError(f"{option}: empty; {what}")
    path = os.path.abspath(given)
    if os.path.isdir(path):
        raise UsageError(f"{option} {given}: is a directory; {what}")
    jdir = os.path.dirname(path)
    if not os.path.isdir(jdir):
        raise UsageError(f"{option} {given}: directory {jdir} does not exist; {what}")
    probe_writable(option, given, jdir)


def write_atomically(path, text, option):
    """Writes `text` to a temporary file beside `path`, then renames it into place: a
    reader sees the old file or the new one, never half of one; no temporary file is left."""
    path = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path),
                               prefix=f".{os.path.basename(path)}.tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise UsageError(f"{option} {path}: writing failed ({e.strerror or e}); "
                         "nothing was written")
    finally:
        if tmp:
            os.remove(tmp)


def old_csv(path):
    """An existing grade CSV at `path` (its other students' rows are kept), or ''."""
    if not os.path.isfile(path):
        return ""
    text = read_text(path)
    try:
        grade_formats.merged_csv(text, {"student": "", "exercises": []})
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
    text = grade_formats.render(fmt, run, old)
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
                or not os.path.isfile(os.path.join(inst, "tests", "homework.py")):
            raise UsageError(f"--instructor {args.instructor}: not the instructor's copy of "
                             "the book; it takes the directory of the book with the solutions")
    if args.out is not None:
        if args.format == "table":
            raise UsageError("--out: the table goes to the terminal; give --format too "
                             f"({', '.join(grade_formats.FORMATS[1:])})")
        check_out_path("--out", args.out)
        if args.format == "csv":
            old_csv(os.path.abspath(args.out))
    student = args.student if args.student is not None else os.path.basename(ROOT)
    check_student_id(student)
    load_points(ROOT)
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
        src, build = ROOT, os.path.join(ROOT, "build", "release")
        log = os.path.join(ROOT, "build", "grade-build.log")
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        hidden = marker.get("hidden_test_names", [])
    open(log, "w").close()
    if args.instructor:
        rc = lean_configure(src, log)
    else:
        rc = 0 if os.path.isfile(os.path.join(build, "CMakeCache.txt")) else \
            run(["cmake", "--preset", "release"], log, cwd=ROOT)
    if rc != 0:
        with open(log) as f:
            sys.stderr.write(f.read()[-3000:])
        print(f"grade: configuring failed (log: {log})", file=sys.stderr)
        return 1
    say(f"building the tests ({'hidden tests restored from ' + inst if args.instructor else 'the student copy'}; log: {log})")
    result = grade_run(src, build, exercises, hidden, student, args.jobs, log,
                       book_root=ROOT)
    if result["build_ok"]:
        say("ran the exercises' tests")
    emit(result, args.format, args.out and os.path.abspath(args.out), bool(args.instructor))
    print(f"(graded in {result['elapsed']:.1f} s)", file=sys.stderr)
    if not result["build_ok"]:
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
            run(["cmake", "--preset", "release"], log, cwd=ROOT) != 0:
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


# ---- validate ---------------------------------------------------------------------------------

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
    _, points = load_points(ROOT)
    graded = {n for n, labs in ref_labels.items() if any(lab.startswith("ex") for lab in labs)}
    problems += [f"{POINTS_FILE} sets points of `{n}`, which is not a test of an exercise"
                 for n in sorted(set(points) - graded)]
    if args.full_tests_passed:
        say("validate 1/4: the full book passed every test (this ./book test run)")
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
    t_build = time.monotonic()
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
    dt = time.monotonic() - t0
    for p in problems:
        print("PROBLEM " + p, file=sys.stderr)
    print(f"validate: {len(exercises)} exercises, {'no problems' if not problems else str(len(problems)) + ' problems'}; "
          f"{dt:.0f} s ({t_build:.0f} s building the release)")
    return 1 if problems else 0


# ---- main -------------------------------------------------------------------------------------

def choice(option, allowed):
    def parse(text):
        if text not in allowed:
            raise argparse.ArgumentTypeError(f"{option} {text}: unknown; it takes one of "
                                             f"{', '.join(allowed)}")
        return text
    return parse


def jobs(text):
    """--jobs: a decimal integer in [1, 256] (no octal reading of a leading zero)."""
    if not re.fullmatch(r"[0-9]{1,4}", text) or not 1 <= int(text, 10) <= 256:
        raise argparse.ArgumentTypeError(f"--jobs {text}: it takes an integer in [1, 256]")
    return int(text, 10)


# What each option takes, for the one-line refusals of a missing or bad value.
TAKES = {
    "--out": "a directory (release: new, empty, or an earlier release with --force; grade: "
             "a file)",
    "--exercise": "an exercise id such as 03.1 (repeatable)",
    "--format": "one of " + ", ".join(grade_formats.FORMATS),
    "--student": "a student id",
    "--autograder": "a new directory outside the book",
    "--instructor": "the directory of the instructor's copy of the book",
    "--jobs": "an integer in [1, 256]",
    "--binary": "a test binary", "--prefix": "a test name prefix", "--labels": "labels",
    "--exe": "a chapter program", "--figures-dir": "a directory", "--figure": "a figure name",
}


def parser():
    p = argparse.ArgumentParser(prog="book", description=__doc__.split("\n")[0],
                                allow_abbrev=False)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("release", help="write the student copy", allow_abbrev=False)
    r.add_argument("--out", metavar="DIR")  # required: checked after unknown options
    r.add_argument("--autograder", metavar="DIR", help="write the autograder bundle "
                   "(Gradescope, PrairieLearn) instead of the student copy")
    r.add_argument("--force", action="store_true")
    ag = sub.add_parser("autograde", help="(run_autograder) grade one submission",
                        allow_abbrev=False)
    ag.add_argument("--source", required=True, metavar="DIR")
    ag.add_argument("--submission", default="/autograder/submission", metavar="DIR")
    ag.add_argument("--results", default="/autograder/results", metavar="DIR")
    ag.add_argument("--format", default="gradescope", metavar="F",
                    type=choice("--format", ("gradescope", "prairielearn")))
    ag.add_argument("--prepare", action="store_true", help="(setup.sh) build with the stubs")
    ag.add_argument("--jobs", type=jobs, default=0, metavar="N")
    g = sub.add_parser("grade", help="grade a student copy", allow_abbrev=False)
    g.add_argument("--exercise", action="append", metavar="ID", help="an exercise id, e.g. "
                   "03.1 (repeatable; default: all)")
    g.add_argument("--format", default="table", metavar="F",
                   type=choice("--format", grade_formats.FORMATS),
                   help="table (default), json, gradescope, prairielearn, github-classroom "
                   "or csv")
    g.add_argument("--out", metavar="FILE", help="write the --format document to this file "
                   "(default: standard output); csv keeps other students' rows")
    g.add_argument("--student", metavar="ID", help="the student's id in csv and json "
                   "(default: the copy's directory name)")
    g.add_argument("--instructor", metavar="DIR",
                   help="the instructor's copy: its hidden tests are run too")
    g.add_argument("--jobs", type=jobs, default=2, metavar="N")
    g.add_argument("--check-only", action="store_true",
                   help="check the options, then stop (./book does, before installing)")
    c = sub.add_parser("check", help="one exercise's public tests, claim by claim",
                       allow_abbrev=False)
    c.add_argument("ids", nargs="+", metavar="ID", help="an exercise id, e.g. 03.1")
    c.add_argument("--jobs", type=jobs, default=2, metavar="N")
    c.add_argument("--check-only", action="store_true",
                   help="check the arguments, then stop (./book does, before installing)")
    v = sub.add_parser("validate", help="the instructor's check", allow_abbrev=False)
    v.add_argument("--full-tests-passed", action="store_true",
                   help="./book test has just run every test of the full book")
    v.add_argument("--jobs", type=jobs, default=2, metavar="N")
    sub.add_parser("list", help="the exercises", allow_abbrev=False)
    sub.add_parser("leak-test", help="a release contains no solution text", allow_abbrev=False)
    lab = sub.add_parser("labels", allow_abbrev=False)
    lab.add_argument("--binary", required=True)
    lab.add_argument("--prefix", required=True)
    lab.add_argument("--labels", default="")
    lab.add_argument("--out", required=True)
    rc = sub.add_parser("run-chapter", allow_abbrev=False)
    rc.add_argument("--exe", required=True)
    rc.add_argument("--out", required=True)
    rc.add_argument("--figures-dir", required=True)
    rc.add_argument("--figure", action="append", default=[])

    def options_of(sp):
        return [a.option_strings[0] + ("" if a.nargs == 0 else " " + (a.metavar or "X"))
                for a in sp._actions if a.option_strings and a.dest not in ("help", "check_only")]

    def refuser(name, sp):
        def error(message):  # argparse's errors, as one line naming the option: exit 2
            options = options_of(sp)
            m = re.search(r"argument (--[\w-]+)(?:/[^:]*)?: expected one argument", message)
            if m:
                message = f"{m.group(1)} needs a value: {TAKES.get(m.group(1), 'a value')}"
            m = re.search(r"argument (--[\w-]+): (--[\w-]+ .*)", message)
            if m:  # a type's own message (--jobs)
                message = m.group(2)
            if "arguments are required: ID" in message:
                message = "an exercise id is required, e.g. 03.1"
            if "arguments are required: cmd" in message:
                message = f"a command is required (commands: {', '.join(sub.choices)})"
            m = re.search(r"the following arguments are required: (--.*)", message)
            if m:
                missing = m.group(1).split(", ")[0].split("/")[0]
                message = f"{missing} is required: {TAKES.get(missing, 'a value')}"
            m = re.search(r"argument cmd: invalid choice: '([^']*)'", message)
            if m:
                message = f"unknown command '{m.group(1)}' (commands: {', '.join(sub.choices)})"
            prefix = f"{name}: " if name else ""
            suffix = f" (options: {', '.join(options)})" if options and "unknown option" \
                in message else ""
            raise UsageError(prefix + message + suffix)
        return error
    p.error = refuser("", p)
    for name, s in sub.choices.items():
        s.error = refuser(name, s)

    def parse(argv):  # an unknown option is named with its command's options
        a, unknown = p.parse_known_args(argv)
        if unknown:
            sp = sub.choices[a.cmd]
            kind = "option" if unknown[0].startswith("-") else "argument"
            raise UsageError(f"{a.cmd}: unknown {kind} '{unknown[0]}' (options: "
                             f"{', '.join(options_of(sp)) or 'none'})")
        return a
    return parse


def main(argv):
    # SIGTERM and SIGHUP end the run like SIGINT does, through every `finally`, so that no
    # temporary file or half-written copy is left.
    signal.signal(signal.SIGTERM, raise_interrupted)
    signal.signal(signal.SIGHUP, raise_interrupted)
    try:
        a = parser()(argv)
        return {"release": cmd_release, "grade": cmd_grade, "validate": cmd_validate,
                "check": cmd_check, "autograde": cmd_autograde, "list": cmd_list, "leak-test": cmd_leak_test, "labels": cmd_labels,
                "run-chapter": cmd_run_chapter}[a.cmd](a)
    except UsageError as e:
        print(f"book: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        signum = e.args[0] if isinstance(e, Interrupted) else signal.SIGINT
        print(f"book: interrupted ({signal.Signals(signum).name}); temporary files removed",
              file=sys.stderr)
        return 128 + signum


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
