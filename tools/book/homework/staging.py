"""Whole-or-nothing writes: a tree or a file is staged beside its destination and renamed into
place, so a failure or an interrupt (SIGINT, SIGTERM, SIGHUP) leaves the earlier state and no
temporary file; and the checks that refuse an unwritable destination before any work."""
import contextlib
import os
import shutil
import signal
import tempfile

from book.homework import UsageError


def write_if_changed(path, data, mode_from=None):
    """Writes bytes `data` to `path` (through a temporary file renamed into place, with the
    mode of `mode_from` if it exists) unless the file already holds them: an unchanged file
    keeps its mtime, so an incremental build recompiles only what changed. Returns 1 when it
    wrote, 0 when not."""
    if os.path.isfile(path):
        with open(path, "rb") as f:
            if f.read() == data:
                return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    if mode_from and os.path.exists(mode_from):
        shutil.copymode(mode_from, path + ".tmp")
    os.replace(path + ".tmp", path)
    return 1


def sync_tree(root, content, out, keep=("build",)):
    """Makes `out` hold exactly `content`; a file whose bytes are unchanged is not rewritten
    (its mtime stays, so an incremental build recompiles only what changed). Top-level
    names in `keep` are left alone."""
    written = 0
    for rel, data in content.items():
        dst = os.path.join(out, rel)
        src = os.path.join(root, rel)
        if data is None:
            with open(src, "rb") as f:
                data = f.read()
        written += write_if_changed(dst, data, mode_from=src)
    wanted = set(content)
    for dirpath, dirnames, filenames in os.walk(out, topdown=True):
        rel_dir = os.path.relpath(dirpath, out)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in keep]
        for f in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, f)).replace(os.sep, "/")
            if rel not in wanted and not (rel_dir == "." and f in keep):
                os.remove(os.path.join(dirpath, f))
    return written



def existing_ancestor(path):
    """The nearest path at or above `path` that exists (where new directories would be
    created)."""
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def probe_writable(option, given, directory):
    """Refuses (UsageError) unless a file can be created in `directory`: a read-only or
    full filesystem, or a directory such as /proc, is found before any work."""
    try:
        with signals_held():  # made and removed as one step: an interrupt cannot leave it
            fd, probe = tempfile.mkstemp(dir=directory, prefix=".book-probe-")
            try:
                os.write(fd, b"probe\n")
            finally:
                os.close(fd)
                os.remove(probe)
    except OSError as e:
        raise UsageError(f"{option} {given}: cannot write in {directory} "
                         f"({e.strerror or e}); it takes a path on a writable filesystem")


def make_dirs(path, created):
    """os.makedirs, appending each directory it creates to `created` (deepest last), so
    that a failed run can remove them again."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        path = os.path.dirname(path)
    for d in reversed(missing):
        os.mkdir(d)
        created.append(d)


# The signals that end a run through every `finally` (main() makes SIGTERM and SIGHUP raise).
INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_held():
    """Holds the interrupts back while the block runs, so that a file or directory made is also
    one recorded for the cleanup; one that came meanwhile arrives at the end of the block."""
    signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like SIGINT so that every `finally` cleans up."""


def raise_interrupted(signum, frame):
    raise Interrupted(signum)



def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask



def check_out_path(option, given):
    """Refuses (UsageError) an output FILE that could not be written, before any grading."""
    what = "it takes a file name in an existing, writable directory"
    if not given:
        raise UsageError(f"{option}: empty; {what}")
    path = os.path.abspath(given)
    if os.path.isdir(path):
        raise UsageError(f"{option} {given}: is a directory; {what}")
    jdir = os.path.dirname(path)
    if not os.path.isdir(jdir):
        raise UsageError(f"{option} {given}: directory {jdir} does not exist; {what}")
    probe_writable(option, given, jdir)


def write_atomically(path, text, option):
    """Writes `text` to a temporary file beside `path`, then renames it into place: a
    reader sees the old file or the new one, never half of one; no temporary file is left."""
    path = os.path.abspath(path)
    tmp = None
    try:
        with signals_held():  # (an interrupt between mkstemp and `tmp =` left the file)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path),
                                       prefix=f".{os.path.basename(path)}.tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise UsageError(f"{option} {path}: writing failed ({e.strerror or e}); "
                         "nothing was written")
    finally:
        if tmp:
            os.remove(tmp)


def replace_tree(root, content, out, replacing, executables=()):
    """Makes directory `out` hold exactly `content` (sync_tree's {rel: bytes or None}), whole
    or not at all; returns how many files were written. `replacing`: `out` holds an earlier
    copy, whose build/ is kept and whose unchanged files keep their mtimes. Raises OSError
    (or KeyboardInterrupt) with `out` as it was and nothing left beside it."""
    parent = os.path.dirname(out)
    # Staged in a directory beside --out and renamed into place: a failure or an interrupt
    # leaves the earlier state (no copy, or the earlier release) and no temporary directory.
    created, stage, old, committed = [], None, None, False
    try:
        name = os.path.basename(out)
        with signals_held():  # (an interrupt between a mkdir and its record left it)
            make_dirs(parent, created)
            stage = tempfile.mkdtemp(dir=parent, prefix=f".{name}.book-release-")
        if replacing:  # an unchanged file keeps its mtime: the build recompiles what changed
            for rel in content:
                if os.path.isfile(os.path.join(out, rel)):
                    dst = os.path.join(stage, rel)
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy2(os.path.join(out, rel), dst)
        n = sync_tree(root, content, stage)
        for rel in executables:
            os.chmod(os.path.join(stage, rel), 0o777 & ~current_umask())
        os.chmod(stage, 0o777 & ~current_umask())
        signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)  # the swap is not interrupted
        if os.path.isdir(out):
            old = tempfile.mkdtemp(dir=parent, prefix=f".{name}.book-old-")
            os.rmdir(old)
            os.rename(out, old)
            try:
                os.rename(stage, out)
            except OSError:
                os.rename(old, out)
                old = None
                raise
            stage = None
            committed = True
            try:  # --force keeps build/ (if this fails, the next build starts afresh)
                if os.path.isdir(os.path.join(old, "build")):
                    os.rename(os.path.join(old, "build"), os.path.join(out, "build"))
            except OSError:
                pass
        else:
            os.rename(stage, out)
            stage = None
        created, committed = [], True
        return n
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)  # the cleanup is not interrupted
        for d in (stage, old):
            if d:
                shutil.rmtree(d, ignore_errors=True)
        for d in reversed(created):
            try:
                os.rmdir(d)
            except OSError:
                pass
        try:  # a signal that came during the swap or the cleanup arrives now
            signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)
        except KeyboardInterrupt:
            if not committed:
                raise  # (after the swap it is too late to stop: the copy is complete)
