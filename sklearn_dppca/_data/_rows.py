"""The one data layer: every fit reads its rows here, in row blocks whose sizes
derive from ``n`` alone (or from ``row_blocks`` when given).

An in-memory array and a Dask collection with the same ``n`` are cut into the same
blocks (a Dask collection is rechunked to them: its own partitions, which a data
source may choose from the data's bytes, are never used), so the two fits release
the same values. Up to :data:`BLOCK_ROWS` rows, which one machine holds
comfortably, there is a single block: "all pairs", per-component clipping, the
one-dimensional scree estimators and the non-private reference are then
available, as over all rows.

:class:`Rows` runs the per-block parts of :mod:`~sklearn_dppca._data._statistics` and
adds them up on the client in block order; the noise is drawn there, once, by the
mechanisms the algorithms call. Each design and matching is seeded by the fit's
random state and the statistic's name (its ledger step), so a statistic may be
computed ahead of its release, in a pass it shares with others, without changing
what is released. :meth:`Rows.plan_passes` reads the fit's budget plan and puts
in the first pass (before any charge, with the finiteness check) every statistic
of the raw rows that needs no release first, and in the first pass over the
scaled rows those of the scaled rows.
"""

import math

import numpy as np

from . import _statistics as stats
from .._kendall import check_pair_design
from .._validation import check_max_abs
from ..privacy._quantiles import (
    _even_grid,
    _geometric_grid,
    _interval_from_counts,
    _positive_from_counts,
    _two_sided_release,
    _upper_from_counts,
)

#: Rows up to which a fit holds one block (public: a function of ``n`` alone).
BLOCK_ROWS = 1_000_000
#: The two-sided (fully unbounded) searches' geometric grid (``beta``, steps),
#: the defaults of :func:`~sklearn_dppca.privacy.quantile`.
_TWO_SIDED_GRID = (1.01, 5000)
#: The matchings computed ahead, by name: each one's scale argument.
_MATCHINGS_AHEAD = {stats.RADIUS: 1.0, stats.TOTAL_BOUND: 0.5}


