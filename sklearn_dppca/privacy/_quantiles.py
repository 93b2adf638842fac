"""Unbounded private quantiles (Durfee 2023): no public range of the data is needed.

The search walks up a geometric grid ``t_i = lower + beta^i - 1`` and stops at the
first point whose noisy count of values below it reaches a noisy target. It is the
AboveThreshold (sparse vector) technique with one-sided noise:

* each count ``c_i = #{x_j < t_i}`` has sensitivity 1 under replacement (moving one
  value changes every count by at most 1);
* the target ``q n`` gets ``Geo(eps/2)`` once and every count gets a fresh
  ``Geo(eps/2)``; the index of the first crossing is then ``eps``-DP (pure).
  ``Geo(a)`` is the integer exponential, ``P(k)`` proportional to ``exp(-a k)``
  for ``k >= 0`` (rate ``a`` rational, just below ``eps/2``), drawn exactly from
  uniform integers (Durfee's searches use the continuous exponential; the
  argument is the same for the integer one, see ``_count_search``).

The grid has relative resolution ``beta - 1`` around ``lower`` (around 0 for the
fully unbounded version): data far from it on a small scale lose resolution, e.g.
values near ``1e4`` that spread by 0.1 are only resolved to about ``1e2``.

The data are binned on the grid (``O(n)``: each value's bin comes from the
grid's formula and is checked against its neighbours) and the bins summed into
the counts; the noise is one integer per grid point.
"""

import functools
import math

import numpy as np

from .._validation import UNIT_OPEN, Interval, check_param, check_values, warn_user
from ._calibration import check_eps
from ._discrete import discrete_geometric, laplace_rate
from ._integer_noise import counts_below, first_crossing
from ._warnings import PrivacyUtilityWarning

_LARGEST = np.finfo(float).max
# The grid must reach at least this far above its origin, so that realistic data
# sit inside it.
_MIN_REACH = 1e12


#: The level of a quantile, strictly between 0 and 1.
_LEVEL = [UNIT_OPEN]
#: The base of the geometric grid, a finite number > 1.
_BETA = [Interval("real", 1, None, closed="neither")]


def _check_grid(beta, max_steps):
    """Validate ``beta`` and ``max_steps`` alone, then together (the grid's reach)."""
    beta = check_param(beta, _BETA, "beta")
    max_steps = check_param(max_steps, [Interval("int", 1, None)], "max_steps")
    log_reach = max_steps * math.log(beta)
    if log_reach < math.log(_MIN_REACH):
        needed = math.ceil(math.log(_MIN_REACH) / math.log(beta))
        raise ValueError(
            f"beta={beta!r} with max_steps={max_steps} makes a grid that only reaches "
            f"beta**max_steps = {math.exp(log_reach):.3g}; it must reach at least "
            f"{_MIN_REACH:.0e} to cover realistic data. Increase beta or use "
            f"max_steps >= {needed}."
        )
    return beta, max_steps


@functools.lru_cache(maxsize=64)
def _geometric_grid(lower, beta, max_steps):
    """``t_i = lower + beta^i - 1`` for ``i = 1..max_steps``, saturated at the
    largest float so that the counts stay defined past overflow. Read-only and
    kept: a fit asks for the same few public grids once per column and block."""
    steps = np.arange(1, max_steps + 1)
    with np.errstate(over="ignore"):
        grid = lower + np.expm1(steps * math.log(beta))
    grid = np.minimum(grid, _LARGEST)
    grid.flags.writeable = False
    return grid


@functools.lru_cache(maxsize=64)
def _even_grid(low, high, n_points):
    """``linspace(low, high, n_points)``, read-only and kept (as
    :func:`_geometric_grid`)."""
    grid = np.linspace(low, high, n_points)
    grid.flags.writeable = False
    return grid


def _counts_below(values, grid, position):
    """``#{x < t}`` for every point ``t`` of ``grid``: all a search reads of the
    data (counts of a public grid, which blocks of rows can count apart and add).

    Each value is binned into the sorted grid and the bins are summed, with no
    sort of the values. ``searchsorted(grid, x, "right")`` is the number of grid
    points at or below ``x``, so ``x < t_i`` exactly when that number is at most
    ``i``; NaN bins past the end, as a sort would put it. ``position`` maps
    values to their approximate bins in closed form (the grid's own formula, see
    :func:`_geometric_position`): each guess is checked against the grid and a
    binary search places the values it missed, so the counts are exact whatever
    the guess, and a good guess saves the search; the check, the search and the
    count are one compiled pass
    (:func:`~sklearn_dppca.privacy._integer_noise.counts_below`).
    """
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    guess = np.ascontiguousarray(position(values), dtype=np.float64)
    return counts_below(values, guess, np.ascontiguousarray(grid, dtype=np.float64))


