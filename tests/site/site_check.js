// The site check's in-page harness (tests/site/check_site.py), run by book.browser in a blank
// page of the site's own origin (so that it can read the pages' documents): it loads the pages,
// a few at a time, into iframes, waits for MathJax (book.mathjaxDone), inspects each page's DOM
// and returns the findings; the server that serves the site lists the requests answered 404.
(() => {
"use strict";
const NARROW_WIDTHS = [400, 800];
const WIDE = 1280;
const MIN_FIGURE_TEXT_PX = 11;
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
  // A source page (book.pages.sources): every line number sits beside its line of code.
  const numbers = d.querySelectorAll("td.linenos pre span");
  const lines = d.querySelectorAll("td.code span[id^=L-]");
  for (let k = 0; k < Math.min(numbers.length, lines.length); ++k) {
    const drift = numbers[k].getBoundingClientRect().top - lines[k].getBoundingClientRect().top;
    if (Math.abs(drift) > 1) {
      P("line number " + (k + 1) + " is " + drift.toFixed(1) + " px off its line of code");
      break;
    }
  }
  // A screen reader reads the page in its language only when the page names it.
  if (!d.documentElement.lang) P("the page does not name its language (<html lang>)");
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

function checkPage(path, width, layoutOnly, timeoutMs) {
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
      res.problems.unshift("timed out after " + timeoutMs / 1000 +
                           " s (page load or MathJax never finished)");
      finish(res);
    }, timeoutMs);
    f.onload = async () => {
      const w = f.contentWindow, d = f.contentDocument;
      const run = () => {
        try {
          if (layoutOnly) { finish({page: path, width: width, problems: layout(w, d, width)}); return; }
          const res = inspect(path, w, d, mjMessages);
          res.problems.push(...layout(w, d, width));
          res.problems.push(...figureText(d));
          finish(res);
        }
        catch (e) { finish({page: path, problems: ["checker error: " + e], links: [],
                            resources: [], ids: [], contentLinks: [], external: [], formulas: 0}); }
      };
      await book.mathjaxDone(w, mjMessages);
      run();
    };
    f.src = "/" + path;
    document.body.appendChild(f);
  });
}

// The search journeys: check_site.py drives them in the site's own page, with Chromium's keys
// and mouse (book.browser); these functions say what the page shows at each step.
const SEARCH = {
  box: () => document.getElementById("book-search-results"),
  input: () => document.getElementById("MSearchField"),
  links: () => Array.from(document.querySelectorAll("#book-search-results a")),
};
async function brokenResult(href) {  // why the result link href fails, or ""
  const url = new URL(href);
  const r = await fetch(url.origin + url.pathname);
  if (!r.ok) return "answered " + r.status;
  if (!url.hash) return "";
  const doc = new DOMParser().parseFromString(await r.text(), "text/html");
  return doc.getElementById(decodeURIComponent(url.hash.slice(1))) ? "" : "has no " + url.hash;
}

return {
  // Checks the pages (paths relative to the site) at 1280 px, and every page again at the
  // narrow widths. What it finds goes to window.siteCheck as it comes (progress() reads it after a timeout).
  async checkSite({pages, concurrency, pageTimeoutMs}) {
    const found = window.siteCheck = {results: {}, layout: []};
    const jobs = pages.map(p => [p, WIDE, false]);
    for (const width of NARROW_WIDTHS) for (const p of pages) jobs.push([p, width, true]);
    let next = 0;
    async function worker() {
      while (next < jobs.length) {
        const [path, width, layoutOnly] = jobs[next++];
        const res = await checkPage(path, width, layoutOnly, pageTimeoutMs);
        if (layoutOnly) found.layout.push(...res.problems.map(m => [res.page, m]));
        else found.results[res.page] = res;
      }
    }
    const workers = [];
    for (let i = 0; i < concurrency; i++) workers.push(worker());
    await Promise.all(workers);
    return found;
  },

  // The search box, focused, once the book's search has replaced Doxygen's (on load).
  async searchBox() {
    if (!await book.waitFor(() => SEARCH.box() && SEARCH.input(), 10000)) return false;
    SEARCH.input().focus();
    return document.activeElement === SEARCH.input();
  },

  // The results shown: links (path, hash, title), the box's horizontal extent and the window's width.
  searchResults() {
    const r = SEARCH.box().getBoundingClientRect();
    return {links: SEARCH.links().map(a => {
              const u = new URL(a.href);
              return {href: a.getAttribute("href"), path: u.pathname.replace(/^\//, ""),
                      hash: decodeURIComponent(u.hash.slice(1)),
                      title: a.querySelector("strong").textContent,
                      // a result names its section and, below, its page; a page, only itself
                      section: a.querySelector(".book-search-page").textContent !== "",
                      text: a.textContent};
            }),
            shown: !SEARCH.box().hidden, left: r.left, right: r.right, width: innerWidth};
  },

  async brokenResults() {
    const out = [];
    for (const a of SEARCH.links()) {
      const why = await brokenResult(a.href);
      if (why) out.push("result link " + a.getAttribute("href") + " " + why);
    }
    return out;
  },

  // Where the keyboard is: the index of the focused result, -1 on the query, else what.
  focused() {
    const k = SEARCH.links().indexOf(document.activeElement);
    if (k >= 0) return k;
    const e = document.activeElement;
    return e === SEARCH.input() ? -1 : (e ? e.tagName + (e.id ? "#" + e.id : "") : "nothing");
  },

  // The middle of result k, scrolled into the results' view, for a click.
  resultPoint(k) {
    const a = SEARCH.links()[k];
    a.scrollIntoView({block: "nearest"});
    const r = a.getBoundingClientRect();
    return {x: r.left + Math.min(r.width / 2, 60), y: r.top + Math.min(r.height / 2, 12)};
  },

  // The page a result opened, once MathJax has set it: its path, its #section, and whether
  // that section's heading is on screen and not under anything (a fixed header).
  async landed() {
    await book.mathjaxDone(window, []);
    await book.sleep(100);
    const hash = decodeURIComponent(location.hash.slice(1));
    const out = {path: location.pathname.replace(/^\//, ""), hash: hash, seen: true, why: ""};
    if (!hash) return out;
    const target = document.getElementById(hash);
    if (!target) return Object.assign(out, {seen: false, why: "no element #" + hash});
    // the heading holds the anchor (a chapter's) or follows it (an API page's memtitle)
    const next = target.nextElementSibling;
    const heading = target.closest("h1,h2,h3,h4") ||
                    (next && /^H[1-4]$/.test(next.tagName) ? next : target);
    const r = heading.getBoundingClientRect();
    const hit = document.elementFromPoint(Math.max(1, r.left + 4), r.top + r.height / 2);
    if (r.top < 0 || r.bottom > innerHeight)
      return Object.assign(out, {seen: false, why: "its heading is at y = " +
                                 Math.round(r.top) + " px, off the " + innerHeight + " px window"});
    if (!hit || !heading.contains(hit))
      return Object.assign(out, {seen: false, why: "its heading is under " +
                                 (hit ? hit.tagName + (hit.id ? "#" + hit.id : "") : "nothing")});
    return out;
  },

  progress() { return window.siteCheck || {results: {}, layout: []}; },
};
})()
