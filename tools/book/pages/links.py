"""The links check of a chapter page: links that lead nowhere, chapter and section references
that are not links, and syntax that only the site understands (python -m book.pages check)."""
import os
import re

from .model import LINK, MARKERS, parse, read

BARE_REF = re.compile(r"\b([Cc]hapters?|[Ss]ections?)[ \t\n]+(\d+)\b")
OUTPUT_SECTION = re.compile(r"[ \t\n]+of[ \t\n]+(?:its|the|this)[ \t\n]+(?:\S+[ \t\n]+)?output")
# Inline code, math and comments hold no links or references (fences and headings are blanked
# from the page model first).
PROTECTED = re.compile(r"`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|<!--.*?-->", re.S)
DOXYGEN_SYNTAX = re.compile(r"(?<![\w\\])[\\@](?:snippet|verbinclude|include|image|ref|subpage|page|"
                            r"anchor|section|f[$\[\]{}])(?![A-Za-z])")
# What may stand before a number marker that starts its line: quote and list marks.
LINE_PREFIX = re.compile(r"[ \t]*(?:>[ \t]*)*(?:[-*+][ \t]+|\d+\.[ \t]+)?")


def blanked(text, lines):
    """The text with the given lines (indices) blanked, same offsets."""
    out = text.split("\n")
    for i in lines:
        out[i] = " " * len(out[i])
    return "\n".join(out)


def heading_slugs(path):
    """The anchors of a Markdown file's headings."""
    return {h.slug for h in parse(read(path)).headings}


def link_failures(root, page, text):
    """Links to chapters, sections and files that do not exist; chapter and section
    references that are not links (the site and a Git host follow links, not words)."""
    bad, rel = [], os.path.relpath(page, root)
    model = parse(text)
    without_fences = blanked(text, model.code_lines)
    plain = PROTECTED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)),
                          blanked(without_fences, [h.line for h in model.headings]))
    for m in LINK.finditer(plain):
        target, anchor = m.group(2), m.group(3)
        line = plain.count("\n", 0, m.start()) + 1
        if re.match(r"[a-z]+:", target):
            continue
        dest = os.path.normpath(os.path.join(os.path.dirname(page), target)) if target else page
        if not os.path.exists(dest):
            bad.append(f"{rel}:{line}: link to {target}, which does not exist")
        elif anchor and dest.endswith(".md") and anchor not in heading_slugs(dest):
            bad.append(f"{rel}:{line}: link to #{anchor} in {os.path.relpath(dest, root)}, "
                       "which has no such heading")
    for m in DOXYGEN_SYNTAX.finditer(plain):
        line = plain.count("\n", 0, m.start()) + 1
        bad.append(f"{rel}:{line}: Doxygen syntax '{m.group(0).strip()}' would show as text on a "
                   "Git host (book.pages.site writes what the site needs)")
    for i, line in model.prose_lines():
        first = MARKERS["number"].pattern.search(line)
        if first and LINE_PREFIX.fullmatch(line, 0, first.start()):
            bad.append(f"{rel}:{i + 1}: a line starts with a number marker: a Git host reads the "
                       "line as raw HTML (move a word in front of it)")
    for h in model.headings:
        if h.id:
            bad.append(f"{rel}:{h.line + 1}: heading with an {{#id}}: a Git host shows it; the "
                       "site's ids come from the directory and the heading (book.pages.site)")
    linked = [(m.start(), m.end()) for m in LINK.finditer(plain)]
    for m in BARE_REF.finditer(plain):
        if any(a <= m.start() < b for a, b in linked) or OUTPUT_SECTION.match(plain, m.end()):
            continue
        line = plain.count("\n", 0, m.start()) + 1
        bad.append(f"{rel}:{line}: '{' '.join(m.group(0).split())}' is not a link "
                   "(write [chapter NN](../NN-slug/README.md) or [section N](#heading-slug))")
    return bad
