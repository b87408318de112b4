#!/usr/bin/env python3
"""Chapter 03's experiment in PyTorch, float64, torch.optim.Adam, as the paper's code would be
written: the peer of bench/bench_training.cpp and of the chapter's trainer.

    python3 bench/peers/training.py OUTDIR      writes OUTDIR/peers-training.json

The model (chapters/03-least-squares/README.md, sections 3 and 7; code/src/
attention_regression.cpp): trainable W_Q, W_K (d x d) and a scalar w_v,
    yhat = h(X @ W_Q @ W_K.T @ X.T) @ Y * w_v,   loss = mean((yhat - Y)^2),
h = softmax over rows or h = identity, no 1/sqrt(d). Data: X ~ U[-10, 10]^(n x d),
beta ~ N(0, I_d), Y = X beta + N(0, 1). Start: W_Q, W_K ~ N(0, s^2) with
s = 1 / (sigma_x d^(3/4)), sigma_x = 20 / sqrt(12); w_v = 1 for softmax and, for identity,
the w_v that minimises the first loss. Adam with PyTorch's defaults (lr 1e-3, betas (0.9,
0.999), eps 1e-8) and ExponentialLR(gamma = 0.997) stepped after every update, which is the
book's eta_t = eta 0.997^(t-1). Every iteration records loss.item(), as a training loop that
plots its loss curve does (the book's trainer records every loss too).

The data are drawn by torch's generator, not the book's mt19937_64, so the bits differ from
the C++ trainer's: only the cost is compared, on the same shapes and the same flop count. The
softmax system's two n x n products are 4 n^2 d flops per iteration here as in the book
(X W_Q W_K^T X^T, 2 n^2 d, and its backward dS @ X, 2 n^2 d; X needs no gradient).
The identity system is written the way the paper writes it, forming the n x n matrix S;
the book's trainer never forms it (O(nd + d^2) per iteration, section 7). What is checked
instead of the bits: autograd's gradient equals the chapter's hand-derived gradient
(section 7: C = X^T E X, dW_Q = C W_K, dW_K = C^T W_Q, dw_v = G^T z) at the initial
parameters, to 1e-10 relative, so this is the chapter's model and loss.

Measured:
  iteration   one Adam iteration (zero_grad, forward, loss, backward, step, scheduler step,
              loss.item()): median wall seconds, at each (n, d) and h, on 1 and 2 threads
  experiment  the reduced experiment: 3 sizes x 2 normalisations x 2 runs x 100 iterations
              (plus the final loss), on 1 and 2 threads (torch.set_num_threads; the runs
              one after another, as a PyTorch script runs them): the total seconds of
              training, data generation and least squares excluded, as the book's trainer
              times it. Both thread counts, because on this 2-core machine two OpenMP
              threads that spin-wait beside OpenBLAS's own threads can make PyTorch slower
              on two threads than on one (cpu_seconds shows it); the peer's best is the
              smaller total.
Standard library + torch only.
"""
import json
import math
import os
import statistics
import sys
import time

import peercontext  # noqa: E402  (beside this script, on sys.path as its folder)

SIZES = [(100, 10), (1000, 10), (1000, 100)]
NORMALISATIONS = ["identity", "softmax"]
RUNS, ITERATIONS = 2, 100           # the reduced experiment
EXPERIMENT_THREADS = [1, 2]
ITERATION_THREADS = [1, 2]
TARGET_SECONDS = 0.5                # per (n, d, h): time iterations until they add up to this
MIN_ITERS, MAX_ITERS, WARMUP = 10, 3000, 3
GRADIENT_TOLERANCE = 1e-10
FLOPS = ("softmax: 4 * n^2 * d per iteration (the two n x n products, as "
         "bench/bench_training.cpp counts them); identity: not counted (the book's trainer "
         "does O(nd + d^2), this formulation forms S)")


def problem(torch, n, d, seed):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.float64) * 20 - 10
    beta = torch.randn(d, 1, generator=g, dtype=torch.float64)
    Y = X @ beta + torch.randn(n, 1, generator=g, dtype=torch.float64)
    return X, Y, g


