#!/usr/bin/env python3
"""PyTorch 2's fused attention on the CPU, float64: the peer a PyTorch user picks today.

    python3 bench/peers/sdpa.py OUTDIR      writes OUTDIR/peers-sdpa.json

`./book bench` runs it in a Debian 13 environment (build/peers/trixie, python3-torch 2.6 on
OpenBLAS; book.cli.run_sdpa_peer), beside bench/bench_attention.cpp's BM_forward_threads and
BM_tiled_threads on the same shapes:
  torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal)
with Q, K, V of shape (1, 1, N, d) (one sequence, one head), N = 256 ... 8192, d = 64 and 128,
with and without the causal mask, on 1 and 2 threads. Each thread count runs in its own
process: OMP_NUM_THREADS and torch.set_num_threads give ATen's OpenMP loop over blocks of
queries its threads, and OPENBLAS_NUM_THREADS=1, because that loop calls one matrix product
per block from each of its threads: an OpenBLAS that starts threads of its own inside it runs
the kernel 3 to 20 times slower on this machine (measured on 2026-11-27). On 2 threads it
runs a second time with OMP_WAIT_POLICY=PASSIVE (idle OpenMP workers sleep instead of
spinning), and the page takes the better of the two for each shape. Whether the second
thread worked: threads_busy counts the process's threads that did at least a quarter of the
busiest one's CPU time during a shape's timed calls (/proc/self/task), whatever else the
machine runs; cpu_per_wall (process CPU seconds over wall seconds, over all repetitions of a
shape) is near 2 when both cores were its own.

Flops are the useful ones, counted as bench_attention.cpp counts them: 4 N^2 d per call
without a mask (Q K^T and A V, 2 N^2 d each), and 2 N (N + 1) d with it (only the N (N + 1) / 2
scores a query may see); the exponentials are not credited. Times are wall-clock seconds per
call, the median of the repetitions. Before timing, each shape's output is checked against
the softmax formula in float64. Standard library + torch only.
"""
import json
import math
import os
import platform
import statistics
import sys

import peercontext  # noqa: E402  (beside this script, on sys.path as its folder)

SIZES = [256, 512, 1024, 2048, 4096, 8192]
DS = [64, 128]
TARGET_SECONDS = 0.3   # repeat until the timed calls add up to this ...
MIN_REPS, MAX_REPS = 3, 20  # ... with at least MIN_REPS and at most MAX_REPS calls
FLOPS = ("useful flops: 4 N^2 d per call without a mask, 2 N (N + 1) d with the causal mask "
         "(as bench/bench_attention.cpp counts them)")


def useful_flops(n, d, causal):
    return 2.0 * n * (n + 1) * d if causal else 4.0 * n * n * d


def reference(Q, K, V, causal):
    """softmax(Q K^T / sqrt(d)) V, the formula, with the mask written out."""
    import torch
    S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if causal:
        n = S.shape[-1]
        S = S.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(S, dim=-1) @ V


def thread_cpu_ticks():
    """CPU time of each thread of this process so far, in clock ticks (Linux)."""
    ticks = {}
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks[task] = int(fields[11]) + int(fields[12])  # utime + stime
        except (OSError, IndexError, ValueError):
            continue
    return ticks


def threads_busy(before, after):
    """How many threads did a fair share of the work between two thread_cpu_ticks(): at
    least a quarter of the busiest one's CPU time (the check that a thread count was used)."""
    spent = [after[t] - before.get(t, 0) for t in after]
    most = max(spent, default=0)
    return sum(1 for s in spent if most > 0 and s >= most / 4)


