#!/usr/bin/env python3
"""The page checker must be able to fail: build a tiny site with one known defect per page and
assert that check_site.py reports each of them on the right page, and nothing on the good pages.

    test_checker.py --mathjax /usr/share/javascript/mathjax --config docs/mathjax-config.js

(with tools/ on PYTHONPATH, as CMake's ${BOOK_PYTHON} runs it: check_site.py imports book.browser)

Pages are written the way Doxygen 1.9.4 writes them (\\f$..\\f$ -> \\(..\\), SVG figures as
<object>, code in div.fragment), with the site's own MathJax configuration. With --doxygen the
same kinds of defects are also written as Doxygen input and rendered by Doxygen itself.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%(title)s</title>
<script type="text/x-mathjax-config">
MathJax.Hub.Config({
  extensions: ["tex2jax.js", "TeX/AMSmath.js", "TeX/AMSsymbols.js"],
  jax: ["input/TeX","output/HTML-CSS"],
});
%(config)s
</script>
<script type="text/javascript" async="async" src="mathjax/MathJax.js"></script>
</head><body><div id="top"></div><div class="contents"><div class="textblock">
"""
TAIL = "</div></div></body></html>\n"

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="60" height="40">'
       '<rect width="60" height="40" fill="#48c"/></svg>\n')
# 1x1 PNG
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cf000000030101007e2bc5"
                    "d40000000049454e44ae426082")

GOOD = r"""
<p>Inline \(\frac{1}{\sqrt{d}}\,\|x\|_2\) and a display</p>
<p class="formulaDsp">\[ \begin{aligned} a &amp;= b \\ c &amp;= d \end{aligned} \]</p>
<p>Costs $5 and $10; an escaped dollar $ alone; <code>\frac $$ code $$</code>.</p>
<div class="fragment"><div class="line">// $$ x^2 $$ and \frac{1}{2} in code</div></div>
<pre class="fragment">output $$ \sqrt{2}</pre>
<div class="image"><object type="image/svg+xml" data="fig.svg"></object>
<div class="caption">A caption with \(x^2\).</div></div>
<p><img src="dot.png" alt="dot"> <a href="index.html#top">top</a>
<a href="https://example.org/paper">external</a> <a href="javascript:void(0)">js</a></p>
"""

PAGES = {
    "good.html": GOOD,
    "bad_tex.html": r"""<p>Raw \frac{a}{b} in prose.</p>""",
    "bad_dollars.html": r"""<p>Unconverted $$ x $$ display.</p>""",
    "bad_inline.html": r"""<p>Unconverted inline $x_i$ math.</p>""",
    "bad_doxy.html": r"""<p>Doxygen delimiter \f$x\f$ left.</p>""",
    "bad_mathjax.html": r"""<p>Broken formula \(\frac{1}{\) here.</p>""",
    "bad_macro.html": r"""<p>Unknown macro \(\notamacro x\) here.</p>""",
    "bad_img.html": r"""<p><img src="missing.png" alt="missing"></p>""",
    "bad_object.html": r"""<div class="image"><object type="image/svg+xml" data="missing.svg">
</object></div>""",
    "bad_link.html": r"""<p><a href="nowhere.html">nowhere</a></p>""",
    "bad_anchor.html": r"""<p><a href="good.html#no-such-anchor">anchor</a></p>""",
    # tex2jax_process overrides the ignoreClass of the site's configuration, as a
    # configuration without it would do: the check must notice math typeset in code.
    # a box that scrolls sideways on a phone with nothing to say so (site.css's shadow)
    "bad_scroll.html": '<div style="overflow-x: auto; max-width: 200px"><span style="white-space: '
                       'nowrap">' + "a long line " * 40 + "</span></div>",
    "bad_code_math.html": r"""<div class="fragment"><div class="line">
<span class="tex2jax_process">\(x\)</span></div></div>""",
}

