// The book's full-text search: every section of every page (search-data.js, written at build
// time by book.pages.search_index), indexed in the browser by lunr (Debian's libjs-lunr). Works
// offline and from file://: both are plain script files, nothing is fetched.
(function () {
  "use strict";
  let index = null;

  // "Cramér–Rao" is two words; lunr splits only on spaces and hyphens by default.
  const SEPARATOR = /[\s\-\u2010-\u2015/]+/;

  // "Cramer" finds "Cramér": accents are folded away in the index and in the query.
  function fold(token) {
    return token.update(s => s.normalize("NFD").replace(/[\u0300-\u036f]/g, ""));
  }

  function build() {
    if (index || !window.lunr || !window.BOOK_SEARCH_DATA) return index;
    lunr.tokenizer.separator = SEPARATOR;
    lunr.Pipeline.registerFunction(fold, "bookFold");
    index = lunr(function () {
      this.pipeline.before(lunr.stemmer, fold);
      this.searchPipeline.before(lunr.stemmer, fold);
      this.ref("i");
      this.field("s", {boost: 4});   // section title
      this.field("p", {boost: 2});   // page title
      this.field("x");               // text
      this.metadataWhitelist = ["position"];
      window.BOOK_SEARCH_DATA.forEach((d, i) => this.add({i: i, s: d.s, p: d.p, x: d.x}));
    });
    return index;
  }

  // Plain words only: lunr's query syntax (+, -, ~, ^, :) is not offered to readers. Words
  // the index left out (lunr's stop words: "least", "the", "why", ...) cannot be required,
  // or "least squares" would find nothing; a query of stop words alone keeps them all.
  function terms(query) {
    const words = query.toLowerCase().split(SEPARATOR)
      .map(t => t.replace(/[+\-~^:*]/g, "")).filter(t => t.length > 0);
    const indexed = words.filter(w => lunr.stopWordFilter(w) !== undefined);
    return indexed.length ? indexed : words;
  }

  // [{url, page, section, snippet}], best first: sections holding every word of the query.
  window.bookSearch = function (query) {
    if (!build()) return [];
    const words = terms(query);
    if (!words.length) return [];
    const hits = index.query(q => words.forEach(w => {
      q.term(w, {presence: lunr.Query.presence.REQUIRED});
    }));
    return hits.slice(0, 20).map(h => {
      const d = window.BOOK_SEARCH_DATA[Number(h.ref)];
      return {url: d.u, page: d.p, section: d.s, snippet: snippet(d.x, words)};
    });
  };

  function snippet(text, words) {
    const lower = text.toLowerCase();
    let at = -1;
    for (const w of words) {
      at = lower.indexOf(w);
      if (at >= 0) break;
    }
    const start = Math.max(0, at - 60);
    return (start > 0 ? "… " : "") + text.slice(start, start + 160) + " …";
  }

  // The page's way to html/, from this script's own src (../search.js on a source page):
  // links in the results are relative. Not a query for a script named search.js: Doxygen's
  // search/search.js comes first on every page.
  const OWN_SRC = document.currentScript ? document.currentScript.getAttribute("src") : "";
  function relpath() {
    return OWN_SRC.replace(/search\.js$/, "");
  }

  function show(box, input, results, query) {
    box.textContent = "";
    if (!query.trim()) { box.hidden = true; return; }
    if (!results.length) {
      const p = document.createElement("p");
      p.textContent = "No section contains every word of \u201c" + query + "\u201d.";
      box.appendChild(p);
    }
    const base = relpath();
    for (const r of results) {
      const a = document.createElement("a");
      a.href = base + r.url;
      const t = document.createElement("strong");
      t.textContent = r.section ? r.section : r.page;
      const where = document.createElement("span");
      where.className = "book-search-page";
      where.textContent = r.section ? r.page : "";
      const s = document.createElement("span");
      s.className = "book-search-snippet";
      s.textContent = r.snippet;
      a.append(t, where, s);
      box.appendChild(a);
    }
    box.hidden = false;  // shown first: a hidden box has no width to keep inside the window
    const at = input.getBoundingClientRect();
    box.style.left = Math.max(8, Math.min(at.left, window.innerWidth - box.offsetWidth - 8)) + "px";
    box.style.top = (at.bottom + 6) + "px";
  }

  // Doxygen's own search box (the theme styles it) gets this search instead of Doxygen's,
  // which knows only symbol and page names. Doxygen's menu script creates the box on load.
  function attach() {
    const old = document.getElementById("MSearchField");
    if (!old) return false;
    const input = document.createElement("input");
    input.id = "MSearchField";
    input.type = "search";
    input.placeholder = "Search the book";
    input.setAttribute("aria-label", "Search the book's text");
    input.autocomplete = "off";
    old.replaceWith(input);
    const box = document.createElement("div");
    box.id = "book-search-results";
    box.hidden = true;
    document.body.appendChild(box);
    input.addEventListener("input", () =>
      show(box, input, window.bookSearch(input.value), input.value));
    input.addEventListener("keydown", e => {
      if (e.key === "Escape") { input.value = ""; show(box, input, [], ""); }
      if (e.key === "Enter") {
        const first = box.querySelector("a");
        if (first) window.location.href = first.href;
      }
      if (e.key === "ArrowDown") {  // into the results, as in any search box
        const first = box.querySelector("a");
        if (first) { e.preventDefault(); first.focus(); }
      }
    });
    // In the results, the arrow keys move between them (Enter opens one, as any link);
    // Escape, or Up from the first, goes back to the query.
    box.addEventListener("keydown", e => {
      const links = Array.from(box.querySelectorAll("a"));
      const k = links.indexOf(document.activeElement);
      if (k < 0) return;
      if (e.key === "ArrowDown" && k + 1 < links.length) {
        e.preventDefault();
        links[k + 1].focus();
      }
      if (e.key === "ArrowUp") {
        e.preventDefault();
        (k > 0 ? links[k - 1] : input).focus();
      }
      if (e.key === "Escape") { input.focus(); box.hidden = true; }
    });
    document.addEventListener("click", e => {
      if (!box.contains(e.target) && e.target !== input) box.hidden = true;
    });
    return true;
  }

  window.addEventListener("load", () => {
    if (attach()) return;
    let tries = 0;  // the menu may be built a moment after load
    const t = setInterval(() => { if (attach() || ++tries > 40) clearInterval(t); }, 50);
  });
})();