def block_sizes(n_samples, row_blocks=None):
    """The public block sizes of ``n_samples`` rows.

    ``row_blocks=None``: ``ceil(n / BLOCK_ROWS)`` blocks as equal as can be (the
    first ones one row larger); an int: that many rows per block (the last block
    takes the rest); a list: the sizes themselves, which must add up to ``n``.
    """
    if row_blocks is None:
        n_blocks = max(1, math.ceil(n_samples / BLOCK_ROWS))
        base, extra = divmod(n_samples, n_blocks)
        return tuple(base + (index < extra) for index in range(n_blocks))
    if isinstance(row_blocks, (int, np.integer)):
        sizes = [int(row_blocks)] * (n_samples // row_blocks)
        if n_samples % row_blocks:
            sizes.append(n_samples % row_blocks)
        return tuple(sizes)
    sizes = tuple(row_blocks)
    if not all(isinstance(size, (int, np.integer)) and size >= 1 for size in sizes):
        raise ValueError("row_blocks must hold positive integers (the rows of each block).")
    if sum(sizes) != n_samples:
        raise ValueError(f"row_blocks holds {sum(sizes)} rows in all; X has "
                         f"{n_samples} rows.")
    return tuple(int(size) for size in sizes)


def check_design(sizes, m):
    """Raise a ValueError naming ``pairs`` when a block of ``sizes`` cannot give
    every row ``m`` partners (public: the block sizes). One block caps ``m`` at
    ``n - 1`` (all pairs), as :func:`~sklearn_dppca._kendall.check_pair_design`
    does."""
    if len(sizes) == 1:
        check_pair_design(sizes[0], m)
        return
    small = [size for size in sizes if size < m + 1]
    if small:
        raise ValueError(
            f"pairs={m} pairs rows within row blocks, and every block needs at "
            f"least pairs + 1 = {m + 1} rows; {len(small)} block(s) have fewer "
            f"(smallest: {min(small)} rows). Use larger blocks (a larger "
            "row_blocks) or a smaller pairs.")
    if m % 2 == 1 and any(size % 2 for size in sizes):
        raise ValueError(
            f"pairs={m} is odd, so every row block needs an even number of rows "
            "(each row's last partner is its antipode in its block). Use an even "
            f"pairs, e.g. pairs={m + 1}, or even block sizes.")


class _Passes:
    """What the rows of a fit and all their views share: the requests waiting for
    the next pass over the data, the statistics computed ahead of their release,
    the finiteness check (made in the first pass) and the plan of the fit."""

    def __init__(self, root):
        self.root = int(root)
        self.pending = []      # (key, view, function, block_args)
        self.ready = {}        # key -> per-block results
        self.largest = None    # each column's largest absolute value, once checked
        self.max_abs_checks = []   # what: checks waiting for the first pass
        self.plan = None       # (requests, settings) from plan_passes
        self.views = {}        # (block index, view key) -> a narrow view's rows
        self.riders = {}       # (view key, pair sum name) -> its riding trace floor
        self.ridden = {}       # (view key, name, trace floor) -> (share sum, terms)


class Rows:
    """The rows of a fit, in public blocks: an in-memory array or a Dask array.

    A view of the rows (divided by column spreads, projected on directions) reads
    the same blocks: every statistic of a view is computed from the rows' own
    blocks, so statistics of several views share one pass over the data.

    Parameters
    ----------
    data : ndarray or dask.array.Array of shape (n_samples, n_features)
        A Dask array has one chunk per block along the rows and one along the
        columns.
    sizes : tuple of int
        Rows per block (:func:`block_sizes`).
    root : int
        The fit's root seed, drawn from its random state: with a statistic's
        name it seeds every design and matching.
    n_jobs : int or None
        Threads of the pair kernel within a block of an in-memory array.
    progress : callable, default=None
        ``progress(blocks_done, blocks_total)`` after each block of a pass.
    """

    def __init__(self, data, sizes, root, *, n_jobs=None, progress=None,
                 view=(None, None, None), passes=None):
        self.data = data
        self.sizes = tuple(int(size) for size in sizes)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.intp)
        self.n_jobs = n_jobs
        self.progress = progress
        self.view = view
        self.passes = _Passes(root) if passes is None else passes
        _, _, matrix = view
        width = int(data.shape[1]) if matrix is None else int(matrix.shape[0])
        self.shape = (int(self.starts[-1]), width)

    @property
    def n_blocks(self):
        return len(self.sizes)

    @property
    def is_dask(self):
        return not isinstance(self.data, np.ndarray)

    def _view_key(self):
        return _view_key(self.view)

    def _with_view(self, view):
        return Rows(self.data, self.sizes, self.passes.root, n_jobs=self.n_jobs,
                    progress=self.progress, view=view, passes=self.passes)

    def projected(self, matrix):
        """The rows times ``matrix.T`` (float64): a view, in the same blocks."""
        if self.view[2] is not None:
            raise ValueError("rows are projected once")
        return self._with_view(self.view[:2] + (np.asarray(matrix, dtype=np.float64),))

    def clipped(self, low, high):
        """The rows with each column clipped to its public range ``[low_j,
        high_j]`` (:func:`~sklearn_dppca._data._statistics.view_rows`): a view, taken
        before any division or projection.

        Clipping is a map of each row alone, so one changed row still changes
        one row of the view: every sensitivity of the rows holds for it.
        """
        if any(part is not None for part in self.view):
            raise ValueError("rows are clipped once, before any division or projection")
        box = np.array([low, high], dtype=np.float64)
        return self._with_view((box, None, None))

    def box(self):
        """The declared ranges of this view's columns, ``(low, high)`` (divided by
        the spreads in a divided view, :func:`~sklearn_dppca._data._statistics.view_box`),
        or None without declared ranges. Public: the ranges and the released
        spreads only. Every row of the view (before any projection) lies in it."""
        return stats.view_box(self.view)

    def box_projection(self):
        """The projection of :meth:`box` on this view's axes (a projected view):
        the centre ``M c`` of the box's image and each axis' half extent
        ``|M| w / 2`` (``c`` the box's centre, ``w`` its widths, ``M`` the
        projection). Every projected row lies within it. None without ranges."""
        box = self.box()
        if box is None or self.view[2] is None:
            return None
        matrix = self.view[2]
        low, high = box
        center = matrix @ (low / 2 + high / 2)
        return center, np.abs(matrix) @ (high - low) / 2

    def widths(self):
        """``high_j - low_j`` of :meth:`box` (None without declared ranges)."""
        box = self.box()
        return None if box is None else box[1] - box[0]

    def score_view(self, matrix):
        """The rows projected on the two score axes (the rows of ``matrix``): a
        view. When the fit's plan holds a score frame, its first searches' counts
        (both axes' medians) are asked of the next pass."""
        scores = self.projected(matrix)
        plan = self.passes.plan
        if plan is not None and stats.TWO_SIDED in plan[0].scores:
            scores._ahead(stats.TWO_SIDED, stats.block_two_sided_counts,
                          [_TWO_SIDED_GRID] * self.n_blocks)
        return scores

    def __truediv__(self, divisor):
        """The rows divided by one positive number per column (then clamped to the
        data domain, :func:`~sklearn_dppca._data._statistics.view_rows`): a view, whose
        statistics of the plan are asked of the next pass."""
        if self.view[1] is not None or self.view[2] is not None:
            raise ValueError("rows are divided once, before any projection")
        scaled = self._with_view((self.view[0], np.asarray(divisor, dtype=np.float64),
                                  None))
        scaled._plan_ahead()
        return scaled

    def array(self):
        """The rows of this view as one float64 array (one block only: the
        non-private reference; refused before the charge otherwise)."""
        if self.n_blocks != 1:
            raise ValueError("the rows are in more than one block")
        return self.map(_whole_view, [()])[0]

    # -- the plan's passes ---------------------------------------------------------

    def plan_passes(self, requests, *, pairs, progress=None):
        """Run the first pass now, before the charge: the finiteness check, the
        waiting domain checks and every statistic ``requests`` asks ahead (the
        algorithms' :func:`~sklearn_dppca._algorithms._plan.first_pass_requests` of the
        fit's plan: statistic names by view). ``pairs`` is the directions'
        design, ``progress`` the pair kernel's progress of their matrix.
        """
        self.passes.plan = (requests, {"pairs": pairs, "progress": progress})
        self._plan_ahead()
        self.flush()

    def _plan_ahead(self):
        """Ask the next pass for what this view computes before any release: the
        raw rows of a scaled fit their ``raw`` requests, the rows the
        directions read their ``rows`` requests."""
        if self.passes.plan is None:
            return
        requests, settings = self.passes.plan
        raw_of_scaled = requests.scaled and self.view[1] is None
        for name in requests.raw if raw_of_scaled else requests.rows:
            if name == stats.SPREAD_BOUNDS:
                self._ahead(name, stats.block_column_matching_counts, self._seeded(name))
            elif name == stats.KENDALL_MATRIX:
                self._pair_sum_ahead(0.0, settings["pairs"], name, settings["progress"])
            else:
                self._ahead(name, stats.block_matching_counts,
                            self._seeded(name, _MATCHINGS_AHEAD[name]))

    # -- passes --------------------------------------------------------------------

    def map(self, function, block_args):
        """``[function(view of block_k, *block_args[k])]`` in block order, in one
        pass over the data with every statistic asked ahead."""
        return self._pass([(None, self.view, function, list(block_args))])[0]

    def _ahead(self, name, function, block_args):
        """Compute ``function`` over the blocks in the next pass, kept under
        ``name`` (and this view) until :meth:`_take` asks for it."""
        if self._asked(name):
            return
        self.passes.pending.append(((self._view_key(), name), self.view, function,
                                    list(block_args)))

    def _asked(self, name):
        """Whether ``name`` (of this view) is computed, or waits for the next pass."""
        key = (self._view_key(), name)
        return key in self.passes.ready or any(p[0] == key for p in self.passes.pending)

    def _take(self, name, function, block_args):
        """The per-block results of ``name``: computed ahead or earlier (the pass
        that holds it runs now, if it has not), or computed now and kept. Either
        way the same values: the block arguments are public and their seeds
        named, so a statistic asked twice (one search per column) is read once."""
        key = (self._view_key(), name)
        if any(pending[0] == key for pending in self.passes.pending):
            self.flush()
        if key not in self.passes.ready:
            self.passes.ready[key] = self.map(function, block_args)
        return self.passes.ready[key]

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
            (None, (None, None, None), stats.block_check, [()] * self.n_blocks)]
        everything = check + pending + requests
        per_block = [[(view, function, args[index]) for _, view, function, args
                      in everything] for index in range(self.n_blocks)]
        results = self._run(per_block)
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
                results.append(_block_requests(block, requests,
                                               self._kept_views(index)))
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
        for what in waiting:
            self._check_max_abs(what)

    def check_max_abs(self, what):
        """:func:`~sklearn_dppca._validation.check_max_abs` of the raw rows (the
        data domain of a fit, a documented input contract): in the first pass,
        before any charge."""
        if self.passes.largest is None:
            self.passes.max_abs_checks.append(what)
        else:
            self._check_max_abs(what)
        return self

    def _check_max_abs(self, what):
        check_max_abs(np.array([np.max(self.passes.largest, initial=0.0)]), what)

    def _kept_views(self, index):
        """The narrow views of block ``index`` kept from earlier passes, by view
        key (in memory only): a projection read by several passes (the score
        axes' searches, the scree's) is computed once."""
        return _KeptViews(self.passes.views, index)

    def _report(self, done):
        # one block is the whole array: its passes are no news
        if self.progress is not None and self.n_blocks > 1:
            self.progress(done, self.n_blocks)

    def _seeded(self, name, *rest):
        """Per block: the fit's root seed, the statistic's name, the block's index
        and ``rest`` (the arguments of a seeded per-block part)."""
        return [(self.passes.root, name, index) + rest for index in range(self.n_blocks)]

    # -- statistics ----------------------------------------------------------------

    def _pair_sum_ahead(self, floor, pairs, name, progress=None):
        """Compute :meth:`pair_sum` in the next pass."""
        self._ahead((name, float(floor), pairs), stats.block_pair_sum,
                    self._pair_args(floor, pairs, name, progress))

    def _pair_args(self, floor, pairs, name, progress=None, trace_floor=0.0):
        n_jobs, progress = (None, None) if self.is_dask else (self.n_jobs, progress)
        return [(pairs,) + seeded + (float(floor), n_jobs, progress, trace_floor)
                for seeded in self._seeded(name)]

    def ride_on_pair_sum(self, name, trace_floor):
        """Let the pair sum ``name`` of this view, when its pass runs after this
        call, also sum ``min(||x_a - x_b||^2 / trace_floor, 1)`` over its pairs
        (a public, positive, finite floor): a clipped total that then needs no
        pass of its own (:meth:`ridden_mean`)."""
        self.passes.riders[(self._view_key(), name)] = float(trace_floor)

    def pair_sum(self, floor, pairs, name, progress=None):
        """The floored pair sum over all pairs (``pairs="all"``, one block) or
        ``m``-partner designs within the blocks, and its number of terms (a
        coincident pair is a zero term). A total riding on it
        (:meth:`ride_on_pair_sum`) is kept for :meth:`ridden_mean`."""
        trace_floor = self.passes.riders.get((self._view_key(), name), 0.0)
        key = (name, float(floor), pairs)
        # (a sum asked ahead, or read before, ran without the ride)
        rides = trace_floor > 0 and not self._asked(key)
        results = self._take(key, stats.block_pair_sum,
                             self._pair_args(floor, pairs, name, progress, trace_floor))
        n_terms = sum(terms for _, terms, _ in results)
        if rides and all(share is not None for _, _, share in results):
            self.passes.ridden[(self._view_key(), name, trace_floor)] = (
                math.fsum(share for _, _, share in results), n_terms)
        return np.sum([partial for partial, _, _ in results], axis=0), n_terms

    def ridden_mean(self, name, trace_floor):
        """The mean of ``min(||x_a - x_b||^2 / trace_floor, 1)`` over the pairs of
        the pair sum ``name``, where it rode on that sum's pass
        (:meth:`ride_on_pair_sum`); None where it did not (the sum ran before
        the ride was asked, or over all pairs)."""
        ridden = self.passes.ridden.get((self._view_key(), name, float(trace_floor)))
        return None if ridden is None else ridden[0] / ridden[1]

    def pair_mean(self, floor, pairs, name, progress=None):
        """:meth:`pair_sum` divided by its number of terms."""
        total, n_terms = self.pair_sum(floor, pairs, name, progress)
        return total / n_terms

    def matching_quantile(self, name, factor, level, leaf, rng, ledger, warn=True):
        """:func:`~sklearn_dppca.privacy.positive_quantile` of
        ``factor * ||x_a - x_b||^2`` over the random matching ``name`` within the
        blocks, on ``leaf``'s budget."""
        counts, n_values = self.matching_counts(name, factor)
        return _positive_from_counts(counts, n_values, level, leaf.eps, rng, ledger,
                                     leaf.path, warn)

    def matching_counts(self, name, factor):
        """The counts of ``factor * ||x_a - x_b||^2`` over the random matching
        ``name`` within the blocks below each point of the scale-free grid, and
        the number of pairs (a row is in at most one: a count moves by at most
        1). Read once: a search and a tail count of the same matching share it."""
        results = self._take(name, stats.block_matching_counts,
                             self._seeded(name, float(factor)))
        return (np.sum([counts for counts, _ in results], axis=0),
                sum(size for _, size in results))

    def column_matching_counts(self, name):
        """Per column, the counts below the scale-free grid of
        ``(x_aj - x_bj)^2 / 2`` over a random matching within the blocks; shape
        (p, grid), and the number of pairs (a row is in at most one pair: a count
        moves by at most 1)."""
        results = self._take(name, stats.block_column_matching_counts,
                             self._seeded(name))
        return (np.sum([counts for counts, _ in results], axis=0),
                sum(size for _, size in results))

    def matched_values(self, name):
        """``(x_aj - x_bj)^2 / 2`` over a random matching within the blocks, shape
        (pairs, p): the values of the one-dimensional scree estimators."""
        return np.concatenate(self.map(stats.block_matched_values, self._seeded(name)))

    def clipped_pair_sums(self, bounds):
        """Per column, ``sum over pairs within a block of min((x_aj - x_bj)^2 / 2,
        C_j)`` and the number of such pairs, summed over the blocks."""
        bounds = np.asarray(bounds, dtype=np.float64)
        results = self.map(stats.block_clipped_pair_sums, [(bounds,)] * self.n_blocks)
        return np.sum(results, axis=0), sum(size * (size - 1) // 2 for size in self.sizes)

    def design_clipped_pair_means(self, bounds, partners, name):
        """Per column, the mean of ``min((x_aj - x_bj)^2 / 2, C_j) / C_j`` over a
        ``partners``-partner design within the blocks (seeded by ``name``), and
        the vector's L2 sensitivity as computed
        (:func:`~sklearn_dppca._data._statistics.design_clipped_sensitivity`)."""
        bounds = np.asarray(bounds, dtype=np.float64)
        results = self._take((name, bounds.tobytes(), partners),
                             stats.block_design_clipped_sums,
                             self._seeded(name, bounds, partners))
        sums = np.sum([block_sums for block_sums, _ in results], axis=0)
        n_terms = sum(terms for _, terms in results)
        most = min(partners, max(self.sizes) - 1)
        return sums / n_terms, stats.design_clipped_sensitivity(most, n_terms,
                                                                self.shape[1])

    def clipped_pair_means(self, bounds):
        """Per column, the clipped pair mean divided by its bound (in ``[0, 1]``), and
        the vector's L2 sensitivity as computed
        (:func:`~sklearn_dppca._data._statistics.clipped_sum_sensitivity`)."""
        sums, n_pairs = self.clipped_pair_sums(bounds)
        return (sums / n_pairs / np.asarray(bounds, dtype=np.float64),
                stats.clipped_sum_sensitivity(self.sizes, self.shape[1]))

    def centred_sums(self, centre):
        """Per column of this view, the sums over the rows of ``y_j - c_j`` and of
        ``(y_j - c_j)^2`` about the public ``centre``: shape (2, p). Read once per
        view and centre (the box's mean and the moments about it share a pass)."""
        centre = np.asarray(centre, dtype=np.float64)
        return np.sum(self._take(("centred sums", centre.tobytes()),
                                 stats.block_centred_sums,
                                 [(centre,)] * self.n_blocks), axis=0)

    def centred_scatter(self, centre, unit):
        """The sum over the rows of this view of ``z z^T``, ``z = (y - c) / u``,
        about the public ``centre`` in the public ``unit``: shape (p, p)."""
        centre = np.asarray(centre, dtype=np.float64)
        return np.sum(self._take(("centred scatter", centre.tobytes(), float(unit)),
                                 stats.block_centred_scatter,
                                 [(centre, float(unit))] * self.n_blocks), axis=0)

    def two_sided_quantile(self, column, q, eps, rng, *, ledger, step, warn):
        """:func:`~sklearn_dppca.privacy.quantile` of one column (every column's
        counts come from one pass)."""
        results = self._take(stats.TWO_SIDED, stats.block_two_sided_counts,
                             [_TWO_SIDED_GRID] * self.n_blocks)
        positive = np.sum([pos[column] for pos, _ in results], axis=0)
        negative = np.sum([neg[column] for _, neg in results], axis=0)
        beta, max_steps = _TWO_SIDED_GRID
        return _two_sided_release(positive, negative, self.shape[0], q, eps, rng,
                                  _geometric_grid(0.0, beta, max_steps), beta, ledger,
                                  step, warn)

    def interval_quantile(self, column, shifts, q, eps, rng, *, low, high, n_points,
                          ledger, step):
        """:func:`~sklearn_dppca.privacy.interval_quantile` of one column minus its
        shift (``shifts``: one per column; every column's counts come from one
        pass)."""
        shifts = tuple(float(shift) for shift in shifts)
        grid = (float(low), float(high), int(n_points))
        results = self._take(("interval", shifts) + grid, stats.block_interval_counts,
                             [(np.array(shifts), grid)] * self.n_blocks)
        counts = np.sum([block[column] for block in results], axis=0)
        return _interval_from_counts(counts, self.shape[0], q, eps, rng,
                                     _even_grid(*grid), ledger, step)

    def distance_quantile(self, center, unit, q, eps, rng, *, beta, max_steps, ledger,
                          step):
        """:func:`~sklearn_dppca.privacy.upper_quantile` (``lower=0``) of the
        distances to ``center`` in units of ``unit``."""
        grid = _geometric_grid(0.0, beta, max_steps)
        counts = np.sum(self.map(stats.block_distance_counts,
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
        return np.sum(self.map(stats.block_histogram, args), axis=0)


def _whole_view(X):
    return X


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


def _view_key(view):
    """A view's parts (box, divisor, matrix) by value: two views with the same
    parts compute the same rows."""
    return tuple(None if part is None else part.tobytes() for part in view)


class _KeptViews:
    """The views of one block kept across passes: those of at most
    :data:`_KEPT_VIEW_COLUMNS` columns (a view is a function of the block and its
    public parts, so a kept one is the one a pass would compute)."""

    def __init__(self, store, index):
        self.store, self.index = store, index

    def rows(self, block, view):
        key = (self.index,) + _view_key(view)
        if key in self.store:
            return self.store[key]
        rows = stats.view_rows(block, view)
        if rows.shape[1] <= _KEPT_VIEW_COLUMNS and view[2] is not None:
            self.store[key] = rows
        return rows


#: The widest projected view kept across passes: its memory is at most this many
#: floats a row (the score axes' view has 2; the scree's has k).
_KEPT_VIEW_COLUMNS = 8


def _block_requests(block, requests, kept=None):
    """Every statistic one pass asks of this block: ``function(view, *args)`` for
    each ``(view, function, args)``; the block is read (or generated) once, and a
    narrow view kept from an earlier pass (``kept``, in memory) is not
    recomputed."""
    views = {}
    results = []
    for view, function, args in requests:
        raw = function is stats.block_check
        key = "raw" if raw else tuple(id(part) for part in view)
        if key not in views:
            views[key] = block if raw else (
                stats.view_rows(block, view) if kept is None else kept.rows(block, view))
        results.append(function(views[key], *args))
        if raw and not results[0][0]:
            # not finite: the pass raises (the documented input contract); the
            # statistics of this block are not computed
            return results + [None] * (len(requests) - 1)
    return results
