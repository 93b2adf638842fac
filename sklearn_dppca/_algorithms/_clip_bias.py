"""The clipping allowance: how far clipping at a released bound may have moved
a variance (post-processing of released values).

A variance clipped at a bound ``C`` is biased down by the mass of the terms
past ``C``; its Gaussian noise sd alone says nothing of that. At the levels the
clipped scree searches (97% and above) a Gaussian coordinate keeps about 95%
of its variance, and with many rows the noise is far smaller than that: a
Gaussian table of 20,000 rows at eps 4 printed its variances about five noise
sds below the table's. The allowance is added in squares to the value's noise
sd (:func:`~._scree._with_allowance`), so the printed interval carries it, and
the value is read at the middle of the losses it allows
(:func:`~._scree._at_midpoint`: moved up by half of it). It
is the larger of two readings of the released value and its bound, both
models: a tail lighter than both lost less, a heavier one more; the tail
counts (:func:`~._variances.tail_shares`) see the heaviest, and declared
bounds clip nothing.

The Gaussian reading. A pair difference ``y = V (x_a - x_b)`` along ``k``
directions is Gaussian with variances ``2 lambda_l``, so the terms ``t_l =
y_l^2 / 2`` are ``lambda_l Z_l^2``. Clipping in norm at ``C`` scales them all
by ``min(1, C / sum_j t_j)``; clipping each at its own bound is the case ``k
= 1``. The clipped variance is ``lambda_l E[Z_l^2 min(1, C / S)]``; the
model's ``lambda`` solves ``clipped = released`` by a fixed point, the
expectation taken over a fixed public sample of standard normals. Where the
bound was searched, this loss is capped at a Gaussian coordinate's at the
level the search reaches on average (:func:`reached_level`: a search with
little budget stops below its level, and breast cancer's bounds at eps 4,
stopped near the 87% level in 4 fits of 10, kept 0.64 to 0.70 of PC1's
variance, 6 to 7 sds below it when read at the level aimed at): a value near
its bound says its tail is light more often than that a Gaussian lost half
its variance.

The tail-weighted reading, where the bound was searched at a known level
``q``. The bound is then (about) the ``q`` quantile of the terms, and the
ratio of the clipped value to it tells how heavy the tail is: a Gaussian
clipped at its 97% quantile keeps 0.20 of the bound, a Laplace 0.14, a
heavier tail less. The reading fits a generalized Gaussian pair difference
(density proportional to ``exp(-|y / s|^beta)``; ``beta = 2`` is the Gaussian,
1 the Laplace) to that ratio at that level, and takes its loss: on adult
without bounds, whose capital gain is top-coded, its printed variances sat 9
of their sds below the table's on average at eps 4, and 1.2 with it.
"""

import functools
import math

import numpy as np
from scipy.special import gammainc, gammaln
from scipy.stats import chi2, gamma, norm

from ..privacy._quantiles import rank_slack

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
#: Halvings of the total's scale bracket [1, 2]: to about 1e-6.
_BISECTIONS = 20
#: Where the model's kept share falls below this, the released value is too
#: near its bound for a Gaussian to explain it (the value is then at its bound:
#: :func:`~._scree._widen_if_clipped` raises its sd to it); the allowance is
#: then the value itself.
_LEAST_KEPT = 0.5


def clip_allowance_share(raw, bounds, *, together, scales=None, level=None,
                         reached=None, tail_weighted=True):
    """Per released variance, the clipping allowance as a share of the value
    (at least 0; 0 where nothing was clipped or the value is not positive).

    ``raw``: the released variances; ``bounds``: their clip bounds (one, or
    one per value; NaN or None where nothing was clipped); ``together``:
    whether they were clipped together in norm (else each at its own bound);
    ``scales``: given for ``clip="scaled"``, whose terms ``t_l / bounds_l``
    are clipped together in norm at 1. ``level``: the quantile level of the
    search that found the bounds (None: public bounds); given, the Gaussian
    reading is at most what a Gaussian coordinate clipped at the level the
    search ``reached`` on average (:func:`reached_level`; ``level`` when
    None) loses (iris at eps 4 without a box: uncapped, it made 10 of 14
    variances within 20% not estimable), and, with ``tail_weighted`` (the
    bounds are the ``level`` quantile of the terms they clip), the share is
    at least the tail-weighted reading's at ``level``
    (:func:`_tail_weighted_share`, of the values clipped together, summed).
    See the module's docstring. Post-processing of released values.
    """
    raw = np.asarray(raw, dtype=float)
    share = np.zeros(raw.shape)
    if bounds is None:
        return share
    for group, scaled in _clipped_groups(raw, bounds, together or scales is not None):
        kept = _gaussian_kept_shares(scaled)
        share[group] = np.where(kept >= _LEAST_KEPT, 1.0 / np.maximum(kept, 1e-300)
                                - 1.0, 1.0)
        if level is not None:
            share[group] = _with_level(share[group], float(np.sum(scaled)), level,
                                       tail_weighted, reached)
    return share


