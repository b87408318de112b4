"""The About page's build-supplied parts (docs/about.md): a line `<!-- about: NAME -->`
(invisible on a Git host) becomes, on the site,

    version  the release's version and date (CITATION.cff) and the commit this site was built
             from, with its date (the build's build-info.json: docs/build_info.cmake)
    pdf      the link to the book as one PDF (book.pdf writes it next to the pages)
    bibtex   the BibTeX entry, made from CITATION.cff

so the version, the date and the citation are written once, in CITATION.cff, and the site test
(tests/site/check_about.py) compares the page with it.
"""
import html
import json
import os

import yaml


PDF_NAME = "attention-verified.pdf"


def citation(root):
    """CITATION.cff as a dict (Debian's python3-yaml)."""
    with open(os.path.join(root, "CITATION.cff"), encoding="utf-8") as f:
        return yaml.safe_load(f)


def build_info(path):
    """{"commit", "date"} of the build (git describe, the commit's date), or unknowns."""
    if not path:
        return {"commit": "unknown", "date": "unknown"}
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"commit": "unknown", "date": "unknown"}


def author_names(cff):
    return [a.get("name") or " ".join(filter(None, (a.get("given-names"), a.get("family-names"))))
            for a in cff.get("authors") or []]


def bibtex(cff):
    """The BibTeX entry of the release CITATION.cff describes."""
    fields = [("title", cff["title"]),
              ("author", " and ".join("{%s}" % n for n in author_names(cff))),
              ("year", str(cff["date-released"])[:4]),
              ("version", str(cff["version"])),
              ("date", str(cff["date-released"]))]
    if cff.get("url") or cff.get("repository-code"):
        fields.append(("url", cff.get("url") or cff.get("repository-code")))
    width = max(len(k) for k, _ in fields)
    return "@software{attention_verified,\n%s\n}" % ",\n".join(
        "  %s = {%s}" % (k.ljust(width), v) for k, v in fields)


def about_html(name, cff, info):
    """The site's HTML for the marker `<!-- about: NAME -->`, on one line."""
    if name == "version":
        return ('<p class="book-version">Version <span class="release-version">%s</span> of '
                '<span class="release-date">%s</span> (<code>CITATION.cff</code>). This site was '
                'built from commit <code class="build-commit">%s</code> of '
                '<span class="build-date">%s</span>.</p>' % tuple(html.escape(str(v)) for v in (
                    cff["version"], cff["date-released"], info["commit"], info["date"])))
    if name == "pdf":
        return ('<p>The whole book, every chapter with its figures and code, as one file to '
                'print or read offline: <a class="book-pdf" href="%s">%s</a>.</p>'
                % (PDF_NAME, PDF_NAME))
    if name == "bibtex":
        return ('<pre class="bibtex">%s</pre>'
                % html.escape(bibtex(cff)).replace("\n", "&#10;"))
    raise ValueError("unknown about marker '%s' (version, pdf, bibtex)" % name)


def about_parts(text, page, root, info_path):
    """The page with each about marker replaced by its HTML (line count kept)."""
    marked = page.marked("about")
    if not marked:
        return text
    cff, info = citation(root), build_info(info_path)
    lines = text.split("\n")
    for i, m in marked:
        lines[i] = "\\htmlonly[block]%s\\endhtmlonly" % about_html(m.group(1), cff, info)
    return "\n".join(lines)

