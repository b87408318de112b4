#!/usr/bin/env python3
"""Page check of the built site: every HTML page, loaded in headless Chromium after MathJax ran.

    check_site.py --site build/<preset>/site/html [--chapters chapters]
    check_site.py --site build/<preset>/site/html --screenshot ch01.html out.png [--height 2400]

(with tools/ on PYTHONPATH, as CMake's ${BOOK_PYTHON} runs it: it imports book.browser)

The site is served from 127.0.0.1 on a free port by this script (python3's http.server, in a
thread), which also notes every request it answers 404. In one Chromium (book.browser), the
harness site_check.js runs in a blank page of that origin: it loads the pages, a few at a time,
into same-origin iframes, waits for MathJax (its "End" startup hook, then Hub.Queue), inspects
each page's DOM and returns the findings. A page fails on

  * MathJax errors: merror elements, "Math Processing Error", TeX parse / file-load errors;
  * raw TeX in the visible text outside MathJax output and code (\\f$, $$, $..$, \\( \\[,
    \\begin{, \\frac, any \\command), and math typeset inside code fragments;
  * images that do not load (img with naturalWidth 0, SVG <object>/<embed> without a document);
  * broken internal links (missing file or missing #anchor; external links are only listed);
  * any request of the page that the server answered 404 (scripts, styles, fonts, images);
  * HTML tags or TeX written out as text in a heading;
  * figure text smaller than 11 px as the figure is shown at 1280 px (font size times scale,
    superscripts included);
  * at 400, 800 and 1280 px: a page that scrolls sideways (code, wide tables and formulas
    scroll in their own boxes), and at 400 px an open sidebar;
  * at 400 and 800 px: figure text under 11 px as shown (the figure's phone drawing, if it has
    one); at 400 px a figure that a tap opens alone (smaller still on a phone), a box that
    scrolls sideways without the shadow that says so (site.css, "Phone").

With --search QUERY=PAGE,..., the site's own search (docs/search.js) is used as a reader uses it,
with Chromium's own keys and mouse, at 400 and 1280 px: QUERY typed into the main page's search
box must list a section of each PAGE (^PAGE: as the first result; !PAGE: none); each of the
first three results must show a word of the query (a formula's too: √d, ∞); every result link
must open an existing page at an existing section, the section it names. For the first three
queries (at 1280 px the first), the arrow keys and Tab must reach the results, and Enter on a
result, Enter in the query (the first result) and a click on a result must each open that
result's page with its section's heading on screen, once MathJax has set the page.

With --menu PAGE, the menu is used as a reader uses it on PAGE at 400 and 1280 px: the menu
button pressed (on a phone), every chapter page and every section of PAGE must be a visible link
in it, its link to another chapter must open that chapter, and no link of the navigation may
lead to an empty page.

With --chapters, every code quote of a page must show its file's lines (the book's root is the
folder above chapters/) as they are, each line in order, comments and blank lines included; and
every chapters/NN-*/README.md must start with "# Title", its page chNN.html
must exist and be linked from the main page's text, in the order of the chapter directories.

Exit status: 0 all pages pass, 1 problems (listed per page), 2 usage / site missing,
77 no Chromium (ctest SKIP_RETURN_CODE).
"""
import argparse
import functools
import html.parser
import http.server
import os
import re
import sys
import threading
import time
import unicodedata
import urllib.parse

from book.browser import Browser, BrowserClosed, find_chromium
from book.pages.model import title_of

SKIP_DIRS = {"mathjax"}
CHECK_PREFIX = "/__check__/"
HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site_check.js")
# The page the harness runs in: blank, of the site's origin, so it may read the pages it loads.
HARNESS_PAGE = (b'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>site check</title>'
                b'</head><body></body></html>\n')


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site and the harness page; lists the requests it answers 404 (not_found,
    (path, referer)): a page's missing script, style, font or image shows only there."""
    not_found = None  # a list, set per server

    def log_message(self, fmt, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def send_error(self, code, message=None, explain=None):
        if code == 404 and not self.path.endswith("/favicon.ico"):
            self.not_found.append((urllib.parse.urlsplit(self.path).path,
                                   self.headers.get("Referer", "")))
        super().send_error(code, message, explain)

    def do_GET(self):
        if self.path.startswith(CHECK_PREFIX + "harness.html"):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(HARNESS_PAGE)))
            self.end_headers()
            self.wfile.write(HARNESS_PAGE)
            return
        super().do_GET()


