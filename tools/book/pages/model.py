"""The page model: a Markdown page parsed once, by markdown-it-py (CommonMark, as a Git host
reads it), into what every pass of book.pages needs, each with its source line.

Line numbers here are 0-based indices into `page.lines` (text.split("\\n")). Block structure
(fences, headings, which line is code) comes from markdown-it; no other module detects a fence
or a heading. The book's own marks are HTML comments, invisible on a Git host and on the site:
MARKERS below is the one table of them, and every pass reads them through this module.
Constructs inside a paragraph (number marks, code spans, math, links) are found by scanning the
lines the model says are prose.
"""
import collections
import functools
import re


class PageError(Exception):
    pass


Marker = collections.namedtuple("Marker", "pattern meaning")

# Every comment marker of the pages, what it means, and its pattern (matched on one line).
MARKERS = {
    "code": Marker(re.compile(r"^<!-- code: (\S+?)#([\w.-]+) -->[ \t]*$"),
                   "opens a code region: the lines between the two `// [TAG]` markers of FILE "
                   "(path relative to the page), written by sync"),
    "output": Marker(re.compile(r"^<!-- output: ([\w.-]+) -->[ \t]*$"),
                     "opens an output region: chapter program SLUG's output.txt"),
    "end": Marker(re.compile(r"^<!-- end (code|output) -->[ \t]*$"),
                  "closes a code or output region"),
    "generated_begin": Marker(re.compile(r"^<!-- bench:begin -->[ \t]*$"),
                              "opens the region book.performance writes from ./book bench"),
    "generated_end": Marker(re.compile(r"^<!-- bench:end -->[ \t]*$"),
                            "closes that region"),
    "live": Marker(re.compile(r"^<!-- live: ([\w-]+) -->[ \t]*$"),
                   "the place of live figure NAME on the site"),
    "about": Marker(re.compile(r"^<!-- about: ([\w-]+) -->[ \t]*$"),
                    "the About page's part NAME (version, pdf, bibtex), built from CITATION.cff "
                    "and the build (book.pages.about)"),
    "number": Marker(re.compile(r"<!--#([\w:.-]+)(?:[ \t]+(\S*?))?[ \t]*-->"),
                     "the number after it is results.json's KEY (sol:NN.M.KEY: a worked "
                     "solution's number, from chapter NN's solution tests), in FORMAT (inline)"),
    "exercise": Marker(re.compile(r"^(\d+\.[ \t]+)\*\*(\d\d\.\d+)[ \t].*?<!--exercise-->"),
                       "ends the head of an exercise's item in a chapter's Exercises list: its "
                       "bold id and title, kind, points and minutes, written by sync from "
                       "chapters/exercises.toml (book.pages.exercises)"),
    "exercise_table_begin": Marker(re.compile(r"^<!-- exercises:begin -->[ \t]*$"),
                                   "opens the table of every exercise, written by sync from "
                                   "chapters/exercises.toml"),
    "exercise_table_end": Marker(re.compile(r"^<!-- exercises:end -->[ \t]*$"),
                                 "closes that table"),
    "citation": Marker(re.compile(r"\bTests?:"),
                       "the backticked names after it (paragraph, or the list that follows) "
                       "are doctest TEST_CASEs (inline)"),
}

