"""Unbounded private quantiles (Durfee 2023): no public range of the data is needed.

The search walks up a geometric grid ``t_i = lower + beta^i - 1`` and stops at the
first point whose noisy count of values below it reaches a noisy target. It is the
AboveThreshold (sparse vector) technique with exponential noise:

* each count ``c_i = #{x_j < t_i}`` has sensitivity 1 under replacement (moving one
  value changes every count by at most 1);
* the target ``q n`` gets ``Exp(eps/2)`` once and every count gets a fresh
  ``Exp(eps/2)``; the index of the first crossing is then ``eps``-DP (pure).

The grid has relative resolution ``beta - 1`` around ``lower`` (around 0 for the
fully unbounded version): data far from it on a small scale lose resolution, e.g.
values near ``1e4`` that spread by 0.1 are only resolved to about ``1e2``.

Both searches are vectorised: the data are sorted once, all grid counts come from
one ``searchsorted``, all exponential noises are drawn in one call (in the order a
step-by-step search would draw them) and the first crossing is found with
``argmax``: ``O(n log n + max_steps)``. The output has the same law as the
sequential search (the noise of the steps after the stop is drawn but unused).
"""

import math
import numbers
import warnings

import numpy as np

from ._calibration import check_eps

_LARGEST = np.finfo(float).max
# The grid must reach at least this far above its origin, so that realistic data
# sit inside it.
_MIN_REACH = 1e12


def _check_level(q):
    if isinstance(q, bool) or not isinstance(q, numbers.Real):
        raise TypeError(f"q must be a real number in (0, 1), got {q!r}.")
    q = float(q)
    if not 0 < q < 1:
        raise ValueError(f"q must lie strictly between 0 and 1, got {q!r}.")
    return q


def _check_grid(beta, max_steps):
    """Validate ``beta`` and ``max_steps`` alone and together."""
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise TypeError(f"beta must be a real number > 1, got {beta!r}.")
    beta = float(beta)
    if not (math.isfinite(beta) and beta > 1):
        raise ValueError(f"beta must be a finite number > 1, got {beta!r}.")
    if isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral):
        raise TypeError(f"max_steps must be an int >= 1, got {max_steps!r}.")
    max_steps = int(max_steps)
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}.")
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


def _check_lower(lower):
    if isinstance(lower, bool) or not isinstance(lower, numbers.Real):
        raise TypeError(f"lower must be a finite real number, got {lower!r}.")
    if not math.isfinite(lower):
        raise ValueError(f"lower must be finite, got {lower!r}.")
    return float(lower)


def _check_values(x, name="x"):
    x = np.asarray(x)
    if x.dtype == object or not (
        np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.bool_)
    ) or np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {x.dtype}.")
    x = x.astype(float, copy=False)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must contain only finite values.")
    return x


def _geometric_grid(lower, beta, max_steps):
    """``t_i = lower + beta^i - 1`` for ``i = 1..max_steps``, saturated at the
    largest float so that the counts stay defined past overflow."""
    steps = np.arange(1, max_steps + 1)
    with np.errstate(over="ignore"):
        grid = lower + np.expm1(steps * math.log(beta))
    return np.minimum(grid, _LARGEST)


def _search(sorted_x, q, eps, rng, lower, beta, max_steps):
    """One AboveThreshold search on sorted values.

    Returns ``(grid, stop)``: ``stop`` is the 0-based index of the grid point where
    the search stopped, or ``None`` when it ran into ``max_steps``.
    """
    noise_mean = 2.0 / eps  # Exp(eps/2) has mean 2/eps
    target = q * sorted_x.size + rng.exponential(noise_mean)
    grid = _geometric_grid(lower, beta, max_steps)
    counts = np.searchsorted(sorted_x, grid, side="left")  # #{x_j < t_i}
    crossed = counts + rng.exponential(noise_mean, size=max_steps) >= target
    stop = int(np.argmax(crossed))
    return grid, (stop if crossed[stop] else None)


