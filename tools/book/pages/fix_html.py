"""After Doxygen ran: the generated pages' fixes the filter (book.pages.site) prepared.

python -m book.pages.site --fix-html HTML_DIR [NARROW_DIR...] runs it.
"""
import functools
import os
import re
import shutil

GLUE = "\u2060"       # WORD JOINER: the filter marks a formula glued to the preceding character

FIGURE_HTML = re.compile(r'<div class="image">\s*<object type="image/svg\+xml" data="([^"]+)"'
                         r'( style="pointer-events: none;")?></object>\s*'
                         r'<div class="caption">\s*(.*?)</div>', re.S)


# An inline formula and the punctuation glued to it: "(\(x\))," must not break after the
# formula, leaving "," or ")" at the start of the next line.
GLUED_MATH = re.compile(r'([(\[“"‘]?)(\\\((?:(?!\\\)|<).)*\\\))([,.;:!?)\]”"’]{1,3})', re.S)


def keep_punctuation(text):
    """Wraps each inline formula that has punctuation glued to it in a no-break span (outside
    scripts and code: <script>, <pre> and code fragments are left alone)."""
    parts = re.split(r'(<script\b.*?</script>|<pre\b.*?</pre>|'
                     r'<div class="fragment">.*?</div><!-- fragment -->)', text, flags=re.S)
    for k in range(0, len(parts), 2):
        parts[k] = GLUED_MATH.sub(r'<span class="math-nowrap">\1\2\3</span>', parts[k])
    return "".join(parts)


def figure_html(m, narrow=frozenset()):
    """A figure opens at full size when clicked, and its caption is its text alternative. A
    figure drawn for a phone too (in `narrow`: narrow/<name>.svg) shows that drawing below
    site.css's phone width instead, not as a link: the full-size one would open smaller there."""
    src, caption = m.group(1), m.group(3)
    plain = re.sub(r"<[^>]+>", "", caption)
    plain = re.sub(r"\\[()]", "", plain).replace('"', "&quot;").strip()
    # the box scrolls on a phone when the figure has no phone drawing (site.css)
    wide = ('<div class="figure-scroll"><a class="figure-link" href="%s" title="Open the figure '
            'at full size"><object type="image/svg+xml" data="%s" role="img" aria-label="%s" '
            'style="pointer-events: none;"></object></a></div>' % (src, src, plain))
    if src not in narrow:
        return '<div class="image">%s\n<div class="caption">\n%s</div>' % (wide, caption)
    return ('<div class="image has-narrow">%s<object class="figure-narrow" type="image/svg+xml" '
            'data="narrow/%s" role="img" aria-label="%s"></object>\n<div class="caption">\n%s'
            '</div>' % (wide, src, plain, caption))


def copy_narrow_figures(html_dir, narrow_dirs):
    """The phone drawings (<narrow dir>/<name>.svg) of the figures the site shows, copied to
    html_dir/narrow/: their names."""
    names = set()
    for narrow_dir in narrow_dirs:
        if not os.path.isdir(narrow_dir):
            continue
        os.makedirs(os.path.join(html_dir, "narrow"), exist_ok=True)
        for f in sorted(os.listdir(narrow_dir)):
            if f.endswith(".svg") and os.path.isfile(os.path.join(html_dir, f)):
                shutil.copyfile(os.path.join(narrow_dir, f), os.path.join(html_dir, "narrow", f))
                names.add(f)
    return names


# Doxygen's menu entry for its list of related pages, which is empty (every page of the book is
# a subpage of the main page): a reader would open an empty page.
EMPTY_PAGES_ENTRY = re.compile(r'\{text:"Related Pages",url:"pages\.html"\},?\n?')


# The <html> tag of a page that does not name its language: Doxygen's templates (the pages'
# header and its own search pages) write none, so a screen reader would guess it.
HTML_WITHOUT_LANG = re.compile(r'<html\b(?![^>]*\blang=)([^>]*)>')


# The parts of a Doxygen page, named as landmarks (Doxygen 1.9's templates use bare divs): a
# screen reader jumps to the main text, the contents tree or the title bar by these.
LANDMARKS = {"top": 'role="banner"', "side-nav": 'role="navigation" aria-label="Contents"',
             "doc-content": 'role="main"', "nav-path": 'role="contentinfo"'}
LANDMARK_DIV = re.compile(r'<div id="(%s)"(?![^>]*\brole=)' % "|".join(LANDMARKS))


# The file list's icon links to a header's source (no text: a screen reader says "link").
SOURCE_ICON_LINK = re.compile(r'<a href="([^"]+)_source\.html"><span class="icondoc"></span></a>')


def make_accessible(text):
    """Landmarks, the page title as its heading, names for the icon links; a title for
    Doxygen's own search pages (search/*.html, which have an empty one)."""
    text = LANDMARK_DIV.sub(lambda m: '%s %s' % (m.group(0), LANDMARKS[m.group(1)]), text)
    text = text.replace('<div class="title">',
                        '<div class="title" role="heading" aria-level="1">', 1)
    text = SOURCE_ICON_LINK.sub(r'<a href="\1_source.html" aria-label="source"><span '
                                r'class="icondoc"></span></a>', text)
    return text.replace("<title></title>", "<title>Search results</title>", 1)


def fix_html(html_dir, *narrow_dirs):
    """Remove the WORD JOINER marks and the space Doxygen put after them (see convert_prose);
    make figures links to their full-size SVG with their caption as text alternative; name
    every page's language and its landmarks; drop the menu's link to the empty list of related pages.
    narrow_dirs: where the figures drawn for a phone are (book.pages.site --fix-html)."""
    narrow = copy_narrow_figures(html_dir, narrow_dirs)
    with_narrow = functools.partial(figure_html, narrow=narrow)
    changed = 0
    for root, _, files in os.walk(html_dir):
        for f in files:
            if not f.endswith((".html", ".js")):
                continue
            p = os.path.join(root, f)
            with open(p, encoding="utf-8", newline="") as fh:
                text = fh.read()
            new = re.sub(GLUE + "[ \t]?", "", text)
            if f == "menudata.js":
                new = EMPTY_PAGES_ENTRY.sub("", new)
            if f.endswith(".html"):
                new = keep_punctuation(FIGURE_HTML.sub(with_narrow, new))
                new = HTML_WITHOUT_LANG.sub(r'<html\1 lang="en" xml:lang="en">', new, count=1)
                new = make_accessible(new)
            if new == text:
                continue
            with open(p, "w", encoding="utf-8", newline="") as fh:
                fh.write(new)
            changed += 1
    return changed
