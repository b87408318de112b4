"""Figures and tables of the performance page from the benchmarks' JSON (stdlib + gnuplot).

    python -m book.performance JSON_DIR

reads JSON_DIR/{attention,memory,training,peak}.json (the book's benchmarks), the peers'
JSON_DIR/peers-{attention,training}.json (bench/peers/, PyTorch and NumPy, measured in the same
`./book bench` run) and JSON_DIR/ch03-reduced/results.json (chapter 03's program on the reduced
experiment), writes the figures' CSV data into JSON_DIR, renders figures/perf-*.svg with
figures/perf-*.gp (and their phone drawings, figures/narrow/perf-*.svg), and rewrites the generated parts of docs/performance.md and of chapter 03's
README (their generated regions, book.pages.generated). Every ratio to a peer is computed
here from that one run's JSON; no number of a peer is written anywhere else.
"""
import json
import pathlib
import re
import subprocess
import sys

from .pages.generated import write_generated

root = pathlib.Path(__file__).resolve().parents[2]
figures = root / "figures"
page = root / "docs" / "performance.md"

chapter03 = root / "chapters" / "03-least-squares" / "README.md"
SIZES = [(100, 10), (1000, 10), (1000, 100)]  # chapter 03's (n, d), as bench-training runs them


def load(path):
    with open(path) as f:
        return json.load(f)


