"""The book's pages: the page model (model.py, markdown-it, parsed once, with source line maps)
and its passes.

    model.py         a page parsed once: fences, headings, the comment markers (MARKERS, the one
                     table of them), figures, number marks, test citations, links
    sync.py          code, program output and numbers written from the build; sync and check
                     (python -m book.pages sync|check ROOT OUT)
    links.py         the links check of a chapter page (part of check)
    exercises.py     each exercise's head, the worked solutions' headings and rubrics, the
                     instructors' table of exercises, from chapters/exercises.toml (part of sync)
    site.py          the Doxygen input filter (python -m book.pages.site [--out DIR] FILE)
    fix_html.py      the fixes of Doxygen's HTML the filter prepared (site.py --fix-html DIR)
    cited.py         every cited test exists, solution tests relative (python -m book.pages.cited ROOT)
    search_index.py  the site's search data (python -m book.pages.search_index HTML_DIR)
    sources.py       the site's pages of the source files (python -m book.pages sources ROOT HTML
                     --reader|--instructor); the reader's site is made from the student copy
                     (python -m book.pages student-copy ROOT DIR, book.homework.student_copy)
    generated.py     the generated region of a page (book.performance writes it)
    about.py         the About page's version, PDF link and BibTeX, from CITATION.cff and the build

The homework product uses expected() and without_code().
"""
from .links import link_failures
from .model import PageError, read
from .sources import source_href
from .sync import (expected, format_number, main, parse_number, same_output, site_text,
                   without_code)

__all__ = ["PageError", "expected", "format_number", "link_failures", "main", "parse_number",
           "read", "same_output", "site_text", "source_href", "without_code"]