def _warn_cap(max_steps, beta, where):
    warnings.warn(
        f"The private quantile search{where} reached max_steps={max_steps} without "
        f"stopping (grid end beta**max_steps = {beta:g}**{max_steps}); the result "
        "is the end of the grid. Increase max_steps or beta if the data can be that "
        "large.",
        UserWarning,
        stacklevel=3,
    )


def _record(ledger, step, eps, noise_scale, q, variant):
    if ledger is not None:
        ledger.record(step=step, mechanism="durfee quantile", eps=eps, delta=0.0,
                      sensitivity=1.0, sensitivity_norm="count",
                      noise_scale=noise_scale, level=q, variant=variant)


def upper_quantile(x, q, eps, rng, *, lower=0.0, beta=1.01, max_steps=5000,
                   ledger=None, step="upper quantile"):
    """Private ``q``-quantile of values bounded below only (Durfee 2023, one-sided).

    Walks ``t_i = lower + beta^i - 1`` for ``i = 1, 2, ...`` and returns the first
    ``t_i`` with ``c_i + Exp(eps/2) >= q n + Exp(eps/2)``, where
    ``c_i = #{x_j < t_i}`` and ``Exp(r)`` has mean ``1/r`` (fresh noise per step,
    one draw for the target).

    Privacy: pure ``eps``-DP under replacement adjacency. Each count query has
    sensitivity 1 (one changed value moves every count by at most 1) and ``n`` is
    public; the AboveThreshold-style search with ``Exp(eps/2)`` on the threshold
    and on each query releases only the stopping index, which is ``eps``-DP.

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
    """
    q = _check_level(q)
    eps = check_eps(eps)
    beta, max_steps = _check_grid(beta, max_steps)
    lower = _check_lower(lower)
    x = _check_values(x)
    if np.any(x < lower):
        raise ValueError(f"all values of x must be >= lower={lower!r}.")
    grid, stop = _search(np.sort(x), q, eps, rng, lower, beta, max_steps)
    _record(ledger, step, eps, 2.0 / eps, q, "one-sided")
    if stop is None:
        _warn_cap(max_steps, beta, "")
        return float(grid[-1])
    return float(grid[stop])


def quantile(x, q, eps, rng, *, beta=1.01, max_steps=5000, ledger=None,
             step="quantile"):
    """Private ``q``-quantile of unbounded real values (Durfee 2023, two-sided).

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
    beta : float, default=1.01
    max_steps : int, default=5000
        Cap per side; ``beta**max_steps`` must reach at least ``1e12``.
    ledger : PrivacyLedger, optional
        Receives one entry with the whole ``eps`` (``noise_scale`` is the mean
        ``4/eps`` of the noise of each side).
    step : str, default="quantile"

    Returns
    -------
    float
    """
    q = _check_level(q)
    eps = check_eps(eps)
    beta, max_steps = _check_grid(beta, max_steps)
    x = np.sort(_check_values(x))
    side_eps = eps / 2
    # Both maps are monotone, so sorting x once sorts both transformed samples.
    with np.errstate(over="ignore"):
        positive = np.minimum(np.maximum(beta * x + (beta - 1), 0.0), _LARGEST)
        negative = np.minimum(np.maximum(-beta * x[::-1] + (beta - 1), 0.0), _LARGEST)
    grid, stop_pos = _search(positive, q, side_eps, rng, 0.0, beta, max_steps)
    _, stop_neg = _search(negative, 1 - q, side_eps, rng, 0.0, beta, max_steps)
    _record(ledger, step, eps, 2.0 / side_eps, q, "two-sided")
    if stop_pos is None or stop_neg is None:
        _warn_cap(max_steps, beta, " (one side of the two-sided search)")
    # Stopping at 0-based index k means k+ = k; beta^k - 1 is the grid point before.
    if stop_pos is not None and stop_pos > 0:
        return float(grid[stop_pos - 1])
    if stop_neg is not None and stop_neg > 0:
        return -float(grid[stop_neg - 1])
    return 0.0
