#!/usr/bin/env python3
"""Homework tooling of Attention, Verified: the student release, the grader, the validator.

usage (normally through ./book):
  homework.py release --out DIR [--force]          write the student copy of this book
  homework.py grade [--exercise ID] [--json FILE] [--instructor DIR]
                                                   grade a student copy (run inside one)
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
import filecmp
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "docs"))
import pages  # noqa: E402  (docs/pages.py: the chapters' quoted code)

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
    what = ("it takes a new or empty directory outside the book, or an earlier release "
            "with --force")
    if args.out is None:
        raise UsageError(f"release: --out is required; {what}")
    if not args.out:
        raise UsageError(f"--out: empty; {what}")
    out = os.path.realpath(args.out)
    root = os.path.realpath(ROOT)
    if out == root or out.startswith(root + os.sep) or root.startswith(out + os.sep):
        raise UsageError(f"--out {args.out}: is the book, inside it or above it; {what}")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise UsageError(f"--out {args.out}: exists and is not a directory; {what}")
    replacing = os.path.isdir(out) and bool(os.listdir(out))
    if replacing and not args.force:
        raise UsageError(f"--out {args.out}: directory is not empty (--force replaces an "
                         "earlier release there)")
    if replacing and not is_student_copy(out):
        raise UsageError(f"--out {args.out}: not empty and not a student copy; --force "
                         "replaces only an earlier release")
    parent = os.path.dirname(out)
    base = existing_ancestor(parent)
    if not os.path.isdir(base):
        raise UsageError(f"--out {args.out}: {base} is not a directory; {what}")
    probe_writable("--out", args.out, base)
    try:
        content, _, exercises = release_files(ROOT)
    except ValueError as e:
        raise UsageError(str(e))
    size = sum(len(d) if d is not None else os.path.getsize(os.path.join(ROOT, rel))
               for rel, d in content.items())
    vfs = os.statvfs(base)
    free = vfs.f_bavail * vfs.f_frsize
    need = size + 4096 * (len(content) + 64)  # the files, and a block's slack for each
    if need > free:
        raise UsageError(f"--out {args.out}: the student copy needs {need / 2**20:.1f} MiB, "
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
        raise UsageError(f"--out {args.out}: writing the student copy failed "
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
    say(f"student copy in {out}: {len(content)} files ({n} written), exercises "
        f"{', '.join(exercises)} ({time.monotonic() - t0:.1f} s)")
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
    """Lines of solution and hidden regions that appear nowhere else in the book: if one of
    them is in the release, a solution or hidden test leaked."""
    outside = []
    for rel in book_files(ROOT):
        path = os.path.join(ROOT, rel)
        if rel in files:
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
    print(f"{len(lines)} distinctive solution/hidden lines over {len(exercises)} exercises "
          f"({', '.join(f'{i}: {n}' for i, n in per.items())}) searched in "
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


def lean_configure(src, build, log):
    if os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        return 0
    # No precompiled header: every object would depend on a freshly built one, so none of
    # the objects seeded from the reference build (seed_objects) could be reused.
    # Makefiles, whatever the presets use: seed_objects stamps objects and writes depfiles,
    # which make trusts (ninja would want its own logs).
    return run(["cmake", "-S", src, "-B", build, "-G", "Unix Makefiles",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DBOOK_WITH_SITE=OFF", "-DBOOK_WITH_BENCH=OFF", "-DBOOK_PCH=OFF"], log)


def cmake_build(build, targets, log, jobs):
    return run(["cmake", "--build", build, "--parallel", str(jobs), "--target", *targets], log)


def compiled_objects(build):
    """[(object, depfile target, files it depends on)] of every compiled object of `build`:
    from ninja's deps log in a Ninja tree (ninja deletes gcc's depfiles once it has read
    them), from gcc's depfiles (X.o.d) in a Makefile tree."""
    objects = []
    if os.path.isfile(os.path.join(build, "build.ninja")):
        r = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True,
                           text=True)
        for line in r.stdout.splitlines():
            if line.startswith(" "):
                objects[-1][2].append(line.strip())
            elif ": #deps" in line:
                target = line.split(": #deps")[0]
                objects.append((os.path.join(build, target), target, []))
        return objects
    for dirpath, _, filenames in os.walk(build):
        for f in filenames:
            if f.endswith(".o.d"):
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as d:
                    text = d.read().replace("\\\n", " ")
                head, _, deps = text.partition(": ")
                objects.append((os.path.join(dirpath, f[:-2]), head.strip(), deps.split()))
    return objects


