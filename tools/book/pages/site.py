"""Doxygen input filter for the book's Markdown (FILTER_PATTERNS = *.md=...).

Doxygen 1.9.4 knows math only as \\f$...\\f$ and \\f[...\\f], and damages LaTeX it does
not understand, so the chapters' GitHub-style math is rewritten here:

  $x$  and  $`x`$    ->  \\f$x\\f$          (pandoc's rules: no space inside the dollars,
                                            closing $ not followed by a digit, no blank line)
  $$ ... $$          ->  \\f[ ... \\f]      (may span lines, not a blank line)
  ![Caption](../../figures/NAME.svg)
                     ->  \\image html NAME.svg "Caption"   (math in the caption is kept as
                                            MathJax \\(...\\); Doxygen forbids \\f$ there)

Fenced code (``` / ~~~), inline code spans, HTML comments, Doxygen's own \\f$ \\f[ \\f{
formulas, \\code/\\verbatim/\\htmlonly... blocks and escaped \\$ are left alone. Inside inline
math a bare | becomes \\vert (a | would split a Markdown table row). The line count is kept
(every output line corresponds to the input line), so Doxygen's warnings point at the right
line of the .md file.

Doxygen 1.9.4 quirks worked around (details in convert_prose): commands inside "..." are not
processed (prose quotes become &quot;), `it's 'x'` is read as quoted text (such spans get
double backticks), and a space is written before every inline formula ("($n$)" would show
"( n)": the filter marks glued formulas, `--fix-html` removes the space after Doxygen ran).
Math in headings cannot work (titles are not typeset): it is reported on stderr as an error.

For a chapter page (chapters/NN-slug/README.md whose first heading carries {#id}) a line with
"previous / contents / next" links is appended, in the order of the chapter directories.

With --out (the programs' output directory), a page first gets what the build supplies
(book.pages.sync: code, program output and numbers), ids on its headings, its Markdown links to
chapters and sections as \\ref, its figure captions (the italic line under an image) and links
from cited test names to their source lines.

Usage: python -m book.pages.site [--out DIR [--build-info FILE]] [--root BOOK] FILE
                 (Doxygen's convention: the filtered text goes to stdout; BOOK: the book the
                 page is in, default this repository; the reader's site's is the student copy)
       python -m book.pages.site --fix-html DIR [NARROW_DIR...]  (after Doxygen: book.pages.fix_html)
"""
import os
import re
import sys

from ..doctest_sources import test_locations
from .about import about_parts
from .fix_html import GLUE, fix_html
from .model import FIGURE_IMAGE, LINK, PageError, parse, pieces, title_of
from .sources import source_href
from .sync import chapter_slug, site_text

IMAGE_EXTS = (".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp")

# Doxygen block commands whose body is verbatim: \code ... \endcode etc.
VERBATIM_CMDS = ("code", "verbatim", "htmlonly", "latexonly", "xmlonly", "rtfonly", "manonly",
                 "docbookonly", "dot", "msc", "startuml")
VERBATIM_END = {"startuml": "enduml"}
CMD_RE = re.compile(r"[\\@](%s)(?![A-Za-z])" % "|".join(VERBATIM_CMDS))
FORMULA_END = {"$": "\\f$", "[": "\\f]", "{": "\\f}", "(": "\\f)"}
IMAGE_RE = re.compile(r"!\[((?:[^\]\\\n]|\\.)*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")


def _skip_escapes_find(s, start, closer):
    """Index of the first unescaped `closer` in s[start:], or -1. Backslash pairs are skipped;
    a backtick ends the search (math never holds one; the closer would be inside a code span)."""
    i, n = start, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "`":
            return -1
        if s.startswith(closer, i):
            return i
        i += 1
    return -1


