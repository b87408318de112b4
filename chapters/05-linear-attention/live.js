/* Chapter 05's live figures (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  const B = BookLive;
  const scales = [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4];
  const keyLabels = [];
  for (let j = 1; j <= 12; ++j) keyLabels.push(String(j));

  // Digits to show a number without an exponent up to 10⁵ (at least 3 significant ones).
  function intDigits(v) {
    return Math.abs(v) < 1e5 ? Math.max(3, String(Math.round(Math.abs(v))).length) : 3;
  }

  // A legend under a chart: [[class of the swatch, "bar" or "line" or "dashed" or "point", text]].
  function legend(view, items) {
    const box = B.html("div", {"class": "live-legend"}, view.body);
    for (const [cls, kind, text] of items) {
      const item = B.html("span", {}, box);
      const g = B.svg("svg", {width: 22, height: 12, style: "vertical-align: middle; margin-right: 0.35em"}, item);
      if (kind === "bar") B.svg("rect", {x: 5, y: 1, width: 12, height: 10, "class": cls}, g);
      else if (kind === "point") B.svg("circle", {cx: 11, cy: 6, r: 4, "class": cls}, g);
      else B.svg("line", {x1: 1, x2: 21, y1: 6, y2: 6, "class": "live-line " + cls + (kind === "dashed" ? " live-dashed" : "")}, g);
      item.appendChild(document.createTextNode(text));
    }
  }

  // The exact softmax weights a_j of the query and the approximation â_j (if any) side by
  // side for the 12 keys; the axis takes in negative weights.
  function weightBars(view, exact, approx) {
    const f = B.frame(view, 190, {left: 44, right: 8, top: 22, bottom: 34});
    const all = approx ? exact.concat(approx) : exact;
    const lo = Math.min(0, Math.min.apply(null, all)) * 1.05, hi = Math.max.apply(null, all) * 1.05;
    const y = B.scale(lo, hi, f.y0, f.y1);
    B.axes(f, null, y, null, [lo, hi], {ylabel: "weight", xlabel: "key j"});
    if (lo < 0) B.svg("line", {x1: f.x0, x2: f.x1, y1: y(0), y2: y(0), "class": "live-axis"}, f.svg);
    const w = (f.x1 - f.x0) / exact.length;
    const bar = function (v, x, cls, label) {
      const r = B.svg("rect", {x: x, width: w * 0.38, y: Math.min(y(v), y(0)),
                               height: Math.abs(y(v) - y(0)), "class": cls}, f.svg);
      B.svg("title", {}, r, label + B.format(v, 4));
    };
    exact.forEach(function (v, j) {
      bar(v, f.x0 + j * w + w * 0.1, "live-bar", "key " + keyLabels[j] + ", softmax: ");
      if (approx) bar(approx[j], f.x0 + j * w + w * 0.5, "live-bar live-bar-hi",
                      "key " + keyLabels[j] + ", approximation: ");
      B.svg("text", {x: f.x0 + (j + 0.5) * w, y: f.y0 + 14, "text-anchor": "middle"}, f.svg, keyLabels[j]);
    });
    legend(view, approx ? [["live-bar", "bar", "softmax aⱼ"], ["live-bar live-bar-hi", "bar", "approximation âⱼ"]]
                        : [["live-bar", "bar", "softmax aⱼ (no approximation: refused)"]]);
  }

  // An error curve on a logarithmic y axis with at most six decades labelled (a sweep can
  // span seventeen): series = [{x, y, cls, dashed, points, label}], o = {xlog, xrange,
  // xticks: [[value, text]], xlabel, ylabel, marker}. Values <= 0 leave a gap.
  function errorPlot(view, series, o) {
    const f = B.frame(view, 230, {left: 52, right: 20, top: 22, bottom: 38});
    let lo = Infinity, hi = 0;
    for (const s of series) for (const v of s.y) if (v > 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    let e0 = Math.floor(Math.log10(lo)), e1 = Math.ceil(Math.log10(hi));
    if (e1 <= e0) e1 = e0 + 1;
    const step = Math.ceil((e1 - e0) / 5);
    e0 = Math.floor(e0 / step) * step;
    e1 = Math.ceil(e1 / step) * step;
    const x = B.scale(o.xrange[0], o.xrange[1], f.x0, f.x1, o.xlog);
    const y = B.scale(Math.pow(10, e0), Math.pow(10, e1), f.y0, f.y1, true);
    B.svg("line", {x1: f.x0, x2: f.x1, y1: f.y0, y2: f.y0, "class": "live-axis"}, f.svg);
    B.svg("line", {x1: f.x0, x2: f.x0, y1: f.y0, y2: f.y1, "class": "live-axis"}, f.svg);
    for (let e = e0; e <= e1; e += step) {
      const v = Math.pow(10, e);
      B.svg("line", {x1: f.x0, x2: f.x1, y1: y(v), y2: y(v), "class": "live-grid"}, f.svg);
      B.svg("text", {x: f.x0 - 5, y: y(v) + 4, "text-anchor": "end"}, f.svg, e >= 0 ? String(v) : B.format(v, 1));
    }
    for (const [v, text] of o.xticks)
      B.svg("text", {x: x(v), y: f.y0 + 16, "text-anchor": "middle"}, f.svg, text);
    B.svg("text", {x: (f.x0 + f.x1) / 2, y: f.height - 4, "text-anchor": "middle"}, f.svg, o.xlabel);
    B.svg("text", {x: f.x0, y: f.y1 - 8, "text-anchor": "start"}, f.svg, o.ylabel);
    if (o.marker !== undefined)
      B.svg("line", {x1: x(o.marker), x2: x(o.marker), y1: f.y0, y2: f.y1, "class": "live-marker"}, f.svg);
    for (const s of series) {
      let d = "", move = true;
      s.x.forEach(function (xv, i) {
        const v = s.y[i];
        if (!(v > 0)) { move = true; return; }
        d += (move ? "M" : "L") + x(xv).toFixed(1) + "," + y(v).toFixed(1);
        move = false;
        if (s.points) B.svg("circle", {cx: x(xv), cy: y(v), r: s.points, "class": s.cls}, f.svg);
      });
      if (!s.lineless) B.svg("path", {d: d, "class": "live-line " + s.cls + (s.dashed ? " live-dashed" : "")}, f.svg);
    }
    legend(view, series.filter(function (s) { return s.label; }).map(function (s) {
      return [s.cls, s.lineless ? "point" : s.dashed ? "dashed" : "line", s.label];
    }));
  }

  // The numbers every approximation shows, or the weight sum the library refused.
  function approxNumbers(view, r, extra) {
    const list = [["features D", "features", 6]];
    if (r.refused) list.push(["weight sum Σⱼ wⱼ", "weight_sum", 3]);
    else list.push(["max |âⱼ − aⱼ|", "max_error", 3], ["output error ‖ô − o‖/‖o‖", "output_error", 3],
                   ["smallest âⱼ", "min_weight", 3]);
    list.push(["negative wⱼ", "negatives", 2]);
    view.numbers(list.concat(extra), r);
    if (r.refused)
      view.note("The weights wⱼ = φ(q)·φ(kⱼ) sum to a number ≤ 0, which no normalisation can " +
                "divide by (the library refuses it): there is no âⱼ.");
  }

  function refusedNote(view, r, name) {
    if (r.sweep_refused.length)
      view.note("No point at " + name + " = " + r.sweep_refused.join(", ") +
                ": there the weights sum to ≤ 0 and are refused.");
  }

  BookLive.define("ch05-taylor", {
    title: "Live figure: the Taylor map φₚ on one query and 12 keys (d_k = 4). Move the order p " +
           "and the logit scale s: the error falls once p passes the largest |q·kⱼ|, and odd p " +
           "gives negative weights to keys whose logit is below the root of Tₚ.",
    compute: "ch05_taylor",
    controls: [
      {name: "p", label: "order p", min: 0, max: 8, step: 1, value: 2},
      {name: "s", label: "logit scale s", values: scales, value: 1},
      {name: "seed", label: "", type: "button", button: "new tokens", value: 1,
       next: function (v) { return v + 1; }},
    ],
    draw: function (view, r, v) {
      weightBars(view, r.exact, r.refused ? null : r.approx);
      const series = [
        {x: r.sweep_x, y: r.sweep_weights, cls: "live-series-0", points: 2.5, label: "max |âⱼ − aⱼ|"},
        {x: r.sweep_x, y: r.sweep_output, cls: "live-series-2", dashed: true, label: "output error"}];
      if (!r.refused)
        series.push({x: [v.p], y: [r.max_error], cls: "live-series-1", points: 5, lineless: true,
                     label: "p = " + v.p});
      errorPlot(view, series, {xrange: [0, 20], xticks: [[0, "0"], [4, "4"], [8, "8"], [12, "12"], [16, "16"], [20, "20"]],
                               xlabel: "order p", ylabel: "error", marker: v.p});
      view.note("The errors use Tₚ(q·kⱼ), which φₚ(q)·φₚ(kⱼ) equals to rounding (last number); " +
                "φₚ itself is built for p ≤ 8.");
      refusedNote(view, r, "p");
      approxNumbers(view, r, [
        r.root !== undefined ? ["Tₚ < 0 below t* =", "root", 4] : ["min of Tₚ", "minimum", 4],
        ["smallest logit q·kⱼ", "min_logit", 3], ["|φ·φ − Tₚ| (relative)", "identity_residual", 2]]);
    },
    checks: [
      {p: 0, s: 0.25, seed: 1}, {p: 8, s: 4, seed: 3}, {p: 4, s: 0.25, seed: 9},
      {p: 1, s: 4, seed: 3}, {p: 7, s: 3, seed: 5},
    ],
    // the chapter program's roots and minima of T_p (results.json, section 1 of its output)
    program: [
      {values: {p: 1, s: 1, seed: 1}, key: "root", results: "taylor_root_p1"},
      {values: {p: 3, s: 1, seed: 1}, key: "root", results: "taylor_root_p3"},
      {values: {p: 5, s: 1, seed: 1}, key: "root", results: "taylor_root_p5"},
      {values: {p: 7, s: 1, seed: 1}, key: "root", results: "taylor_root_p7"},
      {values: {p: 2, s: 1, seed: 1}, key: "minimum", results: "taylor_min_p2"},
      {values: {p: 4, s: 1, seed: 1}, key: "minimum", results: "taylor_min_p4"},
      {values: {p: 6, s: 1, seed: 1}, key: "minimum", results: "taylor_min_p6"},
      {values: {p: 8, s: 1, seed: 1}, key: "minimum", results: "taylor_min_p8"},
    ],
  });

  const powerTicks = [[1, "1"], [16, "16"], [256, "256"], [4096, "4096"], [65536, "65536"]];
  BookLive.define("ch05-exp-limit", {
    title: "Live figure: the exp-limit map ψₚ on the same query and keys. Move the power p " +
           "(ψₚ has 5ᵖ features) and the logit scale s: doubling p only halves the error.",
    compute: "ch05_exp_limit",
    controls: [
      {name: "p", label: "power p", min: 1, max: 6, step: 1, value: 2},
      {name: "s", label: "logit scale s", values: scales, value: 1},
      {name: "seed", label: "", type: "button", button: "new tokens", value: 1,
       next: function (v) { return v + 1; }},
    ],
    draw: function (view, r, v) {
      weightBars(view, r.exact, r.refused ? null : r.approx);
      const series = [
        {x: r.sweep_x, y: r.sweep_weights, cls: "live-series-0", points: 2.5, label: "max |âⱼ − aⱼ|"},
        {x: r.sweep_x, y: r.sweep_output, cls: "live-series-2", dashed: true, label: "output error"},
        {x: r.reference_x, y: r.reference, cls: "live-series-3", dashed: true, label: "C/p, through p = 64"}];
      if (!r.refused)
        series.push({x: [v.p], y: [r.max_error], cls: "live-series-1", points: 5, lineless: true,
                     label: "p = " + v.p});
      errorPlot(view, series, {xlog: true, xrange: [1, 65536], xticks: powerTicks,
                               xlabel: "power p", ylabel: "error", marker: v.p});
      view.note("The errors use (1 + q·kⱼ/p)ᵖ, which ψₚ(q)·ψₚ(kⱼ) equals to rounding (last " +
                "number); ψₚ itself is built for p ≤ 6.");
      refusedNote(view, r, "p");
      approxNumbers(view, r, [
        ["smallest logit q·kⱼ", "min_logit", 3],
        ["|ψ·ψ − (1 + t/p)ᵖ| (relative)", "identity_residual", 2]]);
    },
    checks: [
      {p: 1, s: 0.25, seed: 1}, {p: 6, s: 4, seed: 1}, {p: 3, s: 4, seed: 4}, {p: 5, s: 2, seed: 7},
    ],
  });

  const rTicks = [[1, "1"], [4, "4"], [16, "16"], [64, "64"], [256, "256"], [1024, "1024"]];
  const rValues = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
  BookLive.define("ch05-random-features", {
    title: "Live figure: random features on the same query and keys. Pick the kind, move r " +
           "and s, draw new directions: the error falls like 1/√r only once r is well above " +
           "the last number below, and trigonometric weights can be negative.",
    compute: "ch05_random_features",
    controls: [
      {name: "method", label: "features", type: "select", value: "positive",
       options: [["positive", "positive"], ["orthogonal", "orthogonal"], ["trigonometric", "trigonometric"]]},
      {name: "r", label: "directions r", values: rValues, value: 64},
      {name: "s", label: "logit scale s", values: scales, value: 1},
      {name: "seed", label: "", type: "button", button: "new tokens", value: 1,
       next: function (v) { return v + 1; }},
      {name: "draw", label: "", type: "button", button: "new directions", value: 1,
       next: function (v) { return v + 1; }},
    ],
    draw: function (view, r, v) {
      weightBars(view, r.exact, r.refused ? null : r.approx);
      const series = [
        {x: r.sweep_x, y: r.sweep_weights, cls: "live-series-0", points: 2.5, label: "max |âⱼ − aⱼ|, RMS over 8 draws"},
        {x: r.sweep_x, y: r.sweep_output, cls: "live-series-2", dashed: true, label: "output error, RMS"},
        {x: r.sweep_x, y: r.reference, cls: "live-series-3", dashed: true, label: "∝ 1/√r, through r = 1024"}];
      if (!r.refused)
        series.push({x: [v.r], y: [r.max_error], cls: "live-series-1", points: 5, lineless: true,
                     label: "these r directions"});
      errorPlot(view, series, {xlog: true, xrange: [1, 1024], xticks: rTicks,
                               xlabel: "directions r", ylabel: "error", marker: v.r});
      const extra = [];
      if (r.rms_at_r !== undefined) extra.push(["RMS of max |âⱼ − aⱼ| at this r", "rms_at_r", 3]);
      if (v.method === "trigonometric") extra.push(["share of draws refused", "refused_share_at_r", 2]);
      if (r.slope !== undefined) extra.push(["fitted slope, r ≥ 4", "slope", 2]);
      extra.push(["r × relative MSE of the estimate of e^(q·kⱼ), worst j (theory, i.i.d.)",
                  "relative_mse_times_r", intDigits(r.relative_mse_times_r)]);
      approxNumbers(view, r, extra);
    },
    checks: [
      {method: "positive", r: 1, s: 0.25, seed: 1, draw: 1},
      {method: "orthogonal", r: 1024, s: 4, seed: 2, draw: 3},
      {method: "orthogonal", r: 2, s: 1, seed: 1, draw: 1},
      {method: "trigonometric", r: 1, s: 4, seed: 1, draw: 2},
      {method: "trigonometric", r: 4, s: 2, seed: 1, draw: 2},
    ],
  });
})();
