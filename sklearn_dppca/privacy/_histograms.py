"""Two-dimensional grids, exact counts and their private releases.

Cells are indexed with x varying fastest: the flat index of cell ``(ix, iy)`` is
``ix + m_x * iy``. Intervals are right-closed, ``(e_j, e_{j+1}]``, and the first one
is also closed on the left, ``[e_0, e_1]``, so every point of ``[e_0, e_m]`` falls in
exactly one cell.

Sensitivity under replacement adjacency: changing one row moves at most one unit of
count from one cell to another (possibly to or from "outside the grid"), so the
count array changes by at most ``sqrt(2)`` in L2 norm and by at most 2 in L1 norm.
This holds as well for the concatenated per-group count arrays, even when the
changed row switches group, since the row still leaves one cell and enters one.

Counts are integers, and so is their noise: the additive histogram adds discrete
Gaussian noise and the sparse one discrete Laplace noise, both sampled exactly from
uniform integers (``_discrete.py``), so no floating-point noise reaches a count.
"""

import math

import numpy as np

from .._validation import Interval, as_real_numbers, check_labels, check_param, label_codes
from ._calibration import check_delta, check_eps
from ._discrete import (
    discrete_gaussian,
    discrete_gaussian_scale_dp,
    discrete_gaussian_scale_gdp,
    discrete_laplace,
    laplace_rate,
)
from ._mechanisms import laplace_mechanism

# One row leaves one cell and enters another.
_HISTOGRAM_L2_SENSITIVITY = math.sqrt(2.0)
_HISTOGRAM_L1_SENSITIVITY = 2.0


def _check_edges(edges, name):
    edges = np.asarray(edges, dtype=float)
    if edges.ndim != 1 or edges.size < 2:
        raise ValueError(f"{name} must be a 1-D array of at least 2 edges, got shape "
                         f"{edges.shape}.")
    if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
        raise ValueError(f"{name} must be finite and strictly increasing.")
    return edges


def _check_points(points):
    points = np.asarray(as_real_numbers(points, "points"), dtype=float)
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"points must have shape (n, 2), got {points.shape}.")
    return points


def _check_counts(counts):
    counts = np.asarray(as_real_numbers(counts, "counts"), dtype=float)
    if counts.ndim not in (2, 3) or counts.size == 0:
        raise ValueError("counts must be a non-empty array of shape (m_x, m_y) or "
                         f"(n_groups, m_x, m_y), got {counts.shape}.")
    if not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError("counts must be finite and non-negative.")
    return counts


def _check_whole_counts(counts):
    """Counts as int64: the discrete mechanisms add integer noise to integers."""
    counts = _check_counts(counts)
    if np.any(counts != np.round(counts)) or np.any(counts >= 2.0**53):
        raise ValueError("counts must be whole numbers below 2**53.")
    return counts.astype(np.int64)


def _axis_index(values, edges):
    """Interval of each value, right-closed with the first closed; -1 outside.

    ``searchsorted(edges, values, "left") - 1``, from each value's interval on
    evenly spaced edges (closed form) where the edges confirm it, the binary
    search for the rest (uneven edges, values at an edge, NaN): exact whatever
    the edges, and a third of the time on the score frame's even ones."""
    size = edges.size
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        guess = np.ceil((values - edges[0]) / ((edges[-1] - edges[0]) / (size - 1)))
    # (fmax/fmin send NaN to 1; the guess is then checked like any other)
    position = np.fmin(np.fmax(guess, 1.0), float(size - 1)).astype(np.intp)
    placed = (edges[position - 1] < values) & (values <= edges[position])
    index = position - 1
    unplaced = ~placed
    if np.any(unplaced):
        index[unplaced] = np.searchsorted(edges, values[unplaced], side="left") - 1
    index[values == edges[0]] = 0
    outside = ~((values >= edges[0]) & (values <= edges[-1]))  # NaN is outside too
    index[outside] = -1
    return index