def math_body(tex, inline):
    """TeX as it goes between \\f$ / \\f[ delimiters."""
    if not inline:
        return tex
    # A bare | inside a table row ends the cell (Doxygen, like GitHub): \vert is the same symbol.
    out, i, n = [], 0, len(tex)
    while i < n:
        c = tex[i]
        if c == "\\":
            j = i + 1
            if j < n and tex[j].isalpha():
                while j < n and tex[j].isalpha():
                    j += 1
            else:
                j = min(j + 1, n)
            out.append(tex[i:j])
            i = j
        elif c == "|":
            nxt = tex[i + 1] if i + 1 < n else ""
            out.append("\\vert" + (" " if nxt.isalnum() else ""))
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def caption_text(alt):
    """Markdown image alt text -> the quoted caption of Doxygen's \\image command.

    Doxygen 1.9.4 rejects commands inside a caption (\\f$ included) but turns \\\\ into \\ and
    \\" into ". So the math goes out as MathJax's own \\(...\\), every backslash doubled."""
    def esc(s):
        return s.replace("\\", "\\\\").replace('"', '\\"')

    out, i, n = [], 0, len(alt)
    while i < n:
        c = alt[i]
        if c == "\\" and i + 1 < n:
            nxt = alt[i + 1]
            # Markdown escapes: \$ is a dollar, \] a bracket ...
            out.append(esc(nxt) if not nxt.isalnum() else esc(alt[i:i + 2]))
            i += 2
            continue
        if c == "$":
            m = _match_math(alt, i)
            if m:
                end, tex, display = m
                out.append(esc("\\(" + tex.strip() + "\\)"))
                i = end
                continue
        out.append(esc(c))
        i += 1
    return "".join(out).replace("\n", " ")


def _match_math(s, i):
    """If s[i] starts $...$, $`...`$ or $$...$$, return (end, tex, display), else None."""
    n = len(s)
    for opener, closer, display in (("$$", "$$", True), ("$`", "`$", False)):
        if s.startswith(opener, i):
            # display math skips escapes; inside $`...`$ (a code span) a backslash is literal
            j = _skip_escapes_find(s, i + 2, closer) if display else s.find(closer, i + 2)
            tex = s[i + 2:j]
            if j < 0 or not tex.strip() or BLANK_LINE_RE.search(tex):
                return None
            return j + 2, tex, display
    # Single dollar: pandoc's rules.
    if i + 1 >= n or s[i + 1].isspace() or s[i + 1] == "$":
        return None
    j = i + 1
    while j < n:
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "`" or (c == "\n" and BLANK_LINE_RE.match(s, j)):
            return None
        if c == "$":
            if not s[j - 1].isspace() and not (j + 1 < n and s[j + 1].isdigit()):
                return j + 1, s[i + 1:j], False
            return None
        j += 1
    return None


# Commands whose arguments are copied verbatim: a name (+ optional "text") or the rest of the line.
ARG_CMD_RE = re.compile(r"[\\@](?:ref|subpage|link|anchor|copydoc|cite|page|section|subsection)"
                        r"[ \t]+\S+(?:[ \t]+\"[^\"\n]*\")?")
LINE_CMD_RE = re.compile(r"[\\@](?:image|snippet|snippetlineno|include|includelineno|verbinclude|"
                         r"htmlinclude|dontinclude|example)(?![A-Za-z])[^\n]*")
HTML_TAG_RE = re.compile(r"</?[A-Za-z][^<>\n]*>")
LINK_TARGET_RE = re.compile(r"\]\([^()\s]*(?:\s+\"[^\"\n]*\")?\)")