def attention_regressor(torch, h):
    class AttentionRegressor(torch.nn.Module):
        """yhat = h(X W_Q W_K^T X^T) Y w_v: every training row attends to all of them."""

        def __init__(self, X, Y, g):
            super().__init__()
            d = X.shape[1]
            s = 1.0 / (20.0 / math.sqrt(12.0) * d ** 0.75)
            self.W_Q = torch.nn.Parameter(torch.randn(d, d, generator=g, dtype=X.dtype) * s)
            self.W_K = torch.nn.Parameter(torch.randn(d, d, generator=g, dtype=X.dtype) * s)
            w_v = 1.0
            if h == "identity":  # the w_v that minimises the first loss
                with torch.no_grad():
                    u = (X @ self.W_Q @ self.W_K.T @ X.T) @ Y
                    w_v = float((u * Y).sum() / (u * u).sum())
            self.w_v = torch.nn.Parameter(torch.tensor(w_v, dtype=X.dtype))

        def forward(self, X, Y):
            S = X @ self.W_Q @ self.W_K.T @ X.T
            A = torch.softmax(S, dim=-1) if h == "softmax" else S
            return A @ Y * self.w_v

    return AttentionRegressor


def trainer(torch, X, Y, g, h):
    model = attention_regressor(torch, h)(X, Y, g)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.997)
    losses = []

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(X, Y), Y)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())

    return model, step, losses


def hand_gradient(torch, model, X, Y, h):
    """Section 7's gradient, written out: the check that autograd differentiates the
    chapter's model and loss."""
    with torch.no_grad():
        n = X.shape[0]
        W_Q, W_K, w_v = model.W_Q, model.W_K, model.w_v
        M = W_Q @ W_K.T
        if h == "identity":
            b = X.T @ Y
            u = M @ b
            yhat = w_v * (X @ u)
            G = 2.0 / n * (yhat - Y)
            g = X.T @ G
            C = w_v * g @ b.T
            dw_v = (g * u).sum()
        else:
            A = torch.softmax(X @ M @ X.T, dim=-1)
            z = A @ Y
            G = 2.0 / n * (w_v * z - Y)
            E = w_v * G * A * (Y.T - z)          # E_ij = w_v G_i A_ij (Y_j - z_i)
            C = X.T @ E @ X
            dw_v = (G * z).sum()
        return C @ W_K, C.T @ W_Q, dw_v


def gradient_check(torch):
    checks = []
    for n, d in [(100, 10), (50, 7)]:
        for h in NORMALISATIONS:
            X, Y, g = problem(torch, n, d, seed=7)
            model = attention_regressor(torch, h)(X, Y, g)
            loss = torch.nn.functional.mse_loss(model(X, Y), Y)
            loss.backward()
            # Relative to the largest entry of the whole gradient: for h = identity the
            # initial w_v minimises the loss, so dL/dw_v is zero up to rounding.
            auto = (model.W_Q.grad, model.W_K.grad, model.w_v.grad)
            scale = max(float(a.abs().max()) for a in auto)
            worst = max(float((a - b).abs().max()) / scale
                        for a, b in zip(auto, hand_gradient(torch, model, X, Y, h)))
            checks.append({"n": n, "d": d, "h": h, "loss": float(loss),
                           "max_relative_difference": worst,
                           "passed": worst <= GRADIENT_TOLERANCE})
    return checks


def child_iteration(threads):
    import torch
    torch.set_num_threads(threads)
    rows = []
    for n, d in SIZES:
        for h in NORMALISATIONS:
            X, Y, g = problem(torch, n, d, seed=1)
            _, step, _ = trainer(torch, X, Y, g, h)
            for _ in range(WARMUP):
                step()
            walls, cpus = [], []
            while len(walls) < MIN_ITERS or (sum(walls) < TARGET_SECONDS
                                             and len(walls) < MAX_ITERS):
                wall, cpu = peercontext.timed(step)
                walls.append(wall)
                cpus.append(cpu)
            median = statistics.median(walls)
            row = {"n": n, "d": d, "h": h, "threads": threads, "iterations": len(walls),
                   "seconds_per_iteration_median": median,
                   "seconds_per_iteration_min": min(walls),
                   "cpu_per_wall": sum(cpus) / sum(walls)}
            if h == "softmax":
                row["flops_per_iteration"] = 4.0 * n * n * d
                row["gflops"] = row["flops_per_iteration"] / median / 1e9
            rows.append(row)
    out = {"threads": threads, "torch_num_threads": torch.get_num_threads(),
           "blas": peercontext.blas_context(), "results": rows}
    if threads == 1:
        out["gradient_check"] = gradient_check(torch)
    return out


