#!/usr/bin/env python3
"""Page check of the built site: every HTML page, loaded in headless Chromium after MathJax ran.

    check_site.py --site build/<preset>/site/html [--chapters chapters]
    check_site.py --site build/<preset>/site/html --screenshot ch01.html out.png [--height 2400]

The site is served from 127.0.0.1 on a free port by this script (python3's http.server, in a
thread). One Chromium process opens a generated harness page that loads the pages, a few at a
time, into same-origin iframes, waits for MathJax (its "End" startup hook, then Hub.Queue),
inspects each page's DOM and POSTs the findings back. A page fails on

  * MathJax errors: merror elements, "Math Processing Error", TeX parse / file-load errors;
  * raw TeX in the visible text outside MathJax output and code (\\f$, $$, $..$, \\( \\[,
    \\begin{, \\frac, any \\command), and math typeset inside code fragments;
  * images that do not load (img with naturalWidth 0, SVG <object>/<embed> without a document);
  * broken internal links (missing file or missing #anchor; external links are only listed);
  * any request of the page that the server answered 404 (scripts, styles, fonts, images);
  * HTML tags or TeX written out as text in a heading;
  * figure text smaller than 11 px as the figure is shown at 1280 px (font size times scale);
  * at 400, 800 and 1280 px: a page that scrolls sideways (code, wide tables and formulas
    scroll in their own boxes), and at 400 px an open sidebar.

With --search QUERY=PAGE,..., the site's own search (window.bookSearch, docs/search.js), run in
the main page, must find a section of each PAGE for QUERY.

With --chapters, every chapters/NN-*/README.md must start with "# Title", its page chNN.html
must exist and be linked from the main page's text, in the order of the chapter directories.

Exit status: 0 all pages pass, 1 problems (listed per page), 2 usage / site missing,
77 no Chromium (ctest SKIP_RETURN_CODE).
"""
import argparse
import functools
import html.parser
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

SKIP_DIRS = {"mathjax"}
CHECK_PREFIX = "/__check__/"

HARNESS = r"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>site check</title></head>
<body><div id="status">running</div>
<script>
"use strict";
const PAGES = __PAGES__;
const LAYOUT_PAGES = __LAYOUT_PAGES__;   // pages also checked at the narrow widths (all)
const NARROW_WIDTHS = [400, 800];
const WIDE = 1280;
const MIN_FIGURE_TEXT_PX = 11;
const SEARCHES = __SEARCHES__;           // [[query, [pages a result must come from]]]
const CONCURRENCY = __CONCURRENCY__;
const PAGE_TIMEOUT_MS = __PAGE_TIMEOUT_MS__;
// Elements whose text is not prose: MathJax output and sources, code, scripts.
const SKIP = "script,style,noscript,textarea,code,pre,kbd,samp,tt,.fragment,.line," +
  ".mjx-chtml,.MathJax_CHTML,.MathJax,.MathJax_Display,.MathJax_Preview,.MJX_Assistive_MathML," +
  ".MathJax_SVG,.MathJax_SVG_Display,.MathJax_MathML,mjx-container,.MathJax_Message";
