"""The spherical Kendall matrix and the floored pair scatter: input checks, pair
designs and parallel dispatch.

The numerical work happens in :mod:`sklearn_dppca._kendall_kernel`. This module
prepares its inputs, splits the pairs into tasks, runs the tasks through joblib and
adds the partial sums in a fixed order. Both public functions share one code path:
:func:`_pair_sum` sums ``d d^T / max(||d||^2, floor)`` over pairs, and
:func:`spherical_kendall` is its mean with ``floor = 0`` (the tests' floored
scatter, ``tests/_kendall_support.py``, is its mean at any floor).

Exactness of the all-pairs path. The kernel gets squared distances from a Gram
product, ``|a|^2 + |b|^2 - 2 a.b``, and adds the pair terms through
``A^T diag(W 1) A + B^T diag(W^T 1) B - A^T W B - (A^T W B)^T``. Both steps lose
about ``eps * S / D2`` relative accuracy on a pair, where ``S = |a|^2 + |b|^2`` and
``D2 = |a - b|^2``. Three things keep that small:

* ``X`` is first multiplied by an exact power of two so that ``max |x| < 1``; K is
  scale invariant and nothing overflows in the Gram products.
* The rows are put in k-d order (recursive splits, at whole blocks, along the
  widest coordinate) so each block of ``_BLOCK_SIZE`` rows is spatially compact, and each
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

Exactness of the pair-design path (``pairs=m``). The design pairs ring position
``t`` with ``t + o`` (``o = 1, ..., m // 2``, and ``n / 2`` for an odd ``m``), so
the pairs are band diagonals of the ring. With the rows ``a`` prescaled as above
(each task by the power of two of the rows it reads and the centre) and centred on
the median of a random subset of them, and the weights ``w`` of the pairs,

``sum_pairs w d d^T = (M + M^T) / 2``, ``M = sum_t a_t (c_t a_t - 2 g_t)^T``,

where ``c_t`` sums the weights of the pairs at ``t`` and ``g_t`` the ``w a_s`` of the
pairs ``(t, s)`` that ``t`` owns: this is ``A^T L A`` for the weighted Laplacian
``L`` of the design. The weights come from band dot products (Gram distances) and
``g`` from a band gather, O(p) per pair, and ``M`` from one ``p x p`` accumulation
per run of ring positions (DGEMM, or a hand-written loop with AVX-512), O(p^2) per
row, where the direct loop spent O(p^2) per pair. A pair's
share of ``M`` is ``w (|a_t|^2 + |a_s|^2 - 2 a_t.a_s)``-sized terms, so it carries
the same ``eps * S / D2`` relative error as in the all-pairs kernel, and the same
test sends every pair with ``D2 < S / 16 + 2**-900`` to the exact path (which also
finds the coincident pairs): the kept pairs' terms are accurate to a few times
``16 eps`` relative. Summed over pairs, the error is at most a small multiple of
``eps`` times the sum of the terms' norms, the scale of the tests' comparison (the
correctly rounded sum of the per-pair terms: measured about 1e-16 relative to the
largest entry, 1e-14 demanded).

The floor changes none of this: a kept pair's weight ``1 / max(D2, floor)`` has the
relative error of ``D2`` (or none), and its term's error relative to the term is still
``eps * S / D2``. The floor travels in two forms. The exact path gets it as
``mantissa * 2**exponent`` in the units of ``X`` and compares it with each pair's
rescaled ``||d||^2`` through ``ldexp``, so neither can overflow or underflow. The Gram
path gets it in the prescaled units (``floor * 2**(-2 e)`` for the prescaling factor
``2**-e``), where every squared distance is below ``4 p``. A larger floor (also one
whose scaled value would overflow) gives every pair the same weight ``1 / floor``;
the kernel then runs with the floor ``4 p * 2**(2 e)`` in its place (still above
every squared distance, so the sum is the same up to the constant factor) and the
sum is multiplied by ``4 p * 2**(2 e) / floor``, computed from mantissas and
exponents. A scaled floor that underflows is below ``2**-1022``, while every pair the
Gram path keeps has ``D2 >= 2**-900``: it changes none of their weights, and the
exact path never sees the scaled value.

Rows of at most ``DPPCA_NARROW = 4`` coordinates (the scree's projected pass, at
most four components; a table of four columns or fewer) take no Gram form: each
design pair's difference is taken directly, on rows prescaled but not centred, so
it is exact to one rounding per coordinate whatever the rows' distance from each
other or from the origin, and its term ``w d d^T`` goes into ``p (p + 1) / 2``
running sums per vector lane. No precision test is needed; only pairs with
``D2 < 2**-900`` in the prescaled units (coincident ones, or squares near the
subnormal range) take the exact path. In so few dimensions the Gram path sent
many pairs there (a pair close against its distance from the centre is common:
3% at ``p = 2``, 12% at ``p = 1``), and its accumulation saves nothing.

A clipped total rides on the design path (``trace_floor = F > 0``): the pass also
sums ``min(D2 / F, 1)`` over its pairs, the scree's total variance clipped at
``F / 2`` in units of its bound, so that the total needs no pass of its own (it
needs only the trace of its clipped scatter). The Gram path adds ``min(D2, F)``
in the prescaled units for the pairs it keeps (a few vector operations per pair,
from the squared distances it has computed for the weights) and divides by the
scaled ``F`` once per task; the exact path adds each of its pairs' ratio through
``ldexp``, as for the floor. A scaled ``F`` at or below ``2**-900`` clips every
kept pair (each then adds 1); one that overflows clips none, and their ratios,
below ``2**-1000`` each, add 0. The kept pairs' ratios carry the relative error of
their ``D2`` (a few times ``16 eps``).
"""