def seed_objects(ref_src, ref_build, new_src, new_build):
    """Object reuse: every object of `ref_build` whose source and project headers are
    byte-identical in `new_src` is copied into `new_build` and stamped newer than its
    inputs, so make does not compile it again. Objects of files that differ are left to
    make (and a previously seeded one of them, which has no depfile, is removed)."""
    same_cache = {}

    def same(path):
        if path not in same_cache:
            rel = os.path.relpath(path, ref_src)
            other = os.path.join(new_src, rel)
            try:
                with open(path, "rb") as a, open(other, "rb") as b:
                    same_cache[path] = a.read() == b.read()
            except OSError:
                same_cache[path] = False
        return same_cache[path]

    copied = compiled = 0
    now = time.time()
    for obj_ref, target, deps in compiled_objects(ref_build):
        if not os.path.isfile(obj_ref):
            continue
        rel_obj = os.path.relpath(obj_ref, ref_build)
        obj_new = os.path.join(new_build, rel_obj)
        if not os.path.isdir(os.path.dirname(obj_new)):
            continue  # a target the lean build does not have
        ours = [d for d in deps if os.path.isabs(d) and d.startswith(ref_src + os.sep)
                and not d.startswith(ref_build + os.sep)]
        # Reused only if it is up to date in its own tree (not older than a source).
        fresh = ours and os.path.getmtime(obj_ref) >= max(
            os.path.getmtime(d) if os.path.exists(d) else float("inf") for d in ours)
        if fresh and all(same(d) for d in ours):
            shutil.copyfile(obj_ref, obj_new)
            # Its dependencies, as files of the new tree, so that make rebuilds it when
            # one of them changes later.
            moved = [os.path.join(new_src, os.path.relpath(d, ref_src)) if d in ours
                     else d for d in deps]
            with open(obj_new + ".d", "w", encoding="utf-8") as out:
                out.write(target + ": " + " \\\n  ".join(moved) + "\n")
            os.utime(obj_new + ".d", (now, now))
            os.utime(obj_new, (now, now))
            copied += 1
        else:
            # A copy seeded earlier (identical to the reference object) is now stale:
            # remove it so that make compiles this file.
            if os.path.isfile(obj_new) and (not os.path.isfile(obj_new + ".d") or
                                            filecmp.cmp(obj_new, obj_ref, shallow=False)):
                os.remove(obj_new)
            compiled += 1
    return copied, compiled


def run_ctest(build, label_regex=None, exclude_regex=None, jobs=2, log=None):
    """{test name: (passed, labels)} of one ctest run."""
    junit = os.path.join(build, "homework-ctest.xml")
    if os.path.exists(junit):
        os.remove(junit)
    cmd = ["ctest", "--test-dir", build, "-j", str(jobs), "--output-junit", junit,
           "--no-tests=ignore"]
    if label_regex:
        cmd += ["-L", label_regex]
    if exclude_regex:
        cmd += ["-LE", exclude_regex]
    run(cmd, log)
    results = {}
    if not os.path.isfile(junit):
        return results
    for case in ET.parse(junit).getroot().iter("testcase"):
        status = case.get("status", "")
        failed = case.find("failure") is not None or case.find("error") is not None
        skipped = status in ("notrun", "disabled") or case.find("skipped") is not None
        results[case.get("name")] = ("skipped" if skipped
                                     else "failed" if failed or status == "fail" else "passed")
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
        if not TEST_FILE.fullmatch(rel):
            continue
        text = read_text(os.path.join(instructor_root, rel))
        if rel in inst_files:
            text = release_text(text, inst_files[rel][1], keep_hidden=True)
            found = found or any(r.kind == "hidden" for r in inst_files[rel][1])
        content[rel] = text.encode()
    if not found:
        raise UsageError(f"--instructor {instructor_root}: has no hidden tests")
    return content


def grade_table(exercises, results, labels):
    rows = []
    for e in exercises:
        label = "ex" + e["id"]
        names = sorted(n for n, labs in labels.items() if label in labs)
        passed = [n for n in names if results.get(n) == "passed"]
        failed = [n for n in names if results.get(n) != "passed"]
        score = len(passed) / len(names) if names else 0.0
        status = ("no tests" if not names else "done" if not failed
                  else "not done" if not passed else "partly done")
        rows.append({"id": e["id"], "functions": e["functions"], "tests": len(names),
                     "passed": len(passed), "score": round(score, 4), "status": status,
                     "failed_tests": failed})
    return rows