def serve(site):
    """The site on 127.0.0.1, a free port, in a thread; the server's not_found list."""
    not_found = []
    handler = type("Handler", (SiteHandler,), {"not_found": not_found})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            functools.partial(handler, directory=site))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, not_found


def stop_serving(httpd):
    httpd.shutdown()
    httpd.server_close()


def list_pages(site):
    pages = []
    for root, dirs, files in os.walk(site):
        rel = os.path.relpath(root, site)
        dirs[:] = sorted(d for d in dirs if not (rel == "." and d in SKIP_DIRS))
        for f in sorted(files):
            if f.endswith(".html"):
                pages.append(os.path.normpath(os.path.join(rel, f)).replace(os.sep, "/"))
    return pages


class IdCollector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k == "id" or (k == "name" and tag == "a"):
                self.ids.add(v)


def static_ids(path):
    p = IdCollector()
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    return p.ids


class CodeQuotes(html.parser.HTMLParser):
    """The code quotes of a page as a reader sees them: for each div.snippet-file (the file
    shown above the quote), the numbered lines of the div.fragment after it, as
    [file shown, [[line number, text], ...]]."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.quotes, self.depth, self.fragment = [], 0, None
        self.in_file = self.in_line = self.in_lineno = False

    def handle_starttag(self, tag, attrs):
        cls = (dict(attrs).get("class") or "").split()
        if tag == "span" and "lineno" in cls and self.in_line:
            self.in_lineno = True
        if tag != "div":
            return
        self.depth += 1
        if "snippet-file" in cls:
            self.in_file = True
            self.quotes.append(["", []])
        elif "fragment" in cls and self.quotes and not self.quotes[-1][1] and not self.fragment:
            self.fragment = self.depth
        elif "line" in cls and self.fragment:
            self.in_line = True
            self.quotes[-1][1].append([None, ""])

    def handle_endtag(self, tag):
        if tag == "span":
            self.in_lineno = False
        if tag != "div":
            return
        if self.in_line:
            self.in_line = False
        elif self.fragment == self.depth:
            self.fragment = None
        self.in_file = False
        self.depth -= 1

    def handle_data(self, data):
        if self.in_file and not self.quotes[-1][0] and data.strip():
            self.quotes[-1][0] = data.strip()
        elif self.in_lineno:
            self.quotes[-1][1][-1][0] = int(data)
        elif self.in_line:
            self.quotes[-1][1][-1][1] += data


def code_quote_problems(site, pages, root):
    """(page, problem) for every code quote whose rendered lines are not its file's lines
    (root/<file shown>), all of them, in order, comments and blank lines included."""
    out = []
    for page in pages:
        parser = CodeQuotes()
        with open(os.path.join(site, page), encoding="utf-8", errors="replace") as f:
            parser.feed(f.read())
        for shown, lines in parser.quotes:
            path = os.path.join(root, shown)
            if not lines or not os.path.isfile(path):
                continue
            with open(path, encoding="utf-8") as f:
                source = f.read().split("\n")
            numbers = [n for n, _ in lines]
            missing = sorted(set(range(numbers[0], numbers[-1] + 1)) - set(numbers))
            if missing:
                out.append((page, "the quote of %s leaves out line(s) %s" %
                            (shown, ", ".join(map(str, missing)))))
            for n, text in lines:
                if text.rstrip() != source[n - 1].rstrip():
                    out.append((page, "the quote of %s shows line %d as %r, not %r" %
                                (shown, n, text.strip()[:60], source[n - 1].strip()[:60])))
    return out


def chapter_pages(chapters):
    """[(readme, id or None)] for chapters/*/README.md in directory order."""
    out = []
    for d in sorted(os.listdir(chapters)):
        readme = os.path.join(chapters, d, "README.md")
        if not os.path.isfile(readme):
            continue
        # The page id is chNN from the directory (book.pages.site); the first line is the
        # title, "# Title", with no Doxygen syntax ({#id}) a Git host would show.
        title = title_of(readme)
        pid = "ch" + d[:2] if title and not title.id and d[:2].isdigit() else None
        out.append((readme, pid))
    return out


SEARCH_WIDTHS = (400, 1280)


def folded(text):
    """Lower case without accents: Cramér is cramer."""
    return "".join(c for c in unicodedata.normalize("NFD", text.casefold())
                   if not unicodedata.combining(c))


def query_words(query):
    """The words of a query a result should show: not the short ones ("the", "is")."""
    return [w for w in re.split(r"[\s\-\u2010-\u2015/\"]+", folded(query))
            if len(w) > 3 or not w.isascii()]


SEARCH_JOURNEYS = 3  # queries whose results are also opened, by keys and by a click


def search_journeys(browser, origin, searches):
    """The searches as a reader does them, at a phone's width and a desktop's: the problems.
    Every query's results are read at the first width; the first SEARCH_JOURNEYS queries'
    are also reached by keys and opened, and the first query's again at the other widths
    (the keys and clicks do not depend on the query)."""
    problems = []
    for width in SEARCH_WIDTHS:
        browser.set_viewport(width, 900)
        first = width == SEARCH_WIDTHS[0]
        for k, (query, want) in enumerate(searches[:None if first else 1]):
            problems += ["search for '%s' at %d px: %s" % (query, width, m)
                         for m in search_journey(browser, origin, query, want, read=first,
                                                 open_results=k < SEARCH_JOURNEYS)]
    return problems


def search_journey(browser, origin, query, want, read, open_results):
    """One query typed; if read, its results read (listed pages, words shown, links); if
    open_results, the results reached by keys and opened by Enter and by a click."""
    def typed():  # the main page, QUERY typed into its search box: the results shown
        browser.open(origin + "index.html")
        if not browser.call(HARNESS, "searchBox"):
            return None
        browser.type(query)
        return browser.call(HARNESS, "searchResults")

    def opens(action, link, how):  # action opens the result link, at its section
        if not browser.navigation(action):
            return ["%s opened nothing" % how]
        at = browser.call(HARNESS, "landed", timeout=30)
        if link["section"] and not at["hash"]:
            return ["%s opened %s at its top, not at the section '%s'" % (how, at["path"],
                                                                          link["title"])]
        if (at["path"], at["hash"]) != (link["path"], link["hash"]):
            return ["%s opened %s#%s, not the result %s" % (how, at["path"], at["hash"],
                                                            link["href"])]
        return [] if at["seen"] else ["%s opened %s: %s" % (how, link["href"], at["why"])]

    shown = typed()
    if shown is None:
        return ["the main page has no search box (#MSearchField, #book-search-results)"]
    links, out = shown["links"], []
    if shown["shown"] and (shown["left"] < 0 or shown["right"] > shown["width"]):
        out.append("the results reach %d–%d px, outside the %d px window"
                   % (shown["left"], shown["right"], shown["width"]))
    paths = [link["path"] for link in links]
    listed = ", ".join(paths[:8]) or "nothing"
    for page in want:
        if page.startswith("^") and paths[:1] != [page[1:]]:
            out.append("the first result is not on %s (listed: %s)" % (page[1:], listed))
        elif page.startswith("!") and page[1:] in paths:
            out.append("lists %s (listed: %s)" % (page[1:], listed))
        elif page[0] not in "^!" and page not in paths:
            out.append("does not list %s (listed: %s)" % (page, listed))
    words = query_words(query)
    for k, link in enumerate(links[:3]):  # a result shows where it matches: the words, √d
        if words and not any(w in folded(link["text"]) for w in words):
            out.append("result %d shows none of the query's words: '%s'" % (k + 1, link["text"]))
    if read:
        out += ["result '%s' names a section but opens the top of %s" % (link["title"],
                                                                          link["path"])
                for link in links if link["section"] and not link["hash"]]
        out += browser.call(HARNESS, "brokenResults")
    if not links or not open_results:
        return out
    # Down, Down, Up, Up: the first result, the second, the first, the query; Tab, Tab: the
    # first and second again (-1 is the query). Then Enter opens the second.
    second = min(1, len(links) - 1)
    steps = ([("ArrowDown", 0), ("ArrowDown", 1), ("ArrowUp", 0), ("ArrowUp", -1), ("Tab", 0),
              ("Tab", 1)] if second else [("ArrowDown", 0), ("ArrowUp", -1), ("Tab", 0)])
    pressed = []
    for key, expected in steps:
        browser.press(key)
        pressed.append(key)
        at = browser.call(HARNESS, "focused")
        if at != expected:
            name = lambda k: "the query" if k == -1 else "result %d" % (k + 1)
            out.append("keys %s: the focus is on %s, not on %s" % (
                " ".join(pressed), name(at) if isinstance(at, int) else at, name(expected)))
            break
    else:
        out += opens(lambda: browser.press("Enter"), links[second],
                     "Enter on result %d" % (second + 1))
    if typed() is not None:
        out += opens(lambda: browser.press("Enter"), links[0], "Enter in the query")
    if typed() is not None:
        last = min(2, len(links) - 1)
        point = browser.call(HARNESS, "resultPoint", last)
        out += opens(lambda: browser.click(point["x"], point["y"]), links[last],
                     "a click on result %d" % (last + 1))
    return out


def run_check(args):
    site = os.path.abspath(args.site)
    if not os.path.isfile(os.path.join(site, "index.html")):
        print("check_site: no %s/index.html — build the site first "
              "(cmake --build <build dir> --target site)" % site)
        return 2
    exe = find_chromium()
    if not exe:
        print("check_site: chromium not found (apt-get install chromium); skipping")
        return 77
    pages = list_pages(site)
    if args.only:
        pages = [p for p in pages if p in args.only]
    searches = [[q.split("=", 1)[0], q.split("=", 1)[1].split(",")] for q in args.search or []]
    httpd, not_found = serve(site)
    url = "http://127.0.0.1:%d%sharness.html" % (httpd.server_address[1], CHECK_PREFIX)
    t0 = time.monotonic()
    problems = {}

    def add(page, msg):
        problems.setdefault(page, []).append(msg)

    found = {"results": {}, "layout": [], "menu": []}
    try:
        with Browser(1300, 1000, exe) as browser:
            browser.open(url)
            try:
                found = browser.call(HARNESS, "checkSite", {
                    "pages": pages, "menu": args.menu, "concurrency": args.jobs,
                    "pageTimeoutMs": int(args.page_timeout * 1000)},
                    timeout=max(0.0, t0 + args.timeout - time.monotonic()))
            except TimeoutError:
                add("(harness)", "did not finish within %d s" % args.timeout)
                found = browser.call(HARNESS, "progress")
            origin = "http://127.0.0.1:%d/" % httpd.server_address[1]
            for m in search_journeys(browser, origin, searches):
                add("index.html", m)
    except BrowserClosed as e:
        add("(chromium)", str(e))
    finally:
        stop_serving(httpd)
    elapsed = time.monotonic() - t0

    results = found["results"]
    for p in pages:
        if p not in results:
            add(p, "not checked (harness did not report it)")
    ids_cache = {p: set(r["ids"]) for p, r in results.items()}

    def ids_of(rel):
        if rel not in ids_cache:
            f = os.path.join(site, rel)
            ids_cache[rel] = static_ids(f) if rel.endswith(".html") and os.path.isfile(f) else set()
        return ids_cache[rel]

    external = set()
    n_links = 0
    requested_404 = {p for p, _ in not_found}
    for page, r in sorted(results.items()):
        for m in r["problems"]:
            add(page, m)
        external.update(r["external"])
        for raw, path, frag in r["links"]:
            n_links += 1
            rel = urllib.parse.unquote(path).lstrip("/")
            if rel == "" or rel.endswith("/"):
                rel += "index.html"
            target = os.path.join(site, rel)
            if rel.startswith(CHECK_PREFIX.strip("/")):
                continue
            if not os.path.isfile(target):
                add(page, "broken link: href=\"%s\" (no file %s)" % (raw, rel))
            elif frag and frag not in ids_of(rel):
                add(page, "broken link: href=\"%s\" (no anchor #%s in %s)" % (raw, frag, rel))
        for raw, path in r["resources"]:
            rel = urllib.parse.unquote(path).lstrip("/")
            if path not in requested_404 and not os.path.isfile(os.path.join(site, rel)):
                add(page, "missing resource: \"%s\"" % raw)
    for page, m in found["layout"]:
        add(page, m)
    for m in found["menu"]:
        add(args.menu, m)
    for path, referer in not_found:
        ref = urllib.parse.urlsplit(referer).path.lstrip("/")
        if not ref or ref.startswith(CHECK_PREFIX.strip("/")):
            ref = path.lstrip("/")
        if ref.startswith("mathjax/"):
            ref = "(MathJax, requested by a page) " + ref
        add(ref, "request answered 404: %s" % path)

    n_chapters = 0
    if args.chapters:
        root = os.path.dirname(os.path.abspath(args.chapters))
        for page, problem in code_quote_problems(site, pages, root):
            add(page, problem)
        index = results.get("index.html", {"contentLinks": []})
        linked = [urllib.parse.unquote(p).lstrip("/") for p in index["contentLinks"]]
        order = []
        for readme, pid in chapter_pages(args.chapters):
            n_chapters += 1
            rel = os.path.relpath(readme, os.path.dirname(os.path.abspath(args.chapters)))
            if not pid:
                add("index.html", "%s: first line must be '# Title' (no {#id}: the page id is chNN)" % rel)
                continue
            if not os.path.isfile(os.path.join(site, pid + ".html")):
                add("index.html", "%s: page %s.html was not generated" % (rel, pid))
            elif pid + ".html" not in linked:
                add("index.html", "%s: page '%s' is not linked from the main page "
                    "(add '\\subpage %s' to docs/index.md)" % (rel, pid, pid))
            else:
                order.append((linked.index(pid + ".html"), pid))
        if [p for _, p in order] != [p for _, p in sorted(order)]:
            add("index.html", "chapters are listed out of order: %s (directory order: %s)"
                % (", ".join(p for _, p in sorted(order)), ", ".join(p for _, p in order)))

    n_formulas = sum(r.get("formulas", 0) for r in results.values())
    print("check_site: %d pages, %d formulas typeset, %d internal links, %d chapters, "
          "%.1f s in Chromium" % (len(pages), n_formulas, n_links, n_chapters, elapsed))
    if external and args.verbose:
        print("external links (not fetched):")
        for u in sorted(external):
            print("  " + u)
    elif external:
        print("%d external links (not fetched; --verbose lists them)" % len(external))
    if problems:
        n = sum(len(v) for v in problems.values())
        print("FAIL: %d problems on %d pages" % (n, len(problems)))
        # A defect in shared parts (navigation tree, a title) shows on every page: say it once.
        pages_of = {}
        for page, msgs in problems.items():
            for m in set(msgs):
                pages_of.setdefault(m, []).append(page)
        common = {m for m, ps in pages_of.items() if len(ps) >= 4}
        if common:
            print("(on many pages)")
            for m in sorted(common):
                ps = sorted(pages_of[m])
                print("  - %s  [%d pages: %s, ...]" % (m, len(ps), ", ".join(ps[:3])))
        for page in sorted(problems):
            msgs = [m for m in problems[page] if m not in common]
            if msgs:
                print(page)
                for m in msgs:
                    print("  - " + m)
        return 1
    print("OK")
    return 0


def run_screenshot(args):
    site = os.path.abspath(args.site)
    exe = find_chromium()
    if not exe:
        print("check_site: chromium not found")
        return 77
    page, out = args.screenshot
    httpd, not_found = serve(site)
    url = "http://127.0.0.1:%d/%s" % (httpd.server_address[1], page.lstrip("/"))
    try:
        with Browser(args.width, args.height, exe, hide_scrollbars=True) as browser:
            browser.open(url)
            try:
                browser.wait_for_mathjax(timeout=args.budget_ms / 1000)
            except TimeoutError:
                pass  # a picture of what there is
            browser.screenshot(out)
    finally:
        stop_serving(httpd)
    print("wrote %s (%s)" % (out, url))
    for path, _ in not_found:
        print("  404: " + path)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", required=True, help="the site's html directory")
    ap.add_argument("--chapters", help="chapters/ source dir: every README must be on the index")
    ap.add_argument("--jobs", type=int, default=3, help="pages loaded at once (default 3)")
    ap.add_argument("--timeout", type=float, default=400, help="whole check, seconds")
    ap.add_argument("--page-timeout", type=float, default=30, help="one page, seconds")
    ap.add_argument("--only", nargs="+", help="check only these pages (paths relative to --site)")
    ap.add_argument("--verbose", action="store_true", help="list external links")
    ap.add_argument("--search", action="append", metavar="QUERY=PAGE[,PAGE...]",
                    help="the site's search for QUERY must find a section of each PAGE "
                    "(^PAGE: first; !PAGE: none)")
    ap.add_argument("--menu", metavar="PAGE",
                    help="on PAGE (a chapter), the menu opened at 400 and 1280 px must show every "
                         "chapter (chNN.html) and PAGE's sections, and lead to no empty page")
    ap.add_argument("--screenshot", nargs=2, metavar=("PAGE", "OUT_PNG"),
                    help="take a PNG screenshot of PAGE (e.g. ch01.html or ch01.html#anchor)")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--height", type=int, default=1500)
    ap.add_argument("--budget-ms", type=int, default=15000,
                    help="screenshot: at most this long waiting for MathJax")
    args = ap.parse_args()
    if args.screenshot:
        return run_screenshot(args)
    return run_check(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(1)