const RAW = [
  [/\\f[$\[\]{}()]/, "Doxygen formula delimiter left in the text"],
  [/\$\$/, "$$ left in the text (display math not converted)"],
  [/(^|[^\w$\\])\$(?:[^\s$\\]|[^\s$][^$\n]*?[^\s$\\])\$(?![\d$])/,
   "$...$ left in the text (inline math not converted)"],
  [/\\[()\[\]]/, "MathJax delimiter left in the text (math not typeset)"],
  [/\\(begin|end)\s*\{/, "LaTeX environment left in the text"],
  [/\\[A-Za-z]{2,}/, "TeX command left in the text"],
  [/\\_form#\d/, "Doxygen formula placeholder left in the text (formula inside quotes?)"],
  // only in page text (API signatures show char **argv)
  [/\*\*\S|\S\*\*/, "Markdown ** left in the text (emphasis around math does not work)",
   "div.textblock"],
  [/`/, "backtick left in the text (a Markdown code span did not close)", "div.textblock"],
];
const MATH_SEL = ".mjx-chtml,.MathJax_CHTML,.MathJax,.MathJax_SVG,mjx-container";

function post(url, obj) {
  return fetch(url, {method: "POST", headers: {"Content-Type": "application/json"},
                     body: JSON.stringify(obj)});
}
function sleep(ms) { return new Promise(r => setTimeout(r, ms)); }
async function waitFor(pred, ms) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) { try { if (pred()) return true; } catch (e) {} await sleep(25); }
  return false;
}
function clip(s, i, n) {
  const a = Math.max(0, i - n), b = Math.min(s.length, i + n);
  return (a > 0 ? "…" : "") + s.slice(a, b).replace(/\s+/g, " ") + (b < s.length ? "…" : "");
}
function texOf(el, d) {
  const frame = el.closest("[id$='-Frame']");
  if (frame) {
    const s = d.getElementById(frame.id.replace(/-Frame$/, ""));
    if (s) return s.textContent;
  }
  return "";
}

// At a width: the page must not scroll sideways (code and wide tables scroll in their own
// boxes), and on a phone the sidebar must be closed.
function layout(w, d, width) {
  const out = [];
  for (const el of [d.scrollingElement, d.getElementById("doc-content")]) {
    if (!el || el.scrollWidth <= el.clientWidth + 2) continue;
    let culprit = "";
    for (const e of d.querySelectorAll("div.contents *")) {
      const r = e.getBoundingClientRect();
      if (r.right > w.innerWidth + 2 && !e.closest(".fragment,pre,table,.MathJax_Display,.MJXc-display")) {
        culprit = " (" + e.localName + (e.className ? "." + String(e.className).split(" ")[0] : "") +
                  ": '" + (e.textContent || "").trim().slice(0, 50) + "')";
        break;
      }
    }
    out.push("at " + width + " px the page scrolls sideways: " + el.scrollWidth + " px of content in " +
             el.clientWidth + culprit);
    break;
  }
  const side = d.getElementById("side-nav");
  if (side && width < 768) {
    const cs = w.getComputedStyle(side), r = side.getBoundingClientRect();
    if (cs.display !== "none" && cs.visibility !== "hidden" && r.width > 1 && r.right > 1 &&
        r.height > 1)
      out.push("at " + width + " px the sidebar is open (" + Math.round(r.width) + " px wide)");
  }
  return out;
}

// Figures: the smallest text a reader sees, font size times the figure's scale on the page.
function figureText(d) {
  const out = [];
  for (const o of d.querySelectorAll("div.image object")) {
    let doc = null;
    try { doc = o.contentDocument; } catch (e) {}
    const svg = doc && doc.documentElement;
    if (!svg || svg.localName !== "svg") continue;
    const drawn = (svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width) ||
                  svg.width.baseVal.value;
    const scale = o.getBoundingClientRect().width / drawn;
    let min = Infinity, what = "";
    for (const t of svg.querySelectorAll("text")) {
      if (!t.textContent.trim()) continue;
      const px = parseFloat(doc.defaultView.getComputedStyle(t).fontSize) * scale;
      if (px < min) { min = px; what = t.textContent.trim().slice(0, 30); }
    }
    if (min < MIN_FIGURE_TEXT_PX)
      out.push("figure " + o.getAttribute("data") + ": text '" + what + "' is " + min.toFixed(1) +
               " px at " + WIDE + " px (at least " + MIN_FIGURE_TEXT_PX + ")");
  }
  return out;
}

function inspect(path, w, d, mjMessages) {
  const res = {page: path, problems: [], links: [], resources: [], ids: [], contentLinks: [],
               formulas: 0, external: []};
  const P = (m) => { if (res.problems.length < 60) res.problems.push(m); };
  // MathJax errors
  for (const m of mjMessages) P("MathJax: " + m);
  for (const e of d.querySelectorAll(".merror,.mjx-merror,mjx-merror,.MathJax_Error")) {
    P("MathJax error '" + e.textContent.trim().slice(0, 120) + "' in math: " +
      texOf(e, d).trim().slice(0, 160));
  }
  res.formulas = d.querySelectorAll(".mjx-chtml.MathJax_CHTML,mjx-container").length;
  // Headings: no HTML tags or TeX written out as text
  for (const h of d.querySelectorAll("div.contents h1, div.contents h2, div.contents h3, " +
                                     "div.header .title")) {
    const s = h.textContent;
    if (/<\/?[a-z][^>]*>/i.test(s)) P("raw HTML tag in a heading: '" + s.trim().slice(0, 80) + "'");
    if (/\^\(|\^\{|_\{|\\[a-z]+/i.test(s))
      P("formula written as plain text in a heading: '" + s.trim().slice(0, 80) + "'");
  }
  for (const e of d.querySelectorAll(".fragment .mjx-chtml, code .mjx-chtml, pre .mjx-chtml, " +
                                     ".fragment .MathJax, pre .MathJax, code .MathJax")) {
    P("math typeset inside a code fragment: " + texOf(e, d).trim().slice(0, 120));
  }
  // Raw TeX in visible text
  if (d.body) {
    const walker = d.createTreeWalker(d.body, NodeFilter.SHOW_TEXT);
    let n, seen = 0;
    while ((n = walker.nextNode())) {
      const s = n.data;
      if (!s || !/[\\$*`]/.test(s)) continue;
      const p = n.parentElement;
      if (p && p.closest(SKIP)) continue;
      if (/Math Processing Error/.test(s)) P("MathJax: Math Processing Error");
      for (const [re, what, scope] of RAW) {
        if (scope && !(p && p.closest(scope))) continue;
        const m = re.exec(s);
        if (m) { P(what + ": '" + clip(s, m.index, 40) + "'"); seen++; }
      }
      if (seen > 20) break;
    }
  }
  // Images
  for (const img of d.querySelectorAll("img")) {
    const src = img.getAttribute("src") || "";
    if (!img.complete || img.naturalWidth === 0) P("image does not load: <img src=\"" + src + "\">");
  }
  for (const o of d.querySelectorAll("object")) {
    const data = o.getAttribute("data") || "";
    let doc = null;
    try { doc = o.contentDocument; } catch (e) {}
    const root = doc && doc.documentElement;
    const isSvg = /\.svg(\?|#|$)/i.test(data) || /svg/.test(o.getAttribute("type") || "");
    if (!root || (isSvg && root.localName !== "svg"))
      P("image does not load: <object data=\"" + data + "\">");
  }
  for (const e of d.querySelectorAll("embed")) {
    const src = e.getAttribute("src") || "";
    let doc = null;
    try { doc = e.getSVGDocument && e.getSVGDocument(); } catch (err) {}
    if (!doc || !doc.documentElement) P("image does not load: <embed src=\"" + src + "\">");
  }
  // Links, resources, anchors
  const here = w.location.origin;
  const seenL = new Set();
  for (const a of d.querySelectorAll("a[href], area[href]")) {
    const raw = a.getAttribute("href");
    if (!raw || raw === "#" || /^(javascript|mailto|data|tel):/i.test(raw)) continue;
    let u;
    try { u = new URL(a.href); } catch (e) { P("malformed link href=\"" + raw + "\""); continue; }
    if (u.origin !== here) {
      if (/^https?:$/.test(u.protocol)) res.external.push(u.href);
      else P("link with unsupported scheme: " + raw);
      continue;
    }
    const key = u.pathname + u.hash;
    if (seenL.has(key)) continue;
    seenL.add(key);
    res.links.push([raw, u.pathname, decodeURIComponent(u.hash.slice(1))]);
  }
  const attrs = [["link[href]", "href"], ["script[src]", "src"], ["img[src]", "src"],
                 ["object[data]", "data"], ["embed[src]", "src"], ["iframe[src]", "src"]];
  for (const [sel, at] of attrs) {
    for (const e of d.querySelectorAll(sel)) {
      const raw = e.getAttribute(at);
      if (!raw || /^(data|javascript|about):/i.test(raw)) continue;
      let u;
      try { u = new URL(raw, d.baseURI); } catch (err) { continue; }
      if (u.origin !== here) { res.external.push(u.href); continue; }
      res.resources.push([raw, u.pathname]);
    }
  }
  const ids = new Set();
  for (const e of d.querySelectorAll("[id]")) ids.add(e.id);
  for (const e of d.querySelectorAll("a[name]")) ids.add(e.getAttribute("name"));
  res.ids = Array.from(ids);
  for (const a of d.querySelectorAll("div.contents a[href]")) {
    try { res.contentLinks.push(new URL(a.href).pathname); } catch (e) {}
  }
  return res;
}

