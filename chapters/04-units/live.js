/* Chapter 04's live figure (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  // The unit of the currents: every number of X and X_q is multiplied by c.
  const units = [0.001, 0.01, 0.1, 1, 10, 100, 1000];
  const unitNames = {0.001: "kA (c = 0.001)", 0.01: "100 A (c = 0.01)", 0.1: "10 A (c = 0.1)",
                     1: "amperes (c = 1)", 10: "100 mA (c = 10)", 100: "10 mA (c = 100)",
                     1000: "mA (c = 1000)"};

  BookLive.define("ch04-unit-change", {
    title: "Live figure: the chapter's currents written in another unit. Move the unit from kA to mA: softmax attention with fixed weights goes from uniform to one-hot, while whitened attention and least squares stay where they are.",
    compute: "ch04_unit_change",
    controls: [
      {name: "c", label: "unit of X", values: units, value: 1,
       show: function (c) { return unitNames[c]; }},
      {name: "query", label: "query", min: 1, max: 50, step: 1, value: 1},
      {name: "seed", label: "", type: "seed", button: "new draw", value: 1},
    ],
    draw: function (view, r, v) {
      // one query's weights over the 100 training points: fixed weights in series colour 1
      // (#d9603b, the runtime's nearest to the red #c0392b of the chapter's figures), whitened
      // in green as there; the uniform weight 1/n dotted; both panels 46 px from the left
      // (room for 0.075) so that their bars align
      const panel = function (w, color, label) {
        BookLive.bars(view, [{values: w, color: color}], {height: 150, reference: r.uniform, left: 46,
                                                          xlabel: "training point j", ylabel: label});
      };
      panel(r.softmax_weights, 1, "softmax, fixed weights: query " + v.query);
      panel(r.whitened_weights, 2, "whitened softmax: query " + v.query);
      view.note("Dotted: the uniform weight 1/n.");
      view.numbers([["query " + v.query + "'s entropy (nats): fixed weights", "softmax_query_entropy", 3],
                    ["whitened", "whitened_query_entropy", 3]], r);
      view.numbers([["mean entropy (nats): fixed weights", "softmax_entropy", 3],
                    ["whitened ", ["whitened_entropy", 3], " (at most log n = ", ["log_n", 3], ")"]], r);
      view.note("Relative change against amperes, ‖in this unit − in amperes‖ / ‖in amperes‖, " +
                "over the 50 held-out queries:");
      view.numbers([["least squares: predictions", "ls_change", 2]], r);
      view.numbers([["softmax, fixed weights: predictions", "softmax_change", 2],
                    ["weights", "softmax_weight_change", 2]], r);
      view.numbers([["whitened softmax: predictions", "whitened_change", 2],
                    ["weights", "whitened_weight_change", 2]], r);
    },
    checks: [
      {c: 0.001, query: 50, seed: 1}, {c: 10, query: 1, seed: 0},
      {c: 100, query: 25, seed: 1000000}, {c: 1000, query: 50, seed: 7},
    ],
    // the native chapter program's numbers at the same unit factors (results.json)
    program: [
      {values: {c: 0.001, query: 1, seed: 1}, key: "softmax_change", results: "softmax_attention_change_at_c_0.001"},
      {values: {c: 0.001, query: 1, seed: 1}, key: "softmax_entropy", results: "softmax_attention_entropy_at_c_0.001"},
      {values: {c: 0.001, query: 1, seed: 1}, key: "whitened_entropy", results: "whitened_attention_entropy_at_c_0.001"},
      {values: {c: 0.1, query: 1, seed: 1}, key: "softmax_entropy", results: "softmax_attention_entropy_at_c_0.1"},
      {values: {c: 1, query: 1, seed: 1}, key: "softmax_entropy", results: "softmax_attention_entropy_at_c_1"},
      {values: {c: 1, query: 1, seed: 1}, key: "whitened_entropy", results: "whitened_attention_entropy_at_c_1"},
      {values: {c: 10, query: 1, seed: 1}, key: "softmax_entropy", results: "softmax_attention_entropy_at_c_10"},
      {values: {c: 1000, query: 1, seed: 1}, key: "whitened_entropy", results: "whitened_attention_entropy_at_c_1000"},
      {values: {c: 1000, query: 1, seed: 1}, key: "softmax_entropy", results: "softmax_attention_entropy_at_c_1000"},
      {values: {c: 1000, query: 1, seed: 1}, key: "softmax_change", results: "softmax_attention_change_at_c_1000"},
    ],
  });
})();
