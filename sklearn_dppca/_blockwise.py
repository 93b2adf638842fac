"""Fits on rows in blocks: every statistic a fit releases, computed block by block.

A fit in blocks (a Dask array, or an in-memory array with ``row_blocks``) reads the
data only through the per-block functions of this module. Each returns a partial
statistic of one block; the partials are added on the client in block order and
the noise is drawn there, once, from the fit's generator, by the same mechanism
functions as an in-memory fit. An in-memory array cut into the same blocks runs the
same functions on the same blocks in the same order, so both fits release the same
values.

What a block computes, and why the sensitivity of the sum is the one stated for
the in-memory fit:

* **Pair sums** (the Kendall matrix, the clipped scatters of the scree and of the
  total). The ``m``-partner ring design is drawn within each block (one seed per
  block, drawn from the fit's generator: the design depends on ``n``, the block
  sizes and the random state only). Every block holds at least ``m + 1`` rows, so
  every row has exactly ``m`` partners and the sum has ``n m / 2`` terms, as in one
  design over all rows: a changed row moves ``m`` terms, the bound is unchanged.
* **Quantile searches over a random matching** (clip bounds, the clip radius). The
  matching pairs rows within each block (again one seed per block); a row is in at
  most one pair, so a count moves by at most 1. Each block counts its values below
  every point of the search's public grid; the counts add up exactly.
* **Quantile searches over rows** (the score frame): the same counts of one value
  per row.
* **Histogram counts** of the scores on the released grid: added exactly.

The per-block functions are module level and take arrays and numbers only, so
Dask can ship them to workers.
"""

import numpy as np

from ._kendall import _design_sum, _pair_design, pair_scatter, spherical_kendall
from ._validation import check_rows
from .privacy._histograms import histogram_counts
from .privacy._quantiles import (
    _SCALE_FREE_GRID,
    _geometric_grid,
    _interval_from_counts,
    _positive_from_counts,
    _two_sided_release,
    _two_sided_values,
    _upper_from_counts,
)


