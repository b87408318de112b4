#!/usr/bin/env python3
"""The live figures, tested as a reader uses them: every chapter page from file:// in headless
Chromium, every widget set to each parameter set its chapter's live.js lists (`checks`).

    check_live.py --site build/release/site/html --reference build/release/bin/live-reference
                  --out build/release/out [--screenshots DIR] [--width 1280]

(with tools/ on PYTHONPATH, as CMake's ${BOOK_PYTHON} runs it: it imports book.browser)

A page fails on
  * a console error or an uncaught exception (a widget that cannot compute logs one);
  * a chapter page without a live figure, a widget defined but on no page, or a check that
    names an unknown control;
  * a slider whose aria-valuetext (what a screen reader announces) is not the value shown
    beside it;
  * a number of the WebAssembly result (everything the figure plots) that differs from the
    native build's (live-reference, the same C++ compiled natively) by more than 1e-12
    relative — or 1e-14 absolute for numbers that are zero up to rounding (a cancelled bias:
    ~1e-17 in one build, 0 in the other, has no relative digits to compare);
  * a number shown on the page (class live-num) whose full value (data-value) is not the
    result's number under its key, or whose text is not that value rounded;
  * a live figure that is not right after the static figure it animates (unless its spec
    gives `alone`: the reason no static figure fits), that is printed,
    or that takes room on the page when JavaScript is off;
  * a widget number that the chapter program also computes (`program` in live.js: a key of
    its results.json) and that differs from it by more than 1e-12 relative;
  * a live figure that the keyboard alone cannot use. From its first control, Tab is pressed
    (as a reader presses it, Input.dispatchKeyEvent) until focus leaves the figure; each
    control on the way is changed with its keys (a slider with the arrow keys, a checkbox with
    Space, a list with the arrow keys, a button with Enter) and changed back. It fails when
    Tab skips a control or goes elsewhere than the next one in the page, when a key loses
    focus (a redraw removed the focused control), when a key does not change its control,
    when a control has no accessible name (in Chromium's accessibility tree) or no focus
    ring, and when a moved slider does not announce (aria-valuetext) the value shown.

It also measures, in the page, the time from a control change to the redrawn figure: the
event handler alone (computing in WebAssembly, parsing, rebuilding the SVG) and up to the
next painted frame (which waits for the display's next refresh), and prints both.

Chromium is driven by book.browser (the DevTools protocol over a pipe); the code run in the
page is live_check.js beside this file. Exit status: 0 pass, 1 problems, 2 usage, 77 no Chromium.
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import subprocess
import sys

from book.browser import Browser, find_chromium

REL_TOL = 1e-12
ABS_TOL = 1e-14
LIVE_JS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "live_check.js")


def numbers_of(x, path=""):
    """Every number in a parsed JSON value, with its key path (a.b.0.1)."""
    if isinstance(x, bool):
        yield path, x
    elif isinstance(x, (int, float)):
        yield path, float(x)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from numbers_of(v, "%s.%d" % (path, i) if path else str(i))
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from numbers_of(v, "%s.%s" % (path, k) if path else k)


def close(a, b):
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b)) or abs(a - b) <= ABS_TOL


def parse_shown(text):
    """The number a widget shows: '0.468', '−3.2', '3.7×10⁻⁵'."""
    sup = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
    t = text.replace("−", "-")
    m = re.fullmatch(r"(-?[\d.]+)×10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)", t)
    if m:
        return float(m.group(1)) * 10.0 ** int(m.group(2).translate(sup))
    return float(t)


def rounded_ok(text, value, digits):
    """The text is `value` to `digits` significant digits (or exactly 0)."""
    try:
        shown = parse_shown(text)
    except ValueError:
        return False
    if value == 0:
        return shown == 0
    unit = 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)
    return abs(shown - value) <= 0.5 * unit * (1 + 1e-9) + 1e-300


def compare(result, native, where, problems):
    if "error" in result or "error" in native:
        problems.append("%s: error (wasm: %s; native: %s)" % (
            where, result.get("error"), native.get("error")))
        return
    ours, theirs = dict(numbers_of(result)), dict(numbers_of(native))
    if ours.keys() != theirs.keys():
        problems.append("%s: the wasm and native results have different keys: %s" % (
            where, sorted(set(ours) ^ set(theirs))[:5]))
        return
    labels = [k for k, v in result.items() if isinstance(v, list) and v and isinstance(v[0], str)]
    for k in labels:
        if result[k] != native.get(k):
            problems.append("%s: labels %s differ" % (where, k))
    bad = [k for k in ours if not close(ours[k], theirs[k])]
    if bad:
        relative = lambda k: abs(ours[k] - theirs[k]) / max(abs(theirs[k]), 1e-300)
        k = max(bad, key=relative)
        problems.append("%s: %s = %.17g in the page, %.17g native (relative %.1e > %g)" % (
            where, k, ours[k], theirs[k], relative(k), REL_TOL))
    return len(ours)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", required=True)
    ap.add_argument("--reference", required=True, help="the live-reference program")
    ap.add_argument("--out", required=True, help="the chapter programs' output directory")
    ap.add_argument("--root", help="the book (a student copy, with .book-release, may have "
                                   "figures that wait for an exercise)")
    ap.add_argument("--screenshots", help="also write each widget at its defaults and at its "
                                          "last check into this directory")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--repeat", type=int, default=20, help="control changes timed per widget")
    ap.add_argument("--only", nargs="+", help="check only these chapter pages (ch06.html ...)")
    args = ap.parse_args()
    pages = sorted(glob.glob(os.path.join(args.site, "ch[0-9][0-9].html")))
    if args.only:
        pages = [p for p in pages if os.path.basename(p) in args.only]
    if not pages or not os.path.isfile(os.path.join(args.site, "attn-live.js")):
        print("check_live: no chapter pages or no attn-live.js in %s (build the site)" % args.site)
        return 2
    exe = find_chromium()
    if not exe:
        print("check_live: chromium not found (apt-get install chromium); skipping")
        return 77
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    student_copy = bool(args.root) and os.path.isfile(os.path.join(args.root, ".book-release"))
    problems, timings, compared, shown_count, waiting = [], [], 0, 0, set()
    tab_stops = 0
    defined_js = None
    with Browser(args.width, 900, exe, hide_scrollbars=True) as browser:
        for page in pages:
            name = os.path.basename(page)
            url = "file://" + os.path.abspath(page)
            browser.open(url)
            widgets = browser.call(LIVE_JS, "widgets")
            if defined_js is None:
                defined_js = browser.call(LIVE_JS, "defined")
            if not widgets:
                problems.append("%s: no live figure (every chapter has at least one)" % name)
            slug = None
            runs = []  # (widget, values, page result)
            for w in widgets:
                where = "%s %s" % (name, w["name"])
                sets = [w["defaults"]] + w["checks"] + [p["values"] for p in w["program"]]
                for values in sets:
                    unknown = set(values) - set(w["controls"])
                    if unknown:
                        problems.append("%s: check %s names unknown controls %s" % (
                            where, values, sorted(unknown)))
                        continue
                    r = browser.call(LIVE_JS, "set", w["name"], values)
                    runs.append((w, values, r))
                if args.screenshots:
                    last = (w["checks"] or [w["defaults"]])[-1]
                    for tag, values in (("a", w["defaults"]), ("b", last)):
                        browser.call(LIVE_JS, "set", w["name"], values)
                        shot(browser, w["name"], os.path.join(
                            args.screenshots, "%s-%d-%s.png" % (w["name"], args.width, tag)),
                            args.width)
                t = browser.call(LIVE_JS, "time", w["name"], args.repeat)
                timings.append((w["name"], statistics.median(t["handler"]), max(t["handler"]),
                                statistics.median(t["frame"]), max(t["frame"])))
            # the same computations, natively
            argv = [args.reference]
            for w, values, r in runs:
                argv += [w["compute"], r["query"]]
            native = subprocess.run(argv, capture_output=True, text=True,
                                    check=True).stdout.split("\n") if runs else []
            for (w, values, r), line in zip(runs, native):
                where = "%s %s(%s)" % (name, w["name"], r["query"])
                if r["error"]:
                    problems.append("%s: the widget shows an error: %s" % (where, r["error"]))
                    continue
                result, expect = json.loads(r["json"]), json.loads(line)
                if student_copy and result.get("exercise") and expect.get("exercise"):
                    waiting.add("%s (exercise %s)" % (w["name"], result["exercise"]))
                    continue
                compared += compare(result, expect, where, problems) or 0
                flat = dict(numbers_of(result))
                for s in r["shown"]:
                    shown_count += 1
                    v = flat.get(s["key"])
                    if v is None or float(s["value"]) != v:
                        problems.append("%s: shown number %s has value %s, the result %s" % (
                            where, s["key"], s["value"], v))
                    elif not rounded_ok(s["text"], v, s["digits"]):
                        problems.append("%s: %s is shown as '%s', not %.17g to %d digits" % (
                            where, s["key"], s["text"], v, s["digits"]))
                for s in r["sliders"]:
                    if not s["valuetext"] or not s["shown"] or s["shown"] not in s["valuetext"]:
                        problems.append("%s: a slider announces %r, not the value shown, %r" % (
                            where, s["valuetext"], s["shown"]))
                for p in w["program"]:
                    if p["values"] != values:
                        continue
                    if slug is None:
                        nn = name[2:4]
                        slug = [d for d in os.listdir(args.out) if d.startswith(nn + "-")]
                    data = json.load(open(os.path.join(args.out, slug[0], "results.json")))
                    if data.get("exercises_not_done"):  # a student copy, partly run
                        continue
                    want, got = data[p["results"]], flat.get(p["key"])
                    if got is None or not abs(got - want) <= REL_TOL * abs(want):
                        problems.append("%s: %s = %r, the chapter program's %s = %r" % (
                            where, p["key"], got, p["results"], want))
                    else:
                        compared += 1
            for w in widgets:
                found, stops = keyboard_walk(browser, name, w["name"])
                problems += found
                tab_stops += stops
            for w in browser.call(LIVE_JS, "misplaced"):
                problems.append("%s: live figure %s does not follow a static figure (put its "
                                "marker after the figure's caption)" % (name, w))
            browser.page("Emulation.setEmulatedMedia", {"media": "print"})
            for w in browser.call(LIVE_JS, "shown"):
                problems.append("%s: live figure %s is printed (print keeps the static figure)"
                                % (name, w))
            browser.page("Emulation.setEmulatedMedia", {"media": ""})
            for e in browser.console_errors():
                problems.append("%s: %s" % (name, e))
        # Without JavaScript the live figures take no room: the static figures stand alone.
        browser.page("Emulation.setScriptExecutionDisabled", {"value": True})
        for page in pages:
            browser.open("file://" + os.path.abspath(page))
            for w in browser.call(LIVE_JS, "shown"):
                problems.append("%s: live figure %s takes room without JavaScript" % (
                    os.path.basename(page), w))
    on_pages = {t[0] for t in timings}
    for n in sorted(set(defined_js or []) - on_pages if not args.only else []):
        problems.append("live figure %s is defined but on no chapter page (<!-- live: %s -->)" % (n, n))
    print("live figures: %d widgets on %d pages; %d numbers compared with the native build and "
          "chapter programs, %d shown numbers checked; %d controls used by keyboard alone" % (
              len(timings), len(pages), compared, shown_count, tab_stops))
    print("time from a control change to the redrawn figure (ms, %d changes each, %d px):" % (
        args.repeat, args.width))
    print("  %-26s %16s %16s" % ("widget", "handler med/max", "to frame med/max"))
    for n, hm, hx, fm, fx in timings:
        print("  %-26s %7.1f / %6.1f %8.1f / %6.1f" % (n, hm, hx, fm, fx))
    for w in sorted(waiting):
        print("waiting for the student's code: " + w)
    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


# The keys that change a focused control, and the keys that change it back (a slider at the
# end of its range moves the other way).
KEYS = {"range": (("ArrowRight", "ArrowLeft"), ("ArrowLeft", "ArrowRight")),
        "checkbox": (("Space", "Space"),), "select": (("ArrowDown", "ArrowUp"),
                                                     ("ArrowUp", "ArrowDown")),
        "button": (("Enter", None),)}
MAX_TAB_STOPS = 100


def keyboard_walk(browser, page, widget):
    """A live figure used with the keyboard alone (see the module's docstring): the problems
    and the number of controls Tab stopped at."""
    where = "%s %s" % (page, widget)
    if not browser.call(LIVE_JS, "focusFirst", widget):
        return ["%s: no control that Tab reaches" % where], 0
    out, visited, count = [], set(), 0
    for _ in range(MAX_TAB_STOPS):
        f = browser.call(LIVE_JS, "focused", widget)
        if not f["inWidget"]:
            break
        count = f["count"]
        visited.add(f["index"])
        control = "%s: control %d (%s)" % (where, f["index"] + 1, f["what"])
        ax = browser.accessible("document.activeElement") or {}
        if not ax.get("name", "").strip():
            out.append("%s has no accessible name (a screen reader says only %r)" % (
                control, ax.get("role")))
        if not f["ring"]:
            out.append("%s shows no focus ring" % control)
        out += operate(browser, widget, f, control)
        browser.call(LIVE_JS, "expectNext")
        browser.press("Tab")
        if not browser.call(LIVE_JS, "atExpected"):
            g = browser.call(LIVE_JS, "focused", widget)
            out.append("%s: Tab went to %s, not to the next control" % (control, g["what"]))
            break
    else:
        out.append("%s: still inside after %d Tabs" % (where, MAX_TAB_STOPS))
    missing = sorted(set(range(count)) - visited)
    if missing:
        out.append("%s: Tab never reached control(s) %s of %d" % (
            where, ", ".join(str(k + 1) for k in missing), count))
    return out, len(visited)


def operate(browser, widget, f, control):
    """Changes the focused control with its keys and back: the problems."""
    kind = f["type"] if f["type"] in ("range", "checkbox") else f["tag"]
    if kind not in KEYS:
        return []
    out = []
    for change, back in KEYS.get(kind, ()):
        browser.press(change)
        g = browser.call(LIVE_JS, "focused", widget)
        if not g["inWidget"] or g["index"] != f["index"]:
            out.append("%s: focus lost on %s (it went to %s)" % (
                control, change, g["what"] if g["inWidget"] else "outside the figure: " + g["what"]))
            browser.call(LIVE_JS, "focusAt", widget, f["index"])
            return out
        if kind == "button":
            return out
        if (g["value"], g["checked"]) == (f["value"], f["checked"]):
            continue  # a slider at the end of its range: the other way
        if kind == "range" and (not g["shown"] or g["shown"] not in (g["valuetext"] or "")):
            out.append("%s announces %r after %s, not the value shown, %r" % (
                control, g["valuetext"], change, g["shown"]))
        browser.press(back)
        return out
    out.append("%s: the keys %s do not change it" % (
        control, " / ".join(c for c, _ in KEYS.get(kind, ()))))
    return out


def shot(browser, widget, path, width):
    """A PNG of one widget, in a window tall enough to hold all of it."""
    height = browser.call(LIVE_JS, "height", widget)
    browser.set_viewport(width, int(max(900, height + 200)))
    box = browser.call(LIVE_JS, "box", widget)
    browser.screenshot(path, clip={"x": box["x"] - 8, "y": box["y"] - 8,
                                   "width": box["width"] + 16, "height": box["height"] + 16})
    browser.set_viewport(width, 900)


if __name__ == "__main__":
    sys.exit(main())