def geometric_counts(values, lower, beta, max_steps):
    """:func:`_counts_below` on :func:`_geometric_grid` ``(lower, beta, max_steps)``."""
    return _counts_below(values, _geometric_grid(lower, beta, max_steps),
                         _geometric_position(lower, beta))


def even_counts(values, low, high, n_points):
    """:func:`_counts_below` on the even grid ``linspace(low, high, n_points)``."""
    step = (high - low) / (n_points - 1)

    def position(values):
        with np.errstate(over="ignore", invalid="ignore"):
            return (values - low) / step + 1.0
    return _counts_below(values, _even_grid(low, high, n_points), position)


def scale_free_counts(values):
    """:func:`_counts_below` on :data:`_SCALE_FREE_GRID`."""
    return _counts_below(values, _SCALE_FREE_GRID, _scale_free_position)


def _geometric_position(lower, beta):
    """The closed-form bins of :func:`_geometric_grid`'s points: a value ``x``
    is at or above ``floor(log(1 + x - lower) / log(beta))`` of them."""
    log_beta = math.log(beta)

    def position(values):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return np.log1p(values - lower) / log_beta
    return position


def _count_search(counts, n, q, eps, rng):
    """The 0-based index where the search on a grid stopped, or None (cap).

    ``counts[i] = #{x_j < t_i}`` on the grid and ``n`` the number of values: all
    the search reads of the data. Counts of a public grid are sums over any split
    of the rows, so blocks of rows can count apart and add their counts (every
    fit's row blocks, :mod:`sklearn_dppca._data._rows`); the noise is drawn here, once.

    The search stops at the first point with ``c_i + E_i >= q n + E_0``, the
    ``E`` independent one-sided geometric integers of rate ``a <= eps/2``
    (``P(E = k)`` proportional to ``exp(-a k)``, ``k >= 0``: the integer
    exponential, drawn exactly from uniform integers). A grid point of gap
    ``g = ceil(q n + E_0 - c_i)`` is crossed with probability ``exp(-a g)``: one
    exact Bernoulli a point, up to the stop, from a generator of the search's own
    (the caller's generator moves by one draw whatever the data).
    Privacy (pure ``eps``): the counts are integers that one replaced row moves by
    at most 1, all in one direction; mapping the threshold's noise ``E_0`` and the
    stopping point's ``E_k`` to ``E + 1`` (at most a factor ``exp(a)`` each in
    probability) carries every outcome of one data set into the same outcome of
    its neighbour, the AboveThreshold argument of the continuous case step by step.
    """
    s, t = laplace_rate(eps)    # s / t <= eps / 2
    # the search draws from a generator of its own, seeded by one draw of ``rng``:
    # ``rng`` moves by one draw whatever the data, so its later state says nothing
    # of a stop that is not released (quantile() runs two searches, keeps one)
    rng = np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
    target = q * n + int(discrete_geometric(s, t, 1, rng)[0])
    stop = first_crossing(rng, counts, target, s, t)
    return None if stop < 0 else int(stop)


def _warn_cap(max_steps, beta, where):
    warn_user(
        f"The private quantile search{where} reached max_steps={max_steps} without "
        f"stopping (grid end beta**max_steps = {beta:g}**{max_steps}); the result "
        "is the end of the grid. Increase max_steps or beta if the data can be that "
        "large.",
        PrivacyUtilityWarning,
    )


def _record(ledger, step, eps, noise_scale, q, variant):
    if ledger is not None:
        ledger.record(step=step, mechanism="durfee quantile", eps=eps, delta=0.0,
                      sensitivity=1.0, sensitivity_norm="count",
                      noise_scale=noise_scale, level=q, variant=variant)


