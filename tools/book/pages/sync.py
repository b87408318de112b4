"""The page is the program: the chapters' Markdown kept equal to the build.

A chapter's README.md is read in two places: on a Git host, as plain GitHub-flavoured Markdown,
and on the site, through Doxygen. Everything in it that the build computes is marked with HTML
comments (invisible on both; the table of them is book.pages.model.MARKERS) so that sync can
write it from the build and a test can fail when it differs:

  <!-- code: ../../code/src/attention.cpp#qkv -->       the lines between the two `// [qkv]`
  ...a link line and a fenced block...                   markers of that file (path relative
  <!-- end code -->                                      to the README), with their line numbers

  <!-- output: 01-self-attention -->                     that chapter program's output.txt
  ...a fenced block...
  <!-- end output -->

  1. **01.1 Title** (explore · 6 points · about 30 min).<!--exercise-->
                                                         an exercise's head, and the table of
                                                         the exercises and the worked
                                                         solutions' headings, from
                                                         chapters/exercises.toml
                                                         (book.pages.exercises)

  <!--#key FORMAT-->0.24                                 a number from the program's
                                                         results.json (key "NN:key": chapter
                                                         NN's), in the text right after the
                                                         marker (an opening $ may come first)
  <!--#sol:NN.M.key FORMAT-->0.24                        a number of a worked solution: what
                                                         chapter NN's solution tests computed
                                                         (tests/support/solution_values.hpp),
                                                         OUT/solutions/NN-slug.json

FORMAT is a Python format spec (".3f", ".2e", ".3g", "d", ".1%"), "tex.1e" for
2.8 \\times 10^{-16}, or empty (an integer as such, else "g"). FORMAT "<" or ">" marks a bound:
the text keeps its number and the check asserts value <= number (or >=), for quantities whose
last bits depend on the CPU (rounding residuals): every number shown must be the same on any
x86-64 machine. Keys starting with "time_" are measurements: the site shows the value of the
build that rendered it; the Markdown keeps the value it was last synced with (`sync --times`),
and the check ignores them.

Output blocks are compared exactly, except for numbers in e-notation (1.7e-08: how the programs
print errors and residuals, whose digits depend on the CPU's rounding: fused multiply-adds,
vector width): those compare equal within a factor of 10, and any two below 1e-12 in
magnitude compare equal. A result that changed shows in the text, the integers or the
fixed-point numbers of the block; ./book rewrites a block only when the comparison fails, so
another CPU does not rewrite it.

usage (python -m book.pages):
  sync  ROOT OUT [--times] [--code-only] [--page=FILE]
                                            rewrite what differs; list the files
  check ROOT OUT [--page=FILE]              exit 1 with a diff when anything differs
  sources ROOT HTML_DIR --reader|--instructor   the site's pages of the source files
  student-copy ROOT DIR                     keep DIR equal to the student copy of ROOT (the
                                            reader's site is made from it)
  (OUT: the programs' output directory, build/release/out)

The site's side of the same regions is book.pages.site.
"""
import difflib
import glob
import json
import os
import re
import sys

from .exercises import with_exercises
from .links import link_failures
from .model import MARKERS, PageError, Region, numbers, parse, read
from .sources import write_sources

TINY = 1e-12  # output-block numbers below this compare equal (rounding residuals)
LANG = {".cpp": "cpp", ".hpp": "cpp", ".h": "cpp", ".py": "python", ".cmake": "cmake"}


# ---- the pieces the build supplies ------------------------------------------------------------

def snippet(path, tag, read_source=None):
    """(first line number, lines) between the two `// [tag]` marker lines of a file."""
    lines = (read_source or read)(path).split("\n")
    marker = re.compile(r"^\s*//\s*\[" + re.escape(tag) + r"\]\s*$")
    at = [i for i, line in enumerate(lines) if marker.match(line)]
    if len(at) < 2:
        raise PageError(f"{path}: no pair of `// [{tag}]` markers")
    return at[0] + 2, lines[at[0] + 1:at[1]]


def dedent(lines):
    indents = [len(s) - len(s.lstrip(" ")) for s in lines if s.strip()]
    cut = min(indents) if indents else 0
    return [s[cut:] if s.strip() else "" for s in lines]


def repo_path(root, readme, rel):
    return os.path.relpath(os.path.normpath(os.path.join(os.path.dirname(readme), rel)), root)


