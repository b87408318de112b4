#!/usr/bin/env python3
"""Every test a chapter cites exists.

usage: cited_tests.py ROOT

The chapters name the test behind each claim after "Test:" or "Tests:", in backticks, in the
same paragraph or in the list that follows. Each such name (a span of three or more words;
shorter spans there are code) must be the name of a doctest
TEST_CASE in chapters/*/test*.cpp or tests/lib/*.cpp, so that renaming or deleting a test
cannot leave the book pointing at nothing. Exits 1, listing the missing names, otherwise 0.
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
    for readme in sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md"))):
        for line, name in cited(readme):
            count += 1
            if name not in names:
                missing.append(f"{os.path.relpath(readme, root)}:{line}: no test named `{name}`")
    for m in missing:
        print(m)
    print(f"cited_tests: {count} citations, {len(missing)} without a test "
          f"({len(names)} tests known)")
    return 1 if missing or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
