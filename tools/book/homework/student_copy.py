"""What the student copy holds: every file of the book, each solution region a stub, hidden
tests removed (or, for grading, kept in a file of their own: markers.hidden_copy, with the full
chapters/exercises.toml: book.homework.course), the pages quoting the stubs, the marker file."""
import json
import os

from book.homework import UsageError
from book.homework.classroom import WORKFLOW_PATH, classroom_workflow
from book.homework.course import EXERCISES_FILE, HIDDEN_EXERCISES_FILE, without_hidden_weights
from book.homework.markers import (INSTRUCTOR_ONLY, MARKER_FILE, book_files, hidden_copy,
                                   hidden_test_names, is_student_copy, read_text, release_text,
                                   scan)
from book.homework.staging import sync_tree


def release_files(root, keep_hidden=False):
    """{rel: bytes or None (copy as is)} of the student copy, plus the marker file."""
    files, exercises = scan(root)
    if not exercises:
        raise UsageError("no exercises found (no // BEGIN SOLUTION markers)")
    content = {}
    for rel in book_files(root):
        if INSTRUCTOR_ONLY.fullmatch(rel):
            continue
        if rel in files:
            text, regions = files[rel]
            content[rel] = release_text(text, regions).encode()
            if keep_hidden and any(r.kind == "hidden" for r in regions):
                content[hidden_copy(rel)] = release_text(text, regions, True).encode()
        else:
            content[rel] = None
    if EXERCISES_FILE in content:  # the weights of hidden tests name them: the instructor's
        text = read_text(os.path.join(root, EXERCISES_FILE))
        content[EXERCISES_FILE] = without_hidden_weights(text, hidden_test_names(files)).encode()
        if keep_hidden:
            content[HIDDEN_EXERCISES_FILE] = text.encode()
    # The pages quote code in fenced blocks (book.pages): quote the stubs, not the solutions.
    # (Imported here: grading, in an autograder image without markdown-it, never needs it.)
    from book import pages

    def released(path):
        data = content.get(os.path.relpath(path, root))
        return data.decode() if data is not None else read_text(path)
    for rel in content:
        if rel.endswith(".md") and content[rel] is None:
            text = read_text(os.path.join(root, rel))
            new = pages.expected(root, None, os.path.join(root, rel), text, code_only=True,
                                 read_source=released)
            if new != text:
                content[rel] = new.encode()
    marker = {"book": "Attention, Verified", "format": 1,
              "hidden_tests": "kept" if keep_hidden else "removed",
              "exercises": list(exercises.values()),
              # ./book grade puts a file that does not compile back to its stub (in a copy)
              "stubs": {rel: content[rel].decode() for rel in
                        sorted({f["file"] for e in exercises.values() for f in e["functions"]})}}
    if keep_hidden:  # the grader shows these tests' claims only, never their expressions
        marker["hidden_test_names"] = hidden_test_names(files)
    content[MARKER_FILE] = (json.dumps(marker, indent=2) + "\n").encode()
    if not keep_hidden:  # the student's repository grades itself on GitHub (unless yours does)
        content.setdefault(WORKFLOW_PATH, classroom_workflow().encode())
    return content, files, exercises



def write_student_tree(root, out):
    """Keeps `out` equal to the student copy of the book in `root` (the reader's site is made
    from it: the stubs, no hidden test, no worked solution); a file that did not change keeps
    its mtime. A book that is itself a student copy is copied as it is. Returns how many files
    were written."""
    if is_student_copy(root):
        content = {rel: None for rel in book_files(root)}
    else:
        content = release_files(root)[0]
    return sync_tree(root, content, out)
