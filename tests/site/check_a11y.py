#!/usr/bin/env python3
"""Accessibility of the built site (WCAG 2.1 AA): axe-core in every page, as a reader opens it.

    check_a11y.py --site build/release/site/html --axe .../axe-core/axe.min.js
                  [--dark PAGE...] [--only PAGE...] [--counts] [--width 1280]

(with tools/ on PYTHONPATH, as CMake's ${BOOK_PYTHON} runs it: it imports book.browser)

Every HTML page of the site (Doxygen's, the source pages, Doxygen's search pages; not MathJax's)
is opened from file:// in headless Chromium (book.browser) at one width, in light mode, with
axe-core (npm axe-core, installed into the build tree by the target `axe`) preloaded into every
document; once MathJax has typeset the page and its live figures are drawn, axe.run checks it
against WCAG 2.0/2.1 A and AA and axe's best practices. The pages given to --dark are checked
again in dark mode (the reader's system asks for it: prefers-color-scheme), and must be dark.

A page fails on any violation that axe rates serious or critical: each is printed with its rule,
the page, and the first nodes (CSS selector, HTML, why). Moderate and minor ones are counted.

The dark-mode toggle is then used by keyboard alone on the main page: Tab must reach it, it must
be announced as a button with a name, Enter and Space must each switch the mode, and it must keep
focus when the window is resized.

--counts prints each page's numbers (rules/nodes, all and serious+critical) and rules.
Exit status: 0 pass, 1 problems, 2 usage (no site, no axe), 77 no Chromium.
"""
import argparse
import os
import sys
import time

from book.browser import Browser, find_chromium
from check_site import list_pages  # beside this file: the site check's list of pages

A11Y_JS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "a11y_check.js")
FAILING = ("serious", "critical")


def audit(browser, site, page):
    """axe-core's violations of one page, once it is what a reader sees."""
    browser.open("file://" + os.path.join(site, page))
    browser.call(A11Y_JS, "settled", timeout=60)
    return browser.call(A11Y_JS, "audit", timeout=120)


def summary(violations):
    """(rules, nodes, failing rules, failing nodes)."""
    bad = [v for v in violations if v["impact"] in FAILING]
    return (len(violations), sum(len(v["nodes"]) for v in violations),
            len(bad), sum(len(v["nodes"]) for v in bad))


def report(page, mode, violations, problems):
    for v in violations:
        if v["impact"] not in FAILING:
            continue
        lines = ["%s (%s): %s %s — %s, %d node(s)" % (page, mode, v["impact"], v["rule"],
                                                      v["help"], len(v["nodes"]))]
        for n in v["nodes"][:5]:
            lines.append("      %s  %s\n        %s" % (n["target"], n["html"], n["why"]))
        if len(v["nodes"]) > 5:
            lines.append("      ... and %d more" % (len(v["nodes"]) - 5))
        problems.append("\n".join(lines))


def toggle_by_keyboard(browser, site, width):
    """The dark-mode toggle used with the keyboard alone: the problems."""
    browser.open("file://" + os.path.join(site, "index.html"))
    browser.call(A11Y_JS, "settled", timeout=60)
    for _ in range(40):
        browser.press("Tab")
        if browser.evaluate("document.activeElement.localName") == \
                "doxygen-awesome-dark-mode-toggle":
            break
    else:
        return ["index.html: the dark-mode toggle cannot be reached with Tab (40 presses)"]
    out = []
    ax = browser.accessible("document.activeElement") or {}
    if ax.get("role") != "button" or not ax.get("name"):
        out.append("index.html: the dark-mode toggle is announced as %r named %r, not as a "
                   "named button" % (ax.get("role"), ax.get("name")))
    dark = "document.documentElement.classList.contains('dark-mode')"
    on_toggle = "document.activeElement.localName == 'doxygen-awesome-dark-mode-toggle'"
    for key in ("Enter", "Space"):
        before = browser.evaluate(dark)
        browser.press(key)
        if browser.evaluate(dark) == before:
            out.append("index.html: %s on the focused dark-mode toggle does not switch the mode"
                       % key)
    # the theme moves the toggle when the window is resized (a phone turned)
    browser.set_viewport(width - 100, 900)
    browser.evaluate("new Promise(r => setTimeout(r, 100))")
    browser.set_viewport(width, 900)
    if not browser.evaluate("new Promise(r => setTimeout(r, 100)).then(() => %s)" % on_toggle):
        out.append("index.html: the dark-mode toggle loses focus when the window is resized")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", required=True, help="the site's html directory")
    ap.add_argument("--axe", required=True, help="axe-core's axe.min.js")
    ap.add_argument("--dark", nargs="*", default=[], help="pages checked in dark mode too")
    ap.add_argument("--only", nargs="+", help="check only these pages (relative to --site)")
    ap.add_argument("--counts", action="store_true", help="print every page's numbers")
    ap.add_argument("--width", type=int, default=1280)
    args = ap.parse_args()
    site = os.path.abspath(args.site)
    if not os.path.isfile(os.path.join(site, "index.html")):
        print("check_a11y: no %s/index.html (build the site)" % site)
        return 2
    if not os.path.isfile(args.axe):
        print("check_a11y: no %s (build the target axe: it installs axe-core with npm)" % args.axe)
        return 2
    exe = find_chromium()
    if not exe:
        print("check_a11y: chromium not found (apt-get install chromium); skipping")
        return 77
    pages = args.only or list_pages(site)
    runs = [(p, "light") for p in pages] + [(p, "dark") for p in args.dark
                                            if not args.only or p in args.only]
    problems, totals, t0 = [], {}, time.monotonic()
    with Browser(args.width, 900, exe) as browser:
        browser.preload(args.axe)
        for page, mode in runs:
            if mode == "dark":
                browser.page("Emulation.setEmulatedMedia", {"features": [
                    {"name": "prefers-color-scheme", "value": "dark"}]})
            t = time.monotonic()
            violations = audit(browser, site, page)
            t = time.monotonic() - t
            if mode == "dark" and not browser.evaluate(
                    "document.documentElement.classList.contains('dark-mode')"):
                problems.append("%s (dark): the page did not switch to dark mode" % page)
            report(page, mode, violations, problems)
            n = summary(violations)
            for impact in ("critical", "serious", "moderate", "minor"):
                totals[impact] = totals.get(impact, 0) + sum(
                    len(v["nodes"]) for v in violations if v["impact"] == impact)
            if args.counts:
                print("  %-50s %-5s %5.1f s  all %2d rules/%4d nodes; serious+critical %2d/%4d  %s"
                      % ((page, mode, t) + n + (" ".join(sorted(v["rule"] for v in violations)),)))
        browser.page("Emulation.setEmulatedMedia", {"features": []})
        if not args.only or "index.html" in args.only:
            problems += toggle_by_keyboard(browser, site, args.width)
    print("check_a11y: %d pages (%d in dark mode too), axe-core nodes: %s; %.0f s" % (
        len(pages), len(runs) - len(pages),
        ", ".join("%d %s" % (totals.get(k, 0), k) for k in ("critical", "serious", "moderate",
                                                            "minor")),
        time.monotonic() - t0))
    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
