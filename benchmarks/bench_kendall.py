"""Speed and memory of the spherical Kendall kernel.

For each (n, p) this prints, all measured in this one process:

* our kernel's time (best of a few) with ``n_jobs=1`` (CPU and wall seconds) and
  ``n_jobs=2`` (wall seconds);
* its effective rate ``4 n^2 p / t`` (the flop count of the plain Gram formulation)
  against the DGEMM rate of NumPy's ``A @ B`` for a square product of the same flop
  count (side capped at 3000): 1 job against 1 BLAS thread, 2 jobs against all;
* its speed-up over a vectorised NumPy Gram-trick baseline (chunked rows, full-row
  Gram, W = 1 / D2, then X^T diag(W 1) X - X^T W X), likewise paired;

and, in a fresh subprocess, the peak memory of one call at n = 40000, p = 10.

Usage: ``python benchmarks/bench_kendall.py [--quick] [--repeat R]`` with the
package installed (or ``PYTHONPATH=.`` and the extension built in place).
Other processes on the machine add noise to wall times: compare numbers from the same
run, and prefer the CPU-second ratios for one job.
"""

import argparse
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
from threadpoolctl import threadpool_limits

from sklearn_dppca._kendall import spherical_kendall

FULL_SIZES = [(4000, 50), (12000, 5), (20000, 20)]
QUICK_SIZES = [(2000, 50), (5000, 5), (6000, 20)]
def best_time(function, repeat, clock=time.perf_counter):
    """Shortest time of ``repeat`` calls (the least disturbed by other load).

    ``clock=time.process_time`` measures CPU seconds instead of wall seconds: for
    single-threaded runs that is robust to other processes sharing the cores.
    """
    times = []
    for _ in range(repeat):
        start = clock()
        function()
        times.append(clock() - start)
    return min(times)


def numpy_gram_baseline(X, chunk=1024):
    """Vectorised NumPy Gram trick over full rows of the pair matrix (no exactness)."""
    X = X - X.mean(axis=0)  # centring helps its accuracy and costs nothing here
    n = X.shape[0]
    squared_norms = np.einsum("ij,ij->i", X, X)
    total = np.zeros((X.shape[1], X.shape[1]))
    for start in range(0, n, chunk):
        rows = X[start:start + chunk]
        D2 = squared_norms[start:start + chunk, None] + squared_norms - 2 * rows @ X.T
        D2[np.arange(len(rows)), start + np.arange(len(rows))] = np.inf  # i == j
        W = 1.0 / D2
        total += rows.T @ (W.sum(axis=1)[:, None] * rows) - rows.T @ (W @ X)
    # Over ordered pairs, sum_j w (x_i x_i^T - x_i x_j^T) is sum_{i<j} w d d^T.
    return total * 2 / (n * (n - 1))


def dgemm_rates(flops, repeat):
    """GFlop/s of NumPy's A @ B for a square product of about ``flops`` flops.

    Returns the rates on one thread (per CPU second) and on all threads (per wall
    second).
    """
    size = int(min(3000, max(256, round((flops / 2) ** (1 / 3)))))
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, size, size))
    product = 2 * size**3 / 1e9
    with threadpool_limits(limits=1, user_api="blas"):
        one = product / best_time(lambda: A @ B, repeat, time.process_time)
    A @ B  # wake the BLAS threads up
    return one, product / best_time(lambda: A @ B, repeat)


