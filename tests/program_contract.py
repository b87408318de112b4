#!/usr/bin/env python3
"""The contract every chapter program keeps (DESIGN.md, "Program contract"), checked from outside.

usage: program_contract.py BINARY [--quick-args ARGS] [--bad 'ARGS' OPTION]...

- --help exits 0 and lists every option with its default;
- each bad invocation exits 2 with exactly one line on stderr that names OPTION, and writes
  nothing (its --out directory is not even created);
- an unwritable --out is refused the same way;
- the same --seed gives an identical results.json, apart from measured wall-clock times (keys
  that start with time_, which no run can repeat); another seed gives a different one.
"""
import os
import shlex
import subprocess
import sys
import tempfile

failures = []


def reproducible_text(path):
    """results.json as written, without the lines of measured times (keys time_*)."""
    with open(path, encoding="utf-8") as f:
        return "".join(line for line in f if not line.lstrip().startswith('"time_'))


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(binary, args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=600)


def main():
    # Parsed by hand: the values themselves look like options ("--bad '--d 0' --d").
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    binary, quick, bad_cases = argv[0], ["--quick"], []
    i = 1
    while i < len(argv):
        if argv[i] == "--quick-args":
            quick, i = shlex.split(argv[i + 1]), i + 2
        elif argv[i] == "--bad":
            bad_cases.append((argv[i + 1], argv[i + 2]))
            i += 3
        else:
            print(f"program_contract.py: unexpected argument {argv[i]!r}", file=sys.stderr)
            return 2

    with tempfile.TemporaryDirectory() as tmp:
        h = run(binary, ["--help"])
        check(h.returncode == 0, "--help exits 0")
        for opt in ["--seed", "--out", "--quick"] + [o for _, o in bad_cases]:
            check(opt in h.stdout, f"--help lists {opt}")

        bad = list(bad_cases) + [("--no-such-flag", "--no-such-flag")]
        blocker = os.path.join(tmp, "a-file")
        open(blocker, "w").close()
        bad.append((f"--out {blocker}/sub", "--out"))
        for i, (args, option) in enumerate(bad):
            out = os.path.join(tmp, f"bad-{i}")
            argv = shlex.split(args)
            if "--out" not in argv:
                argv += ["--out", out]
            r = run(binary, argv)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2, f"'{args}' exits 2 (got {r.returncode})")
            check(len(lines) == 1 and option in lines[0],
                  f"'{args}' prints one stderr line naming {option}: {r.stderr.strip()!r}")
            check(not os.path.exists(out), f"'{args}' writes nothing")

        outs = []
        for name, seed in [("a", "7"), ("b", "7"), ("c", "8")]:
            out = os.path.join(tmp, name)
            r = run(binary, quick + ["--seed", seed, "--out", out])
            check(r.returncode == 0, f"{' '.join(quick)} --seed {seed} runs (stderr: {r.stderr.strip()[:200]!r})")
            outs.append(os.path.join(out, "results.json"))
            leftovers = [f for f in os.listdir(out) if f.startswith(".")] if os.path.isdir(out) else []
            check(not leftovers, f"no temporary files left behind: {leftovers}")
        if all(os.path.exists(p) for p in outs):
            a, b, c = (reproducible_text(p) for p in outs)
            check(a == b, "same seed: identical results.json (apart from time_* keys)")
            check(a != c, "other seed: different results.json")

    if failures:
        print(f"{len(failures)} contract check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