def code_block(root, readme, rel, tag, read_source=None):
    """The Markdown a code region holds: a link to the lines, then the fenced code."""
    path = os.path.normpath(os.path.join(os.path.dirname(readme), rel))
    first, lines = snippet(path, tag, read_source)
    last = first + len(lines) - 1
    shown = repo_path(root, readme, rel)
    lang = LANG.get(os.path.splitext(path)[1], "")
    return ([f"[`{shown}`, lines {first}–{last}]({rel}#L{first}-L{last})", f"```{lang}"]
            + dedent(lines) + ["```"])


def output_block(out_dir, slug):
    text = read_output(out_dir, slug)
    return ["```text"] + text.rstrip("\n").split("\n") + ["```"]


def read_output(out_dir, slug):
    path = os.path.join(out_dir, slug, "output.txt")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        raise PageError(f"{path} is missing: build the book first (./book)")


# Where the numbers of the worked solutions are (chapters/CMakeLists.txt): SOLUTIONS/NN-slug.json.
SOLUTIONS = "solutions"


class Results:
    """results.json of every chapter and the worked solutions' numbers, loaded on demand; None
    for a chapter whose exercise is not done (student copy)."""

    def __init__(self, root, out_dir):
        self.root, self.out_dir, self.cache = root, out_dir, {}

    def slug(self, nn):
        dirs = glob.glob(os.path.join(self.root, "chapters", nn + "-*"))
        if not dirs:
            raise PageError(f"no chapter {nn}")
        return os.path.basename(dirs[0])

    def load(self, rel):
        """The JSON object at OUT/rel."""
        if rel not in self.cache:
            path = os.path.join(self.out_dir, rel)
            try:
                with open(path, encoding="utf-8") as f:
                    self.cache[rel] = json.load(f)
            except OSError:
                raise PageError(f"{path} is missing: build the book first (./book)")
        return self.cache[rel]

    def chapter(self, slug):
        data = self.load(os.path.join(slug, "results.json"))
        return None if data.get("exercises_not_done") else data

    def value(self, key, own_slug):
        """KEY's number: "key" of the page's own chapter, "NN:key" of chapter NN's results,
        "sol:NN.M.key" of the worked solutions (chapter NN's solution tests)."""
        if key.startswith("sol:"):
            key = key[4:]
            rel = os.path.join(SOLUTIONS, self.slug(key[:2]) + ".json")
            data = self.load(rel)
        else:
            slug = own_slug
            if ":" in key:
                nn, key = key.split(":", 1)
                slug = self.slug(nn)
            if slug is None:
                raise PageError(f"number `{key}` outside a chapter needs NN:key")
            rel = os.path.join(slug, "results.json")
            data = self.chapter(slug)
            if data is None:
                return None
        if key not in data:
            raise PageError(f"{rel} has no key `{key}`")
        v = data[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise PageError(f"{rel}: `{key}` is not a number")
        return v


def format_number(value, spec):
    if spec.startswith("tex"):
        mantissa, exponent = format(value, spec[3:]).split("e")
        e = int(exponent)
        return mantissa if e == 0 else f"{mantissa} \\times 10^{{{e}}}"
    if not spec:
        if float(value).is_integer() and abs(value) < 1e15:
            return str(int(value))
        return format(value, "g")
    if spec.endswith("d"):
        return format(int(round(value)), spec)
    return format(value, spec)


def parse_number(text):
    power = re.match(r"10\^\{(-?\d+)\}", text)
    if power:
        return 10.0 ** int(power.group(1))
    m = re.match(r"(-?\d+(?:\.\d+)?)(?:e([-+]?\d+)|[ \t]*\\times[ \t]*10\^\{(-?\d+)\})?",
                 text)
    e = m.group(2) or m.group(3)
    return float(m.group(1) + ("e" + e if e else ""))


# ---- the Markdown -----------------------------------------------------------------------------

def chapter_slug(readme):
    d = os.path.basename(os.path.dirname(os.path.abspath(readme)))
    parent = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(readme))))
    return d if parent == "chapters" and re.match(r"\d\d-", d) else None


def without_code(text):
    """The text with the content of its code regions left out (they quote the sources)."""
    lines = text.split("\n")
    for kind, b, e, _ in reversed(parse(text).regions()):
        if kind == "code":
            del lines[b + 1:e]
    return "\n".join(lines)


def expected(root, out_dir, readme, text, times=False, code_only=False, site=False,
             read_source=None):
    """The text as the build says it should be. Regions and numbers of a chapter whose
    exercise is not done keep their text. With site=True, times are filled in too.
    read_source(path) -> text lets the student release quote its stubs."""
    return "\n".join(expected_lines(root, out_dir, readme, text, times, code_only, site,
                                    read_source)[0])