import functools
import math
from typing import NamedTuple

import joblib
import numpy as np
from threadpoolctl import ThreadpoolController

from ._kendall_kernel import all_pairs_partial, design_partial
from ._pair_design import design_pairs
from ._validation import (
    Callable,
    Interval,
    check_generator,
    check_n_jobs,
    check_pairs,
    check_param,
    check_rows,
)

# Rows per block of the all-pairs kernel: the b x b weight block (512 KiB) stays in
# a core's L2 cache while the DGEMM calls still run at full speed.
_BLOCK_SIZE = 256
# Block pairs (I, J) sharing one accumulation of W_IJ B_J: bounds how many terms any
# accumulated entry sums, and gives the scheduler pieces of similar size.
_RUN_LENGTH = 16
# At most this many parallel tasks; the split depends on the data size only, never on
# n_jobs, so every n_jobs adds the same partial sums in the same order.
_MAX_TASKS = 128
# Ring positions per task of the pair-design kernel (at least).
_DESIGN_CHUNK = 2048
# Rows of the ring whose coordinatewise median centres the design kernel (odd).
_CENTRE_ROWS = 255


class _PairDesign(NamedTuple):
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


def random_pairs(n_samples, rng):
    """A data-independent matching: rows ``first[i]`` and ``second[i]`` form pair i.

    Each row is in at most one pair, so one changed row changes one paired value.
    """
    order = rng.permutation(n_samples)
    n_pairs = n_samples // 2
    return order[:n_pairs], order[n_pairs:2 * n_pairs]


def check_pair_design(n_samples, m):
    """The partners per row an ``m``-partner design of ``n_samples`` rows uses
    (``m`` capped at ``n - 1``), or a ValueError naming ``pairs``.

    Public (``n`` and ``m`` only): the fits call it before their budget is
    charged, so the refusal never comes after the spend (see :func:`_pair_design`).
    """
    n_samples = int(n_samples)
    if n_samples < 2:
        raise ValueError(f"A pair design needs n_samples >= 2, got {n_samples}.")
    m = min(check_param(m, [Interval("int", 1, None)], "m"), n_samples - 1)
    if m % 2 == 1 and n_samples % 2 == 1:
        raise ValueError(
            f"pairs={m} is odd and the number of rows n={n_samples} is odd: an odd "
            "number of partners per row needs an even n (each row's last partner is "
            f"its antipode). Use an even pairs, e.g. pairs={m + 1}."
        )
    return m


