"""Every test a chapter cites exists (python -m book.pages.cited ROOT).

The chapters name the test behind each claim after "Test:" or "Tests:", in backticks, in the
same paragraph or in the list that follows (book.pages.model.citations). Each such name (a span
of three or more words; shorter spans there are code) must be the name of a doctest TEST_CASE in
chapters/*/test*.cpp or tests/lib/*.cpp, so that renaming or deleting a test cannot leave the
book pointing at nothing.

The worked solutions (chapters/*/solutions.md, instructor's copy only) also mark every numeric
answer: `<!--checked-->0.68` (an opening $ may follow the marker). Each such number must equal
a numeric literal in the body of a test cited in the same paragraph, so that the number on the
page is the one a test asserts (2.3 \\times 10^{-4} matches 2.3e-4; 35% matches 35 or 0.35).
Those marks are on their way out: a converted chapter shows its solutions' numbers from the
build instead (<!--#sol:NN.M.key-->, book.pages.sync), and its chapters/NN-*/test_solutions.cpp
may not use doctest::Approx(x).epsilon(e) without .scale(0), an absolute tolerance for
|x| < 1 (book.doctest_sources.absolute_approx). Once no chapter has <!--checked--> marks left,
both the marks and the "converted" condition go.

Exits 1, listing the missing names and unchecked answers, otherwise 0.
"""
import glob
import os
import re
import sys

from ..doctest_sources import absolute_approx, test_bodies, test_locations
from .model import CODE_SPAN, MARKERS, citations, parse, read, unquoted

CPP_NUMBER = re.compile(r"(?<![\w.])(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)(?![\w.])")


def same_value(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def unchecked_answers(path, bodies):
    """(line, text, cited names) of every <!--checked--> number of `path` that no test cited in
    its paragraph has as a literal."""
    lines = unquoted(read(path).split("\n"))
    if lines and lines[-1] == "":
        lines.pop()  # the file's last newline ends a line; it does not start one
    citation, checked = MARKERS["citation"].pattern, MARKERS["checked"].pattern
    bad, start = [], 0
    for i in range(len(lines) + 1):
        if i < len(lines) and lines[i].strip():
            continue
        para = "\n".join(lines[start:i])
        cited_names = []
        for m in citation.finditer(para):
            cited_names += [n for n in CODE_SPAN.findall(para[m.end():])
                            if len(n.split()) >= 3]
        for m in checked.finditer(para):
            line = start + para.count("\n", 0, m.start()) + 1
            sig = m.group(1)
            mant, _, exp = re.sub(r"[ \t]*\\times[ \t]*10\^\{(-?\d+)\}", r"e\1", sig).partition("e")
            value = abs(float(mant + ("e" + exp if exp else "")))
            wanted = [value, value / 100] if m.group(2) else [value]
            literals = [float(x) for n in cited_names if n in bodies
                        for x in CPP_NUMBER.findall(bodies[n])]
            if not any(same_value(v, x) for v in wanted for x in literals):
                bad.append((line, sig + m.group(2), cited_names))
        start = i + 1
    return bad


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    names = set(test_locations(root))
    missing, count = [], 0
    for readme in sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md")) +
                         glob.glob(os.path.join(root, "chapters", "*", "solutions.md"))):
        for line, name in citations(parse(read(readme))):
            count += 1
            if name not in names:
                missing.append(f"{os.path.relpath(readme, root)}:{line + 1}: "
                               f"no test named `{name}`")
    bodies = test_bodies(root)
    answers = 0
    for page in sorted(glob.glob(os.path.join(root, "chapters", "*", "solutions.md"))):
        answers += len(MARKERS["checked"].pattern.findall(read(page)))
        for line, number, cited_names in unchecked_answers(page, bodies):
            where = ", ".join(f"`{n}`" for n in cited_names) or "no test cited in its paragraph"
            missing.append(f"{os.path.relpath(page, root)}:{line}: the checked number {number} "
                           f"is not a literal of the cited test ({where})")
        if not MARKERS["checked"].pattern.search(read(page)):  # converted to build numbers
            tests = os.path.join(os.path.dirname(page), "test_solutions.cpp")
            for line in absolute_approx(read(tests)) if os.path.isfile(tests) else []:
                missing.append(f"{os.path.relpath(tests, root)}:{line}: Approx(...).epsilon(...) "
                               "without .scale(0) is an absolute tolerance below 1; make it "
                               "relative")
    for m in missing:
        print(m)
    print(f"cited_tests: {count} citations, {answers} checked answers in the solutions, "
          f"{len(missing)} problems ({len(names)} tests known)")
    return 1 if missing or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
