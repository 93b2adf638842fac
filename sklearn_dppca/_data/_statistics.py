"""Every private statistic a fit releases, declared once: its per-block part, how
the parts combine, and its sensitivity (with the rounding allowance of that
computation). :mod:`~sklearn_dppca._data._rows` runs the per-block parts over the row
blocks of a fit; the algorithms in :mod:`~sklearn_dppca._algorithms` give the
combined values to their mechanism.

========================  ====================================  ==========================
statistic                 per block, combined by                 sensitivity, mechanism
========================  ====================================  ==========================
floored pair sum          sum of ``d d^T / max(|d|^2, f)`` over  Frobenius ``2 sqrt(2) / n``
(Kendall matrices, norm-  all pairs or an ``m``-partner design   (tight; per term at most
clipped scatters)         within the block; sums added, term     ``sqrt(2)``), symmetric or
                          counts added                           vector Gaussian
matching counts           counts below a public grid of one      1 per count (a row is in
(clip bounds, radius,     value per matched pair within the      at most one pair): the
spreads' bounds)          block; counts added                    exponential search
clipped pair sums         per column, sum over pairs within the  ``within_block`` below,
(spreads, per-component   block of ``min((x_a - x_b)^2 / 2, C)``;  L2 Gaussian
clipping)                 sums added
row counts (score frame)  counts below a public grid of one      1 per count: the
                          value per row; counts added            exponential search
histogram counts          exact cell counts; added               1 per cell (one row moves
                                                                 one count), discrete noise
centred scatter           sum of ``z z^T`` over the rows,        Frobenius ``sqrt(2) / n``,
(radial covariance)       ``z = (x - m) / R`` about the          symmetric Gaussian
                          released mean ``m``, ``R`` the
                          farthest the box lies from it;
                          sums added
========================  ====================================  ==========================

The norm-clipped scatter of the scree is a floored pair sum of the rows
projected on any public matrix: the k released directions (``clip="norm"``), or
those directions each divided by its scale from the released Kendall matrix
(``clip="scaled"``). Its diagonal, a vector of non-negative terms summing to at
most the bound ``C`` per pair, moves by at most ``2 sqrt(2) C / n`` in L2 (the
argument of ``_algorithms._variances._norm_clipped_variances`` holds for any
linear map of the rows); its bound's matching counts the scaled coordinates'
``||y||^2 / 2``, one count per row as for every matching.

Every design and matching is drawn within a block from a seed derived from the
fit's random state, the statistic's name (its ledger step) and the block's
index (:func:`_block_generator`): nothing depends on the data or on the order in
which a fit asks for its statistics.
"""

import math
import zlib

import numpy as np

from .._kendall import _pair_design, _pair_sum, random_pairs
from .._kendall_kernel import column_max_abs, matched_squared_distances, ring_clipped_sum
from .._validation import MAX_ABS_VALUE
from ..privacy._histograms import histogram_counts
from ..privacy._means import clipped_pair_mean
from ..privacy._quantiles import (
    _two_sided_values,
    even_counts,
    geometric_counts,
    scale_free_counts,
)

# The names of the statistics whose designs or matchings are drawn: with the
# fit's root seed they seed them (the same statistic of two estimators, e.g. the
# directions of DPKendallDirections and of DPScree, reads the same pairs).
KENDALL_MATRIX = "kendall matrix"          # spherical or clipped, floored pair sum
RADIUS = "clip radius"                     # matching of the clipped Kendall radius
SPREAD_BOUNDS = "spread clip bounds"       # matching of the spreads' bounds
SCREE_BOUND = "scree clip bound"           # matching of the scree's norm bound
SCREE_COMPONENT_BOUNDS = "scree component clip bounds"
SCREE_SCATTER = "scree scatter"            # design of the norm-clipped scatter
SCREE_COMPONENT_SCATTER = "scree component scatter"   # designs of the per-PC ones
SCREE_VALUES = "scree matched values"      # matching of the 1-D mean estimators
TOTAL_BOUND = "total variance clip bound"
TOTAL_SCATTER = "total variance scatter"
TWO_SIDED = "two-sided counts"             # the score frame's first searches

#: Roundings of a clipped pair mean as computed (:func:`clipped_pair_mean`'s
#: relative bound ``2**-53 + 2**-70``, counted as one ``2**-52``), the product with
#: the block's pair count, the division by all pairs and by the bound: a coordinate
#: in ``[0, 1]`` is within ``(n_blocks + 3) 2**-53`` of its exact value, one more
#: rounding per block for the sum over the blocks.
_ROUNDINGS_OUTSIDE_BLOCKS = 3


