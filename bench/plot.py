#!/usr/bin/env python3
"""Figures and tables of the performance page from the benchmarks' JSON (stdlib + gnuplot).

    python3 bench/plot.py JSON_DIR

reads JSON_DIR/{attention,memory,training}.json (written by `./book bench`), writes the
figures' CSV data into JSON_DIR, renders figures/perf-*.svg with figures/perf-*.gp, and
rewrites the generated part of docs/performance.md (between its `bench:begin` and
`bench:end` markers): the machine, the load, and the tables of medians.
"""
import json
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
figures = root / "figures"
page = root / "docs" / "performance.md"

# Chapter 03's PyTorch formulation, seconds per Adam iteration (chapter 03's README, "How
# fast"; the same numbers are in bench/bench_training.cpp): (n, d) -> (identity, softmax).
pytorch_per_iteration = {(100, 10): (0.5e-3, 0.6e-3), (1000, 10): (9e-3, 24e-3),
                         (1000, 100): (61e-3, 79e-3)}


def load(path):
    with open(path) as f:
        return json.load(f)


def medians(doc):
    """name -> median row (aggregates when repeated, else the single run)."""
    rows = {}
    for b in doc["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                rows[name] = b
        elif name not in rows:
            rows[name] = b
    return rows


def args(name):
    return {k: int(v) for k, v in re.findall(r"(\w+):(\d+)", name)}


def seconds(row):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row["time_unit"]]
    return row["cpu_time"] * scale


def gnuplot(script, out, **variables):
    expr = "; ".join(f"{k}='{v}'" if isinstance(v, str) else f"{k}={v}"
                     for k, v in variables.items())
    subprocess.run(["gnuplot", "-e", f"{expr}; out='{out}'", str(figures / script)],
                   check=True)


