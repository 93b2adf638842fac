"""Speed of the m-partner kernel (``pairs=m``): the Laplacian kernel against the
direct per-pair loop it replaced, at n = 100 000, p = 50, m = 64, then at a few
neighbouring shapes (p = 10, p = 100, m = 16).

Both run the same tasks on one thread each (``n_jobs=1``; BLAS held to one thread
from the start, so that no idle BLAS thread competes for a core) and are timed in
turns, so that a busy machine slows both alike; the ratio is that of the medians.
The direct loop is ``_design_partial_direct``, kept in the compiled module as the
reference, called exactly as the package called it before (rows gathered in ring
order, the same ring positions per task). The timed Laplacian call is the whole
``_design_sum`` (centre, tasks, each prescaling the rows it reads).

Run: ``python benchmarks/bench_kendall_design.py [--n N] [--p P] [--m M]
[--repeats R] [--no-neighbours]``.
"""

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from sklearn_dppca._kendall import (
    _DESIGN_CHUNK,
    _MAX_TASKS,
    _blas_controller,
    _design_sum,
    _pair_design,
)
from sklearn_dppca._kendall_kernel import _design_partial_direct


def direct_design_sum(X, design, floor):
    """The m-partner sum as computed before the Laplacian kernel."""
    n_samples = X.shape[0]
    X_ring = np.ascontiguousarray(X[design.order])
    n_tasks = max(1, min(_MAX_TASKS, n_samples // _DESIGN_CHUNK))
    edges = np.linspace(0, n_samples, n_tasks + 1).astype(np.intp)
    mantissa, exponent = math.frexp(floor)
    total = np.zeros((X.shape[1], X.shape[1]))
    with _blas_controller().limit(limits=1, user_api="blas"):
        for start, stop in zip(edges[:-1], edges[1:]):
            total += _design_partial_direct(X_ring, design.order, design.offsets,
                                            design.half_offset, int(start), int(stop),
                                            mantissa, exponent)[0]
    return total


def compare(n, p, m, repeats):
    """Time both kernels in turns on the same inputs; print one line."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, p)) * np.linspace(0.5, 2.0, p) + 3.0
    design = _pair_design(n, m, np.random.default_rng(1))
    times = {"direct": [], "laplacian": []}
    for _ in range(repeats):
        start = time.perf_counter()
        direct = direct_design_sum(X, design, 0.0)
        times["direct"].append(time.perf_counter() - start)
        start = time.perf_counter()
        laplacian = _design_sum(X, design, 0.0, 1, None)[0]
        times["laplacian"].append(time.perf_counter() - start)
    error = np.max(np.abs(laplacian - direct)) / np.max(np.abs(direct))
    direct_time = float(np.median(times["direct"]))
    laplacian_time = float(np.median(times["laplacian"]))
    print(f"n={n:>7} p={p:>3} m={m:>3}  direct {direct_time * 1e3:8.1f} ms  "
          f"Laplacian {laplacian_time * 1e3:7.1f} ms  "
          f"speed-up {direct_time / laplacian_time:5.1f} x  "
          f"max|diff|/max|entry| {error:.1e}  ({repeats} runs each)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--p", type=int, default=50)
    parser.add_argument("--m", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-neighbours", action="store_true")
    args = parser.parse_args()
    compare(args.n, args.p, args.m, args.repeats)
    if not args.no_neighbours:
        for p, m in ((10, args.m), (100, args.m), (args.p, 16)):
            compare(args.n, p, m, max(3, args.repeats // 2))


if __name__ == "__main__":
    main()