def _clipped_groups(raw, bounds, together):
    """The groups of released values clipped together (every usable value,
    clipped in norm, or each alone), as their indices and each value over its
    bound; usable: the value and its bound positive and finite."""
    bounds = np.broadcast_to(np.asarray(bounds, dtype=float), raw.shape)
    usable = np.flatnonzero((raw > 0) & np.isfinite(raw) & (bounds > 0)
                            & np.isfinite(bounds))
    groups = [usable] if together else [usable[i:i + 1] for i in range(usable.size)]
    return [(group, raw[group] / bounds[group]) for group in groups if group.size]


def _with_level(gaussian, ratio, level, tail_weighted=True, reached=None):
    """The Gaussian reading ``gaussian`` capped at a Gaussian coordinate's loss
    at the level its search ``reached`` on average (``level`` when None), and
    (``tail_weighted``) raised to the tail-weighted reading of ``ratio`` (the
    clipped value over its bound) at ``level``."""
    lost = _level_loss(level if reached is None else reached)
    capped = np.minimum(gaussian, lost / (1.0 - lost))
    return np.maximum(capped, _tail_weighted_share(ratio, level)) if tail_weighted \
        else capped


#: The mean shortfall of a private search below its level, in units of its
#: rank slack: 400 searches at the 0.97 level of chi-square values stopped
#: 0.45 (89 values, eps 0.58) and 0.39 (284 values, eps 0.23) of it below on
#: average, and a tenth of them one slack or more.
_MEAN_SHORTFALL = 0.5


def typical_search_bias(bounds, reached):
    """Per searched clip bound, the bias clipping there typically leaves on a
    Gaussian coordinate whose bound it is, for a search that ``reached`` that
    level on average (:func:`reached_level`; public: a model, as the
    allowance's readings are).

    At the reached level ``r`` the bound is ``c = lambda q_r`` (``q_r`` the
    chi-square(1) quantile) and a Gaussian coordinate loses ``lambda E[(Z^2 -
    q_r)+]``, that is ``c`` times the loss over ``q_r``. One coordinate is the
    worst case: a norm bound spread over several loses less. For weighing a
    searched form against an unbiased one (the declared box's moments), where
    the noise sds alone would take a clipped value that lies several of them
    low: wine with its observed ranges at eps 4, the search's noise below the
    box's in 3 fits of 10, its bounds (searched over 89 pairs) kept 0.62,
    0.66 and 0.88 of PC1's variance.
    """
    return np.asarray(bounds, dtype=float) * (_level_loss(reached)
                                              / float(chi2.ppf(reached, 1)))


def reached_level(level, search_eps, n_values):
    """The level a private search at ``level`` with ``search_eps`` over
    ``n_values`` reaches on average (public): it stops up to about its
    :func:`~sklearn_dppca.privacy._quantiles.rank_slack` below its level,
    :data:`_MEAN_SHORTFALL` of it on average; at least the median."""
    slack = rank_slack(search_eps) / max(int(n_values), 1)
    return float(max(level - _MEAN_SHORTFALL * slack, 0.5))


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


#: The generalized Gaussian shapes ``beta`` the tail-weighted reading fits,
#: from far heavier than a Laplace (0.4) to nearly uniform (20).
_SHAPES = np.geomspace(0.4, 20.0, 120)


def _tail_weighted_share(ratio, level):
    """The loss, over what it keeps, of the generalized Gaussian pair
    difference whose terms, clipped at their ``level`` quantile, keep
    ``ratio`` of that bound (interpolated over :data:`_SHAPES`; past the
    family's ends, its heaviest's or lightest's)."""
    ratios, shares = _shape_table(float(level))
    return float(np.interp(ratio, ratios, shares))


def heavier_than_modelled(raw, bounds, *, together, level):
    """Per released variance, whether its tail-weighted reading at ``level``
    (:func:`clip_allowance_share`'s) found it past the family's heaviest
    shape: what the clipped value keeps of its bound is less than the
    heaviest modelled tail keeps, so that reading's loss is a floor, not a
    bound. Public inputs and released values only."""
    raw = np.asarray(raw, dtype=float)
    beyond = np.zeros(raw.shape, dtype=bool)
    if bounds is None or level is None:
        return beyond
    heaviest = _shape_table(float(level))[0][0]
    for group, scaled in _clipped_groups(raw, bounds, together):
        beyond[group] = float(np.sum(scaled)) < heaviest
    return beyond