def expected_lines(root, out_dir, readme, text, times=False, code_only=False, site=False,
                   read_source=None):
    """expected()'s lines, and its regions (Region: kind, marker lines, match) in them. The
    page is parsed once: the lines outside its regions are copied, their model still holds."""
    slug = chapter_slug(readme)
    if not code_only:  # (a student copy's release changes only its code blocks)
        page = parse(text)
        text = "\n".join(with_exercises(root, readme, page, list(page.lines), slug))
    page = parse(text)
    lines, regions = page.lines, page.regions()
    results = Results(root, out_dir)
    out, out_regions, moved = [], [], {}  # moved[line of the page] = its line in out

    def copy(first, end):
        for i in range(first, end):
            moved[i] = len(out)
            out.append(lines[i])
    prev = 0
    for kind, b, e, m in regions:
        copy(prev, b + 1)
        body = lines[b + 1:e]
        if kind == "code":
            body = code_block(root, readme, m.group(1), m.group(2), read_source)
        elif not code_only and results.chapter(m.group(1)) is not None:
            new = output_block(out_dir, m.group(1))
            if site or not same_output(new, body):
                body = new
        out += body
        copy(e, e + 1)
        out_regions.append(Region(kind, moved[b], moved[e], m))
        prev = e + 1
    copy(prev, len(lines))
    if slug:
        number_figures(out, int(slug[:2]), [moved[i] for i, _ in page.figures()])
    if code_only:
        return out, out_regions
    in_region = {i for r in regions for i in range(r.begin, r.end + 1)}
    for k, _ in page.prose_lines():
        if k in in_region or "<!--#" not in out[moved[k]]:
            continue
        i = moved[k]
        line = out[i]
        pieces, last = [], 0
        for m, s, t in numbers(line):
            key, spec = m.group(1), m.group(2) or ""
            timed = key.split(":")[-1].startswith("time_")
            value = results.value(key, slug)
            if value is None or spec in ("<", ">") or (timed and not (times or site)):
                continue
            shown = format_number(value, spec)
            if line[s:t].endswith("%") and not shown.endswith("%"):
                shown += "%"  # "40%" with FORMAT d: the sign is the text's
            pieces += [line[last:s], shown]
            last = t
        out[i] = "".join(pieces) + line[last:]
    return out, out_regions


def number_figures(lines, chapter, figures):
    """Captions start "Figure N.k.", in page order (figures: the lines of their images)."""
    for k, i in enumerate(figures, 1):
        lines[i + 1] = f"*Figure {chapter}.{k}. " + FIGURE_NUMBER.sub("*", lines[i + 1])[1:]


