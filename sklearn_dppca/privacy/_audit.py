"""Empirical privacy auditing: a statistical lower bound on ``eps`` from samples.

If a mechanism ``M`` is ``(eps, delta)``-DP, then for neighbouring inputs ``D``,
``D'`` and every event ``E``: ``P[M(D) in E] <= exp(eps) P[M(D') in E] + delta``.
Running ``M`` many times on ``D`` and on ``D'`` and estimating both probabilities
with confidence bounds gives, for one event,

    eps >= ln((lower bound of P[M(D) in E] - delta) / upper bound of P[M(D') in E])

with the stated confidence. A bound above the claimed ``eps`` means the claim is
false (or the audit was unlucky, with probability at most ``alpha``); a bound
below it proves nothing but is the expected outcome for a correct mechanism. The
auditor is only as sharp as the neighbours and the scalar statistic it is given:
choose the worst-case neighbours and a statistic that separates them.
"""

import numpy as np
from scipy.special import betaincinv

from .._validation import UNIT_OPEN, Interval, check_param
from ._calibration import check_delta


def clopper_pearson(k, n, alpha=0.05):
    """Compute the exact (Clopper-Pearson) confidence interval of a binomial rate.

    Parameters
    ----------
    k : int or array-like of int
        Number of successes, ``0 <= k <= n``.
    n : int
        Number of trials, ``>= 1``.
    alpha : float, default=0.05
        The interval covers the rate with probability at least ``1 - alpha``;
        each end on its own is a one-sided bound at level ``1 - alpha/2``.

    Returns
    -------
    lower : float or ndarray
        Lower end of the interval (0 where ``k = 0``), of the shape of ``k``.
    upper : float or ndarray
        Upper end of the interval (1 where ``k = n``), of the shape of ``k``.

    Examples
    --------
    >>> from sklearn_dppca.privacy import clopper_pearson
    >>> lower, upper = clopper_pearson(5, 10)
    >>> round(lower, 3), round(upper, 3)
    (0.187, 0.813)
    """
    n = check_param(n, [Interval("int", 1, None)], "n")
    alpha = check_param(alpha, [UNIT_OPEN], "alpha")
    k = np.asarray(k)
    if not np.issubdtype(k.dtype, np.integer) or np.any((k < 0) | (k > n)):
        raise ValueError(f"k must be integers in [0, n={n}].")
    k = k.astype(float)
    # Beta quantiles of the exact interval; the ends at k = 0 and k = n are 0 and 1
    # (their Beta parameters would be 0, so feed a valid placeholder and overwrite).
    # Beta(a, b) quantile at level x: betaincinv(a, b, x).
    lower = np.where(k > 0, betaincinv(np.maximum(k, 1), n - k + 1, alpha / 2), 0.0)
    upper = np.where(k < n, betaincinv(k + 1, np.maximum(n - k, 1), 1 - alpha / 2),
                     1.0)
    if lower.ndim == 0:
        return float(lower), float(upper)
    return lower, upper


def _check_stats(stats, name):
    stats = np.asarray(stats, dtype=float).ravel()
    if stats.size < 2 or np.any(np.isnan(stats)):
        raise ValueError(f"{name} must hold at least 2 statistics and no NaN.")
    return stats


def _event_counts(stats, thresholds):
    """Counts of ``S > t`` and of ``S <= t`` for each threshold ``t``."""
    at_most = np.searchsorted(np.sort(stats), thresholds, side="right")
    return stats.size - at_most, at_most


def _eps_bounds(stats_a, stats_b, thresholds, delta, alpha):
    """Lower confidence bounds on eps for every test, as a flat array.

    The tests are the events ``S > t`` and ``S <= t`` in both directions (``D``
    against ``D'`` and ``D'`` against ``D``); each combines a lower bound on the
    first rate and an upper bound on the second, one-sided at ``alpha/2`` each.
    """
    above_a, below_a = _event_counts(stats_a, thresholds)
    above_b, below_b = _event_counts(stats_b, thresholds)
    bounds = []
    for (k_first, n_first), (k_second, n_second) in (
        ((above_a, stats_a.size), (above_b, stats_b.size)),
        ((below_a, stats_a.size), (below_b, stats_b.size)),
        ((above_b, stats_b.size), (above_a, stats_a.size)),
        ((below_b, stats_b.size), (below_a, stats_a.size)),
    ):
        first_lower, _ = clopper_pearson(k_first, n_first, alpha)
        _, second_upper = clopper_pearson(k_second, n_second, alpha)
        excess = first_lower - delta
        # second_upper > 0 always; the placeholder keeps log away from excess <= 0.
        bounds.append(np.where(excess > 0,
                               np.log(np.maximum(excess, 1e-300) / second_upper), 0.0))
    return np.concatenate(bounds)