@functools.lru_cache(maxsize=32)
def _shape_table(level):
    """Per shape ``beta`` (:data:`_SHAPES`), for a pair difference ``y`` of
    unit variance with density proportional to ``exp(-|y / s|^beta)``, clipped
    at the ``level`` quantile ``c`` of ``y^2``: ``E[min(y^2, c)] / c`` and the
    share lost over the share kept, ``1 / E[min(y^2, c)] - 1``. With ``G =
    |y / s|^beta``, a Gamma of shape ``1 / beta``: ``y^2 = s^2 G^(2 / beta)``,
    ``s^2 = Gamma(1 / beta) / Gamma(3 / beta)``, and the part of the variance
    below ``c`` is the regularised incomplete Gamma of shape ``3 / beta`` at
    ``G``'s quantile. Sorted by the ratio (it rises with ``beta``)."""
    inverse = 1.0 / _SHAPES
    quantile = gamma.ppf(level, inverse)
    bound = np.exp(gammaln(inverse) - gammaln(3.0 * inverse)) * quantile ** (2.0 * inverse)
    kept = gammainc(3.0 * inverse, quantile) + bound * (1.0 - level)
    ratios, shares = kept / bound, 1.0 / kept - 1.0
    order = np.argsort(ratios)
    return _read_only(ratios[order]), _read_only(shares[order])


def total_allowance_share(total, bound, variances, n_features, *, level=None,
                          reached=None):
    """The total variance's clipping allowance, as a share of it (at least 0).

    The total clips the whole pair difference in norm at ``bound``
    (``||d||^2 / 2``), so its loss depends on the whole spectrum, which no
    release gives: the model takes the released ``variances`` along the
    directions (their positive values) and spreads the rest of ``total``
    evenly over the other ``n_features - k`` axes (a chi-square coordinate),
    then scales that shape until its clipped total is the released one. A
    spectrum more even than that loses less; a single axis loses the most,
    and ``level`` (the total's search level) caps the share at a Gaussian
    coordinate's loss at the level the search ``reached`` on average
    (``level`` when None) and raises it to the tail-weighted reading of
    ``total / bound`` at ``level`` (:func:`_with_level`), then to what the
    model's spectrum itself loses clipped at its quantile at that reached
    level (:func:`_spectrum_loss`): the bound is such a quantile of the
    terms, so a total that seems to keep more (the reading of ``total /
    bound``, fooled by a light tail of the spectrum's shape or by a search
    that stopped low) still loses that much; without this floor, 12 of 48
    totals on ``bench_clip_allowance.py`` lay more than two of their sds
    from the table's, 2 with it. 0 where nothing was clipped (``bound``
    None) or the total is not positive; 1 where no Gaussian gives the total
    (at its bound). Post-processing of released values.
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
        share = float(_with_level(share, total / bound, level, reached=reached))
        share = max(share, _spectrum_loss(leading, rest, n_rest,
                                          level if reached is None else reached))
    return share


def _spectrum_loss(leading, rest, n_rest, level):
    """The share lost over the share kept by the total's model spectrum
    (``leading`` variances and ``rest`` spread over ``n_rest`` equal axes, at
    any common scale) when its pair terms are clipped in norm at their
    ``level`` quantile: ``E[T] / E[min(T, c)] - 1``, ``c`` the quantile of
    ``T`` over the fixed sample (:func:`_total_sample`)."""
    terms = _spectrum_terms(leading, rest, n_rest)
    kept = float(np.minimum(terms, np.quantile(terms, level)).mean())
    return float(terms.mean()) / kept - 1.0 if kept > 0 else 1.0


def _total_share(kept, leading, rest, n_rest):
    """The model's share for a clipped total ``kept`` (over the bound, which is
    then 1), the spectrum's shape ``leading`` and ``rest`` over ``n_rest``
    axes (summing to ``kept``): ``a - 1`` for the ``a`` at which the shape
    scaled by ``a`` keeps ``kept`` when clipped at 1."""
    total = _spectrum_terms(leading, rest, n_rest)
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


def _spectrum_terms(leading, rest, n_rest):
    """The total's pair terms over the fixed sample (:func:`_total_sample`)
    for the spectrum ``leading`` and ``rest`` spread over ``n_rest`` equal
    axes."""
    squares, chi_square = _total_sample(leading.size, max(n_rest, 0))
    terms = squares @ leading
    if n_rest > 0 and rest > 0:
        terms = terms + rest * chi_square
    return terms


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
