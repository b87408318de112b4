#!/usr/bin/env python3
"""Softmax attention forward, float64, as a PyTorch user and a NumPy user write it.

    python3 bench/peers/attention.py OUTDIR      writes OUTDIR/peers-attention.json

The peer of bench/bench_attention.cpp's BM_forward (N = 256 ... 8192, d = 64):
  torch   torch.softmax(Q @ K.T / math.sqrt(d), dim=-1) @ V, on 1 and 2 threads
  numpy   S = Q @ K.T / sqrt(d); A = exp(S - S.max(1)); A /= A.sum(1); A @ V, on 1 thread
and torch on 2 threads once more with OMP_WAIT_POLICY=PASSIVE (key torch_2_passive): the
peer's better two-thread configuration when other processes share the cores.
Each thread count runs in its own process with OPENBLAS_NUM_THREADS and OMP_NUM_THREADS set
before torch or numpy is imported (OpenBLAS reads them once, at load; Debian's PyTorch,
built with BLAS_INFO=generic, does not pass torch.set_num_threads on to OpenBLAS), and torch
also gets torch.set_num_threads(threads).

Flops are counted as bench_attention.cpp counts them: only the two matrix products,
4 N^2 d per call (Q K^T and A V, 2 N^2 d each); the N^2 exponentials are not credited.
Times are wall-clock seconds per call, the median of the repetitions; cpu_per_wall (process
CPU seconds over wall seconds, all threads) shows how many cores a call kept busy.
Standard library + torch + numpy only.
"""
import json
import math
import os
import statistics
import sys

import peercontext  # noqa: E402  (beside this script, on sys.path as its folder)

SIZES = [256, 512, 1024, 2048, 4096, 8192]
D = 64
TARGET_SECONDS = 0.5   # repeat until the timed calls add up to this ...
MIN_REPS, MAX_REPS = 3, 30  # ... with at least MIN_REPS and at most MAX_REPS calls
FLOPS = "4 * N^2 * d (the two matrix products, as bench/bench_attention.cpp counts them)"


def measure(call, n):
    call()  # warm-up: first-touch page faults and library initialisation stay out
    walls, cpus = [], []
    while len(walls) < MIN_REPS or (sum(walls) < TARGET_SECONDS and len(walls) < MAX_REPS):
        wall, cpu = peercontext.timed(call)
        walls.append(wall)
        cpus.append(cpu)
    median = statistics.median(walls)
    flops = 4.0 * n * n * D
    return {"N": n, "d": D, "repetitions": len(walls), "seconds_median": median,
            "seconds_min": min(walls), "seconds": walls,
            "cpu_per_wall": statistics.median(c / w for c, w in zip(cpus, walls)),
            "flops_per_call": flops, "gflops": flops / median / 1e9}


def child_torch(threads):
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(1)
    rows = []
    for n in SIZES:
        Q, K, V = (torch.randn(n, D, generator=g, dtype=torch.float64) for _ in range(3))

        def call():
            return torch.softmax(Q @ K.T / math.sqrt(D), dim=-1) @ V

        row = measure(call, n)
        if n == SIZES[0]:  # the formulation is softmax attention: NumPy in float64 agrees
            q, k, v = Q.numpy(), K.numpy(), V.numpy()
            s = q @ k.T / math.sqrt(D)
            a = np.exp(s - s.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            row["max_abs_difference_from_numpy"] = float(np.abs(call().numpy() - a @ v).max())
        rows.append(row)
    return {"library": "torch", "threads": threads, "torch_num_threads": torch.get_num_threads(),
            "formulation": "torch.softmax(Q @ K.T / math.sqrt(d), dim=-1) @ V",
            "blas": peercontext.blas_context(), "results": rows}


def child_numpy(threads):
    import numpy as np
    rng = np.random.default_rng(1)
    rows = []
    for n in SIZES:
        Q, K, V = (rng.standard_normal((n, D)) for _ in range(3))

        def call():
            S = Q @ K.T / np.sqrt(D)
            A = np.exp(S - S.max(axis=1, keepdims=True))
            A /= A.sum(axis=1, keepdims=True)
            return A @ V

        rows.append(measure(call, n))
    return {"library": "numpy", "threads": threads,
            "formulation": "S = Q @ K.T / np.sqrt(d); A = np.exp(S - S.max(axis=1, "
                           "keepdims=True)); A /= A.sum(axis=1, keepdims=True); A @ V",
            "blas": peercontext.blas_context(), "results": rows}


def main(argv):
    if len(argv) == 4 and argv[1] == "--child":
        fn = {"torch": child_torch, "numpy": child_numpy}[argv[2]]
        json.dump(fn(int(argv[3])), sys.stdout)
        return 0
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: attention.py OUTDIR  (writes OUTDIR/peers-attention.json)", file=sys.stderr)
        return 2
    import numpy
    import torch
    context = peercontext.machine_context()
    context.update({"torch_version": torch.__version__, "numpy_version": numpy.__version__,
                    "torch_config": torch.__config__.show(),
                    "numpy_config": peercontext.numpy_config(numpy),
                    "dtype": "float64", "flops": FLOPS,
                    "timing": f"wall-clock seconds per call, median of >= {MIN_REPS} "
                              f"repetitions (until {TARGET_SECONDS} s, at most {MAX_REPS}) "
                              "after one warm-up call"})
    script = os.path.abspath(__file__)
    runs = []
    # torch_2_passive: OMP_WAIT_POLICY=PASSIVE, so that PyTorch's idle OpenMP threads sleep
    # instead of spinning on the cores OpenBLAS's threads need; on a 2-core machine with any
    # other load the default spinning makes the small sizes up to 20x slower (torch_2).
    variants = (("torch", 1, None), ("torch", 2, None), ("torch", 2, "PASSIVE"),
                ("numpy", 1, None))
    for library, threads, wait in variants:
        print(f"peers/attention: {library}, {threads} thread(s)"
              + (f", OMP_WAIT_POLICY={wait}" if wait else ""), file=sys.stderr, flush=True)
        run = peercontext.run_child(script, [library], threads, timeout=600,
                                    extra_env={"OMP_WAIT_POLICY": wait} if wait else None)
        run["key"] = f"{library}_{threads}" + ("_passive" if wait else "")
        for r in run["results"]:
            print(f"  N = {r['N']:5d}: {r['seconds_median'] * 1e3:9.2f} ms "
                  f"{r['gflops']:6.2f} GFLOP/s  (x{r['cpu_per_wall']:.2f} CPU)", file=sys.stderr)
        runs.append(run)
    context["blas"] = runs[0]["blas"]["name"]
    context["thread_counts"] = {"torch": [1, 2], "numpy": [1]}
    context["variants"] = [r["key"] for r in runs]
    context["load_average_end"] = peercontext.load_average()
    summary = {  # the numbers a page quotes, flattened: "torch_1" -> {"N": seconds}
        run["key"]: {
            "seconds": {str(r["N"]): r["seconds_median"] for r in run["results"]},
            "gflops": {str(r["N"]): r["gflops"] for r in run["results"]}} for run in runs}
    path = peercontext.write(argv[1], "peers-attention.json",
                             {"context": context, "summary": summary, "runs": runs})
    print(f"peers/attention: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
