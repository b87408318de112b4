// The site check's in-page harness (tests/site/check_site.py), run by book.browser in a blank
// page of the site's own origin (so that it can read the pages' documents): it loads the pages,
// a few at a time, into iframes, waits for MathJax (book.mathjaxDone), inspects each page's DOM
// and returns the findings; the server that serves the site lists the requests answered 404.
(() => {
"use strict";
const NARROW_WIDTHS = [400, 800];
const WIDE = 1280;
const MIN_FIGURE_TEXT_PX = 11;
const PHONE = 400;
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

// Figures: the smallest text a reader sees, font size times the figure's scale on the page,
// for every figure shown at this width (a figure may have a drawing for a phone, shown instead
// of the full one there). On a phone a figure must not be a link to the full-size drawing:
// opened alone on a phone, with no viewport of its own, it shows smaller still.
function figureText(d, width) {
  const out = [];
  for (const o of d.querySelectorAll("div.image object")) {
    const box = o.getBoundingClientRect();
    if (!o.getClientRects().length) continue;  // not shown at this width
    let doc = null;
    try { doc = o.contentDocument; } catch (e) {}
    const svg = doc && doc.documentElement;
    if (!svg || svg.localName !== "svg") {
      if (width < WIDE) out.push("figure " + o.getAttribute("data") + " does not load at " + width + " px");
      continue;
    }
    const drawn = (svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width) ||
                  svg.width.baseVal.value;
    const scale = box.width / drawn;
    let min = Infinity, what = "";
    for (const t of svg.querySelectorAll("text, tspan")) {  // superscripts are smaller tspans
      if (!t.textContent.trim()) continue;
      const px = parseFloat(doc.defaultView.getComputedStyle(t).fontSize) * scale;
      if (px < min) { min = px; what = t.textContent.trim().slice(0, 30); }
    }
    if (min < MIN_FIGURE_TEXT_PX)
      out.push("figure " + o.getAttribute("data") + ": text '" + what + "' is " + min.toFixed(1) +
               " px at " + width + " px (at least " + MIN_FIGURE_TEXT_PX + ")");
    const link = o.closest("a[href]");
    if (width <= PHONE && link && /\.svg$/i.test(new URL(link.href).pathname) &&
        d.defaultView.getComputedStyle(link).pointerEvents !== "none")
      out.push("figure " + o.getAttribute("data") + ": at " + width + " px a tap opens " +
               link.getAttribute("href") + " alone, smaller than on the page");
  }
  return out;
}

// On a phone, a box that scrolls sideways (a formula, code, a table, a figure) must show it
// does: the shadow at its edge that site.css ("Phone") draws, a background that scrolls with
// the content (attachment local) over radial shadows, or (a figure) an edge that fades out.
function scrollCues(w, d, width) {
  const out = [];
  for (const e of d.querySelectorAll("div.contents *")) {
    if (e.clientWidth === 0 || e.scrollWidth <= e.clientWidth + 1) continue;
    const cs = w.getComputedStyle(e);
    if (cs.overflowX !== "auto" && cs.overflowX !== "scroll") continue;
    if (/local/.test(cs.backgroundAttachment) && /radial-gradient/.test(cs.backgroundImage)) continue;
    if (/gradient/.test(cs.webkitMaskImage || cs.maskImage || "")) continue;  // a fading edge
    out.push("at " + width + " px " + e.localName + (e.className ? "." + String(e.className).split(" ")[0] : "") +
             " ('" + (e.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40) + "') scrolls sideways (" +
             e.scrollWidth + " px in " + e.clientWidth + ") with no sign that it does");
    if (out.length >= 5) break;
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
  // ... and reads Chinese as Chinese only inside an element that says so (book.pages.site's
  // chinese_spans); code, headings and links within the book are left out there.
  if (d.body) {
    const walker = d.createTreeWalker(d.body, NodeFilter.SHOW_TEXT);
    let n, seen = 0;
    while ((n = walker.nextNode()) && seen < 3) {
      if (!/[\u3400-\u9fff]/.test(n.data)) continue;
      const p = n.parentElement;
      if (!p || p.closest("pre, code, h1, h2, h3, h4, h5, h6, .title, a.el, script, style, .navpath")) continue;
      const lang = (p.closest("[lang]") || d.documentElement).getAttribute("lang") || "";
      if (!/^zh/.test(lang)) {
        P("Chinese text not marked lang=\"zh\" (a screen reader reads it as " + (lang || "?") +
          "): '" + n.data.trim().slice(0, 30) + "'");
        seen++;
      }
    }
  }
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
    if (!o.getClientRects().length) continue;  // not shown (nor loaded) at this width
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
          if (layoutOnly) {
            const problems = layout(w, d, width);
            problems.push(...figureText(d, width));
            if (width <= PHONE) problems.push(...scrollCues(w, d, width));
            finish({page: path, width: width, problems: problems});
            return;
          }
          const res = inspect(path, w, d, mjMessages);
          res.problems.push(...layout(w, d, width));
          res.problems.push(...figureText(d, width));
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

// The menu, used as a reader uses it, on one chapter's page at a phone's width and at WIDE: the
// menu button clicked where there is one (on a phone), then every chapter and every section
// of this chapter must be a link one can see in it; following a chapter's link opens that
// chapter; and every link of the navigation (the contents tree and Doxygen's menu) leads to a
// page with something in it.
function shown(w, el) {
  const r = el.getBoundingClientRect(), cs = w.getComputedStyle(el);
  return r.width > 0 && r.height > 0 && r.left >= 0 && r.left < w.innerWidth &&
         cs.visibility !== "hidden" && !el.closest("[aria-hidden=true]");
}
function loadFrame(f, src) {
  return new Promise(resolve => { f.onload = () => resolve(); f.src = src; });
}

async function checkMenu(pages, page) {
  if (!page) return [];
  const chapters = pages.filter(p => /^ch\d\d\.html$/.test(p)).sort();
  const out = [];
  const f = document.createElement("iframe");
  f.height = 900;
  document.body.appendChild(f);
  for (const width of [PHONE, WIDE]) {
    f.width = width;
    await loadFrame(f, "/" + page);
    const w = f.contentWindow, d = f.contentDocument;
    const at = "menu at " + width + " px on " + page + ": ";
    const button = d.querySelector("label.main-menu-btn, .main-menu-btn");
    if (button && shown(w, button)) button.click();
    else if (width <= PHONE) { out.push(at + "no menu button to press"); continue; }
    // The tree's links to sections of the page shown are javascript: links that scroll; their
    // class names the target, page:anchor (Doxygen's navtree.js).
    const target = a => {
      if (!/^javascript:/.test(a.getAttribute("href")))
        return new URL(a.href).pathname.replace(/^\//, "") + new URL(a.href).hash;
      return /\.html/.test(a.className) ? a.className.replace(":", "#") : "";
    };
    const links = () => Array.from(d.querySelectorAll("#side-nav a[href], #main-menu a[href]"))
        .filter(a => target(a) && shown(w, a));
    const sections = Array.from(d.querySelectorAll("div.contents h1 > a.anchor[id]"))
        .map(a => page + "#" + a.id);
    const want = chapters.concat(sections);
    await book.waitFor(() => { const got = new Set(links().map(target));
                               return want.every(t => got.has(t)); }, 3000);
    const got = new Set(links().map(target));
    const missing = want.filter(t => !got.has(t));
    if (missing.length)
      out.push(at + "the open menu does not show " + missing.length + " of the " + chapters.length +
               " chapters and " + sections.length + " sections (" + missing.slice(0, 4).join(", ") + ")");
    // every navigation link: a page with text in it
    const navLinks = new Set(Array.from(d.querySelectorAll("#side-nav a[href], #main-menu a[href]"))
        .map(target).filter(t => t).map(t => "/" + t.split("#")[0]).filter(p => p.endsWith(".html")));
    for (const p of navLinks) {
      const r = await fetch(p);
      const doc = new DOMParser().parseFromString(r.ok ? await r.text() : "", "text/html");
      const c = doc.querySelector("div.contents");
      // Doxygen's empty index pages hold one sentence ("Here is a list of all ...")
      const text = c ? c.textContent.replace(/\s+/g, " ").trim() : "";
      if (!r.ok || text.length < 120)
        out.push(at + "the navigation links to " + p + ", an empty page ('" + text.slice(0, 60) + "')");
    }
    // follow the next chapter's link in the menu
    const next = chapters.find(c => c !== page);
    const link = links().find(a => target(a) === next);
    if (link) {
      const landed = new Promise(resolve => { f.onload = () => resolve(); });
      link.click();
      await Promise.race([landed, book.sleep(10000)]);
      const path = new URL(f.contentWindow.location.href).pathname.replace(/^\//, "");
      if (path !== next) out.push(at + "its link to " + next + " opened " + path);
    }
  }
  f.remove();
  return out;
}

return {
  // Checks the pages (paths relative to the site) at 1280 px, and every page again at the
  // narrow widths; menu: the page whose menu is used (checkMenu). What it finds goes to
  // window.siteCheck as it comes (progress() reads it after a timeout).
  async checkSite({pages, menu, concurrency, pageTimeoutMs}) {
    const found = window.siteCheck = {results: {}, layout: [], menu: []};
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
    found.menu = await checkMenu(pages, menu);
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