def _block_generator(root, name, index):
    """The generator of block ``index``'s design or matching for the statistic
    ``name``: seeded by the fit's root seed, the name and the index only."""
    return np.random.default_rng([int(root), zlib.crc32(name.encode()), int(index)])


def _within_block_sensitivity(sizes):
    """How much one row moves a mean over all pairs within the blocks, per unit of
    the terms' range: it is in ``n_b - 1`` of the ``sum_b C(n_b, 2)`` pairs
    (``2 / n`` for one block or equal blocks, as for all pairs of the rows)."""
    n_pairs = sum(size * (size - 1) // 2 for size in sizes)
    return (max(sizes) - 1) / n_pairs


def design_clipped_sensitivity(partners, n_terms, n_coordinates):
    """L2 sensitivity of a vector of clipped pair means over a design, each term
    divided by its bound (in ``[0, 1]``), as computed: a row is in at most
    ``partners`` of the ``n_terms`` pairs, so it moves each coordinate by at
    most ``partners / n_terms`` (``2 / n`` for one block); a sum of
    ``n_terms`` terms of at most 1, in any order, is within ``n_terms``
    rounding units (``2**-53``) of exact per term, and the terms, the divisions
    and the mean a few more, so two neighbours' computed means differ by at
    most that plus ``(n_terms + 8) 2**-52``."""
    return math.sqrt(n_coordinates) * (partners / n_terms + (n_terms + 8) * 2.0**-52)


def clipped_sum_sensitivity(sizes, n_coordinates):
    """L2 sensitivity of the vector of clipped pair means, each divided by its bound
    (coordinates in ``[0, 1]``), as computed.

    Exactly, one row moves each coordinate by at most
    :func:`_within_block_sensitivity`. As computed, each coordinate is within
    ``(n_blocks + 3) 2**-53`` of its exact value (see
    :data:`_ROUNDINGS_OUTSIDE_BLOCKS`), so two neighbours' computed coordinates
    differ by at most that bound plus ``(n_blocks + 3) 2**-52``.
    """
    allowance = (len(sizes) + _ROUNDINGS_OUTSIDE_BLOCKS) * 2.0**-52
    return math.sqrt(n_coordinates) * (_within_block_sensitivity(sizes) + allowance)


# -- per-block parts: arrays and numbers in, partial statistics out ------------------
# (module level, so that Dask can ship them to workers)


def _float_rows(block):
    return np.ascontiguousarray(block, dtype=np.float64)


def view_rows(block, view):
    """The block's rows as float64, clipped to the declared ranges ``view[0]``
    (shape (2, p): each column's low and high), divided by ``view[1]`` and
    projected on the rows of ``view[2]`` (any of them None: skipped).

    Clipping is to public ranges, so it is a function of the row alone: one
    changed row still changes one row of the view, and every row of the view
    lies in the box (:func:`view_box`), whatever the data.

    A divided row is clamped to ``+-2**500``: a column divided by a tiny released
    spread may leave the data domain (or overflow), and every statistic must stay
    defined after the charge. Clamping is a function of the row alone, so one
    changed row still changes one row of the view.
    """
    box, divisor, matrix = view
    rows = _float_rows(block)
    if box is not None:
        rows = np.clip(rows, box[0], box[1])
    if divisor is not None:
        with np.errstate(over="ignore"):
            rows = np.clip(rows / divisor, -MAX_ABS_VALUE, MAX_ABS_VALUE)
    return rows if matrix is None else rows @ matrix.T


def view_box(view):
    """The box every row of the view lies in before its projection: the declared
    ranges ``view[0]`` divided by ``view[1]`` and clamped to ``+-2**500`` as
    :func:`view_rows` divides and clamps the rows (both maps are monotone, so a
    row inside the ranges lands inside the mapped ranges); None without ranges.
    Returns ``(low, high)``, two arrays of shape (p,)."""
    box, divisor, _ = view
    if box is None:
        return None
    low, high = box[0], box[1]
    if divisor is not None:
        with np.errstate(over="ignore"):
            low = np.clip(low / divisor, -MAX_ABS_VALUE, MAX_ABS_VALUE)
            high = np.clip(high / divisor, -MAX_ABS_VALUE, MAX_ABS_VALUE)
    return low.copy(), high.copy()


def block_pair_sum(X, pairs, root, name, index, floor, n_jobs=None, progress=None,
                   trace_floor=0.0):
    """The floored pair sum over all pairs (``pairs="all"``) or an ``m``-partner
    design of this block's rows, its number of terms and, for a design, the
    clipped total riding on its pairs at ``trace_floor`` (the sum of
    ``min(||d||^2 / trace_floor, 1)``, :func:`~sklearn_dppca._kendall._design_sum`;
    None for all pairs)."""
    total, n_terms, _, ride = _pair_sum(X, floor, pairs,
                                        _block_generator(root, name, index), n_jobs,
                                        progress, trace_floor)
    return total, n_terms, ride


def _matched_differences(X, root, name, index):
    first, second = random_pairs(X.shape[0], _block_generator(root, name, index))
    # (np.take gathers rows about three times faster than fancy indexing: the
    # same values)
    with np.errstate(over="ignore"):   # beyond the float range: above every grid point
        return np.take(X, first, axis=0) - np.take(X, second, axis=0), first.size


def block_matching_counts(X, root, name, index, factor):
    """Counts below the scale-free grid of ``factor ||x_a - x_b||^2`` over a random
    matching of this block's rows, and the number of pairs (the squared norms
    in one compiled pass, no differences kept)."""
    first, second = random_pairs(X.shape[0], _block_generator(root, name, index))
    squares = matched_squared_distances(
        np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(first, np.intp),
        np.ascontiguousarray(second, np.intp))
    with np.errstate(over="ignore"):
        values = squares * factor
    return scale_free_counts(values), first.size


def block_column_matching_counts(X, root, name, index):
    """Per column, counts below the scale-free grid of ``(x_aj - x_bj)^2 / 2`` over a
    random matching of this block's rows; and the number of pairs."""
    differences, half = _matched_differences(X, root, name, index)
    with np.errstate(over="ignore"):
        values = differences**2 / 2
    return np.array([scale_free_counts(values[:, j])
                     for j in range(X.shape[1])]), half


def block_matched_values(X, root, name, index):
    """``(x_aj - x_bj)^2 / 2`` over a random matching of this block's rows, shape
    (pairs, columns): the values of the one-dimensional mean estimators."""
    differences, _ = _matched_differences(X, root, name, index)
    with np.errstate(over="ignore"):
        return differences**2 / 2


def block_clipped_pair_sums(X, bounds):
    """Per column, the sum of ``min((x_aj - x_bj)^2 / 2, C_j)`` over all pairs of this
    block's rows (exact to a few roundings, O(n log n) a column)."""
    n_pairs = X.shape[0] * (X.shape[0] - 1) // 2
    if n_pairs == 0:
        return np.zeros(X.shape[1])
    return np.array([clipped_pair_mean(X[:, j], bounds[j]) for j in range(X.shape[1])]) \
        * n_pairs


def block_design_clipped_sums(X, root, name, index, bounds, partners):
    """Per column, the sum of ``min((x_aj - x_bj)^2 / 2, C_j) / C_j`` over the
    ``partners``-partner ring design of this block's rows (seeded by ``name``;
    all pairs, exactly, when the block has ``partners + 1`` rows or fewer),
    and the number of pairs.

    The rows are put in ring order once; the pairs at forward offset ``o`` are
    then the rows against the rows ``o`` further on (wrapping round), and, for
    an odd ``partners``, the first half against the second: two contiguous
    runs per offset, summed by one compiled loop per column
    (:func:`~sklearn_dppca._kendall_kernel.ring_clipped_sum`; a third of the
    time of four NumPy passes per run). A term is at most 1, so a sum of ``N``
    of them, in any order, is within ``N`` rounding units of each term
    (:func:`design_clipped_sensitivity`)."""
    n_rows = X.shape[0]
    bounds = np.asarray(bounds, dtype=np.float64)
    if partners >= n_rows - 1:
        return block_clipped_pair_sums(X, bounds) / bounds, n_rows * (n_rows - 1) // 2
    design = _pair_design(n_rows, partners, _block_generator(root, name, index))
    # (each column in ring order, contiguous: the slices below are then long
    # runs, five times faster than rows of k values)
    ring = np.ascontiguousarray(np.take(X, design.order, axis=0).T)
    floors = 2.0 * bounds
    offsets = np.ascontiguousarray(design.offsets, dtype=np.intp)
    sums = np.array([ring_clipped_sum(values, offsets, design.half_offset, floor)
                     for values, floor in zip(ring, floors)])
    return sums / floors, n_rows * len(design.offsets) + design.half_offset


def block_centred_sums(X, centre):
    """Per column, the sums of ``x_j - c_j`` and of ``(x_j - c_j)^2`` over this
    block's rows (shape (2, p)): the one-sample moments about a public centre
    (:func:`centred_moment_sensitivity`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        shifted = X - centre
        return np.stack([shifted.sum(axis=0), (shifted * shifted).sum(axis=0)])


def block_centred_scatter(X, centre, unit):
    """The sum over this block's rows of ``z z^T``, ``z = (x - c) / u``, about a
    public centre in a public unit (shape (p, p)): the one-sample scatter of
    ``radial="covariance"`` (:func:`centred_scatter_sensitivity`)."""
    shifted = (X - centre) / unit
    return shifted.T @ shifted


#: Roundings of a one-sample moment as computed, beyond one per row of the naive
#: sum: the shift, the square, the expansion about another centre, the divisions.
_MOMENT_ROUNDINGS = 16


def centred_moment_sensitivity(n_samples, n_coordinates, exact_norm=None,
                               rounding=None):
    """L2 sensitivity of a vector of one-sample means, each of terms in ``[-1, 1]``
    or ``[0, 1]`` (a row's term over its public bound), as computed.

    Exactly, replacing one row moves each coordinate by at most ``1 / n`` (a mean
    of terms in ``[0, 1]``; ``[-1/2, 1/2]`` for a mean about the box centre in
    units of the width), the vector by ``sqrt(k) / n``; ``exact_norm``, when
    given, is a smaller bound on ``n`` times that vector's move, proved by the
    caller (a joint bound on a row's terms, or coordinates that move by less
    than their unit). As computed (a naive sum of ``n`` terms, then a few
    roundings, :data:`_MOMENT_ROUNDINGS`), each coordinate is within ``(n + 16)
    2**-53`` of its exact value times the largest term (at most 4 for a moment
    expanded about another centre), so two neighbours' computed coordinates
    differ by at most their exact move plus twice that. ``rounding``, when
    given, is per coordinate the sum of the largest terms of the sums it is
    computed from, in its unit (1 for one sum of terms at most 1).
    """
    allowance = 8.0 * (n_samples + _MOMENT_ROUNDINGS) * 2.0**-53
    root = math.sqrt(n_coordinates)
    spread = root if rounding is None else \
        math.sqrt(math.fsum(float(r)**2 for r in rounding)) * (1.0 + 2.0**-40)
    if exact_norm is None:
        return root / n_samples + spread * allowance
    return min(exact_norm, root) / n_samples + spread * allowance


def block_two_sided_counts(X, beta, max_steps):
    """Per column, the counts of the two-sided search's positive and negative
    values below its geometric grid: two arrays of shape (p, grid)."""
    positive, negative = [], []
    for column in range(X.shape[1]):
        above, below = _two_sided_values(X[:, column], beta)
        positive.append(geometric_counts(above, 0.0, beta, max_steps))
        negative.append(geometric_counts(below, 0.0, beta, max_steps))
    return np.array(positive), np.array(negative)


def block_interval_counts(X, shifts, grid):
    """Per column, the counts of ``x_j - shift_j`` below an even grid ``(low,
    high, points)``: shape (p, points). A difference past the float range is
    ``+-inf``: below or above every point."""
    with np.errstate(over="ignore"):
        shifted = X - shifts
    return np.array([even_counts(shifted[:, j], *grid) for j in range(X.shape[1])])


def block_distance_counts(X, center, unit, beta, max_steps):
    with np.errstate(over="ignore"):
        distances = np.linalg.norm(X - center, axis=1) / unit
    return geometric_counts(distances, 0.0, beta, max_steps)


def block_histogram(X, x_edges, y_edges, codes, n_labels):
    if codes is None:
        return histogram_counts(X, x_edges, y_edges)
    return histogram_counts(X, x_edges, y_edges, groups=np.asarray(codes),
                            labels=np.arange(n_labels))


def block_check(block):
    """Whether every value is finite, and each column's largest absolute value."""
    block = np.asarray(block)
    if block.shape[0] == 0:
        return True, np.zeros(block.shape[1])
    # one compiled pass: a column's largest |x| is finite exactly when all of
    # it is (NaN and inf carry through)
    largest = column_max_abs(np.ascontiguousarray(block, dtype=np.float64))
    finite = bool(np.all(np.isfinite(largest)))
    return finite, (largest if finite else np.zeros(block.shape[1]))


def centred_scatter_sensitivity(n_samples, n_features, rule):
    """Frobenius sensitivity of the mean of ``z z^T`` over the rows, ``||z|| <= 1``
    (:func:`block_centred_scatter` in a unit that bounds every row's distance
    from the centre), as computed.

    Replacing one row replaces one term ``a a^T`` by ``b b^T``:
    ``||a a^T - b b^T||_F^2 = ||a||^4 + ||b||^4 - 2 (a . b)^2 <= 2``, so the mean
    moves by at most ``sqrt(2) / n`` (``rule="tight"``; ``"standard"`` takes the
    triangle inequality's ``2 / n``). Each of the ``p^2`` entries is a mean of
    terms in ``[-1, 1]``, within the rounding allowance of
    :func:`centred_moment_sensitivity`.
    """
    per_term = 2.0 if rule == "standard" else math.sqrt(2.0)
    return centred_moment_sensitivity(n_samples, n_features**2, per_term)
