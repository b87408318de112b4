/* Chapter 06's live figures (drawing only; live.cpp computes, code/live/live.js explains). */
(function () {
  "use strict";
  const H = BookLive.html;
  const n = 8;  // Figure 6.1's tokens x0..x7
  const inOrder = "0,1,2,3,4,5,6,7";
  const figureOrder = "4,0,5,3,7,1,2,6";  // the middle panel of Figure 6.1 (live.cpp replays it)
  let selected = null;  // the token whose chip the reader picked, to move it left or right

  // A new order for the "shuffle" button: a uniformly random one (Fisher–Yates), not the
  // current one. Only the control's value: every number comes from live.cpp.
  function shuffle(current) {
    for (;;) {
      const a = [];
      for (let i = 0; i < n; ++i) a.push(i);
      for (let i = n - 1; i > 0; --i) {
        const j = Math.floor(Math.random() * (i + 1));
        const t = a[i]; a[i] = a[j]; a[j] = t;
      }
      if (a.join(",") !== current) return a.join(",");
    }
  }

  // The chips of the tokens in their current order: pick one, then move it left or right.
  function orderRow(view, r, values) {
    const order = values.order.split(",").map(Number);
    const at = order.indexOf(selected);
    const move = function (step) {
      const k = order.indexOf(selected);
      if (k < 0 || k + step < 0 || k + step >= n) return;
      order[k] = order[k + step];
      order[k + step] = selected;
      view.set({order: order.join(",")});
    };
    const set = function (o) { view.set({order: o}); };
    const row = H("div", {style: "display:flex;flex-wrap:wrap;align-items:center;gap:0.3em 0.35em;margin:0.2em 0 0.5em"}, view.body);
    H("span", {style: "margin-right:0.2em"}, row, "order:");
    const base = "font:inherit;padding:0.05em 0.4em;min-width:2.4em;border:1px solid var(--rule);border-radius:4px;cursor:pointer;";
    order.forEach(function (t, i) {
      const on = t === selected;
      const chip = H("button", {type: "button", title: "pick " + r.tokens[i] + " to move it",
                                "aria-pressed": on ? "true" : "false",
                                style: base + (on ? "background:var(--primary-color);color:var(--page-background-color);" : "background:none;color:inherit;")},
                     row, r.tokens[i]);
      chip.addEventListener("click", function () { selected = on ? null : t; view.set({}); });
    });
    const small = "font:inherit;padding:0.05em 0.5em;";
    const left = H("button", {type: "button", style: small, "aria-label": "move the picked token left",
                              title: "move the picked token left"}, row, "◀");
    const right = H("button", {type: "button", style: small, "aria-label": "move the picked token right",
                               title: "move the picked token right"}, row, "▶");
    // aria-disabled, not disabled: a button keeps the keyboard focus that pressed it when
    // the picked token reaches the end of the row (move() ignores a step off the row)
    left.setAttribute("aria-disabled", String(at <= 0));
    right.setAttribute("aria-disabled", String(at < 0 || at >= n - 1));
    left.addEventListener("click", function () { move(-1); });
    right.addEventListener("click", function () { move(1); });
    const plain = H("button", {type: "button", style: small}, row, "in order");
    plain.addEventListener("click", function () { set(inOrder); });
    const fig = H("button", {type: "button", style: small}, row, "as Fig. 6.1");
    fig.addEventListener("click", function () { set(r.figure_order.join(",")); });
    if (at < 0) view.note("Pick a token, then move it with ◀ ▶.").style.marginTop = "0";
  }

  // The two panels side by side when there is room, one above the other on a phone.
  function panels(view, r, encoded) {
    const width = view.width(), gap = 24;
    const two = width >= 2 * 290 + gap;
    const pw = two ? Math.floor((width - gap) / 2) : width;
    const box = H("div", {style: "display:flex;flex-wrap:wrap;gap:0.6em " + gap + "px"}, view.body);
    const e = encoded ? " + E" : "";
    const panel = function (key, caption) {
      const div = H("div", {style: "width:" + pw + "px;max-width:100%"}, box);
      H("div", {style: "font-size:13px"}, div, caption);
      // shade from the weights in [0, 1], text from the same weights in percent (as Figure
      // 6.1 prints them), rows and columns labelled by token
      BookLive.heatmap(view, r[key], r, {key: key + "_pct", digits: 2, unit: "%", rows: r.tokens,
                                         cols: r.tokens, maxCell: 48, parent: div, width: pw,
                                         xlabel: "key", ylabel: "query"});
    };
    panel("weights", "A(PX" + e + "), in %: the layer on the tokens in this order");
    panel("weights_moved", "P A(X" + e + ") Pᵀ: the weights of the tokens in order, moved along");
  }

  BookLive.define("ch06-reorder", {
    title: "Live figure: reorder Figure 6.1's eight tokens, switch the biases and the positional " +
           "encoding E. Without E the two panels agree entry by entry; with it they do not.",
    compute: "ch06_reorder",
    controls: [
      {name: "order", label: "", type: "button", button: "shuffle", value: figureOrder, next: shuffle},
      {name: "bq", label: "query bias", type: "toggle", value: 1},
      {name: "bk", label: "key bias", type: "toggle", value: 1},
      {name: "bv", label: "value bias", type: "toggle", value: 1},
      {name: "pe", label: "positional encoding E", type: "toggle", value: 0},
    ],
    draw: function (view, r, values) {
      orderRow(view, r, values);
      const e = values.pe === 1 ? " + E" : "";
      panels(view, r, values.pe === 1);
      view.numbers([["max|f(PX) − P f(X)| / max|f(X)|", "equivariance", 2],
                    ["max|A(PX" + e + ") − P A(X" + e + ") Pᵀ|", "weights_residual", 2],
                    ["max|A(PX" + e + ") − A(X" + e + ")| (in place)", "change_in_place", 3]], r);
      view.numbers([["the key bias moves f(PX) by", "bias_change_K", 2],
                    ["the query bias by", "bias_change_Q", 3], ["the value bias by", "bias_change_V", 3],
                    ["largest entry of the value bias", "max_abs_bV", 3]], r);
      view.note("f(X) = Attn(X" + e + "), one head; a change is the largest over all entries " +
                "(a bias's: switched on against off, the other settings as they are). " +
                "E is the sinusoidal positional encoding, added at the positions (section 6). " +
                "Section 3 explains the biases: softmax cancels the key bias, the query bias " +
                "favours some keys for every query, and the value bias leaves the weights alone " +
                "and shifts every output row by itself.");
    },
    checks: [
      {order: inOrder, bq: 0, bk: 0, bv: 0, pe: 0},
      {order: "7,6,5,4,3,2,1,0", bq: 1, bk: 1, bv: 1, pe: 1},
      {order: "1,2,3,4,5,6,7,0", bq: 0, bk: 1, bv: 0, pe: 1},
      {order: figureOrder, bq: 1, bk: 0, bv: 1, pe: 1},
    ],
    // the chapter program's Figure 6.1 (results.json): at its order, with all three biases
    program: [
      {values: {order: figureOrder, bq: 1, bk: 1, bv: 1, pe: 0}, key: "change_in_place",
       results: "pattern_change_in_place"},
    ],
  });
})();
