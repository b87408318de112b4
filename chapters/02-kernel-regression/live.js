/* Chapter 02's live figures (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  const B = BookLive;
  const bandwidths = [];  // 0.005 .. 2, twenty steps per decade (0.02, 0.05, 0.2 among them)
  for (let k = -46; k <= 6; ++k) bandwidths.push(Number(Math.pow(10, k / 20).toPrecision(2)));
  const kernels = [["gaussian", "Gaussian"], ["box", "box"], ["triangle", "triangle"],
                   ["epanechnikov", "Epanechnikov"]];
  const queries = [];
  for (let k = 0; k <= 100; ++k) queries.push(k / 100);

  // A polyline through (xs[i], ys[i]) that breaks where ok[i] is 0 (a gap of the fit).
  function path(xs, ys, ok, x, y) {
    let d = "", pen = false;
    xs.forEach(function (xv, i) {
      if (ok && !ok[i]) { pen = false; return; }
      d += (pen ? "L" : "M") + x(xv).toFixed(1) + "," + y(ys[i]).toFixed(1);
      pen = true;
    });
    return d;
  }

  BookLive.define("ch02-fit", {
    title: "Live figure: the chapter's 100 points and the Nadaraya–Watson fit. Change the kernel and the bandwidth h, and move the query x to see which points it averages (lower panel: its weights).",
    compute: "ch02_fit",
    controls: [
      {name: "kernel", label: "kernel", type: "select", options: kernels, value: "gaussian"},
      {name: "h", label: "h", values: bandwidths, value: 0.05},
      {name: "x", label: "query x", values: queries, value: 0.3},
    ],
    draw: function (view, r) {
      const yr = [-2.5, 2.5];
      // upper panel: data, f and the fit
      const f = B.frame(view, 230, {left: 40, right: 10, top: 12, bottom: 24});
      const x = B.scale(0, 1, f.x0, f.x1), y = B.scale(yr[0], yr[1], f.y0, f.y1);
      B.axes(f, x, y, [0, 1], yr, {});
      r.data_x.forEach(function (xv, i) {
        B.svg("circle", {cx: x(xv), cy: y(r.data_y[i]), r: 2.4,
                         style: "fill: var(--muted); fill-opacity: " + (r.weights[i] > 0 ? 0.9 : 0.35)}, f.svg);
      });
      B.svg("path", {d: path(r.grid, r.truth, null, x, y), "class": "live-line live-series-2 live-dashed",
                     style: "stroke-width: 1.5"}, f.svg);
      B.svg("path", {d: path(r.grid, r.fit, r.defined, x, y), "class": "live-line live-series-0"}, f.svg);
      B.svg("line", {x1: x(r.query_x), x2: x(r.query_x), y1: f.y0, y2: f.y1, "class": "live-marker"}, f.svg);
      if (r.estimate !== undefined)
        B.svg("circle", {cx: x(r.query_x), cy: y(r.estimate), r: 4.5, "class": "live-series-1"}, f.svg);
      // lower panel: the query's weights w_i(x) as stems at the training inputs x_i
      const g = B.frame(view, 120, {left: 40, right: 10, top: 18, bottom: 36});
      const ymax = r.max_weight || 1;
      const yw = B.scale(0, ymax, g.y0, g.y1);
      B.axes(g, x, yw, [0, 1], [0, ymax], {xlabel: "x", ylabel: "weights wᵢ(x) of the query"});
      B.svg("line", {x1: x(r.query_x), x2: x(r.query_x), y1: g.y0, y2: g.y1, "class": "live-marker"}, g.svg);
      r.weights.forEach(function (w, i) {
        if (!(w > 0)) return;
        const l = B.svg("line", {x1: x(r.data_x[i]), x2: x(r.data_x[i]), y1: g.y0, y2: yw(w),
                                 "class": "live-series-1", style: "stroke-width: 2"}, g.svg);
        B.svg("title", {}, l, "x = " + B.format(r.data_x[i], 3) + ": weight " + B.format(w, 3));
      });
      const legend = B.html("div", {"class": "live-legend"}, view.body);
      // (inline colours: the runtime's swatch takes its colour from the text, not the series)
      const dot = "width: 0.6em; height: 0.6em; border: 0; border-radius: 50%; background: ";
      [["data (xᵢ, yᵢ)", dot + "var(--muted)"], ["true f", "border-top: 2px dashed #3f9f5f"],
       ["fit ŷ", "border-top-color: var(--primary-color)"], ["ŷ(x) at the query x", dot + "#d9603b"]]
        .forEach(function (e) {
          const item = B.html("span", {}, legend);
          B.html("span", {"class": "live-swatch", style: e[1]}, item);
          item.appendChild(document.createTextNode(e[0]));
        });
      const list = [];
      if (r.estimate !== undefined)
        list.push(["ŷ(x) =", "estimate", 3], ["f(x) =", "query_truth", 3], ["effective keys 1/Σwᵢ²", "effective_keys", 3]);
      if (r.mse !== undefined) list.push(["MSE against f on the grid", "mse", 3]);
      list.push(["grid points without a fit", "undefined_points", 3], ["training error", "train_mse", 3]);
      if (r.loo_cv !== undefined) list.push(["leave-one-out CV(h)", "loo_cv", 3]);
      view.numbers(list, r);
      if (r.query_error) view.note("At this query the library refuses: " + r.query_error[0]);
      if (r.loo_cv === undefined)
        view.note("Leave-one-out CV(h) is undefined here: some data point has no other point within h.");
    },
    checks: [
      {kernel: "gaussian", h: 0.05, x: 0.3},
      {kernel: "gaussian", h: 0.005, x: 0},
      {kernel: "box", h: 2, x: 1},
      {kernel: "triangle", h: 0.005, x: 0.5},
      {kernel: "epanechnikov", h: 0.1, x: 0.75},
    ],
    // the native chapter program's numbers for the same data (results.json)
    program: [
      {values: {kernel: "gaussian", h: 0.05, x: 0.3}, key: "mse", results: "fit_mse_gaussian_h0.05"},
      {values: {kernel: "triangle", h: 0.2, x: 0.3}, key: "mse", results: "fit_mse_triangle_h0.2"},
      {values: {kernel: "box", h: 0.02, x: 0.3}, key: "undefined_points", results: "fit_undefined_points_box_h0.02"},
      {values: {kernel: "box", h: 0.02, x: 0.3}, key: "mse", results: "fit_mse_box_h0.02"},
      {values: {kernel: "gaussian", h: 0.06667607160816622, x: 0.3}, key: "loo_cv", results: "loo_cv_min_gaussian"},
      {values: {kernel: "epanechnikov", h: 0.14091914656322269, x: 0.3}, key: "loo_cv", results: "loo_cv_min_epanechnikov"},
    ],
  });

  BookLive.define("ch02-maps", {
    title: "Live figure: the weights of 40 queries (rows) over the 100 training points ranked by x (columns). Change h and the kernel, or compare with softmax attention with and without the key bias −xᵢ²/2h².",
    compute: "ch02_maps",
    controls: [
      {name: "map", label: "weights", type: "select", value: "gaussian",
       options: kernels.concat([["bridge", "softmax(x·xᵢ/h² − xᵢ²/2h²)"], ["plain", "softmax(x·xᵢ/h²)"]])},
      {name: "h", label: "h", values: bandwidths, value: 0.05},
    ],
    draw: function (view, r) {
      const W = r.weights, m = W.length, n = W[0].length;
      const width = Math.max(240, view.width());
      const left = 44, top = 8, bottom = 36, right = 8;
      const cw = (width - left - right) / n, ch = Math.max(4, Math.min(7, cw * 1.6));
      const g = view.plot(width, top + m * ch + bottom);
      B.svg("rect", {x: left, y: top, width: n * cw, height: m * ch, style: "fill: none; stroke: var(--rule)"}, g);
      for (let j = 0; j < m; ++j) {
        if (r.empty[j]) {
          B.svg("rect", {x: left, y: top + j * ch, width: n * cw, height: ch, "class": "live-masked"}, g);
          continue;
        }
        for (let i = 0; i < n; ++i) {
          const a = W[j][i] / r.max_weight;  // colour only: the darkest cell is the largest weight
          if (a < 0.004) continue;
          B.svg("rect", {x: left + i * cw, y: top + j * ch, width: cw + 0.3, height: ch + 0.3,
                         "class": "live-cell", style: "fill-opacity:" + a.toFixed(3)}, g);
        }
      }
      // axes: rows are the queries t = 0.0125 .. 0.9875, columns the key ranks 1 .. 100
      [[0, "0"], [19.5, "0.5"], [39, "1"]].forEach(function (t) {
        B.svg("text", {x: left - 5, y: top + (t[0] + 0.5) * ch + 4, "text-anchor": "end"}, g, t[1]);
      });
      [[0, "1", "middle"], [49, "50", "middle"], [99, "100", "end"]].forEach(function (t) {
        B.svg("text", {x: left + (t[0] + (t[2] === "end" ? 1 : 0.5)) * cw, y: top + m * ch + 15,
                       "text-anchor": t[2]}, g, t[1]);
      });
      B.svg("text", {x: left + n * cw / 2, y: top + m * ch + 31, "text-anchor": "middle"}, g,
            "training points ranked by xᵢ");
      B.svg("text", {x: 12, y: top + m * ch / 2, "text-anchor": "middle",
                     transform: "rotate(-90 12 " + (top + m * ch / 2) + ")"}, g, "query t");
      view.numbers([["effective keys 1/Σwᵢ² (mean)", "effective_keys", 3],
                    ["largest weight (darkest cell)", "max_weight", 3],
                    ["queries without a key", "empty_rows", 3]], r);
      view.note("Gaussian kernel weights against attention, largest difference over the map:");
      view.numbers([["with the key bias", "bridge_difference", 2],
                    ["without it", "plain_difference", 2]], r);
      view.note("Mean squared error of the fit against f:");
      view.numbers([["Gaussian kernel regression", "mse_nw", 3],
                    ["softmax(x·xᵢ/h²)", "mse_plain", 3]], r);
    },
    checks: [
      {map: "gaussian", h: 0.05},
      {map: "box", h: 0.005},
      {map: "bridge", h: 2},
      {map: "plain", h: 0.005},
      {map: "epanechnikov", h: 0.3},
    ],
    program: [
      {values: {map: "gaussian", h: 0.05}, key: "effective_keys", results: "weights_effective_keys_gaussian"},
      {values: {map: "box", h: 0.05}, key: "effective_keys", results: "weights_effective_keys_box"},
      {values: {map: "box", h: 0.05}, key: "empty_rows", results: "weights_empty_rows_box"},
      {values: {map: "triangle", h: 0.05}, key: "effective_keys", results: "weights_effective_keys_triangle"},
      {values: {map: "epanechnikov", h: 0.05}, key: "effective_keys", results: "weights_effective_keys_epanechnikov"},
      {values: {map: "gaussian", h: 0.05}, key: "mse_nw", results: "mse_nw_1d"},
      {values: {map: "plain", h: 0.05}, key: "mse_plain", results: "mse_plain_softmax_1d"},
    ],
  });
})();
