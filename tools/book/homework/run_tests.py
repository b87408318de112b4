"""Runs the graded tests as a grader must, one process per test: each under a wall-clock
limit and an output cap, and a C++ test passes only when doctest's own report says so.

ctest passes a test on exit code 0, and a student's function that calls std::_Exit(0) exits
0 before any check has run. Here each doctest binary writes its XML report to a file (doctest
writes the file as the run goes and closes it after the last test case), and a test passes
only when that report is complete and says the one selected test case passed with at least
one check. The harness's own scripts (tests/program_contract.py) run the student's code in
a child process, so their exit code is theirs: it is trusted.

Also the grader's resources: how many jobs the CPU quota and memory of a container allow
(os.cpu_count() sees the host's processors, not a Gradescope container's half a CPU)."""
import concurrent.futures
import json
import math
import os
import re
import resource
import select
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

TIME_LIMIT_S = 10  # per doctest test case: they take milliseconds
# A chapter program's contract test (tests/program_contract.py) runs the program a dozen times
# and interrupts one run after 5 s: it may take this many times a test case's limit.
PROGRAM_TEST_FACTOR = 6
OUTPUT_LIMIT = 1 << 20  # a test that prints more than 1 MiB is stopped and fails
KEPT_OUTPUT = 16 << 10  # what is kept of a test's output for its feedback


def graded_tests(build, label_regex):
    """[{name, command, cwd, labels}] of the ctest tests whose labels match `label_regex`, as
    `ctest --show-only=json-v1` lists them (the commands doctest_discover_tests wrote)."""
    r = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                       capture_output=True, text=True, check=True)
    tests = []
    for t in json.loads(r.stdout).get("tests", []):
        props = {p["name"]: p.get("value") for p in t.get("properties", [])}
        if any(re.search(label_regex, lab) for lab in props.get("LABELS") or []):
            tests.append({"name": t["name"], "command": t["command"],
                          "cwd": props.get("WORKING_DIRECTORY") or build,
                          "labels": props.get("LABELS") or []})
    return tests


def is_doctest(command):
    return any(a.startswith("--test-case=") for a in command[1:])


FILE_LIMIT = 64 << 20  # no file a test writes (its XML report included) grows past 64 MiB


def limit_files():
    """In the test's process, before it runs: no file beyond FILE_LIMIT, no core dumps."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def children(pid):
    """The processes whose parent is `pid` (any of its threads)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(x) for x in f.read().split()]
        except OSError:
            continue
    return found


def descendants(pid):
    """Every process started under `pid`, also those in a session of their own (the contract
    test's script starts each program run with start_new_session: out of the test's process
    group, it outlived the test's kill and looped on)."""
    found, todo = [], [pid]
    while todo:
        below = children(todo.pop())
        found += below
        todo += below
    return found


TOKEN_VARIABLE = "BOOK_GRADED_TEST"  # in every test's environment, with a token of its own


def processes_tagged(token):
    """Pids of the processes whose environment carries BOOK_GRADED_TEST=`token`: what a test
    started and left behind, also after a double fork (which leaves its process tree)."""
    tag = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if tag in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                continue
    return found


def kill_test(proc, token):
    """Kills the test's process group, every process under it and every process carrying its
    token (before the test's process is reaped, so that its pid cannot be reused)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in set(descendants(proc.pid) + processes_tagged(token)) - {os.getpid()}:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def run_limited(command, cwd, time_limit=TIME_LIMIT_S, user=None):
    """(returncode or None, output kept, why it was stopped or ''): `command` with stdout and
    stderr read as they come, so a flood never reaches a disk; stopped after `time_limit`
    seconds or OUTPUT_LIMIT bytes. Whatever it started is killed when it ends. `user`
    ((uid, gid) or None): the user it runs as (test_user)."""
    token = os.urandom(8).hex()
    as_user = dict(user=user[0], group=user[1], extra_groups=[]) if user else {}
    proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=limit_files, env=dict(os.environ, **{TOKEN_VARIABLE: token}),
                            **as_user)
    kept, total, stopped, ended = bytearray(), 0, "", None
    deadline = time.monotonic() + time_limit
    fd = proc.stdout.fileno()
    try:
        while True:
            now = time.monotonic()
            if now >= deadline:
                stopped = (f"stopped after {time_limit:g} s (the time limit of one test): an "
                           "endless loop?")
                break
            if select.select([fd], [], [], min(0.2, deadline - now))[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break  # every writer has closed the output
                total += len(chunk)
                kept += chunk[:max(0, KEPT_OUTPUT - len(kept))]
                if total > OUTPUT_LIMIT:
                    stopped = (f"stopped after printing more than {OUTPUT_LIMIT >> 20} MiB "
                               "(the output limit of one test)")
                    break
            elif proc.poll() is not None:
                # The test has ended, but something it started still holds its output open:
                # no more of the test's output is coming (that process is killed below).
                ended = ended or now
                if now - ended > 1:
                    break
    finally:
        kill_test(proc, token)
        proc.wait()
        proc.stdout.close()
    return (None if stopped else proc.returncode), kept.decode("utf-8", "replace"), stopped


LINE_LIMIT = 300  # characters of one feedback line (a 3 MB message stays out of results)


def text_of(element):
    """An element's text, its indentation gone and each line cut at LINE_LIMIT."""
    if element is None:
        return ""
    lines = re.sub(r"\s*\n\s*", "\n", (element.text or "").strip()).split("\n")
    return "\n".join(x if len(x) <= LINE_LIMIT else
                     x[:LINE_LIMIT] + f"... ({len(x) - LINE_LIMIT} more characters)"
                     for x in lines)


