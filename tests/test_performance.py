"""The performance page's comparison with PyTorch 2's fused attention (book.performance):
the book's faster fast form is set against SDPA on each shape, every ratio names the PyTorch
it was measured against, and every shape where the book is not ahead is named in words,
below 1.0x on one thread and at or below 1.0x on two. Made-up rates; no time is measured."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "bench", "peers"))
from book.performance import sdpa_section, threaded_rates  # noqa: E402
from sdpa import threads_busy  # noqa: E402

FAILURES = []


def check(condition, claim):
    print(("ok   " if condition else "FAIL ") + claim)
    if not condition:
        FAILURES.append(claim)


def book_rows(forward, tiled):
    """Google Benchmark rows of BM_forward_threads and BM_tiled_threads: (n, d, causal,
    threads) -> GFLOP/s for each form."""
    rows = {}
    for form, rates in (("forward", forward), ("tiled", tiled)):
        for (n, d, causal, threads), gflops in rates.items():
            name = (f"BM_{form}_threads/N:{n}/d:{d}/causal:{int(causal)}/threads:{threads}"
                    "/min_time:0.200/real_time")
            rows[name] = {"GFLOP/s": gflops}
    return rows


def sdpa_json(rates):
    """bench/peers/sdpa.py's JSON: key -> {(n, d, causal): GFLOP/s}."""
    def shape(n, d, causal):
        return f"{'causal' if causal else 'none'}/d{d}/N{n}"
    return {"context": {"torch_version": "2.6.0+debian", "os": "Debian GNU/Linux 13 (trixie)",
                        "backend": "FLASH_ATTENTION", "blas": "OpenBLAS",
                        "cpu_capability": "AVX512"},
            "summary": {key: {"gflops": {shape(*s): v for s, v in r.items()},
                              "cpu_per_wall": {shape(*s): 1.9 for s in r},
                              "threads_busy": {shape(*s): 2 for s in r}}
                        for key, r in rates.items()}}


PEAK = {1: 100.0, 2: 200.0}
SHAPES = [(1024, 64, False), (2048, 64, False), (1024, 128, True)]

# The book ahead everywhere: the faster form counts (row blocks at 1024, tiled elsewhere).
forward = {(n, d, c, t): 50.0 * t for n, d, c in SHAPES for t in (1, 2)}
tiled = {(n, d, c, t): (40.0 if n == 1024 and not c else 60.0) * t
         for n, d, c in SHAPES for t in (1, 2)}
sdpa = {"sdpa_1": {s: 45.0 for s in SHAPES}, "sdpa_2": {s: 80.0 for s in SHAPES},
        "sdpa_2_passive": {s: 85.0 for s in SHAPES}}
text = sdpa_section(threaded_rates(book_rows(forward, tiled)), sdpa_json(sdpa), PEAK)
if "-v" in sys.argv:
    print(text)
check("| 1024 | 50.0 (row blocks) | 45.0 | 1.11× |" in text,
      "N = 1024 without a mask: the faster form (row blocks) against SDPA, 50 / 45 = 1.11x")
check("| 2048 | 60.0 (tiled) | 45.0 | 1.33× | 120.0 (tiled) | 85.0 | 1.41× |" in text,
      "two threads: SDPA's better wait policy (85, not 80) is the one compared")
check("| 1.41× | 2 · 1.90 |" in text,
      "two threads: how many of SDPA's threads worked, and its CPU over wall time")
check("| 60% | 45% | 60% | 42% |" in text, "each kernel's share of the FMA peak, per thread count")
check(text.count("PyTorch 2.6.0+debian") >= 4,
      "every table names the PyTorch it was measured against")
check("*Causal mask, d = 128*" in text and "*No mask, d = 64*" in text,
      "a table per (mask, d)")
check("on every shape measured" in text and "not ahead" not in text,
      "no shortfall claimed where there is none")

# One thread at exactly 1.0x passes; two threads at exactly 1.0x do not; below is named.
sdpa["sdpa_1"][(2048, 64, False)] = 60.0      # one thread: 1.0x, not behind
sdpa["sdpa_1"][(1024, 128, True)] = 61.0      # one thread: 0.984x, behind
sdpa["sdpa_2_passive"][(1024, 64, False)] = 100.0  # two threads: 1.0x, behind
text = sdpa_section(threaded_rates(book_rows(forward, tiled)), sdpa_json(sdpa), PEAK)
if "-v" in sys.argv:
    print(text)
verdict = text.split("\n\n")[-1]
check("not ahead of PyTorch 2.6.0+debian" in verdict, "a shortfall is said, naming the PyTorch")
check("on one thread it is below 1.0× at causal, d = 128: N = 1024 (0.984×)" in verdict,
      "the one-thread shortfall names its shape and ratio")
check("N = 2048" not in verdict, "1.0x on one thread is not a shortfall")
check("on two threads it is at or below 1.0× at no mask, d = 64: N = 1024 (1.000×; a call "
      "takes" in verdict, "1.0x on two threads is a shortfall, named, with the call's time")
check("BM_parallel_for_start" not in verdict, "no thread-start cost is said unless it was measured")
with_start = sdpa_section(threaded_rates(book_rows(forward, tiled)), sdpa_json(sdpa), PEAK,
                          37e-6).split("\n\n")[-1]
check("37 µs per call on this machine (`BM_parallel_for_start`" in with_start,
      "a two-thread shortfall comes with the measured cost of starting a helper thread")

# Not measured: said so, not a table of dashes.
text = sdpa_section(threaded_rates(book_rows(forward, tiled)), None, PEAK)
check("not measured in this run" in text and "|" not in text,
      "without SDPA's JSON the page says it was not measured")

# The peer's check that its second thread worked, from per-thread CPU ticks.
check(threads_busy({"1": 10, "2": 0}, {"1": 110, "2": 30}) == 2,
      "a second thread with 30% of the busiest one's CPU time counts as busy")
check(threads_busy({"1": 10, "2": 0, "3": 0}, {"1": 110, "2": 20, "3": 1}) == 1,
      "threads that idled (20%, 1%) do not count")

if FAILURES:
    print(f"{len(FAILURES)} check(s) failed")
    sys.exit(1)
print("all checks passed")
