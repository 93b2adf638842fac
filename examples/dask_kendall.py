"""
The all-pairs Kendall kernel on a Dask cluster
==============================================

:func:`~sklearn_dppca.spherical_kendall` (and so
:class:`~sklearn_dppca.DPKendallDirections` and :class:`~sklearn_dppca.DPPCA`
with ``pairs="all"``) splits its work into at most 128 tasks that depend only on
the data size, runs them through :class:`joblib.Parallel`, and adds their partial
sums in task order. Under joblib's ``"dask"`` backend the tasks run on the
workers of a :mod:`dask.distributed` cluster, and the result is the same as the
serial one: the same tasks, the same order of the additions, BLAS held to one
thread inside every task.

This script starts a local cluster of two worker processes with one thread each
(replace it by ``Client("scheduler-address:8786")`` for a real cluster), computes
the matrix serially and on the cluster, and prints both times and the largest
difference. It is not run when the documentation is built (it needs a cluster);
run it from a shell::

    python examples/dask_kendall.py                       # n = 20000, p = 20
    python examples/dask_kendall.py --n-samples 100000 --n-features 50

joblib scatters the large task arguments (the rows, ``8 n p`` bytes, in two
copies) to the workers once per call. The kernel releases the GIL, so on a
single machine the default threads (``n_jobs=-1`` without any backend) do as
well with less memory; a cluster pays off when it adds machines.
"""

# %%
import argparse
import time

import joblib
import numpy as np

from sklearn_dppca import spherical_kendall


def main(n_samples, n_features, n_workers, seed=0):
    from dask.distributed import Client, LocalCluster

    X = np.random.default_rng(seed).standard_normal((n_samples, n_features))
    X *= np.linspace(3.0, 0.5, n_features)

    start = time.perf_counter()
    serial = spherical_kendall(X)
    serial_seconds = time.perf_counter() - start
    print(f"n={n_samples}, p={n_features}: serial {serial_seconds:.2f} s", flush=True)

    with LocalCluster(n_workers=n_workers, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        print(f"cluster: {len(client.scheduler_info()['workers'])} workers",
              flush=True)

        def progress(done, total):
            print(f"\r  {done / total:6.1%} of the {total} pairs", end="", flush=True)

        start = time.perf_counter()
        with joblib.parallel_backend("dask"):
            distributed = spherical_kendall(X, n_jobs=-1, progress=progress)
        dask_seconds = time.perf_counter() - start

    difference = float(np.max(np.abs(distributed - serial)))
    print(f"\ndask ({n_workers} workers x 1 thread): {dask_seconds:.2f} s, "
          f"speed-up {serial_seconds / dask_seconds:.2f}x")
    print(f"max |K_dask - K_serial| = {difference:.3g}")
    return serial_seconds, dask_seconds, difference


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Kendall kernel on a Dask cluster")
    parser.add_argument("--n-samples", type=int, default=20000)
    parser.add_argument("--n-features", type=int, default=20)
    parser.add_argument("--n-workers", type=int, default=2)
    args = parser.parse_args()
    *_, difference = main(args.n_samples, args.n_features, args.n_workers)
    if difference > 1e-12:
        raise SystemExit(f"the Dask result differs from the serial one by {difference}")