def doctest_verdict(report_path):
    """(passed, feedback) from doctest's XML report: passed only when the report is complete,
    ran one test case, and that case passed with at least one check. The feedback is what a
    console report would show of the failures: each failed check with its values and logged
    context, or the exception."""
    try:
        root = ET.parse(report_path).getroot()
    except (OSError, ET.ParseError):
        return False, ("the test stopped before doctest finished its report (did the code "
                       "call exit, _Exit or abort, or crash?)")
    cases = [c for c in root.iter("TestCase") if c.get("skipped") != "true"]
    totals = root.find("OverallResultsTestCases")
    if len(cases) != 1 or totals is None:
        return False, "the test case did not run (its name matched no test)"
    case = cases[0]
    asserts = case.find("OverallResultsAsserts")
    lines = []
    for e in case:
        if e.tag == "Expression" and e.get("success") == "false":
            lines.append(f"{e.get('filename')}:{e.get('line')}: ERROR: "
                         f"{e.get('type')}( {text_of(e.find('Original'))} ) is NOT correct!")
            lines.append(f"  values: {e.get('type')}( {text_of(e.find('Expanded'))} )")
            lines += ["  logged: " + text_of(i) for i in e.findall("Info")]
            exc = e.find("Exception")
            if exc is not None:
                lines.append("  threw exception: " + text_of(exc))
        elif e.tag == "Exception":
            lines.append(("TEST CASE CRASHED: " if e.get("crash") == "true" else
                          "TEST CASE threw exception: ") + text_of(e))
        elif e.tag == "Message" and "ERROR" in e.get("type", "").upper():
            lines.append(f"{e.get('filename')}:{e.get('line')}: ERROR: " +
                         text_of(e.find("Text")))
        if lines:
            lines.append("")
    passed = (asserts is not None and asserts.get("test_case_success") == "true"
              and int(asserts.get("successes", "0")) >= 1 and totals.get("failures") == "0")
    if not passed and not lines:
        lines = ["the test case ran no check" if asserts is not None and
                 asserts.get("test_case_success") == "true" else "the test case failed"]
    return passed, "\n".join(lines)


def run_test(test, time_limit=TIME_LIMIT_S, user=None):
    """(status 'passed' or 'failed', output): one graded test run under the limits, as
    `user` (test_user) when given."""
    command = list(test["command"])
    if not is_doctest(command):
        rc, output, stopped = run_limited(command, test["cwd"], time_limit * PROGRAM_TEST_FACTOR,
                                          user)
        return ("passed" if rc == 0 else "failed"), (stopped + "\n" + output if stopped
                                                     else output)
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        if user:
            os.chown(tmp, *user)  # the test writes its report here
        report = os.path.join(tmp, "report.xml")
        rc, output, stopped = run_limited(
            command + ["--reporters=xml", f"--out={report}", "--no-version"], test["cwd"],
            time_limit, user)
        if stopped:
            return "failed", stopped
        passed, feedback = doctest_verdict(report)
    if passed and rc != 0:
        passed, feedback = False, f"the test's process ended with exit code {rc}"
    printed = output.strip()
    if not passed and printed:
        feedback += "\nthe test printed:\n" + printed
    return ("passed" if passed else "failed"), feedback


