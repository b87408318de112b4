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
 *             value => new value, e.g. a shuffled order), "seed" (a button that draws anew:
 *             value + 1), "fixed" (no control),
 *   draw(view, result, values): draws with the charts below and shows numbers with
 *             view.numbers([[label, key, digits]], result) (or phrases, see view.numbers) —
 *             never computing one itself;
 *             view.note(text) adds a grey line; controls it draws itself change values with
 *             view.set({name: value}) (a redraw follows),
 *   program:  [{values, key, results}]: the result's `key` at `values` equals the chapter
 *             program's results.json number `results` (checked by the page test),
 *   checks:   parameter sets the page test (tests/site/check_live.py) runs here and natively,
 *   alone:    (rare) why the figure does not follow a static figure; otherwise the test
 *             wants its marker right after the caption of the figure it animates.
 * }
 *
 * Charts (one helper for each kind; each draws at the figure's width into view.body, or into
 * o.parent at o.width, and returns its scales, frame and legend items):
 *   BookLive.bars(view, series, o)        bars over "1".."n" (or o.labels, thinned to fit):
 *       series an array of numbers or up to two [{values, label, color}] side by side;
 *       negative values hang from a zero line; o.highlight (an orange bar), o.reference (a
 *       dotted line such as 1/n, o.referenceLabel), o.ymin/ymax, xlabel, ylabel, height.
 *   BookLive.heatmap(view, M, result, o)  a matrix; o.color "weights" ([0, 1]), "signed"
 *       (blue/red by |v|/o.scale) or "scaled" (v/o.scale); o.key: the result's matrix
 *       written in the cells as shown numbers (o.digits, o.approxZero: "≈0" below it); o.masked;
 *       o.rows/cols labels or o.rowTicks/colTicks; o.dense maps (no gaps, no text);
 *       o.maxCell, o.minCell, o.aspect, o.maxHeight.
 *   BookLive.lines(view, series, o)       curves [{x, y, label, color, dashed, points,
 *       lineless, stems, defined, opacity}]; o.xlog/ylog, xrange/yrange, xticks/yticks,
 *       o.yfloor, o.marker (a dotted vertical line), xlabel, ylabel, height.
 *   BookLive.legend(view, items)          the legend all three draw (o.legend: false to move it).
 * Details above each function. Low level, for a figure none of these fits:
 * BookLive.frame/scale/axes/svg/html, view.plot(width, height, parent).
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

  // ---- charts: SVG at the container's pixel width, so text keeps its size -----------------
  // The width of a text in px at `size` (estimated: the SVG is built before it is laid out).
  function textWidth(s, size) {
    let em = 0;
    for (const c of String(s)) {
      if (c >= "0" && c <= "9") em += 0.64;
      else if (".,:;|!ijlt ()[]'".indexOf(c) >= 0) em += 0.34;
      else if ("⁰¹²³⁴⁵⁶⁷⁸⁹⁻ᵢⱼₚ".indexOf(c) >= 0) em += 0.42;
      else if ("−×≈+=<>–mwMW".indexOf(c) >= 0 || (c >= "A" && c <= "Z")) em += 0.8;
      else em += 0.6;
    }
    return em * (size || 12);
  }
  function widest(texts, size) {
    return texts.reduce(function (w, t) { return Math.max(w, textWidth(t, size)); }, 0);
  }
  // The smallest step of labels (every 1st, 2nd, 5th, ...) that keeps `need` px per label.
  function thin(space, need) {
    return [1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 500, 1000].find(function (e) {
      return e * space >= need;
    }) || 1000;
  }

  // Colours: a series index k (class live-series-k: 0 blue, 1 orange, 2 green, 3 purple) or
  // "muted" (grey, for data behind a curve); `opacity` fades a mark.
  function paint(attrs, color, cls, opacity) {
    let c = cls || "", style = "";
    if (typeof color === "number") c += " live-series-" + color;
    else if (color === "muted") c += " live-muted";
    if (opacity !== undefined) style += " opacity: " + opacity + ";";
    if (c.trim()) attrs["class"] = c.trim();
    if (style) attrs.style = style.trim();
    return attrs;
  }

  // One legend for every chart, under it as HTML so it wraps on a phone: items = [{label,
  // kind: "line" | "dashed" | "point" | "bar" | "marker", color, cls, opacity}], each swatch
  // drawn with the chart's own classes.
  function legend(view, items, parent) {
    items = items.filter(function (e) { return e.label; });
    if (!items.length) return null;
    const box = html("div", {"class": "live-legend"}, parent || view.body);
    for (const e of items) {
      const item = html("span", {}, box);
      const g = svg("svg", {width: 22, height: 12, "aria-hidden": "true",
                            style: "vertical-align: middle; margin-right: 0.35em"}, item);
      if (e.kind === "bar") svg("rect", paint({x: 5, y: 1, width: 12, height: 10}, e.color, e.cls || "live-bar", e.opacity), g);
      else if (e.kind === "point") svg("circle", paint({cx: 11, cy: 6, r: 4}, e.color, e.cls, e.opacity), g);
      else if (e.kind === "marker") svg("line", {x1: 1, x2: 21, y1: 6, y2: 6, "class": "live-marker"}, g);
      else svg("line", paint({x1: 1, x2: 21, y1: 6, y2: 6}, e.color,
                             "live-line" + (e.kind === "dashed" ? " live-dashed" : ""), e.opacity), g);
      item.appendChild(document.createTextNode(e.label));
    }
    return box;
  }

  // A plot area: o.parent / o.width draw it into another element (one of two panels) at
  // another width than the figure's.
  function frame(view, height, margin, o) {
    o = o || {};
    const width = Math.max(240, o.width || view.width());
    const g = view.plot(width, height, o.parent);
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
  // The label of the decade 10^e: "0.01" .. "10000", else "10⁻⁶".
  function decade(e) {
    if (e >= -2 && e <= 4) return format(Math.pow(10, e), 1);
    return "10" + String(e).replace(/-/g, "⁻").replace(/\d/g, function (c) { return "⁰¹²³⁴⁵⁶⁷⁸⁹"[c]; });
  }
  // Linear ticks (about five round numbers), or the decades of a log axis (at most seven).
  function ticks(lo, hi, log) {
    if (log) {
      const out = [], first = Math.ceil(Math.log10(lo) - 1e-9), last = Math.floor(Math.log10(hi) + 1e-9);
      const every = Math.max(1, Math.ceil((last - first + 1) / 7));
      for (let e = first; e <= last; e += every) out.push(Math.pow(10, e));
      return out;
    }
    // the smallest round step with at most five and a half steps over the range, so that a
    // range through 0 gets a tick on each side (−0.98 .. 1.05: −0.5, 0, 0.5, 1)
    const range = hi - lo || 1, mag = Math.pow(10, Math.floor(Math.log10(range / 5)));
    const step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; })
      .find(function (s) { return range / s <= 5.5; });
    const out = [];
    for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step; v += step) out.push(Math.abs(v) < 1e-9 * step ? 0 : v);
    return out;
  }
  // [[value, text]] of an axis: given ticks (values or [value, text]), or automatic ones,
  // every second one when they would come closer than 18 px on `pixels`.
  function tickList(given, range, log, pixels) {
    if (given) return given.map(function (t) { return Array.isArray(t) ? t : [t, format(t, 6)]; });
    if (!range) return [];
    const out = ticks(range[0], range[1], log).map(function (t) {
      return [t, log ? decade(Math.round(Math.log10(t))) : format(t, 3)];
    });
    return pixels && out.length > 2 && pixels / (out.length - 1) < 18
      ? out.filter(function (t, i) { return i % 2 === 0; }) : out;
  }
  // A log axis over [lo, hi] widened to labelled decades, every step-th labelled so that at
  // most `most` labels show: [[value, text]].
  function decades(lo, hi, most) {
    const e0 = Math.floor(Math.log10(lo) + 1e-9);
    let e1 = Math.ceil(Math.log10(hi) - 1e-9);
    if (e1 <= e0) e1 = e0 + 1;
    let step = 1, a, b;
    for (;;) {
      a = Math.floor(e0 / step) * step;
      b = Math.ceil(e1 / step) * step;
      if ((b - a) / step + 1 <= most) break;
      ++step;
    }
    const out = [];
    for (let e = a; e <= b; e += step) out.push([Math.pow(10, e), decade(e)]);
    return out;
  }
  // Axis lines, grid and labels; ticks from o.xticks / o.yticks or automatic over xr / yr.
  function axes(f, x, y, xr, yr, o) {
    o = o || {};
    for (const [v, text] of tickList(o.yticks, yr, o.ylog)) {
      svg("line", {x1: f.x0, x2: f.x1, y1: y(v), y2: y(v), "class": "live-grid"}, f.svg);
      svg("text", {x: f.x0 - 5, y: y(v) + 4, "text-anchor": "end"}, f.svg, text);
    }
    if (x) for (const [v, text] of tickList(o.xticks, xr, o.xlog))
      svg("text", {x: x(v), y: f.y0 + 16, "text-anchor": "middle"}, f.svg, text);
    svg("line", {x1: f.x0, x2: f.x1, y1: f.y0, y2: f.y0, "class": "live-axis"}, f.svg);
    svg("line", {x1: f.x0, x2: f.x0, y1: f.y0, y2: f.y1, "class": "live-axis"}, f.svg);
    if (o.xlabel) svg("text", {x: (f.x0 + f.x1) / 2, y: f.height - 4, "text-anchor": "middle"}, f.svg, o.xlabel);
    if (o.ylabel) svg("text", {x: f.x0, y: f.y1 - 8, "text-anchor": "start"}, f.svg, o.ylabel);
  }

  // Bars: one series (an array of numbers) or two side by side ([{values, label, color}]).
  // o = {labels (default "1".."n", thinned to fit, at most 16), highlight: index of an orange bar,
  //      ymin, ymax (default: the values, 0 and the reference, 5% beyond),
  //      reference: y of a dotted line (e.g. 1/n), referenceLabel (its legend entry),
  //      xlabel, ylabel, height, legend: false (draw the returned .legend yourself), left: the
  //      left margin at least (px; to align two panels), parent, width}.
  // Series 0 is blue, series 1 orange (live-bar, live-bar-hi) unless `color` names a series
  // colour; negative values hang from a zero line.
  function bars(view, series, o) {
    o = o || {};
    if (typeof series[0] === "number") series = [{values: series}];
    const n = series[0].values.length;
    const labels = o.labels || series[0].values.map(function (v, i) { return String(i + 1); });
    let lo = 0, hi = 0;
    for (const s of series) for (const v of s.values) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (o.reference !== undefined) hi = Math.max(hi, o.reference);
    const ymin = o.ymin !== undefined ? o.ymin : lo * 1.05;
    const ymax = o.ymax !== undefined ? o.ymax : (hi * 1.05 || 1);
    const top = o.ylabel ? 22 : 10, bottom = o.xlabel ? 36 : 22;
    const yt = tickList(o.yticks, [ymin, ymax], false, (o.height || 200) - top - bottom);
    const f = frame(view, o.height || 200, {left: Math.max(o.left || 30, widest(yt.map(function (t) { return t[1]; })) + 10),
                                             right: 8, top: top, bottom: bottom}, o);
    const y = scale(ymin, ymax, f.y0, f.y1);
    axes(f, null, y, null, null, {yticks: yt, xlabel: o.xlabel, ylabel: o.ylabel});
    const w = (f.x1 - f.x0) / n, zero = y(Math.min(ymax, Math.max(ymin, 0)));
    if (ymin < 0) svg("line", {x1: f.x0, x2: f.x1, y1: zero, y2: zero, "class": "live-axis"}, f.svg);
    const width = series.length > 1 ? 0.38 : 0.8;
    const items = [];
    series.forEach(function (s, k) {
      const cls = s.color !== undefined ? "live-bar live-series-" + s.color : k ? "live-bar live-bar-hi" : "live-bar";
      s.values.forEach(function (v, i) {
        const yv = y(Math.min(ymax, Math.max(ymin, v)));
        const r = svg("rect", {x: f.x0 + (i + 0.1 + 0.4 * k) * w, width: w * width, y: Math.min(yv, zero),
                               height: Math.abs(zero - yv), style: "stroke: none",
                               "class": i === o.highlight ? "live-bar live-bar-hi" : cls}, f.svg);
        svg("title", {}, r, labels[i] + (s.label ? ", " + s.label : "") + ": " + format(v, 4));
      });
      items.push({label: s.label, kind: "bar", cls: cls});
    });
    const every = thin(w, Math.max(widest(labels) + 6, (f.x1 - f.x0) / 16));  // 16 labels at most
    labels.forEach(function (l, i) {
      if (every !== 1 && (i + 1) % every !== 0) return;
      const x = f.x0 + (i + 0.5) * w, out = x + textWidth(l) / 2 > f.width - 1;  // the last one
      svg("text", {x: out ? f.width - 1 : x, y: f.y0 + 14, "text-anchor": out ? "end" : "middle"}, f.svg, l);
    });
    if (o.reference !== undefined) {
      svg("line", {x1: f.x0, x2: f.x1, y1: y(o.reference), y2: y(o.reference), "class": "live-marker"}, f.svg);
      items.push({label: o.referenceLabel, kind: "marker"});
    }
    if (o.legend !== false) legend(view, items, o.parent);
    return {x: function (i) { return f.x0 + (i + 0.5) * w; }, y: y, frame: f, legend: items};
  }

  // Heatmap of a matrix M (rows × columns); o = {
  //   color:  "weights" (default: M in [0, 1]), "signed" (blue positive, red negative, by
  //           |v| / o.scale) or "scaled" (by v / o.scale, e.g. the result's largest weight);
  //           the scale only shades, it is the result's own number,
  //   key:    the result's matrix written in the cells as shown numbers (it may differ from
  //           M: the same weights in percent); digits: a number or v => number (default 2);
  //           approxZero: |v| below it is written "≈0" (plain text; the tooltip has it);
  //           unit: after the tooltip's number,
  //   masked: (i, j) => true: a grey cell, "–",
  //   rows, cols: labels (thinned when cells are small), or rowTicks, colTicks: sparse
  //           [[index, text]] (fractional index: between cells); xlabel (under the map, with
  //           the column labels), ylabel (rotated, at the left),
  //   dense:  cells fill the width without gaps, no text; near-zero cells stay white,
  //   aspect: a cell's height / width (1), maxCell (56 px), minCell (8 px), maxHeight: the
  //           cells' total height at most (px), parent, width}.
  // Cell texts are 12 px in cells of 44 px and more, else 11 px; cells under 30 px, or too
  // narrow for their number, show none (their tooltip has it).
  function heatmap(view, M, result, o) {
    o = o || {};
    const n = M.length, m = M[0].length, mode = o.color || "weights";
    const T = o.key ? lookup(result, o.key) : null;
    const width = Math.max(240, o.width || view.width());
    const rowText = o.rows ? o.rows.map(String) : (o.rowTicks || []).map(function (t) { return t[1]; });
    const colText = o.cols ? o.cols.map(String) : (o.colTicks || []).map(function (t) { return t[1]; });
    const left = (rowText.length ? widest(rowText) + 10 : 4) + (o.ylabel ? 18 : 0);
    const below = !!o.xlabel, top = colText.length && !below ? 22 : 6, bottom = below ? 36 : 4;
    const aspect = o.aspect || 1, sc = o.scale || M.reduce(function (a, row) {
      return row.reduce(function (b, v) { return Math.max(b, Math.abs(v)); }, a);
    }, 0) || 1;
    let cw = Math.min(o.maxCell || 56, (width - left - 4) / m);
    if (!o.dense) cw = Math.floor(cw);
    let ch = Math.max(o.minCell || 8, Math.min(cw * aspect, (o.maxHeight || Infinity) / n));
    if (!o.dense) { ch = Math.floor(ch); cw = Math.round(ch / aspect); }
    const g = view.plot(o.dense ? width : left + cw * m + 4, top + ch * n + bottom, o.parent);
    // labels
    const small = Math.min(cw, ch) < 18 && (o.rows || o.cols), fs = small ? "10" : "12";
    const every = thin(Math.min(cw, ch), Math.max(small ? 14 : 17, widest(colText, small ? 10 : 12) + 4));
    const shown = function (i) { return every === 1 || (i + 1) % every === 0; };
    const colY = below ? top + n * ch + 15 : top - 7;
    const colLabel = function (at, text) {
      let x = left + (at + 0.5) * cw, anchor = "middle";
      const half = textWidth(text) / 2;
      if (x + half > left + m * cw + 2) { x = left + m * cw; anchor = "end"; }
      if (x - half < left - 2) { x = left; anchor = "start"; }
      svg("text", {x: x, y: colY, "text-anchor": anchor, "font-size": fs}, g, text);
    };
    const rowLabel = function (at, text) {
      svg("text", {x: left - 5, y: top + (at + 0.5) * ch + 4, "text-anchor": "end", "font-size": fs}, g, text);
    };
    if (o.cols) o.cols.forEach(function (t, j) { if (shown(j)) colLabel(j, String(t)); });
    else (o.colTicks || []).forEach(function (t) { colLabel(t[0], t[1]); });
    if (o.rows) o.rows.forEach(function (t, i) { if (shown(i)) rowLabel(i, String(t)); });
    else (o.rowTicks || []).forEach(function (t) { rowLabel(t[0], t[1]); });
    if (o.xlabel) svg("text", {x: left + m * cw / 2, y: top + n * ch + 31, "text-anchor": "middle"}, g, o.xlabel);
    if (o.ylabel) svg("text", {x: 12, y: top + n * ch / 2, "text-anchor": "middle",
                               transform: "rotate(-90 12 " + (top + n * ch / 2) + ")"}, g, o.ylabel);
    if (o.dense) svg("rect", {x: left, y: top, width: m * cw, height: n * ch, style: "fill: none; stroke: var(--rule)"}, g);
    // cells
    const gap = o.dense ? -0.3 : 1, writes = !o.dense && Math.min(cw, ch) >= 30, texts = [];
    for (let i = 0; i < n; ++i) {
      for (let j = 0; j < m; ++j) {
        const v = M[i][j], masked = o.masked && o.masked(i, j);
        const s = mode === "signed" ? Math.min(1, Math.abs(v) / sc)
                : Math.min(1, Math.max(0, mode === "scaled" ? v / sc : v));
        const cell = {x: left + j * cw, y: top + i * ch, width: cw - gap, height: ch - gap};
        if (masked) cell["class"] = "live-cell live-masked";
        else if (o.dense && s < 0.004) continue;
        else if (mode === "signed") { cell["class"] = v < 0 ? "live-cell live-neg" : "live-cell live-pos"; cell["fill-opacity"] = (0.04 + 0.96 * s).toFixed(3); }
        else { cell["class"] = "live-cell"; cell.style = "fill-opacity:" + (o.dense ? s : 0.08 + 0.92 * s).toFixed(3); }
        const rect = svg("rect", cell, g);
        if (o.dense) continue;
        const tv = T ? T[i][j] : v;
        svg("title", {}, rect, (o.rows ? o.rows[i] : i + 1) + " → " + (o.cols ? o.cols[j] : j + 1) + ": " +
            (masked ? "masked" : format(tv, 4) + (o.unit || "")));
        if (!writes || (!T && !masked)) continue;
        const digits = typeof o.digits === "function" ? o.digits(tv) : (o.digits || 2);
        const zero = !masked && o.approxZero && Math.abs(tv) < o.approxZero;
        texts.push({i: i, j: j, v: tv, digits: digits, dark: s > 0.55, number: !masked && !zero,
                    text: masked ? "–" : zero ? "≈0" : format(tv, digits)});
      }
    }
    // 12 px in large cells, else 11 px (the site's smallest figure text); a text too long
    // for its cell at that size is left out (the cell's tooltip has the value)
    const size = Math.min(cw, ch) >= 44 ? 12 : 11;
    const written = texts.filter(function (e) { return textWidth(e.text, size) <= cw - 3; });
    for (const e of written) {
      const t = svg("text", {x: left + (e.j + 0.5) * cw, y: top + (e.i + 0.5) * ch + size * 0.35,
                             "text-anchor": "middle", "font-size": String(size), "pointer-events": "none"}, g, e.text);
      if (!e.number) continue;
      t.setAttribute("class", "live-num live-cell-num" + (e.dark ? " live-on-dark" : ""));
      t.setAttribute("data-key", o.key + "." + e.i + "." + e.j);
      t.setAttribute("data-value", String(e.v));
      t.setAttribute("data-digits", String(e.digits));
    }
    return g;
  }

  // Lines: series = [{x, y, label, color (a series colour index, default the series' place,
  //   or "muted"), dashed, points: true or a radius, lineless (points only: e.g. one point,
  //   the current setting), stems (vertical lines from 0 to each y), defined: [1 or 0] (0
  //   leaves a gap, or hides the point), opacity}];
  // o = {xlog, ylog, xrange, yrange, xticks, yticks ([value] or [[value, text]]),
  //   yfloor: a log axis goes no lower than this decade, and values below it (zeros too) sit
  //   on the axis' floor instead of leaving gaps, xlabel, ylabel, height, marker: x of a
  //   dotted vertical line, legend: false (draw the returned .legend yourself), left: the
  //   left margin at least (px; to align the x axes of two panels), parent, width}.
  // A log axis labels at most seven decades (fewer on a short plot); without yfloor values
  // <= 0 leave gaps on it.
  function lines(view, series, o) {
    o = o || {};
    const height = o.height || 220, top = o.ylabel ? 22 : 12, bottom = o.xlabel ? 36 : 24;
    const on = function (s, i) { return !s.defined || s.defined[i]; };
    const xs = [], ys = [];
    for (const s of series) s.x.forEach(function (xv, i) { if (on(s, i)) { xs.push(xv); ys.push(s.y[i]); } });
    const min = function (a) { return a.reduce(function (p, v) { return Math.min(p, v); }, Infinity); };
    const max = function (a) { return a.reduce(function (p, v) { return Math.max(p, v); }, -Infinity); };
    const xr = o.xrange || [min(xs), max(xs)];
    let yr = o.yrange, yt;
    if (o.ylog) {
      const pos = ys.filter(function (v) { return v > 0; });
      let lo = yr ? yr[0] : pos.length ? min(pos) : (o.yfloor || 0.1);
      let hi = yr ? yr[1] : pos.length ? max(pos) : 1;
      if (o.yfloor) { lo = Math.max(lo, o.yfloor); hi = Math.max(hi, lo); }
      yt = decades(lo, hi, Math.min(7, Math.floor((height - top - bottom) / 22) + 1));
      yr = [yt[0][0], yt[yt.length - 1][0]];
      if (o.yticks) yt = tickList(o.yticks);
    } else {
      if (!yr) { const pad = (max(ys) - min(ys)) * 0.08 || 1; yr = [min(ys) - pad, max(ys) + pad]; }
      yt = tickList(o.yticks, yr, false, height - top - bottom);
    }
    const xt = tickList(o.xticks, xr, o.xlog);
    const f = frame(view, height, {left: Math.max(o.left || 30, widest(yt.map(function (t) { return t[1]; })) + 10),
                                   right: Math.max(10, xt.length ? textWidth(xt[xt.length - 1][1]) / 2 + 2 : 0),
                                   top: top, bottom: bottom}, o);
    const x = scale(xr[0], xr[1], f.x0, f.x1, o.xlog), y = scale(yr[0], yr[1], f.y0, f.y1, o.ylog);
    axes(f, x, y, null, null, {xticks: xt, yticks: yt, xlabel: o.xlabel, ylabel: o.ylabel});
    if (o.marker !== undefined)
      svg("line", {x1: x(o.marker), x2: x(o.marker), y1: f.y0, y2: f.y1, "class": "live-marker"}, f.svg);
    const Y = function (v) { return y(Math.min(Math.max(o.ylog && !(v > 0) ? yr[0] : v, yr[0]), yr[1])); };
    const items = [];
    series.forEach(function (s, k) {
      const color = s.color !== undefined ? s.color : k;
      const ok = function (i) { return on(s, i) && (!o.ylog || o.yfloor || s.y[i] > 0); };
      if (s.stems) {
        const base = o.ylog ? f.y0 : Y(0);
        s.x.forEach(function (xv, i) {
          if (!ok(i) || s.y[i] === 0) return;
          const l = svg("line", paint({x1: x(xv), x2: x(xv), y1: base, y2: Y(s.y[i])}, color, "live-line", s.opacity), f.svg);
          svg("title", {}, l, format(xv, 3) + ": " + format(s.y[i], 3));
        });
      } else if (!s.lineless) {
        let d = "", pen = false;
        s.x.forEach(function (xv, i) {
          if (!ok(i)) { pen = false; return; }
          d += (pen ? "L" : "M") + x(xv).toFixed(1) + "," + Y(s.y[i]).toFixed(1);
          pen = true;
        });
        svg("path", paint({d: d}, color, "live-line" + (s.dashed ? " live-dashed" : ""), s.opacity), f.svg);
      }
      if (s.points || s.lineless) {
        const r = typeof s.points === "number" ? s.points : s.lineless ? 5 : 3;
        s.x.forEach(function (xv, i) {
          if (ok(i)) svg("circle", paint({cx: x(xv), cy: Y(s.y[i]), r: r}, color, "", s.opacity), f.svg);
        });
      }
      items.push({label: s.label, color: color, opacity: s.opacity,
                  kind: s.lineless ? "point" : s.dashed ? "dashed" : "line"});
    });
    if (o.legend !== false) legend(view, items, o.parent);
    return {x: x, y: y, frame: f, legend: items};
  }

  // ---- one widget ---------------------------------------------------------------------------
  // Controls a figure draws itself (token chips, "as Fig. 3.2") are drawn anew on every
  // redraw, which removes the one that has focus: a keyboard reader would be thrown back to
  // the top of the page. The control at the same place in the new drawing takes focus
  // instead (the nearest that can, when that one is now disabled; else the figure itself).
  const FOCUSABLE = "button, input, select, textarea, a[href], [tabindex]";
  function focusedControl(body) {
    const all = Array.prototype.slice.call(body.querySelectorAll(FOCUSABLE));
    return all.indexOf(document.activeElement);
  }
  function refocus(body, index) {
    if (index < 0) return;
    const all = Array.prototype.slice.call(body.querySelectorAll(FOCUSABLE));
    const order = all.map(function (e, k) { return k; }).sort(function (a, b) {
      return Math.abs(a - index) - Math.abs(b - index) || b - a;  // a tie: the next one
    });
    for (const k of order) {
      all[k].focus();
      if (document.activeElement === all[k]) return;
    }
    body.parentNode.focus();
  }

  function query(values) {
    return Object.keys(values).map(function (k) { return k + "=" + values[k]; }).join("&");
  }

  function mount(root, mod) {
    const name = root.getAttribute("data-widget");
    const spec = specs[name];
    if (!spec) throw new Error("live figure '" + name + "' is not defined (chapters/*/live.js)");
    root.textContent = "";
    root.setAttribute("tabindex", "-1");  // where focus goes when its control is gone (refocus)
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
      const focused = focusedControl(body);
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
      refocus(body, focused);
      const t2 = performance.now();
      w.last = {query: query(values), json: text, computeMs: t1 - t0, drawMs: t2 - t0};
      foot.textContent = "Computed in your browser by the book's attn library (WebAssembly) in " +
        format(t2 - t0, 2) + " ms.";
      return w.last;
    }
    const view = {
      body: body,
      width: function () { return body.clientWidth || 600; },
      plot: function (width, height, parent) {
        return svg("svg", {width: width, height: height, viewBox: "0 0 " + width + " " + height,
                           "class": "live-plot", role: "img", "aria-label": spec.title}, parent || body);
      },
      // items: [label, key, digits], or a phrase kept on one line, [text or [key, digits], ...]
      // ("entropy ", ["entropy", 3], " nats (at most log 16 = ", ["log_n", 3], ")")
      numbers: function (list, result) {
        const box = html("div", {"class": "live-numbers"}, body);
        for (const entry of list) {
          const labelled = typeof entry[1] === "string" && typeof entry[2] === "number";
          const item = html("span", labelled ? {"class": "live-item"}
                                             : {"class": "live-item", style: "white-space: nowrap"}, box);
          const parts = labelled ? [entry[0] + " ", [entry[1], entry[2]]] : entry;
          for (const part of parts) {
            if (typeof part === "string") html("span", {"class": "live-label"}, item, part);
            else number(item, result, part[0], part[1]);
          }
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
      // A button is named by its own text: inside a <label> it would be named by the label,
      // which has none.
      const plain = c.type === "button" || c.type === "seed";
      const label = html(plain ? "span" : "label", {"class": "live-control"}, controls);
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
      } else if (c.type === "button" || c.type === "seed") {
        input = html("button", {type: "button"}, label, c.button);
        label.removeChild(label.firstChild);
        const next = c.type === "seed" ? function (v) { return v + 1; } : c.next;
        input.addEventListener("click", function () { values[c.name] = next(values[c.name]); redraw(); });
      } else {  // a slider over c.values, or over min..max in steps of c.step
        const list = c.values;
        input = list ? html("input", {type: "range", min: 0, max: list.length - 1, step: 1}, label)
                     : html("input", {type: "range", min: c.min, max: c.max, step: c.step}, label);
        shown = html("output", {}, label);
        const show = function () {  // whole numbers in full (1024, not 1020)
          const v = Number(values[c.name]);
          shown.textContent = c.show ? c.show(values[c.name])
            : format(v, Number.isInteger(v) ? Math.max(3, String(Math.abs(v)).length) : 3);
          // A screen reader announces the value shown, not the slider's position in a list
          // (d = 64, not "6").
          input.setAttribute("aria-valuetext", (c.label ? c.label + " = " : "") + shown.textContent);
        };
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
        else if (!c.values && c.type !== "button" && c.type !== "seed") input.value = String(values[k]);
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
    textWidth: textWidth,
    legend: legend,
    bars: bars,
    heatmap: heatmap,
    lines: lines,
  };
})();