def convert_prose(s):
    """Convert the math and images of a text that holds no fenced code block.

    Two Doxygen 1.9.4 quirks are handled here:
    * text between straight double quotes, even across lines and paragraphs, is not scanned
      for commands: "$x$" would stay raw, and a quote pair spanning a formula garbles it. So
      every double quote of the prose (not in code, HTML tags, link targets or command
      arguments) is written &quot;, which renders the same.
    * Doxygen reads `it's 'x'` as a ‘quoted’ text: such code spans get double backticks.
    * Doxygen writes a space before every inline formula, visible after "(" or a quote: a
      formula glued to the preceding character gets a WORD JOINER in front, and
      `--fix-html` (book.pages.fix_html) removes the joiner and that space from the generated pages.
    """
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" or (c == "@" and (i == 0 or s[i - 1].isspace())):
            # Doxygen formulas written natively: copy up to their end.
            if c == "\\" and s.startswith("\\f", i) and i + 2 < n and s[i + 2] in FORMULA_END:
                end = s.find(FORMULA_END[s[i + 2]], i + 3)
                end = n if end < 0 else end + 3
                out.append(s[i:end])
                i = end
                continue
            m = CMD_RE.match(s, i)
            if m:
                name = m.group(1)
                endcmd = VERBATIM_END.get(name, "end" + name)
                e = re.compile(r"[\\@]%s(?![A-Za-z])" % endcmd).search(s, m.end())
                end = n if not e else e.end()
                out.append(s[i:end])
                i = end
                continue
            m = ARG_CMD_RE.match(s, i) or LINE_CMD_RE.match(s, i)
            if m:
                out.append(m.group(0))
                i = m.end()
                continue
            if c == "\\":
                out.append(s[i:i + 2])  # an escape such as \$ or \\ stays as Doxygen wants it
                i += 2
                continue
            out.append(c)
            i += 1
            continue
        if c == "`":
            j = i
            while j < n and s[j] == "`":
                j += 1
            run = s[i:j]
            k = j
            close = -1
            while True:
                k = s.find(run, k)
                if k < 0:
                    break
                if (k + len(run) < n and s[k + len(run)] == "`"):
                    while k < n and s[k] == "`":
                        k += 1
                    continue
                close = k
                break
            if close >= 0 and not BLANK_LINE_RE.search(s, j, close):
                body = s[j:close]
                if run == "`" and "'" in body:
                    # Doxygen reads `text' as a ‘quoted’ word; a double-backtick span is safe
                    out.append("``" + body + "``")
                else:
                    out.append(s[i:close + len(run)])
                i = close + len(run)
            else:
                out.append(run)
                i = j
            continue
        if s.startswith("<!--", i):
            end = s.find("-->", i + 4)
            end = n if end < 0 else end + 3
            out.append(s[i:end])
            i = end
            continue
        if c == "<":
            m = HTML_TAG_RE.match(s, i)
            if m:
                out.append(m.group(0))
                i = m.end()
                continue
        if c == '"':
            out.append("&quot;")
            i += 1
            continue
        if s.startswith("](", i):
            m = LINK_TARGET_RE.match(s, i)
            if m:
                out.append(m.group(0))  # a link target, with its optional "title"
                i = m.end()
                continue
        if s.startswith("![", i):
            m = IMAGE_RE.match(s, i)
            if m and _is_local_image(m.group(2)):
                name = os.path.basename(m.group(2).split("#")[0].split("?")[0])
                cap = caption_text(m.group(1))
                out.append('\\image html %s "%s"' % (name, cap) if cap.strip()
                           else "\\image html %s" % name)
                # Keep the line count if the markup spanned lines.
                out.append("\n" * m.group(0).count("\n"))
                i = m.end()
                continue
        if c == "$":
            m = _match_math(s, i)
            if m:
                end, tex, display = m
                if display:
                    out.append("\\f[" + math_body(tex, False) + "\\f]")
                else:
                    glued = i > 0 and not s[i - 1].isspace()
                    out.append((GLUE if glued else "") + "\\f$" + math_body(tex, True) + "\\f$")
                i = end
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _is_local_image(target):
    t = target.lower().split("#")[0].split("?")[0]
    return "://" not in t and not t.startswith("data:") and t.endswith(IMAGE_EXTS)


def convert(text, page=None):
    return "".join(chunk if is_code else convert_prose(chunk)
                   for is_code, chunk in pieces(text, page))


def chapter_heading(path):
    """(id, title) of a chapter README (id chNN from its directory) or of its worked solutions
    (solutions.md, id solNN); the title from its first line '# Title' (an explicit '{#id}'
    there is allowed but not needed)."""
    nn = os.path.basename(os.path.dirname(os.path.abspath(path)))[:2]
    kind = "sol" if os.path.basename(path) == "solutions.md" else "ch"
    title = title_of(path)
    if title and title.id:
        return title.id, title.text
    return (kind + nn, title.text) if title and nn.isdigit() else None


def section_id(page_id, slug):
    """The site's anchor of a chapter section: chNN-<GitHub slug, ASCII only>."""
    return page_id + "-" + re.sub(r"[^a-z0-9_-]", "", slug)