# A number after a number mark: 0.24, 1.7e-08, 2.8 \times 10^{-16}, 10^{-8}, 40%.
NUMBER = re.compile(r"10\^\{-?\d+\}|-?\d+(?:\.\d+)?(?:e[-+]?\d+|[ \t]*\\times[ \t]*10\^\{-?\d+\})?%?")
# A code span `name` (a test's name after a citation marker).
CODE_SPAN = re.compile(r"`([^`]+)`")
# A Markdown link [text](target#anchor), not an image.
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^()\s]*?)(?:#([^()\s]*))?\)")
# A figure: an image alone on its line (its caption is the italic paragraph under it).
FIGURE_IMAGE = re.compile(r"^!\[[^\]]*\]\(([^()\s]+)\)[ \t]*$")
# An explicit heading id, "# Title {#id}", as Doxygen reads it.
HEADING_ID = re.compile(r"[ \t]*\{#([\w-]+)\}[ \t]*$")

Fence = collections.namedtuple("Fence", "info first last")        # fence lines included
Heading = collections.namedtuple("Heading", "level text slug line id")
Region = collections.namedtuple("Region", "kind begin end match")  # begin/end: marker lines


@functools.lru_cache(maxsize=1)
def _parser():
    """markdown-it, imported when a page is first parsed: what imports the package without
    parsing a page (the autograder bundle's tools) does not need python3-markdown-it. Block
    structure only: the inline rules are not needed, and a heading keeps its source text as
    the content of its inline token."""
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark").enable("table").disable("inline")


def github_slug(title):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


class Page:
    """One page's text and its block structure with source lines."""

    def __init__(self, text):
        self.text = text
        self.lines = text.split("\n")
        self.fences, self.headings = [], []
        code = set()
        tokens = _parser().parse(text)
        for k, t in enumerate(tokens):
            if t.type == "fence" and t.map:
                last = t.map[1] - 1
                self.fences.append(Fence(t.info, t.map[0], last))
                code.update(range(t.map[0], last + 1))
            elif t.type == "heading_open" and t.markup.startswith("#") and t.map:
                content = tokens[k + 1].content
                explicit = HEADING_ID.search(content)
                title = content[:explicit.start()] if explicit else content
                self.headings.append(Heading(len(t.markup), title, github_slug(title),
                                             t.map[0], explicit.group(1) if explicit else None))
        self.code_lines = frozenset(code)

    def in_fence(self, i):
        return i in self.code_lines

    def prose_lines(self):
        """(index, line) of every line outside fenced code."""
        return [(i, line) for i, line in enumerate(self.lines) if i not in self.code_lines]

    def marked(self, name):
        """(line index, match) of every line outside fences that is marker `name`."""
        pattern = MARKERS[name].pattern
        return [(i, m) for i, line in self.prose_lines() for m in [pattern.match(line)] if m]

    def regions(self):
        """Region of every code and output region; PageError when one is not closed (by its
        own end marker, before the next region opens)."""
        code, output, end = (MARKERS[name].pattern for name in ("code", "output", "end"))
        found, opened = [], None  # opened: (line, match, kind) of the region being read
        for i, line in self.prose_lines():
            start, close = code.match(line) or output.match(line), end.match(line)
            if opened is None:
                if start:
                    opened = (i, start, "code" if start.re is code else "output")
                continue
            b, m, kind = opened
            if start or (close and close.group(1) != kind):
                break
            if close:
                found.append(Region(kind, b, i, m))
                opened = None
        if opened:
            raise PageError(f"line {opened[0] + 1}: <!-- {opened[2]}: ... --> without "
                            f"<!-- end {opened[2]} -->")
        return found

    def generated(self):
        """(begin, end) marker lines of the generated region, or None."""
        begin, end = self.marked("generated_begin"), self.marked("generated_end")
        if begin and end and begin[0][0] < end[0][0]:
            return begin[0][0], end[0][0]
        return None

    def figures(self):
        """(image line, last caption line) of every figure: an image alone on its line, then
        its caption, an *italic paragraph* (what a Git host shows under the image)."""
        lines, found, i = self.lines, [], 0
        while i < len(lines) - 1:
            if not self.in_fence(i) and FIGURE_IMAGE.match(lines[i]) and \
                    lines[i + 1].startswith("*") and not lines[i + 1].startswith("**"):
                j = i + 1
                while j + 1 < len(lines) and lines[j + 1].strip():
                    j += 1
                found.append((i, j))
                i = j
            i += 1
        return found

    def title(self):
        """The page's first line as a level-1 heading, or None when it is not one."""
        first = next((i for i, line in enumerate(self.lines) if line.strip()), None)
        return next((h for h in self.headings if h.line == first and h.level == 1), None)


@functools.lru_cache(maxsize=64)
def parse(text):
    """The model of a page's text (cached: each text is parsed once)."""
    return Page(text)


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def title_of(path):
    """The title heading of the Markdown file at `path` (its first line only is parsed)."""
    try:
        with open(path, encoding="utf-8") as f:
            first = next((line for line in f if line.strip()), "")
    except OSError:
        return None
    return parse(first.strip()).title()


def numbers(line):
    """(marker match, start, end) of each marked number on a line: the number's span."""
    found = []
    for m in MARKERS["number"].pattern.finditer(line):
        k = m.end()
        if line.startswith("$", k):
            k += 1
        n = NUMBER.match(line, k)
        if not n:
            raise PageError(f"<!--#{m.group(1)}--> is not followed by a number")
        found.append((m, n.start(), n.end()))
    return found


def unquoted(lines):
    """Lines with their blockquote marks off, so "> Tests: ..." reads like a paragraph."""
    return [re.sub(r"^\s*>\s?", "", line) for line in lines]


def citations(page):
    """(line index, name) for every backticked name after a Test(s): marker: in the same
    paragraph or, when the paragraph names none, in the list that follows. A test name is a
    sentence; shorter spans there are code (`==`, `--decay 1`)."""
    lines = unquoted(page.lines)
    marker, span = MARKERS["citation"].pattern, CODE_SPAN
    found = []
    for i, line in enumerate(lines):
        m = marker.search(line)
        if not m:
            continue
        block, j = [(i, line[m.end():])], i + 1
        while j < len(lines) and lines[j].strip():  # the rest of the paragraph
            block.append((j, lines[j]))
            j += 1
        if not any(span.search(text) for _, text in block):  # "Tests:" then a list
            while j < len(lines) and not lines[j].strip():
                j += 1
            while j < len(lines) and lines[j].strip():
                block.append((j, lines[j]))
                j += 1
        for k, text in block:
            found += [(k, s) for s in span.findall(text) if len(s.split()) >= 3]
    return found


def pieces(text, page=None):
    """(is_code, chunk) pieces of the text, in order, joined back they are the text; code pieces
    are whole fenced blocks (fence lines included). `page`: the model of a text with the same
    lines as blocks (the filter's steps change lines, not blocks), else the text's own."""
    page = page or parse(text)
    lines = text.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + [lines[-1]]
    out, start = [], 0
    for fence in page.fences:
        if fence.first > start:
            out.append((False, "".join(lines[start:fence.first])))
        out.append((True, "".join(lines[fence.first:fence.last + 1])))
        start = fence.last + 1
    if start < len(lines) and "".join(lines[start:]):
        out.append((False, "".join(lines[start:])))
    return out
