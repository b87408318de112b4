#!/usr/bin/env python3
"""End to end, slow (a student copy built from scratch, as on a fresh runner): the GitHub
Classroom workflow that ./book release puts in the student copy
(.github/workflows/classroom.yml) gives Classroom a score on a GitHub-hosted runner.

The workflow's `run:` steps run in order, as GitHub Actions would, in a student copy owned by
a user who is not root (`runner`, as on GitHub's runners, made with useradd when missing),
with GITHUB_OUTPUT set and a dpkg-query that reports only the packages the install step
installs (so ./book grade must not ask for more). A step after a failed one runs only with
`if: always()`. The sudo apt-get step is not run (this user has no sudo; the packages are
here): its package list must be exactly the grading packages. The reporter step must run
`if: always()` and its BOOK_RESULTS, the grade step's `result` output, must decode to a
payload with the real maximum score, for

1. a fresh copy (no earlier build, as on a new runner) where one exercise's file does not
   compile: the grade step fails, yet the reporter runs and gets a payload with that
   exercise at 0 points and the real maximum;
2. the copy as released (every exercise a stub): 0 points of the same maximum.

Needs root (useradd, chown; exit 77, skipped, otherwise) and python3-yaml. The build tree is
new each time; its objects come from root's ccache, read-only (as a runner's cache restored
from an earlier run would give them), which validate's lean builds of the student copy have
filled: each step runs in a private mount namespace where root's cache directory is bound,
read-only, at CCACHE_DIR below. Where no mount namespace can be made, the user keeps a cache
of its own there, and the first run on a machine compiles everything (about 5 minutes on 2
busy cores).
"""
import base64
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

from book.build import GRADE_PACKAGES, ROOT
from book.homework.classroom import WORKFLOW_PATH
from checks import check, verdict


USER = "runner"
CCACHE_DIR = "/var/tmp/book-test-classroom-ccache"  # where the runner user finds a ccache


def root_cache():
    """Root's ccache directory, when a private mount namespace can show it to the runner user
    at CCACHE_DIR (read-only); else None."""
    cache = subprocess.run(["ccache", "-k", "cache_dir"], capture_output=True,
                           text=True).stdout.strip()
    if not os.path.isdir(cache):
        return None
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "mount", "--bind",
                            "-o", "ro", cache, CCACHE_DIR], capture_output=True)
    return cache if probe.returncode == 0 else None


def ensure_user():
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", USER], check=True)
    return pwd.getpwnam(USER)


def fake_dpkg_query(folder):
    """A dpkg-query first on PATH that lists only the grading packages as installed."""
    path = os.path.join(folder, "dpkg-query")
    lines = "".join(f"installed|{p}|\n" for p in GRADE_PACKAGES)
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nprintf '%s' '{lines}'\n")
    os.chmod(path, 0o755)


def run_workflow(steps, copy, env, cache):
    """Runs the workflow's steps as GitHub Actions would, as USER, with root's ccache
    directory `cache` read-only at CCACHE_DIR (or USER's own there, when None); returns
    {step id: outputs} and the names of the steps that ran."""
    user = pwd.getpwnam(USER)
    outputs, ran, failed = {}, [], False
    for i, step in enumerate(steps):
        name = step.get("name") or step.get("uses") or f"step {i}"
        if failed and step.get("if") != "always()":
            continue
        if "uses" in step:
            ran.append(name)
            continue
        if step["run"].lstrip().startswith("sudo apt-get"):
            continue  # checked apart: no sudo here, and the packages are installed
        out = os.path.join(env["HOME"], f"github-output-{i}")
        open(out, "w").close()
        os.chown(out, user.pw_uid, -1)
        t0 = time.monotonic()
        command = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                   "--init-groups", "bash", "-e", "-c", step["run"]]
        step_env = dict(env, GITHUB_OUTPUT=out)
        if cache:
            command = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                       'mount --bind -o ro "$1" "$2" && shift 2 && exec "$@"', "sh",
                       cache, CCACHE_DIR, *command]
            # (a miss still writes its preprocessed file: in the user's own temporary dir)
            step_env.update(CCACHE_READONLY="1",
                            CCACHE_TEMPDIR=os.path.join(env["HOME"], "ccache-tmp"))
        r = subprocess.run(command, cwd=copy, env=step_env, capture_output=True, text=True)
        print(f"     step '{name}': exit {r.returncode} ({time.monotonic() - t0:.0f} s)")
        if r.returncode != 0:
            print("\n".join("       | " + x for x in r.stderr.splitlines()[-15:]))
        ran.append(name)
        failed = failed or r.returncode != 0
        with open(out) as f:
            outputs[step.get("id", str(i))] = dict(line.rstrip("\n").split("=", 1)
                                                   for line in f if "=" in line)
    return outputs, ran