def upper_quantile(x, q, eps, rng, *, lower=0.0, beta=1.01, max_steps=5000,
                   ledger=None, step="upper quantile"):
    """Release a ``q``-quantile of values bounded below only (Durfee 2023, one-sided).

    Walks ``t_i = lower + beta^i - 1`` for ``i = 1, 2, ...`` and returns the first
    ``t_i`` with ``c_i + Geo(eps/2) >= q n + Geo(eps/2)``, where
    ``c_i = #{x_j < t_i}`` and ``Geo(r)`` has mean about ``1/r`` (fresh noise per step,
    one draw for the target).

    Privacy: pure ``eps``-DP under replacement adjacency. Each count query has
    sensitivity 1 (one changed value moves every count by at most 1) and ``n`` is
    public; the AboveThreshold-style search with ``Geo(eps/2)`` on the threshold
    and on each query releases only the stopping index, which is ``eps``-DP.

    Levels near 1 can overshoot far: with probability ``exp(-(1 - q) n eps / 2)``
    the threshold noise lifts the target above ``n``, which no count reaches; the
    search then stops only on a count's own noise and can run well past the
    largest value (at a tail ``(1 - q) n`` of one noise mean ``2 / eps``, 31% of
    the searches on 1,000 uniform values ended past the largest). Keep
    ``(1 - q) n`` several times ``2 / eps``.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite values, all ``>= lower``.
    q : float
        Level in (0, 1).
    eps : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        The only source of randomness.
    lower : float, default=0.0
        Public lower bound of the values; the grid starts just above it.
    beta : float, default=1.01
        Grid ratio, > 1; the result has relative resolution ``beta - 1``.
    max_steps : int, default=5000
        Cap on the number of grid points. ``beta**max_steps`` must reach at least
        ``1e12``. Hitting the cap emits a ``UserWarning``.
    ledger : PrivacyLedger, optional
        Receives one entry (mechanism ``"durfee quantile"``, delta 0, sensitivity 1
        with norm ``"count"``, ``noise_scale`` the mean ``2/eps`` of the noise).
    step : str, default="upper quantile"
        Name of this call in the ledger.

    Returns
    -------
    float
        The grid point where the search stopped (never below ``lower``).

    See Also
    --------
    positive_quantile : A geometric grid over the whole positive range.
    quantile : Values unbounded on both sides.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import upper_quantile
    >>> x = np.random.default_rng(0).uniform(0, 100, size=5000)
    >>> q90 = upper_quantile(x, 0.9, 1.0, np.random.default_rng(1))
    >>> bool(80 < q90 < 95)
    True
    """
    q = check_param(q, _LEVEL, "q")
    eps = check_eps(eps)
    beta, max_steps = _check_grid(beta, max_steps)
    lower = check_param(lower, [Interval("real")], "lower")
    x = check_values(x)
    if np.any(x < lower):
        raise ValueError(f"all values of x must be >= lower={lower!r}.")
    grid = _geometric_grid(lower, beta, max_steps)
    counts = geometric_counts(x, lower, beta, max_steps)
    return _upper_from_counts(counts, x.size, q, eps, rng, grid, beta, ledger, step)


def _upper_from_counts(counts, n, q, eps, rng, grid, beta, ledger, step):
    """:func:`upper_quantile` from the counts below the points of its ``grid``
    (of ratio ``beta``)."""
    stop = _count_search(counts, n, q, eps, rng)
    _record(ledger, step, eps, 2.0 / eps, q, "one-sided")
    warn_if_far(n, q, eps, step)
    if stop is None:
        _warn_cap(grid.size, beta, "")
        return float(grid[-1])
    return float(grid[stop])