# page -> regular expressions that must all appear in its problem list
EXPECT = {
    "bad_tex.html": [r"TeX command left in the text.*\\frac\{a\}"],
    "bad_dollars.html": [r"\$\$ left in the text"],
    "bad_inline.html": [r"\$\.\.\.\$ left in the text.*\$x_i\$"],
    "bad_doxy.html": [r"Doxygen formula delimiter"],
    "bad_mathjax.html": [r"MathJax.*(error|Missing|Extra)"],
    "bad_macro.html": [r"MathJax.*notamacro"],
    "bad_img.html": [r"image does not load: <img src=\"missing.png\">", r"404: /missing.png"],
    "bad_object.html": [r"image does not load: <object data=\"missing.svg\">"],
    "bad_link.html": [r"broken link: href=\"nowhere.html\" \(no file"],
    "bad_anchor.html": [r"broken link: href=\"good.html#no-such-anchor\" \(no anchor"],
    "bad_code_math.html": [r"math typeset inside a code fragment"],
    "bad_scroll.html": [r"at 400 px div \('a long line.*scrolls sideways .* no sign that it does"],
    "index.html": [r"02-unlisted/README.md: page 'ch02' is not linked from the main page",
                   r"03-noid/README.md: first line must be"],
}


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def build_site(root, mathjax, config, pages, index_links):
    site = os.path.join(root, "html")
    os.makedirs(site)
    os.symlink(os.path.abspath(mathjax), os.path.join(site, "mathjax"))
    for name, body in pages.items():
        write(os.path.join(site, name), HEAD % {"title": name, "config": config} + body + TAIL)
    links = "".join('<li><a class="el" href="%s">%s</a></li>\n' % (h, h) for h in index_links)
    write(os.path.join(site, "index.html"),
          HEAD % {"title": "index", "config": config} + "<ol>\n" + links + "</ol>\n" + TAIL)
    write(os.path.join(site, "fig.svg"), SVG)
    write(os.path.join(site, "dot.png"), PNG, "wb")
    chapters = os.path.join(root, "chapters")
    write(os.path.join(chapters, "01-listed", "README.md"), "# Listed\n")
    write(os.path.join(chapters, "02-unlisted", "README.md"), "# Unlisted\n")
    # the page id comes from the directory; a {#id} would show on a Git host
    write(os.path.join(chapters, "03-noid", "README.md"), "# Doxygen syntax {#ch03}\n")
    # the chapter pages themselves
    write(os.path.join(site, "ch01.html"), HEAD % {"title": "ch01", "config": config} + TAIL)
    write(os.path.join(site, "ch02.html"), HEAD % {"title": "ch02", "config": config} + TAIL)
    return site, chapters


def run_checker(site, chapters=None):
    cmd = [sys.executable, os.path.join(HERE, "check_site.py"), "--site", site]
    if chapters:
        cmd += ["--chapters", chapters]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=240)
    return p.returncode, p.stdout


def problems_by_page(report):
    out, page = {}, None
    for line in report.splitlines():
        if line.startswith("  - ") and page:
            out[page].append(line[4:])
        elif line and not line.startswith((" ", "check_site:", "FAIL", "OK")) and \
                not re.match(r"^\d+ external", line):
            page = line.strip()
            out.setdefault(page, [])
    return out


BROKEN_MD = r"""# A broken page {#broken}

Raw \frac{a}{b} outside math.

A broken formula \f$\frac{1}{\f$ here, a good one \f$\sqrt{2}\f$.

![A missing figure](missing.svg)

A [broken link](nowhere.html).

A code span `with 'cat' inside` that Doxygen breaks, and a quoted "\f$C\f$" formula.
"""

DOXYFILE = """PROJECT_NAME = broken
INPUT = "%(md)s"
OUTPUT_DIRECTORY = "%(out)s"
GENERATE_LATEX = NO
QUIET = YES
WARNINGS = NO
HAVE_DOT = NO
SEARCHENGINE = NO
USE_MATHJAX = YES
MATHJAX_RELPATH = mathjax
MATHJAX_EXTENSIONS = TeX/AMSmath TeX/AMSsymbols
MATHJAX_CODEFILE = "%(config)s"
"""

