/* Chapter 03's live figures (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  const B = BookLive;

  // "10⁻³": the label of a power of ten (a tick label, not a computed number).
  function power(e) {
    if (e === 0) return "1";
    if (e === 1) return "10";
    return "10" + String(e).replace(/-/g, "⁻").replace(/\d/g, function (c) { return "⁰¹²³⁴⁵⁶⁷⁸⁹"[c]; });
  }

  // The hat matrix as a heatmap with signed colours (blue positive, red negative, as in
  // Figure 3.2), its entries written in the cells when they fit.
  function signedHeatmap(view, M, r, key, scaleMax) {
    const n = M.length, m = M[0].length;
    const width = Math.max(240, view.width());
    const left = 26, top = 22;
    // at most about 560 px tall, so that n = 20 still fits a screen
    const cell = Math.max(8, Math.min(50, Math.floor((width - left - 4) / m), Math.floor(560 / n)));
    const g = view.plot(left + cell * m + 4, top + cell * n + 4);
    const every = cell >= 18 ? 1 : cell >= 10 ? 2 : 4;
    for (let j = 0; j < m; ++j)
      if ((j + 1) % every === 0 || every === 1)
        B.svg("text", {x: left + (j + 0.5) * cell, y: top - 7, "text-anchor": "middle",
                       "font-size": cell < 18 ? "10" : "12"}, g, String(j + 1));
    const writeNumbers = cell >= 34;
    for (let i = 0; i < n; ++i) {
      if ((i + 1) % every === 0 || every === 1)
        B.svg("text", {x: left - 5, y: top + (i + 0.5) * cell + 4, "text-anchor": "end",
                       "font-size": cell < 18 ? "10" : "12"}, g, String(i + 1));
      for (let j = 0; j < m; ++j) {
        const v = M[i][j];
        const strength = Math.min(1, Math.abs(v) / scaleMax);
        const rect = B.svg("rect", {x: left + j * cell, y: top + i * cell, width: cell - 1,
                                    height: cell - 1, fill: v < 0 ? "#b2182b" : "#2166ac",
                                    "fill-opacity": String(0.04 + 0.96 * strength)}, g);
        B.svg("title", {}, rect, "H" + (i + 1) + "," + (j + 1) + " = " + B.format(v, 4));
        if (!writeNumbers) continue;
        if (Math.abs(v) < 0.005) {  // too long to write in a cell (the tooltip has it)
          B.svg("text", {x: left + (j + 0.5) * cell, y: top + (i + 0.5) * cell + 4, "text-anchor": "middle",
                         "font-size": "10.5", "pointer-events": "none"}, g, "≈0");
          continue;
        }
        const digits = Math.abs(v) >= 0.1 ? 2 : 1;
        const t = B.svg("text", {x: left + (j + 0.5) * cell, y: top + (i + 0.5) * cell + 4,
                                 "text-anchor": "middle", "font-size": cell < 44 ? "10.5" : "12",
                                 "class": "live-num live-cell-num" + (strength > 0.55 ? " live-on-dark" : ""),
                                 "data-key": key + "." + i + "." + j, "data-value": String(v),
                                 "data-digits": String(digits)}, g, B.format(v, digits));
        t.setAttribute("pointer-events", "none");
      }
    }
    return g;
  }

  BookLive.define("ch03-hat-matrix", {
    title: "Live figure: the hat matrix H = X(XᵀX)⁻¹Xᵀ, least squares' attention weights on its training rows. Change n, d or the draw, or add an intercept column; watch the signs, trace(H) and the row sums.",
    compute: "ch03_hat_matrix",
    controls: [
      {name: "n", label: "n", values: [6, 8, 10, 12, 16, 20], value: 8},
      {name: "d", label: "d", values: [1, 2, 3, 4], value: 2},
      {name: "intercept", label: "intercept column", type: "toggle", value: 0},
      {name: "seed", label: "", type: "button", button: "new draw", value: 1,
       next: function (v) { return v + 1; }},
    ],
    draw: function (view, r) {
      signedHeatmap(view, r.H, r, "H", r.max_abs_weight);
      view.note("Row i (query) against column j (key); blue weights are positive, red negative.");
      view.numbers([["trace(H)", "trace", 6], ["columns of X", "columns", 1],
                    ["max|H² − H|", "idempotence", 2],
                    ["max|S − H|, S the attention weights", "attention_minus_H", 2],
                    ["|HY − Xβ̂_LS| / |Xβ̂_LS|", "fit_vs_ls", 2],
                    ["max|row sum − 1|", "rowsum_deviation", 2],
                    ["negative off-diagonal share", "offdiag_negative", 2],
                    ["smallest weight", "min_weight", 2]], r);
    },
    checks: [
      {n: 20, d: 4, intercept: 1, seed: 5}, {n: 6, d: 1, intercept: 0, seed: 2},
      {n: 6, d: 4, intercept: 1, seed: 3}, {n: 20, d: 1, intercept: 1, seed: 9},
      {n: 12, d: 3, intercept: 0, seed: 4},
    ],
    // Figure 3.2 itself: 20 samples, 3 features, the program's seed
    program: [
      {values: {n: 20, d: 3, intercept: 0, seed: 1}, key: "offdiag_negative",
       results: "hat_figure_offdiagonal_fraction_negative"},
    ],
  });

  // Error against k on a log scale: three series, a marker at the chosen k.
  function logPlot(view, r, k) {
    const f = B.frame(view, 250, {left: 48, right: 12, top: 26, bottom: 36});
    const series = [
      {y: r.error_attention, cls: "live-series-0", color: "var(--primary-color)", label: "k attention layers"},
      {y: r.error_gd, cls: "live-series-1 live-dashed", color: "#d9603b", label: "k gradient steps"},
      {y: r.difference, cls: "live-series-2", color: "#3f9f5f", label: "|ŷ_attn − ŷ_GD| / |ŷ_GD|"},
    ];
    let lo = Infinity, hi = -Infinity;
    for (const s of series) for (const v of s.y) if (v > 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    let elo = Math.max(-17, Math.floor(Math.log10(lo))), ehi = Math.ceil(Math.log10(hi));
    if (ehi <= elo) ehi = elo + 1;
    const fits = Math.max(2, Math.floor((f.y0 - f.y1) / 26));
    let step = 1;
    while ((ehi - elo) / step > fits) ++step;
    elo = Math.floor(elo / step) * step;
    ehi = Math.ceil(ehi / step) * step;
    const kmax = r.k[r.k.length - 1];
    const x = B.scale(0, kmax, f.x0, f.x1), y = B.scale(elo, ehi, f.y0, f.y1);
    const yv = function (v) { return y(Math.max(elo, Math.min(ehi, Math.log10(v)))); };
    for (let e = elo; e <= ehi; e += step) {
      B.svg("line", {x1: f.x0, x2: f.x1, y1: y(e), y2: y(e), "class": "live-grid"}, f.svg);
      B.svg("text", {x: f.x0 - 5, y: y(e) + 4, "text-anchor": "end"}, f.svg, power(e));
    }
    for (let t = 0; t <= kmax; t += 10)
      B.svg("text", {x: x(t), y: f.y0 + 16, "text-anchor": "middle"}, f.svg, String(t));
    B.svg("line", {x1: f.x0, x2: f.x1, y1: f.y0, y2: f.y0, "class": "live-axis"}, f.svg);
    B.svg("line", {x1: f.x0, x2: f.x0, y1: f.y0, y2: f.y1, "class": "live-axis"}, f.svg);
    B.svg("text", {x: (f.x0 + f.x1) / 2, y: f.height - 3, "text-anchor": "middle"}, f.svg,
          "k (layers = gradient steps)");
    B.svg("text", {x: f.x0 - 40, y: f.y1 - 12, "text-anchor": "start"}, f.svg,
          "|ŷ − ŷ_LS| / |ŷ_LS|");
    B.svg("line", {x1: x(k), x2: x(k), y1: f.y0, y2: f.y1, "class": "live-marker"}, f.svg);
    series.forEach(function (s) {
      let d = "";
      s.y.forEach(function (v, i) {
        if (!(v > 0)) { return; }
        d += (d ? "L" : "M") + x(r.k[i]).toFixed(1) + "," + yv(v).toFixed(1);
      });
      B.svg("path", {d: d, "class": "live-line " + s.cls}, f.svg);
      if (s.y[k] > 0)
        B.svg("circle", {cx: x(k), cy: yv(s.y[k]), r: 3.5, "class": s.cls.split(" ")[0]}, f.svg);
    });
    const legend = B.html("div", {"class": "live-legend"}, view.body);
    for (const s of series) {
      const item = B.html("span", {}, legend);
      B.html("span", {"class": "live-swatch " + s.cls, style: "border-top-color: " + s.color}, item);
      item.appendChild(document.createTextNode(s.label));
    }
  }

  const ks = [];
  for (let k = 0; k <= 50; ++k) ks.push(k);

  BookLive.define("ch03-gd-layers", {
    title: "Live figure: k linear-attention layers against k gradient steps (section 6), on 50 new queries. Move k and the step size η: the two agree to rounding at every k, and approach least squares when η < 2/λ²max.",
    compute: "ch03_gd_layers",
    controls: [
      {name: "k", label: "k", values: ks, value: 10},
      {name: "eta", label: "η", type: "select", value: "1",
       options: [["trace", "1/tr(XᵀX)"], ["0.25", "0.25/λ²max"], ["0.5", "0.5/λ²max"],
                 ["1", "1/λ²max"], ["1.5", "1.5/λ²max"], ["1.9", "1.9/λ²max"],
                 ["2.1", "2.1/λ²max"]]},
      {name: "n", label: "n", values: [10, 20, 50, 100], value: 20},
      {name: "d", label: "d", values: [1, 2, 3, 5, 10], value: 3},
      {name: "seed", label: "", type: "button", button: "new draw", value: 1,
       next: function (v) { return v + 1; }},
    ],
    draw: function (view, r, v) {
      logPlot(view, r, v.k);
      view.numbers([["query 1 at k: ŷ_attn", "y_attention_q1", 6], ["ŷ_GD", "y_gd_q1", 6],
                    ["ŷ_LS", "y_ls_q1", 6]], r);
      view.numbers([["|ŷ_attn − ŷ_GD| / |ŷ_GD|", "difference_k", 2],
                    ["|ŷ_attn − ŷ_LS| / |ŷ_LS|", "error_attention_k", 3],
                    ["|ŷ_GD − ŷ_LS| / |ŷ_LS|", "error_gd_k", 3]], r);
      view.numbers([["η·λ²max", "eta_lambda_max_sq", 3],
                    ["error factor per step, max|1 − ηλᵢ²|", "contraction", 3],
                    ["κ(X)", "kappa", 3]], r);
      view.note("Norms over the 50 queries; ŷ_LS by the library's QR least squares; λᵢ the singular values of X.");
    },
    checks: [
      {k: 0, eta: "1", n: 20, d: 3, seed: 1}, {k: 50, eta: "2.1", n: 100, d: 10, seed: 2},
      {k: 50, eta: "0.25", n: 10, d: 10, seed: 3}, {k: 1, eta: "trace", n: 10, d: 1, seed: 4},
      {k: 50, eta: "1.9", n: 20, d: 1, seed: 1},
    ],
    // main.cpp's one layer = one gradient step: section 3's data, eta = 1/tr(XᵀX), k = 1
    program: [
      {values: {k: 1, eta: "trace", n: 100, d: 10, seed: 1}, key: "difference_k",
       results: "one_layer_equals_one_gd_step"},
    ],
  });
})();
