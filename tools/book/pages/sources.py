"""The site's pages of the source files (html/src/<repo path>.html, line N at #L-N): where code
regions and cited tests link to (python -m book.pages sources ROOT HTML_DIR --reader|--instructor:
the reader's site has no page of an instructor-only file, such as a chapter's test_solutions.cpp)."""
import glob
import os

from ..homework.markers import INSTRUCTOR_ONLY
from .model import read

SOURCE_GLOBS = ("chapters/*/*.cpp", "chapters/*/*.hpp", "code/include/attn/*.hpp", "code/src/*.cpp",
                "code/src/*.hpp", "code/experiments/include/experiments/*.hpp",
                "code/experiments/src/*.cpp", "tests/lib/*.cpp", "tests/support/*.hpp")


def source_href(path, line, depth=0):
    """Link from a site page (depth folders below html/) to a line of a source page."""
    return "../" * depth + f"src/{path}.html#L-{line}"


def write_sources(root, html_dir, instructor):
    """One highlighted page per source file, html/src/<repo path>.html, line N at #L-N (the
    links of code regions and cited tests); the instructor-only files only when `instructor`.
    Pygments is Debian's python3-pygments."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import CppLexer

    fmt = HtmlFormatter(linenos="table", linespans="L", wrapcode=True)
    style = fmt.get_style_defs(".highlight")
    count = 0
    for pattern in SOURCE_GLOBS:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            rel = os.path.relpath(path, root)
            if INSTRUCTOR_ONLY.fullmatch(rel) and not instructor:
                continue
            depth = rel.count("/") + 1
            up = "../" * depth
            body = highlight(read(path), CppLexer(stripnl=False), fmt)
            page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                    f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                    f"<title>{rel} — Attention, Verified</title>"
                    f'<link rel="stylesheet" href="{up}site.css"><style>{style}\n'
                    "body{margin:0 auto;max-width:70em;padding:0 1em;font-family:sans-serif}"
                    # The gutter's numbers in the font, size and line height that site.css
                    # gives all code (13.5px, 1.5), both cells from the top: number N sits
                    # beside line N.
                    ".highlighttable pre{font-family:var(--mono);font-size:13.5px;"
                    "line-height:1.5;margin:0;padding:0}"
                    ".highlighttable{border-collapse:collapse}"
                    ".highlighttable td{vertical-align:top;padding-top:0;padding-bottom:0}"
                    "td.linenos{color:#666;text-align:right;padding-right:.8em;user-select:none}"
                    ".highlight{overflow-x:auto}span[id^=L-]:target{background:#fff3b0}"
                    # a link to a long line scrolls the code sideways only as far as keeps
                    # the line numbers in view (a phone showed the line without its number)
                    "span[id^=L-]{scroll-margin-left:4em}"
                    # a long path in the title wraps on a phone instead of widening the page
                    "h1 code{overflow-wrap:anywhere}"
                    f'</style></head><body><nav><p><a href="{up}index.html">Attention, Verified</a>'
                    f" · source file</p></nav><main><h1><code>{rel}</code></h1>"
                    # the code scrolls sideways on a phone: the keyboard scrolls it too
                    + body.replace('<div class="highlight">',
                                   '<div class="highlight" tabindex="0">', 1)
                    + "</main></body></html>\n")
            dest = os.path.join(html_dir, "src", rel + ".html")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(page)
            count += 1
    return count