function checkPage(path, width, layoutOnly) {
  return new Promise(resolve => {
    const f = document.createElement("iframe");
    f.width = width; f.height = 900;
    const mjMessages = [];
    let finished = false;
    const finish = (res) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      f.remove();
      resolve(res);
    };
    const timer = setTimeout(() => {
      let res = {page: path, problems: [], links: [], resources: [], ids: [], contentLinks: [],
                 external: [], formulas: 0};
      try { res = inspect(path, f.contentWindow, f.contentDocument, mjMessages); } catch (e) {}
      res.problems.unshift("timed out after " + PAGE_TIMEOUT_MS / 1000 +
                           " s (page load or MathJax never finished)");
      finish(res);
    }, PAGE_TIMEOUT_MS);
    f.onload = async () => {
      const w = f.contentWindow, d = f.contentDocument;
      const run = () => {
        try {
          if (layoutOnly) { finish({page: path, width: width, problems: layout(w, d, width)}); return; }
          const res = inspect(path, w, d, mjMessages);
          if (LAYOUT_PAGES.includes(path)) res.problems.push(...layout(w, d, width));
          res.problems.push(...figureText(d));
          finish(res);
        }
        catch (e) { finish({page: path, problems: ["checker error: " + e], links: [],
                            resources: [], ids: [], contentLinks: [], external: [], formulas: 0}); }
      };
      if (!d.querySelector("script[src*='MathJax.js']")) { run(); return; }
      const ok = await waitFor(() => w.MathJax && w.MathJax.Hub && w.MathJax.Hub.Register, 10000);
      if (!ok) { mjMessages.push("MathJax.js did not load"); run(); return; }
      w.MathJax.Hub.signal.Interest(function (m) {
        const s = (Array.isArray(m) ? m : [m]).map(String);
        if (/error/i.test(s[0])) mjMessages.push(s.slice(0, 2).join(": ").slice(0, 200));
      });
      w.MathJax.Hub.Register.StartupHook("End", function () {
        w.MathJax.Hub.Queue(function () { setTimeout(run, 0); });
      });
    };
    f.src = "/" + path;
    document.body.appendChild(f);
  });
}