def grid_cell_index(points, x_edges, y_edges):
    """Find the flat cell index of each point (x varying fastest), -1 outside the grid.

    Parameters
    ----------
    points : array-like of shape (n, 2)
        The points' x and y coordinates.
    x_edges : array-like of shape (m_x + 1,)
        Strictly increasing edges along x.
    y_edges : array-like of shape (m_y + 1,)
        Strictly increasing edges along y.

    Returns
    -------
    ndarray of shape (n,), int
        ``ix + m_x * iy`` for points in the grid, -1 otherwise (also for NaN).

    Examples
    --------
    >>> from sklearn_dppca.privacy import grid_cell_index
    >>> edges = [0.0, 1.0, 2.0]
    >>> grid_cell_index([[0.5, 0.5], [1.5, 0.5], [0.5, 1.5], [3.0, 0.0]], edges, edges)
    array([ 0,  1,  2, -1])
    """
    points = _check_points(points)
    x_edges = _check_edges(x_edges, "x_edges")
    y_edges = _check_edges(y_edges, "y_edges")
    ix = _axis_index(points[:, 0], x_edges)
    iy = _axis_index(points[:, 1], y_edges)
    return np.where((ix >= 0) & (iy >= 0), ix + (x_edges.size - 1) * iy, -1)


def _group_codes(groups, labels, n_rows):
    """Position of each row's label in the public list ``labels``."""
    if labels is None:
        raise ValueError("labels (the public list of group labels) is required when "
                         "groups is given; it is never read off the data.")
    labels = check_labels(labels, "labels")
    return label_codes(groups, labels, "groups", "labels", n_rows)


def histogram_counts(points, x_edges, y_edges, groups=None, labels=None):
    """Count the points per cell, exactly (not private by itself).

    Parameters
    ----------
    points : array-like of shape (n, 2)
        The points' x and y coordinates.
    x_edges, y_edges : array-like
        Cell edges, see :func:`grid_cell_index`. Points outside are not counted.
    groups : array-like of shape (n,), optional
        Each row's group label.
    labels : sequence, optional
        The public list of group labels; required with ``groups``. A row whose
        label is not in it raises ``ValueError``.

    Returns
    -------
    counts : ndarray of shape (m_x, m_y), or (len(labels), m_x, m_y) with groups
        ``counts[..., ix, iy]`` is the number of points in cell ``(ix, iy)``.

    Notes
    -----
    Replacing one row changes the (concatenated) array by L2 norm at most
    ``sqrt(2)`` and L1 norm at most 2.

    Examples
    --------
    >>> from sklearn_dppca.privacy import histogram_counts
    >>> edges = [0.0, 1.0, 2.0]
    >>> histogram_counts([[0.5, 0.5], [0.2, 0.7], [1.5, 0.5]], edges, edges)
    array([[2., 0.],
           [1., 0.]])
    """
    points = _check_points(points)
    cells = grid_cell_index(points, x_edges, y_edges)
    m_x, m_y = len(x_edges) - 1, len(y_edges) - 1
    n_cells = m_x * m_y
    if groups is None:
        if labels is not None:
            raise ValueError("labels was given without groups.")
        codes, n_groups = np.zeros(len(cells), dtype=np.intp), 1
    else:
        codes = _group_codes(groups, labels, len(cells))
        n_groups = len(labels)
    inside = cells >= 0
    flat = np.bincount(codes[inside] * n_cells + cells[inside],
                       minlength=n_groups * n_cells)
    # Flat cells run x fastest, i.e. y-major blocks of m_x: transpose to (x, y).
    counts = flat.reshape(n_groups, m_y, m_x).transpose(0, 2, 1).astype(float)
    return counts if groups is not None else counts[0]


def additive_histogram_noise_scale(eps=None, delta=None, mu=None):
    """The ``sigma`` of :func:`additive_histogram`'s discrete Gaussian (public).

    Parameters
    ----------
    eps, delta : float, default=None
        The release's ``(eps, delta)``; not used with ``mu``.
    mu : float, default=None
        The ``mu`` of a ``mu``-GDP part.

    Returns
    -------
    float
        ``sqrt(sigma2)`` of ``N_Z(0, sigma2)``, the noise on every cell (its
        standard deviation is a hair smaller).

    Examples
    --------
    >>> from sklearn_dppca.privacy import additive_histogram_noise_scale
    >>> round(additive_histogram_noise_scale(1.0, 1e-5), 2)
    5.28
    """
    return _additive_scale(eps, delta, mu).sigma