SOURCE_EXTS = (".cpp", ".hpp", ".h")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def chapter_links(path, text, page=None, root=ROOT):
    """Site form of a chapter or docs page (of the book in `root`): headings get ids (chNN for
    the title, chNN-slug for sections, so GitHub's #slug links work here too) and Markdown links
    to chapters and their sections become \\ref; line count kept."""
    here = os.path.dirname(os.path.abspath(path))
    chapter = chapter_slug(path)
    own = page_id(path)
    lines = text.split("\n")
    page = page or parse(text)
    for h in page.headings if own else []:
        if "{#" in lines[h.line]:
            continue
        if h.level == 1:
            if chapter and own.startswith("sol"):
                lines[h.line] = "# %s {#%s}" % (h.text, own)
            elif chapter:
                lines[h.line] = "# %d · %s {#%s}" % (int(own[2:]), h.text, own)
        else:
            lines[h.line] = "%s %s {#%s}" % ("#" * h.level, h.text, section_id(own, h.slug))
    out = []
    for is_code, chunk in pieces("\n".join(lines), page):
        if is_code:
            out.append(chunk)
            continue

        def ref(m):
            label, target = m.group(1), m.group(2)
            anchor = "" if m.group(3) is None else "#" + m.group(3)
            page = own
            if target:
                full = os.path.normpath(os.path.join(here, target))
                if full.endswith(SOURCE_EXTS) and os.path.isfile(full):
                    # a source file: its page on the site (book.pages.sources), GitHub's
                    # #L12-L20 line anchor as the site's #L-12
                    line = re.match(r"#L(\d+)", anchor)
                    href = source_href(os.path.relpath(full, root),
                                             line.group(1) if line else 1)
                    if not line:
                        href = href.split("#")[0]
                    return '<a href="%s">%s</a>' % (href, label)
                page = page_id(full) if full.endswith(".md") else None
                if not page:
                    return m.group(0)
            elif not anchor or not own:
                return m.group(0)
            dest = section_id(page, anchor[1:]) if anchor else page
            breaks = label.count("\n")
            return '\\ref %s "%s"%s' % (dest, " ".join(label.split()).replace('"', "'"),
                                         "\n" * breaks)
        out.append(LINK.sub(ref, chunk))
    return "".join(out)


def page_id(path):
    """The site's id of a Markdown page: chNN for a chapter, the {#id} of a docs page's title
    ("index" for the main page), None for anything else."""
    if not os.path.isfile(path):
        return None
    if chapter_slug(path):
        return chapter_heading(path)[0]
    if os.path.basename(os.path.dirname(os.path.abspath(path))) != "docs":
        return None
    if os.path.basename(path) == "index.md":
        return "index"
    title = title_of(path)
    return title.id if title else None


def figure_captions(text, page=None):
    """An image alone on its line followed by an *italic paragraph* (the caption a Git host
    shows) becomes one image whose caption is that paragraph; line count kept."""
    lines = text.split("\n")
    for k, j in (page or parse(text)).figures():
        caption = " ".join(l.strip() for l in lines[k + 1:j + 1])
        if caption.endswith("*") and len(caption) > 2:
            # Doxygen 1.9.4 allows no command in a caption: links keep their text only.
            caption = LINK.sub(r"\1", caption[1:-1])
            caption = caption.replace("[", "\\[").replace("]", "\\]")
            lines[k] = "![%s](%s)" % (caption, FIGURE_IMAGE.match(lines[k]).group(1))
            for i in range(k + 1, j + 1):
                lines[i] = ""
    return "\n".join(lines)


def test_links(root, text, page=None):
    """Backticked names of doctest tests become links to their source line (site only)."""
    where = test_locations(root)

    def link(m):
        name = m.group(1)
        if name not in where or len(name.split()) < 3:
            return m.group(0)
        path, line = where[name]
        esc = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return '<a class="test-link" href="%s"><code>%s</code></a>' % (
            source_href(path, line), esc)
    out = []
    for is_code, chunk in pieces(text, page):
        out.append(chunk if is_code else re.sub(r"(?<!`)`([^`\n]+)`(?!`)", link, chunk))
    return "".join(out)