def quantile(x, q, eps, rng, *, beta=1.01, max_steps=5000, ledger=None,
             step="quantile", warn=True):
    """Release a ``q``-quantile of unbounded real values (Durfee 2023, two-sided).

    Runs two one-sided searches with ``eps/2`` each, always both: the positive side
    on ``max(beta x + beta - 1, 0)`` at level ``q`` and the negative side on
    ``max(-beta x + beta - 1, 0)`` at level ``1 - q``. With ``k+`` and ``k-`` the
    0-based steps where they stopped, the result is ``beta^{k+} - 1`` if the
    positive side stopped before its cap with ``k+ > 0``, else
    ``-(beta^{k-} - 1)`` if the negative side did so with ``k- > 0``, else 0.
    Choosing between the sides is post-processing.

    Privacy: pure ``eps``-DP under replacement adjacency. Each side is the
    one-sided search of :func:`upper_quantile` (count queries of sensitivity 1:
    one changed row changes one transformed value) at ``eps/2``; the two compose
    to ``eps``.

    The grid is geometric around 0, so results have relative resolution
    ``beta - 1``: data far from 0 on a small scale lose resolution. Values with
    ``|x| > largest float / beta`` saturate the transformed sample and cannot be
    resolved (the search of that side runs into its cap).

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite values.
    q : float
        Level in (0, 1).
    eps : float
        Privacy parameter, > 0 (each side uses ``eps/2``).
    rng : numpy.random.Generator
        The only source of randomness.
    beta : float, default=1.01
        Grid ratio, > 1; the result has relative resolution ``beta - 1``.
    max_steps : int, default=5000
        Cap per side; ``beta**max_steps`` must reach at least ``1e12``.
    ledger : PrivacyLedger, default=None
        Receives one entry with the whole ``eps`` (``noise_scale`` is the mean
        ``4/eps`` of the noise of each side).
    step : str, default="quantile"
        Name of this call in the ledger.
    warn : bool, default=True
        Emit a :class:`PrivacyUtilityWarning` when the search probably stops far
        from ``q`` (off for a coarse first stage whose error a later stage
        absorbs).

    Returns
    -------
    float
        The released quantile (0 when neither side stopped past its first step).

    See Also
    --------
    upper_quantile : The one-sided search it runs on each side.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import quantile
    >>> x = np.random.default_rng(0).normal(-20.0, 1.0, size=5000)
    >>> median = quantile(x, 0.5, 1.0, np.random.default_rng(1))
    >>> bool(-21 < median < -19)
    True
    """
    q = check_param(q, _LEVEL, "q")
    eps = check_eps(eps)
    beta, max_steps = _check_grid(beta, max_steps)
    x = check_values(x)
    grid = _geometric_grid(0.0, beta, max_steps)
    positive, negative = _two_sided_values(x, beta)
    return _two_sided_release(geometric_counts(positive, 0.0, beta, max_steps),
                              geometric_counts(negative, 0.0, beta, max_steps),
                              x.size, q, eps, rng, grid, beta, ledger, step, warn)


def _two_sided_release(positive_counts, negative_counts, n, q, eps, rng, grid, beta,
                       ledger, step, warn):
    """:func:`quantile` from each side's counts below the points of ``grid``."""
    value, capped = _two_sided_from_counts(positive_counts, negative_counts, n, q, eps,
                                           rng, grid)
    _record(ledger, step, eps, 4.0 / eps, q, "two-sided")
    if capped:
        _warn_cap(grid.size, beta, " (one side of the two-sided search)")
    if warn:
        warn_if_far(n, q, eps / 2, step)
    return value


def _two_sided_values(x, beta):
    """The values each side of :func:`quantile` searches:
    ``max(beta x + beta - 1, 0)`` and ``max(-beta x + beta - 1, 0)``."""
    with np.errstate(over="ignore"):
        positive = np.minimum(np.maximum(beta * x + (beta - 1), 0.0), _LARGEST)
        negative = np.minimum(np.maximum(-beta * x + (beta - 1), 0.0), _LARGEST)
    return positive, negative


def _two_sided_from_counts(positive_counts, negative_counts, n, q, eps, rng, grid):
    """:func:`quantile`'s two searches from each side's counts below the points of ``grid``."""
    side_eps = eps / 2
    stop_pos = _count_search(positive_counts, n, q, side_eps, rng)
    stop_neg = _count_search(negative_counts, n, 1 - q, side_eps, rng)
    capped = stop_pos is None or stop_neg is None
    # Stopping at 0-based index k means k+ = k; beta^k - 1 is the grid point before.
    if stop_pos is not None and stop_pos > 0:
        return float(grid[stop_pos - 1]), capped
    if stop_neg is not None and stop_neg > 0:
        return -float(grid[stop_neg - 1]), capped
    return 0.0, capped


# Measured: a search with eps stops about (2/eps) x 1 to 2.3 ranks below its target
# on smooth data (10,000 values, levels 0.5 to 0.97, eps 0.01 to 0.05, scale-free
# grid); 3 keeps a margin.
_SLACK_FACTOR = 3.0
# How far below its level (in share of the values) a search may stop unwarned.
_FAR_LEVEL = 0.1


def rank_slack(eps):
    """Typical number of ranks by which a private quantile search stops early.

    The target and every count carry ``Geo(eps/2)`` noise (mean about ``2/eps``); the
    search stops at the first count whose noise bridges the remaining gap, about
    ``3 * 2/eps`` ranks before the target. A public number (``eps`` only).
    """
    return _SLACK_FACTOR * 2.0 / eps