def _additive_scale(eps, delta, mu):
    if mu is None:
        return discrete_gaussian_scale_dp(check_eps(eps), check_delta(delta))
    return discrete_gaussian_scale_gdp(check_eps(mu, name="mu"))


def additive_histogram(counts, eps, delta, rng, *, ledger=None, step="additive histogram",
                       mu=None, return_noise_scale=False):
    """Release a histogram with discrete Gaussian noise on every cell, clamped at 0.

    Every cell gets independent ``N_Z(0, sigma2)`` noise (Canonne, Kamath &
    Steinke 2020), drawn exactly from uniform integers; the released counts are
    integers. One mechanism covers the whole array (all groups together):
    replacing one row takes one unit from one cell and adds one to another, also
    across groups. The noise is added to empty cells as well, so the support
    reveals nothing.

    Calibration (``sigma2`` rational, see ``_discrete.py``). The privacy loss of
    that ``(+1, -1)`` shift is ``(1 + D) / sigma2``, ``D`` the difference of two
    independent draws, whose law is known in closed form.

    * ``(eps, delta)``: the smallest ``sigma2`` on a fine rational grid whose exact
      privacy profile, summed numerically in log space, has
      ``delta(eps) (1 + 1e-6) <= delta``.
    * ``mu``-GDP part: ``sigma = sqrt(2)/mu`` times ``1 + tau`` (``tau >= 1e-3``,
      the smallest of a ladder that passes) whose profile lies below the
      ``mu``-GDP profile: checked numerically on a grid of ``eps`` in steps
      ``mu/2000``, which by the monotonicity of both profiles covers every ``eps``
      between the grid points, for all ``eps`` at which the ``mu``-GDP ``delta``
      is at least ``1e-200`` (beyond, both are below ``1e-200``). Proved: the
      sampler's law, the closed form of the privacy loss and the step argument;
      numerically checked: the sums (slack ``1e-6``) at the grid points. The
      part is then composed with the other Gaussian parts as ``mu``-GDP.

    Parameters
    ----------
    counts : array-like of shape (m_x, m_y) or (n_groups, m_x, m_y)
        Exact counts from :func:`histogram_counts` (non-negative whole numbers).
    eps, delta : float
        Privacy parameters of the release, ``(eps, delta)``-DP (not used with
        ``mu``).
    rng : numpy.random.Generator
        The only source of the noise (through ``rng.integers``).
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="additive histogram"
        Name of this call in the ledger.
    mu : float, default=None
        Spend it as a ``mu``-GDP part of a block composed by the caller (see
        :func:`gaussian_mechanism`).
    return_noise_scale : bool, default=False
        Also return ``sigma``, the noise scale of every cell.

    Returns
    -------
    ndarray of int64, of the shape of ``counts``
        Noisy counts clamped at 0 (use :func:`normalise_histogram` to normalise);
        with ``return_noise_scale``, the pair ``(counts, noise_scale)``.

    See Also
    --------
    sparse_histogram : Noise on the non-empty cells only, with a threshold.
    additive_histogram_noise_scale : The ``sigma`` a budget buys.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import additive_histogram
    >>> counts = np.array([[40, 0], [10, 50]])
    >>> noisy = additive_histogram(counts, 1.0, 1e-5, np.random.default_rng(0))
    >>> noisy.shape, noisy.dtype, bool((noisy >= 0).all())
    ((2, 2), dtype('int64'), True)
    """
    counts = _check_whole_counts(counts)
    scale = _additive_scale(eps, delta, mu)
    noise = discrete_gaussian(scale, counts.size, rng).reshape(counts.shape)
    if ledger is not None:
        if mu is None:
            ledger.record(step=step, mechanism="discrete gaussian", eps=eps, delta=delta,
                          sensitivity=_HISTOGRAM_L2_SENSITIVITY, sensitivity_norm="L2",
                          noise_scale=scale.sigma, sigma2=str(scale.sigma2))
        else:
            # the mu the profile was checked against: it dominates this part
            ledger.record(step=step, mechanism="discrete gaussian (mu-GDP part)",
                          eps=0.0, delta=0.0, sensitivity=_HISTOGRAM_L2_SENSITIVITY,
                          sensitivity_norm="L2", noise_scale=scale.sigma, mu=float(mu),
                          composition="gdp", sigma2=str(scale.sigma2))
    clamped = np.maximum(counts + noise, 0)
    return (clamped, scale.sigma) if return_noise_scale else clamped


