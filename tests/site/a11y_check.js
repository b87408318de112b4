// The accessibility check's in-page code (tests/site/check_a11y.py), run by book.browser in a
// page of the site into which axe-core (axe.min.js) was preloaded.
({
  // Waits until the page is what a reader meets: MathJax has typeset it, the live figures
  // are drawn.
  async settled() {
    await book.mathjaxDone(window, []);
    if (window.BookLive) await BookLive.ready;
  },

  // axe-core's violations of WCAG 2.0/2.1 A/AA and its best practices: each rule with its impact
  // (minor, moderate, serious, critical) and the nodes it found.
  async audit() {
    const r = await axe.run(document, {
      runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
      resultTypes: ["violations"]});
    return r.violations.map(v => ({
      rule: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html.slice(0, 160),
                                why: (n.failureSummary || "").replace(/\s+/g, " ").slice(0, 300)}))}));
  },
})