def warn_if_far(n, q, eps, step):
    """PrivacyUtilityWarning when a search with ``eps`` probably stops far from ``q``.

    Public rule (``n`` and ``eps`` only; nothing about the data decides it): the
    :func:`rank_slack` exceeds 10% of the ``n`` values, i.e. the search probably
    stops more than 10 points of level below ``q``; the message gives the level
    it probably reaches (public: ``q``, ``n`` and ``eps``) and what that does to
    the statistic it bounds. ``eps`` is the budget of one one-sided search.
    """
    slack = rank_slack(eps)
    if slack > _FAR_LEVEL * n:
        reached = max(q - slack / max(n, 1), 0.0)
        warn_user(
            f"The private quantile search {step!r} (level {q:g}) has a budget too "
            f"small for its {n} values: it probably stopped far from its level "
            f"(about {slack:.0f} values early, near level {reached:.2f}), so it clips "
            "more than its level says and what it bounds comes out lower. Give this "
            "step more eps, or use more rows.",
            PrivacyUtilityWarning,
        )


# The grid of positive_quantile: ratio 1.05 from the smallest normal float up to a
# sixteenth of the largest (29,000 points), so 5% relative resolution in any unit
# (plenty for a clip bound); the headroom keeps 2 C and sums of a few bounds finite
# for the callers. A finer grid puts more points below the data, each a chance for
# a search short of budget to stop there (1.01: five times as many).
_SCALE_FREE_BETA = 1.05
_TINY = float(np.finfo(float).tiny)
_SCALE_FREE_TOP = _LARGEST / 16


def _scale_free_grid():
    log_ratio = math.log(_SCALE_FREE_BETA)
    n_points = math.ceil((math.log(_SCALE_FREE_TOP) - math.log(_TINY)) / log_ratio)
    grid = np.exp(math.log(_TINY) + np.arange(1, n_points + 1) * log_ratio)
    return np.minimum(grid, _SCALE_FREE_TOP)


_SCALE_FREE_GRID = _scale_free_grid()
_SCALE_FREE_POINTS = len(_SCALE_FREE_GRID)


def _scale_free_position(values):
    """The closed-form bins of :data:`_SCALE_FREE_GRID` (see :func:`_counts_below`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.log(values) - math.log(_TINY)) / math.log(_SCALE_FREE_BETA)


#: The chance a search may have of stopping below the data.
_FALSE_STOP = 0.05
#: A median's search stops near its level when its rank slack is at most this
#: share of its values (the rule of
#: :func:`~sklearn_dppca.privacy._quantiles.warn_if_far`); a search for a higher
#: level may stop as far as the median.
_FAR_SHARE = 0.1
#: Grid points a search may cross below the data: the scale-free grid, the
#: two-sided grid (5,000 points each side), the radius grid and the fine centre's.
_GRID_POINTS = {"scale-free": _SCALE_FREE_POINTS, "two-sided": 10_000,
                "radius": 5_000, "interval": 40_001}
def search_informative(n_values, level, eps, grid):
    """Whether a search of ``n_values`` values at ``level`` with ``eps`` on the
    grid ``grid`` (``"scale-free"``, ``"two-sided"``, ``"radius"``,
    ``"interval"``) reaches the data and stops above the median (public: no data).

    (a) The chance that it stops at one of the grid's ``G`` points below the data,
    at most ``G exp(-eps q m / 2) / 2`` (each point's count noise must bridge the
    target ``q m`` plus its own noise; a union bound over the points), is at most
    :data:`_FALSE_STOP`; (b) its :func:`rank_slack` is at most ``(q - 0.5) m``
    (at least 10% of ``m``): it stops above the median of its values.
    """
    if n_values < 1 or eps <= 0:
        return False
    margin = max(level - 0.5, _FAR_SHARE)
    return reaches_the_data(level * n_values, eps, grid) \
        and rank_slack(eps) <= margin * n_values


def reaches_the_data(gap, eps, grid):
    """Whether a search with ``eps`` on ``grid`` whose target lies ``gap`` counts
    above the counts of the grid's points below the data stops at one of those
    points with a chance of at most :data:`_FALSE_STOP` (the union bound of
    :func:`search_informative`, (a)). Values tied at the grid's bottom (zeros)
    count below every point: they shorten the gap."""
    if gap <= 0 or eps <= 0:
        return False
    return _GRID_POINTS[grid] * 0.5 * math.exp(-eps * gap / 2.0) <= _FALSE_STOP


def positive_quantile(x, q, eps, rng, *, ledger=None, step="positive quantile",
                      warn=True):
    """Release a ``q``-quantile of non-negative values, in any unit.

    The one-sided search of :func:`upper_quantile` on the grid
    ``t_i = tiny * 1.05^i`` (``tiny`` the smallest normal float) up to a sixteenth
    of the largest float: geometric on the whole positive range, so the result has
    5% relative resolution whether the values are of order ``1e-12`` or ``1e12``, where
    :func:`upper_quantile` resolves only down to ``beta - 1`` absolute. Zeros lie
    below every grid point. Searching upwards from the bottom, the search stops
    early when one count's noise bridges the gap to ``q n``: about
    :func:`rank_slack` ranks early with enough budget, but near the bottom of the
    range when ``n eps`` is below about 30 (:func:`warn_if_far` warns long
    before that).

    Privacy: pure ``eps``-DP, as :func:`upper_quantile` (count queries of
    sensitivity 1 under replacement; AboveThreshold with ``Geo(eps/2)`` noise).

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite values ``>= 0``.
    q : float
        Level in (0, 1).
    eps : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        The only source of randomness.
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="positive quantile"
        Name of this call in the ledger.
    warn : bool, default=True
        Emit a :class:`PrivacyUtilityWarning` when the search probably stops far
        from ``q`` (a caller running many searches may warn once for all of them
        instead).

    Returns
    -------
    float
        A grid point: positive and finite.

    See Also
    --------
    upper_quantile : The same search on an additive grid above a public bound.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import positive_quantile
    >>> x = np.random.default_rng(0).uniform(0, 1e-6, size=5000)
    >>> q90 = positive_quantile(x, 0.9, 1.0, np.random.default_rng(1))
    >>> bool(8e-7 < q90 < 9.5e-7)
    True
    """
    q = check_param(q, _LEVEL, "q")
    eps = check_eps(eps)
    x = check_values(x)
    if np.any(x < 0):
        raise ValueError("all values of x must be >= 0.")
    counts = scale_free_counts(x)
    return _positive_from_counts(counts, x.size, q, eps, rng, ledger, step, warn)


def _positive_from_counts(counts, n, q, eps, rng, ledger, step, warn):
    """:func:`positive_quantile` from the counts below the scale-free grid's points."""
    stop = _count_search(counts, n, q, eps, rng)
    _record(ledger, step, eps, 2.0 / eps, q, "scale-free")
    if warn:
        warn_if_far(n, q, eps, step)
    return float(_SCALE_FREE_GRID[-1 if stop is None else stop])


