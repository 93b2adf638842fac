"""Speed and memory of the spherical Kendall kernel.

For each (n, p) this prints, all measured in this one process:

* our kernel's time (best of a few) with ``n_jobs=1`` and ``n_jobs=2``;
* its effective rate ``4 n^2 p / t`` (the flop count of the plain Gram formulation)
  against the DGEMM rate of NumPy's ``A @ B`` for a square product of the same flop
  count (capped at 3000), with BLAS on 1 and on all threads;
* its speed-up over a vectorised NumPy Gram-trick baseline (chunked rows, full-row
  Gram, W = 1 / D2, then X^T diag(W 1) X - X^T W X);

and, in a fresh subprocess, the peak memory of one call at n = 40000, p = 10.

Usage: ``python benchmarks/bench_kendall.py [--quick] [--repeat R]``.
Other processes on the machine add noise: compare numbers from the same run.
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
TARGETS = {
    "rate at n=4000, p=50 (x DGEMM, same threads)": 0.5,
    "speed-up at n=12000, p=5 (x NumPy Gram)": 5.0,
}


def best_time(function, repeat):
    """Shortest wall time of ``repeat`` calls (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
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


def dgemm_rate(flops, repeat, threads):
    """GFlop/s of NumPy's A @ B for a square product of about ``flops`` flops."""
    size = int(min(3000, max(256, round((flops / 2) ** (1 / 3)))))
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, size, size))
    with threadpool_limits(limits=threads, user_api="blas"):
        A @ B  # warm the threads up
        seconds = best_time(lambda: A @ B, repeat)
    return 2 * size**3 / seconds / 1e9


def bench_size(n, p, repeat):
    X = np.random.default_rng(n + p).standard_normal((n, p))
    flops = 4 * n * n * p
    ours = {jobs: best_time(lambda: spherical_kendall(X, n_jobs=jobs), repeat)
            for jobs in (1, 2)}
    dgemm = {1: dgemm_rate(flops, repeat, 1), "all": dgemm_rate(flops, repeat, None)}
    baseline = best_time(lambda: numpy_gram_baseline(X), max(1, repeat // 2))
    error = np.max(np.abs(numpy_gram_baseline(X) - spherical_kendall(X)))

    print(f"\nn={n}, p={p}   (nominal 4 n^2 p = {flops / 1e9:.2f} GFlop)")
    for jobs, seconds in ours.items():
        rate = flops / seconds / 1e9
        print(f"  ours n_jobs={jobs}: {seconds:8.3f} s  effective {rate:6.1f} GFlop/s"
              f"  = {rate / dgemm[1]:.2f} x DGEMM(1 thread), "
              f"{rate / dgemm['all']:.2f} x DGEMM(all threads)"
              f"  | {baseline / seconds:5.1f} x faster than NumPy Gram")
    print(f"  DGEMM: {dgemm[1]:.1f} GFlop/s on 1 thread, {dgemm['all']:.1f} on all "
          f"threads;  NumPy Gram baseline {baseline:.3f} s (max |diff| {error:.1e})")
    return ours, dgemm, baseline


PEAK_MEMORY_SCRIPT = textwrap.dedent("""
    import resource, sys, time, tracemalloc
    import numpy as np
    from sklearn_dppca._kendall import spherical_kendall
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
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(traced_peak, max_rss, seconds)
""")


def peak_memory(n, p):
    """(traced peak, max RSS, max RSS without the call, seconds) in fresh processes."""
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

    results = {}
    for n, p in QUICK_SIZES if args.quick else FULL_SIZES:
        results[(n, p)] = bench_size(n, p, args.repeat)

    n_mem, p_mem = (10000, 10) if args.quick else (40000, 10)
    traced, rss, rss_idle, seconds = peak_memory(n_mem, p_mem)
    print(f"\npeak memory at n={n_mem}, p={p_mem} ({seconds:.2f} s): "
          f"tracemalloc peak {traced / 2**20:.1f} MiB, max RSS {rss / 2**20:.0f} MiB "
          f"(process without the call: {rss_idle / 2**20:.0f} MiB)")

    if not args.quick:
        ours, dgemm, _ = results[(4000, 50)]
        rate_1 = 4 * 4000**2 * 50 / ours[1] / 1e9 / dgemm[1]
        rate_2 = 4 * 4000**2 * 50 / ours[2] / 1e9 / dgemm["all"]
        ours, _, baseline = results[(12000, 5)]
        print("\ntargets:")
        print(f"  n=4000, p=50 rate >= 0.5 x DGEMM: {rate_1:.2f} (1 thread each), "
              f"{rate_2:.2f} (2 threads each)")
        print(f"  n=12000, p=5 >= 5 x NumPy Gram: {baseline / ours[1]:.1f} (n_jobs=1), "
              f"{baseline / ours[2]:.1f} (n_jobs=2)")
        print(f"  n=40000, p=10 peak < 1 GiB: max RSS {rss / 2**30:.3f} GiB")


if __name__ == "__main__":
    main()