def print_table(rows, hidden):
    print(f"\nExercises ({'with' if hidden else 'without'} the hidden tests); score = "
          "passed tests / tests:")
    print(f"  {'exercise':<9}{'function (file)':<62}{'passed':>10}  status")
    for r in rows:
        where = "; ".join(f"{f['function']} ({f['file']})" for f in r["functions"])
        print(f"  {r['id']:<9}{where:<62}{r['passed']:>4} / {r['tests']:<3}  {r['status']}")
    total = sum(r["score"] for r in rows)
    print(f"  total {total:.2f} of {len(rows)}")


def check_json_path(given):
    """Refuses (UsageError) a --json FILE that could not be written, before any grading."""
    what = "it takes a file name in an existing, writable directory"
    if not given:
        raise UsageError(f"--json: empty; {what}")
    path = os.path.abspath(given)
    if os.path.isdir(path):
        raise UsageError(f"--json {given}: is a directory; {what}")
    jdir = os.path.dirname(path)
    if not os.path.isdir(jdir):
        raise UsageError(f"--json {given}: directory {jdir} does not exist; {what}")
    probe_writable("--json", given, jdir)


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


def cmd_grade(args):
    if not is_student_copy(ROOT):
        raise UsageError(f"grade works in a student copy (made by ./book release; it has "
                         f"{MARKER_FILE}); {ROOT} is not one")
    marker = load_marker(ROOT)
    exercises = marker["exercises"]
    ids = [e["id"] for e in exercises]
    if args.exercise:
        for x in args.exercise:
            if x not in ids:
                raise UsageError(f"--exercise {x}: unknown exercise (known: {', '.join(ids)})")
        exercises = [e for e in exercises if e["id"] in args.exercise]
    if args.instructor is not None:
        inst = os.path.abspath(args.instructor) if args.instructor else ""
        if not inst or not os.path.isdir(inst) or is_student_copy(inst) \
                or not os.path.isfile(os.path.join(inst, "tests", "homework.py")):
            raise UsageError(f"--instructor {args.instructor}: not the instructor's copy of "
                             "the book; it takes the directory of the book with the solutions")
    if args.json is not None:
        check_json_path(args.json)
    if args.check_only:
        return 0
    t0 = time.monotonic()
    if args.instructor:
        src = os.path.join(ROOT, "build", "grade", "src")
        build = os.path.join(ROOT, "build", "grade", "build")
        content = hidden_restored(ROOT, inst)
        os.makedirs(src, exist_ok=True)
        sync_tree(ROOT, content, src)
        log = os.path.join(ROOT, "build", "grade", "build.log")
    else:
        src, build = ROOT, os.path.join(ROOT, "build", "release")
        log = os.path.join(ROOT, "build", "grade-build.log")
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    open(log, "w").close()
    if args.instructor:
        rc = lean_configure(src, build, log)
        ref = os.path.join(ROOT, "build", "release")
        if rc == 0 and os.path.isdir(ref):
            seed_objects(ROOT, ref, src, build)
    else:
        rc = 0 if os.path.isfile(os.path.join(build, "CMakeCache.txt")) else \
            run(["cmake", "--preset", "release"], log, cwd=ROOT)
    say(f"building the tests ({'hidden tests restored from ' + inst if args.instructor else 'the student copy'}; log: {log})")
    if rc == 0:
        rc = cmake_build(build, targets_for(build, [e["id"] for e in exercises], src), log,
                         args.jobs)
    if rc != 0:
        with open(log) as f:
            sys.stderr.write(f.read()[-6000:])
        print(f"grade: the build failed (log: {log}); fix the compile errors first",
              file=sys.stderr)
        return 1
    say("running the exercises' tests")
    regex = "^ex(" + "|".join(re.escape(e["id"]) for e in exercises) + ")$"
    results = run_ctest(build, label_regex=regex, jobs=args.jobs,
                        log=os.path.join(os.path.dirname(log), "grade-ctest.log"))
    rows = grade_table(exercises, results, labels_of(build))
    print_table(rows, bool(args.instructor))
    print(f"(graded in {time.monotonic() - t0:.1f} s)")
    if args.json:
        doc = {"book": marker["book"], "format": 1, "hidden_tests": bool(args.instructor),
               "score": round(sum(r["score"] for r in rows), 4), "max_score": len(rows),
               "exercises": rows}
        write_atomically(args.json, json.dumps(doc, indent=2) + "\n", "--json")
        print(f"JSON: {args.json}")
    return 0