class RowBlocks:
    """The rows of a fit, in blocks: an in-memory array or a Dask array.

    Parameters
    ----------
    data : ndarray or dask.array.Array of shape (n_samples, n_features)
        A Dask array has one chunk per block along the rows and one along the
        columns.
    sizes : tuple of int
        Rows per block.
    progress : callable, default=None
        ``progress(blocks_done, blocks_total)`` after each block of a pass.
    """

    def __init__(self, data, sizes, progress=None):
        self.data = data
        self.sizes = tuple(int(size) for size in sizes)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.intp)
        self.shape = (int(self.starts[-1]), int(data.shape[1]))
        self.progress = progress

    @property
    def n_blocks(self):
        return len(self.sizes)

    @property
    def is_dask(self):
        return not isinstance(self.data, np.ndarray)

    def map(self, function, block_args):
        """``[function(block_k, *block_args[k])]`` in block order.

        In memory: one block after the other. Dask: one task per block, computed
        on the current distributed client if there is one (progress as blocks
        finish), else by Dask's default scheduler.
        """
        if not self.is_dask:
            results = []
            for index, args in enumerate(block_args):
                block = self.data[self.starts[index]:self.starts[index + 1]]
                results.append(function(block, *args))
                self._report(index + 1)
            return results
        return _compute_on_dask(self, function, block_args)

    def _report(self, done):
        if self.progress is not None:
            self.progress(done, self.n_blocks)

    def projected(self, matrix):
        """The rows times ``matrix.T`` (float64), in the same blocks (lazy for Dask)."""
        matrix = np.asarray(matrix, dtype=np.float64)
        if not self.is_dask:
            data = np.vstack(self.map(_project_block, [(matrix,)] * self.n_blocks))
        else:
            data = self.data.map_blocks(_project_block, matrix, dtype=np.float64,
                                        chunks=(self.data.chunks[0], (matrix.shape[0],)))
        return RowBlocks(data, self.sizes, self.progress)

    def _seeds(self, rng):
        """One seed per block, drawn from the fit's generator (public: no data)."""
        return rng.integers(0, 2**63 - 1, size=self.n_blocks, dtype=np.int64)

    def check_design(self, m):
        """Raise a ValueError naming ``pairs`` when a block cannot give every row
        ``m`` partners (public: the block sizes)."""
        small = [size for size in self.sizes if size < m + 1]
        if small:
            raise ValueError(
                f"pairs={m} pairs rows within row blocks, and every block needs at "
                f"least pairs + 1 = {m + 1} rows; {len(small)} block(s) have fewer "
                f"(smallest: {min(small)} rows). Use larger blocks (rechunk the Dask "
                "array, or a larger row_blocks) or a smaller pairs.")
        if m % 2 == 1 and any(size % 2 for size in self.sizes):
            raise ValueError(
                f"pairs={m} is odd, so every row block needs an even number of rows "
                "(each row's last partner is its antipode in its block). Use an even "
                f"pairs, e.g. pairs={m + 1}, or even block sizes.")

    def pair_sum(self, floor, m, rng):
        """The floored pair sum over ``m``-partner designs within the blocks.

        Returns ``(total, n_terms, (n_coincident, first_pair))`` as
        :func:`sklearn_dppca._kendall._design_sum` does for one design.
        """
        self.check_design(m)
        seeds = self._seeds(rng)
        results = self.map(_block_pair_sum,
                           [(m, int(seed), float(floor)) for seed in seeds])
        total = np.zeros((self.shape[1], self.shape[1]))
        n_terms, n_coincident, first_pair = 0, 0, None
        for start, (partial, terms, (count, pair)) in zip(self.starts, results):
            total += partial
            n_terms += terms
            n_coincident += count
            if count:
                pair = (int(pair[0]) + int(start), int(pair[1]) + int(start))
                first_pair = pair if first_pair is None else min(first_pair, pair)
        return total, n_terms, (n_coincident, first_pair)

    def matching_quantile(self, factor, level, leaf, rng, ledger, warn=True):
        """:func:`~sklearn_dppca.privacy.positive_quantile` of
        ``factor * ||x_a - x_b||^2`` over a random matching within the blocks."""
        seeds = self._seeds(rng)
        results = self.map(_block_matching_counts,
                           [(int(seed), float(factor)) for seed in seeds])
        counts = np.sum([counts for counts, _ in results], axis=0)
        n_values = sum(size for _, size in results)
        return _positive_from_counts(counts, n_values, level, leaf.eps, rng, ledger,
                                     leaf.path, warn)

    def two_sided_quantile(self, column, q, eps, rng, *, ledger, step, warn,
                           beta=1.01, max_steps=5000):
        """:func:`~sklearn_dppca.privacy.quantile` of one column."""
        grid = _geometric_grid(0.0, beta, max_steps)
        results = self.map(_block_two_sided_counts,
                           [(column, beta, grid)] * self.n_blocks)
        positive = np.sum([pos for pos, _ in results], axis=0)
        negative = np.sum([neg for _, neg in results], axis=0)
        return _two_sided_release(positive, negative, self.shape[0], q, eps, rng, grid,
                                  beta, ledger, step, warn)

    def interval_quantile(self, column, shift, q, eps, rng, *, low, high, n_points,
                          ledger, step):
        """:func:`~sklearn_dppca.privacy.interval_quantile` of a shifted column."""
        grid = np.linspace(low, high, int(n_points))
        counts = np.sum(self.map(_block_column_counts,
                                 [(column, float(shift), grid)] * self.n_blocks), axis=0)
        return _interval_from_counts(counts, self.shape[0], q, eps, rng, grid, ledger,
                                     step)

    def distance_quantile(self, center, unit, q, eps, rng, *, beta, max_steps, ledger,
                          step):
        """:func:`~sklearn_dppca.privacy.upper_quantile` (``lower=0``) of the
        distances to ``center`` in units of ``unit``."""
        grid = _geometric_grid(0.0, beta, max_steps)
        counts = np.sum(self.map(_block_distance_counts,
                                 [(np.asarray(center, dtype=np.float64), float(unit),
                                   grid)] * self.n_blocks), axis=0)
        return _upper_from_counts(counts, self.shape[0], q, eps, rng, grid, beta, ledger,
                                  step)

    def histogram(self, x_edges, y_edges):
        """Exact counts of the (2-column) rows on the grid, summed over blocks."""
        return np.sum(self.map(_block_histogram, [(x_edges, y_edges)] * self.n_blocks),
                      axis=0)

    def max_abs(self):
        """The largest absolute value; raises a ValueError naming X when a value is
        not finite (the documented input contract of every fit)."""
        results = self.map(_block_check, [()] * self.n_blocks)
        if not all(finite for finite, _ in results):
            raise ValueError("Input X contains NaN or infinity.")
        return max(largest for _, largest in results)