EXPECT_DOXYGEN = [r"TeX command left in the text.*\\frac\{a\}",
                  r"MathJax.*Missing close brace",
                  r"image does not load: <img src=\"missing.svg\">",
                  r"broken link: href=\"nowhere.html\"",
                  r"backtick left in the text",
                  r"Doxygen formula delimiter left in the text"]


def doxygen_site(root, doxygen, mathjax, config):
    """The same defects written as Doxygen input and rendered by Doxygen itself."""
    os.makedirs(root)
    md = os.path.join(root, "broken.md")
    write(md, BROKEN_MD)
    write(os.path.join(root, "Doxyfile"),
          DOXYFILE % {"md": md, "out": root, "config": os.path.abspath(config)})
    subprocess.run([doxygen, "Doxyfile"], cwd=root, check=True, timeout=120)
    site = os.path.join(root, "html")
    os.symlink(os.path.abspath(mathjax), os.path.join(site, "mathjax"))
    return site


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mathjax", default="/usr/share/javascript/mathjax")
    ap.add_argument("--config", default=os.path.join(HERE, "..", "..", "docs", "mathjax-config.js"))
    ap.add_argument("--doxygen", help="also render the defects with this Doxygen and check them")
    args = ap.parse_args()
    with open(args.config, encoding="utf-8") as f:
        config = f.read()
    failures = []
    with tempfile.TemporaryDirectory(prefix="site-checker-test-") as tmp:
        # 1. control: the good page alone passes
        site, chapters = build_site(os.path.join(tmp, "good"), args.mathjax, config,
                                    {"good.html": GOOD}, ["good.html", "ch01.html", "ch02.html"])
        rc, report = run_checker(site)
        print("---- control site (must pass) ----\n" + report)
        if rc != 0:
            failures.append("control site: checker exit %d, expected 0" % rc)

        # 2. one defect per page
        site, chapters = build_site(os.path.join(tmp, "bad"), args.mathjax, config, PAGES,
                                    sorted(PAGES) + ["ch01.html"])
        rc, report = run_checker(site, chapters)
        print("---- broken site (must fail) ----\n" + report)
        if rc != 1:
            failures.append("broken site: checker exit %d, expected 1" % rc)
        found = problems_by_page(report)
        for page, patterns in EXPECT.items():
            msgs = found.get(page, [])
            for pat in patterns:
                if not any(re.search(pat, m) for m in msgs):
                    failures.append("%s: no problem matching /%s/ (got: %s)" % (page, pat, msgs))
        for page in ("good.html", "ch01.html", "ch02.html"):
            if page in found:
                failures.append("%s: false alarm: %s" % (page, found[page]))
        for page in found:
            if page not in EXPECT and page not in ("good.html", "ch01.html", "ch02.html"):
                failures.append("unexpected problems on %s: %s" % (page, found[page]))
        # 3. the defects as Doxygen input, rendered by Doxygen
        if args.doxygen:
            site = doxygen_site(os.path.join(tmp, "doxygen"), args.doxygen, args.mathjax,
                                args.config)
            rc, report = run_checker(site)
            print("---- Doxygen-rendered broken page (must fail) ----\n" + report)
            if rc != 1:
                failures.append("Doxygen site: checker exit %d, expected 1" % rc)
            msgs = problems_by_page(report).get("broken.html", [])
            for pat in EXPECT_DOXYGEN:
                if not any(re.search(pat, m) for m in msgs):
                    failures.append("broken.html (Doxygen): no problem matching /%s/ (got: %s)"
                                    % (pat, msgs))
    if failures:
        print("FAILED:")
        for f in failures:
            print("  " + f)
        return 1
    print("checker catches every planted defect (%d pages%s) and passes the control site"
          % (len(EXPECT), " + the Doxygen-rendered page" if args.doxygen else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
