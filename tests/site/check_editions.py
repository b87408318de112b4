#!/usr/bin/env python3
"""The two sites of one build: the reader's (what would be published) has nothing of the
instructor-only pages, the instructor's has all of them, and every link of either resolves.

    check_editions.py --reader build/release/site/html
                      --instructor build/release/site-instructor/html --root .

(with tools/ on PYTHONPATH, as CMake's ${BOOK_PYTHON} runs it)

The instructor-only pages are the worked solutions (chapters/*/solutions.md) and the
instructors' page (docs/instructors.md); the instructor-only sources are those the student
release leaves out (book.homework.markers.INSTRUCTOR_ONLY, e.g. test_solutions.cpp). For each
page, its longest runs of plain prose (sentences without markup, as the reader would see them)
stand for its text. The reader's site fails when

  * it has the page (PAGE.html) or a source page of an instructor-only file;
  * any of its pages, or its search data, holds one of those sentences or links to the page;
  * any of its pages (source pages and code quotes included) holds a line of an exercise's
    solution region, of a hidden test or of a worked solution that appears nowhere else in the
    book (book.homework.leak_test's distinctive lines; compared without whitespace, since the
    highlighting puts tags between tokens): the reader's site is the student copy's;

and the instructor's site fails when it lacks the page, a sentence of it, its entry in the
search data, its source pages, or a link to it from the main page or its chapter, or when no
page of it shows one of those lines of a solution region or a hidden test. In both, every link
of every page (the MathJax copy aside) must reach an existing file and anchor.

Exit status: 0 both sites pass, 1 problems (listed), 2 a site is missing.
"""
import argparse
import glob
import html
import html.parser
import json
import os
import re
import sys
import urllib.parse

from book.homework.leak_test import distinctive_lines, leaks_in
from book.homework.markers import INSTRUCTOR_ONLY, scan
from book.pages.model import parse, read
from book.pages.site import page_id

# A stretch of plain prose on one line: no Markdown, math, code or quote characters in it.
PLAIN_RUN = re.compile(r"(?<![\w$`*_\\])[A-Za-z][A-Za-z0-9 ,;:.()-]{44,}[A-Za-z0-9.)]")
SENTENCES_PER_PAGE = 3


def instructor_only_pages(root):
    """(page id, path) of every page only the instructor's site has."""
    paths = sorted(glob.glob(os.path.join(root, "chapters", "*", "solutions.md")))
    paths.append(os.path.join(root, "docs", "instructors.md"))
    return [(page_id(p), p) for p in paths if os.path.isfile(p)]


def instructor_only_sources(root):
    return sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "chapters", "*", "*"))
                  if INSTRUCTOR_ONLY.fullmatch(os.path.relpath(p, root)) and p.endswith(".cpp"))


def sentences(path):
    """The page's longest runs of plain prose, whitespace collapsed."""
    page = parse(read(path))
    runs = {" ".join(m.group(0).split()) for i, line in page.prose_lines()
            if not line.lstrip().startswith(("#", "<", "|"))
            for m in PLAIN_RUN.finditer(line)}
    return sorted(runs, key=lambda s: (-len(s), s))[:SENTENCES_PER_PAGE]


def site_files(site):
    """Every .html page and .js file of the site, its MathJax copy aside (relative paths)."""
    out = []
    for folder, dirs, files in os.walk(site):
        dirs[:] = sorted(d for d in dirs if d != "mathjax")
        out += [os.path.relpath(os.path.join(folder, f), site) for f in sorted(files)
                if f.endswith((".html", ".js"))]
    return out


def visible_text(markup):
    """The text of a page or script, tags removed and whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", markup)).split())


def squeezed(markup):
    """The text of a page or script with no whitespace at all: the source pages' highlighting
    puts tags between tokens, a code quote puts its line numbers before each line."""
    return "".join(html.unescape(re.sub(r"<[^>]*>", "", markup)).split())


def solution_problems(reader_text, instructor, root):
    """The reader's site shows no line of a solution, hidden test or worked solution; the
    instructor's shows every such line of code (the worked solutions' Markdown is rendered,
    so only the reader's side looks for it). Returns (problems, number of lines searched)."""
    files, _ = scan(root)
    lines = distinctive_lines(files, ignore_space=True)
    reader = {rel: squeezed(text) for rel, text in reader_text.items()}
    problems = ["reader's site: " + leak for leak in leaks_in(reader, lines)]
    shown = "\0".join(squeezed(read(os.path.join(instructor, rel)))
                       for rel in site_files(instructor))
    for ident, kind, s in lines:
        if kind in ("solution", "hidden") and s not in shown:
            problems.append(f"instructor's site: no page shows this {kind} line of exercise "
                            f"{ident}: {s}")
    return problems, len(lines)


