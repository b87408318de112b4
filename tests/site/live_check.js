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
