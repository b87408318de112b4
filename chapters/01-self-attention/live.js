/* Chapter 01's live figures (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  const powersOfTwo = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
  const scales = [];  // 0.01 .. 100, ten steps per decade
  for (let k = -20; k <= 20; ++k) scales.push(Number(Math.pow(10, k / 10).toPrecision(2)));

  BookLive.define("ch01-softmax-scale", {
    title: "Live figure: one query against 16 keys. Move d and the logit scale s, with and without " +
           "the division by √d, and watch the row: without √d, raising d sharpens it as raising s " +
           "does; with √d, d changes little.",
    compute: "ch01_softmax_scale",
    controls: [
      {name: "d", label: "d", values: powersOfTwo, value: 64},
      {name: "s", label: "scale s", values: scales, value: 1},
      {name: "scaled", label: "divide by √d", type: "toggle", value: 1},
      {name: "seed", label: "", type: "seed", button: "new draw", value: 1},
    ],
    draw: function (view, r) {
      BookLive.bars(view, r.weights, {ymax: 1, ylabel: "weight", xlabel: "key",
                                      highlight: r.weights.indexOf(Math.max.apply(null, r.weights))});
      view.numbers([["largest weight (orange)", "max_weight", 3],
                    ["entropy ", ["entropy", 3], " nats (at most log 16 = ", ["log_n", 3], ")"]], r);
      view.numbers([["Jacobian norm", "jacobian_norm", 3], ["std of the 16 scores", "score_std", 3]], r);
      view.note("Orange bar: the largest weight. Over many draws the scores have standard deviation " +
                "s with the division by √d (s√d without it); these 16 scores of one query are a " +
                "small sample, so their std is near that, not exactly it.");
    },
    checks: [
      {d: 64, s: 1, scaled: 1, seed: 1}, {d: 1024, s: 1, scaled: 0, seed: 1},
      {d: 1, s: 0.01, scaled: 1, seed: 7}, {d: 16, s: 100, scaled: 0, seed: 3},
    ],
  });

  BookLive.define("ch01-causal-toy", {
    title: "Live figure: the toy sentence's weights softmax(s·XXᵀ/√4 + M). Switch the causal mask; " +
           "s sharpens or flattens every row.",
    compute: "ch01_causal_toy",
    controls: [
      {name: "causal", label: "causal mask", type: "toggle", value: 1},
      {name: "s", label: "scale s", values: [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5], value: 1},
    ],
    draw: function (view, r, v) {
      // rows the queries, columns the keys, as Figure 1.3; weights below 0.001 read "≈0"
      // (0.0017, the caption's smallest weight, is still written out)
      BookLive.heatmap(view, r.weights, r, {rows: r.tokens, cols: r.tokens, key: "weights",
                       approxZero: 0.001, xlabel: "key: the token attended to",
                       ylabel: "query: the token being updated",
                       masked: function (i, j) { return v.causal && j > i; }});
      view.numbers([["jin's weight on later tokens", "future_weight_jin", 3],
                    ["smallest unmasked weight", "min_weight", 2]], r);
      view.note((v.causal ? "Grey –: masked (weight 0). With the mask, jin's weight on later " +
                            "tokens is 0 by construction. " : "") +
                "≈0: a positive weight under a thousandth.");
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