def _pair_design(n_samples, m, rng):
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
    design : _PairDesign
        ``design.partners()`` and ``design.pairs()`` list the pairs.

    Raises
    ------
    ValueError
        If ``n_samples`` and ``m < n_samples - 1`` are both odd: no design then gives
        every row the same number of partners.
    """
    n_samples, m = int(n_samples), check_pair_design(n_samples, m)
    order = rng.permutation(n_samples).astype(np.intp)
    offsets = np.arange(1, m // 2 + 1, dtype=np.intp)
    half_offset = n_samples // 2 if m % 2 == 1 else 0
    return _PairDesign(order=order, offsets=offsets, half_offset=half_offset)


def spherical_kendall(X, *, n_jobs=None, pairs="all", random_state=None,
                      progress=None):
    """Spherical Kendall matrix of the rows of ``X``.

    ``K = 2 / (n (n - 1)) * sum_{i < j} u_ij u_ij^T`` with the unit differences
    ``u_ij = (x_i - x_j) / ||x_i - x_j||``. K is symmetric, positive semi-definite,
    has trace 1 (without coincident rows), and does not change when ``X`` is
    translated or multiplied by a positive number. A coincident pair
    (``x_i == x_j``) has no direction and adds a zero term, so the trace is the
    share of pairs that are not coincident. Repeated rows are never an error:
    whether the computation succeeds does not depend on ties in the data.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite numeric data, float64 or float32 (computed in float64), ``n >= 2``.
        Never modified.
    n_jobs : int, default=None
        Parallel tasks, through :class:`joblib.Parallel` with threads (the kernel
        releases the GIL). ``None`` means 1 unless in a
        :func:`joblib.parallel_backend` context, e.g. ``"dask"``. The result is the
        same for every ``n_jobs``: the tasks do not depend on it, each runs BLAS on
        one thread, and their partial sums are added in task order.
    pairs : "all" or int, default="all"
        ``"all"``: the complete U-statistic, O(n^2 p) time. An int ``m >= 1``: the
        incomplete U-statistic over a random design pairing every row with exactly
        ``m`` others (``sklearn_dppca._kendall._pair_design``),
        ``K_m = 2 / (n m) * sum u u^T`` over its ``n m / 2`` pairs: about
        ``2 n m p`` flops for the weights and the weighted Laplacian of the design,
        plus ``2 n p^2`` in the ``p x p`` accumulation (module docstring of ``sklearn_dppca._kendall``).
        ``m >= n - 1`` uses all pairs. An odd ``m`` needs an even ``n``.
    random_state : None, int, numpy.random.Generator or RandomState, default=None
        Draws the pair design when ``pairs`` is an int; unused for ``"all"``. The
        design never depends on the data.
    progress : callable, default=None
        Called as ``progress(pairs_done, pairs_total)`` after each parallel task, from
        the calling thread (never from the compiled kernel, which runs without the
        GIL); ``pairs_done`` grows to ``pairs_total`` (the number of pairs summed) at
        the last call. About ``_MAX_TASKS = 128`` calls for large inputs, one for small
        ones. Keep it cheap: tasks wait for it. Exceptions it raises stop the
        computation.

    Returns
    -------
    K : ndarray of shape (n_features, n_features)
        The spherical Kendall matrix (float64).

    Raises
    ------
    ValueError
        For non-finite or non-numeric ``X``, fewer than 2 rows, or a bad
        ``pairs``; the message states the rule and quotes no value of ``X``.
    TypeError
        For an ``n_jobs`` or ``pairs`` of the wrong type.

    See Also
    --------
    DPKendallDirections : Its noisy release and eigenvectors, the private directions.

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
    one ``_BLOCK_SIZE x _BLOCK_SIZE`` weight block (512 KiB) per worker; never an
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
    total, n_terms, *_ = _pair_sum(X, 0.0, pairs, random_state, n_jobs, progress)
    return total / n_terms


