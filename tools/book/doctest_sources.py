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


# doctest::Approx(x).epsilon(e) compares |a - x| < e (scale + max(|a|, |x|)) with scale 1:
# for |x| < 1 that is an absolute tolerance of about e, far looser than e relative (a number of
# 1e-5 "checked to 1e-3" cannot fail). .scale(0) makes it relative.
APPROX = re.compile(r"\bApprox\(")
CALL = re.compile(r"\s*\.\s*(\w+)\(")


def _closing(text, i):
    """The index after the parenthesis that closes the one just before text[i]."""
    depth = 1
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i


def absolute_approx(text):
    """1-based lines of every Approx(...).epsilon(...) in C++ text without .scale(0)."""
    lines = []
    for m in APPROX.finditer(text):
        i, calls = _closing(text, m.end()), {}
        while (c := CALL.match(text, i)):
            end = _closing(text, c.end())
            calls[c.group(1)] = re.sub(r"\s+", "", text[c.end():end - 1])
            i = end
        if "epsilon" in calls and calls.get("scale") not in ("0", "0.0"):
            lines.append(text.count("\n", 0, m.start()) + 1)
    return lines
