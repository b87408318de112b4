/* The site's accessibility fixes that need a script (the rest is site.css's "Accessibility"
 * section and book.pages.fix_html); tests/site/check_a11y.py checks every page with axe-core.
 *
 *  - The theme's dark-mode toggle (doxygen-awesome-darkmode-toggle.js) is a bare element that
 *    only a mouse can use: it becomes a named button that Tab reaches, that Enter or Space
 *    presses, that says whether dark mode is on, and that keeps focus when the window is
 *    resized.
 *  - A box that scrolls sideways (wide code, a long formula, a wide table) can be scrolled
 *    with the arrow keys only once it can take focus: each such box gets tabindex=0, at the
 *    width the page has now (more of them scroll on a phone).
 */
(function () {
  "use strict";

  // (a class declaration is a global binding, not a property of window)
  if (typeof DoxygenAwesomeDarkModeToggle !== "undefined") {
    const drawIcon = DoxygenAwesomeDarkModeToggle.prototype.updateIcon;
    // the theme calls updateIcon when it creates the toggle and after every toggle
    DoxygenAwesomeDarkModeToggle.prototype.updateIcon = function () {
      drawIcon.call(this);
      this.setAttribute("role", "button");
      this.setAttribute("tabindex", "0");
      this.setAttribute("aria-label", "Dark mode");
      this.setAttribute("aria-pressed", String(!!DoxygenAwesomeDarkModeToggle.darkModeEnabled));
      this.onkeydown = function (e) {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          this.click();
        }
      };
    };
  }

  // Boxes of the text that may scroll sideways (site.css gives them overflow-x: auto).
  const BOXES = "div.fragment, pre.fragment, .formulaDsp, div.contents table, div.contents tbody," +
                " table.memname, div.memproto, div.contents pre";

  function markScrollingBoxes() {
    for (const box of document.querySelectorAll(BOXES)) {
      const scrolls = box.scrollWidth > box.clientWidth + 1 &&
                      /auto|scroll/.test(getComputedStyle(box).overflowX);
      if (scrolls && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-scroll-focus", "");
      } else if (!scrolls && box.hasAttribute("data-scroll-focus")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-scroll-focus");
      }
    }
  }

  let pending = 0;
  function later() {
    clearTimeout(pending);
    pending = setTimeout(markScrollingBoxes, 100);
  }
  window.addEventListener("load", function () {
    markScrollingBoxes();
    // typeset formulas are wider than their TeX source
    if (window.MathJax && MathJax.Hub) MathJax.Hub.Queue(markScrollingBoxes);
  });
  window.addEventListener("resize", function () {
    later();
    // the theme moves its toggle on every resize (appendChild), which drops its focus
    const e = document.activeElement;
    if (e && e.localName === "doxygen-awesome-dark-mode-toggle") setTimeout(function () { e.focus(); }, 0);
  });
})();
