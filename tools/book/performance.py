"""Figures and tables of the performance page from the benchmarks' JSON (stdlib + gnuplot).

    python -m book.performance JSON_DIR

reads JSON_DIR/{attention,memory,training,peak}.json (the book's benchmarks), the peers'
JSON_DIR/peers-{attention,training,sdpa}.json (bench/peers/: PyTorch and NumPy from Debian 12,
PyTorch 2's scaled_dot_product_attention from Debian 13, measured in the same `./book bench`
run), JSON_DIR/ch03-reduced/results.json (chapter 03's program on the reduced experiment) and
JSON_DIR/bench-run.json (how long the run took), writes the figures' CSV data into JSON_DIR, renders figures/perf-*.svg with
figures/perf-*.gp (and their phone drawings, figures/narrow/perf-*.svg), and rewrites the generated parts of docs/performance.md and of chapter 03's
README (their generated regions, book.pages.generated). Every ratio to a peer is computed
here from that one run's JSON, and names the PyTorch it was measured against; no number of
a peer is written anywhere else.
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


def num(v, fmt=".1f"):
    return "—" if v is None else format(v, fmt)


def ratio(a, b):  # a / b, as "2.93×"; "—" when either was not measured
    return "—" if a is None or b is None else f"{a / b:.3g}×"


def share(v, of):
    return "—" if v is None or not of else f"{100 * v / of:.0f}%"


FORMS = {"forward": "row blocks", "tiled": "tiled"}  # BM_<form>_threads: attention_row_blocks(),
# tiled_attention()


def threaded_rates(rows):
    """(form, N, d, causal, threads) -> GFLOP/s of BM_forward_threads and BM_tiled_threads."""
    rates = {}
    for name, row in rows.items():
        m = re.match(r"BM_(forward|tiled)_threads/N:(\d+)/d:(\d+)/causal:(\d)/threads:(\d+)",
                     name)
        if m:
            rates[(m[1], int(m[2]), int(m[3]), bool(int(m[4])), int(m[5]))] = row["GFLOP/s"]
    return rates


def best_form(rates, n, d, causal, threads):
    """(GFLOP/s, form) of the book's faster fast form on that shape, or (None, None)."""
    found = [(rates[(f, n, d, causal, threads)], f) for f in FORMS
             if (f, n, d, causal, threads) in rates]
    return max(found) if found else (None, None)


def sdpa_key(n, d, causal):  # as bench/peers/sdpa.py keys its summary
    return f"{'causal' if causal else 'none'}/d{d}/N{n}"


