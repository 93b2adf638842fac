"""Exact noise for real-valued releases: the statistic on a public grid, integer noise.

Construction (every Gaussian and Laplace release of the package). A real statistic
``f`` (``d`` numbers) of L2 sensitivity ``Delta`` is released at a GDP parameter
``mu`` as ``grid * (round(f / grid) + Z)``:

* ``Z`` is drawn by an exact integer sampler: ``d`` independent discrete Gaussians
  ``N_Z(0, s2)`` of one fixed scale ``s2 ~ 2**32`` (``_UNIT``, Canonne, Kamath
  and Steinke 2020, Algorithm 3, from the generator's raw bits and integer
  comparisons);
* the grid is public (it depends on ``Delta``, ``mu`` and ``d`` only) and chosen
  so that the rounded statistic's integer sensitivity, ``Delta / grid + sqrt(d)``
  (each coordinate's rounding moves it by at most 1/2 on either data set), equals
  ``mu * s / (1 + tau)``;
* multiplying by ``grid`` is post-processing of the integer release.

Why it is ``mu``-GDP. For one coordinate shifted by an integer ``m``, the best
tests of ``N_Z(0, s2)`` against ``N_Z(m, s2)`` are thresholds, and the
trade-off curve is the chord line through the points
``(P(X >= c), P(X <= c - m - 1))``; it lies above the Gaussian curve ``G_mu'``
when every such point does (a chord of a convex curve's upper set stays above
it), that is when ``h(c) - h(c - m) <= mu'`` for ``h = Phi^-1(F)`` and ``F`` the
law's distribution function. That follows for every ``m`` at once from the one
inequality on unit steps ``h(j) - h(j - 1) <= (1 + tau) / s`` for all ``j``,
which :func:`_unit_step_excess` checks for ``_UNIT`` (in double precision, from
compensated sums; its excess is about ``1.3e-9``, ``tau = 1e-5``), wherever
``P(X > j) >= 1e-300``. So a coordinate shifted by ``m`` is ``m (1 + tau) / s``-GDP,
and ``d`` independent coordinates shifted by ``v`` are
``||v|| (1 + tau) / s``-GDP (Dong, Roth and Su 2022: the trade-off of a product
is the tensor product, monotone in each factor, and ``G_a (x) G_b = G_sqrt(a2+b2)``).
With ``||v|| <= Delta / grid + sqrt(d)`` that is ``mu``. The unchecked tails
(probability below ``1e-300``) add at most about ``1e-280`` to ``delta`` at any
``eps``; the accountant does not charge it.

A Laplace release (pure ``eps``, L1 sensitivity ``Delta``) is the same with the
discrete Laplace of rate ``1 / 2**24`` per grid step, and the grid chosen so
that ``(Delta / grid + d) / 2**24 = eps`` (the L1 rounding adds at most 1 per
coordinate): the ratio of its probabilities under an integer shift ``v`` is at
most ``exp(||v||_1 / 2**24)``. (The finer Laplace grid keeps the rounding's cost,
``d / (eps 2**24)``, negligible for the dyadic argmax's two thousand bins.)

Post-processing draws (the scree's parametric bootstrap, the synthetic points)
use the same integer sources (:func:`standard_normal`, :func:`unit_uniform`,
:func:`weighted_indices`), so a fit calls no floating-point sampler at all.
"""

import math
from fractions import Fraction

import numpy as np
from scipy.special import ndtri

from ._discrete import _DiscreteGaussianScale, discrete_gaussian, discrete_laplace

#: The discrete Gaussian of every real release, ``s`` just above ``2**16``.
_UNIT = _DiscreteGaussianScale.at_least(2.0**16)
#: Relative slack of the unit-step inequality (``_unit_step_excess(_UNIT)`` is below).
_STEP_SLACK = 1e-5
#: The discrete Laplace's scale in grid steps (rate ``1 / _LAPLACE_STEPS``).
_LAPLACE_STEPS = 2**24
#: Below this share of its steps left after the rounding, a release is its noise alone.
_MIN_ROOM = 0.5
#: The steps a release may move are cut by this much, so that no float rounding of
#: the grid lets the statistic move further than its ``mu`` (or ``eps``) allows.
_FLOAT_MARGIN = 1e-12
#: Rounded statistics are clamped to this many grid steps (every sum stays exact).
_MAX_STEPS = 2**52
#: Where :func:`_unit_step_excess` stops: the law's tail beyond weighs less.
_TAIL = 1e-300
#: Blocks of the compensated tail sums.
_BLOCK = 4096