def empirical_eps_lower_bound(stats_a, stats_b, delta, *, alpha=0.05,
                              n_thresholds=100, selection_fraction=0.5):
    """Lower confidence bound on the ``eps`` of a mechanism from its outputs.

    ``stats_a`` and ``stats_b`` are scalar statistics of independent runs of the
    mechanism on neighbouring inputs ``D`` and ``D'``. Tests are the events
    ``S > t`` and ``S <= t`` for thresholds ``t``, in both directions. Each test
    bounds ``eps`` from ``P_D[E] <= exp(eps) P_D'[E] + delta`` with a
    Clopper-Pearson lower bound on the first rate and an upper bound on the second.

    A held-out split keeps the result a valid confidence bound although the best
    test is picked from the data: the first ``selection_fraction`` of each sample
    proposes up to ``n_thresholds`` thresholds (pooled quantiles) and picks the test
    with the highest bound; only that test is then evaluated on the remaining
    runs, at level ``alpha``. The runs must be independent and identically
    distributed (their order carries no information).

    Parameters
    ----------
    stats_a, stats_b : array-like of shape (n_runs,)
        Statistics of the runs on ``D`` and on ``D'``.
    delta : float
        The ``delta`` of the claim being audited, in [0, 1).
    alpha : float, default=0.05
        With probability at least ``1 - alpha`` the result does not exceed the
        true ``eps`` of a mechanism that is ``(eps, delta)``-DP.
    n_thresholds : int, default=100
        Number of candidate thresholds.
    selection_fraction : float, default=0.5
        Share of the runs used to choose the test, in (0, 1).

    Returns
    -------
    float
        The lower bound, ``>= 0`` (0 when no test shows anything).

    Examples
    --------
    Audit the Laplace mechanism at ``eps = 1`` on a counting query: the bound
    must stay below the claimed ``eps``.

    >>> import numpy as np
    >>> from sklearn_dppca.privacy import empirical_eps_lower_bound
    >>> rng = np.random.default_rng(0)
    >>> on_d = 0.0 + rng.laplace(scale=1.0, size=20_000)
    >>> on_neighbour = 1.0 + rng.laplace(scale=1.0, size=20_000)
    >>> bound = empirical_eps_lower_bound(on_d, on_neighbour, delta=0.0)
    >>> 0.0 < bound <= 1.0
    True
    """
    stats_a = _check_stats(stats_a, "stats_a")
    stats_b = _check_stats(stats_b, "stats_b")
    delta = check_delta(delta, allow_zero=True)
    alpha = check_param(alpha, [UNIT_OPEN], "alpha")
    n_thresholds = check_param(n_thresholds, [Interval("int", 1, None)], "n_thresholds")
    selection_fraction = check_param(selection_fraction, [UNIT_OPEN], "selection_fraction")
    cut_a = min(max(1, int(stats_a.size * selection_fraction)), stats_a.size - 1)
    cut_b = min(max(1, int(stats_b.size * selection_fraction)), stats_b.size - 1)
    select_a, held_a = stats_a[:cut_a], stats_a[cut_a:]
    select_b, held_b = stats_b[:cut_b], stats_b[cut_b:]
    levels = np.linspace(0, 1, n_thresholds + 2)[1:-1]
    thresholds = np.unique(np.quantile(np.concatenate((select_a, select_b)), levels,
                                       method="inverted_cdf"))
    selection = _eps_bounds(select_a, select_b, thresholds, delta, alpha)
    # _eps_bounds lays out the tests kind by kind, each over all thresholds.
    kind, threshold = divmod(int(np.argmax(selection)), thresholds.size)
    held_out = _eps_bounds(held_a, held_b, thresholds[[threshold]], delta, alpha)
    return max(0.0, float(held_out[kind]))
