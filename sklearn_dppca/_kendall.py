"""The spherical Kendall matrix: input checks, pair designs and parallel dispatch.

The numerical work happens in :mod:`sklearn_dppca._kendall_kernel`. This module
prepares its inputs, splits the pairs into tasks, runs the tasks through joblib and
adds the partial sums in a fixed order.

Exactness of the all-pairs path. The kernel gets squared distances from a Gram
product, ``|a|^2 + |b|^2 - 2 a.b``, and adds the pair terms through
``A^T diag(W 1) A + B^T diag(W^T 1) B - A^T W B - (A^T W B)^T``. Both steps lose
about ``eps * S / D2`` relative accuracy on a pair, where ``S = |a|^2 + |b|^2`` and
``D2 = |a - b|^2``. Three things keep that small:

* ``X`` is first multiplied by an exact power of two so that ``max |x| < 1``; K is
  scale invariant and nothing overflows in the Gram products.
* The rows are put in k-d order (recursive splits, at whole blocks, along the
  widest coordinate) so each block of ``BLOCK_SIZE`` rows is spatially compact, and each
  block pair is centred on the coordinatewise median of its first block; K is
  translation invariant. Clustered or far-from-the-origin data thus keep ``S``
  comparable to the distances.
* Every pair with ``D2 < S / 16 + 2**-900`` (the second term catches ``S`` near
  the underflow range, and exact duplicates) leaves the Gram sum and is computed
  exactly from ``x_i - x_j`` taken on the original rows, rescaled by a power of two
  near its largest coordinate. The pairs that stay have ``S / D2 <= 16``, so their
  terms carry relative errors of a few times ``16 eps`` at worst, far below the
  1e-12 agreement with a direct pair loop that the tests demand (measured: about
  1e-15).
"""

import functools
import numbers
from typing import NamedTuple

import joblib
import numpy as np
from sklearn.utils.validation import check_array
from threadpoolctl import ThreadpoolController

from ._kendall_kernel import all_pairs_partial, design_partial
from .privacy._rng import check_generator

# Rows per block of the all-pairs kernel: the b x b weight block (512 KiB) stays in
# a core's L2 cache while the DGEMM calls still run at full speed.
BLOCK_SIZE = 256
# Block pairs (I, J) sharing one accumulation of W_IJ B_J: bounds how many terms any
# accumulated entry sums, and gives the scheduler pieces of similar size.
RUN_LENGTH = 16
# At most this many parallel tasks; the split depends on the data size only, never on
# n_jobs, so every n_jobs adds the same partial sums in the same order.
MAX_TASKS = 128
# Ring positions per task of the pair-design kernel (at least).
DESIGN_CHUNK = 2048

_DUPLICATES_OPTIONS = ("ignore", "raise")


