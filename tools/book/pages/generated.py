"""The generated region of a page (between `<!-- bench:begin -->` and `<!-- bench:end -->`):
text a tool writes from a run, kept in the page so that a Git host shows it too.
book.performance writes the performance page's and chapter 03's from ./book bench."""
from .model import parse, read


def replace_generated(text, generated):
    """The text with `generated` between its region's markers; unchanged when it has none."""
    page = parse(text)
    region = page.generated()
    if region is None:
        return text
    begin, end = region
    return "\n".join(page.lines[:begin + 1] + [generated] + page.lines[end:])


def write_generated(path, generated):
    """Rewrites the generated region of the page at `path`."""
    text = read(path)
    new = replace_generated(text, generated)
    if new != text:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(new)