def main(json_dir):
    json_dir = pathlib.Path(json_dir)
    att = load(json_dir / "attention.json")
    rows = medians(att)
    lines = []

    # Throughput: GFLOP/s against N, for each d, of Eigen's GEMM and each form of attention:
    # BM_reference is attention() (the reference, A formed whole), BM_forward is
    # attention_row_blocks(), BM_tiled tiled_attention(), BM_backward attention_backward().
    # The reference comes last in the CSV, so that the figure's columns keep their places.
    kinds = ["gemm", "forward", "tiled", "backward", "reference"]
    table = {}
    for name, row in rows.items():
        m = re.match(r"BM_(gemm|reference|forward|tiled|backward)/N:(\d+)/d:(\d+)$", name)
        if m:
            table[(m[1], int(m[2]), int(m[3]))] = row["GFLOP/s"]
    ds = sorted({d for (_, _, d) in table})
    ns = sorted({n for (_, n, _) in table})
    for d in ds:
        csv = json_dir / f"perf-throughput-d{d}.csv"
        with open(csv, "w") as f:
            f.write("N," + ",".join(kinds) + "\n")
            for n in ns:
                f.write(f"{n}," + ",".join(f"{table.get((k, n, d), float('nan')):.4g}"
                                           for k in kinds) + "\n")
    gnuplot("perf-throughput.gp", figures / "perf-throughput.svg",
            in64=str(json_dir / "perf-throughput-d64.csv"),
            in128=str(json_dir / "perf-throughput-d128.csv"))
    forms = ("reference", "forward", "tiled", "backward")
    lines.append("| N | d | GEMM | attention() (reference) | % of GEMM | attention_row_blocks() "
                 "| % | tiled_attention() | % | attention_backward() | % |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for d in ds:
        for n in ns:
            g = table.get(("gemm", n, d))
            cells = []
            for k in forms:
                v = table.get((k, n, d))
                cells.append("— | —" if v is None else f"{v:.1f} | {100 * v / g:.0f}%")
            lines.append(f"| {n} | {d} | {g:.1f} | " + " | ".join(cells) + " |")
    throughput_table = "\n".join(lines)

    # Two cores: one thread against two independent copies at once.
    cores = []
    for kind in ("gemm", "forward"):  # forward: attention_row_blocks()
        one = rows.get(f"BM_{kind}_cores/N:2048/d:64/real_time/threads:1")
        two = rows.get(f"BM_{kind}_cores/N:2048/d:64/real_time/threads:2")
        if one and two:
            g1, g2 = one["GFLOP/s"], two["GFLOP/s"]
            cores.append(f"| {kind} | {g1:.1f} | {g2:.1f} | {g2 / g1:.2f}x |")
    cores_table = "\n".join(["| N = 2048, d = 64 | 1 thread | 2 threads, 2 copies | "
                             "speed-up |", "|---|---|---|---|"] + cores)

    # Memory: peak RSS against N.
    mem = medians(load(json_dir / "memory.json"))
    peaks = {}
    for name, row in mem.items():
        m = re.match(r"BM_peak_memory/(\w+)/N:(\d+)", name)
        if m:
            peaks[(m[1], int(m[2]))] = row["peak_RSS_MiB"]
    mem_ns = sorted({n for (_, n) in peaks})
    with open(json_dir / "perf-memory.csv", "w") as f:
        f.write("N,reference,row_blocks,tiled,n2_mib,inputs_mib\n")
        for n in mem_ns:
            cells = [peaks.get((k, n)) for k in ("reference", "row_blocks", "tiled")]
            f.write(f"{n}," + ",".join("" if c is None else f"{c:.4g}" for c in cells) +
                    f",{n * n * 8 / 2**20:.6g},{4 * n * 64 * 8 / 2**20:.6g}\n")
    gnuplot("perf-memory.gp", figures / "perf-memory.svg",
            **{"in": str(json_dir / "perf-memory.csv")})
    mem_lines = ["| N | attention() (reference: A formed) | attention_row_blocks() | tiled_attention() "
                 "| N²·8 bytes | Q, K, V, O |", "|---|---|---|---|---|---|"]
    for n in mem_ns:
        cells = [peaks.get((k, n)) for k in ("reference", "row_blocks", "tiled")]
        mem_lines.append(f"| {n} | " + " | ".join("—" if c is None else f"{c:.0f} MiB"
                                                   for c in cells) +
                         f" | {n * n * 8 / 2**20:.0f} MiB | {4 * n * 64 * 8 / 2**20:.0f} MiB |")
    memory_table = "\n".join(mem_lines)

    # Chapter 03's trainer against the PyTorch formulation, per Adam iteration.
    train = medians(load(json_dir / "training.json"))
    with open(json_dir / "perf-training.csv", "w") as f:
        f.write("config,identity,softmax,torch_identity,torch_softmax,gemm_gflops,"
                "softmax_gflops\n")
        for (n, d), (ti, ts) in pytorch_per_iteration.items():
            ident = train.get(f"BM_identity/{n}/{d}")
            soft = train.get(f"BM_softmax/{n}/{d}")
            gemm = train.get(f"BM_scores_gemm/{n}/{d}")
            if not (ident and soft and gemm):
                continue
            f.write(f"\"({n}, {d})\",{ident['s/iter']:.4g},{soft['s/iter']:.4g},{ti},{ts},"
                    f"{gemm['GFLOP/s']:.4g},{soft['GFLOP/s']:.4g}\n")
    gnuplot("perf-training.gp", figures / "perf-training.svg",
            **{"in": str(json_dir / "perf-training.csv")})

    def duration(s):
        return f"{s * 1e6:.3g} µs" if s < 1e-3 else f"{s * 1e3:.3g} ms"
    train_lines = ["| (n, d) | h = identity | h = softmax | softmax GFLOP/s | GEMM of the score "
                   "shape, GFLOP/s | PyTorch, identity / softmax (not measured here) |",
                   "|---|---|---|---|---|---|"]
    for (n, d), (ti, ts) in pytorch_per_iteration.items():
        ident = train.get(f"BM_identity/{n}/{d}")
        soft = train.get(f"BM_softmax/{n}/{d}")
        gemm = train.get(f"BM_scores_gemm/{n}/{d}")
        if ident and soft and gemm:
            train_lines.append(
                f"| ({n}, {d}) | {duration(ident['s/iter'])} | {duration(soft['s/iter'])} | "
                f"{soft['GFLOP/s']:.0f} | {gemm['GFLOP/s']:.0f} | "
                f"{duration(ti)} / {duration(ts)} |")
    training_table = "\n".join(train_lines)

    # The machine, from the run's own context.
    c = att["context"]
    machine = [
        "| | |", "|---|---|",
        f"| CPU | {c.get('cpu_model', '?')}, {c.get('cores', '?')} cores at "
        f"{c.get('mhz_per_cpu', '?')} MHz |",
        f"| caches (per core) | L1d {c.get('l1d_cache', '?')}, L2 {c.get('l2_cache', '?')}; "
        f"L3 {c.get('l3_cache', '?')} (as the virtual machine reports it) |",
        f"| compiler | {c.get('compiler', '?')} |",
        f"| flags | `{c.get('compiler_flags', '?')}` |",
        f"| Eigen | {c.get('eigen_version', '?')}, {c.get('eigen_threads', '?')} thread(s), "
        f"OpenMP: {c.get('openmp', '?')} |",
        f"| run | {c.get('date', '?')}; load average at the start "
        f"{', '.join(f'{x:.2f}' for x in c.get('load_avg', []))} |",
    ]
    generated = "\n\n".join([
        "<!-- Generated by bench/plot.py from the last `./book bench`; do not edit. -->",
        "**The machine** (recorded by the run itself):", "\n".join(machine),
        "**Throughput**, GFLOP/s (medians of 3 repetitions, CPU time), and the share of "
        "Eigen's GEMM on the same shapes:", throughput_table,
        "**Two cores**, GFLOP/s of both threads together (wall time):", cores_table,
        "**Peak memory** (resident set, measured in a fresh child process per size, d = 64):",
        memory_table,
        "**Chapter 03's trainer**, time per Adam iteration (medians of 3 repetitions); the "
        "PyTorch column holds one-off timings taken outside this repository, kept in "
        "`bench/plot.py`, not measured by this run:", training_table])
    text = page.read_text()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        page.write_text(head + begin + "\n" + generated + "\n" + end + tail)
    print(f"plot.py: figures/perf-*.svg and {page.relative_to(root)} updated", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py JSON_DIR")
    main(sys.argv[1])
