"""How the spherical Kendall kernel scales with n: all pairs against pairs=64.

Times both on a log-log grid of n (p = 10), prints the fitted slopes of log t on
log n (about 2 for all pairs, 1 for pairs=m), then the speed ratio of pairs=64 over
all pairs at n = 100000.

Usage: ``python benchmarks/bench_kendall_scaling.py [--quick] [--n-jobs J]``
with the package installed (or ``PYTHONPATH=.``).
"""

import argparse
import time

import numpy as np

from sklearn_dppca._kendall import spherical_kendall

P = 10
M = 64


def best_time(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def fitted_slope(sizes, seconds):
    """Least-squares slope of log(seconds) on log(sizes)."""
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def time_grid(sizes, n_jobs, **kwargs):
    seconds = []
    for n in sizes:
        X = np.random.default_rng(n).standard_normal((n, P))
        repeat = 3 if n <= 20000 else 1
        seconds.append(best_time(
            lambda: spherical_kendall(X, n_jobs=n_jobs, random_state=0, **kwargs),
            repeat))
        print(f"  n={n:7d}: {seconds[-1]:8.3f} s")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller grid")
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args()

    all_sizes = [1000, 2000, 4000, 8000] if args.quick else \
        [2000, 4000, 8000, 16000, 32000]
    design_sizes = [4000, 16000, 64000] if args.quick else \
        [4000, 16000, 64000, 256000, 1000000]

    print(f"all pairs, p={P}, n_jobs={args.n_jobs}")
    all_seconds = time_grid(all_sizes, args.n_jobs)
    print(f"pairs={M}, p={P}, n_jobs={args.n_jobs}")
    design_seconds = time_grid(design_sizes, args.n_jobs, pairs=M)
    print(f"fitted slopes of log t on log n: all pairs "
          f"{fitted_slope(all_sizes, all_seconds):.2f}, pairs={M} "
          f"{fitted_slope(design_sizes, design_seconds):.2f}")

    n_ratio = 20000 if args.quick else 100000
    X = np.random.default_rng(1).standard_normal((n_ratio, P))
    design = best_time(
        lambda: spherical_kendall(X, pairs=M, random_state=0, n_jobs=args.n_jobs), 3)
    all_pairs = best_time(lambda: spherical_kendall(X, n_jobs=args.n_jobs), 1)
    print(f"n={n_ratio}, p={P}: all pairs {all_pairs:.2f} s, pairs={M} {design:.3f} s, "
          f"ratio {all_pairs / design:.0f}x (target >= 50x)")


if __name__ == "__main__":
    main()