def _sparse_threshold(eps, delta):
    """Release threshold ``T`` of :func:`sparse_histogram`, a whole number.

    With ``q = exp(-a)``, ``a`` the rate of :func:`_discrete.laplace_rate`, the
    noise has ``P(Z >= j) = q**j / (1 + q)``; ``T = 1 + j`` for the smallest
    ``j`` with ``q**j / (1 + q) <= delta exp(-eps)`` (a float margin of ``1e-9``).
    """
    s, t = laplace_rate(eps)
    rate = s / t
    target = -math.log(delta) + eps + 1e-9 * (1.0 - math.log(delta) + eps)
    j = max(0, math.ceil((target - math.log1p(math.exp(-rate))) / rate))
    return 1 + j


def sparse_histogram(counts, eps, delta, rng, *, ledger=None, step="sparse histogram"):
    """Release a stability histogram (Karwa & Vadhan): noise on non-empty cells only.

    Each non-empty cell gets discrete Laplace noise ``P(z)`` proportional to
    ``exp(-a |z|)`` with a rational rate ``a <= eps/2``, drawn exactly from
    uniform integers (Canonne, Kamath & Steinke 2020); a noisy count below the
    whole-number threshold ``T`` (:func:`_sparse_threshold`) is set to 0. Empty
    cells stay 0 and draw no noise. The release is integers.

    Privacy: ``(eps, delta)``-DP under replacement adjacency. The row replaced
    leaves a cell ``a`` and enters a cell ``b``. Where both cells are non-empty
    in both neighbours, the counts move by 1 in two cells: ``2a <= eps``. A cell
    non-empty in one neighbour only holds a count of 1 there, and ``1 + Z``
    reaches ``T`` with probability ``p = q**(T-1) / (1 + q) <= delta exp(-eps)``,
    ``q = exp(-a)``. If ``a`` empties and ``b`` fills, the other cells agree and
    ``P(S) <= P'(S) + p``; if only one of them changes support, the other moves
    by 1 (``a <= eps/2``), and ``P(S) <= e**(eps/2) P'(S) + e**(eps/2) p``.
    Both are within ``(eps, delta)``.

    Parameters
    ----------
    counts : array-like of shape (m_x, m_y) or (n_groups, m_x, m_y)
        Exact counts from :func:`histogram_counts` (non-negative whole numbers).
    eps : float
        Privacy parameter, > 0.
    delta : float
        Privacy parameter, in (0, 1); it sets the threshold.
    rng : numpy.random.Generator
        The only source of the noise (through ``rng.integers``).
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="sparse histogram"
        Name of this call in the ledger.

    Returns
    -------
    ndarray of int64, of the shape of ``counts``
        The noisy counts, 0 below the threshold and in empty cells.

    See Also
    --------
    additive_histogram : Discrete Gaussian noise on every cell.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import sparse_histogram
    >>> counts = np.array([[400, 0], [0, 300]])
    >>> noisy = sparse_histogram(counts, 1.0, 1e-5, np.random.default_rng(0))
    >>> print(noisy[0, 1], noisy[1, 0])
    0 0
    """
    counts = _check_whole_counts(counts)
    eps = check_eps(eps)
    delta = check_delta(delta)
    s, t = laplace_rate(eps)
    threshold = _sparse_threshold(eps, delta)
    noisy = np.zeros_like(counts)
    occupied = counts > 0
    noisy[occupied] = counts[occupied] + discrete_laplace(s, t, int(occupied.sum()), rng)
    noisy[noisy < threshold] = 0
    if ledger is not None:
        ledger.record(step=step,
                      mechanism="stability histogram (discrete laplace, threshold)",
                      eps=eps, delta=delta, sensitivity=_HISTOGRAM_L1_SENSITIVITY,
                      sensitivity_norm="L1", noise_scale=t / s, threshold=threshold)
    return noisy


