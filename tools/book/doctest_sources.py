"""The doctest test cases written in the book's C++ sources: their names, where they are and
their bodies. The chapters cite tests by name (book.pages), the homework product names the
hidden ones (book.homework); both read them here."""
import glob
import os
import re

# The name may be split into adjacent string literals ("a " "b"), as clang-format does.
TEST_CASE = re.compile(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def case_name(match):
    """The test's name from a TEST_CASE match: its literals joined, escapes undone."""
    return "".join(LITERAL.findall(match.group(1))).replace('\\"', '"')


def test_case_names(text):
    """The names of the TEST_CASEs in a piece of C++ source, in order."""
    return [case_name(m) for m in TEST_CASE.finditer(text)]


def test_files(root, lib=True):
    """The chapters' test sources, then (lib=True) the library's, sorted."""
    files = sorted(glob.glob(os.path.join(root, "chapters", "*", "test*.cpp")))
    if lib:
        files += sorted(glob.glob(os.path.join(root, "tests", "lib", "*.cpp")))
    return files


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_locations(root):
    """{test name: (path relative to root, line of its TEST_CASE)}."""
    where = {}
    for path in test_files(root):
        text = _read(path)
        for m in TEST_CASE.finditer(text):
            where.setdefault(case_name(m),
                             (os.path.relpath(path, root), text.count("\n", 0, m.start()) + 1))
    return where


def test_bodies(root):
    """{test name: its source text, up to the next TEST_CASE} for the chapters' tests."""
    bodies = {}
    for path in test_files(root, lib=False):
        text = _read(path)
        found = list(TEST_CASE.finditer(text))
        for m, after in zip(found, found[1:] + [None]):
            bodies.setdefault(case_name(m), text[m.end():after.start() if after else len(text)])
    return bodies