def run_tests(tests, jobs, log=None, time_limit=TIME_LIMIT_S, user=None):
    """{test name: (status, output)} for `tests` (from graded_tests), `jobs` at a time, as
    `user` when given; a one-line record per test appended to `log`. Every process the tests
    left behind is killed before it returns."""
    results = {}
    before = set(children(os.getpid()))
    become_subreaper()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            started = {pool.submit(timed, run_test, t, time_limit, user): t for t in tests}
            for future in concurrent.futures.as_completed(started):
                (status, output), seconds = future.result()
                results[started[future]["name"]] = (status, output)
                if log:
                    with open(log, "a") as f:
                        f.write(f"{status:6} {seconds:6.2f} s  {started[future]['name']}\n")
    finally:
        for pid in set(children(os.getpid())) - before:  # orphans this process adopted
            for p in [pid] + descendants(pid):
                try:
                    os.kill(p, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
    return results


def become_subreaper():
    """Makes this process the one that adopts the orphans of the processes under it (Linux's
    PR_SET_CHILD_SUBREAPER), instead of init: a process a test double-forked to outlive it is
    then still found under the grader, and killed."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def timed(f, *args):
    t0 = time.monotonic()
    return f(*args), time.monotonic() - t0


NOBODY = 65534  # Debian's and Ubuntu's user and group `nobody`


def test_user():
    """(uid, gid) that student code runs as: `nobody` when the grader is root (as on Gradescope
    and PrairieLearn), so that it cannot read what the grader keeps from it, nor write the
    grader's files; None otherwise: a grader that is not root cannot keep anything from code it
    runs as itself (say so to whoever relies on it)."""
    return (NOBODY, NOBODY) if os.geteuid() == 0 else None


def open_to_tests(tree):
    """Lets the test user read everything in `tree` and enter and run what its owner may (a
    bundle unzipped under a strict umask would otherwise fail every test, a 0 the student did
    not earn); keep_from_tests then closes what the tests must not see."""
    for dirpath, dirnames, filenames in os.walk(tree):
        for path in [dirpath] + [os.path.join(dirpath, f) for f in filenames]:
            if os.path.islink(path):
                continue
            mode = os.stat(path).st_mode
            wanted = mode | 0o044 | (0o011 if mode & 0o100 else 0)
            if wanted != mode:
                os.chmod(path, wanted)


def keep_from_tests(paths):
    """Takes every permission from group and others on `paths` (files and directories): the
    test user cannot list, read or run them. Root, which builds, is not affected."""
    for path in paths:
        os.chmod(path, os.stat(path).st_mode & ~0o077)


def let_tests_run(binaries):
    """Lets the test user run `binaries` (execute only: an ELF binary needs no read bit)."""
    for path in binaries:
        os.chmod(path, os.stat(path).st_mode | 0o011)


def unreachable_for_others(path):
    """The first directory at or above `path` that a user other than its owner cannot pass
    through (no x bit for others), or None."""
    path = os.path.abspath(path)
    while True:
        if os.path.isdir(path) and not os.stat(path).st_mode & 0o001:
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def cgroup_limits():
    """(CPU quota in processors or None, memory limit in bytes or None) of this process's
    cgroup or the nearest parent that sets one, from cgroup v2 (cpu.max, memory.max) or v1
    (cpu.cfs_quota_us / cpu.cfs_period_us, memory.limit_in_bytes)."""
    try:
        with open("/proc/self/cgroup") as f:
            groups = [line.rstrip("\n").split(":", 2) for line in f]
    except OSError:
        return None, None
    def first(controller, read):
        for _, names, rel in groups:
            if controller == "" and names == "" or controller in names.split(","):
                base = "/sys/fs/cgroup" + (f"/{controller}" if controller else "")
                path = base + rel.rstrip("/")
                while path.startswith(base):  # a limit may be set on a parent group
                    try:
                        value = read(path)
                    except (OSError, ValueError):
                        value = None
                    if value:
                        return value
                    path = os.path.dirname(path)
        return None
    def text(path, name):
        with open(os.path.join(path, name)) as f:
            return f.read().split()
    def v2_cpu(path):
        quota, period = text(path, "cpu.max")[:2]
        return None if quota == "max" else int(quota) / int(period)
    def v1_cpu(path):
        quota, period = int(text(path, "cpu.cfs_quota_us")[0]), int(text(path, "cpu.cfs_period_us")[0])
        return quota / period if quota > 0 else None
    def v2_memory(path):
        value = text(path, "memory.max")[0]
        return None if value == "max" else int(value)
    def v1_memory(path):
        value = int(text(path, "memory.limit_in_bytes")[0])
        return value if value < (1 << 60) else None  # "no limit" is a huge number in v1
    return (first("", v2_cpu) or first("cpu", v1_cpu),
            first("", v2_memory) or first("memory", v1_memory))


GIB = 1 << 30
MEMORY_PER_COMPILE = 1 * GIB  # g++ on an Eigen-heavy test file peaks near 0.9 GiB


def grading_jobs():
    """Parallel jobs the container really has: the processors this process may use, capped
    by its cgroup CPU quota (rounded up) and by its memory limit (one compile per GiB), at
    least 1."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    cpus, memory = cgroup_limits()
    if cpus:
        n = min(n, math.ceil(cpus))
    if memory:
        n = min(n, memory // MEMORY_PER_COMPILE)
    return max(1, n)
