"""The book as one PDF, from the pages of the reader's site:

    python -m book.pdf HTML_DIR OUT.pdf

The main page and every page it links to, in its order (the chapters, the reference pages, the
homework and About pages), each opened from file:// in headless Chromium (book.browser), its
formulas typeset, and printed with the site's print style (docs/site.css, "Print"): no
navigation, search or live-figure controls, figures and code whole. pdfunite (Debian's
poppler-utils) joins the pages' PDFs into OUT.pdf, written beside it and renamed into place.
The sources page and the errata quote Chinese: without a font that has Chinese glyphs Chromium
prints empty boxes for it (and pdftotext still reads the characters), so printing stops first.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

from book.browser import Browser, find_chromium

CONTENTS = re.compile(r'<div class="contents">(.*)', re.S)
PAGE_LINK = re.compile(r'href="([\w.-]+\.html)(?:#[^"]*)?"')


def book_pages(html_dir):
    """index.html, then the site's pages its text links to, in that order, each once."""
    with open(os.path.join(html_dir, "index.html"), encoding="utf-8") as f:
        contents = CONTENTS.search(f.read())
    pages = ["index.html"]
    for name in PAGE_LINK.findall(contents.group(1) if contents else ""):
        if name not in pages and os.path.isfile(os.path.join(html_dir, name)):
            pages.append(name)
    return pages


def print_book(html_dir, out):
    """Writes the PDF; the pages printed."""
    pages = book_pages(html_dir)
    out = os.path.abspath(out)
    with tempfile.TemporaryDirectory(prefix="book-pdf-") as tmp, Browser(1100, 1400) as browser:
        # Laid out as printed from the start: a figure hidden on screen at this width (the
        # phone drawing's swap, site.css) would otherwise never load, and print blank.
        browser.page("Emulation.setEmulatedMedia", {"media": "print"})
        parts = []
        for k, page in enumerate(pages):
            browser.open(pathlib.Path(html_dir, page).resolve().as_uri())
            browser.wait_for_mathjax(timeout=120)
            parts.append(os.path.join(tmp, "%03d.pdf" % k))
            browser.print_pdf(parts[-1])
        staged = os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".part")
        subprocess.run(["pdfunite", *parts, staged], check=True)
        os.replace(staged, out)
    return pages


def main(argv):
    if len(argv) != 3:
        print("usage: python -m book.pdf HTML_DIR OUT.pdf", file=sys.stderr)
        return 2
    if not (find_chromium() and shutil.which("pdfunite")):
        print("book.pdf: printing the book needs chromium and pdfunite: "
              "apt-get install chromium poppler-utils", file=sys.stderr)
        return 1
    chinese = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True)
    if not chinese.stdout.strip():
        print("book.pdf: the book quotes Chinese and no font here has Chinese glyphs (Chromium "
              "would print boxes): apt-get install fonts-noto-cjk", file=sys.stderr)
        return 1
    start = time.monotonic()
    pages = print_book(argv[1], argv[2])
    print("book.pdf: %d pages of the site printed into %s in %.0f s"
          % (len(pages), argv[2], time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