def normalise_histogram(counts):
    """Normalise noisy counts to probabilities (post-processing).

    A 2-D array is normalised to sum 1; a 3-D array (groups first) is normalised
    per group.

    Parameters
    ----------
    counts : array-like of shape (m_x, m_y) or (n_groups, m_x, m_y)
        Non-negative noisy counts.

    Returns
    -------
    ndarray of the shape of ``counts``
        The probabilities, summing to 1 (per group).

    Raises
    ------
    ValueError
        If every count (of some group) is zero, since there is nothing to normalise.

    Examples
    --------
    >>> from sklearn_dppca.privacy import normalise_histogram
    >>> normalise_histogram([[1.0, 3.0], [0.0, 4.0]])
    array([[0.125, 0.375],
           [0.   , 0.5  ]])
    """
    counts = _check_counts(counts)
    totals = counts.sum(axis=(-2, -1), keepdims=True)
    if np.any(totals <= 0):
        where = "" if counts.ndim == 2 else (
            f" (group {int(np.flatnonzero(totals.ravel() <= 0)[0])})")
        raise ValueError(f"all noisy counts are zero{where}; increase eps or reduce "
                         "bins.")
    return counts / totals


def dyadic_argmax(values, eps, rng, *, k_min=-40, k_max=40, ledger=None,
                  step="dyadic argmax"):
    """Release the power of two at the most populated dyadic bin of ``values``.

    Each value ``v > 0`` goes to bin ``floor(log2 v)`` clamped to ``[k_min, k_max]``
    (``+inf`` to ``k_max``); values ``<= 0`` go to ``k_min``. Every bin count gets
    ``Lap(2/eps)`` and ``2.0 ** k`` is returned for the bin ``k`` with the largest
    noisy count.

    Privacy: pure ``eps``-DP when one row changes at most one value. That value
    moves between two bins, so the bin counts have L1 sensitivity 2.

    Parameters
    ----------
    values : array-like of shape (m,)
        No NaN.
    eps : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        The only source of the noise.
    k_min, k_max : int, default=-40, 40
        Public range of the exponents, ``k_min <= k_max``.
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="dyadic argmax"
        Name of this call in the ledger.

    Returns
    -------
    float
        ``2.0 ** k`` for the bin ``k`` with the largest noisy count.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import dyadic_argmax
    >>> values = np.random.default_rng(0).uniform(8, 16, size=1000)
    >>> dyadic_argmax(values, 1.0, np.random.default_rng(1))
    8.0
    """
    k_min = check_param(k_min, [Interval("int")], "k_min")
    k_max = check_param(k_max, [Interval("int")], "k_max")
    if k_min > k_max:
        raise ValueError(f"k_min must be <= k_max, got {k_min} > {k_max}.")
    values = np.asarray(as_real_numbers(values, "values"), dtype=float).ravel()
    if values.size == 0 or np.any(np.isnan(values)):
        raise ValueError("values must be non-empty and contain no NaN.")
    # frexp gives v = mantissa * 2**exponent with mantissa in [0.5, 1): exactly
    # floor(log2 v) = exponent - 1, without the rounding of a floating log2.
    _, exponent = np.frexp(values)
    bins = np.clip(exponent.astype(np.int64) - 1, k_min, k_max)
    bins[values <= 0] = k_min
    bins[np.isposinf(values)] = k_max
    bin_counts = np.bincount(bins - k_min, minlength=k_max - k_min + 1)
    noisy, _ = laplace_mechanism(bin_counts, _HISTOGRAM_L1_SENSITIVITY, eps, rng,
                                 ledger=ledger, step=step)
    return 2.0 ** (k_min + int(np.argmax(noisy)))
