// The live check's in-page code (tests/site/check_live.py), run by book.browser in a chapter
// page: the page's widgets (BookLive, code/live/live.js), set, timed and measured.
({
  // Every widget, its defaults, checks and program cross-checks, once the widgets are ready.
  widgets() {
    return BookLive.ready.then(ws => ws.map(w => ({
      name: w.name, compute: w.spec.compute,
      controls: w.spec.controls.map(c => c.name),
      defaults: Object.fromEntries(w.spec.controls.map(c => [c.name, c.value])),
      checks: w.spec.checks || [], program: w.spec.program || []})));
  },

  // The names of all widgets live.js defines.
  defined() { return Object.keys(BookLive.specs); },

  // Sets a widget's values: the query, the result and the numbers shown.
  set(name, values) {
    const w = BookLive.widgets.find(w => w.name === name);
    const last = w.set(values);
    const shown = Array.from(w.root.querySelectorAll(".live-num")).map(e => ({
      key: e.dataset.key, value: e.dataset.value, digits: Number(e.dataset.digits),
      text: e.textContent}));
    const err = w.root.querySelector(".live-error");
    // What a screen reader says of each slider (aria-valuetext) and the value shown beside it.
    const sliders = Array.from(w.root.querySelectorAll("input[type=range]")).map(e => ({
      valuetext: e.getAttribute("aria-valuetext"),
      shown: (e.parentElement.querySelector("output") || {}).textContent}));
    return {query: last.query, json: last.json, shown: shown, sliders: sliders,
            error: err && err.textContent};
  },

  // Changes a widget's first slider (or toggle) as a reader does, n times: the time of the
  // input handler, and up to the next painted frame (rAF, then a task after it).
  async time(name, n) {
    const w = BookLive.widgets.find(w => w.name === name);
    const input = w.root.querySelector("input[type=range]") || w.root.querySelector("input");
    const handler = [], frame = [];
    for (let k = 0; k < n; ++k) {
      const t0 = performance.now();
      if (input.type === "range") {
        const lo = Number(input.min), hi = Number(input.max);
        input.value = String(lo + (k * 7919) % (hi - lo + 1));
        input.dispatchEvent(new Event("input"));
      } else {
        input.click();
      }
      const t1 = performance.now();
      await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
      handler.push(t1 - t0);
      frame.push(performance.now() - t0);
    }
    w.set(Object.fromEntries(w.spec.controls.map(c => [c.name, c.value])));
    return {handler: handler, frame: frame};
  },

  // The live figures that are laid out (display is not none, or they have a height).
  shown() {
    return Array.from(document.querySelectorAll("div.live-figure")).filter(e =>
      getComputedStyle(e).display !== "none" || e.getBoundingClientRect().height > 0)
      .map(e => e.dataset.widget);
  },

  // The live figures that do not come right after a static figure (unless their spec says why
  // none fits: `alone`, e.g. an identity the chapter states without a figure).
  misplaced() {
    return Array.from(document.querySelectorAll("div.live-figure")).filter(e =>
      !(e.previousElementSibling && e.previousElementSibling.matches("div.image")) &&
      !(BookLive.specs[e.dataset.widget] && BookLive.specs[e.dataset.widget].alone))
      .map(e => e.dataset.widget);
  },

  // ---- the keyboard walk (check_live.py keyboard_walk) ---------------------------------------
  // What Tab stops at inside root, in document order.
  tabbable(root) {
    return Array.from(root.querySelectorAll("button, input, select, textarea, a[href], [tabindex]"))
      .filter(e => !e.disabled && e.tabIndex >= 0 && e.getClientRects().length);
  },

  // Focuses widget name's first control (as Tab from the text above it would).
  focusFirst(name) {
    const w = BookLive.widgets.find(w => w.name === name);
    w.root.scrollIntoView();
    const first = this.tabbable(w.root)[0];
    if (first) first.focus();
    return !!first;
  },

  // The element that has focus, as seen from widget name: inside it or not, its place among
  // the widget's controls, what it is and shows, and whether a focus ring is drawn.
  focused(name) {
    const w = BookLive.widgets.find(w => w.name === name);
    const e = document.activeElement, controls = this.tabbable(w.root);
    const cs = getComputedStyle(e);
    const out = e.localName === "input" && e.parentElement.querySelector("output");
    return {inWidget: w.root.contains(e) && e !== w.root, index: controls.indexOf(e),
            count: controls.length, tag: e.localName, type: e.type || "",
            what: e.localName + (e.type ? "[" + e.type + "]" : "") + " '" +
                  (e.getAttribute("aria-label") || (e.labels && e.labels[0] || e).textContent ||
                   "").trim().slice(0, 30) + "'",
            value: String(e.value), checked: !!e.checked, shown: out ? out.textContent : null,
            valuetext: e.getAttribute("aria-valuetext"),
            ring: e.matches(":focus-visible") &&
                  ((cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0) ||
                   cs.boxShadow !== "none")};
  },

  // Focuses widget name's control at index (the walk goes on after focus was lost).
  focusAt(name, index) {
    const w = BookLive.widgets.find(w => w.name === name);
    const e = this.tabbable(w.root)[index];
    if (e) e.focus();
  },

  // Marks the element Tab must reach next: the first one after the focused element in
  // document order that Tab stops at.
  expectNext() {
    for (const e of document.querySelectorAll("[data-expect-focus]")) e.removeAttribute("data-expect-focus");
    const a = document.activeElement;
    const next = this.tabbable(document).find(e =>
      a.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING && !a.contains(e));
    if (next) next.setAttribute("data-expect-focus", "");
    return next ? next.localName + " '" + (next.textContent || "").trim().slice(0, 30) + "'" : null;
  },

  // Whether focus is on the element expectNext marked.
  atExpected() { return document.activeElement.hasAttribute("data-expect-focus"); },

  // A widget's height on the page.
  height(name) {
    return BookLive.widgets.find(w => w.name === name).root.getBoundingClientRect().height;
  },

  // Scrolls a widget into view: its box in page coordinates.
  box(name) {
    const e = BookLive.widgets.find(w => w.name === name).root;
    e.scrollIntoView();
    const r = e.getBoundingClientRect();
    return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height};
  },
})
