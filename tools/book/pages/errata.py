"""The errata of the sources and the chapters' "The source says" notes agree, both ways
(python -m book.pages.errata ROOT).

Each source's section on the sources page (docs/sources.md, `## ...`, naming its file
`NNN_<hash>.txt`) ends with `### Errata of ...`: a summary line

    Found: 14 · settled by a test: 9 · in the text only: 3 · not taken up: 2.

and one entry per slip, a heading `#### NNN-MM Title` followed by **The source**, **Kind**,
**Correction** and exactly one status paragraph:

    **Settled by a test** in [chapter 03, section 2](../chapters/...README.md#slug): `test name`
    **Settled in the text** in [chapter 03, section 2](...#slug): why no computation decides it
    **Not taken up**: why no chapter discusses it

Checked: ids are unique and start with their source's number; the summary counts are the
entries' counts; every entry has the three parts, one status, and a kind from KINDS; an entry
settled in a chapter links to a chapter section that holds a "The source says" note linking back
to the entry; an entry settled by a test names a doctest test that exists and is not hidden; every "The source
says" note of a chapter (README.md or solutions.md) links to at least one entry. Exits 1 on the
first listing of problems, otherwise 0.
"""
import glob
import os
import re
import sys

from ..doctest_sources import test_locations
from .cited import instructors_tests
from .model import CODE_SPAN, LINK, parse, read

SOURCES_PAGE = os.path.join("docs", "sources.md")
ERRATA_HEADING = re.compile(r"Errata of ")
ENTRY_HEADING = re.compile(r"(\d{3})-(\d{2}) \S")
SOURCE_FILE = re.compile(r"`(\d{3})_[0-9a-f]+\.txt`")
SUMMARY = re.compile(r"Found: (\d+) · settled by a test: (\d+) · in the text only: (\d+) · "
                     r"not taken up: (\d+)\.")
STATUSES = {"**Settled by a test** in ": "test", "**Settled in the text** in ": "text",
            "**Not taken up**: ": "none"}
PARTS = ("**The source**", "**Kind**: ", "**Correction**: ")
KINDS = {"wrong formula", "wrong claim", "overstated claim", "missing assumption",
         "misattribution", "wrong number", "misprint", "omission"}
NOTE = re.compile(r"^>\s*\*\*The source says\*\*")