def bench_size(n, p, repeat):
    """Time ours, DGEMM and the NumPy baseline at one size; print and return them."""
    X = np.random.default_rng(n + p).standard_normal((n, p))
    nominal = 4 * n * n * p / 1e9
    serial = lambda: spherical_kendall(X, n_jobs=1)  # noqa: E731
    ours = {
        "1 job, CPU s": best_time(serial, repeat, time.process_time),
        "1 job, wall s": best_time(serial, repeat),
        "2 jobs, wall s": best_time(lambda: spherical_kendall(X, n_jobs=2), repeat),
    }
    dgemm_one, dgemm_all = dgemm_rates(nominal * 1e9, repeat)
    with threadpool_limits(limits=1, user_api="blas"):
        baseline_cpu = best_time(lambda: numpy_gram_baseline(X), 2, time.process_time)
    baseline_wall = best_time(lambda: numpy_gram_baseline(X), 2)
    error = np.max(np.abs(numpy_gram_baseline(X) - spherical_kendall(X)))

    print(f"\nn={n}, p={p}   (nominal 4 n^2 p = {nominal:.2f} GFlop)")
    print(f"  DGEMM: {dgemm_one:.1f} GFlop/s on 1 thread (CPU s), {dgemm_all:.1f} on "
          f"all threads (wall s)")
    print(f"  NumPy Gram baseline: {baseline_cpu:.3f} CPU s on 1 BLAS thread, "
          f"{baseline_wall:.3f} wall s on all (max |K diff| {error:.1e})")
    for label, seconds in ours.items():
        rate = nominal / seconds
        dgemm = dgemm_one if label.startswith("1 job, CPU") else dgemm_all
        baseline = baseline_cpu if label.startswith("1 job, CPU") else baseline_wall
        print(f"  ours {label:14s} {seconds:8.3f}  effective {rate:6.1f} GFlop/s = "
              f"{rate / dgemm:.2f} x DGEMM  | {baseline / seconds:5.1f} x NumPy Gram")
    return {"ours": ours, "dgemm": (dgemm_one, dgemm_all),
            "baseline": (baseline_cpu, baseline_wall), "nominal": nominal}


PEAK_MEMORY_SCRIPT = textwrap.dedent("""
    import resource, sys, time, tracemalloc
    import numpy as np
    from sklearn_dppca._kendall import spherical_kendall

    def peak_rss():
        # VmHWM belongs to this process image; ru_maxrss can carry over the RSS of
        # the parent that forked us (Linux keeps it across exec).
        try:
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    n, p, run = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "run"
    X = np.random.default_rng(0).standard_normal((n, p))
    spherical_kendall(X[:300])  # load everything lazily imported
    tracemalloc.start()
    start = time.perf_counter()
    if run:
        spherical_kendall(X)
    seconds = time.perf_counter() - start
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(traced_peak, peak_rss(), seconds)
""")


def peak_memory(n, p):
    """(traced peak, peak RSS, peak RSS without the call, seconds), fresh processes."""
    def run(mode):
        out = subprocess.run([sys.executable, "-c", PEAK_MEMORY_SCRIPT, str(n), str(p),
                              mode], capture_output=True, text=True, check=True,
                             env=dict(os.environ))
        traced, rss, seconds = out.stdout.split()
        return int(traced), int(rss), float(seconds)

    traced, rss, seconds = run("run")
    _, rss_idle, _ = run("idle")
    return traced, rss, rss_idle, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--repeat", type=int, default=3, help="timings per measure")
    args = parser.parse_args()
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS"):
        print(f"{name}={os.environ.get(name, '(unset)')}")
    print(f"cores: {os.cpu_count()}")

    # Memory first, while this process is still small (a forked child starts as
    # a copy of it).
    n_mem, p_mem = (10000, 10) if args.quick else (40000, 10)
    traced, rss, rss_idle, seconds = peak_memory(n_mem, p_mem)

    results = {}
    for n, p in QUICK_SIZES if args.quick else FULL_SIZES:
        results[(n, p)] = bench_size(n, p, args.repeat)

    print(f"\npeak memory at n={n_mem}, p={p_mem} ({seconds:.2f} s): "
          f"tracemalloc peak {traced / 2**20:.1f} MiB, peak RSS {rss / 2**20:.0f} MiB "
          f"(same process without the call: {rss_idle / 2**20:.0f} MiB)")

    if not args.quick:
        print("\ntargets (1 job: CPU seconds against 1-thread DGEMM and baseline; "
              "2 jobs: wall seconds against all-thread DGEMM and baseline):")
        r = results[(4000, 50)]
        one = r["nominal"] / r["ours"]["1 job, CPU s"] / r["dgemm"][0]
        two = r["nominal"] / r["ours"]["2 jobs, wall s"] / r["dgemm"][1]
        print(f"  n=4000, p=50 effective rate >= 0.5 x DGEMM: {one:.2f} (1 job), "
              f"{two:.2f} (2 jobs)")
        r = results[(12000, 5)]
        one = r["baseline"][0] / r["ours"]["1 job, CPU s"]
        two = r["baseline"][1] / r["ours"]["2 jobs, wall s"]
        print(f"  n=12000, p=5 >= 5 x NumPy Gram: {one:.1f} (1 job), "
              f"{two:.1f} (2 jobs)")
        print(f"  n=40000, p=10 peak < 1 GiB: peak RSS {rss / 2**30:.3f} GiB, "
              f"traced {traced / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
