"""The clipping allowance: how far clipping at a released bound would have moved
a variance if the rows were Gaussian (post-processing of released values).

A variance clipped at a bound ``C`` is biased down by the mass of the terms
past ``C``; its Gaussian noise sd alone says nothing of that. At the levels the
clipped scree searches (97% and above) a Gaussian coordinate keeps about 95%
of its variance, and with many rows the noise is far smaller than that: a
Gaussian table of 20,000 rows at eps 4 printed its variances about five noise
sds below the table's. The allowance is the bias a Gaussian projection would
have, given only the released value and its bound: the Gaussian whose clipped
variance is the released value, less that value. It is added in squares to the
value's noise sd (:func:`~._scree._widened_variance_noise`), so the printed
interval carries it. It is a model: a tail lighter than Gaussian (a bounded
column) lost less, a heavier one more; the tail counts
(:func:`~._variances.tail_shares`) see the heaviest, and declared bounds clip
nothing.

The model. A pair difference ``y = V (x_a - x_b)`` along ``k`` directions is
Gaussian with variances ``2 lambda_l``, so the terms ``t_l = y_l^2 / 2`` are
``lambda_l Z_l^2``. Clipping in norm at ``C`` scales them all by
``min(1, C / sum_j t_j)``; clipping each at its own bound is the case ``k =
1``. The clipped variance is ``lambda_l E[Z_l^2 min(1, C / S)]``; the model's
``lambda`` solves ``clipped = released`` by a fixed point, the expectation taken
over a fixed public sample of standard normals.
"""

import functools
import math

import numpy as np
from scipy.stats import chi2, norm

#: The fixed sample's size and its lattice's multiplier (public constants: the
#: allowance is a function of released values only). At the 97% level about 3%
#: of the sample is past the bound, about 1,000 points: the loss to a few per
#: cent (``tests/test_clip_bias.py`` checks it against exact integrals).
_SAMPLE_SIZE = 2 ** 15
_LATTICE_MULTIPLIER = 20219
#: The fixed point's iterations and tolerance (relative, on ``lambda``; the
#: model is good to a few per cent, and a fit pays for every iteration).
_MAX_ITERATIONS = 60
_TOLERANCE = 1e-6
#: Where the model's kept share falls below this, the released value is too
#: near its bound for a Gaussian to explain it (the value is then at its bound:
#: :func:`~._scree._widen_if_clipped` raises its sd to it); the allowance is
#: then the value itself.
_LEAST_KEPT = 0.5


def clip_allowance_share(raw, bounds, *, together, scales=None, level=None):
    """Per released variance, the clipping allowance as a share of the value
    (at least 0; 0 where nothing was clipped or the value is not positive).

    ``raw``: the released variances; ``bounds``: their clip bounds (one, or
    one per value; NaN or None where nothing was clipped); ``together``:
    whether they were clipped together in norm (else each at its own bound);
    ``scales``: given for ``clip="scaled"``, whose terms ``t_l / bounds_l``
    are clipped together in norm at 1. ``level``: the quantile level of the
    search that found the bounds (None: public bounds); given, the share is at
    most what a Gaussian coordinate clipped at that quantile loses: a bound
    near the values says the tail is light (or the search stopped early, which
    the level's choice allows for) rather than that a Gaussian lost half its
    variance (iris at eps 4 without a box: its Gaussian reading made 10 of 14
    variances within 20% not estimable). Post-processing of released values.
    """
    raw = np.asarray(raw, dtype=float)
    share = np.zeros(raw.shape)
    if bounds is None:
        return share
    together = together or scales is not None
    bounds = np.broadcast_to(np.asarray(bounds, dtype=float), raw.shape)
    usable = (raw > 0) & np.isfinite(raw) & (bounds > 0) & np.isfinite(bounds)
    groups = [np.flatnonzero(usable)] if together else \
        [np.array([l]) for l in np.flatnonzero(usable)]
    for group in groups:
        if group.size:
            kept = _gaussian_kept_shares(raw[group] / bounds[group])
            share[group] = np.where(kept >= _LEAST_KEPT, 1.0 / np.maximum(kept, 1e-300)
                                    - 1.0, 1.0)
    if level is not None:
        lost = _level_loss(level)
        share = np.minimum(share, lost / (1.0 - lost))
    return share