def reported_payload(steps, outputs, ran):
    """The payload the reporter step would get from BOOK_RESULTS (or None)."""
    reporter = next(s for s in steps if "grading-reporter" in s.get("uses", ""))
    check(reporter.get("if") == "always()" and reporter.get("name") in ran,
          "the reporter step runs whatever the grade step did (if: always())")
    ref = reporter["env"]["BOOK_RESULTS"]  # ${{ steps.ID.outputs.result }}
    step_id = ref.split("steps.")[1].split(".outputs")[0]
    value = outputs.get(step_id, {}).get("result")
    return json.loads(base64.b64decode(value)) if value else None


def main():
    if os.geteuid() != 0:
        print("skipped: needs root (useradd, chown)")
        return 77  # ctest's SKIP_RETURN_CODE
    user = ensure_user()
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        copy = os.path.join(tmp, "student")
        subprocess.run([sys.executable, "-B", "-m", "book.homework", "release", "--out", copy],
                       check=True, capture_output=True)
        bin_dir = os.path.join(tmp, "bin")
        os.makedirs(bin_dir)
        fake_dpkg_query(bin_dir)
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        os.makedirs(CCACHE_DIR, exist_ok=True)
        cache = root_cache()
        print(f"     (the objects come from {cache + ', read-only' if cache else CCACHE_DIR})")
        for path in (copy, home) + (() if cache else (CCACHE_DIR,)):
            subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", path], check=True)
        env = {"PATH": bin_dir + ":/usr/local/bin:/usr/bin:/bin", "HOME": home,
               "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true",
               "CCACHE_DIR": CCACHE_DIR}

        with open(os.path.join(copy, WORKFLOW_PATH)) as f:
            workflow = yaml.safe_load(f)
        steps = workflow["jobs"]["grade"]["steps"]
        install = next(s["run"] for s in steps if "apt-get install" in s.get("run", ""))
        listed = install.split("--no-install-recommends")[1].split()
        check(sorted(listed) == sorted(GRADE_PACKAGES),
              f"the install step installs the grading packages ({' '.join(listed)})")
        check(workflow["jobs"]["grade"]["runs-on"].startswith("ubuntu"),
              "the job runs on a GitHub-hosted Ubuntu runner")

        marker = json.load(open(os.path.join(copy, ".book-release")))
        exercise = marker["exercises"][0]
        broken = os.path.join(copy, exercise["functions"][0]["file"])
        with open(broken) as f:
            stub = f.read()
        with open(broken, "a") as f:
            f.write("\nthis line is not C++\n")
        t0 = time.monotonic()
        outputs, ran = run_workflow(steps, copy, env, cache)
        broken_payload = reported_payload(steps, outputs, ran)
        print(f"     (a fresh copy with a file that does not compile graded in "
              f"{time.monotonic() - t0:.0f} s)")
        with open(broken, "w") as f:
            f.write(stub)
        t0 = time.monotonic()
        outputs, ran = run_workflow(steps, copy, env, cache)
        payload = reported_payload(steps, outputs, ran)
        print(f"     (the stubs graded in {time.monotonic() - t0:.0f} s)")
        full = payload and payload.get("max_score", 0)
        check(bool(payload) and full > 0 and payload.get("status") == "fail"
              and sum(t.get("score", 0) for t in payload["tests"]) == 0,
              f"the stubs: the reporter gets 0 of {full} points")
        mine = [t for t in (broken_payload or {}).get("tests", [])
                if t.get("name", "").startswith(exercise["id"] + " ")]
        got = broken_payload and broken_payload.get("max_score")
        check(bool(broken_payload) and got == full and mine
              and all(t.get("score", 0) == 0 for t in mine),
              f"a file that does not compile, on a fresh copy: the reporter still gets the "
              f"result, {exercise['id']} 0 points ({len(mine)} tests), the maximum {got} "
              f"(the stubs' {full})")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
