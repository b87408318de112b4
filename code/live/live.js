/* The live figures' runtime: controls, drawing and numbers around the attn library compiled
 * to WebAssembly (attn-live.js, one file with the wasm inside, so it loads from file://).
 *
 * A chapter's live.js describes each figure with BookLive.define(name, spec); the page has
 * <div class="live-figure" data-widget="name"> where the chapter's Markdown says
 * <!-- live: name -->. Every number comes from live::compute in C++ (code/live/live.hpp):
 * this file only turns controls into a query, and results into SVG and text.
 *
 * spec = {
 *   title:    one line above the figure,
 *   compute:  the C++ name (live::add), called with the controls' values as a query,
 *   controls: [{name, label, value, ...}]  — a slider over `values` (a list) or min/max/step;
 *             type "toggle" (0/1), "select" (options: [[value, label]]), "button" (next:
 *             value => new value, e.g. a new seed or a shuffled order), "fixed" (no control),
 *   draw(view, result, values): draws with BookLive.bars/heatmap/lines (or its own SVG:
 *             BookLive.frame/scale/axes/svg, view.plot(width, height)) and shows numbers with
 *             view.numbers([[label, key, digits]], result) — never computing one itself;
 *             controls it draws itself change values with view.set({name: value}),
 *   program:  [{values, key, results}]: the result's `key` at `values` equals the chapter
 *             program's results.json number `results` (checked by the page test),
 *   checks:   parameter sets the page test (tests/site/check_live.py) runs here and natively.
 * }
 */