def load_optional(path):
    """The JSON at `path`, or None when that part was not run (no PyTorch installed, say)."""
    return load(path) if path.is_file() else None


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
    """Draws out with script, and its phone drawing (the script's narrow=1) into
    figures/narrow/, which the site shows on a phone (book.pages.fix_html)."""
    expr = "; ".join(f"{k}='{v}'" if isinstance(v, str) else f"{k}={v}"
                     for k, v in variables.items())
    narrow = figures / "narrow" / out.name
    narrow.parent.mkdir(exist_ok=True)
    for statements in (f"{expr}; out='{out}'", f"{expr}; out='{narrow}'; narrow=1"):
        subprocess.run(["gnuplot", "-e", statements, str(figures / script)], check=True)


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
    # The ceiling: the core's peak rate of fused multiply-adds (bench-peak), which does not
    # move with the memory traffic of the moment the way the GEMM line does.
    peak_rows = medians(load_optional(json_dir / "peak.json") or {"benchmarks": []})
    peak = {1: None, 2: None}
    for name, row in peak_rows.items():
        if name == "BM_fma_peak":
            peak[1] = row["GFLOP/s"]
        m = re.fullmatch(r"BM_fma_peak_cores/.*threads:(\d+)", name)
        if m and int(m[1]) == 2:
            peak[2] = row["GFLOP/s"]

    def share(v, of):
        return "—" if v is None or not of else f"{100 * v / of:.0f}%"
    forms = ("reference", "forward", "tiled", "backward")
    lines.append("| N | d | GEMM | attention() (reference) | % of GEMM | attention_row_blocks() "
                 "| % | tiled_attention() | % | attention_backward() | % |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    peak_lines = ["| N | d | GEMM | attention() (reference) | attention_row_blocks() "
                  "| tiled_attention() | attention_backward() |", "|---|---|---|---|---|---|---|"]
    for d in ds:
        for n in ns:
            g = table.get(("gemm", n, d))
            cells = []
            for k in forms:
                v = table.get((k, n, d))
                cells.append("— | —" if v is None else f"{v:.1f} | {100 * v / g:.0f}%")
            lines.append(f"| {n} | {d} | {g:.1f} | " + " | ".join(cells) + " |")
            peak_lines.append(f"| {n} | {d} | " + " | ".join(
                share(table.get((k, n, d)), peak[1]) for k in ("gemm",) + forms) + " |")
    throughput_table = "\n".join(lines)
    peak_table = "\n".join(peak_lines)

    # One attention call on one and on two threads (the library splits its blocks of
    # queries), beside PyTorch and NumPy on the same machine in the same run.
    threaded = {}
    for name, row in rows.items():
        m = re.match(r"BM_forward_threads/N:(\d+)/d:64/threads:(\d+)", name)
        if m:
            threaded[(int(m[1]), int(m[2]))] = row["GFLOP/s"]
    peers_att = load_optional(json_dir / "peers-attention.json")
    summary = peers_att["summary"] if peers_att else {}

    def peer(key, n):
        return summary.get(key, {}).get("gflops", {}).get(str(n))

    def num(v, fmt=".1f"):
        return "—" if v is None else format(v, fmt)

    def ratio(a, b):  # a / b, as "2.93×"; "—" when either was not measured
        return "—" if a is None or b is None else f"{a / b:.3g}×"
    peer_lines = ["| N | this book, 1 thread | 2 threads | PyTorch, 1 thread | 2 threads "
                  "| NumPy, 1 thread | book ÷ PyTorch, 1 thread | 2 threads "
                  "| book, % of FMA peak, 1 thread | 2 threads |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
    for n in sorted({n for (n, _) in threaded}):
        b1, b2 = threaded.get((n, 1)), threaded.get((n, 2))
        # PyTorch's better two-thread variant (its OpenMP workers spin by default).
        t1 = peer("torch_1", n)
        t2 = max((v for v in (peer("torch_2", n), peer("torch_2_passive", n)) if v), default=None)
        peer_lines.append(
            f"| {n} | {num(b1)} | {num(b2)} | {num(t1)} | {num(t2)} | "
            f"{num(peer('numpy_1', n))} | {ratio(b1, t1)} | {ratio(b2, t2)} | "
            f"{share(b1, peak[1])} | {share(b2, peak[2])} |")
    peer_table = "\n".join(peer_lines)
    if peers_att:
        c = peers_att["context"]
        peers_note = (f"PyTorch {c.get('torch_version', '?')} and NumPy "
                      f"{c.get('numpy_version', '?')} from Debian, float64, on "
                      f"{c.get('blas', '?')}; PyTorch as `torch.softmax(Q @ K.T / "
                      "math.sqrt(d), dim=-1) @ V`, NumPy with the row maximum subtracted "
                      "(`bench/peers/attention.py`)")
    else:
        peers_note = ("the peers were not measured in this run (python3-torch is not "
                      "installed; `./book bench` as root installs it)")
    peak_note = ("—" if peak[1] is None else
                 f"{peak[1]:.1f} GFLOP/s on one core, {num(peak[2])} on two")

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

    # Chapter 03's trainer against its PyTorch formulation, per Adam iteration (one thread
    # each), and the whole experiment at reduced length (two threads each).
    train = medians(load(json_dir / "training.json"))
    peers_train = load_optional(json_dir / "peers-training.json")
    per_iteration = peers_train["summary"]["seconds_per_iteration"]["1"] if peers_train else {}

    def torch_iteration(n, d, h):
        return per_iteration.get(f"n{n}_d{d}_{h}")
    with open(json_dir / "perf-training.csv", "w") as f:
        f.write("config,identity,softmax,torch_identity,torch_softmax\n")
        for n, d in SIZES:
            ident = train.get(f"BM_identity/{n}/{d}")
            soft = train.get(f"BM_softmax/{n}/{d}")
            if not (ident and soft):
                continue
            ti, ts = torch_iteration(n, d, "identity"), torch_iteration(n, d, "softmax")
            f.write(f"\"({n}, {d})\",{ident['s/iter']:.4g},{soft['s/iter']:.4g},"
                    f"{'NaN' if ti is None else f'{ti:.4g}'},"
                    f"{'NaN' if ts is None else f'{ts:.4g}'}\n")
    gnuplot("perf-training.gp", figures / "perf-training.svg",
            **{"in": str(json_dir / "perf-training.csv")})

    def duration(s):
        if s is None:
            return "—"
        return f"{s * 1e6:.3g} µs" if s < 1e-3 else f"{s * 1e3:.3g} ms"

    train_lines = ["| (n, d) | this book, h = identity | PyTorch | book faster by "
                   "| this book, h = softmax | PyTorch | book faster by "
                   "| softmax GFLOP/s | GEMM of the score shape, GFLOP/s |",
                   "|---|---|---|---|---|---|---|---|---|"]
    for n, d in SIZES:
        ident = train.get(f"BM_identity/{n}/{d}")
        soft = train.get(f"BM_softmax/{n}/{d}")
        gemm = train.get(f"BM_scores_gemm/{n}/{d}")
        if ident and soft and gemm:
            ti, ts = torch_iteration(n, d, "identity"), torch_iteration(n, d, "softmax")
            train_lines.append(
                f"| ({n}, {d}) | {duration(ident['s/iter'])} | {duration(ti)} | "
                f"{ratio(ti, ident['s/iter'])} | {duration(soft['s/iter'])} | "
                f"{duration(ts)} | {ratio(ts, soft['s/iter'])} | "
                f"{soft['GFLOP/s']:.0f} | {gemm['GFLOP/s']:.0f} |")
    training_table = "\n".join(train_lines)

    # The softmax iteration on one and two threads, the book's (its query blocks shared
    # between the cores, bench-training's *_threads, wall time) and PyTorch's.
    per_iteration_2 = peers_train["summary"]["seconds_per_iteration"].get("2", {}) \
        if peers_train else {}
    thread_lines = ["| (n, d), h = softmax | this book, 1 thread | 2 threads | PyTorch, 1 thread "
                    "| 2 threads |", "|---|---|---|---|---|"]
    for n, d in SIZES:
        mine = {t: train.get(f"BM_softmax_threads/n:{n}/d:{d}/threads:{t}/real_time")
                for t in (1, 2)}
        if not all(mine.values()):
            continue
        thread_lines.append(
            f"| ({n}, {d}) | {duration(mine[1]['s/iter'])} | {duration(mine[2]['s/iter'])} | "
            f"{duration(torch_iteration(n, d, 'softmax'))} | "
            f"{duration(per_iteration_2.get(f'n{n}_d{d}_softmax'))} |")
    threads_table = "\n".join(thread_lines)

    reduced = load_optional(json_dir / "ch03-reduced" / "results.json")
    ours_s = reduced.get("time_experiments_seconds") if reduced else None
    # PyTorch at its best thread count: on two threads its idle OpenMP workers compete with
    # OpenBLAS for the two cores, and one thread is often faster (peers-training.json has both).
    theirs_s = peers_train["summary"]["experiment_seconds_best"] if peers_train else None
    theirs_t = peers_train["summary"]["experiment_best_threads"] if peers_train else None
    if ours_s is not None and theirs_s is not None:
        experiment = (f"the whole experiment at reduced length (3 sizes × 2 normalisations × "
                      f"2 runs × 100 iterations) trained in {ours_s:.2f} s with this book's "
                      f"trainer on two threads and {theirs_s:.2f} s with its PyTorch "
                      f"formulation on its faster thread count ({theirs_t}): "
                      f"{theirs_s / ours_s:.1f}× faster")
    else:
        experiment = ("the whole experiment at reduced length was not compared in this run "
                      "(PyTorch not installed)")
    soft_big = train.get("BM_softmax/1000/100")
    torch_big = torch_iteration(1000, 100, "softmax")
    chapter_text = "\n".join([
        "<!-- Generated by tools/book/performance.py from the last `./book bench`; do not edit. -->",
        f"In the last `./book bench` (the machine of the "
        f"[performance page](../../docs/performance.md#chapter-03s-trainer-against-the-pytorch-formulation)), "
        f"{experiment}. One Adam iteration of the softmax system at the source's largest "
        f"size ($n = 1000$, $d = 100$), one thread each: "
        f"{duration(soft_big['s/iter'] if soft_big else None)} against "
        f"{duration(torch_big)} "
        f"({ratio(torch_big, soft_big['s/iter'] if soft_big else None)}). "
        + (f"The PyTorch side: PyTorch {peers_train['context'].get('torch_version', '?')} "
           f"from Debian on {peers_train['context'].get('blas', '?')}, float64, written as a "
           "PyTorch user writes it (`torch.optim.Adam`, `bench/peers/training.py`)."
           if peers_train else "")])

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
        "<!-- Generated by tools/book/performance.py from the last `./book bench`; do not edit. -->",
        "**The machine** (recorded by the run itself):", "\n".join(machine),
        "**Throughput**, GFLOP/s (medians of 3 repetitions, CPU time), and the share of "
        "Eigen's GEMM on the same shapes:", throughput_table,
        f"**The ceiling**, the core's peak rate of fused multiply-adds (`bench-peak`): "
        f"{peak_note}. Each kernel of the table above as a share of it (one core; unlike "
        "the GEMM line, this ceiling does not move with the memory traffic of the moment):",
        peak_table,
        "**One call on one and two threads, beside the peers**, GFLOP/s (wall time, d = 64; "
        f"the same flops counted for all; {peers_note}):", peer_table,
        "**Two cores, two copies**, GFLOP/s of both threads together (wall time):",
        cores_table,
        "**Peak memory** (resident set, measured in a fresh child process per size, d = 64):",
        memory_table,
        "**Chapter 03's trainer**, time per Adam iteration on one thread, beside its PyTorch "
        "formulation measured in the same run (medians):", training_table,
        "**The softmax iteration on one and two threads** (wall time, medians):",
        threads_table,
        f"**Chapter 03's experiment**: {experiment}."])
    write_generated(page, generated)
    write_generated(chapter03, chapter_text)
    print(f"book.performance: figures/perf-*.svg and {page.relative_to(root)} updated",
          file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m book.performance JSON_DIR")
    main(sys.argv[1])