def sdpa_section(rates, sdpa, peak, thread_start=None):
    """The book's faster fast form against PyTorch 2's scaled_dot_product_attention, a table per
    (mask, d), and, in words, every shape where the book is not ahead: below 1.0x on one
    thread, at or below 1.0x on two. `rates` from threaded_rates(), `sdpa` the JSON of
    bench/peers/sdpa.py or None, `peak` {threads: FMA peak GFLOP/s or None}, `thread_start`
    the seconds parallel_for() takes to start and join one helper (BM_parallel_for_start)."""
    if sdpa is None:
        return ("**Against PyTorch 2's fused attention**: not measured in this run (its Debian 13 "
                "tree is made and entered by `./book bench` run as root; the run's output says "
                "why it was skipped).")
    c = sdpa["context"]
    torch = f"PyTorch {c.get('torch_version', '?')}"
    summary = sdpa["summary"]

    def times(a, b, digits=2):  # a / b as "0.93×", to `digits` decimals
        return "—" if a is None or b is None else f"{a / b:.{digits}f}×"

    def rate(key, n, d, causal):
        return summary.get(key, {}).get("gflops", {}).get(sdpa_key(n, d, causal))

    def worked(key, n, d, causal):  # "2 · 1.93": threads that worked · CPU ÷ wall
        if key is None:
            return "—"
        busy = summary.get(key, {}).get("threads_busy", {}).get(sdpa_key(n, d, causal))
        cpu = summary.get(key, {}).get("cpu_per_wall", {}).get(sdpa_key(n, d, causal))
        # 0: no thread was charged a clock tick during the calls, so nothing was seen
        return f"{num(busy, 'd') if busy else '—'} · {num(cpu, '.2f')}"
    shapes = sorted({(causal, d, n) for (_, n, d, causal, _) in rates})
    tables, behind_1, behind_2 = [], {}, {}  # (mask, d) -> ["N = 256 (0.93×)", ...]
    for causal, d in sorted({(causal, d) for causal, d, _ in shapes}):
        lines = [f"*{'Causal mask' if causal else 'No mask'}, d = {d}*, GFLOP/s of useful work "
                 f"(wall time; SDPA is {torch}'s):", "",
                 "| N | book, 1 thread | SDPA, 1 thread | book ÷ SDPA | book, 2 threads "
                 "| SDPA, 2 threads | book ÷ SDPA | SDPA, 2 threads: threads busy · CPU ÷ wall "
                 "| % of FMA peak, 1 thread: book | SDPA | 2 threads: book | SDPA |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for _, _, n in (s for s in shapes if s[:2] == (causal, d)):
            b1, f1 = best_form(rates, n, d, causal, 1)
            b2, f2 = best_form(rates, n, d, causal, 2)
            t1 = rate("sdpa_1", n, d, causal)
            # SDPA's better two-thread configuration (spinning or sleeping OpenMP workers).
            t2, k2 = max(((rate(k, n, d, causal), k) for k in ("sdpa_2", "sdpa_2_passive")
                          if rate(k, n, d, causal) is not None), default=(None, None))
            group = f"{'causal' if causal else 'no mask'}, d = {d}"
            if b1 is not None and t1 is not None and b1 / t1 < 1.0:
                behind_1.setdefault(group, []).append(f"N = {n} ({times(b1, t1, 3)})")
            if b2 is not None and t2 is not None and b2 / t2 <= 1.0:
                call = (2.0 * n * (n + 1) * d if causal else 4.0 * n * n * d) / (b2 * 1e9)
                behind_2.setdefault(group, []).append(
                    f"N = {n} ({times(b2, t2, 3)}; a call takes {call * 1e3:.2g} ms)")
            lines.append(
                f"| {n} | {num(b1)}{f' ({FORMS[f1]})' if f1 else ''} | {num(t1)} "
                f"| {times(b1, t1)} | {num(b2)}{f' ({FORMS[f2]})' if f2 else ''} | {num(t2)} "
                f"| {times(b2, t2)} | {worked(k2, n, d, causal)} "
                f"| {share(b1, peak[1])} | {share(t1, peak[1])} | {share(b2, peak[2])} "
                f"| {share(t2, peak[2])} |")
        tables.append("\n".join(lines))
    def where(behind):  # "no mask, d = 64: N = 256 (0.93×), N = 512 (0.97×); causal, ..."
        return "; ".join(f"{group}: {', '.join(shapes)}" for group, shapes in behind.items())
    if behind_1 or behind_2:
        verdict = (f"**Where the book is not ahead of {torch}'s SDPA in this run**: "
                   + (f"on one thread it is below 1.0× at {where(behind_1)}" if behind_1
                      else "on one thread it is at or above 1.0× on every shape")
                   + "; "
                   + (f"on two threads it is at or below 1.0× at {where(behind_2)}"
                      if behind_2 else "on two threads it is above 1.0× on every shape") + ".")
        if behind_2 and thread_start is not None:
            verdict += (" On two threads each call of the book's forms starts its helper thread "
                        "anew and joins it at the end (`attn::parallel_for` keeps no pool of "
                        "threads between calls, where SDPA's OpenMP threads wait for the next "
                        f"call): {thread_start * 1e6:.3g} µs per call on this machine "
                        "(`BM_parallel_for_start`, one helper started and joined around no "
                        "work), which weighs most on the shortest calls.")
    else:
        verdict = (f"In this run the book is at or above 1.0× of {torch}'s SDPA on one thread "
                   "and above 1.0× on two, on every shape measured.")
    intro = (f"**Against PyTorch 2's fused attention**: `torch.nn.functional."
             f"scaled_dot_product_attention` of {torch} from {c.get('os', '?')}, float64, its "
             f"{c.get('backend', '?')} kernel on {c.get('blas', '?')} (CPU capability "
             f"{c.get('cpu_capability', '?')}), one sequence and one head, beside the book's "
             "faster fast form on each shape (in brackets: `attention_row_blocks()` or "
             "`tiled_attention()`, `BM_forward_threads` and `BM_tiled_threads`), both on 1 and "
             "2 threads, measured in the same run. Flops are the useful ones, counted alike on "
             "both sides: $4N^2d$ without a mask, $2N(N+1)d$ with the causal mask (the "
             "$N(N+1)/2$ scores a query may see), whatever a kernel computes besides. On two "
             "threads SDPA's better OpenMP wait policy counts; \"threads busy\" counts its "
             "threads that did at least a quarter of the busiest one's work (2: the second "
             "thread worked), and its CPU time over the wall time is near 2 when both cores were "
             "its own, lower when other processes took turns on them (`bench/peers/sdpa.py`).")
    return "\n\n".join([intro, *tables, verdict])


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
    # queries), beside PyTorch 2's fused attention, and beside the plain formula in PyTorch
    # and NumPy from Debian 12, on the same machine in the same run.
    rates = threaded_rates(rows)
    start = rows.get("BM_parallel_for_start/real_time")  # wall time: the helper's own
    thread_start = (start["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[start["time_unit"]]
                    if start else None)
    sdpa_text = sdpa_section(rates, load_optional(json_dir / "peers-sdpa.json"), peak,
                             thread_start)
    peers_att = load_optional(json_dir / "peers-attention.json")
    summary = peers_att["summary"] if peers_att else {}
    torch_plain = (f"PyTorch {peers_att['context'].get('torch_version', '?')}"
                   if peers_att else "PyTorch")

    def peer(key, n):
        return summary.get(key, {}).get("gflops", {}).get(str(n))
    peer_lines = [f"| N | this book, 1 thread | 2 threads | {torch_plain}, 1 thread | 2 threads "
                  f"| NumPy, 1 thread | Eigen's GEMM, 1 thread | book ÷ {torch_plain}, 1 thread "
                  "| 2 threads |", "|---|---|---|---|---|---|---|---|---|"]
    for n in sorted({n for (_, n, d, causal, _) in rates if d == 64 and not causal}):
        b1, b2 = best_form(rates, n, 64, False, 1)[0], best_form(rates, n, 64, False, 2)[0]
        # PyTorch's better two-thread variant (its OpenMP workers spin by default).
        t1 = peer("torch_1", n)
        t2 = max((v for v in (peer("torch_2", n), peer("torch_2_passive", n)) if v), default=None)
        peer_lines.append(
            f"| {n} | {num(b1)} | {num(b2)} | {num(t1)} | {num(t2)} | "
            f"{num(peer('numpy_1', n))} | {num(table.get(('gemm', n, 64)))} "
            f"| {ratio(b1, t1)} | {ratio(b2, t2)} |")
    peer_table = "\n".join(peer_lines)
    if peers_att:
        c = peers_att["context"]
        peers_note = (f"{torch_plain} and NumPy {c.get('numpy_version', '?')} from Debian 12, "
                      f"float64, on {c.get('blas', '?')}; PyTorch as `torch.softmax(Q @ K.T / "
                      "math.sqrt(d), dim=-1) @ V`, NumPy with the row maximum subtracted "
                      "(`bench/peers/attention.py`); the book's faster fast form; Eigen's GEMM "
                      "is `BM_gemm` (CPU time)")
    else:
        peers_note = ("the plain formula's peers were not measured in this run (python3-torch "
                      "is not installed; `./book bench` as root installs it)")
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
    # The PyTorch every ratio of the trainer was measured against (Debian 12's).
    torch_train = (f"PyTorch {peers_train['context'].get('torch_version', '?')}"
                   if peers_train else "PyTorch")

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

    train_lines = [f"| (n, d) | this book, h = identity | {torch_train} | book faster by "
                   f"| this book, h = softmax | {torch_train} | book faster by "
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
    thread_lines = ["| (n, d), h = softmax | this book, 1 thread | 2 threads "
                    f"| {torch_train}, 1 thread | 2 threads |", "|---|---|---|---|---|"]
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
                      f"trainer on two threads and {theirs_s:.2f} s with its formulation in "
                      f"{torch_train} on that PyTorch's faster thread count ({theirs_t}): "
                      f"{theirs_s / ours_s:.1f}× faster")
    else:
        experiment = ("the whole experiment at reduced length was not compared in this run "
                      "(PyTorch not installed)")
    soft_big = train.get("BM_softmax/1000/100")
    torch_big = torch_iteration(1000, 100, "softmax")
    soft_big_s = soft_big["s/iter"] if soft_big else None
    if torch_big is not None:
        iteration = (f"one thread each: {duration(soft_big_s)} against {duration(torch_big)} "
                     f"({ratio(torch_big, soft_big_s)})")
    else:
        iteration = f"one thread: {duration(soft_big_s)} (PyTorch not measured)"
    chapter_text = "\n".join([
        "<!-- Generated by tools/book/performance.py from the last `./book bench`; do not edit. -->",
        f"In the last `./book bench` (the machine of the "
        f"[performance page](../../docs/performance.md#chapter-03s-trainer-against-the-pytorch-formulation)), "
        f"{experiment}. One Adam iteration of the softmax system at the source's largest "
        f"size ($n = 1000$, $d = 100$), {iteration}. "
        + (f"Both ratios were measured against Debian 12's {torch_train} on "
           f"{peers_train['context'].get('blas', '?')}, float64, the trainer written as a "
           "PyTorch user writes it (`torch.optim.Adam`, `bench/peers/training.py`); the "
           "performance page also compares the attention forward pass with PyTorch 2."
           if peers_train else "")])

    # How long the whole `./book bench` took (book.cli writes it before calling this).
    run = load_optional(json_dir / "bench-run.json")
    run_time = ("**The run** took "
                f"{int(run['seconds'] // 60)} min {int(run['seconds'] % 60)} s (wall time, "
                "building included; the peers' part "
                f"{int(run['peers_seconds'] // 60)} min {int(run['peers_seconds'] % 60)} s); "
                f"load average at its end {', '.join(f'{x:.2f}' for x in run['load_end'])}."
                if run else "**The run**: its duration was not recorded.")

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
        sdpa_text,
        "**The plain formula**, one call on one and two threads, no mask, GFLOP/s (wall time, "
        f"d = 64; the same flops counted for all; {peers_note}):", peer_table,
        "**Two cores, two copies**, GFLOP/s of both threads together (wall time):",
        cores_table,
        "**Peak memory** (resident set, measured in a fresh child process per size, d = 64):",
        memory_table,
        "**Chapter 03's trainer**, time per Adam iteration on one thread, beside its PyTorch "
        f"formulation measured in the same run ({torch_train}; medians):", training_table,
        "**The softmax iteration on one and two threads** (wall time, medians):",
        threads_table,
        f"**Chapter 03's experiment**: {experiment}.", run_time])
    write_generated(page, generated)
    write_generated(chapter03, chapter_text)
    print(f"book.performance: figures/perf-*.svg and {page.relative_to(root)} updated",
          file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m book.performance JSON_DIR")
    main(sys.argv[1])
