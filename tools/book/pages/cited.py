#!/usr/bin/env python3
"""Every test a chapter cites exists.

usage: cited_tests.py ROOT

The chapters name the test behind each claim after "Test:" or "Tests:", in backticks, in the
same paragraph or in the list that follows. Each such name (a span of three or more words;
shorter spans there are code) must be the name of a doctest
TEST_CASE in chapters/*/test*.cpp or tests/lib/*.cpp, so that renaming or deleting a test
cannot leave the book pointing at nothing.

The worked solutions (chapters/*/solutions.md, instructor's copy only) also mark every numeric
answer: `<!--checked-->0.68` (an opening $ may follow the marker). Each such number must equal
a numeric literal in the body of a test cited in the same paragraph, so that the number on the
page is the one a test asserts (2.3 \\times 10^{-4} matches 2.3e-4; 35% matches 35 or 0.35).

Exits 1, listing the missing names and unchecked answers, otherwise 0.
"""
import glob
import os
import re
import sys

MARKER = re.compile(r"\bTests?:")
SPAN = re.compile(r"`([^`]+)`")
# The name may be split into adjacent string literals ("a " "b"), as clang-format does.
TEST_CASE = re.compile(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def test_locations(root):
    """{test name: (path relative to root, line of its TEST_CASE)}."""
    where = {}
    files = sorted(glob.glob(os.path.join(root, "chapters", "*", "test*.cpp")))
    files += sorted(glob.glob(os.path.join(root, "tests", "lib", "*.cpp")))
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in TEST_CASE.finditer(text):
            name = "".join(LITERAL.findall(m.group(1))).replace('\\"', '"')
            where.setdefault(name, (os.path.relpath(path, root), text.count("\n", 0, m.start()) + 1))
    return where


def test_bodies(root):
    """{test name: its source text, up to the next TEST_CASE}."""
    bodies = {}
    files = sorted(glob.glob(os.path.join(root, "chapters", "*", "test*.cpp")))
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found = list(TEST_CASE.finditer(text))
        for m, after in zip(found, found[1:] + [None]):
            name = "".join(LITERAL.findall(m.group(1))).replace('\\"', '"')
            bodies.setdefault(name, text[m.end():after.start() if after else len(text)])
    return bodies


CHECKED = re.compile(r"<!--checked-->\$?(-?\d+(?:\.\d+)?(?:e[-+]?\d+|[ \t]*\\times[ \t]*10\^\{-?\d+\})?)(%?)")
CPP_NUMBER = re.compile(r"(?<![\w.])(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)(?![\w.])")


def same_value(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def unchecked_answers(path, bodies):
    """(line, text) of every <!--checked--> number of `path` that no test cited in its
    paragraph has as a literal."""
    with open(path, encoding="utf-8") as f:
        lines = [re.sub(r"^\s*>\s?", "", line.rstrip("\n")) for line in f]
    bad, start = [], 0
    for i in range(len(lines) + 1):
        if i < len(lines) and lines[i].strip():
            continue
        para = "\n".join(lines[start:i])
        cited_names = []
        for m in MARKER.finditer(para):
            cited_names += [n for n in SPAN.findall(para[m.end():]) if len(n.split()) >= 3]
        for m in CHECKED.finditer(para):
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


def test_names(root):
    return set(test_locations(root))


def cited(readme):
    """(line number, name) for every backticked name after a Test(s): marker."""
    with open(readme, encoding="utf-8") as f:
        # Quote markers off, so that "> Tests: ..." notes read like plain paragraphs.
        lines = [re.sub(r"^\s*>\s?", "", line.rstrip("\n")) for line in f]
    found = []
    for i, line in enumerate(lines):
        m = MARKER.search(line)
        if not m:
            continue
        block, j = [(i, line[m.end():])], i + 1
        while j < len(lines) and lines[j].strip():  # the rest of the paragraph
            block.append((j, lines[j]))
            j += 1
        if not any(SPAN.search(text) for _, text in block):  # "Tests:" then a list
            while j < len(lines) and not lines[j].strip():
                j += 1
            while j < len(lines) and lines[j].strip():
                block.append((j, lines[j]))
                j += 1
        for k, text in block:
            # A test name is a sentence; shorter spans there are code (`==`, `--decay 1`).
            found += [(k + 1, s) for s in SPAN.findall(text) if len(s.split()) >= 3]
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    names = test_names(root)
    missing, count = [], 0
    for readme in sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md")) +
                         glob.glob(os.path.join(root, "chapters", "*", "solutions.md"))):
        for line, name in cited(readme):
            count += 1
            if name not in names:
                missing.append(f"{os.path.relpath(readme, root)}:{line}: no test named `{name}`")
    bodies = test_bodies(root)
    answers = 0
    for page in sorted(glob.glob(os.path.join(root, "chapters", "*", "solutions.md"))):
        with open(page, encoding="utf-8") as f:
            answers += len(CHECKED.findall(f.read()))
        for line, number, names in unchecked_answers(page, bodies):
            where = ", ".join(f"`{n}`" for n in names) or "no test cited in its paragraph"
            missing.append(f"{os.path.relpath(page, root)}:{line}: the checked number {number} "
                           f"is not a literal of the cited test ({where})")
    for m in missing:
        print(m)
    print(f"cited_tests: {count} citations, {answers} checked answers in the solutions, "
          f"{len(missing)} problems ({len(names)} tests known)")
    return 1 if missing or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
