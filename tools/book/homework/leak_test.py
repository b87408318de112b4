"""The leak test: a release contains no line of a solution region, a hidden test or a worked
solution that appears nowhere else in the book, and two releases are identical."""
import os
import tempfile

from book.build import ROOT
from book.homework.markers import (INSTRUCTOR_ONLY, SNIPPET_TAG, book_files, is_student_copy,
                                   read_text, release_text)
from book.homework.staging import sync_tree
from book.homework.student_copy import release_files

def distinctive_lines(files, ignore_space=False):
    """Lines of solution and hidden regions, and of the worked solutions (INSTRUCTOR_ONLY),
    that appear nowhere else in the book: if one of them is in the release, a solution or
    hidden test leaked. `ignore_space`: lines compared, and returned, with no whitespace at all
    (to search rendered pages, where highlighting and line numbers change the spacing)."""
    outside, worked = [], []
    for rel in book_files(ROOT):
        path = os.path.join(ROOT, rel)
        if INSTRUCTOR_ONLY.fullmatch(rel):
            worked.append(rel)
        elif rel in files:
            text, regions = files[rel]
            outside.append(release_text(text, regions))
        elif rel.endswith(".md"):  # code blocks quote the sources, solutions included
            from book import pages  # (here: the labels and grading steps never need it)
            outside.append(pages.without_code(read_text(path)))
        elif rel.endswith((".cpp", ".hpp", ".h", ".txt", ".py", ".cmake", ".gp")):
            outside.append(read_text(path))
    norm = (lambda t: "".join(t.split())) if ignore_space else str.strip
    outside = "\n".join(outside)
    if ignore_space:
        outside = norm(outside)
    found = []
    for rel, (_, regions) in files.items():
        for r in regions:
            for line in r.lines:
                s = norm(line)
                if len(line.strip()) >= 12 and not SNIPPET_TAG.match(line) and s not in outside:
                    found.append((r.id, r.kind, s))
    # The worked solutions (pages and their tests), line by line.
    for rel in worked:
        for line in read_text(os.path.join(ROOT, rel)).splitlines():
            s = norm(line)
            if len(line.strip()) >= 12 and not SNIPPET_TAG.match(line) and s not in outside:
                found.append((rel.split("/")[1][:2], "worked solution (" + rel + ")", s))
    return found


def leaks(release_root, lines):
    texts = {}
    for rel in book_files(release_root):
        try:
            texts[rel] = read_text(os.path.join(release_root, rel))
        except UnicodeDecodeError:
            continue
    return leaks_in(texts, lines)


def leaks_in(texts, lines):
    """'file: kind text of exercise ID: line' for each distinctive line found in a text of
    {file: text} (a release's files, or a site's pages as text)."""
    bad = []
    everything = "\0".join(texts.values())  # one search per line; files only for a hit
    for ident, kind, s in lines:
        if s not in everything:
            continue
        for rel, text in texts.items():
            if s in text:
                bad.append(f"{rel}: {kind} text of exercise {ident}: {s}")
    return bad


def cmd_leak_test(args):
    if is_student_copy(ROOT):
        print("leak-test: a student copy has no solutions to leak; nothing to do")
        return 0
    content, files, exercises = release_files(ROOT)
    lines = distinctive_lines(files)
    with tempfile.TemporaryDirectory() as tmp:
        sync_tree(ROOT, content, tmp)
        bad = leaks(tmp, lines)
        # The release is deterministic: a second one into another directory is identical.
        with tempfile.TemporaryDirectory() as tmp2:
            sync_tree(ROOT, release_files(ROOT)[0], tmp2)
            differ = [rel for rel in content
                      if open(os.path.join(tmp, rel), "rb").read()
                      != open(os.path.join(tmp2, rel), "rb").read()]
    for b in bad:
        print("LEAK " + b)
    for d in differ:
        print(f"NOT DETERMINISTIC {d}")
    per = {i: sum(1 for x in lines if x[0] == i) for i in exercises}
    worked = sum(1 for x in lines if x[1].startswith("worked"))
    print(f"{len(lines)} distinctive lines ({len(lines) - worked} of solution and hidden "
          f"regions over {len(exercises)} exercises: "
          f"{', '.join(f'{i}: {n}' for i, n in per.items())}; {worked} of the worked "
          f"solutions) searched in "
          f"{len(content)} released files: {len(bad)} found")
    missing = [i for i, n in per.items() if n == 0]
    if missing:
        print(f"exercises with no distinctive line to search for: {', '.join(missing)}")
    return 1 if bad or differ or missing else 0

