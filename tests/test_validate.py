#!/usr/bin/env python3
"""Tests of validate's third direction, the wrong answers (book.homework.wrong_answers; run by
ctest in the instructor's copy; well under a minute once its copy of the book has been built):

- the catalogue (chapters/*/wrong_answers.cpp) parses, every autograded exercise has at least
  six wrong answers with distinct names and descriptions, and a malformed block is refused;
- the student copy holds no catalogue;
- `validate --wrong-answers 04.6` in a copy of the book whose catalogue has one more wrong
  answer, the solution itself, fails: a PROBLEM line names it, exit 1; the others are
  reported rejected. The copy is kept in build/test-validate/ so that its lean build is
  incremental (ccache gives back what another tree compiled).
"""
import os
import re
import subprocess
import sys
import tempfile

from book.build import ROOT
from book.homework.markers import book_files, read_text, scan
from book.homework.staging import sync_tree
from book.homework.wrong_answers import (MIN_PER_EXERCISE, catalogue_problems, load_catalogue,
                                         parse_catalogue)
from checks import book, check, failures


def refused(text, what):
    try:
        parse_catalogue("x/wrong_answers.cpp", text)
    except ValueError as e:
        check(True, f"a malformed catalogue is refused: {what} ({e})")
        return
    check(False, f"a malformed catalogue is refused: {what}")


def main():
    files, exercises = scan(ROOT)
    catalogue = load_catalogue(ROOT)
    autograded = [i for i, e in exercises.items() if e["functions"]]
    check(len(autograded) >= 6, f"six autograded exercises ({', '.join(autograded)})")
    for i in autograded:
        mine = [w for w in catalogue if w.id == i]
        names, descriptions = [w.name for w in mine], [w.description for w in mine]
        check(len(mine) >= MIN_PER_EXERCISE and len(set(names)) == len(names)
              and len(set(descriptions)) == len(descriptions)
              and all(len(d) >= 20 for d in descriptions),
              f"{i}: {len(mine)} wrong answers, distinct names and descriptions")
    check(catalogue_problems(catalogue, exercises) == [], "validate finds the catalogue sound")
    one = catalogue[0]
    check(catalogue_problems(catalogue + [one], exercises) != [],
          "validate refuses a name used twice")
    check(any(f"exercise {one.id} has" in p for p in
              catalogue_problems([w for w in catalogue if w.id != one.id], exercises)),
          "validate refuses an exercise without wrong answers")
    refused("// WRONG ANSWER 04.6 x: y\nreturn 1.0;\n", "a block never closed")
    refused("// WRONG ANSWER 04.6 Bad Name: y\nreturn 1.0;\n// END WRONG ANSWER\n",
            "a name with capitals and a space")
    refused("// WRONG ANSWER 04.6 x: y\n// only a comment\n// END WRONG ANSWER\n", "no code")
    refused("// END WRONG ANSWER\n", "an END without its block")

    # The student copy holds none of it.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "student")
        r = book(ROOT, "release", "--out", out)
        found = [f for f in book_files(out) if f.endswith("wrong_answers.cpp")]
        check(r.returncode == 0 and not found,
              f"the student copy holds no wrong answers (found: {found}; {r.stderr.strip()})")

    # A wrong answer the tests cannot reject, the solution itself, fails validate.
    copy = os.path.join(ROOT, "build", "test-validate", "book")
    rel = next(f for f in book_files(ROOT) if re.fullmatch(r"chapters/04-[^/]+/wrong_answers"
                                                           r"\.cpp", f))
    solution = next(r for rel_, (_, regions) in files.items() for r in regions
                    if r.kind == "solution" and r.id == "04.6")
    extra = ("\n// WRONG ANSWER 04.6 same-as-solution: the solution itself, which no test "
             "can reject\n" + "\n".join(solution.lines) + "\n// END WRONG ANSWER\n")
    content = {f: None for f in book_files(ROOT)}
    content[rel] = (read_text(os.path.join(ROOT, rel)) + extra).encode()
    os.makedirs(copy, exist_ok=True)
    sync_tree(ROOT, content, copy)
    r = book(copy, "validate", "--wrong-answers", "04.6", "--jobs", "2")
    problems = [line for line in r.stderr.split("\n") if line.startswith("PROBLEM")]
    check(r.returncode == 1 and len(problems) == 1
          and "wrong answer 04.6:same-as-solution passes every test of ex04.6" in problems[0],
          f"validate fails on a wrong answer equal to the solution, naming it "
          f"(exit {r.returncode}; {problems or r.stderr[-2000:]})")
    m = re.search(r"^04\.6: (\d+) wrong answers, (\d+) rejected", r.stdout, re.M)
    n = len([w for w in catalogue if w.id == "04.6"])
    check(bool(m) and m.groups() == (str(n + 1), str(n)),
          f"and counts the {n} others rejected ({m.group(0) if m else r.stdout[-500:]})")

    print(f"{len(failures)} failures" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
