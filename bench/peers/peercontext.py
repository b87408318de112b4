"""What the peer benchmarks record about the machine and the libraries (stdlib only).

Shared by attention.py and training.py. The BLAS is read from the shared libraries the
process has actually loaded (/proc/self/maps), not from build flags: Debian's PyTorch says
only BLAS_INFO=generic and NumPy only "blas", and which library answers to libblas.so.3 is
chosen at run time by update-alternatives (OpenBLAS when libopenblas0-pthread is installed,
the reference implementation otherwise, 4-5x slower).
"""
import contextlib
import ctypes
import datetime
import io
import json
import os
import platform
import re
import subprocess
import sys
import time


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average():
    try:
        return [float(x) for x in open("/proc/loadavg").read().split()[:3]]
    except OSError:
        return None


def blas_libraries():
    """Real paths of the BLAS/LAPACK libraries mapped into this process."""
    paths = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and re.search(r"blas|lapack|mkl|blis|atlas",
                                                 os.path.basename(parts[5]), re.I):
                    paths.add(os.path.realpath(parts[5]))
    except OSError:
        pass
    return sorted(paths)


def blas_name(paths):
    """The BLAS implementation named by the loaded libraries' paths."""
    joined = " ".join(paths).lower()
    for key, name in (("openblas", "OpenBLAS"), ("mkl", "MKL"), ("blis", "BLIS"),
                      ("atlas", "ATLAS")):
        if key in joined:
            return name
    if re.search(r"/blas/libblas\.so", joined):
        return "reference BLAS (Netlib, Debian's libblas3)"
    return "unknown" if paths else "none loaded"


def openblas_info(paths):
    """OpenBLAS's own configuration string and thread count, when it is loaded."""
    for p in paths:
        if "openblas" not in p.lower():
            continue
        try:
            lib = ctypes.CDLL(p)
            lib.openblas_get_config.restype = ctypes.c_char_p
            return {"config": lib.openblas_get_config().decode(),
                    "num_threads": int(lib.openblas_get_num_threads())}
        except (OSError, AttributeError):
            continue
    return None


def blas_context():
    """The BLAS of this process (call it after importing torch and/or numpy)."""
    paths = blas_libraries()
    info = {"name": blas_name(paths), "libraries": paths}
    ob = openblas_info(paths)
    if ob:
        info["openblas"] = ob
    info["OPENBLAS_NUM_THREADS"] = os.environ.get("OPENBLAS_NUM_THREADS")
    info["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS")
    info["OMP_WAIT_POLICY"] = os.environ.get("OMP_WAIT_POLICY")
    return info


def numpy_config(np):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            np.show_config()
        except Exception as e:  # show_config's format changes between releases
            print("show_config failed:", e)
    return out.getvalue()


def machine_context():
    """Machine, date and load: the parent process records it once per script."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "load_average_start": load_average(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
    }


def run_child(script, args, threads, timeout, extra_env=None):
    """Run `script --child ARGS THREADS` with the BLAS and OpenMP thread counts fixed in the
    environment before anything is imported (extra_env overrides them); returns the JSON it
    prints."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    env.update(extra_env or {})  # last: a caller may override the two above
    cmd = [sys.executable, "-B", script, "--child", *args, str(threads)]
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, timeout=timeout,
                          check=True)
    return json.loads(done.stdout)


def timed(fn):
    """Wall seconds and process CPU seconds (all threads) of one call of fn."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def write(outdir, name, doc):
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return path
