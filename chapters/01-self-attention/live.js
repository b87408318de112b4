/* Chapter 01's live figures (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  const powersOfTwo = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
  const scales = [];  // 0.01 .. 100, ten steps per decade
  for (let k = -20; k <= 20; ++k) scales.push(Number(Math.pow(10, k / 10).toPrecision(2)));

  BookLive.define("ch01-softmax-scale", {
    title: "Live figure: one query against 16 keys. Move d and the logit scale s, with and without the division by √d.",
    compute: "ch01_softmax_scale",
    controls: [
      {name: "d", label: "d", values: powersOfTwo, value: 64},
      {name: "s", label: "scale s", values: scales, value: 1},
      {name: "scaled", label: "divide by √d", type: "toggle", value: 1},
      {name: "seed", label: "", type: "button", button: "new draw", value: 1,
       next: function (v) { return v + 1; }},
    ],
    draw: function (view, r) {
      BookLive.bars(view, r.weights, {ymax: 1, ylabel: "weight", xlabel: "key",
                                      highlight: r.weights.indexOf(Math.max.apply(null, r.weights))});
      view.numbers([["largest weight", "max_weight", 3], ["entropy", "entropy", 3],
                    ["of at most log 16 =", "log_n", 3], ["Jacobian norm", "jacobian_norm", 3],
                    ["std of the scores", "score_std", 3]], r);
    },
    checks: [
      {d: 64, s: 1, scaled: 1, seed: 1}, {d: 1024, s: 1, scaled: 0, seed: 1},
      {d: 1, s: 0.01, scaled: 1, seed: 7}, {d: 16, s: 100, scaled: 0, seed: 3},
    ],
  });

  BookLive.define("ch01-causal-toy", {
    title: "Live figure: the toy sentence's weights softmax(s·XXᵀ/√4 + M). Switch the causal mask; s sharpens or flattens every row.",
    compute: "ch01_causal_toy",
    controls: [
      {name: "causal", label: "causal mask", type: "toggle", value: 1},
      {name: "s", label: "scale s", values: [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5], value: 1},
    ],
    draw: function (view, r, v) {
      BookLive.heatmap(view, r.weights, r, {rows: r.tokens, cols: r.tokens, key: "weights",
                       masked: function (i, j) { return v.causal && j > i; }});
      view.numbers([["jin's weight on later tokens", "future_weight_jin", 3],
                    ["smallest unmasked weight", "min_weight", 2]], r);
    },
    checks: [{causal: 1, s: 1}, {causal: 0, s: 1}, {causal: 0, s: 0.05}, {causal: 1, s: 5}],
    // the native chapter program's numbers for the same figure (results.json)
    program: [
      {values: {causal: 1, s: 1}, key: "weights.2.1", results: "causal_toy_weight_tian_tian"},
      {values: {causal: 0, s: 1}, key: "future_weight_jin", results: "unmasked_toy_future_weight_jin"},
      {values: {causal: 0, s: 1}, key: "min_weight", results: "unmasked_toy_min_weight"},
    ],
  });
})();
