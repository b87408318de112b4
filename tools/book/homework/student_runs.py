"""./book validate's check that every exercise can be started in order: in a release whose
exercises are all stubs, each chapter program runs every section that does not need an
unfinished exercise (harness::section), says which sections wait for which exercise (exit code
3, one line each in its summary, the ids in results.json), and every number the sections that
ran compute is the one the full book computes, bit for bit, with the same seed and the same
build flags: a section that waits must not change what the later ones draw."""
import json
import os
import subprocess

from book.build import chapter_numbers
from book.homework.cmake_steps import EXIT_NOT_DONE


def run_programs(bin_dir, out_dir, root):
    """Runs every chapter program of `bin_dir` with --quick into out_dir/chNN:
    {nn: (exit code, results.json as a dict or None, output.txt or "")}."""
    runs = {}
    for nn in chapter_numbers(root):
        out = os.path.join(out_dir, "ch" + nn)
        r = subprocess.run([os.path.join(bin_dir, "ch" + nn), "--quick", "--out", out],
                           capture_output=True, text=True, timeout=600)
        results, summary = None, ""
        try:
            with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
                results = json.load(f)
            with open(os.path.join(out, "output.txt"), encoding="utf-8") as f:
                summary = f.read()
        except OSError:
            pass
        runs[nn] = (r.returncode, results, summary)
    return runs


def program_problems(stub_runs, full_runs, exercises):
    """What is wrong with the stub runs against the full ones; `exercises`: the ids."""
    problems = []
    for nn, (code, results, summary) in sorted(stub_runs.items()):
        full_code, full, _ = full_runs[nn]
        if full_code != 0 or full is None:
            problems.append(f"ch{nn} --quick fails in the full book (exit {full_code})")
            continue
        own = sorted(i for i in exercises if i.startswith(nn + "."))
        if results is None:
            problems.append(f"ch{nn} writes no output set when its exercises are stubs "
                            f"(exit {code}): a student cannot run it before doing {own}")
            continue
        waiting = results.get("exercises_not_done", "").split()
        if code != EXIT_NOT_DONE or not waiting:
            problems.append(f"ch{nn} with stubs: exit {code}, waiting for {waiting} "
                            f"(expected exit {EXIT_NOT_DONE} naming the exercises it waits for)")
        for i in waiting:
            if f"waits for exercise {i}" not in summary:
                problems.append(f"ch{nn} with stubs: output.txt does not say which section "
                                f"waits for exercise {i}")
        ran = [k for k in results if k != "exercises_not_done" and not k.startswith("time_")]
        differ = sorted(k for k in ran if full.get(k) != results[k])
        if differ:
            problems.append(f"ch{nn} with stubs computes other numbers than the full book "
                            f"(a waiting section changed what later ones draw?): "
                            + ", ".join(f"{k} = {results[k]} (full: {full.get(k)})"
                                        for k in differ[:4]))
    return problems
