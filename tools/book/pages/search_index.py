"""The site's full-text search data, from the pages Doxygen wrote.

usage: python -m book.pages.search_index HTML_DIR

Writes HTML_DIR/search-data.js: `window.BOOK_SEARCH_DATA = [...]`, one entry per section of
every page: page title, section title, link to the section's anchor, the section's text with its
formulas as a reader reads them (\\sqrt{d} as √d: findable, and readable in a result), and the
page's kind (a chapter, another page of the book, the API reference, the instructors' pages),
by which the search ranks. docs/search.js indexes it with lunr (Debian's libjs-lunr) in the
browser: a script file, not a fetched JSON file, so that the search works from file:// too.
Formulas are turned into text by pylatexenc (Debian's python3-pylatexenc).
"""
import html.parser
import json
import logging
import os
import re
import sys

from pylatexenc.latex2text import LatexNodes2Text

SKIP_TAGS = {"script", "style", "head", "title"}
# the contents list, previous/next links and code are not the section's text
SKIP_CLASSES = {"toc", "chapter-nav", "fragment", "snippet-file", "output-label"}
HEADINGS = {"h1", "h2", "h3"}
# Pages for instructors (the worked solutions solNN, the instructors' guide): ranked last.
INSTRUCTOR_PAGE = re.compile(r"sol\d+\.html|instructors\.html")
CHAPTER_PAGE = re.compile(r"ch\d+\.html")


class Sections(html.parser.HTMLParser):
    """Splits div.contents of a Doxygen page into sections at h1-h3 headings with anchors."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title, self.sections = "", []
        self.is_page = False      # a page of the book (Markdown), not of the API reference
        self.depth_contents = 0   # >0 inside div.contents
        self.div_depth = 0
        self.skip = 0
        self.in_heading = False
        self.in_title = False
        self.pending_anchor = None  # an <a id> just before a heading (Doxygen's API pages)
        self.current = {"anchor": "", "section": "", "text": []}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div":
            if self.depth_contents:
                self.depth_contents += 1
            elif "contents" in (a.get("class") or "").split():
                self.depth_contents = 1
        classes = set((a.get("class") or "").split())
        if self.skip and tag == "div":
            self.skip += 1  # inside a skipped div: count nested divs to find its end
        elif tag in SKIP_TAGS or (tag in ("div", "pre") and classes & SKIP_CLASSES):
            self.skip += 1
        if tag == "div" and "title" in (a.get("class") or "").split():
            self.in_title = True
        if not self.depth_contents:
            return
        if tag in HEADINGS:
            self.flush()
            self.in_heading = True
            self.current["anchor"], self.pending_anchor = self.pending_anchor or "", None
        # A section's anchor: an <a id> in its heading (the chapters'), or right before it (an
        # API page's "<a id=...></a><h2 class="memtitle">"); not a link (href).
        if tag == "a" and a.get("id") and not a.get("href"):
            if self.in_heading:
                self.current["anchor"] = a["id"]
            else:
                self.pending_anchor = a["id"]

    def handle_endtag(self, tag):
        if self.skip and (tag in SKIP_TAGS or tag in ("div", "pre")):
            self.skip -= 1
        if tag == "div":
            if self.in_title:
                self.in_title = False
            if self.depth_contents:
                self.depth_contents -= 1
        if tag in HEADINGS:
            self.in_heading = False

    def handle_data(self, data):
        if data.strip() and not self.in_heading:
            self.pending_anchor = None  # text between the anchor and the heading: not its
        if self.skip:
            return
        if self.in_title:
            self.title += data
        elif self.depth_contents:
            if self.in_heading:
                self.current["section"] += data
            else:
                self.current["text"].append(data)

    def handle_comment(self, data):
        if data.strip() == "PageDoc":  # Doxygen closes a \\page's text with <!-- PageDoc -->
            self.is_page = True

    def flush(self):
        text = " ".join("".join(self.current["text"]).split())
        if text or self.current["section"].strip():
            self.sections.append({"anchor": self.current["anchor"],
                                  "section": " ".join(self.current["section"].split()),
                                  "text": text})
        self.current = {"anchor": "", "section": "", "text": []}

    def close(self):
        super().close()
        self.flush()


# A formula of the page as MathJax reads it: \\( \\), \\[ \\] (environments are inside them).
FORMULA = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
TEX_TO_TEXT = LatexNodes2Text()
logging.getLogger("pylatexenc").setLevel(logging.ERROR)  # it warns of every unknown macro


def formula_text(tex):
    """A formula as text a reader types and reads: \\sqrt{d} -> √d, \\infty -> ∞, \\sum -> ∑."""
    text = " ".join(TEX_TO_TEXT.latex_to_text(tex).split())
    return re.sub(r"√\(([^\s()]+)\)", r"√\1", text)  # √(d) -> √d, as the book writes it in prose


def readable(text):
    """The text of a section with each formula replaced by its text: a space before it, and
    after it unless punctuation follows ("by √d, and")."""
    def text_of(m):
        after = text[m.end():m.end() + 1]
        return (" " + formula_text(m.group(1) or m.group(2) or "") +
                ("" if after and not after.isalnum() and not after.isspace() else " "))
    return FORMULA.sub(text_of, text)


def page_kind(name, is_page):
    """chapter, page (another page of the book), reference (API) or instructor."""
    if INSTRUCTOR_PAGE.fullmatch(name):
        return "instructor"
    if CHAPTER_PAGE.fullmatch(name):
        return "chapter"
    return "page" if is_page else "reference"


def entries(html_dir):
    out = []
    for name in sorted(os.listdir(html_dir)):
        if not name.endswith(".html") or name.startswith(("navtree", "search")):
            continue
        with open(os.path.join(html_dir, name), encoding="utf-8") as f:
            p = Sections()
            p.feed(f.read())
            p.close()
        title = " ".join(readable(p.title).split())
        kind = page_kind(name, p.is_page)
        for s in p.sections:
            text = " ".join(readable(s["text"]).split())
            if not text and not (s["section"] and s["anchor"]):
                continue  # nothing to find, or a heading alone that no link can open
            out.append({"u": name + ("#" + s["anchor"] if s["anchor"] else ""),
                        "p": title, "s": " ".join(readable(s["section"]).split()), "x": text,
                        "k": kind})
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    data = entries(argv[1])
    with open(os.path.join(argv[1], "search-data.js"), "w", encoding="utf-8") as f:
        f.write("window.BOOK_SEARCH_DATA = ")
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        f.write(";\n")
    print(f"search_index: {len(data)} sections indexed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