def interval_quantile(x, q, eps, rng, *, low, high, n_points=40_001, ledger=None,
                      step="interval quantile"):
    """Release a ``q``-quantile on an evenly spaced grid over ``[low, high]``.

    The one-sided search of :func:`upper_quantile` on ``n_points`` equally spaced
    points: absolute resolution ``(high - low) / (n_points - 1)`` wherever the
    quantile lies, where the geometric grids resolve only a fraction of its
    distance to their origin. Values below ``low`` count below every point; the
    search returns ``high`` when it never stops. ``low`` and ``high`` must be
    public (for example derived from earlier private releases).

    Privacy: pure ``eps``-DP (count queries of sensitivity 1, AboveThreshold).

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite values.
    q : float
        Level in (0, 1).
    eps : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        The only source of randomness.
    low, high : float
        Public ends of the grid: finite, ``low < high``.
    n_points : int, default=40001
        Number of grid points, >= 2.
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="interval quantile"
        Name of this call in the ledger.

    Returns
    -------
    float
        The grid point where the search stopped (``high`` if it never stopped).

    See Also
    --------
    upper_quantile : The same search on a geometric grid.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import interval_quantile
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=5000)
    >>> median = interval_quantile(x, 0.5, 1.0, np.random.default_rng(1),
    ...                            low=-2.0, high=2.0)
    >>> bool(-0.1 < median < 0.1)
    True
    """
    q = check_param(q, _LEVEL, "q")
    eps = check_eps(eps)
    low = check_param(low, [Interval("real")], "low")
    high = check_param(high, [Interval("real")], "high")
    if not low < high:
        raise ValueError(f"low must be below high, got low={low!r}, high={high!r}.")
    x = check_values(x)
    grid = _even_grid(low, high, int(n_points))
    counts = even_counts(x, low, high, int(n_points))
    return _interval_from_counts(counts, x.size, q, eps, rng, grid, ledger, step)


def _interval_from_counts(counts, n, q, eps, rng, grid, ledger, step):
    """:func:`interval_quantile` from the counts below the points of its ``grid``."""
    stop = _count_search(counts, n, q, eps, rng)
    _record(ledger, step, eps, 2.0 / eps, q, "interval")
    warn_if_far(n, q, eps, step)
    return float(grid[-1 if stop is None else stop])