def child(threads):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(1)
    rows = []
    for causal in (False, True):
        for d in DS:
            for n in SIZES:
                Q, K, V = (torch.randn(1, 1, n, d, generator=g, dtype=torch.float64)
                           for _ in range(3))

                def call():
                    return F.scaled_dot_product_attention(Q, K, V, is_causal=causal)

                # Checked on the shapes it is cheap on (the formula forms N x N matrices).
                difference = (float((call() - reference(Q, K, V, causal)).abs().max())
                              if n <= 2048 else None)
                call()  # warm-up: first-touch page faults and library initialisation stay out
                walls, cpus = [], []
                ticks = thread_cpu_ticks()
                while len(walls) < MIN_REPS or (sum(walls) < TARGET_SECONDS
                                                and len(walls) < MAX_REPS):
                    wall, cpu = peercontext.timed(call)
                    walls.append(wall)
                    cpus.append(cpu)
                busy = threads_busy(ticks, thread_cpu_ticks())
                median = statistics.median(walls)
                flops = useful_flops(n, d, causal)
                rows.append({"N": n, "d": d, "causal": causal, "repetitions": len(walls),
                             "seconds_median": median, "seconds_min": min(walls),
                             "seconds": walls,
                             # Over all repetitions: Linux adds another thread's CPU time to
                             # the process's at its next tick (4 ms), so a short call alone
                             # would not show the second thread's work.
                             "cpu_per_wall": sum(cpus) / sum(walls),
                             "threads_busy": busy,
                             "flops_per_call": flops, "gflops": flops / median / 1e9,
                             "max_abs_difference_from_formula": difference})
    backend = torch._fused_sdp_choice(Q, K, V, is_causal=True)
    return {"threads": threads, "torch_num_threads": torch.get_num_threads(),
            "backend": torch.nn.attention.SDPBackend(backend).name,
            "parallel_info": torch.__config__.parallel_info(),
            "blas": peercontext.blas_context(), "results": rows}


def key(n, d, causal):  # the summary's key of one shape
    return f"{'causal' if causal else 'none'}/d{d}/N{n}"


def os_release():
    try:
        with open("/etc/os-release") as f:
            return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line) \
                .get("PRETTY_NAME", "?").strip('"')
    except OSError:
        return "?"


def main(argv):
    if len(argv) == 3 and argv[1] == "--child":
        json.dump(child(int(argv[2])), sys.stdout)
        return 0
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: sdpa.py OUTDIR  (writes OUTDIR/peers-sdpa.json)", file=sys.stderr)
        return 2
    import torch
    context = peercontext.machine_context()
    context.update({"torch_version": torch.__version__,
                    "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                    "torch_config": torch.__config__.show(),
                    "os": os_release(), "machine": platform.machine(),
                    "call": "torch.nn.functional.scaled_dot_product_attention(Q, K, V, "
                            "is_causal=causal), Q, K, V of shape (1, 1, N, d)",
                    "dtype": "float64", "flops": FLOPS,
                    "timing": f"wall-clock seconds per call, median of >= {MIN_REPS} "
                              f"repetitions (until {TARGET_SECONDS} s, at most {MAX_REPS}) "
                              "after one warm-up call"})
    script = os.path.abspath(__file__)
    runs = []
    for threads, wait in ((1, None), (2, None), (2, "PASSIVE")):
        print(f"peers/sdpa: PyTorch {torch.__version__}, {threads} thread(s)"
              + (f", OMP_WAIT_POLICY={wait}" if wait else ""), file=sys.stderr, flush=True)
        env = {"OPENBLAS_NUM_THREADS": "1"}
        if wait:
            env["OMP_WAIT_POLICY"] = wait
        # peercontext sets OPENBLAS_NUM_THREADS to the thread count; the SDPA kernel needs 1.
        run = peercontext.run_child(script, [], threads, timeout=900, extra_env=env)
        run["key"] = f"sdpa_{threads}" + ("_passive" if wait else "")
        run["OMP_WAIT_POLICY"] = wait
        for r in run["results"]:
            print(f"  {'causal' if r['causal'] else 'no mask'} d = {r['d']:3d} N = {r['N']:5d}: "
                  f"{r['seconds_median'] * 1e3:9.2f} ms {r['gflops']:6.2f} GFLOP/s "
                  f"(x{r['cpu_per_wall']:.2f} CPU, {r['threads_busy']} thread(s) busy)",
                  file=sys.stderr)
        runs.append(run)
    context["blas"] = runs[0]["blas"]["name"]
    context["backend"] = runs[0]["backend"]
    context["variants"] = [r["key"] for r in runs]
    context["load_average_end"] = peercontext.load_average()
    # The numbers a page quotes, flattened: "sdpa_1" -> {"causal/d64/N1024": GFLOP/s}.
    summary = {run["key"]: {
        "gflops": {key(r["N"], r["d"], r["causal"]): r["gflops"] for r in run["results"]},
        "cpu_per_wall": {key(r["N"], r["d"], r["causal"]): r["cpu_per_wall"]
                         for r in run["results"]},
        "threads_busy": {key(r["N"], r["d"], r["causal"]): r["threads_busy"]
                         for r in run["results"]}} for run in runs}
    path = peercontext.write(argv[1], "peers-sdpa.json",
                             {"context": context, "summary": summary, "runs": runs})
    print(f"peers/sdpa: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