def chapter_nav(path):
    """The 'previous / contents / next' line for a chapter README, or '' for other pages."""
    path = os.path.abspath(path)
    chapter_dir = os.path.dirname(path)
    chapters_root = os.path.dirname(chapter_dir)
    if os.path.basename(path) != "README.md" or os.path.basename(chapters_root) != "chapters":
        return ""
    order = []
    for d in sorted(os.listdir(chapters_root)):
        readme = os.path.join(chapters_root, d, "README.md")
        head = chapter_heading(readme) if os.path.isfile(readme) else None
        if head:
            order.append((os.path.join(chapters_root, d), head))
    pos = [k for k, (d, _) in enumerate(order) if d == chapter_dir]
    if not pos:
        return ""
    k = pos[0]

    def ref(page, text):
        text = text.replace("$", "").replace("\\", "").replace('"', "")
        return '\\ref %s "%s"' % (page, text)

    def numbered(head):
        page, title = head
        return "%d · %s" % (int(page[2:]), title) if re.fullmatch(r"ch\d\d", page) else title

    prev = (ref(order[k - 1][1][0], "← " + numbered(order[k - 1][1])) if k > 0
            else ref("index", "← Contents"))
    nxt = (ref(order[k + 1][1][0], numbered(order[k + 1][1]) + " →") if k + 1 < len(order)
           else ref("index", "Contents ↑"))
    return ('<div class="chapter-nav"><span class="nav-prev">%s</span>'
            '<span class="nav-next">%s</span></div>\n' % (prev, nxt))


def heading_math_lines(text, page=None):
    """Line numbers of ATX headings that hold $-math: Doxygen cannot typeset page titles or
    section titles (the title shows as raw \\f$ in the navigation, or Doxygen errors)."""
    lines = text.split("\n")
    return [h.line + 1 for h in (page or parse(text)).headings
            if any(_match_math(lines[h.line], m.start()) for m in re.finditer(r"\$", lines[h.line]))]


def live_figures(text, page=None):
    """A "<!-- live: NAME -->" line (invisible on a Git host) becomes the place of live figure
    NAME on the site (code/live/live.js fills it; without JavaScript it stays empty)."""
    lines = text.split("\n")
    for i, m in (page or parse(text)).marked("live"):
        lines[i] = ('\\htmlonly[block]<div class="live-figure" data-widget="%s"></div>'
                    '\\endhtmlonly' % m.group(1))
    return "\n".join(lines)


def solution_links(path, text, page=None):
    """The worked solutions in the instructor's site (the student copy has no solutions.md):
    a chapter's exercises end with a link to them, in an "\\if instructor" section (the
    reader's site, which has no solutions page, drops it), and the solutions page opens with a
    banner that says whose page it is and leads back to the chapter."""
    here = os.path.dirname(os.path.abspath(path))
    nn = os.path.basename(here)[:2]
    if os.path.basename(path) == "README.md" and os.path.isfile(
            os.path.join(here, "solutions.md")):
        note = ('\\if instructor <div class="instructors-only">Instructors: the worked solutions '
                'of these exercises are on \\subpage sol%s (in the instructor\'s copy only).'
                '</div> \\endif\n\n' % nn)
        lines = text.split("\n")
        for h in (page or parse(text)).headings:
            if lines[h.line].startswith("## References"):
                lines[h.line] = note + lines[h.line]
                return "\n".join(lines)
        return text
    if os.path.basename(path) == "solutions.md":
        lines = text.split("\n")
        banner = ('<div class="instructors-only">Instructors only · \\ref ch%s "← Chapter %s"'
                  '</div>' % (nn, int(nn)))
        if len(lines) > 2 and not lines[1].strip():
            lines[1] = banner
            return "\n".join(lines)
    return text


# ---- the site's view --------------------------------------------------------------------------

# Chinese characters and punctuation (CJK ideographs, their symbols and full-width forms).
CHINESE_RUN = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")
# Where a span cannot go: code, math, comments, HTML tags, links and images (a label becomes
# a \\ref's quoted text or an image's alt text).
NOT_PROSE = re.compile(r"`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|<!--.*?-->|<[^<>\n]*>|"
                       r"!?\[[^\]\n]*\]\([^()\s]*\)", re.S)


EXTERNAL_LINK = re.compile(r"\[([^\]\n]*)\]\(([a-z]+:[^()\s]*)\)")