@functools.lru_cache(maxsize=16)
def _level_loss(level):
    """The share of its variance a Gaussian coordinate loses when clipped at
    its ``level`` quantile: ``E[(Z^2 - c)+]``, ``c`` the chi-square(1)
    ``level`` quantile."""
    c = float(chi2.ppf(level, 1))
    root = np.sqrt(c)
    return 2.0 * ((1.0 - c) * float(norm.sf(root)) + root * float(norm.pdf(root)))


def _gaussian_kept_shares(scaled):
    """Per coordinate, the share of its variance a Gaussian keeps when clipped
    in norm at 1 with the clipped variances ``scaled`` (each released value over
    its bound): ``E[Z_l^2 min(1, 1 / S)]`` at the ``lambda`` that gives them.
    Where no ``lambda`` does (the values sum to about 1 or more: every term at
    the bound), 0."""
    scaled = np.asarray(scaled, dtype=float)
    if np.sum(scaled) >= 1.0:
        return np.zeros(scaled.shape)
    # The iterates rise to the solution (each kept share is at most 1), and
    # one below _LEAST_KEPT ends the search (the value is then at its bound):
    # lambda stays below scaled / _LEAST_KEPT, so only the points where that
    # could reach the bound are ever clipped. The others keep all of theirs.
    squares = _normal_squares(scaled.size)
    reach = squares @ (scaled / _LEAST_KEPT) > 1.0
    candidates = squares[reach]
    unclipped = squares[~reach].sum(axis=0)
    lam = scaled.copy()
    for _ in range(_MAX_ITERATIONS):
        kept = _kept(candidates, unclipped, lam)
        if np.any(kept < _LEAST_KEPT):
            return np.zeros(scaled.shape)
        updated = scaled / kept
        converged = np.all(np.abs(updated - lam) <= _TOLERANCE * updated)
        lam = updated
        if converged:
            break
    return scaled / lam


def _kept(candidates, unclipped, lam):
    """``E[Z_l^2 min(1, 1 / S)]`` with ``S = sum_j lam_j Z_j^2`` over the
    sample: the ``candidates`` (rows that may reach the bound) clipped, the
    others' sums ``unclipped`` kept whole."""
    factor = np.minimum(1.0, 1.0 / np.maximum(candidates @ lam, 1e-300))
    return (unclipped + factor @ candidates) / _SAMPLE_SIZE


def total_allowance_share(total, bound, variances, n_features, *, level=None):
    """The total variance's clipping allowance, as a share of it (at least 0).

    The total clips the whole pair difference in norm at ``bound``
    (``||d||^2 / 2``), so its loss depends on the whole spectrum, which no
    release gives: the model takes the released ``variances`` along the
    directions (their positive values) and spreads the rest of ``total``
    evenly over the other ``n_features - k`` axes (a chi-square coordinate),
    then scales that shape until its clipped total is the released one. A
    spectrum more even than that loses less; a single axis loses the most,
    and ``level`` (the total's search level) caps the share at a Gaussian
    coordinate's loss there. 0 where nothing was clipped (``bound`` None) or
    the total is not positive; 1 where no Gaussian gives the total (at its
    bound). Post-processing of released values.
    """
    if bound is None or not (total > 0 and np.isfinite(total)) \
            or not (bound > 0 and np.isfinite(bound)):
        return 0.0
    variances = np.asarray(variances, dtype=float)
    leading = variances[np.isfinite(variances) & (variances > 0)]
    leading = leading * min(1.0, total / max(float(leading.sum()), 1e-300))
    n_rest = n_features - leading.size
    rest = total - float(leading.sum())
    share = _total_share(total / bound, leading / bound, rest / bound, n_rest)
    if level is not None:
        lost = _level_loss(level)
        share = min(share, lost / (1.0 - lost))
    return share


