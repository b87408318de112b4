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

  BookLive.define("ch02-fit", {
    title: "Live figure: the chapter's 100 points and the Nadaraya–Watson fit. Change the kernel and the bandwidth h, and move the query x to see which points it averages (lower panel: its weights).",
    compute: "ch02_fit",
    controls: [
      {name: "kernel", label: "kernel", type: "select", options: kernels, value: "gaussian"},
      {name: "h", label: "h", values: bandwidths, value: 0.05},
      {name: "x", label: "query x", values: queries, value: 0.3},
    ],
    draw: function (view, r) {
      // upper panel: the data (dark where the query's weights are > 0), f, the fit and ŷ(x)
      const dots = function (near, o) {
        return Object.assign({x: r.data_x, y: r.data_y, color: "muted", lineless: true, points: 2.4,
                              defined: r.weights.map(function (w) { return (w > 0) === near ? 1 : 0; })}, o);
      };
      const series = [
        dots(false, {opacity: 0.35}),
        dots(true, {opacity: 0.9, label: "data (xᵢ, yᵢ)"}),
        {x: r.grid, y: r.truth, color: 2, dashed: true, label: "true f"},
        {x: r.grid, y: r.fit, color: 0, defined: r.defined, label: "fit ŷ"}];
      if (r.estimate !== undefined)
        series.push({x: [r.query_x], y: [r.estimate], color: 1, lineless: true, points: 4.5,
                     label: "ŷ(x) at the query x"});
      const fit = B.lines(view, series, {height: 230, xrange: [0, 1], yrange: [-2.5, 2.5],
                                         marker: r.query_x, legend: false, left: 52});
      // lower panel: the query's weights w_i(x) as stems at the training inputs x_i (both
      // panels 52 px from the left, room for a weight such as 0.0075, so their x axes align)
      B.lines(view, [{x: r.data_x, y: r.weights, color: 1, stems: true}],
              {height: 120, xrange: [0, 1], yrange: [0, r.max_weight || 1], marker: r.query_x, left: 52,
               xlabel: "x", ylabel: "weights wᵢ(x) of the query"});
      B.legend(view, fit.legend);
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
    title: "Live figure: the weights of 40 queries (rows) over the 100 training points ranked by x " +
           "(columns). Change h and the kernel, or compare with softmax attention with and without " +
           "the key bias −xᵢ²/2h² (section 4).",
    compute: "ch02_maps",
    controls: [
      {name: "map", label: "weights", type: "select", value: "gaussian",
       options: kernels.concat([["bridge", "softmax(x·xᵢ/h² − xᵢ²/2h²)"], ["plain", "softmax(x·xᵢ/h²)"]])},
      {name: "h", label: "h", values: bandwidths, value: 0.05},
    ],
    draw: function (view, r) {
      // rows: the queries x = 0.0125 .. 0.9875; columns: the key ranks 1 .. 100; the darkest
      // cell is the largest weight
      B.heatmap(view, r.weights, r, {color: "scaled", scale: r.max_weight, dense: true,
                                     aspect: 1.6, minCell: 4, maxHeight: 280,
                                     masked: function (i) { return r.empty[i]; },
                                     rowTicks: [[0, "0"], [19.5, "0.5"], [39, "1"]],
                                     colTicks: [[0, "1"], [49, "50"], [99, "100"]],
                                     xlabel: "training points ranked by xᵢ", ylabel: "query x"});
      view.numbers([["effective keys 1/Σwᵢ² (mean)", "effective_keys", 3],
                    ["largest weight (darkest cell)", "max_weight", 3],
                    ["queries without a key", "empty_rows", 3]], r);
      view.note("The key bias −xᵢ²/2h² is added to each score x·xᵢ/h² of key i; section 4 shows " +
                "that with it softmax attention is Gaussian kernel regression.");
      view.note("At this h, whatever the weights shown above: Gaussian kernel weights against " +
                "attention, largest difference over the map:");
      view.numbers([["with the key bias", "bridge_difference", 2],
                    ["without it", "plain_difference", 2]], r);
      view.note("Mean squared error of the fit against f, also at this h:");
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