def _steps(values, grid):
    """``round(values / grid)``, clamped to ``+-_MAX_STEPS`` (a public clamp:
    1-Lipschitz per coordinate, so no sensitivity grows). Whole numbers held as
    floats: adding integer noise to them is exact (every sum stays below
    ``2**53``), and a NaN statistic stays NaN rather than becoming an integer."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.clip(np.rint(values / grid), -_MAX_STEPS, _MAX_STEPS)


def _gaussian_grid(sensitivity, mu, n_values):
    """The public grid of a ``mu``-GDP release of ``n_values`` numbers of L2
    ``sensitivity``, and the steps the statistic may move on it (None when the
    release does not read the statistic).

    The integer statistic may move by ``mu s / (1 + tau)`` steps (less a relative
    ``1e-12``, so that float rounding never lands above ``mu``), of which the
    rounding takes ``sqrt(n_values)``. When that would leave less than half (``mu``
    below ``2 sqrt(d) / s``: eps of about ``1e-4`` or less), the release is the
    noise alone, at sd ``sensitivity / mu``, and the statistic is not read.
    """
    steps = mu * _UNIT.sigma / (1 + _STEP_SLACK) * (1 - _FLOAT_MARGIN)
    room = steps - math.sqrt(n_values)
    if room >= _MIN_ROOM * steps:
        return _grid_within(sensitivity, room), room
    return _grid_within(sensitivity, steps), None


def _grid_within(sensitivity, steps):
    """The float grid nearest ``sensitivity / steps`` that is not below it: the
    statistic then moves by at most ``steps`` grid steps, exactly (a subnormal
    sensitivity, from a clip bound found at the bottom of its grid, leaves the
    quotient few bits: rounded down it would let the statistic move further)."""
    grid = sensitivity / steps
    while Fraction(sensitivity) > Fraction(steps) * Fraction(grid):
        grid = math.nextafter(grid, math.inf)
    return grid


def gaussian_release(values, sensitivity, mu, rng):
    """``grid * (round(values / grid) + N_Z(0, s2))``: an exact ``mu``-GDP release.

    Parameters
    ----------
    values : ndarray
        The exact statistic (any shape); its L2 sensitivity is at most
        ``sensitivity``.
    sensitivity, mu : float
        Positive; the release is ``mu``-GDP.
    rng : numpy.random.Generator
        The only source of randomness (its bit generator's raw bits).

    Returns
    -------
    released : ndarray
        Of the shape of ``values``; the floats nearest whole numbers of grid steps.
    facts : dict
        For the ledger: ``noise_scale``, the noise sd ``grid * s``
        (``sensitivity / mu`` times ``1 + tau + sqrt(d) / (mu s)``, within 0.1% for
        ``mu s >= 1000 sqrt(d)``); ``grid``; ``values``, the count ``d``; ``mu``, the
        GDP parameter the grid guarantees, rounding included: the rounded
        statistic moves by at most ``room + sqrt(d)`` steps (``sensitivity <= room *
        grid`` exactly), over ``s``, times ``1 + tau`` (at most the ``mu`` asked
        for; that ``mu`` when the noise is released alone, which ``noise_alone``
        then says).
    """
    values = np.asarray(values, dtype=float)
    n_values = max(values.size, 1)
    grid, room = _gaussian_grid(sensitivity, mu, n_values)
    noise = discrete_gaussian(_UNIT, values.size, rng).reshape(values.shape)
    facts = dict(noise_scale=grid * _UNIT.sigma, grid=grid, values=n_values, mu=mu)
    if room is None:
        return noise * grid, dict(facts, noise_alone=True)
    facts["mu"] = (room + math.sqrt(n_values)) * (1 + _STEP_SLACK) / _UNIT.sigma
    return (_steps(values, grid) + noise) * grid, facts


def laplace_release(values, sensitivity, eps, rng):
    """``grid * (round(values / grid) + discrete Laplace)``: exact pure ``eps``-DP.

    ``values`` has L1 sensitivity at most ``sensitivity``. Returns the release,
    the Laplace scale ``grid * 2**24`` and the grid. When the rounding would take
    more than half of the ``eps 2**24`` steps, the release is the noise alone.
    """
    values = np.asarray(values, dtype=float)
    steps = eps * _LAPLACE_STEPS * (1 - _FLOAT_MARGIN)
    room = steps - max(values.size, 1)
    noise = discrete_laplace(1, _LAPLACE_STEPS, values.size, rng).reshape(values.shape)
    if room < _MIN_ROOM * steps:      # as for the Gaussian: the noise alone
        grid = _grid_within(sensitivity, steps)
        return noise * grid, grid * _LAPLACE_STEPS, grid
    grid = _grid_within(sensitivity, room)
    return (_steps(values, grid) + noise) * grid, grid * _LAPLACE_STEPS, grid


# --- post-processing draws ------------------------------------------------------

def standard_normal(size, rng):
    """Standard normal draws for the simulations that post-process released
    values: the inverse normal CDF (``scipy.special.ndtri``, a fixed function)
    of exact dyadic uniforms (:func:`unit_uniform`), so no floating-point
    sampler is called.

    Post-processing needs no exact law (it adds nothing to a release's privacy
    loss), only reproducible draws from the fit's generator: one 53-bit integer
    a draw, every value finite (the midpoints keep ``|z|`` below 8.3). Four
    times as fast as the discrete Gaussian it replaces (a fit's synthetic
    points draw two per point: 2.2 of 22 ms at 20,000 rows).
    """
    return ndtri(unit_uniform(size, rng))


def unit_uniform(size, rng):
    """Uniform draws on the midpoints of ``2**53`` equal cells of ``(0, 1)``."""
    # (k + 0.5) 2**-53 in place: the same values as the expression, one array
    draws = rng.integers(0, 2**53, size=size).astype(np.float64)
    draws += 0.5
    draws *= 2.0**-53
    return draws


def weighted_indices(weights, size, rng):
    """``size`` indices drawn with probabilities proportional to ``weights >= 0``.

    The weights are rounded to integers in units of ``2**-40`` of the largest
    (post-processing of released values); the draw is a uniform integer below
    their total.
    """
    weights = np.asarray(weights, dtype=float).ravel()
    integer = np.floor(weights / weights.max() * 2.0**40).astype(np.int64)
    cumulative = np.cumsum(integer)
    picks = rng.integers(0, cumulative[-1], size=size)
    return _bins_of(cumulative, picks)


#: Buckets of the picks' range in :func:`_bins_of` (a power of two, some forty
#: per cell of the largest histograms).
_BUCKETS = 16384


def _bins_of(cumulative, picks):
    """``searchsorted(cumulative, picks, side="right")`` for picks in
    ``[0, cumulative[-1])``, through equal buckets of that range: a pick's
    answer is at least its bucket's first cell, and is that cell unless a cell
    boundary lies between the bucket's start and the pick; only those picks are
    searched (a binary search for each of a hundred thousand picks cost twenty
    times their draws)."""
    top = int(cumulative[-1]) - 1
    shift = max(0, top.bit_length() - _BUCKETS.bit_length() + 1)
    starts = np.arange((top >> shift) + 1, dtype=np.int64) << shift
    bins = np.searchsorted(cumulative, starts, side="right")[picks >> shift]
    beyond = cumulative[bins] <= picks
    bins[beyond] = np.searchsorted(cumulative, picks[beyond], side="right")
    return bins


# --- the check behind the construction -------------------------------------------

def _tail_sums(weights):
    """``sum(weights[j + 1:])`` for every ``j``: exact in blocks, then compensated."""
    n_blocks = -(-weights.size // _BLOCK)
    padded = np.zeros(n_blocks * _BLOCK)
    padded[:weights.size] = weights
    blocks = padded.reshape(n_blocks, _BLOCK)
    within = np.cumsum(blocks[:, ::-1], axis=1)[:, ::-1]   # sums to each block's end
    later = [0.0] * n_blocks
    running = []
    for b in range(n_blocks - 1, -1, -1):
        later[b] = math.fsum(running)
        running.append(within[b, 0])
    sums = (within + np.array(later)[:, None]).ravel()[:weights.size]
    return np.append(sums[1:], 0.0)


def _unit_step_excess(scale=_UNIT):
    """``max_j s (h(j) - h(j - 1)) - 1`` for ``h = Phi^-1(F)`` of ``N_Z(0, scale)``.

    The inequality the exact Gaussian release rests on (module docstring): the
    returned excess must stay below ``tau``. Checked for ``j >= 0`` (the law is
    symmetric: ``h(-j-1) = -h(j)``) while ``P(X > j) >= 1e-300``.
    """
    sigma2 = float(scale.sigma2)
    # weights down to the smallest subnormal: the sums past the checked tail are whole
    width = int(math.sqrt(2 * sigma2 * 745)) + 2
    weights = np.exp(-np.arange(width, dtype=float) ** 2 / (2 * sigma2))
    total = weights[0] + 2 * math.fsum(_block_sums(weights[1:]))
    survival = _tail_sums(weights) / total            # P(X > j), j = 0, 1, ...
    survival = survival[survival >= _TAIL]
    h = -ndtri(survival)
    steps = np.diff(np.concatenate(([-h[0]], h)))      # h(-1) = -h(0)
    return float(np.max(steps) * math.sqrt(sigma2) - 1.0)


def _block_sums(values):
    """Sums of blocks of ``_BLOCK`` values (each accurate to ``_BLOCK`` ulps)."""
    n_blocks = -(-values.size // _BLOCK)
    padded = np.zeros(n_blocks * _BLOCK)
    padded[:values.size] = values
    return padded.reshape(n_blocks, _BLOCK).sum(axis=1)