def is_row_blocks(X):
    """True for the rows of a fit in blocks (:class:`RowBlocks`)."""
    return isinstance(X, RowBlocks)


def _compute_on_dask(rows, function, block_args):
    """Run ``function`` on every Dask block; results in block order."""
    import dask

    blocks = rows.data.to_delayed().ravel()
    tasks = [dask.delayed(function, pure=True)(block, *args)
             for block, args in zip(blocks, block_args)]
    client = _distributed_client()
    if client is None:
        results = list(dask.compute(*tasks))
        rows._report(rows.n_blocks)
        return results
    from distributed import as_completed

    futures = client.compute(tasks)
    position = {future.key: index for index, future in enumerate(futures)}
    results = [None] * len(futures)
    for done, future in enumerate(as_completed(futures), start=1):
        results[position[future.key]] = future.result()
        rows._report(done)
    return results


def _distributed_client():
    """The current ``dask.distributed`` client, or None (none running, or no
    distributed installed)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


# The per-block functions: arrays and numbers in, partial statistics out.

def _float_rows(block):
    return np.ascontiguousarray(block, dtype=np.float64)


def _project_block(block, matrix):
    return _float_rows(block) @ matrix.T


def _block_pair_sum(block, m, seed, floor):
    """The floored pair sum over an ``m``-partner design of this block's rows."""
    X = check_rows(block)
    design = _pair_design(X.shape[0], m, np.random.default_rng(seed))
    return _design_sum(X, design, floor, None, None)


def _block_matching_counts(block, seed, factor):
    """Counts below the scale-free grid of ``factor ||x_a - x_b||^2`` over a random
    matching of this block's rows, and the number of pairs."""
    X = _float_rows(block)
    order = np.random.default_rng(seed).permutation(X.shape[0])
    half = X.shape[0] // 2
    differences = X[order[:half]] - X[order[half:2 * half]]
    values = np.einsum("ij,ij->i", differences, differences)
    if factor != 1.0:
        values = values * factor
    return np.searchsorted(np.sort(values), _SCALE_FREE_GRID, side="left"), half


def _block_two_sided_counts(block, column, beta, grid):
    positive, negative = _two_sided_values(np.sort(_float_rows(block)[:, column]), beta)
    return (np.searchsorted(positive, grid, side="left"),
            np.searchsorted(negative[::-1], grid, side="left"))


def _block_column_counts(block, column, shift, grid):
    values = np.sort(_float_rows(block)[:, column] - shift)
    return np.searchsorted(values, grid, side="left")


def _block_distance_counts(block, center, unit, grid):
    distances = np.linalg.norm(_float_rows(block) - center, axis=1) / unit
    return np.searchsorted(np.sort(distances), grid, side="left")


def _block_histogram(block, x_edges, y_edges):
    return histogram_counts(_float_rows(block), x_edges, y_edges)


def _block_check(block):
    block = np.asarray(block)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = bool(np.all(np.isfinite(block)))
    return finite, float(np.max(np.abs(block))) if finite and block.size else 0.0


def pair_mean(X, *, floor, pairs, rng, n_jobs=None, progress=None):
    """:func:`~sklearn_dppca._kendall.pair_scatter` of an array, or its blockwise
    version for rows in blocks (``pairs`` an int there)."""
    if not is_row_blocks(X):
        return pair_scatter(X, floor=floor, pairs=pairs, random_state=rng, n_jobs=n_jobs,
                            progress=progress)
    total, n_terms, _ = X.pair_sum(floor, pairs, rng)
    return total / n_terms


def kendall_matrix(X, *, pairs, rng, n_jobs=None, progress=None):
    """:func:`~sklearn_dppca._kendall.spherical_kendall` of an array, or its
    blockwise version for rows in blocks (a coincident pair is a zero term in both)."""
    if not is_row_blocks(X):
        return spherical_kendall(X, n_jobs=n_jobs, pairs=pairs, random_state=rng,
                                 progress=progress)
    total, n_terms, _ = X.pair_sum(0.0, pairs, rng)
    return total / n_terms


def times(X, matrix):
    """``X @ matrix.T`` in float64: an array, or rows in blocks (same blocks)."""
    if is_row_blocks(X):
        return X.projected(matrix)
    return X.astype(np.float64) @ np.asarray(matrix).T