def paragraphs(lines):
    """(first line index, text) of each paragraph of `lines` (blank-line separated)."""
    found, start = [], None
    for i, line in enumerate(lines + [""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            found.append((start, " ".join(l.strip() for l in lines[start:i])))
            start = None
    return found


def entries(root):
    """(problems, entries): each entry a dict with id, slug, line, status, links (target,
    anchor) and tests, read from the errata sections of the sources page."""
    path = os.path.join(root, SOURCES_PAGE)
    page = parse(read(path))
    heads = page.headings + [None]
    problems, found, source, errata = [], [], None, None
    counts = {}

    def where(line):
        return f"{SOURCES_PAGE}:{line + 1}"

    for k, h in enumerate(heads[:-1]):
        end = heads[k + 1].line if heads[k + 1] else len(page.lines)
        body = page.lines[h.line + 1:end]
        if h.level == 2:
            names = SOURCE_FILE.findall("\n".join(body))
            source, errata = (names[0] if names else None), None
        elif h.level == 3 and ERRATA_HEADING.match(h.text):
            errata = h
            if source is None:
                problems.append(f"{where(h.line)}: errata under a section that names no "
                                "source file")
            summary = [SUMMARY.fullmatch(t) for _, t in paragraphs(body)]
            summary = [m for m in summary if m]
            counts[h.line] = ([int(g) for g in summary[0].groups()] if summary else None)
            if not summary:
                problems.append(f"{where(h.line)}: no summary line 'Found: N · settled by a "
                                "test: N · in the text only: N · not taken up: N.'")
        elif h.level == 4 and errata is not None:
            m = ENTRY_HEADING.match(h.text)
            if not m:
                problems.append(f"{where(h.line)}: an errata entry's heading is "
                                "'NNN-MM Title'")
                continue
            entry = {"id": f"{m.group(1)}-{m.group(2)}", "slug": h.slug, "line": h.line,
                     "errata": errata.line, "status": None, "links": [], "tests": []}
            if m.group(1) != source:
                problems.append(f"{where(h.line)}: entry {entry['id']} is in the errata of "
                                f"source {source}")
            texts = [t for _, t in paragraphs(body)]
            for part in PARTS:
                if not any(t.startswith(part) for t in texts):
                    problems.append(f"{where(h.line)}: entry {entry['id']} has no {part}")
            for t in texts:
                if t.startswith("**Kind**: ") and t[len("**Kind**: "):].rstrip(".") not in KINDS:
                    problems.append(f"{where(h.line)}: entry {entry['id']}: kind "
                                    f"'{t[10:]}' is not one of {sorted(KINDS)}")
            status = [(STATUSES[s], t[len(s):]) for t in texts for s in STATUSES
                      if t.startswith(s)]
            if len(status) != 1:
                problems.append(f"{where(h.line)}: entry {entry['id']} needs exactly one "
                                "status (settled by a test / in the text / not taken up)")
                continue
            entry["status"], rest = status[0]
            if entry["status"] != "none":
                entry["links"] = [(l.group(2), l.group(3)) for l in LINK.finditer(rest)]
                if not entry["links"]:
                    problems.append(f"{where(h.line)}: entry {entry['id']} links to no "
                                    "chapter section")
            if entry["status"] == "test":
                entry["tests"] = [s for s in CODE_SPAN.findall(rest) if len(s.split()) >= 3]
                if not entry["tests"]:
                    problems.append(f"{where(h.line)}: entry {entry['id']} names no test")
            found.append(entry)
    ids = [e["id"] for e in found]
    for i in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"{SOURCES_PAGE}: entry id {i} used twice")
    for line, c in counts.items():
        if c is None:
            continue
        mine = [e["status"] for e in found if e["errata"] == line]
        actual = [len(mine), mine.count("test"), mine.count("text"), mine.count("none")]
        if c != actual:
            problems.append(f"{where(line)}: the summary says {c}, the entries are {actual} "
                            "(found, test, text, not taken up)")
    if not counts:
        problems.append(f"{SOURCES_PAGE}: no errata section")
    return problems, found


def notes(root):
    """(path, line, section slugs containing it, entry anchors it links to) for every "The
    source says" note in the chapters."""
    sources = os.path.normpath(os.path.join(root, SOURCES_PAGE))
    found = []
    for path in sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md")) +
                       glob.glob(os.path.join(root, "chapters", "*", "solutions.md"))):
        page = parse(read(path))
        for i, line in page.prose_lines():
            if not NOTE.match(line):
                continue
            j = i
            while j + 1 < len(page.lines) and page.lines[j + 1].lstrip().startswith(">"):
                j += 1
            text = "\n".join(re.sub(r"^\s*>\s?", "", l) for l in page.lines[i:j + 1])
            back = [l.group(3) for l in LINK.finditer(text) if l.group(2) and
                    os.path.normpath(os.path.join(os.path.dirname(path), l.group(2))) == sources]
            # the sections a note lies in: every heading above it whose section reaches it
            sections, level = set(), 99
            for h in reversed([h for h in page.headings if h.line < i]):
                if h.level < level:
                    sections.add(h.slug)
                    level = h.level
            found.append((os.path.normpath(path), i, sections, back))
    return found


def problems(root):
    found, listed = entries(root)
    by_slug = {e["slug"]: e for e in listed}
    all_notes = notes(root)
    located = test_locations(root)
    names = set(located)
    private = instructors_tests(root, located)
    sources_dir = os.path.join(root, "docs")
    for e in listed:
        at = f"{SOURCES_PAGE}:{e['line'] + 1}: entry {e['id']}"
        for name in e["tests"]:
            if name not in names:
                found.append(f"{at}: no test named `{name}`")
            elif name in private:
                found.append(f"{at}: `{name}` is a hidden test or a worked solution's, "
                             "which the sources page (public) may not name")
        for target, anchor in e["links"]:
            path = os.path.normpath(os.path.join(sources_dir, target))
            if not re.search(r"chapters/[^/]+/(README|solutions)\.md$", path.replace(os.sep, "/")):
                continue
            if not os.path.exists(path) or not anchor:
                found.append(f"{at}: link to {target}#{anchor or ''} is not a chapter section")
                continue
            backs = [n for n in all_notes
                     if n[0] == path and anchor in n[2] and e["slug"] in n[3]]
            if not backs:
                found.append(f"{at}: {os.path.relpath(path, root)}#{anchor} has no "
                             "'The source says' note linking back to this entry")
        if e["status"] != "none" and not any(
                re.search(r"chapters/[^/]+/(README|solutions)\.md$", t) for t, _ in e["links"]):
            found.append(f"{at}: settled, but links to no chapter page")
    for path, line, _, back in all_notes:
        where = f"{os.path.relpath(path, root)}:{line + 1}"
        if not back:
            found.append(f"{where}: a 'The source says' note that links to no errata entry")
        for anchor in back:
            if anchor not in by_slug:
                found.append(f"{where}: links to errata #{anchor}, which does not exist")
    return found, listed, all_notes


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found, listed, all_notes = problems(argv[1])
    for p in found:
        print(p)
    print(f"errata: {len(listed)} entries, {len(all_notes)} notes, {len(found)} problems")
    return 1 if found or not listed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