def _pair_sum(X, floor, pairs, random_state, n_jobs, progress, trace_floor=0.0):
    """Validate, draw the design if any, and sum the floored terms.

    Returns the sum, the number of pairs, the number of coincident pairs (zero
    terms) and, for a design, the clipped total riding on its pairs at
    ``trace_floor`` (:func:`_design_sum`; None for all pairs).
    """
    check_n_jobs(n_jobs)
    pairs = check_pairs(pairs)
    check_param(progress, [None, Callable()], "progress")
    X = check_rows(X)
    n_samples = X.shape[0]
    pairs = design_pairs(pairs, (n_samples,))
    m = None if pairs == "all" else pairs
    if m is None or m >= n_samples - 1:
        return _all_pairs_sum(X, floor, n_jobs, progress) + (None,)
    design = _pair_design(n_samples, m, check_generator(random_state))
    return _design_sum(X, design, floor, n_jobs, progress, trace_floor)


def _all_pairs_sum(X, floor, n_jobs, progress):
    """Sum of the floored terms over all pairs, the number of pairs, and the
    coincident pairs."""
    n_samples = X.shape[0]
    block_size = min(_BLOCK_SIZE, n_samples)
    X_scaled, exponent = _scaled_by_power_of_two(X)
    floor_mantissa, floor_exponent, scaled_floor, factor = _floor_parts(
        floor, exponent, X.shape[1])
    order = _compact_order(X_scaled, block_size)
    X_scaled = np.ascontiguousarray(X_scaled[order])
    X_blocks = np.ascontiguousarray(X[order])
    block_starts = np.append(np.arange(0, n_samples, block_size), n_samples)
    block_starts = block_starts.astype(np.intp)
    centres = _block_medians(X_scaled, block_starts)
    tasks = _group_runs(_block_runs(len(block_starts) - 1))
    results = _run_tasks(
        _all_pairs_task,
        [(X_blocks, X_scaled, centres, block_starts, runs, floor_mantissa,
          floor_exponent, scaled_floor) for runs in tasks],
        n_jobs,
        progress,
        [_pairs_in_runs(runs, block_starts) for runs in tasks],
    )
    total, n_terms, coincident = _with_count(results, n_samples * (n_samples - 1) // 2)
    if factor != 1.0:
        total = total * factor
    return total, n_terms, coincident


def _floor_parts(floor, exponent, n_features):
    """The floor as the kernel takes it, for rows prescaled by ``2**-exponent``.

    Returns ``(mantissa, floor_exponent, scaled_floor, factor)``: the floor used is
    ``mantissa * 2**floor_exponent`` in the units of ``X`` (``scaled_floor`` in the
    prescaled units) and the kernel's sum is to be multiplied by ``factor``.
    Prescaled rows have ``max |x| < 1``, so every squared distance is below
    ``cap = 4 p``; a floor above ``cap`` (in prescaled units) gives every pair the
    weight ``1 / floor``, and is replaced by ``cap`` with ``factor = cap / floor``.
    Mantissas and integer exponents keep all of this free of overflow (Python's
    ``math.ldexp`` only underflows, to a subnormal or 0, where the true value is
    that small).
    """
    mantissa, floor_exponent = math.frexp(floor)
    cap_mantissa, cap_exponent = math.frexp(4.0 * n_features)
    cap_exponent += 2 * exponent
    if mantissa == 0.0 or (floor_exponent, mantissa) <= (cap_exponent, cap_mantissa):
        return (mantissa, floor_exponent,
                math.ldexp(mantissa, floor_exponent - 2 * exponent), 1.0)
    factor = math.ldexp(cap_mantissa / mantissa, cap_exponent - floor_exponent)
    return cap_mantissa, cap_exponent, 4.0 * n_features, factor


def _pairs_in_runs(runs, block_starts):
    """Number of pairs in the block pairs of ``runs`` (for progress reports)."""
    sizes = np.diff(block_starts)
    cumulative = np.concatenate([[0], np.cumsum(sizes)])
    count = 0
    for block_i, first, stop in runs:
        size_i = int(sizes[block_i])
        count += size_i * int(cumulative[stop] - cumulative[first])
        if first == block_i:  # the diagonal block pair counts i < j only
            count -= size_i * size_i - size_i * (size_i - 1) // 2
    return count


def _with_count(results, n_terms):
    total, coincident = _combine(results)
    return total, n_terms, coincident


def _all_pairs_task(X_blocks, X_scaled, centres, block_starts, runs,
                    floor_mantissa, floor_exponent, scaled_floor):
    """One parallel task: the partial sum over the block pairs in ``runs``.

    Module level and made of arrays and numbers only, so that joblib can pickle it
    (dask). BLAS is held to one thread here too, for workers in other processes.
    """
    with _blas_controller().limit(limits=1, user_api="blas"):
        return all_pairs_partial(X_blocks, X_scaled, centres, block_starts, runs,
                                 floor_mantissa, floor_exponent, scaled_floor)


def _design_sum(X, design, floor, n_jobs, progress, trace_floor=0.0):
    """Sum of the floored terms over the design pairs, their number, the
    coincident pairs, and the clipped total riding on the same pairs: the sum of
    ``min(||d||^2 / trace_floor, 1)`` (:func:`~._kendall_kernel.design_partial`).

    Each task prescales the rows it reads by its own power of two (no pass over the
    whole of ``X`` here), so the tasks take the floor as it is.
    """
    n_samples = X.shape[0]
    X = np.ascontiguousarray(X, dtype=np.float64)
    floor_mantissa, floor_exponent = math.frexp(floor)
    trace_mantissa, trace_exponent = math.frexp(trace_floor)
    centre = _ring_centre(X, design.order)
    n_tasks = max(1, min(_MAX_TASKS, n_samples // _DESIGN_CHUNK))
    edges = np.linspace(0, n_samples, n_tasks + 1).astype(np.intp)
    half = design.half_offset
    results = _run_tasks(
        _design_task,
        [
            (X, design.order, design.offsets, half, start, stop, centre,
             floor_mantissa, floor_exponent, trace_mantissa, trace_exponent)
            for start, stop in zip(edges[:-1], edges[1:])
        ],
        n_jobs,
        progress,
        [int(stop - start) * len(design.offsets)
         + (max(0, min(int(stop), half) - int(start)) if half else 0)
         for start, stop in zip(edges[:-1], edges[1:])],
    )
    return _with_count([result[:2] for result in results],
                       n_samples * design.n_partners // 2) \
        + (math.fsum(share for _, _, share in results),)


def _design_task(X, order, offsets, half_offset, start, stop, centre, floor_mantissa,
                 floor_exponent, trace_mantissa, trace_exponent):
    """One parallel task: the partial sum over the pairs owned by ring positions
    ``start <= t < stop`` (module level, so that joblib can pickle it)."""
    return design_partial(X, order, offsets, int(half_offset), int(start), int(stop),
                          centre, floor_mantissa, floor_exponent, trace_mantissa,
                          trace_exponent)


def _ring_centre(X, order):
    """Centre for the design kernel: coordinatewise median of the first (at most
    255) rows of the ring, a uniformly random subset, in the units of ``X``.

    Any centre gives the same sum in exact arithmetic; one inside the bulk of the
    rows keeps their norms comparable to the pair distances, so that few pairs need
    the exact path. The number of rows is odd, so that each median is one of the
    values (no averaging: nothing to round or overflow).
    """
    size = min(len(order), _CENTRE_ROWS)
    size -= 1 - size % 2
    return np.ascontiguousarray(np.median(X[order[:size]], axis=0), dtype=np.float64)


def _indexed_task(function, index, *args):
    """``(index, function(*args))``: lets results that arrive out of order be put
    back in task order."""
    return index, function(*args)


def _run_tasks(function, task_args, n_jobs, progress=None, task_pairs=None):
    """Results of ``function(*args)`` for every task, in task order.

    BLAS is held to one thread: the kernel's DGEMMs are small (one block pair each)
    and multi-threading them costs more in synchronisation than it gains (ten times
    slower on two cores); parallelism comes from the tasks instead.

    With ``progress``, ``progress(done, total)`` is called from this thread after each
    task (in the order tasks finish), ``done`` summing ``task_pairs`` of the finished
    tasks. The results are still returned, and so added, in task order.
    """
    if progress is None:
        def report(index):
            pass
    else:
        total = int(sum(task_pairs))
        done = 0

        def report(index):
            nonlocal done
            done += int(task_pairs[index])
            progress(done, total)

    with _blas_controller().limit(limits=1, user_api="blas"):
        if joblib.effective_n_jobs(n_jobs) == 1:
            results = []
            for index, args in enumerate(task_args):
                results.append(function(*args))
                report(index)
            return results
        results = [None] * len(task_args)
        finished = joblib.Parallel(n_jobs=n_jobs, prefer="threads",
                                   return_as="generator_unordered")(
            joblib.delayed(_indexed_task)(function, index, *args)
            for index, args in enumerate(task_args)
        )
        for index, result in finished:
            results[index] = result
            report(index)
        return results


@functools.cache
def _blas_controller():
    """The BLAS libraries loaded in this process (found once: the search is slow)."""
    return ThreadpoolController()


def _combine(results):
    """Add the partial sums in task order, and the coincident pairs' counts."""
    total = np.zeros_like(results[0][0])
    n_coincident = 0
    for partial, count in results:
        total += partial
        n_coincident += count
    return total, n_coincident


def _scaled_by_power_of_two(X):
    """``(X * 2**-e, e)`` for the power of two that puts ``max |X|`` in [0.5, 1).

    Exact except where entries far below the maximum underflow; the kernel sends the
    pairs that this could affect to its exact path, which reads the original rows.
    ``e = 0`` when ``X`` is all zeros.
    """
    exponent = _prescaling_exponent(X)
    if exponent == 0:
        return X.copy(), 0
    with np.errstate(under="ignore"):
        return np.ldexp(X, -exponent), exponent


def _prescaling_exponent(X):
    """The ``e`` with ``max |X| * 2**-e`` in [0.5, 1) (0 when ``X`` is all zeros)."""
    largest = max(float(np.max(X)), -float(np.min(X)))
    return math.frexp(largest)[1]


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
    """All block pairs I <= J as runs ``(I, J0, J1)`` of at most _RUN_LENGTH pairs."""
    runs = [
        (block_i, first, min(first + _RUN_LENGTH, n_blocks))
        for block_i in range(n_blocks)
        for first in range(block_i, n_blocks, _RUN_LENGTH)
    ]
    return np.asarray(runs, dtype=np.intp).reshape(-1, 3)


def _group_runs(runs):
    """Split the runs, in order, into at most about _MAX_TASKS tasks of similar work."""
    work = runs[:, 2] - runs[:, 1]
    target = max(1, -(-int(work.sum()) // _MAX_TASKS))
    cut_after = np.flatnonzero(np.diff(np.cumsum(work) // target) > 0) + 1
    return [np.ascontiguousarray(group) for group in np.split(runs, cut_after)]
