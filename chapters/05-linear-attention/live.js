/* Chapter 05's live figures (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  const B = BookLive;
  const scales = [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4];

  // Digits to show a number without an exponent up to 10⁵ (at least 3 significant ones).
  function intDigits(v) {
    return Math.abs(v) < 1e5 ? Math.max(3, String(Math.round(Math.abs(v))).length) : 3;
  }

  // The exact softmax weights a_j of the query and the approximation â_j (if any) side by
  // side for the 12 keys.
  function weightBars(view, r) {
    B.bars(view, r.refused ? [{values: r.exact, label: "softmax aⱼ (no approximation: refused)"}]
                           : [{values: r.exact, label: "softmax aⱼ"}, {values: r.approx, label: "approximation âⱼ"}],
           {height: 190, ylabel: "weight", xlabel: "key j"});
  }

  // An error sweep on a log axis: max |âⱼ − aⱼ| (dots), the output error (dashed), a
  // reference line if any, and this setting's point (orange) at o.at, marked.
  // o = {at, atLabel, reference: {x, y, label}, weightsLabel, outputLabel, xlog, xrange, xticks, xlabel}.
  function errorPlot(view, r, o) {
    const series = [
      {x: r.sweep_x, y: r.sweep_weights, color: 0, points: 2.5, label: o.weightsLabel || "max |âⱼ − aⱼ|"},
      {x: r.sweep_x, y: r.sweep_output, color: 2, dashed: true, label: o.outputLabel || "output error"}];
    if (o.reference) series.push(Object.assign({color: 3, dashed: true}, o.reference));
    if (!r.refused) series.push({x: [o.at], y: [r.max_error], color: 1, lineless: true, points: 5, label: o.atLabel});
    B.lines(view, series, {ylog: true, height: 230, xlog: o.xlog, xrange: o.xrange, xticks: o.xticks,
                           xlabel: o.xlabel, ylabel: "error", marker: o.at});
  }

  // The numbers every approximation shows, or the weight sum the library refused.
  function approxNumbers(view, r, extra, errorLabel) {
    const list = [["features D", "features", 6]];
    if (r.refused) list.push(["weight sum Σⱼ wⱼ", "weight_sum", 3]);
    else list.push([errorLabel || "max |âⱼ − aⱼ|", "max_error", 3], ["output error ‖ô − o‖/‖o‖", "output_error", 3],
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
    title: "Live figure: the Taylor map φₚ on one query and 12 keys (dₖ = 4). Move the order p " +
           "and the logit scale s: the error falls once p passes the largest |q·kⱼ|, and odd p " +
           "gives negative weights to keys whose logit is below the root of Tₚ.",
    compute: "ch05_taylor",
    controls: [
      {name: "p", label: "order p", min: 0, max: 8, step: 1, value: 2},
      {name: "s", label: "logit scale s", values: scales, value: 1},
      {name: "seed", label: "", type: "seed", button: "new tokens", value: 1},
    ],
    draw: function (view, r, v) {
      weightBars(view, r);
      errorPlot(view, r, {at: v.p, atLabel: "p = " + v.p, xrange: [0, 20],
                          xticks: [0, 4, 8, 12, 16, 20], xlabel: "order p"});
      view.note("The logit scale s multiplies every logit q·kⱼ (s\u00a0=\u00a01: standard-normal tokens, " +
                "rescaled as in the setup). The errors use Tₚ(q·kⱼ), which φₚ(q)·φₚ(kⱼ) equals to rounding " +
                "(last number); φₚ itself is built for p ≤ 8.");
      refusedNote(view, r, "p");
      approxNumbers(view, r, [
        ["largest |q·kⱼ|", "max_abs_logit", 3], ["smallest logit q·kⱼ", "min_logit", 3],
        r.root !== undefined ? ["root of Tₚ (Tₚ < 0 below it)", "root", 4] : ["min of Tₚ", "minimum", 4],
        ["|φ·φ − Tₚ| (relative)", "identity_residual", 2]]);
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

  const powerTicks = [1, 16, 256, 4096, 65536];
  BookLive.define("ch05-exp-limit", {
    title: "Live figure: the exp-limit map ψₚ on the same query and keys. Move the power p " +
           "(ψₚ has 5ᵖ features) and the logit scale s: doubling p only halves the error.",
    compute: "ch05_exp_limit",
    controls: [
      {name: "p", label: "power p", min: 1, max: 6, step: 1, value: 2},
      {name: "s", label: "logit scale s", values: scales, value: 1},
      {name: "seed", label: "", type: "seed", button: "new tokens", value: 1},
    ],
    draw: function (view, r, v) {
      weightBars(view, r);
      errorPlot(view, r, {at: v.p, atLabel: "p = " + v.p, xlog: true, xrange: [1, 65536],
                          xticks: powerTicks, xlabel: "power p",
                          reference: {x: r.reference_x, y: r.reference, label: "C/p, through p = 64"}});
      view.note("The errors use (1 + q·kⱼ/p)ᵖ, which ψₚ(q)·ψₚ(kⱼ) equals to rounding (last " +
                "number); ψₚ itself is built for p ≤ 6.");
      refusedNote(view, r, "p");
      approxNumbers(view, r, [
        ["smallest logit q·kⱼ", "min_logit", 3],
        ["|ψ·ψ − (1 + t/p)ᵖ| (relative)", "identity_residual", 2]]);
      view.note("Odd p: negative weights where q·kⱼ < −p (section 3), so the smallest logit " +
                "tells whether any key gets one.");
    },
    checks: [
      {p: 1, s: 0.25, seed: 1}, {p: 6, s: 4, seed: 1}, {p: 3, s: 4, seed: 4}, {p: 5, s: 2, seed: 7},
    ],
  });

  const rTicks = [1, 4, 16, 64, 256, 1024];
  const rValues = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
  BookLive.define("ch05-random-features", {
    title: "Live figure: random features on the same query and keys, at a smaller logit scale s. " +
           "Pick the kind, move r and s, draw new directions: the error falls like 1/√r once r " +
           "is well above the r at which the relative MSE is 1 (last number); raise s and that r " +
           "soon passes 1024. Trigonometric weights can be negative.",
    compute: "ch05_random_features",
    controls: [
      {name: "method", label: "features", type: "select", value: "positive",
       options: [["positive", "positive"], ["orthogonal", "orthogonal"], ["trigonometric", "trigonometric"]]},
      {name: "r", label: "directions r", values: rValues, value: 64},
      {name: "s", label: "logit scale s", values: scales, value: 0.25},
      {name: "seed", label: "", type: "seed", button: "new tokens", value: 1},
      {name: "draw", label: "", type: "seed", button: "new directions", value: 1},
    ],
    draw: function (view, r, v) {
      weightBars(view, r);
      errorPlot(view, r, {at: v.r, atLabel: "these r directions", xlog: true, xrange: [1, 1024],
                          xticks: rTicks, xlabel: "directions r",
                          weightsLabel: "max |âⱼ − aⱼ|, RMS over 8 other draws", outputLabel: "output error, RMS",
                          reference: {x: r.sweep_x, y: r.reference, label: "∝ 1/√r, through r = 1024"}});
      const extra = [];
      if (r.rms_at_r !== undefined) extra.push(["max |âⱼ − aⱼ|, RMS over 8 other draws", "rms_at_r", 3]);
      if (v.method === "trigonometric") extra.push(["share of draws refused", "refused_share_at_r", 2]);
      if (r.slope !== undefined) extra.push(["fitted slope, r ≥ 4", "slope", 2]);
      extra.push(["r at which the relative MSE is 1 (i.i.d. theory, worst key)",
                  "relative_mse_times_r", intDigits(r.relative_mse_times_r)]);
      view.note("The orange point and the first error below are these r directions; the blue " +
                "points are the root mean square over 8 other draws of r directions, so the two " +
                "differ by chance. The relative MSE of the estimate of e^(q·kⱼ) falls like 1/r.");
      approxNumbers(view, r, extra, "max |âⱼ − aⱼ|, these directions");
    },
    checks: [
      {method: "positive", r: 1, s: 0.25, seed: 1, draw: 1},
      {method: "orthogonal", r: 1024, s: 4, seed: 2, draw: 3},
      {method: "positive", r: 1024, s: 0.25, seed: 1, draw: 1},
      {method: "trigonometric", r: 1, s: 4, seed: 1, draw: 2},
      {method: "trigonometric", r: 4, s: 2, seed: 1, draw: 2},
    ],
  });
})();
