/* Chapter 03's live figures (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  const B = BookLive;

  BookLive.define("ch03-hat-matrix", {
    title: "Live figure: the hat matrix H = X(XᵀX)⁻¹Xᵀ, least squares' attention weights on its training rows. Change n, d or the draw, or add an intercept column; watch the signs, trace(H) and the row sums.",
    compute: "ch03_hat_matrix",
    controls: [
      {name: "n", label: "n", values: [6, 8, 10, 12, 16, 20], value: 8},
      {name: "d", label: "d", values: [1, 2, 3, 4], value: 2},
      {name: "intercept", label: "intercept column", type: "toggle", value: 0},
      {name: "seed", label: "", type: "seed", button: "new draw", value: 1},
    ],
    draw: function (view, r, values) {
      // Figure 3.2's setting in one click (20 samples, 3 features, the program's draw)
      const fig = {n: 20, d: 3, intercept: 0, seed: 1};
      const row = B.html("div", {style: "margin:0 0 0.4em"}, view.body);
      const button = B.html("button", {type: "button", style: "font:inherit;padding:0.05em 0.6em"}, row,
                            "as Fig. 3.2 (n = 20, d = 3)");
      // aria-disabled, not disabled: the button keeps the keyboard focus that pressed it
      const atFigure = Object.keys(fig).every(function (k) { return values[k] === fig[k]; });
      button.setAttribute("aria-disabled", String(atFigure));
      button.addEventListener("click", function () { view.set(fig); });
      // signed colours as in Figure 3.2; entries written when the cells are large enough
      const index = r.H.map(function (row, i) { return String(i + 1); });
      B.heatmap(view, r.H, r, {color: "signed", scale: r.max_abs_weight, key: "H", rows: index,
                               cols: index, maxCell: 50, maxHeight: 560, approxZero: 0.005,
                               digits: function (v) { return Math.abs(v) >= 0.1 ? 2 : 1; }});
      view.note("Row i (query) against column j (key), both training rows; blue weights are " +
                "positive, red negative" +
                (r.H.length > 10 ? "; point at a cell for its weight." : "."));
      view.numbers([["trace(H)", "trace", 6], ["columns of X", "columns", 1],
                    [["offdiag_negative_pct", 2], "% of the off-diagonal weights negative"]], r);
      view.numbers([["smallest weight", "min_weight", 2],
                    ["max|row sum − 1|", "rowsum_deviation", 2],
                    ["max|H² − H|", "idempotence", 2],
                    ["max|S − H|", "attention_minus_H", 2],
                    ["|HY − Xβ̂| / |Xβ̂|", "fit_vs_ls", 2]], r);
      view.note("S = XLᵀLXᵀ: the unnormalised attention weights on the training rows with the " +
                "whitened query and key maps Lᵀ of section 4 (LᵀL = (XᵀX)⁻¹, value weight 1). " +
                "β̂: least squares by QR.");
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

  const ks = [];
  for (let k = 0; k <= 50; ++k) ks.push(k);

  BookLive.define("ch03-gd-layers", {
    title: "Live figure: k linear-attention layers against k gradient steps, on 50 new queries. " +
           "Move k and the step size η: the two agree to rounding at every k, and approach least " +
           "squares when η < 2/\u2060λₘₐₓ².",
    alone: "section 6 states the identity without a figure",
    compute: "ch03_gd_layers",
    controls: [
      {name: "k", label: "k", values: ks, value: 10},
      {name: "eta", label: "η", type: "select", value: "1",
       options: [["trace", "1/tr(XᵀX)"], ["0.25", "0.25/λₘₐₓ²"], ["0.5", "0.5/λₘₐₓ²"],
                 ["1", "1/λₘₐₓ²"], ["1.5", "1.5/λₘₐₓ²"], ["1.9", "1.9/λₘₐₓ²"],
                 ["2.1", "2.1/λₘₐₓ²"]]},
      {name: "n", label: "n", values: [10, 20, 50, 100], value: 20},
      {name: "d", label: "d", values: [1, 2, 3, 5, 10], value: 3},
      {name: "seed", label: "", type: "seed", button: "new draw", value: 1},
    ],
    draw: function (view, r, v) {
      // errors against k on a log scale (exact zeros on its floor), dots at the chosen k
      const series = [
        {x: r.k, y: r.error_attention, color: 0, label: "attention layers vs least squares"},
        {x: r.k, y: r.error_gd, color: 1, dashed: true, label: "gradient steps vs least squares"},
        {x: r.k, y: r.difference, color: 2, label: "attention layers vs gradient steps"}];
      for (const s of series.slice())
        series.push({x: [v.k], y: [s.y[r.k.indexOf(v.k)]], color: s.color, lineless: true, points: 3.5});
      B.lines(view, series, {ylog: true, yfloor: 1e-17, height: 250, xrange: [0, ks[ks.length - 1]],
                             xticks: [0, 10, 20, 30, 40, 50], marker: v.k,
                             xlabel: "k (layers = gradient steps)", ylabel: "relative difference"});
      view.numbers([["query 1 after k: attention ŷ", "y_attention_q1", 6], ["gradient steps", "y_gd_q1", 6],
                    ["least squares", "y_ls_q1", 6]], r);
      view.note("Relative differences at k, ‖a − b‖ / ‖b‖ over the 50 queries:");
      view.numbers([["attention vs gradient steps", "difference_k", 2],
                    ["attention vs least squares", "error_attention_k", 3],
                    ["gradient steps vs least squares", "error_gd_k", 3]], r);
      view.numbers([["η·λₘₐₓ²", "eta_lambda_max_sq", 3],
                    ["error factor per step, max|1 − ηλᵢ²|", "contraction", 3],
                    ["κ(X)", "kappa", 3]], r);
      view.note("λᵢ: the singular values of X. Each step multiplies the error along singular " +
                "direction i by 1 − ηλᵢ², so the error shrinks when every |1 − ηλᵢ²| < 1, that is " +
                "when η < 2/λₘₐₓ². Least squares by the library's QR.");
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