def search_pages(site):
    """The pages the site's search data lists (book.pages.search_index)."""
    with open(os.path.join(site, "search-data.js"), encoding="utf-8") as f:
        data = f.read()
    entries = json.loads(data[data.index("["):data.rindex("]") + 1])
    return {e["u"].split("#")[0] for e in entries}


class Links(html.parser.HTMLParser):
    """The href/src targets and the ids of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.targets, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("href", "src") and v:
                self.targets.append(v)
            if k == "id" or (k == "name" and tag == "a"):
                self.ids.add(v)


def read_links(path):
    p = Links()
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    return p


def broken_links(site, pages):
    """(page, target) of every link to a missing file or anchor of the site."""
    parsed, bad = {}, []

    def links(rel):
        if rel not in parsed:
            parsed[rel] = read_links(os.path.join(site, rel))
        return parsed[rel]

    for rel in pages:
        for target in links(rel).targets:
            url = urllib.parse.urlsplit(target)
            if url.scheme or url.netloc:  # another site, javascript:, mailto:
                continue
            dest = os.path.normpath(os.path.join(os.path.dirname(rel), urllib.parse.unquote(url.path)))
            if url.path and not os.path.exists(os.path.join(site, dest)):
                bad.append((rel, target))
            elif url.fragment and dest.endswith(".html") and url.fragment not in links(
                    dest if url.path else rel).ids:
                bad.append((rel, target))
    return bad


def check(reader, instructor, root):
    problems = []
    pages = instructor_only_pages(root)
    sources = instructor_only_sources(root)
    reader_files = site_files(reader)
    reader_text = {rel: read(os.path.join(reader, rel)) for rel in reader_files}
    reader_visible = {rel: visible_text(t) for rel, t in reader_text.items()}
    reader_search = search_pages(reader)
    instructor_search = search_pages(instructor)
    n_sentences = 0
    for pid, path in pages:
        rel = os.path.relpath(path, root)
        found = sentences(path)
        n_sentences += len(found)
        if not found:
            problems.append(f"{rel}: no sentence of plain prose to look for")
        page = pid + ".html"
        # the reader's site: nothing of it
        if os.path.exists(os.path.join(reader, page)):
            problems.append(f"reader's site: has {page} ({rel})")
        if page in reader_search:
            problems.append(f"reader's site: its search data lists {page} ({rel})")
        link = re.compile(r"""(?:href|src)\s*=\s*["'](?:[^"']*/)?%s(?:[#"'])""" % re.escape(page))
        for f, text in reader_text.items():
            if link.search(text):
                problems.append(f"reader's site: {f} links to {page} ({rel})")
        for s in found:
            for f, text in reader_visible.items():
                if s in text:
                    problems.append(f"reader's site: {f} holds a sentence of {rel}: '{s}'")
        # the instructor's site: all of it
        full = os.path.join(instructor, page)
        if not os.path.exists(full):
            problems.append(f"instructor's site: no {page} ({rel})")
            continue
        text = visible_text(read(full))
        for s in found:
            if s not in text:
                problems.append(f"instructor's site: {page} lacks a sentence of {rel}: '{s}'")
        if page not in instructor_search:
            problems.append(f"instructor's site: its search data does not list {page}")
        parent = "index.html" if pid == "instructors" else "ch%s.html" % pid[3:]
        if not link.search(read(os.path.join(instructor, parent))):
            problems.append(f"instructor's site: {parent} does not link to {page}")
    for rel in sources:
        page = os.path.join("src", rel + ".html")
        if os.path.exists(os.path.join(reader, page)):
            problems.append(f"reader's site: has the source page {page}")
        if not os.path.exists(os.path.join(instructor, page)):
            problems.append(f"instructor's site: no source page {page}")
    leaked, n_lines = solution_problems(reader_text, instructor, root)
    problems += leaked
    for name, site in (("reader's", reader), ("instructor's", instructor)):
        html_pages = [f for f in site_files(site) if f.endswith(".html")]
        for page, target in broken_links(site, html_pages):
            problems.append(f"{name} site: {page}: broken link {target}")
    print("check_editions: %d instructor-only pages, %d of their sentences, %d instructor-only "
          "sources, %d distinctive lines of solutions and hidden tests; %d reader's files "
          "searched" % (len(pages), n_sentences, len(sources), n_lines, len(reader_files)))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reader", required=True, help="the reader's site's html directory")
    ap.add_argument("--instructor", required=True, help="the instructor's site's html directory")
    ap.add_argument("--root", required=True, help="the book's root (chapters/, docs/)")
    args = ap.parse_args()
    for site in (args.reader, args.instructor):
        if not os.path.isfile(os.path.join(site, "index.html")):
            print(f"check_editions: no site in {site} (build the target site)")
            return 2
    problems = check(args.reader, args.instructor, os.path.abspath(args.root))
    for p in problems:
        print("  - " + p)
    print("FAIL: %d problems" % len(problems) if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