// The search, run as a reader runs it: the page's own script, in the main page.
function checkSearch() {
  return new Promise(resolve => {
    if (!SEARCHES.length) { resolve([]); return; }
    const f = document.createElement("iframe");
    f.width = WIDE; f.height = 900;
    f.onload = async () => {
      const w = f.contentWindow;
      const out = [];
      const ok = await waitFor(() => typeof w.bookSearch === "function", 10000);
      for (const [query, want] of SEARCHES) {
        if (!ok) { out.push("search: the page has no search (window.bookSearch)"); break; }
        const got = w.bookSearch(query).map(r => r.url.split("#")[0]);
        for (const page of want) {
          if (!got.includes(page))
            out.push("search for '" + query + "' does not find " + page + " (found: " +
                     (got.slice(0, 8).join(", ") || "nothing") + ")");
        }
      }
      f.remove();
      resolve(out);
    };
    f.src = "/index.html";
    document.body.appendChild(f);
  });
}

(async function main() {
  const jobs = PAGES.map(p => [p, WIDE, false]);
  for (const width of NARROW_WIDTHS) for (const p of LAYOUT_PAGES) jobs.push([p, width, true]);
  let next = 0;
  async function worker() {
    while (next < jobs.length) {
      const [path, width, layoutOnly] = jobs[next++];
      const res = await checkPage(path, width, layoutOnly);
      await post(layoutOnly ? "__PREFIX__layout" : "__PREFIX__page", res);
    }
  }
  const workers = [];
  for (let i = 0; i < CONCURRENCY; i++) workers.push(worker());
  await Promise.all(workers);
  await post("__PREFIX__search", {problems: await checkSearch()});
  document.getElementById("status").textContent = "done";
  await post("__PREFIX__done", {});
})();
</script></body></html>
"""


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.results = {}
        self.layout = []             # problems found at the narrow widths
        self.search = []
        self.not_found = []          # (path, referer)
        self.done = threading.Event()
        self.harness = b""


class Handler(http.server.SimpleHTTPRequestHandler):
    state = None  # set per server

    def log_message(self, fmt, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def send_error(self, code, message=None, explain=None):
        if code == 404 and not self.path.endswith("/favicon.ico"):
            with self.state.lock:
                self.state.not_found.append((urllib.parse.urlsplit(self.path).path,
                                             self.headers.get("Referer", "")))
        super().send_error(code, message, explain)

    def do_GET(self):
        if self.path.startswith(CHECK_PREFIX + "harness.html"):
            body = self.state.harness
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(n)
        if self.path == CHECK_PREFIX + "page":
            res = json.loads(data.decode("utf-8"))
            with self.state.lock:
                self.state.results[res["page"]] = res
        elif self.path == CHECK_PREFIX + "layout":
            res = json.loads(data.decode("utf-8"))
            with self.state.lock:
                self.state.layout += [(res["page"], m) for m in res["problems"]]
        elif self.path == CHECK_PREFIX + "search":
            with self.state.lock:
                self.state.search += json.loads(data.decode("utf-8"))["problems"]
        elif self.path == CHECK_PREFIX + "done":
            self.state.done.set()
        self.send_response(204)
        self.end_headers()


def serve(site, state):
    handler = functools.partial(Handler, directory=site)
    Handler.state = state
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    return httpd


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def chromium_cmd(exe, profile, extra):
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run",
            "--disable-default-apps", "--disable-extensions", "--mute-audio",
            "--user-data-dir=" + profile] + extra


def stop(proc):
    """Stop the Chromium we started: its own process group (start_new_session=True)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=5)


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