class PairDesign(NamedTuple):
    """A data-independent circulant design pairing every row with ``m`` others.

    Row ``order[t]`` sits at position ``t`` of a ring of ``n`` positions; it is paired
    with the rows at positions ``t +- o (mod n)`` for every ``o`` in ``offsets`` and,
    when ``half_offset > 0``, with the row at ``t + n/2 (mod n)``.

    Attributes
    ----------
    order : ndarray of shape (n_samples,)
        A uniformly random permutation of the rows.
    offsets : ndarray of shape (m // 2,)
        The forward offsets ``1, ..., m // 2``.
    half_offset : int
        ``n / 2`` when ``m`` is odd (then ``n`` is even), else 0.
    """

    order: np.ndarray
    offsets: np.ndarray
    half_offset: int

    @property
    def n_partners(self):
        """Number of partners of every row, ``m``."""
        return 2 * len(self.offsets) + (1 if self.half_offset else 0)

    def partners(self):
        """Partner rows of every row.

        Returns
        -------
        partners : ndarray of shape (n_samples, m)
            ``partners[i]`` lists the rows paired with row ``i``.
        """
        n = len(self.order)
        steps = np.concatenate([self.offsets, -self.offsets])
        if self.half_offset:
            steps = np.append(steps, self.half_offset)
        positions = (np.arange(n)[:, None] + steps[None, :]) % n
        partners = np.empty((n, len(steps)), dtype=np.intp)
        partners[self.order] = self.order[positions]
        return partners

    def pairs(self):
        """Every design pair once, as ``(i, j)`` with ``i < j``, sorted.

        Returns
        -------
        pairs : ndarray of shape (n_samples * m // 2, 2)
        """
        n = len(self.order)
        ring = np.arange(n)
        firsts = [ring for _ in self.offsets]
        seconds = [(ring + step) % n for step in self.offsets]
        if self.half_offset:
            firsts.append(ring[: self.half_offset])
            seconds.append(ring[: self.half_offset] + self.half_offset)
        if not firsts:
            return np.empty((0, 2), dtype=np.intp)
        rows = self.order[np.concatenate(firsts)]
        partners = self.order[np.concatenate(seconds)]
        pairs = np.column_stack([np.minimum(rows, partners),
                                 np.maximum(rows, partners)])
        return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def pair_design(n_samples, m, rng):
    """Draw the circulant pair design of the incomplete Kendall U-statistic.

    A uniformly random permutation places the rows on a ring; each row is then paired
    with the rows at offsets ``1, ..., m // 2`` on both sides and, when ``m`` is odd,
    with the antipodal row (offset ``n / 2``, so ``n`` must be even). Every row is in
    exactly ``m`` of the ``n m / 2`` distinct pairs, and the design does not look at
    the data.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n >= 2``.
    m : int
        Partners per row, ``m >= 1``. Values ``m >= n - 1`` give the complete design
        (all pairs, ``m = n - 1``).
    rng : numpy.random.Generator
        Source of the permutation.

    Returns
    -------
    design : PairDesign
        ``design.partners()`` and ``design.pairs()`` list the pairs.

    Raises
    ------
    ValueError
        If ``n_samples`` and ``m < n_samples - 1`` are both odd: no design then gives
        every row the same number of partners.
    """
    n_samples = int(n_samples)
    if n_samples < 2:
        raise ValueError(f"A pair design needs n_samples >= 2, got {n_samples}.")
    m = min(_check_pairs(m), n_samples - 1)
    if m % 2 == 1 and n_samples % 2 == 1:
        raise ValueError(
            f"pairs={m} is odd and the number of rows n={n_samples} is odd: an odd "
            "number of partners per row needs an even n (each row's last partner is "
            f"its antipode). Use an even pairs, e.g. pairs={m + 1}."
        )
    order = rng.permutation(n_samples).astype(np.intp)
    offsets = np.arange(1, m // 2 + 1, dtype=np.intp)
    half_offset = n_samples // 2 if m % 2 == 1 else 0
    return PairDesign(order=order, offsets=offsets, half_offset=half_offset)


def spherical_kendall(X, *, duplicates="ignore", n_jobs=None, pairs="all",
                      random_state=None):
    """Spherical Kendall matrix of the rows of ``X``.

    ``K = 2 / (n (n - 1)) * sum_{i < j} u_ij u_ij^T`` with the unit differences
    ``u_ij = (x_i - x_j) / ||x_i - x_j||``. K is symmetric, positive semi-definite,
    has trace 1 (without coincident rows), and does not change when ``X`` is
    translated or multiplied by a positive number.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite numeric data, float64 or float32 (computed in float64), ``n >= 2``.
        Never modified.
    duplicates : {"ignore", "raise"}, default="ignore"
        Coincident pairs (``x_i == x_j``) have no direction. ``"ignore"`` gives them a
        zero term, so the trace of K is the share of non-coincident pairs; ``"raise"``
        raises a ``ValueError`` that counts them and names the first pair.
    n_jobs : int, default=None
        Parallel tasks, through :class:`joblib.Parallel` with threads (the kernel
        releases the GIL). ``None`` means 1 unless in a
        :func:`joblib.parallel_backend` context, e.g. ``"dask"``. The result is the
        same for every ``n_jobs``: the tasks do not depend on it, each runs BLAS on
        one thread, and their partial sums are added in task order.
    pairs : "all" or int, default="all"
        ``"all"``: the complete U-statistic, O(n^2 p) time. An int ``m >= 1``: the
        incomplete U-statistic over a random design pairing every row with exactly
        ``m`` others (``sklearn_dppca._kendall.pair_design``),
        ``K_m = 2 / (n m) * sum u u^T`` over its ``n m / 2`` pairs, in O(n m p) time
        for the differences (plus ``n m p^2 / 2`` flops in DSYRK). ``m >= n - 1``
        uses all pairs. An odd ``m`` needs an even ``n``.
    random_state : None, int, numpy.random.Generator or RandomState, default=None
        Draws the pair design when ``pairs`` is an int; unused for ``"all"``. The
        design never depends on the data.

    Returns
    -------
    K : ndarray of shape (n_features, n_features)
        The spherical Kendall matrix (float64).

    Raises
    ------
    ValueError
        For non-finite or non-numeric ``X``, fewer than 2 rows, a bad ``duplicates``
        or ``pairs``, or coincident pairs with ``duplicates="raise"``.
    TypeError
        For an ``n_jobs`` or ``pairs`` of the wrong type.

    Notes
    -----
    **Sensitivity.** Let ``X`` and ``X'`` differ in row ``r`` only. With all pairs, row
    ``r`` is in ``n - 1`` of the ``n (n - 1) / 2`` terms; with ``pairs=m`` in exactly
    ``m`` of the ``n m / 2`` terms. Each term ``uu^T`` has Frobenius norm 1 (or 0 for
    an ignored coincident pair), so it moves by at most 2, and in fact by at most
    ``sqrt(2)`` since ``||uu^T - vv^T||_F^2 = 2 - 2 (u.v)^2 <= 2`` (and
    ``||uu^T - 0||_F = 1``). Hence for both

    ``||K(X) - K(X')||_F <= (2 / (n m)) * m * sqrt(2) = 2 sqrt(2) / n <= 4 / n``

    (``m = n - 1`` for all pairs): the incomplete statistic keeps the sensitivity of
    the complete one. The design is drawn independently of the data, so the bound
    holds for every design.

    **Accuracy.** Agrees with a direct loop over the pairs to about 1e-15 per entry,
    including near-duplicate rows far from the origin, mixed column scales and
    values from 1e-300 to 1e300 (how: the module docstring of
    ``sklearn_dppca._kendall``).

    **Cost.** All pairs: about ``2 n^2 p`` flops in DGEMM (symmetry halves the
    ``4 n^2 p`` of the plain Gram formulation), and beyond a few ``n x p`` copies
    one ``BLOCK_SIZE x BLOCK_SIZE`` weight block (512 KiB) per worker; never an
    ``n x n`` matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca import spherical_kendall
    >>> X = np.random.default_rng(0).standard_normal((500, 3)) * [3.0, 1.0, 0.5]
    >>> K = spherical_kendall(X)
    >>> K.shape
    (3, 3)
    >>> print(f"{np.trace(K):.6f}")
    1.000000
    >>> bool(np.allclose(spherical_kendall(10 * X + 7), K, atol=1e-12))
    True
    >>> K_64 = spherical_kendall(X, pairs=64, random_state=0)
    >>> int(np.argmax(np.diag(K_64)))
    0
    """
    _check_duplicates(duplicates)
    _check_n_jobs(n_jobs)
    m = None if isinstance(pairs, str) and pairs == "all" else _check_pairs(pairs)
    X = _check_rows(X)
    n_samples = X.shape[0]
    if m is None or m >= n_samples - 1:
        total, n_terms, coincident = _all_pairs_sum(X, n_jobs)
    else:
        design = pair_design(n_samples, m, check_generator(random_state))
        total, n_terms, coincident = _design_sum(X, design, n_jobs)
    n_coincident, first_pair = coincident
    if duplicates == "raise" and n_coincident:
        raise ValueError(
            f"duplicates='raise': {n_coincident} coincident pair(s) of rows "
            f"(x_i == x_j) among the {n_terms} pairs used; the first is rows "
            f"{first_pair[0]} and {first_pair[1]}. Use duplicates='ignore' to give "
            "them a zero term."
        )
    return total / n_terms


def _check_duplicates(duplicates):
    if not (isinstance(duplicates, str) and duplicates in _DUPLICATES_OPTIONS):
        raise ValueError(
            f"duplicates must be one of {_DUPLICATES_OPTIONS}, got {duplicates!r}."
        )


def _check_n_jobs(n_jobs):
    if n_jobs is None:
        return
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs must be None or an int, got {n_jobs!r}.")
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None, 1, 2, ... or -1.")


def _check_pairs(pairs):
    """Return the number of partners per row ``m`` for an int ``pairs``."""
    if isinstance(pairs, str):
        raise ValueError(f"pairs must be 'all' or an int >= 1, got {pairs!r}.")
    if isinstance(pairs, bool) or not isinstance(pairs, numbers.Integral):
        raise TypeError(f"pairs must be 'all' or an int >= 1, got {pairs!r}.")
    if pairs < 1:
        raise ValueError(f"pairs must be 'all' or an int >= 1, got {pairs}.")
    return int(pairs)


def _check_rows(X):
    """Validate ``X``; return it as a C-contiguous float64 array (no copy if it is)."""
    dtype = getattr(X, "dtype", None)
    if dtype is None and isinstance(X, (list, tuple)):
        dtype = np.asarray(X).dtype
    if getattr(dtype, "kind", None) in ("U", "S"):
        raise ValueError(f"X must be numeric, got an array of strings ({dtype}).")
    X = check_array(X, dtype=[np.float64, np.float32], ensure_min_samples=2,
                    input_name="X")
    return np.ascontiguousarray(X, dtype=np.float64)


def _all_pairs_sum(X, n_jobs):
    """Sum of u u^T over all pairs, the number of pairs, and the coincident pairs."""
    n_samples = X.shape[0]
    block_size = min(BLOCK_SIZE, n_samples)
    X_scaled = _scaled_by_power_of_two(X)
    order = _compact_order(X_scaled, block_size)
    X_scaled = np.ascontiguousarray(X_scaled[order])
    X_blocks = np.ascontiguousarray(X[order])
    block_starts = np.append(np.arange(0, n_samples, block_size), n_samples)
    block_starts = block_starts.astype(np.intp)
    centres = _block_medians(X_scaled, block_starts)
    tasks = _group_runs(_block_runs(len(block_starts) - 1))
    results = _run_tasks(
        _all_pairs_task,
        [(X_blocks, X_scaled, centres, block_starts, order, runs) for runs in tasks],
        n_jobs,
    )
    return _with_count(results, n_samples * (n_samples - 1) // 2)


def _with_count(results, n_terms):
    total, coincident = _combine(results)
    return total, n_terms, coincident


def _all_pairs_task(X_blocks, X_scaled, centres, block_starts, order, runs):
    """One parallel task: the partial sum over the block pairs in ``runs``.

    Module level and made of arrays only, so that joblib can pickle it (dask).
    """
    return all_pairs_partial(X_blocks, X_scaled, centres, block_starts, runs, order)


def _design_sum(X, design, n_jobs):
    """Sum of u u^T over the design pairs, their number, and the coincident pairs."""
    n_samples = X.shape[0]
    X_ring = np.ascontiguousarray(X[design.order])
    n_tasks = max(1, min(MAX_TASKS, n_samples // DESIGN_CHUNK))
    edges = np.linspace(0, n_samples, n_tasks + 1).astype(np.intp)
    results = _run_tasks(
        _design_task,
        [
            (X_ring, design.order, design.offsets, design.half_offset, start, stop)
            for start, stop in zip(edges[:-1], edges[1:])
        ],
        n_jobs,
    )
    return _with_count(results, n_samples * design.n_partners // 2)


def _design_task(X_ring, order, offsets, half_offset, start, stop):
    """One parallel task: the partial sum over the pairs owned by ring positions
    ``start <= t < stop`` (module level, so that joblib can pickle it)."""
    return design_partial(X_ring, order, offsets, int(half_offset), int(start),
                          int(stop))


def _run_tasks(function, task_args, n_jobs):
    """Results of ``function(*args)`` for every task, in task order.

    BLAS is held to one thread: the kernel's DGEMMs are small (one block pair each)
    and multi-threading them costs more in synchronisation than it gains (ten times
    slower on two cores); parallelism comes from the tasks instead.
    """
    with _blas_controller().limit(limits=1, user_api="blas"):
        if joblib.effective_n_jobs(n_jobs) == 1:
            return [function(*args) for args in task_args]
        return joblib.Parallel(n_jobs=n_jobs, prefer="threads")(
            joblib.delayed(function)(*args) for args in task_args
        )


@functools.cache
def _blas_controller():
    """The BLAS libraries loaded in this process (found once: the search is slow)."""
    return ThreadpoolController()


def _combine(results):
    """Add the partial sums in task order; merge the coincident-pair reports."""
    total = np.zeros_like(results[0][0])
    n_coincident = 0
    first_pair = None
    for partial, count, pair in results:
        total += partial
        n_coincident += count
        if count and (first_pair is None or tuple(pair) < first_pair):
            first_pair = tuple(int(index) for index in pair)
    return total, (n_coincident, first_pair)


def _scaled_by_power_of_two(X):
    """``X`` times the power of two that puts ``max |X|`` in [0.5, 1).

    Exact except where entries far below the maximum underflow; the kernel sends the
    pairs that this could affect to its exact path, which reads the original rows.
    """
    largest = float(np.max(np.abs(X)))
    if largest == 0.0:
        return X.copy()
    _, exponent = np.frexp(largest)
    with np.errstate(under="ignore"):
        return np.ldexp(X, -int(exponent))


def _compact_order(X, block_size):
    """Row order in which each run of ``block_size`` consecutive rows is compact.

    Recursive k-d splits: a range of rows is cut, at a multiple of ``block_size``
    rows, by a partial sort along its widest coordinate, until ranges are single
    blocks. Compact blocks keep the Gram path's centred norms close to the pair
    distances (clustered data, offsets), so few pairs need the exact path.
    """
    n_samples = X.shape[0]
    order = np.arange(n_samples, dtype=np.intp)
    pending = [(0, n_samples)]
    while pending:
        start, stop = pending.pop()
        n_blocks = -(-(stop - start) // block_size)
        if n_blocks <= 1:
            continue
        left_size = block_size * (n_blocks // 2)
        rows = order[start:stop]
        # The widest coordinate of an evenly spaced subsample is good enough to
        # split on, and saves gathering every coordinate of every row.
        sample = X[rows[:: max(1, len(rows) // 1024)]]
        widest = int(np.argmax(sample.max(axis=0) - sample.min(axis=0)))
        split = np.argpartition(X[rows, widest], left_size)
        order[start:stop] = rows[split]
        pending.append((start + left_size, stop))
        pending.append((start, start + left_size))
    return order


def _block_medians(X, block_starts):
    """Coordinatewise median of every block of rows, shape (n_blocks, p)."""
    return np.ascontiguousarray(
        [np.median(X[start:stop], axis=0)
         for start, stop in zip(block_starts[:-1], block_starts[1:])],
        dtype=np.float64,
    ).reshape(len(block_starts) - 1, X.shape[1])


def _block_runs(n_blocks):
    """All block pairs I <= J as runs ``(I, J0, J1)`` of at most RUN_LENGTH pairs."""
    runs = [
        (block_i, first, min(first + RUN_LENGTH, n_blocks))
        for block_i in range(n_blocks)
        for first in range(block_i, n_blocks, RUN_LENGTH)
    ]
    return np.asarray(runs, dtype=np.intp).reshape(-1, 3)


def _group_runs(runs):
    """Split the runs, in order, into at most about MAX_TASKS tasks of similar work."""
    work = runs[:, 2] - runs[:, 1]
    target = max(1, -(-int(work.sum()) // MAX_TASKS))
    cut_after = np.flatnonzero(np.diff(np.cumsum(work) // target) > 0) + 1
    return [np.ascontiguousarray(group) for group in np.split(runs, cut_after)]
