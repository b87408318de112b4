#!/usr/bin/env python3
"""Grading binaries run on a CPU other than the one that built them: each doctest binary named
on the command line runs its first test cases (not an exercise's: those depend on the
submission) under Debian's qemu-user emulating a CPU without AVX-512 (Haswell: AVX2, the
oldest CPU a course platform plausibly grades on). A binary built with -march=native on a
machine with AVX-512 dies there with SIGILL (issue 29, item 5).

    test_portable.py [--cpu MODEL] [--cases N] BINARY...

Exit 0 when every binary passes its cases there; 1 (with the reason) otherwise. The autograder
test calls it on the bundle's test binaries after setup.sh built them, as the bundle builds
them (book.build.lean_configure): `python3 -B tests/test_portable.py B/tests/test-lib ...`.
"""
import argparse
import shutil
import signal
import subprocess
import sys


def run_emulated(binary, cpu, cases):
    """(ok, why) of the first `cases` test cases of a doctest binary on the emulated `cpu`."""
    # the exercises' test suites (exNN.M) are left out: they pass or fail with the submission
    cmd = ["qemu-x86_64", "-cpu", cpu, binary, "--test-suite-exclude=ex*", f"--last={cases}",
           "--no-version", "--no-intro"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False, f"{binary}: still running after 120 s under qemu"
    # qemu reports a guest killed by a signal as its own exit code 128 + N
    rc = r.returncode
    if rc in (-signal.SIGILL, 128 + signal.SIGILL):
        return False, (f"{binary}: illegal instruction (SIGILL) on a {cpu} CPU: built for "
                       "this machine's CPU (-march=native)?")
    summary = [line for line in r.stdout.splitlines() if "test cases:" in line]
    if rc != 0 or not summary or "| 0 passed" in summary[-1]:
        return False, (f"{binary}: exit code {rc} on a {cpu} CPU\n"
                       + (r.stdout + r.stderr)[-2000:])
    # (the summary counts every test case; --last ran the first `cases`)
    return True, f"{binary}: its first {cases} test cases pass on a {cpu} CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", default="Haswell", help="qemu's CPU model (no AVX-512)")
    parser.add_argument("--cases", type=int, default=3, help="test cases run per binary")
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    if not shutil.which("qemu-x86_64"):
        print("FAIL qemu-x86_64 is missing (Debian package qemu-user)")
        return 1
    failed = 0
    for binary in args.binaries:
        ok, why = run_emulated(binary, args.cpu, args.cases)
        print(("ok   " if ok else "FAIL ") + why, flush=True)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
