"""DPPCA on a lazily generated Dask array: time, peak memory, error.

The rows are drawn chunk by chunk on the workers (never on the client) from a
Gaussian with known population directions: ``x = z * sqrt(lambda) @ Q^T`` with a
fixed random orthogonal ``Q`` and spectrum ``lambda_j = 0.8^j`` (``j = 0..p-1``).
The fit is DPPCA with ``pairs=m`` in row blocks of ``--chunk`` rows
(``row_blocks``: the blocks are public, never read off the array's chunks, which
here have the same size). Reported: wall time,
the client's peak memory (tracemalloc's peak of Python allocations and the
process's peak resident size), each worker's peak resident size, and
``sinF = ||sin Theta||_F`` between the private and the population leading
directions.

Usage (a local cluster of ``--workers`` processes, or a running scheduler)::

    python benchmarks/bench_dask_scale.py --n 1000000 --p 20 --chunk 250000
    python benchmarks/bench_dask_scale.py --n 100000000 --scheduler scheduler:8786
"""

import argparse
import resource
import time
import tracemalloc

import numpy as np


def population(p, seed=12345):
    """The population directions (columns of Q) and spectrum."""
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((p, p)))
    q = q * np.sign(np.diag(r))
    return q, 0.8 ** np.arange(p)


def _chunk(block_info=None, *, p, seed, q, spectrum):
    """One chunk of rows, drawn on a worker from its own seed."""
    location = block_info[None]["chunk-location"][0]
    rows = block_info[None]["chunk-shape"][0]
    rng = np.random.default_rng([seed, location])
    return (rng.standard_normal((rows, p)) * np.sqrt(spectrum)) @ q.T


def lazy_rows(n, p, chunk, seed=0):
    import dask.array as da

    q, spectrum = population(p)
    chunks = ((chunk,) * (n // chunk) + ((n % chunk,) if n % chunk else ()), (p,))
    X = da.map_blocks(_chunk, dtype=np.float64, chunks=chunks, p=p, seed=seed, q=q,
                      spectrum=spectrum)
    return X, q


def sin_theta(estimated, population_directions):
    """||sin Theta||_F between two orthonormal sets of k directions (rows / columns)."""
    k = estimated.shape[0]
    overlap = estimated @ population_directions[:, :k]
    return float(np.sqrt(max(k - np.sum(overlap**2), 0.0)))


def _worker_peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="rows")
    parser.add_argument("--p", type=int, default=20, help="columns")
    parser.add_argument("--chunk", type=int, default=250_000, help="rows per chunk")
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=None,
                        help="default 0.1 / n (delta must stay well below 1/n)")
    parser.add_argument("--pairs", type=int, default=16, help="partners per row")
    parser.add_argument("--components", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2, help="local cluster workers")
    parser.add_argument("--scheduler", default=None,
                        help="address of a running scheduler (e.g. scheduler:8786)")
    parser.add_argument("--verbose", type=int, default=0)
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    from sklearn_dppca import DPPCA

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                     processes=True, dashboard_address=None))
    X, q = lazy_rows(args.n, args.p, args.chunk)
    tracemalloc.start()
    start = time.perf_counter()
    delta = 0.1 / args.n if args.delta is None else args.delta
    pca = DPPCA(args.components, eps=args.eps, delta=delta, pairs=args.pairs,
                row_blocks=args.chunk, random_state=0, verbose=args.verbose).fit(X)
    seconds = time.perf_counter() - start
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    client_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    workers = client.run(_worker_peak_rss)
    gib = 2.0**30
    print(f"n={args.n:,} p={args.p} chunk={args.chunk:,} blocks={len(X.chunks[0])} "
          f"pairs={args.pairs} eps={args.eps} delta={delta:.3g}")
    print(f"time {seconds:.1f} s")
    print(f"client peak: Python allocations {traced_peak / gib:.3f} GiB, "
          f"resident {client_rss / gib:.3f} GiB")
    for address, peak in sorted(workers.items()):
        print(f"worker {address}: peak resident {peak / gib:.3f} GiB")
    print(f"sinF to the population directions: {sin_theta(pca.components_, q):.4f}")
    print(f"explained_variance_ratio_: {np.round(pca.explained_variance_ratio_, 4)}")
    client.close()


if __name__ == "__main__":
    main()