def _total_share(kept, leading, rest, n_rest):
    """The model's share for a clipped total ``kept`` (over the bound, which is
    then 1), the spectrum's shape ``leading`` and ``rest`` over ``n_rest``
    axes (summing to ``kept``): ``a - 1`` for the ``a`` at which the shape
    scaled by ``a`` keeps ``kept`` when clipped at 1."""
    squares, chi_square = _total_sample(leading.size, max(n_rest, 0))
    total = squares @ leading
    if n_rest > 0 and rest > 0:
        total = total + rest * chi_square
    # (scales stay in [1, 1 / _LEAST_KEPT]: the points below the bound there
    # are never clipped)
    reach = total / _LEAST_KEPT > 1.0
    candidates, unclipped = total[reach], float(total[~reach].sum())

    def clipped(scale):
        return (scale * unclipped + float(np.minimum(scale * candidates, 1.0).sum())) \
            / _SAMPLE_SIZE

    if clipped(1.0) >= kept * (1 - 1e-12):
        return 0.0
    if clipped(1.0 / _LEAST_KEPT) < kept:
        return 1.0
    low, high = 1.0, 1.0 / _LEAST_KEPT
    for _ in range(_BISECTIONS):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if clipped(middle) < kept else (low, middle)
    return 0.5 * (low + high) - 1.0


#: Halvings of the total's scale bracket [1, 2]: to about 1e-6.
_BISECTIONS = 20


@functools.lru_cache(maxsize=8)
def _total_sample(n_leading, n_rest):
    """The total's fixed sample: ``n_leading`` squared normals and, for the
    ``n_rest`` equal axes, one chi-square coordinate over its degrees (the
    lattice's last; zeros without axes), each of mean exactly 1 (read-only,
    cached: a fit reads it once per scree)."""
    normals = _stratified_normals()[_lattice_indices(n_leading + 1)]
    squares = _unit_means(normals[:, :-1] ** 2)
    chi_square = _unit_means(_chi_square_over_degrees(normals[:, -1], n_rest)) \
        if n_rest > 0 else np.zeros(_SAMPLE_SIZE)
    return _read_only(squares), _read_only(chi_square)


def _chi_square_over_degrees(normal, degrees):
    """A chi-square on ``degrees`` over its degrees, as a monotone function of
    a standard ``normal``: exact for one and two degrees, Wilson and
    Hilferty's cube above (its quantiles within about 1% from three)."""
    if degrees == 1:
        return normal ** 2
    if degrees == 2:
        # an exponential of mean 2: the upper tail of the normal's quantile
        return -np.log(norm.sf(normal))
    spread = 2.0 / (9.0 * degrees)
    return np.maximum(1.0 - spread + normal * math.sqrt(spread), 0.0) ** 3


def _read_only(array):
    array.setflags(write=False)
    return array


@functools.lru_cache(maxsize=1)
def _stratified_normals():
    """The normal quantiles of the stratified points ``(i + 1/2) / size``."""
    return _read_only(norm.ppf((np.arange(_SAMPLE_SIZE) + 0.5) / _SAMPLE_SIZE))


def _lattice_indices(n_coordinates):
    """A rank-1 lattice (Korobov's, multiplier :data:`_LATTICE_MULTIPLIER`),
    as indices into the stratified points: ``(size, n_coordinates)``, each
    column the same points rearranged (the first in order)."""
    index = np.arange(_SAMPLE_SIZE, dtype=np.int64)
    generators = [pow(_LATTICE_MULTIPLIER, j, _SAMPLE_SIZE) for j in range(n_coordinates)]
    return np.outer(index, generators) % _SAMPLE_SIZE


@functools.lru_cache(maxsize=8)
def _normal_squares(n_coordinates):
    """A fixed sample of squared standard normals, ``(size, n_coordinates)``:
    the lattice (:func:`_lattice_indices`) over the stratified normal
    quantiles. Deterministic, with no draw (the fits' only samplers are their
    mechanisms'); read-only, cached."""
    normals = _stratified_normals()[_lattice_indices(n_coordinates)]
    return _read_only(_unit_means(normals ** 2))


def _unit_means(sample):
    """Each column over its mean (exactly 1 then: unclipped, the model keeps
    all)."""
    return sample / sample.mean(axis=0)
