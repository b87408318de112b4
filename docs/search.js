// The book's full-text search: every section of every page (search-data.js, written at build
// time by book.pages.search_index), indexed in the browser by lunr (Debian's libjs-lunr). Works
// offline and from file://: both are plain script files, nothing is fetched.
(function () {
  "use strict";
  let index = null;

  // Where words break: spaces, dashes, slashes, brackets, quotes and apostrophes (Performer's:
  // performer, s) and the other punctuation of prose, code and formulas, CJK punctuation too.
  // Not "_" or "." inside a word: d_k, 1.2 and units.hpp stay words, and also give their
  // parts (words(), below).
  const SEPARATOR = /[\s\u200b-\u200d\u2060\ufeff\-\u2010-\u2015\u2212\/\\()\[\]{},;:!?"'`=<>|*\u201c\u201d\u2018\u2019\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]+/u;
  // Chinese, Japanese and Korean are written without spaces: a run of their characters is
  // indexed as its overlapping pairs (今天天气 -> 今天 天天 天气) and its single characters, so
  // that any two or more characters of a run find it, and one character too.
  const CJK_RUN = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)/u;
  // The book's symbols (√ ∞ ∑ ≈ ∈ ...), each also a word of its own: "√" finds √d.
  const SYMBOL = /([^\x00-\x7f\p{L}\p{N}\p{M}\p{P}\p{Z}])/u;
  const PARTS = /([._\u00b7]|[^\x00-\x7f\p{L}\p{N}\p{M}\p{P}\p{Z}])/u;
  const EDGES = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;

  // "Cramer" finds "Cramér": accents folded away; Σ is ∑ (not σ, as lower case would make it).
  function fold(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/\u03a3/g, "\u2211")
               .toLowerCase();
  }

  // A word without what is neither letter, digit nor (in a word with one of the book's
  // symbols) symbol at its ends: "(x," is x, "√d." is √d.
  function trim(word) {
    return SYMBOL.test(word) ? word.replace(/^[^\p{L}\p{N}\p{S}]+|[^\p{L}\p{N}\p{S}]+$/gu, "")
                             : word.replace(EDGES, "");
  }

  // The words of a text, for the index and for a query alike (one function: the two must
  // agree). In the index a word with parts gives them too (softmax_rows: softmax, rows; √d:
  // √, d), and a CJK run its single characters; a query asks for whole words and CJK pairs.
  function words(text, forQuery) {
    const out = [];
    for (const chunk of fold(text).split(SEPARATOR)) {
      chunk.split(CJK_RUN).forEach((piece, k) => {
        if (k % 2) {  // a CJK run (split's captured groups are the odd elements)
          const chars = Array.from(piece);
          if (chars.length === 1 || !forQuery) out.push(...chars);
          for (let i = 0; i + 1 < chars.length; ++i) out.push(chars[i] + chars[i + 1]);
          return;
        }
        const word = trim(piece);
        if (!word) return;
        out.push(word);
        if (forQuery) return;  // the whole word implies its parts
        const parts = word.split(PARTS).map(trim).filter(p => p);
        if (parts.length > 1) out.push(...parts);
      });
    }
    return out;
  }

  function tokenize(text) {
    return text == null ? [] : words(String(text), false).map(w => new lunr.Token(w, {}));
  }

  // The page kinds (book.pages.search_index): chapters first, then the book's other pages,
  // then the API reference; the instructors' pages come after all of them (bookSearch).
  const KIND_BOOST = {chapter: 4, page: 2, reference: 1, instructor: 1};

  function build() {
    if (index || !window.lunr || !window.BOOK_SEARCH_DATA) return index;
    index = lunr(function () {
      this.tokenizer = tokenize;
      this.pipeline.reset();
      this.pipeline.add(lunr.stopWordFilter, lunr.stemmer);
      this.searchPipeline.reset();
      this.searchPipeline.add(lunr.stemmer);
      this.ref("i");
      this.field("s", {boost: 4});   // section title
      this.field("p", {boost: 2});   // page title
      this.field("x");               // text
      window.BOOK_SEARCH_DATA.forEach((d, i) =>
        this.add({i: i, s: d.s, p: d.p, x: d.x}, {boost: KIND_BOOST[d.k] || 1}));
    });
    return index;
  }

  // A query: its words and its phrases (the parts in quotes). lunr's query syntax (+, -, ~,
  // ^, :) is not offered to readers. Words the index left out (lunr's stop words: "least",
  // "the", "why", ...) cannot be required, or "least squares" would find nothing; a query of
  // stop words alone keeps them all.
  function parse(query) {
    const phrases = [];
    query.replace(/["\u201c\u201d]([^"\u201c\u201d]+)["\u201c\u201d]/g, (m, p) => {
      phrases.push(p);
      return "";
    });
    const all = Array.from(new Set(words(query, true)));
    const indexed = all.filter(w => lunr.stopWordFilter(new lunr.Token(w, {})) !== undefined);
    return {words: indexed.length ? indexed : all, phrases: phrases.map(normal),
            text: normal(query.replace(/["\u201c\u201d]/g, " "))};
  }

  // Text as a phrase is looked for in it: folded, one space between words.
  function normal(text) {
    return " " + fold(text).split(SEPARATOR).filter(w => w).join(" ") + " ";
  }
  // A section's heading and its text, normalised once: its heading is the page's title for
  // the part of a page before its first section (its URL has no #anchor).
  const normalised = [];
  function normalOf(i) {
    if (!normalised[i]) {
      const d = window.BOOK_SEARCH_DATA[i];
      const heading = normal(d.u.includes("#") ? d.s : d.p + " " + d.s);
      normalised[i] = {heading: heading, text: heading + normal(d.x)};
    }
    return normalised[i];
  }

  const MAX_RESULTS = 24;
  const MAX_PER_PAGE = 3;  // so that a phrase on many pages lists them all
  // lunr's score (every word's weight in the section; chapters weigh most, KIND_BOOST) is
  // multiplied by these. "Performer" must not be "Performance": lunr finds words by their
  // stem (both are "perform", so either finds the other); a section with the word as the
  // reader wrote it ranks far above one with only its stem.
  const EXACT_BOOST = 10;    // for each word of the query as written
  const PHRASE_BOOST = 30;   // the words of the query together, in order
  const HEADING_BOOST = 5;   // ... in the heading; once more if they are the whole heading

  function score(h, q) {
    const n = normalOf(Number(h.ref));
    if (q.phrases.some(p => !n.text.includes(p))) return 0;  // quoted: only together
    let s = h.score;
    for (const w of q.words) if (n.text.includes(" " + w + " ")) s *= EXACT_BOOST;
    if (q.text.trim().includes(" ") && n.text.includes(q.text)) s *= PHRASE_BOOST;
    if (n.heading.includes(q.text)) s *= HEADING_BOOST;
    if (n.heading === q.text) s *= HEADING_BOOST;
    return s;
  }

  // [{url, page, section, snippet}], best first: sections holding every word of the query
  // (and every phrase in quotes), at most MAX_PER_PAGE of a page.
  window.bookSearch = function (query) {
    if (!build()) return [];
    const q = parse(query);
    if (!q.words.length) return [];
    const hits = index.query(lq => q.words.forEach(w => {
      lq.term(w, {presence: lunr.Query.presence.REQUIRED});
    }));
    const last = i => window.BOOK_SEARCH_DATA[i].k === "instructor" ? 1 : 0;
    const ranked = hits.map(h => ({i: Number(h.ref), score: score(h, q)}))
                       .filter(r => r.score > 0)
                       .sort((a, b) => last(a.i) - last(b.i) || b.score - a.score);
    const perPage = {}, out = [];
    for (const r of ranked) {
      const d = window.BOOK_SEARCH_DATA[r.i], page = d.u.split("#")[0];
      perPage[page] = (perPage[page] || 0) + 1;
      if (perPage[page] > MAX_PER_PAGE) continue;
      out.push({url: d.u, page: d.p, section: d.s, snippet: snippet(d.x, q)});
      if (out.length === MAX_RESULTS) break;
    }
    return out;
  };

  // About 160 characters of the section's text around the first place it has a phrase of the
  // query, or a word (formulas are in the text as text: √d, ∑, ∞).
  function snippet(text, q) {
    const lower = fold(text);
    let at = -1;
    for (const w of q.phrases.concat([q.text]).map(p => p.trim()).concat(q.words)) {
      at = lower.indexOf(w);
      if (at >= 0) break;
    }
    // whole words: from the first space before the match, to the last one within reach
    let start = Math.max(0, at - 60), end = Math.min(text.length, start + 160);
    const space = text.indexOf(" ", start);
    if (start > 0 && space >= 0 && space < at) start = space + 1;
    const last = text.lastIndexOf(" ", end);
    if (end < text.length && last > Math.max(start, at)) end = last;
    return (start > 0 ? "… " : "") + text.slice(start, end) + (end < text.length ? " …" : "");
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
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", "Search results");
    box.hidden = true;
    // Right after the query, so that Tab goes from the query to the results (the box is
    // position: fixed, out of the search box's clipped flow).
    input.after(box);
    // lunr indexes the book when first asked: start when the reader comes to the box.
    input.addEventListener("focus", () => setTimeout(build, 0), {once: true});
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
