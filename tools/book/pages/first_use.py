"""The notation table's "ch." column names the chapter where each symbol first appears
(python -m book.pages.first_use ROOT).

For each row of the symbol table (docs/notation.md, part 1) the first symbol of its first
cell is looked up in the math ($...$, $$...$$, outside code) of chapters/NN-*/README.md; the
earliest chapter that writes it must be the row's chapter. A letter is matched only where it
is not part of a longer name (W_Q does not count as W, \\mathbf{H} counts as H). Symbols that a
chapter also uses with another meaning, or quotes from a source, are listed in OTHER_USES with
the chapter to skip and why. Exits 1 listing the rows that disagree, otherwise 0.
"""
import glob
import os
import re
import sys

from .model import read

# symbol -> {chapter whose use of that letter is another object: why}
OTHER_USES = {
    "H": {"01": "the course notes' hidden state, quoted"},
    "L": {"01": "a loss, in the note on the sqrt(d) scale"},
    "D": {"01": "the course notes' width, quoted", "02": "a data set"},
    "g": {"01": "the gap between the two largest scores"},
    "p": {"01": "a row of softmax weights", "02": "the density of the inputs",
          "03": "a probability density"},
    "P": {"05": "the 0/1 matrix saturated attention tends to (see 'kept apart')"},
}
# rows whose symbol stands for a pattern of writing: what a chapter writes instead (a regex)
WRITTEN_AS = {
    "\\operatorname{Attn}(X)": r"\\operatorname\{Attn\}",
    "(x_i, y_i)": r"(?<![A-Za-z\\_^])y_i",
    "[\\,q\\,]": r"\[[A-Za-z]\] = \\mathrm",
    "\\mathbf{1}_n": r"\\mathbf\{1\}",
    "\\lVert \\cdot \\rVert": r"\\lVert",
    "[\\,B \\;\\; C\\,]": r"\\begin\{bmatrix\}",
}
# rows that repeat a symbol of an earlier row with another meaning: not checked
REPEATED = {"h", "W_Q", "X"}


def table_rows(text):
    """(first symbol, chapter) of each row of the symbol table."""
    part = text.split("### Symbols", 1)[1].split("**Symbols that are kept apart.**", 1)[0]
    rows = []
    for line in part.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("$") or not re.fullmatch(r"\d\d", cells[-1]):
            continue
        first = re.findall(r"\$(.*?)\$", cells[0])[0]
        rows.append((first.split("=")[0].strip().rstrip(","), cells[-1]))
    return rows


def chapter_math(root):
    """{NN: the math of chapter NN's README, code removed}."""
    found = {}
    for path in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*", "README.md"))):
        text = re.sub(r"```.*?```", "", read(path), flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        spans = re.findall(r"\$\$(.*?)\$\$|\$([^$]*?)\$", text, flags=re.S)
        found[os.path.basename(os.path.dirname(path))[:2]] = " ".join(a or b for a, b in spans)
    return found


def problems(root):
    maths = chapter_math(root)
    found, seen = [], set()
    for symbol, chapter in table_rows(read(os.path.join(root, "docs", "notation.md"))):
        if symbol in seen and symbol in REPEATED:
            continue
        seen.add(symbol)
        # not part of a longer name: no letter, backslash, _ or ^ before it, no letter,
        # subscript or superscript (i) after it
        pattern = WRITTEN_AS.get(symbol) or (
            r"(?<![A-Za-z\\_^])" + re.escape(symbol) + r"(?![A-Za-z_]|\^\{\()")
        skip = OTHER_USES.get(symbol, {})
        uses = [n for n in sorted(maths) if n not in skip and re.search(pattern, maths[n])]
        if not uses:
            found.append(f"docs/notation.md: ${symbol}$ (ch. {chapter}) is in no chapter's math")
        elif uses[0] != chapter:
            found.append(f"docs/notation.md: ${symbol}$ says ch. {chapter}, first written in "
                         f"chapter {uses[0]}")
    return found


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = problems(argv[1])
    for p in found:
        print(p)
    print(f"first use: {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
