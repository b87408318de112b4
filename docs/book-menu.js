// The book's menu (docs/header.html): the sidebar's contents tree, which lists every chapter
// and page, is the one menu at every width. On a phone the theme hides the sidebar and its
// menu button opened Doxygen's list of reference pages only; here the button opens the sidebar
// over the page (site.css, "Phone"). On every page the current page's entry is opened, so that
// its sections are listed under it.
(function () {
  "use strict";
  var COLLAPSED = "\u25ba";  // navtree.js's arrowRight

  // Opens the current page's entry of the tree once navtree.js has built and selected it.
  function openCurrentEntry(triesLeft) {
    var item = document.querySelector("#nav-tree .item.selected");
    var toggle = item && item.querySelector("a[href^='javascript'] .arrow");
    if (toggle) {
      if (toggle.textContent === COLLAPSED) toggle.parentNode.click();
      return;
    }
    if (item || triesLeft <= 0) return;  // a page without sections, or no tree
    setTimeout(function () { openCurrentEntry(triesLeft - 1); }, 100);
  }

  function followMenuButton() {
    var state = document.getElementById("main-menu-state");
    if (!state) return;
    var sync = function () {
      document.documentElement.classList.toggle("book-menu-open", state.checked);
    };
    state.addEventListener("change", sync);
    sync();
    // a section chosen in the open menu: the menu closes over the section it scrolled to
    document.getElementById("side-nav").addEventListener("click", function (e) {
      var a = e.target.closest && e.target.closest(".label a");
      if (a && state.checked) {
        state.checked = false;
        sync();
      }
    });
  }

  window.addEventListener("load", function () {
    openCurrentEntry(50);
    followMenuButton();
  });
})();
