"""The solution and hidden-test regions of the book's sources (// BEGIN SOLUTION NN.M ...
// END SOLUTION, // BEGIN HIDDEN TESTS NN.M ... // END HIDDEN TESTS), the book's files, what
the release puts in a region's place, and the marker file of a student copy."""
import json
import os
import re
import subprocess

from book.doctest_sources import test_case_names

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
# The instructor's copy only: the worked solutions (page and tests) and the wrong answers
# validate checks (book.homework.wrong_answers); the release leaves them out.
INSTRUCTOR_ONLY = re.compile(
    r"chapters/[^/]+/(solutions\.md|test_solutions\.cpp|wrong_answers\.cpp)")


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


HIDDEN_TESTS_FILE = re.compile(r"chapters/([^/]+)/(test[^/]*\.cpp)")


def hidden_copy(rel):
    """Where a grading tree (the autograder's, grade --instructor's) keeps the whole text of a
    chapter's test file with hidden tests: in hidden/ beside it, compiled into a binary of its
    own, test-NN-hidden (chapters/CMakeLists.txt). The public tests' binary, which runs first,
    then holds none of the hidden tests' text, and the grader can keep hidden/ and that binary
    out of the student code's reach until the public tests are done (book.homework.run_tests).
    Raises ValueError for a file outside chapters/*/test*.cpp (no binary would hold it)."""
    m = HIDDEN_TESTS_FILE.fullmatch(rel)
    if not m:
        raise ValueError(f"{rel}: hidden tests belong in a chapter's test file "
                         "(chapters/NN-slug/test*.cpp)")
    return f"chapters/{m.group(1)}/hidden/{m.group(2)}"


def is_student_copy(root):
    return os.path.isfile(os.path.join(root, MARKER_FILE))


def load_marker(root):
    with open(os.path.join(root, MARKER_FILE), encoding="utf-8") as f:
        return json.load(f)


def hidden_test_names(files):
    """The doctest names of the test cases inside hidden regions."""
    return sorted({name for _, regions in files.values() for r in regions
                   if r.kind == "hidden" for name in test_case_names("\n".join(r.lines))})
