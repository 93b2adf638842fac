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

from ._kendall import (
    _design_sum,
    _pair_design,
    pair_scatter,
    random_pairs,
    spherical_kendall,
)
from ._validation import check_max_abs, check_rows
from .privacy._histograms import histogram_counts
from .privacy._means import clipped_pair_mean
from .privacy._quantiles import (
    _SCALE_FREE_GRID,
    _counts_below,
    _geometric_grid,
    _interval_from_counts,
    _positive_from_counts,
    _two_sided_release,
    _two_sided_values,
    _upper_from_counts,
)


class _Passes:
    """What the rows of a fit and all their views share: the requests waiting for
    the next pass over the data, the statistics computed ahead of their release,
    the finiteness check (made in the first pass) and the number of passes."""

    def __init__(self):
        self.pending = []      # (key, view, function, block_args)
        self.ready = {}        # key -> per-block results
        self.count = 0
        self.largest = None    # each column's largest absolute value, once checked
        self.max_abs_checks = []   # (divisor, what): checks waiting for the first pass


class RowBlocks:
    """The rows of a fit, in blocks: an in-memory array or a Dask array.

    A view of the rows (divided by column spreads, projected on directions) reads
    the same blocks: every statistic of a view is computed from the rows' own
    blocks, so statistics of several views share one pass over the data.

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

    def __init__(self, data, sizes, progress=None, *, view=(None, None), passes=None):
        self.data = data
        self.sizes = tuple(int(size) for size in sizes)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.intp)
        self.progress = progress
        self.view = view
        self.passes = _Passes() if passes is None else passes
        divisor, matrix = view
        width = int(data.shape[1]) if matrix is None else int(matrix.shape[0])
        self.shape = (int(self.starts[-1]), width)

    @property
    def n_blocks(self):
        return len(self.sizes)

    @property
    def is_dask(self):
        return not isinstance(self.data, np.ndarray)

    @property
    def n_passes(self):
        """Passes over the data so far (each reads every block once)."""
        return self.passes.count

    def _view_key(self):
        return tuple(None if part is None else part.tobytes() for part in self.view)

    def _with_view(self, view):
        return RowBlocks(self.data, self.sizes, self.progress, view=view,
                         passes=self.passes)

    def projected(self, matrix):
        """The rows times ``matrix.T`` (float64): a view, in the same blocks."""
        if self.view[1] is not None:
            raise ValueError("rows in blocks are projected once")
        return self._with_view((self.view[0], np.asarray(matrix, dtype=np.float64)))

    def __truediv__(self, divisor):
        """The rows divided by one positive number per column: a view."""
        if self.view != (None, None):
            raise ValueError("rows in blocks are divided before any projection")
        return self._with_view((np.asarray(divisor, dtype=np.float64), None))

    # -- passes ------------------------------------------------------------------

    def map(self, function, block_args):
        """``[function(view of block_k, *block_args[k])]`` in block order, in one
        pass over the data with every statistic requested ahead (:meth:`ahead`)."""
        return self._pass([(None, self.view, function, list(block_args))])[0]

    def ahead(self, key, function, block_args):
        """Compute ``function`` over the blocks in the next pass, kept under ``key``
        until :meth:`take` asks for it (nothing is released here)."""
        self.passes.pending.append(((self._view_key(),) + key, self.view, function,
                                    list(block_args)))

    def take(self, key, function, make_block_args):
        """The per-block results of ``key``: computed ahead (then the pass that
        holds it runs now, if it has not), or computed now with
        ``make_block_args()`` (called only then: it may draw seeds)."""
        key = (self._view_key(),) + key
        if any(pending[0] == key for pending in self.passes.pending):
            self.flush()
        if key in self.passes.ready:
            return self.passes.ready.pop(key)
        return self.map(function, make_block_args())

    def flush(self):
        """Run the pending requests (and the first pass's check) now."""
        if self.passes.pending or self.passes.largest is None:
            self._pass([])

    def _pass(self, requests):
        """One pass: the finiteness check (first pass), the pending requests and
        ``requests``; pending results are kept, the others returned."""
        passes = self.passes
        pending, passes.pending = passes.pending, []
        check = [] if passes.largest is not None else [
            (None, (None, None), _block_check, [()] * self.n_blocks)]
        everything = check + pending + requests
        per_block = [[(view, function, args[index]) for _, view, function, args
                      in everything] for index in range(self.n_blocks)]
        results = self._run(per_block)
        passes.count += 1
        columns = [[block[position] for block in results]
                   for position in range(len(everything))]
        if check:
            self._finish_check(columns.pop(0))
        for (key, *_), column in zip(pending, columns):
            passes.ready[key] = column
        return columns[len(pending):]

    def _run(self, per_block):
        if not self.is_dask:
            results = []
            for index, requests in enumerate(per_block):
                block = self.data[self.starts[index]:self.starts[index + 1]]
                results.append(_block_requests(block, requests))
                self._report(index + 1)
            return results
        return _compute_on_dask(self, per_block)

    def _finish_check(self, results):
        """Raise a ValueError naming X when a value is not finite (the documented
        input contract of every fit), or when a waiting ``max |X|`` check fails."""
        if not all(finite for finite, _ in results):
            raise ValueError("Input X contains NaN or infinity.")
        self.passes.largest = np.max([largest for _, largest in results], axis=0)
        waiting, self.passes.max_abs_checks = self.passes.max_abs_checks, []
        for divisor, what in waiting:
            self._check_max_abs(divisor, what)

    def check_max_abs(self, what):
        """:func:`~sklearn_dppca._validation.check_max_abs` of this view (not
        projected): now if the first pass has run, else in it."""
        if self.passes.largest is None:
            self.passes.max_abs_checks.append((self.view[0], what))
        else:
            self._check_max_abs(self.view[0], what)
        return self

    def _check_max_abs(self, divisor, what):
        largest = self.passes.largest if divisor is None else self.passes.largest / divisor
        check_max_abs(np.array([np.max(largest, initial=0.0)]), what)

    def _report(self, done):
        if self.progress is not None:
            self.progress(done, self.n_blocks)

    def _seeds(self, rng):
        """One seed per block, drawn from the fit's generator (public: no data)."""
        return rng.integers(0, 2**63 - 1, size=self.n_blocks, dtype=np.int64)

    # -- statistics --------------------------------------------------------------

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

    def _pair_sum_args(self, floor, m, rng):
        self.check_design(m)
        return [(m, int(seed), float(floor)) for seed in self._seeds(rng)]

    def pair_sum_ahead(self, floor, m, rng):
        """Draw the designs of :meth:`pair_sum` now and compute it in the next pass."""
        self.ahead(("pair sum", float(floor), m), _block_pair_sum,
                   self._pair_sum_args(floor, m, rng))

    def pair_sum(self, floor, m, rng):
        """The floored pair sum over ``m``-partner designs within the blocks, and
        its number of terms (a coincident pair is a zero term)."""
        results = self.take(("pair sum", float(floor), m), _block_pair_sum,
                            lambda: self._pair_sum_args(floor, m, rng))
        return (np.sum([partial for partial, _ in results], axis=0),
                sum(terms for _, terms in results))

    def _matching_args(self, factor, rng):
        return [(int(seed), float(factor)) for seed in self._seeds(rng)]

    def matching_ahead(self, factor, rng):
        """Draw the matchings of :meth:`matching_quantile` now and count in the next
        pass."""
        self.ahead(("matching", float(factor)), _block_matching_counts,
                   self._matching_args(factor, rng))

    def matching_quantile(self, factor, level, leaf, rng, ledger, warn=True):
        """:func:`~sklearn_dppca.privacy.positive_quantile` of
        ``factor * ||x_a - x_b||^2`` over a random matching within the blocks."""
        results = self.take(("matching", float(factor)), _block_matching_counts,
                            lambda: self._matching_args(factor, rng))
        counts = np.sum([counts for counts, _ in results], axis=0)
        n_values = sum(size for _, size in results)
        return _positive_from_counts(counts, n_values, level, leaf.eps, rng, ledger,
                                     leaf.path, warn)

    def column_matching_ahead(self, rng):
        """Draw the matchings of :meth:`column_matching_counts` now; count in the
        next pass."""
        self.ahead(("column matching",), _block_column_matching_counts,
                   [(int(seed),) for seed in self._seeds(rng)])

    def column_matching_counts(self, rng):
        """Per column, the counts below the scale-free grid of ``(x_aj - x_bj)^2 / 2``
        over a random matching within the blocks; shape (p, grid), and the number
        of pairs (a row is in at most one pair: a count moves by at most 1)."""
        results = self.take(("column matching",), _block_column_matching_counts,
                            lambda: [(int(seed),) for seed in self._seeds(rng)])
        return (np.sum([counts for counts, _ in results], axis=0),
                sum(size for _, size in results))

    def clipped_pair_sums(self, bounds):
        """Per column, ``sum over pairs within a block of min((x_aj - x_bj)^2 / 2,
        C_j)`` and the number of such pairs, summed over the blocks."""
        bounds = np.asarray(bounds, dtype=np.float64)
        results = self.map(_block_clipped_pair_sums, [(bounds,)] * self.n_blocks)
        return np.sum(results, axis=0), sum(size * (size - 1) // 2 for size in self.sizes)

    def within_block_sensitivity(self):
        """How much one row moves a mean over all pairs within the blocks, per unit
        of the terms' range: it is in ``n_b - 1`` of the ``sum_b C(n_b, 2)`` pairs
        (``2 / n`` for equal blocks, as for all pairs of the rows)."""
        n_pairs = sum(size * (size - 1) // 2 for size in self.sizes)
        return (max(self.sizes) - 1) / n_pairs

    def _two_sided_key(self, column, beta, max_steps):
        return ("two-sided", int(column), float(beta), int(max_steps))

    def two_sided_ahead(self, column, beta=1.01, max_steps=5000):
        """Count for :meth:`two_sided_quantile` in the next pass."""
        self.ahead(self._two_sided_key(column, beta, max_steps), _block_two_sided_counts,
                   [(column, beta, max_steps)] * self.n_blocks)

    def two_sided_quantile(self, column, q, eps, rng, *, ledger, step, warn,
                           beta=1.01, max_steps=5000):
        """:func:`~sklearn_dppca.privacy.quantile` of one column."""
        results = self.take(self._two_sided_key(column, beta, max_steps),
                            _block_two_sided_counts,
                            lambda: [(column, beta, max_steps)] * self.n_blocks)
        grid = _geometric_grid(0.0, beta, max_steps)
        positive = np.sum([pos for pos, _ in results], axis=0)
        negative = np.sum([neg for _, neg in results], axis=0)
        return _two_sided_release(positive, negative, self.shape[0], q, eps, rng, grid,
                                  beta, ledger, step, warn)

    def _interval_request(self, column, shift, low, high, n_points):
        grid = (float(low), float(high), int(n_points))
        return ("interval", int(column), float(shift)) + grid, grid

    def interval_ahead(self, column, shift, *, low, high, n_points):
        """Count for :meth:`interval_quantile` in the next pass."""
        key, grid = self._interval_request(column, shift, low, high, n_points)
        self.ahead(key, _block_column_counts,
                   [(column, float(shift), grid)] * self.n_blocks)

    def interval_quantile(self, column, shift, q, eps, rng, *, low, high, n_points,
                          ledger, step):
        """:func:`~sklearn_dppca.privacy.interval_quantile` of a shifted column."""
        key, grid = self._interval_request(column, shift, low, high, n_points)
        counts = np.sum(self.take(key, _block_column_counts,
                                  lambda: [(column, float(shift), grid)] * self.n_blocks),
                        axis=0)
        return _interval_from_counts(counts, self.shape[0], q, eps, rng,
                                     np.linspace(*grid), ledger, step)

    def distance_quantile(self, center, unit, q, eps, rng, *, beta, max_steps, ledger,
                          step):
        """:func:`~sklearn_dppca.privacy.upper_quantile` (``lower=0``) of the
        distances to ``center`` in units of ``unit``."""
        grid = _geometric_grid(0.0, beta, max_steps)
        counts = np.sum(self.map(_block_distance_counts,
                                 [(np.asarray(center, dtype=np.float64), float(unit),
                                   beta, max_steps)] * self.n_blocks), axis=0)
        return _upper_from_counts(counts, self.shape[0], q, eps, rng, grid, beta, ledger,
                                  step)

    def histogram(self, x_edges, y_edges, codes=None, n_labels=None):
        """Exact counts of the (2-column) rows on the grid, summed over blocks; per
        group (shape ``(n_labels,) + bins``) with ``codes``, each row's group
        position: an array, or a Dask array in the same row blocks."""
        if codes is None:
            args = [(x_edges, y_edges, None, None)] * self.n_blocks
        else:
            args = [(x_edges, y_edges, block, int(n_labels))
                    for block in _code_blocks(codes, self.starts)]
        return np.sum(self.map(_block_histogram, args), axis=0)


def is_row_blocks(X):
    """True for the rows of a fit in blocks (:class:`RowBlocks`)."""
    return isinstance(X, RowBlocks)


def _compute_on_dask(rows, per_block):
    """Run every block's requests as one Dask task per block; results in block
    order."""
    try:
        import dask
    except ImportError as error:    # unreachable with a Dask input, but say so
        raise ImportError("A Dask input needs the dask package.") from error

    blocks = rows.data.to_delayed().ravel()
    tasks = [dask.delayed(_block_requests, pure=True)(block, requests)
             for block, requests in zip(blocks, per_block)]
    client, as_completed = _distributed_client()
    if client is None:
        results = list(dask.compute(*tasks))
        rows._report(rows.n_blocks)
        return results
    futures = client.compute(tasks)
    position = {future.key: index for index, future in enumerate(futures)}
    results = [None] * len(futures)
    for done, future in enumerate(as_completed(futures), start=1):
        results[position[future.key]] = future.result()
        rows._report(done)
    return results


def _code_blocks(codes, starts):
    """Each block's group codes: slices of an array, or a Dask array's blocks."""
    if isinstance(codes, np.ndarray):
        return [codes[starts[index]:starts[index + 1]] for index in range(len(starts) - 1)]
    sizes = tuple(int(size) for size in np.diff(starts))
    return list(codes.rechunk((sizes,)).to_delayed().ravel())


def _distributed_client():
    """The current ``dask.distributed`` client and its ``as_completed``, or
    ``(None, None)`` (no client running, or distributed not installed)."""
    try:
        from distributed import as_completed, get_client
    except ImportError:
        return None, None
    try:
        return get_client(), as_completed
    except ValueError:
        return None, None


# The per-block functions: arrays and numbers in, partial statistics out.

def _float_rows(block):
    return np.ascontiguousarray(block, dtype=np.float64)


def _block_requests(block, requests):
    """Every statistic one pass asks of this block: ``function(view, *args)`` for
    each ``(view, function, args)``; the block is read (or generated) once."""
    views = {}
    results = []
    for view, function, args in requests:
        key = "raw" if function is _block_check else tuple(id(part) for part in view)
        if key not in views:
            views[key] = block if function is _block_check else _view_rows(block, view)
        results.append(function(views[key], *args))
        if function is _block_check and not results[0][0]:
            # not finite: the pass raises (the documented input contract); the
            # statistics of this block are not computed
            return results + [None] * (len(requests) - 1)
    return results


def _view_rows(block, view):
    """The block's rows as float64, divided by ``view[0]`` and projected on the rows
    of ``view[1]`` (either None: skipped)."""
    divisor, matrix = view
    rows = _float_rows(block)
    if divisor is not None:
        rows = rows / divisor
    return rows if matrix is None else rows @ matrix.T


def _block_pair_sum(X, m, seed, floor):
    """The floored pair sum over an ``m``-partner design of this block's rows."""
    X = check_rows(X)
    design = _pair_design(X.shape[0], m, np.random.default_rng(seed))
    total, n_terms, _ = _design_sum(X, design, floor, None, None)
    return total, n_terms


def _matched_differences(X, seed):
    first, second = random_pairs(X.shape[0], np.random.default_rng(seed))
    return X[first] - X[second], first.size


def _block_matching_counts(X, seed, factor):
    """Counts below the scale-free grid of ``factor ||x_a - x_b||^2`` over a random
    matching of this block's rows, and the number of pairs."""
    differences, half = _matched_differences(X, seed)
    values = np.einsum("ij,ij->i", differences, differences)
    if factor != 1.0:
        values = values * factor
    return _counts_below(values, _SCALE_FREE_GRID), half


def _block_column_matching_counts(X, seed):
    """Per column, counts below the scale-free grid of ``(x_aj - x_bj)^2 / 2`` over a
    random matching of this block's rows; and the number of pairs."""
    differences, half = _matched_differences(X, seed)
    values = differences**2 / 2
    return np.array([_counts_below(values[:, j], _SCALE_FREE_GRID)
                     for j in range(X.shape[1])]), half


def _block_clipped_pair_sums(X, bounds):
    """Per column, the sum of ``min((x_aj - x_bj)^2 / 2, C_j)`` over all pairs of this
    block's rows (exact, O(n log n) a column)."""
    n_pairs = X.shape[0] * (X.shape[0] - 1) // 2
    if n_pairs == 0:
        return np.zeros(X.shape[1])
    return np.array([clipped_pair_mean(X[:, j], bounds[j]) for j in range(X.shape[1])]) \
        * n_pairs


def _block_two_sided_counts(X, column, beta, max_steps):
    grid = _geometric_grid(0.0, beta, max_steps)
    positive, negative = _two_sided_values(np.sort(X[:, column]), beta)
    return (np.searchsorted(positive, grid, side="left"),
            np.searchsorted(negative[::-1], grid, side="left"))


def _block_column_counts(X, column, shift, grid):
    return _counts_below(X[:, column] - shift, np.linspace(*grid))


def _block_distance_counts(X, center, unit, beta, max_steps):
    distances = np.linalg.norm(X - center, axis=1) / unit
    return _counts_below(distances, _geometric_grid(0.0, beta, max_steps))


def _block_histogram(X, x_edges, y_edges, codes, n_labels):
    if codes is None:
        return histogram_counts(X, x_edges, y_edges)
    return histogram_counts(X, x_edges, y_edges, groups=np.asarray(codes),
                            labels=np.arange(n_labels))


def _block_check(block):
    """Whether every value is finite, and each column's largest absolute value."""
    block = np.asarray(block)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = bool(np.all(np.isfinite(block)))
    if not finite or block.shape[0] == 0:
        return finite, np.zeros(block.shape[1])
    return finite, np.max(np.abs(block), axis=0).astype(np.float64)


def pair_mean(X, *, floor, pairs, rng, n_jobs=None, progress=None):
    """:func:`~sklearn_dppca._kendall.pair_scatter` of an array, or its blockwise
    version for rows in blocks (``pairs`` an int there)."""
    if not is_row_blocks(X):
        return pair_scatter(X, floor=floor, pairs=pairs, random_state=rng, n_jobs=n_jobs,
                            progress=progress)
    total, n_terms = X.pair_sum(floor, pairs, rng)
    return total / n_terms


def kendall_matrix(X, *, pairs, rng, n_jobs=None, progress=None):
    """:func:`~sklearn_dppca._kendall.spherical_kendall` of an array, or its
    blockwise version for rows in blocks (a coincident pair is a zero term in both)."""
    if not is_row_blocks(X):
        return spherical_kendall(X, n_jobs=n_jobs, pairs=pairs, random_state=rng,
                                 progress=progress)
    total, n_terms = X.pair_sum(0.0, pairs, rng)
    return total / n_terms


def times(X, matrix):
    """``X @ matrix.T`` in float64: an array, or rows in blocks (same blocks)."""
    if is_row_blocks(X):
        return X.projected(matrix)
    return X.astype(np.float64) @ np.asarray(matrix).T


def first_pass(X, rng, *, scale, pairs, radial="spherical", radius="auto",
               total=False):
    """For rows in blocks, run the first pass over the data now (before the fit's
    budget is charged): the finiteness check with the statistics that need no
    release, drawn from ``rng`` now (:func:`statistics_ahead`; the spreads' counts
    with ``scale``). A no-op for an array."""
    if not is_row_blocks(X):
        return
    if scale:
        X.column_matching_ahead(rng)
    else:
        statistics_ahead(X, rng, pairs=pairs, radial=radial, radius=radius, total=total)
    X.flush()


def statistics_ahead(X, rng, *, pairs, radial="spherical", radius="auto", total=False):
    """For rows in blocks, ask the next pass for what the directions (with
    ``pairs`` an int; None: none released) and, with ``total``, the total
    variance's clip bound read first: the spherical Kendall sum or the clip
    radius's matching, and the total's matching. Their designs and matchings are
    drawn from ``rng`` now (public: no data). A no-op for an array."""
    if not is_row_blocks(X):
        return
    if isinstance(pairs, int) and radial == "spherical":
        X.pair_sum_ahead(0.0, pairs, rng)
    elif isinstance(pairs, int) and isinstance(radius, str):
        X.matching_ahead(1.0, rng)
    if total:
        X.matching_ahead(0.5, rng)