def same_output(a, b):
    """Output blocks equal up to CPU rounding (see the module's docstring)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        tx, ty = re.split(r"(\S+)", x), re.split(r"(\S+)", y)
        if len(tx) != len(ty):
            return False
        for u, v in zip(tx, ty):
            if u != v and not rounding_apart(u, v):
                return False
    return True


FIGURE_NUMBER = re.compile(r"^\*Figure \d+\.\d+\.[ \t]*")
E_NUMBER = re.compile(r"^([(\[]?)(-?\d+(?:\.\d+)?e[-+]\d+)([,;:)\]]*)$")


def rounding_apart(u, v):
    """Two e-notation tokens that differ only as CPU rounding makes them differ."""
    mu, mv = E_NUMBER.match(u), E_NUMBER.match(v)
    if not (mu and mv) or mu.group(1) != mv.group(1) or mu.group(3) != mv.group(3):
        return False
    x, y = float(mu.group(2)), float(mv.group(2))
    if abs(x) < TINY and abs(y) < TINY:
        return True
    return x * y > 0 and max(abs(x), abs(y)) <= 10 * min(abs(x), abs(y))


def bound_failures(root, out_dir, readme, text):
    """Messages for every bound (FORMAT < or >) that the results break."""
    slug, results, bad = chapter_slug(readme), Results(root, out_dir), []
    for i, line in parse(text).prose_lines():
        for m, s, t in numbers(line) if "<!--#" in line else []:
            spec = m.group(2) or ""
            if spec not in ("<", ">"):
                continue
            value = results.value(m.group(1), slug)
            if value is None:
                continue
            shown = parse_number(line[s:t])
            if (spec == "<" and not value <= shown) or (spec == ">" and not value >= shown):
                bad.append(f"{os.path.relpath(readme, root)}:{i + 1}: `{m.group(1)}` = "
                           f"{value!r} is not {spec}= {line[s:t]} as the text says")
    return bad


def site_text(root, out_dir, readme, text, source_href):
    """The Markdown Doxygen should read, same line count: code regions become a labelled
    \\snippet{lineno}, output regions a labelled \\verbinclude of this build's output, numbers
    this build's values (times included), markers removed. source_href(repo_path, line) gives
    the link to a source line."""
    lines, regions = expected_lines(root, out_dir, readme, text, site=True)
    for kind, b, e, m in regions:
        if kind == "code":
            rel, tag = m.group(1), m.group(2)
            shown = repo_path(root, readme, rel)
            first, body = snippet(os.path.join(os.path.dirname(readme), rel), tag)
            last = first + len(body) - 1
            top = shown.split("/", 1)
            example = top[1] if top[0] in ("chapters", "code") else shown
            new = [f'<div class="snippet-file"><a href="{source_href(shown, first)}">'
                   f'<code>{shown}</code></a>, lines {first}–{last}</div>',
                   "", f"\\snippet{{lineno}} {example} {tag}"]
        else:
            slug = m.group(1)
            new = [f'<div class="output-label">Output of <code>./book run {slug[:2]}</code>, '
                   'from the build of this page</div>', "",
                   f"\\verbinclude {slug}/output.txt"]
        n = e - b + 1
        lines[b:e + 1] = new + [""] * (n - len(new))
    text = "\n".join(lines)
    # Doxygen drops an HTML comment with the blank after it: the exercise marker goes first
    # ("min). Show", not "min).Show").
    return MARKERS["number"].pattern.sub("", text.replace("<!--exercise-->", ""))


def pages(root):
    """Every page: the chapters, their worked solutions (instructor's copy only) and docs/."""
    return (sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md")))
            + sorted(glob.glob(os.path.join(root, "chapters", "*", "solutions.md")))
            + sorted(glob.glob(os.path.join(root, "docs", "*.md"))))


# ---- command line -----------------------------------------------------------------------------

def run(root, out_dir, mode, times=False, code_only=False, only=None):
    changed, problems = [], []
    for readme in pages(root):
        if only and os.path.abspath(readme) != os.path.abspath(only):
            continue
        text = read(readme)
        try:
            want = expected(root, out_dir, readme, text, times=times, code_only=code_only)
            if mode == "check" and not code_only:
                problems += bound_failures(root, out_dir, readme, text)
                if chapter_slug(readme):
                    problems += link_failures(root, readme, text)
        except PageError as err:
            problems.append(f"{os.path.relpath(readme, root)}: {err}")
            continue
        if want == text:
            continue
        rel = os.path.relpath(readme, root)
        changed.append(rel)
        if mode == "sync":
            with open(readme, "w", encoding="utf-8", newline="") as f:
                f.write(want)
        else:
            sys.stdout.writelines(difflib.unified_diff(
                text.splitlines(True), want.splitlines(True), rel, rel + " (from the build)"))
    for p in problems:
        print(p, file=sys.stderr)
    return changed, problems


def main(argv):
    if len(argv) == 5 and argv[1] == "sources" and argv[4] in ("--reader", "--instructor"):
        count = write_sources(os.path.abspath(argv[2]), argv[3], argv[4] == "--instructor")
        print(f"pages: {count} source pages")
        return 0
    if len(argv) == 4 and argv[1] == "student-copy":
        from ..homework.student_copy import write_student_tree
        count = write_student_tree(os.path.abspath(argv[2]), os.path.abspath(argv[3]))
        print(f"pages: the student copy in {argv[3]} ({count} files rewritten)")
        return 0
    args = [a for a in argv[1:] if not a.startswith("--")]
    flags = {a for a in argv[1:] if a.startswith("--")}
    only = [f.split("=", 1)[1] for f in flags if f.startswith("--page=")]
    flags -= {"--page=" + p for p in only}
    if len(args) != 3 or args[0] not in ("sync", "check") or not flags <= {"--times",
                                                                              "--code-only"}:
        print(__doc__, file=sys.stderr)
        return 2
    mode, root, out_dir = args
    changed, problems = run(os.path.abspath(root), os.path.abspath(out_dir), mode,
                            "--times" in flags, "--code-only" in flags,
                            only[0] if only else None)
    if mode == "sync":
        for rel in changed:
            print(f"pages: updated {rel} from the build")
        return 1 if problems else 0
    n = 1 if only else len(pages(root))
    if changed or problems:
        print(f"pages: {len(changed)} of {n} pages differ from the build"
              f"{', ' + str(len(problems)) + ' problems' if problems else ''}; "
              "./book rewrites them (then review and commit)", file=sys.stderr)
        return 1
    print(f"pages: {n} pages agree with the build")
    return 0