def span(run):
    return '<span lang="zh">%s</span>' % run.group(0)


def chinese_spans(text, page=None):
    """Runs of Chinese in prose get <span lang="zh">, so a screen reader reads them in Chinese
    and the browser picks Chinese glyph forms (WCAG 3.1.2, language of parts); headings, code,
    math and the labels of links within the book (a \\ref's quoted text) are left as they
    are. Line count kept."""
    page = page or parse(text)
    headings = {h.line for h in page.headings}
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if i in headings or page.in_fence(i) or not CHINESE_RUN.search(line):
            continue
        out, at = [], 0
        for m in list(NOT_PROSE.finditer(line)) + [None]:
            end = m.start() if m else len(line)
            out.append(CHINESE_RUN.sub(span, line[at:end]))
            if m:
                # an outside link with a Chinese label (a source's title) is Chinese as a
                # whole: Doxygen prints a tag inside a link label as text
                outside = EXTERNAL_LINK.fullmatch(m.group(0))
                out.append('<span lang="zh">%s</span>' % m.group(0)
                           if outside and CHINESE_RUN.search(outside.group(1)) else m.group(0))
                at = m.end()
        lines[i] = "".join(out)
    return "\n".join(lines)


def site_markdown(path, text, out_dir, build_info=None, root=ROOT):
    """What Doxygen reads of a page of the book in `root` (the repository, or for the reader's
    site the student copy, whose code is the stubs), and its model: the build's code, output
    and numbers (book.pages.sync), heading ids and chapter links, figure captions, live
    figures, the About page's version and citation (book.pages.about, from build_info), the
    language of Chinese runs, test links.
    The page is parsed once the build's regions are in; the steps after change lines, not
    blocks, so they all read that one model (reparsed only if a step adds lines)."""
    try:
        text = site_text(root, out_dir, os.path.abspath(path), text, source_href)
    except PageError as err:
        sys.stderr.write("%s:1: error: %s\n" % (path, err))
    page = parse(text)
    text = figure_captions(text, page)
    text = live_figures(text, page)
    text = about_parts(text, page, root, build_info)
    text = chinese_spans(text, page)
    text = chapter_links(path, text, page, root)
    linked = solution_links(path, text, page)
    if linked.count("\n") != text.count("\n"):
        page = parse(linked)
    return test_links(root, linked, page), page


def main(argv):
    if len(argv) >= 3 and argv[1] == "--fix-html":
        fix_html(*argv[2:])
        return 0
    options = {}
    while len(argv) > 3 and argv[1] in ("--out", "--build-info", "--root"):
        options[argv[1]] = argv[2]
        argv = argv[:1] + argv[3:]
    out_dir = options.get("--out")
    if len(argv) != 2 or ("--build-info" in options and not out_dir):
        sys.stderr.write("usage: python -m book.pages.site [--out PROGRAM_OUTPUT_DIR "
                         "[--build-info FILE]] [--root BOOK] FILE.md  |  "
                         "python -m book.pages.site --fix-html HTML_DIR [NARROW_DIR...]\n")
        return 2
    with open(argv[1], encoding="utf-8", newline="") as f:
        text = f.read()
    page = parse(text)
    if out_dir:
        text, page = site_markdown(argv[1], text, out_dir, options.get("--build-info"),
                                   os.path.abspath(options.get("--root", ROOT)))
    out = convert(text, page)
    for n in heading_math_lines(text, page):
        sys.stderr.write("%s:%d: error: math in a heading: Doxygen cannot typeset titles; "
                         "write it in words or Unicode (e.g. √d)\n" % (argv[1], n))
    nav = chapter_nav(argv[1])
    if nav:
        # previous / next above the text too, on the blank line under the title (the line
        # count stays); the page's table of contents (Doxygen puts it at the top)
        lines = out.split("\n")
        if len(lines) > 2 and not lines[1].strip():
            lines[1] = nav.rstrip("\n").replace('class="chapter-nav"',
                                                 'class="chapter-nav chapter-nav-top"')
        out = "\n".join(lines)
        if not out.endswith("\n"):
            out += "\n"
        out += "\n" + nav + "\n\\tableofcontents\n"
    sys.stdout.buffer.write(out.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
