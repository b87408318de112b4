"""What the tests written as Python scripts share (each imports it from beside itself):
check() prints one line per check and records a failure, book() runs the homework tool of a
book, and verdict() ends the script: its last line and exit code."""
import os
import subprocess
import sys

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def book(root, *args):
    """The homework tool of the book at `root` (its tools/ on PYTHONPATH)."""
    return subprocess.run([sys.executable, "-B", "-m", "book.homework", *args],
                          capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.path.join(root, "tools")))


def verdict():
    """The last line of a test script, and its exit code: 1 if any check failed."""
    print(f"{len(failures)} failures")
    return 1 if failures else 0
