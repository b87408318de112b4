"""./book release: writes the student copy (--out DIR) or the autograder bundle
(--autograder DIR) of the instructor's copy, after refusing every destination it could not
write whole."""
import os
import time

from book.build import ROOT, say
from book.homework import UsageError
from book.homework.autograder import AUTOGRADER_MARKER, EXECUTABLES, autograder_files
from book.homework.markers import is_student_copy
from book.homework.staging import existing_ancestor, probe_writable, replace_tree
from book.homework.student_copy import release_files


def cmd_release(args):
    if is_student_copy(ROOT):
        raise UsageError("this is a student copy; make a release from the instructor's copy")
    if args.out is not None and args.autograder is not None:
        raise UsageError("release: --out and --autograder are two different things; give one "
                         "(--out DIR: the student copy; --autograder DIR: the grading bundle)")
    bundle = args.autograder is not None
    option, given = ("--autograder", args.autograder) if bundle else ("--out", args.out)
    kind = "autograder bundle" if bundle else "release"
    what = (f"it takes a new or empty directory outside the book, or an earlier {kind} "
            "with --force")
    if given is None:
        raise UsageError("release: --out DIR (the student copy) or --autograder DIR (the "
                         "grading bundle) is required")
    if not given:
        raise UsageError(f"{option}: empty; {what}")
    out = os.path.realpath(given)
    root = os.path.realpath(ROOT)
    if out == root or out.startswith(root + os.sep) or root.startswith(out + os.sep):
        raise UsageError(f"{option} {given}: is the book, inside it or above it; {what}")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise UsageError(f"{option} {given}: exists and is not a directory; {what}")
    replacing = os.path.isdir(out) and bool(os.listdir(out))
    if replacing and not args.force:
        raise UsageError(f"{option} {given}: directory is not empty (--force replaces an "
                         f"earlier {kind} there)")
    earlier = (os.path.isfile(os.path.join(out, AUTOGRADER_MARKER)) if bundle
               else is_student_copy(out))
    if replacing and not earlier:
        raise UsageError(f"{option} {given}: not empty and not an earlier {kind}; --force "
                         f"replaces only an earlier {kind}")
    parent = os.path.dirname(out)
    base = existing_ancestor(parent)
    if not os.path.isdir(base):
        raise UsageError(f"{option} {given}: {base} is not a directory; {what}")
    probe_writable(option, given, base)
    try:
        content, _, exercises = autograder_files(ROOT) if bundle else release_files(ROOT)
    except ValueError as e:
        raise UsageError(str(e))
    size = sum(len(d) if d is not None else os.path.getsize(os.path.join(ROOT, rel))
               for rel, d in content.items())
    vfs = os.statvfs(base)
    free = vfs.f_bavail * vfs.f_frsize
    need = size + 4096 * (len(content) + 64)  # the files, and a block's slack for each
    if need > free:
        raise UsageError(f"{option} {given}: the {kind} needs {need / 2**20:.1f} MiB, "
                         f"{base} has {free / 2**20:.1f} MiB free")
    t0 = time.monotonic()
    try:
        n = replace_tree(ROOT, content, out, replacing, EXECUTABLES if bundle else ())
    except OSError as e:
        raise UsageError(f"{option} {given}: writing the {kind} failed "
                         f"({e.strerror or e}); nothing was written")
    say(f"{'autograder bundle' if bundle else 'student copy'} in {out}: {len(content)} files "
        f"({n} written), exercises {', '.join(exercises)} ({time.monotonic() - t0:.1f} s)")
    if bundle:
        say(f"upload it as a zip of its contents: (cd {out} && zip -qr ../autograder.zip .); "
            f"its README.md says what students submit")
    return 0

