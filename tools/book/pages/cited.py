"""Every test a chapter cites exists (python -m book.pages.cited ROOT).

The chapters name the test behind each claim after "Test:" or "Tests:", in backticks, in the
same paragraph or in the list that follows (book.pages.model.citations). Each such name (a span
of three or more words; shorter spans there are code) must be the name of a doctest TEST_CASE in
chapters/*/test*.cpp or tests/lib/*.cpp, so that renaming or deleting a test cannot leave the
book pointing at nothing; a chapter's README.md, which students read, may not name a hidden
test or a test of the worked solutions (only the worked solutions may).

The worked solutions' numbers come from the build (<!--#sol:NN.M.key-->, book.pages.sync); what
their tests (chapters/NN-*/test_solutions.cpp) still assert must be relative: they may not use
doctest::Approx(x).epsilon(e) without .scale(0), an absolute tolerance for |x| < 1
(book.doctest_sources.absolute_approx).

Exits 1, listing the missing names and absolute tolerances, otherwise 0.
"""
import glob
import os
import sys

from ..doctest_sources import absolute_approx, test_locations
from ..homework.markers import INSTRUCTOR_ONLY, hidden_test_names, scan
from .model import citations, parse, read


def instructors_tests(root, where):
    """The names of the tests a student copy does not have: the hidden tests and the worked
    solutions' (where: book.doctest_sources.test_locations)."""
    return set(hidden_test_names(scan(root)[0])) | {
        name for name, (path, _) in where.items()
        if INSTRUCTOR_ONLY.fullmatch(path.replace(os.sep, "/"))}


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    where = test_locations(root)
    names = set(where)
    private = instructors_tests(root, where)
    missing, count = [], 0
    for readme in sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md")) +
                         glob.glob(os.path.join(root, "chapters", "*", "solutions.md"))):
        for line, name in citations(parse(read(readme))):
            count += 1
            if name not in names:
                missing.append(f"{os.path.relpath(readme, root)}:{line + 1}: "
                               f"no test named `{name}`")
            elif name in private and os.path.basename(readme) == "README.md":
                missing.append(f"{os.path.relpath(readme, root)}:{line + 1}: `{name}` is a "
                               "hidden test or a worked solution's: a page students read may "
                               "not name it")
    for tests in sorted(glob.glob(os.path.join(root, "chapters", "*", "test_solutions.cpp"))):
        for line in absolute_approx(read(tests)):
            missing.append(f"{os.path.relpath(tests, root)}:{line}: Approx(...).epsilon(...) "
                           "without .scale(0) is an absolute tolerance below 1; make it "
                           "relative")
    for m in missing:
        print(m)
    print(f"cited_tests: {count} citations, {len(missing)} problems "
          f"({len(names)} tests known)")
    return 1 if missing or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
