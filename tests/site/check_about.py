#!/usr/bin/env python3
"""The About page, CITATION.cff and the build agree.

    check_about.py --site build/release/site/html --root . --build-info build/release/docs/build-info.json

(with tools/ on PYTHONPATH, as CMake's ${BOOK_PYTHON} runs it)

Fails when

  * CITATION.cff is not valid Citation File Format 1.2.0 as far as its schema's required keys
    go (cff-version 1.2.0, message, title, authors, each author a name or family/given names)
    or its version and date-released are missing or not a date (YYYY-MM-DD);
  * the About page's version and date are not CITATION.cff's, or the commit and date it says
    the site was built from are not the build's (build-info.json, written by CMake from git);
  * the BibTeX entry on the page does not give CITATION.cff's title, authors, version, date
    and year;
  * the page is not in the site's navigation, or it or the main page does not link the PDF.

Exit status: 0 pass, 1 problems (listed), 2 no site.
"""
import argparse
import datetime
import html
import json
import os
import re
import sys

from book.pages.about import PDF_NAME, author_names, citation
from book.pages.model import read

REQUIRED = ("cff-version", "message", "title", "authors")
BIBTEX_FIELD = re.compile(r"^\s*(\w+)\s*=\s*\{(.*)\},?\s*$", re.M)


def cff_problems(cff):
    bad = [f"CITATION.cff: no '{k}'" for k in REQUIRED if not cff.get(k)]
    if str(cff.get("cff-version")) != "1.2.0":
        bad.append("CITATION.cff: cff-version is not 1.2.0")
    for a in cff.get("authors") or []:
        if not (a.get("name") or a.get("family-names") or a.get("given-names")):
            bad.append(f"CITATION.cff: an author without a name: {a}")
    if not cff.get("version"):
        bad.append("CITATION.cff: no version")
    try:
        datetime.date.fromisoformat(str(cff.get("date-released")))
    except ValueError:
        bad.append(f"CITATION.cff: date-released '{cff.get('date-released')}' is not YYYY-MM-DD")
    return bad


def span(page, cls):
    m = re.search(r'<(?:span|code) class="%s">([^<]*)<' % cls, page)
    return html.unescape(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", required=True, help="the site's html directory")
    ap.add_argument("--root", required=True, help="the book's root (CITATION.cff)")
    ap.add_argument("--build-info", required=True, help="the build's build-info.json")
    args = ap.parse_args()
    about = os.path.join(args.site, "about.html")
    if not os.path.isfile(about):
        print(f"check_about: no {about} (build the target site)")
        return 2
    cff = citation(args.root)
    with open(args.build_info, encoding="utf-8") as f:
        build = json.load(f)
    page = read(about)
    problems = cff_problems(cff)
    shown = {"release-version": str(cff.get("version")), "release-date": str(cff.get("date-released")),
             "build-commit": build["commit"], "build-date": build["date"]}
    for cls, want in shown.items():
        if span(page, cls) != want:
            problems.append(f"about.html: {cls} is '{span(page, cls)}', not '{want}'")
    if os.path.exists(os.path.join(args.root, ".git")) and build["commit"] == "unknown":
        problems.append("build-info.json: the commit is unknown in a git checkout")
    m = re.search(r'<pre class="bibtex">(.*?)</pre>', page, re.S)
    bib = dict(BIBTEX_FIELD.findall(html.unescape(m.group(1)))) if m else {}
    if not m:
        problems.append("about.html: no BibTeX entry")
    want_bib = {"title": cff.get("title"), "version": str(cff.get("version")),
                "date": str(cff.get("date-released")), "year": str(cff.get("date-released"))[:4],
                "author": " and ".join("{%s}" % n for n in author_names(cff))}
    for key, want in want_bib.items():
        if m and bib.get(key) != want:
            problems.append(f"about.html: BibTeX {key} is '{bib.get(key)}', not '{want}'")
    if '"about.html"' not in read(os.path.join(args.site, "navtreedata.js")):
        problems.append("the About page is not in the navigation (navtreedata.js)")
    for name in ("about.html", "index.html"):
        if f'href="{PDF_NAME}"' not in read(os.path.join(args.site, name)):
            problems.append(f"{name} does not link the PDF ({PDF_NAME})")
    print(f"check_about: version {cff.get('version')} of {cff.get('date-released')}, built from "
          f"{build['commit']} of {build['date']}")
    for p in problems:
        print("  - " + p)
    print("FAIL: %d problems" % len(problems) if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