def chapter_pages(chapters):
    """[(readme, id or None)] for chapters/*/README.md in directory order."""
    out = []
    for d in sorted(os.listdir(chapters)):
        readme = os.path.join(chapters, d, "README.md")
        if not os.path.isfile(readme):
            continue
        # The page id is chNN from the directory (docs/md_filter.py); the first line is the
        # title, "# Title", with no Doxygen syntax a Git host would show.
        pid = None
        with open(readme, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    if re.match(r"^#\s+[^{]+$", line.strip()) and d[:2].isdigit():
                        pid = "ch" + d[:2]
                    break
        out.append((readme, pid))
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
    state = State()
    layout_pages = pages  # every page, also at phone and tablet width
    searches = [[q.split("=", 1)[0], q.split("=", 1)[1].split(",")] for q in args.search or []]
    state.harness = (HARNESS.replace("__PAGES__", json.dumps(pages))
                     .replace("__LAYOUT_PAGES__", json.dumps(layout_pages))
                     .replace("__SEARCHES__", json.dumps(searches))
                     .replace("__CONCURRENCY__", str(args.jobs))
                     .replace("__PAGE_TIMEOUT_MS__", str(int(args.page_timeout * 1000)))
                     .replace("__PREFIX__", CHECK_PREFIX)).encode("utf-8")
    httpd = serve(site, state)
    url = "http://127.0.0.1:%d%sharness.html" % (httpd.server_address[1], CHECK_PREFIX)
    t0 = time.monotonic()
    profile = tempfile.mkdtemp(prefix="site-check-chromium-")
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(chromium_cmd(exe, profile, ["--window-size=1300,1000", url]),
                            stdout=log, stderr=log, start_new_session=True)
    problems = {}

    def add(page, msg):
        problems.setdefault(page, []).append(msg)

    try:
        deadline = t0 + args.timeout
        while not state.done.is_set() and time.monotonic() < deadline and proc.poll() is None:
            state.done.wait(0.2)
        if not state.done.is_set():
            if proc.poll() is not None:
                log.seek(0)
                tail = log.read().decode("utf-8", "replace")[-2000:]
                add("(chromium)", "Chromium exited early (status %s):\n%s" % (proc.returncode, tail))
            else:
                add("(harness)", "did not finish within %d s" % args.timeout)
    finally:
        stop(proc)
        httpd.shutdown()
        httpd.server_close()
        shutil.rmtree(profile, ignore_errors=True)
    elapsed = time.monotonic() - t0

    results = state.results
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
    requested_404 = {p for p, _ in state.not_found}
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
    for page, m in state.layout:
        add(page, m)
    for m in state.search:
        add("index.html", m)
    for path, referer in state.not_found:
        ref = urllib.parse.urlsplit(referer).path.lstrip("/")
        if not ref or ref.startswith(CHECK_PREFIX.strip("/")):
            ref = path.lstrip("/")
        if ref.startswith("mathjax/"):
            ref = "(MathJax, requested by a page) " + ref
        add(ref, "request answered 404: %s" % path)

    n_chapters = 0
    if args.chapters:
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
    state = State()
    httpd = serve(site, state)
    profile = tempfile.mkdtemp(prefix="site-shot-chromium-")
    url = "http://127.0.0.1:%d/%s" % (httpd.server_address[1], page.lstrip("/"))
    try:
        cmd = chromium_cmd(exe, profile, [
            "--hide-scrollbars", "--window-size=%d,%d" % (args.width, args.height),
            "--virtual-time-budget=%d" % args.budget_ms,
            "--screenshot=" + os.path.abspath(out), url])
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            proc.wait(timeout=120)
        finally:
            stop(proc)
    finally:
        httpd.shutdown()
        httpd.server_close()
        shutil.rmtree(profile, ignore_errors=True)
    if not os.path.isfile(out):
        print("check_site: no screenshot written")
        return 1
    print("wrote %s (%s)" % (out, url))
    for path, _ in state.not_found:
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
                    help="the site's search for QUERY must find a section of each PAGE")
    ap.add_argument("--screenshot", nargs=2, metavar=("PAGE", "OUT_PNG"),
                    help="take a PNG screenshot of PAGE (e.g. ch01.html or ch01.html#anchor)")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--height", type=int, default=1500)
    ap.add_argument("--budget-ms", type=int, default=15000, help="screenshot: virtual time budget")
    args = ap.parse_args()
    if args.screenshot:
        return run_screenshot(args)
    return run_check(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(1)