var BookLive = (function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const specs = {};
  const mounted = [];
  const scriptBase = document.currentScript ? document.currentScript.src.replace(/[^/]*$/, "") : "";
  let modulePromise = null;

  function loadModule() {
    if (!modulePromise) {
      modulePromise = new Promise(function (resolve, reject) {
        const s = document.createElement("script");
        s.src = scriptBase + "attn-live.js";
        s.onload = function () { AttnLive().then(resolve, reject); };
        s.onerror = function () { reject(new Error("attn-live.js did not load")); };
        document.head.appendChild(s);
      });
    }
    return modulePromise;
  }

  // ---- DOM and SVG helpers ----------------------------------------------------------------
  function html(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function svg(tag, attrs, parent, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  // A number as a reader wants it: `digits` significant digits, a Unicode minus, and powers
  // of ten written out for very small or large magnitudes.
  function format(x, digits) {
    digits = digits || 3;
    if (x === 0) return "0";
    const a = Math.abs(x);
    let s;
    if (a >= 1e-3 && a < 1e5) {
      s = x.toPrecision(digits);
      if (s.indexOf("e") >= 0) s = String(Number(s));  // 10 to one digit: "10", not "1e+1"
      else if (s.indexOf(".") >= 0) s = s.replace(/\.?0+$/, "");
    } else {
      const [m, e] = x.toExponential(digits - 1).split("e");
      s = m + "×10" + String(Number(e)).replace(/-/g, "⁻").replace(/\d/g, function (c) {
        return "⁰¹²³⁴⁵⁶⁷⁸⁹"[c];
      });
    }
    return s.replace(/^-/, "−");
  }

  function lookup(result, key) {
    let v = result;
    for (const part of key.split(".")) v = v[part];
    return v;
  }

  // A number the widget shows: the rounded text, and (for the page test) the key it came
  // from and its full value.
  function number(parent, result, key, digits, tag) {
    const v = lookup(result, key);
    if (typeof v !== "number") throw new Error("live figure: no number '" + key + "' in the result");
    return html(tag || "span", {"class": "live-num", "data-key": key, "data-value": String(v),
                                "data-digits": String(digits || 3)}, parent, format(v, digits));
  }

  // ---- charts (SVG at the container's pixel width, so text keeps its size) ----------------
  function frame(view, height, margin) {
    const width = Math.max(240, view.width());
    const g = view.plot(width, height);
    return {svg: g, width: width, height: height,
            x0: margin.left, x1: width - margin.right, y0: height - margin.bottom, y1: margin.top};
  }
  function scale(lo, hi, a, b, log) {
    if (log) { lo = Math.log10(lo); hi = Math.log10(hi); }
    return function (v) {
      const t = ((log ? Math.log10(v) : v) - lo) / (hi - lo || 1);
      return a + t * (b - a);
    };
  }
  function ticks(lo, hi, log) {
    if (log) {  // decades; every second or third one when there are many
      const out = [], first = Math.ceil(Math.log10(lo) - 1e-9), last = Math.floor(Math.log10(hi) + 1e-9);
      const every = Math.max(1, Math.ceil((last - first + 1) / 7));
      for (let e = first; e <= last; e += every) out.push(Math.pow(10, e));
      return out;
    }
    const step0 = (hi - lo) / 4, mag = Math.pow(10, Math.floor(Math.log10(step0 || 1)));
    const step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; })
      .find(function (s) { return s >= step0; });
    const out = [];
    for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step; v += step) out.push(v);
    return out;
  }
  function axes(f, x, y, xr, yr, o) {
    svg("line", {x1: f.x0, x2: f.x1, y1: f.y0, y2: f.y0, "class": "live-axis"}, f.svg);
    svg("line", {x1: f.x0, x2: f.x0, y1: f.y0, y2: f.y1, "class": "live-axis"}, f.svg);
    if (xr) for (const t of ticks(xr[0], xr[1], o.xlog)) {
      svg("text", {x: x(t), y: f.y0 + 16, "text-anchor": "middle"}, f.svg, o.xlog ? format(t, 1) : format(t, 3));
    }
    for (const t of ticks(yr[0], yr[1], o.ylog)) {
      svg("line", {x1: f.x0, x2: f.x1, y1: y(t), y2: y(t), "class": "live-grid"}, f.svg);
      svg("text", {x: f.x0 - 5, y: y(t) + 4, "text-anchor": "end"}, f.svg, o.ylog ? format(t, 1) : format(t, 3));
    }
    if (o.xlabel) svg("text", {x: (f.x0 + f.x1) / 2, y: f.height - 4, "text-anchor": "middle"}, f.svg, o.xlabel);
    if (o.ylabel) svg("text", {x: f.x0, y: f.y1 - 8, "text-anchor": "start"}, f.svg, o.ylabel);
  }

  // Bars: values[i] over labels[i]; o = {height, ymax, ylabel, highlight: index}.
  function bars(view, values, o) {
    o = o || {};
    const f = frame(view, o.height || 200, {left: 44, right: 8, top: 22, bottom: 36});
    const ymax = o.ymax || Math.max.apply(null, values);
    const y = scale(0, ymax, f.y0, f.y1);
    axes(f, null, y, null, [0, ymax], o);
    const w = (f.x1 - f.x0) / values.length;
    values.forEach(function (v, i) {
      const r = svg("rect", {x: f.x0 + i * w + w * 0.1, width: w * 0.8, y: y(Math.min(v, ymax)),
                             height: f.y0 - y(Math.min(v, ymax)),
                             "class": i === o.highlight ? "live-bar live-bar-hi" : "live-bar"}, f.svg);
      svg("title", {}, r, (o.labels ? o.labels[i] + ": " : "") + format(v, 4));
      if (o.labels && (w >= 20 || i % 2 === 0))
        svg("text", {x: f.x0 + (i + 0.5) * w, y: f.y0 + 14, "text-anchor": "middle"}, f.svg, o.labels[i]);
    });
    if (o.xlabel) svg("text", {x: (f.x0 + f.x1) / 2, y: f.height - 4, "text-anchor": "middle"}, f.svg, o.xlabel);
    return f;
  }

  // Heatmap of a matrix of weights in [0, 1] with its numbers in the cells; o = {rows,
  // cols: labels, key: the result key of the matrix (cells become shown numbers), masked:
  // (i, j) => true for masked cells, digits}.
  function heatmap(view, M, result, o) {
    const n = M.length, m = M[0].length;
    const width = Math.max(240, view.width());
    const left = 44, top = 36;
    const cell = Math.min(56, Math.floor((width - left - 4) / m));
    const g = view.plot(left + cell * m + 4, top + cell * n + 4);
    for (let j = 0; j < m; ++j)
      svg("text", {x: left + (j + 0.5) * cell, y: top - 8, "text-anchor": "middle"}, g, o.cols[j]);
    for (let i = 0; i < n; ++i) {
      svg("text", {x: left - 5, y: top + (i + 0.5) * cell + 4, "text-anchor": "end"}, g, o.rows[i]);
      for (let j = 0; j < m; ++j) {
        const masked = o.masked && o.masked(i, j);
        const v = M[i][j];
        svg("rect", {x: left + j * cell, y: top + i * cell, width: cell - 1, height: cell - 1,
                     "class": masked ? "live-cell live-masked" : "live-cell",
                     style: masked ? "" : "fill-opacity:" + (0.08 + 0.92 * Math.min(1, Math.max(0, v)))}, g);
        const t = svg("text", {x: left + (j + 0.5) * cell, y: top + (i + 0.5) * cell + 4,
                               "text-anchor": "middle", "class": v > 0.55 && !masked ? "live-on-dark" : ""}, g);
        if (masked) { t.textContent = "–"; continue; }
        t.textContent = format(v, o.digits || 2);
        t.setAttribute("class", (t.getAttribute("class") + " live-num live-cell-num").trim());
        if (cell < 52) t.setAttribute("font-size", "11");
        t.setAttribute("data-key", o.key + "." + i + "." + j);
        t.setAttribute("data-value", String(v));
        t.setAttribute("data-digits", String(o.digits || 2));
      }
    }
    return g;
  }

  // Lines: series = [{x: [...], y: [...], label, dashed, points}]; o = {xlog, ylog, xlabel,
  // ylabel, height, marker: x value drawn as a vertical line}.
  function lines(view, series, o) {
    o = o || {};
    const f = frame(view, o.height || 220, {left: 52, right: 10, top: 24, bottom: 38});
    const xs = [].concat.apply([], series.map(function (s) { return s.x; }));
    const ys = [].concat.apply([], series.map(function (s) { return s.y; })).filter(function (v) {
      return !o.ylog || v > 0;
    });
    let xr = o.xrange || [Math.min.apply(null, xs), Math.max.apply(null, xs)];
    let yr = o.yrange || [Math.min.apply(null, ys), Math.max.apply(null, ys)];
    if (o.ylog && !o.yrange) yr = [Math.pow(10, Math.floor(Math.log10(yr[0]))), Math.pow(10, Math.ceil(Math.log10(yr[1])))];
    if (!o.ylog && !o.yrange) { const pad = (yr[1] - yr[0]) * 0.08 || 1; yr = [yr[0] - pad, yr[1] + pad]; }
    const x = scale(xr[0], xr[1], f.x0, f.x1, o.xlog), y = scale(yr[0], yr[1], f.y0, f.y1, o.ylog);
    axes(f, x, y, xr, yr, o);
    series.forEach(function (s, k) {
      let d = "";
      s.x.forEach(function (xv, i) {
        const yv = s.y[i];
        if (o.ylog && !(yv > 0)) return;
        d += (d ? "L" : "M") + x(xv).toFixed(1) + "," + y(Math.min(Math.max(yv, yr[0]), yr[1])).toFixed(1);
        if (s.points) svg("circle", {cx: x(xv), cy: y(yv), r: 3, "class": "live-series-" + k}, f.svg);
      });
      svg("path", {d: d, "class": "live-line live-series-" + k + (s.dashed ? " live-dashed" : "")}, f.svg);
    });
    if (o.marker !== undefined)
      svg("line", {x1: x(o.marker), x2: x(o.marker), y1: f.y0, y2: f.y1, "class": "live-marker"}, f.svg);
    // legend, under the plot as HTML so it wraps on a phone
    const legend = html("div", {"class": "live-legend"}, view.body);
    series.forEach(function (s, k) {
      if (!s.label) return;
      const item = html("span", {}, legend);
      html("span", {"class": "live-swatch live-series-" + k + (s.dashed ? " live-dashed" : "")}, item);
      item.appendChild(document.createTextNode(s.label));
    });
    return {x: x, y: y, frame: f};
  }

  // ---- one widget ---------------------------------------------------------------------------
  function query(values) {
    return Object.keys(values).map(function (k) { return k + "=" + values[k]; }).join("&");
  }

  function mount(root, mod) {
    const name = root.getAttribute("data-widget");
    const spec = specs[name];
    if (!spec) throw new Error("live figure '" + name + "' is not defined (chapters/*/live.js)");
    root.textContent = "";
    html("div", {"class": "live-title"}, root, spec.title);
    const controls = html("div", {"class": "live-controls"}, root);
    const body = html("div", {"class": "live-body", "aria-live": "polite"}, root);
    const foot = html("div", {"class": "live-foot"}, root);
    const values = {}, inputs = {};
    const w = {name: name, root: root, spec: spec, values: values, last: null};

    function redraw() {
      const t0 = performance.now();
      const text = mod.compute(spec.compute, query(values));
      const t1 = performance.now();
      const result = JSON.parse(text);
      body.textContent = "";
      root.setAttribute("data-query", query(values));
      if (result.exercise) {  // the student copy: this figure runs the reader's own code
        html("div", {"class": "live-note"}, body, "This live figure runs your code: " +
             result.error + ". Do the exercise, then ./book again.");
      } else if (result.error) {
        html("div", {"class": "live-error"}, body, "The library refused these parameters: " + result.error);
        console.error("live figure " + name + ": " + result.error);
      } else {
        spec.draw(view, result, values);
      }
      const t2 = performance.now();
      w.last = {query: query(values), json: text, computeMs: t1 - t0, drawMs: t2 - t0};
      foot.textContent = "Computed in your browser by the book's attn library (WebAssembly) in " +
        format(t2 - t0, 2) + " ms.";
      return w.last;
    }
    const view = {
      body: body,
      width: function () { return body.clientWidth || 600; },
      plot: function (width, height) {
        return svg("svg", {width: width, height: height, viewBox: "0 0 " + width + " " + height,
                           "class": "live-plot", role: "img", "aria-label": spec.title}, body);
      },
      numbers: function (list, result) {
        const box = html("div", {"class": "live-numbers"}, body);
        for (const [label, key, digits] of list) {
          const item = html("span", {"class": "live-item"}, box);
          html("span", {"class": "live-label"}, item, label + " ");
          number(item, result, key, digits);
        }
        return box;
      },
      note: function (text) { return html("div", {"class": "live-note"}, body, text); },
      // for controls a chapter draws itself (e.g. token chips): new values, then a redraw
      set: function (newValues) { return w.set(newValues); },
    };

    for (const c of spec.controls) {
      values[c.name] = c.value;
      if (c.type === "fixed") continue;
      const label = html("label", {"class": "live-control"}, controls);
      html("span", {"class": "live-label"}, label, c.label + " ");
      let input, shown = null;
      if (c.type === "toggle") {
        input = html("input", {type: "checkbox"}, label);
        input.checked = !!c.value;
        input.addEventListener("change", function () { values[c.name] = input.checked ? 1 : 0; redraw(); });
        label.insertBefore(input, label.firstChild);
      } else if (c.type === "select") {
        input = html("select", {}, label);
        for (const [v, text] of c.options) html("option", {value: v}, input, text);
        input.value = c.value;
        input.addEventListener("change", function () { values[c.name] = input.value; redraw(); });
      } else if (c.type === "button") {
        input = html("button", {type: "button"}, label, c.button);
        label.removeChild(label.firstChild);
        input.addEventListener("click", function () { values[c.name] = c.next(values[c.name]); redraw(); });
      } else {  // a slider over c.values, or over min..max in steps of c.step
        const list = c.values;
        input = list ? html("input", {type: "range", min: 0, max: list.length - 1, step: 1}, label)
                     : html("input", {type: "range", min: c.min, max: c.max, step: c.step}, label);
        shown = html("output", {}, label);
        const show = function () { shown.textContent = c.show ? c.show(values[c.name]) : format(Number(values[c.name]), 3); };
        input.value = list ? String(list.indexOf(c.value)) : String(c.value);
        input.addEventListener("input", function () {
          values[c.name] = list ? list[Number(input.value)] : Number(input.value);
          show();
          redraw();
        });
        show();
        inputs[c.name + ":show"] = show;
      }
      inputs[c.name] = input;
    }
    // The page test sets values directly (sliders cannot hold every value a check uses).
    w.set = function (newValues) {
      for (const k in newValues) {
        values[k] = newValues[k];
        const input = inputs[k], c = spec.controls.find(function (c) { return c.name === k; });
        if (!input || !c) continue;
        if (c.type === "toggle") input.checked = !!values[k];
        else if (c.type === "select") input.value = values[k];
        else if (c.values && c.values.indexOf(values[k]) >= 0) input.value = String(c.values.indexOf(values[k]));
        else if (!c.values && c.type !== "button") input.value = String(values[k]);
        if (inputs[k + ":show"]) inputs[k + ":show"]();
      }
      return redraw();
    };
    w.redraw = redraw;
    redraw();
    let lastWidth = body.clientWidth;
    window.addEventListener("resize", function () {
      if (body.clientWidth !== lastWidth) { lastWidth = body.clientWidth; redraw(); }
    });
    return w;
  }

  const ready = new Promise(function (resolve) {
    function start() {
      const roots = Array.prototype.slice.call(document.querySelectorAll("div.live-figure"));
      if (!roots.length) { resolve([]); return; }
      loadModule().then(function (mod) {
        for (const root of roots) {
          try {
            mounted.push(mount(root, mod));
          } catch (e) {
            root.textContent = "";
            html("div", {"class": "live-error"}, root, "This live figure failed: " + e.message);
            console.error(e);
          }
        }
        resolve(mounted);
      }, function (e) {
        for (const root of roots) html("div", {"class": "live-error"}, root, "The live figures could not load: " + e.message);
        console.error(e);
        resolve(mounted);
      });
    }
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
  });

  return {
    define: function (name, spec) { specs[name] = spec; },
    specs: specs,
    ready: ready,
    widgets: mounted,
    format: format,
    number: number,
    html: html,
    svg: svg,
    frame: frame,
    scale: scale,
    axes: axes,
    bars: bars,
    heatmap: heatmap,
    lines: lines,
  };
})();
