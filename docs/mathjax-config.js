// MathJax 2.7 settings for the book's site (Doxygen's MATHJAX_CODEFILE; appended to the
// MathJax.Hub.Config that Doxygen writes into every page header).
MathJax.Hub.Config({
  // CommonHTML output: fast, and its web fonts (fonts/HTML-CSS/TeX/woff) ship with Debian.
  jax: ["input/TeX", "output/CommonHTML"],
  tex2jax: {
    // Doxygen writes \f$..\f$ as \(..\) and \f[..\f] as \[..\]; nothing else is math, so a
    // stray $$ in prose stays visible (the page check reports it) instead of being typeset.
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: false,
    processEnvironments: false,
    // Code fragments (div.fragment, div.line) are not math, whatever they contain.
    ignoreClass: "fragment|line|tex2jax_ignore",
    skipTags: ["script", "noscript", "style", "textarea", "pre", "code", "annotation", "annotation-xml"]
  },
  TeX: {
    equationNumbers: { autoNumber: "none" },
    Macros: {}
  },
  CommonHTML: { scale: 100, linebreaks: { automatic: false } },
  MathMenu: { showRenderer: false, showFontMenu: false, showLocale: false },
  menuSettings: { zoom: "Click" },
  messageStyle: "none",
  showProcessingMessages: false
});
