#!/usr/bin/env python3
"""The PDF of the book (book.pdf) holds the whole book: every chapter, its figures, its code.

    check_pdf.py --pdf build/release/site/html/attention-verified.pdf --root . --out build/release/out

(with tools/ on PYTHONPATH, as CMake's ${BOOK_PYTHON} runs it)

Read with poppler-utils (pdfinfo, pdftotext). The PDF fails when

  * no page starts with a chapter's title (chapters/NN-slug/README.md's first heading; the
    main page's list of chapters does not count);
  * a figure is missing: each chapter figure's caption number ("Figure 2.3.") and a label drawn
    inside its SVG (out/NN-slug/NAME.svg, the title or axis text gnuplot wrote) must be there,
    the second showing that the figure itself was printed, not only its caption;
  * a chapter's code is missing: the first line of each chapter's first code quote;
  * it has fewer than 5 pages per chapter or more than 1000 pages (a page per figure or
    a runaway layout).

Exit status: 0 pass, 1 problems (listed), 2 no PDF or no poppler-utils.
"""
import argparse
import glob
import html
import os
import re
import shutil
import subprocess
import sys

from book.pages.model import FIGURE_IMAGE, parse, read, title_of

SVG_TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)


def squeeze(s):
    return re.sub(r"\s+", "", s)


def svg_label(path):
    """The longest text gnuplot drew in the figure: a title or an axis label."""
    texts = [" ".join(html.unescape(re.sub(r"<[^>]*>", "", t)).split())
             for t in SVG_TEXT.findall(read(path))]
    texts = [t for t in texts if re.search(r"[A-Za-z]{3}", t)]
    return max(texts, key=len) if texts else None


def chapter_expectations(root, out_dir):
    """(chapter dir, title, [figure labels], [figure svg labels], first code line)."""
    found = []
    for readme in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*", "README.md"))):
        slug = os.path.basename(os.path.dirname(readme))
        nn = int(slug[:2])
        page = parse(read(readme))
        figures = [FIGURE_IMAGE.match(page.lines[k]).group(1) for k, _ in page.figures()]
        labels = ["Figure %d.%d." % (nn, i + 1) for i in range(len(figures))]
        drawn = []
        for fig in figures:
            svg = os.path.join(out_dir, slug, os.path.basename(fig))
            label = svg_label(svg) if os.path.isfile(svg) else None
            if label:
                drawn.append((os.path.basename(fig), label))
        code = None
        for fence in page.fences:
            body = [l for l in page.lines[fence.first + 1:fence.last] if l.strip()]
            if fence.info.startswith("cpp") and body:
                code = body[0].strip()
                break
        found.append((slug, title_of(readme).text, labels, drawn, code))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pdf", required=True)
    ap.add_argument("--root", required=True, help="the book's root (chapters/)")
    ap.add_argument("--out", required=True, help="the programs' output directory (figures)")
    args = ap.parse_args()
    if not (shutil.which("pdftotext") and shutil.which("pdfinfo")):
        print("check_pdf: pdftotext/pdfinfo not found (apt-get install poppler-utils)")
        return 2
    if not os.path.isfile(args.pdf):
        print(f"check_pdf: no PDF at {args.pdf} (build the target pdf)")
        return 2
    info = subprocess.run(["pdfinfo", args.pdf], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", args.pdf, "-"], capture_output=True,
                          text=True, check=True).stdout
    flat, tight = " ".join(text.split()), squeeze(text)
    # the text of each printed page: a chapter's own page starts with its title
    # (spaces and hyphens left out: pdftotext joins "unit-" and "free" at a line break)
    page_starts = [squeeze(p).replace("-", "")[:300] for p in text.split("\f")]
    chapters = chapter_expectations(os.path.abspath(args.root), os.path.abspath(args.out))
    problems, n_figures, n_drawn = [], 0, 0
    for slug, title, labels, drawn, code in chapters:
        heading = re.compile(r"(\d+·)?" + re.escape(squeeze(title).replace("-", "")))
        if not any(heading.match(p) for p in page_starts):
            problems.append(f"{slug}: no page starts with its title '{title}' (the chapter is "
                            "not in the PDF)")
        for label in labels:
            n_figures += 1
            if label not in flat:
                problems.append(f"{slug}: no '{label}' (a figure's caption) in the PDF")
        for name, label in drawn:
            n_drawn += 1
            if squeeze(label) not in tight:
                problems.append(f"{slug}: figure {name} is not drawn in the PDF (its text "
                                f"'{label}' is missing)")
        if not code:
            problems.append(f"{slug}: no code quote found in README.md")
        elif squeeze(code) not in tight:
            problems.append(f"{slug}: its code is missing from the PDF ('{code}')")
    if not 5 * len(chapters) <= pages <= 1000:
        problems.append(f"{pages} pages: expected between {5 * len(chapters)} and 1000")
    print(f"check_pdf: {pages} pages, {len(chapters)} chapters, {n_figures} figure captions, "
          f"{n_drawn} figures' own text")
    for p in problems:
        print("  - " + p)
    print("FAIL: %d problems" % len(problems) if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