def child_experiment(threads):
    import torch
    torch.set_num_threads(threads)
    configs, total = [], 0.0
    for n, d in SIZES:
        for h in NORMALISATIONS:
            runs = []
            for r in range(RUNS):
                X, Y, g = problem(torch, n, d, seed=1000 * r + n + d)
                beta_ls = torch.linalg.lstsq(X, Y).solution
                ls_loss = float(((X @ beta_ls - Y) ** 2).mean())
                c0, t0 = time.process_time(), time.perf_counter()
                model, step, losses = trainer(torch, X, Y, g, h)
                for _ in range(ITERATIONS):
                    step()
                with torch.no_grad():  # the final loss, as the book's train() records it
                    losses.append(float(torch.nn.functional.mse_loss(model(X, Y), Y)))
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                runs.append({"seconds": wall, "cpu_seconds": cpu, "final_loss": losses[-1],
                             "final_loss_over_ls": losses[-1] / ls_loss,
                             "finite": all(math.isfinite(x) for x in losses)})
            seconds = sum(r["seconds"] for r in runs)
            total += seconds
            configs.append({"n": n, "d": d, "h": h, "runs": runs, "seconds": seconds})
    return {"threads": threads, "torch_num_threads": torch.get_num_threads(),
            "blas": peercontext.blas_context(), "sizes": [list(s) for s in SIZES],
            "normalisations": NORMALISATIONS, "runs": RUNS, "iterations": ITERATIONS,
            "configurations": configs, "seconds_total": total}


def main(argv):
    if len(argv) == 4 and argv[1] == "--child":
        fn = {"iteration": child_iteration, "experiment": child_experiment}[argv[2]]
        json.dump(fn(int(argv[3])), sys.stdout)
        return 0
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: training.py OUTDIR  (writes OUTDIR/peers-training.json)", file=sys.stderr)
        return 2
    import numpy
    import torch
    context = peercontext.machine_context()
    context.update({"torch_version": torch.__version__, "numpy_version": numpy.__version__,
                    "torch_config": torch.__config__.show(), "dtype": "float64",
                    "optimizer": "torch.optim.Adam(lr=1e-3) defaults, "
                                 "ExponentialLR(gamma=0.997) stepped per iteration",
                    "model": "yhat = h(X @ W_Q @ W_K.T @ X.T) @ Y * w_v, "
                             "loss = mse_loss(yhat, Y), h in {identity, softmax}",
                    "data": "torch generator: the same distributions and shapes as the "
                            "book's, not the same bits; only the cost is compared",
                    "flops": FLOPS,
                    "timing": "wall-clock seconds; iteration: median of >= "
                              f"{MIN_ITERS} iterations (until {TARGET_SECONDS} s) after "
                              f"{WARMUP} warm-up iterations; experiment: the sum of the "
                              "runs' training loops"})
    script = os.path.abspath(__file__)
    iteration = []
    for threads in ITERATION_THREADS:
        print(f"peers/training: one Adam iteration, {threads} thread(s)", file=sys.stderr,
              flush=True)
        run = peercontext.run_child(script, ["iteration"], threads, timeout=600)
        for r in run["results"]:
            print(f"  ({r['n']:4d}, {r['d']:3d}) {r['h']:8s}: "
                  f"{r['seconds_per_iteration_median'] * 1e3:8.3f} ms", file=sys.stderr)
        iteration.append(run)
    checks = iteration[0].get("gradient_check", [])
    for c in checks:
        print(f"  gradient check ({c['n']}, {c['d']}) {c['h']}: "
              f"{c['max_relative_difference']:.1e} relative", file=sys.stderr)
    experiment = []
    for threads in EXPERIMENT_THREADS:
        print(f"peers/training: the reduced experiment, {threads} thread(s)", file=sys.stderr,
              flush=True)
        run = peercontext.run_child(script, ["experiment"], threads, timeout=900)
        print(f"  {run['seconds_total']:.2f} s of training", file=sys.stderr)
        experiment.append(run)
    context["blas"] = iteration[0]["blas"]["name"]
    context["thread_counts"] = {"iteration": ITERATION_THREADS,
                                "experiment": EXPERIMENT_THREADS}
    context["load_average_end"] = peercontext.load_average()
    best = min(experiment, key=lambda r: r["seconds_total"])
    summary = {  # the numbers a page quotes, flattened; the lists above hold everything
        "seconds_per_iteration": {
            str(run["threads"]): {f"n{r['n']}_d{r['d']}_{r['h']}": r["seconds_per_iteration_median"]
                                  for r in run["results"]} for run in iteration},
        "experiment_seconds": {str(r["threads"]): r["seconds_total"] for r in experiment},
        "experiment_seconds_best": best["seconds_total"],
        "experiment_best_threads": best["threads"]}
    doc = {"context": context, "summary": summary, "iteration": iteration,
           "gradient_check": checks, "experiment": experiment}
    path = peercontext.write(argv[1], "peers-training.json", doc)
    print(f"peers/training: {path}", file=sys.stderr)
    if not all(c["passed"] for c in checks):
        print("peers/training: autograd's gradient differs from the chapter's by more than "
              f"{GRADIENT_TOLERANCE} relative", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