# ---- validate ---------------------------------------------------------------------------------

def cmd_validate(args):
    if is_student_copy(ROOT):
        raise UsageError("validate is the instructor's check; this is a student copy "
                         "(use ./book grade)")
    t0 = time.monotonic()
    problems = []
    ref = os.path.join(ROOT, "build", "release")
    base = os.path.join(ROOT, "build", "validate")
    src, build = os.path.join(base, "src"), os.path.join(base, "build")
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
    if args.full_tests_passed:
        say("validate 1/4: the full book passed every test (this ./book test run)")
    else:
        say("validate 1/4: the exercises' tests on the solutions")
        res = run_ctest(ref, label_regex="^ex", jobs=jobs, log=log)
        bad = sorted(n for n, s in res.items() if s != "passed")
        problems += [f"fails in the full book: {n}" for n in bad]

    # 2. The student copy: no solution leaks into it (text check).
    say("validate 2/4: the student copy leaks no solution text")
    student, _, _ = release_files(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        sync_tree(ROOT, student, tmp)
        problems += ["leak: " + b for b in leaks(tmp, distinctive_lines(files))]

    # 3. The release builds and its tests behave: built with the hidden tests kept (as
    #    grading with --instructor does), reusing the full book's objects where the
    #    sources are the same.
    say(f"validate 3/4: building the release with stubs (lean, in {build})")
    t_build = time.monotonic()
    sync_tree(ROOT, content, src)
    rc = lean_configure(src, build, log)
    copied = compiled = 0
    if rc == 0 and os.path.isdir(ref):
        copied, compiled = seed_objects(ROOT, ref, src, build)
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
        for name, status in sorted(res.items()):
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
        # build/validate/student, built in its own build/release with the objects above
        # reused: only the files with hidden tests are compiled, and only the test binaries
        # that hold them are linked. (It is a working student copy: ./book grade runs there.)
        say("validate: building the student copy proper (hidden tests removed)")
        s_src = os.path.join(base, "student")
        s_build = os.path.join(s_src, "build", "release")
        os.makedirs(s_src, exist_ok=True)
        sync_tree(ROOT, student, s_src)
        rc2 = lean_configure(s_src, s_build, log)
        if rc2 == 0:
            seed_objects(src, build, s_src, s_build)
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
          f"{dt:.0f} s ({t_build:.0f} s building the release: {copied} objects reused, "
          f"{compiled} compiled)")
    return 1 if problems else 0


# ---- main -------------------------------------------------------------------------------------

def jobs(text):
    """--jobs: a decimal integer in [1, 256] (no octal reading of a leading zero)."""
    if not re.fullmatch(r"[0-9]{1,4}", text) or not 1 <= int(text, 10) <= 256:
        raise argparse.ArgumentTypeError(f"--jobs {text}: it takes an integer in [1, 256]")
    return int(text, 10)


# What each option takes, for the one-line refusals of a missing or bad value.
TAKES = {
    "--out": "a directory (release: new, empty, or an earlier release with --force)",
    "--exercise": "an exercise id such as 03.1 (repeatable)",
    "--json": "a file name in an existing, writable directory",
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
    r.add_argument("--force", action="store_true")
    g = sub.add_parser("grade", help="grade a student copy", allow_abbrev=False)
    g.add_argument("--exercise", action="append", metavar="ID", help="an exercise id, e.g. "
                   "03.1 (repeatable; default: all)")
    g.add_argument("--json", metavar="FILE", help="write the scores as JSON to this file")
    g.add_argument("--instructor", metavar="DIR",
                   help="the instructor's copy: its hidden tests are run too")
    g.add_argument("--jobs", type=jobs, default=2, metavar="N")
    g.add_argument("--check-only", action="store_true",
                   help="check the options, then stop (./book does, before installing)")
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
                "list": cmd_list, "leak-test": cmd_leak_test, "labels": cmd_labels,
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
