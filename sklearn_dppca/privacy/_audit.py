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

:func:`empirical_eps_lower_bound` tries thresholds in the body of the pooled
sample. :func:`tail_audit` is the sharper test: it compares the two rates at the
claimed ``eps``, tries events far into the tails, and has its events either fixed
in advance (then it uses every run) or chosen on a separate share of the runs.
:func:`noise_log_likelihood_ratio` gives it the most powerful statistic when the
law of the noise is known. :func:`gdp_tradeoff_audit` tests a ``mu``-GDP claim
(Dong, Roth and Su 2022, "Gaussian differential privacy") against its whole
tradeoff curve with one test fixed in advance, and can pair the runs on the two
neighbours (the same seed on both) to cut the run count several-fold.
"""

import math

import numpy as np
from scipy.special import betaincinv, ndtri

from .._validation import UNIT_OPEN, Boolean, Interval, Options, check_param, warn_user
from ._calibration import check_delta, check_eps


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


def _event_pairs(stats_a, stats_b, thresholds):
    """The four one-sided events at every threshold, each as ``((k, n) where it
    should be likely, (k, n) where it should be rare)``: ``S > t`` and ``S <= t``,
    with either data set first."""
    above_a, below_a = _event_counts(stats_a, thresholds)
    above_b, below_b = _event_counts(stats_b, thresholds)
    return (((above_a, stats_a.size), (above_b, stats_b.size)),
            ((below_a, stats_a.size), (below_b, stats_b.size)),
            ((above_b, stats_b.size), (above_a, stats_a.size)),
            ((below_b, stats_b.size), (below_a, stats_a.size)))


def _eps_bounds(stats_a, stats_b, thresholds, delta, alpha):
    """Lower confidence bounds on eps for every test, as a flat array.

    The tests are the events ``S > t`` and ``S <= t`` in both directions (``D``
    against ``D'`` and ``D'`` against ``D``); each combines a lower bound on the
    first rate and an upper bound on the second, one-sided at ``alpha/2`` each.
    """
    bounds = []
    for (k_first, n_first), (k_second, n_second) in _event_pairs(stats_a, stats_b,
                                                                 thresholds):
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


# ------------------------------------------------------------ the tail audit

_EVENTS = ("S > t on D vs D'", "S <= t on D vs D'", "S > t on D' vs D",
           "S <= t on D' vs D")


def _delta_excess(stats_a, stats_b, thresholds, eps, delta, alpha):
    """Lower confidence bounds on ``P_first(E) - exp(eps) P_second(E)`` and on eps.

    One row per event kind of ``_EVENTS``, one column per threshold; every rate
    bound is one-sided at ``alpha / 2``.
    """
    excess, eps_lower = [], []
    for (k_first, n_first), (k_second, n_second) in _event_pairs(stats_a, stats_b,
                                                                 thresholds):
        first_lower, _ = clopper_pearson(k_first, n_first, alpha)
        _, second_upper = clopper_pearson(k_second, n_second, alpha)
        excess.append(first_lower - math.exp(eps) * second_upper)
        over = first_lower - delta
        eps_lower.append(np.where(over > 0, np.log(np.maximum(over, 1e-300)
                                                   / second_upper), 0.0))
    return np.array(excess), np.array(eps_lower)


def _tail_levels(n_runs, min_count):
    """Quantile levels from ``min_count / n_runs`` to the median, in both tails,
    spaced geometrically so that the far tails get as many as the body."""
    smallest = min(0.5, min_count / n_runs)
    lower = np.geomspace(smallest, 0.5, max(2, int(np.ceil(2 * np.log10(0.5 / smallest)))
                                        + 1))
    return np.unique(np.concatenate((lower, 1.0 - lower)))


def _selected_thresholds(stats_a, stats_b, eps, delta, alpha, selection_fraction,
                         min_count):
    """Pick one event on the first share of the runs; return it and the rest."""
    cut_a = min(max(1, int(stats_a.size * selection_fraction)), stats_a.size - 1)
    cut_b = min(max(1, int(stats_b.size * selection_fraction)), stats_b.size - 1)
    pooled = np.concatenate((stats_a[:cut_a], stats_b[:cut_b]))
    candidates = np.unique(np.quantile(pooled, _tail_levels(pooled.size, min_count),
                                       method="inverted_cdf"))
    excess, _ = _delta_excess(stats_a[:cut_a], stats_b[:cut_b], candidates, eps, delta,
                              alpha)
    kind, column = np.unravel_index(int(np.argmax(excess)), excess.shape)
    return candidates[[column]], kind, stats_a[cut_a:], stats_b[cut_b:]


def tail_audit(stats_a, stats_b, eps, delta, *, thresholds=None, alpha=0.05,
               selection_fraction=0.5, min_count=20):
    r"""Test a claim ``(eps, delta)`` on the outputs of a mechanism, into the tails.

    ``stats_a`` and ``stats_b`` are scalar statistics of independent runs of the
    mechanism on neighbouring inputs ``D`` and ``D'``. If the mechanism is
    ``(eps, delta)``-DP then for every event ``E``, in both directions,

    .. math::

        \delta(\varepsilon) \ge P_D(E) - e^{\varepsilon} P_{D'}(E),

    where ``delta(eps)`` is the mechanism's privacy profile. For the events
    ``S > t`` and ``S <= t``, a one-sided Clopper-Pearson lower bound ``L`` on the
    first rate and an upper bound ``U`` on the second give the lower confidence
    bound ``L - exp(eps) U`` on ``delta(eps)``; the claim is rejected when it exceeds
    ``delta``, which is the same as ``ln((L - delta) / U) > eps``. When the
    statistic is the log-likelihood ratio of the two output laws, the events
    ``S > t`` are the Neyman-Pearson tests, and the one at ``t = eps`` attains
    ``delta(eps)``: no other event of the same size shows more. For Gaussian
    noise the projection of the output on the direction in which the neighbours
    move it is that ratio up to an increasing map; see
    :func:`noise_log_likelihood_ratio` for the general additive case.

    The events are honest in one of two ways, so that a correct mechanism is
    rejected with probability at most ``alpha``:

    * ``thresholds`` given (fixed before the runs, e.g. from the claimed law of
      the noise): every run counts and the ``4 m`` tests of ``m`` thresholds share
      ``alpha`` (Bonferroni), so all reported bounds hold together;
    * ``thresholds=None``: the first ``selection_fraction`` of each sample proposes
      thresholds at pooled quantiles spaced geometrically from ``min_count`` runs
      into each tail up to the median, and picks the event with the largest lower
      bound on the excess; only that event is evaluated, on the remaining runs.

    Tail events see the ``delta`` scale only with enough runs: an event of
    probability ``p`` is resolved when ``p n`` is at least a few tens.

    Parameters
    ----------
    stats_a, stats_b : array-like of shape (n_runs,)
        Statistics of independent, identically distributed runs on ``D`` and on
        ``D'``.
    eps : float
        The ``eps`` of the claim, > 0.
    delta : float
        The ``delta`` of the claim, in [0, 1).
    thresholds : array-like, default=None
        Thresholds fixed in advance; None picks one on a share of the runs.
    alpha : float, default=0.05
        Level: a mechanism that satisfies the claim is rejected with probability
        at most ``alpha``.
    selection_fraction : float, default=0.5
        Share of the runs used to pick the event when ``thresholds`` is None.
    min_count : int, default=20
        The farthest candidate threshold leaves this many selection runs beyond it.

    Returns
    -------
    dict
        ``"delta_lower"``: lower confidence bound on ``delta(eps)`` (may be
        negative: nothing shown); ``"eps_lower"``: lower confidence bound on the
        ``eps`` at the claimed ``delta`` (>= 0), from the event with the largest
        ``"delta_lower"``; ``"rejected"``: ``delta_lower > delta``;
        ``"threshold"`` and ``"event"``: that event.

    See Also
    --------
    empirical_eps_lower_bound : Thresholds in the body of the sample only.

    Examples
    --------
    A Gaussian mechanism of sensitivity 1 with the noise of ``(1, 1e-5)``, and the
    same with half of it: the first passes, the second is caught.

    >>> import numpy as np
    >>> from sklearn_dppca.privacy import gaussian_noise_scale, tail_audit
    >>> rng = np.random.default_rng(0)
    >>> sigma = gaussian_noise_scale(1.0, 1.0, 1e-5)
    >>> correct = tail_audit(rng.normal(1, sigma, 100_000), rng.normal(0, sigma, 100_000),
    ...                      1.0, 1e-5, alpha=1e-3)
    >>> halved = tail_audit(rng.normal(1, sigma / 2, 100_000),
    ...                     rng.normal(0, sigma / 2, 100_000), 1.0, 1e-5, alpha=1e-3)
    >>> bool(correct["rejected"]), bool(halved["rejected"])
    (False, True)
    """
    stats_a = _check_stats(stats_a, "stats_a")
    stats_b = _check_stats(stats_b, "stats_b")
    eps = check_eps(eps)
    delta = check_delta(delta, allow_zero=True)
    alpha = check_param(alpha, [UNIT_OPEN], "alpha")
    selection_fraction = check_param(selection_fraction, [UNIT_OPEN], "selection_fraction")
    min_count = check_param(min_count, [Interval("int", 1, None)], "min_count")
    if thresholds is None:
        thresholds, kind, stats_a, stats_b = _selected_thresholds(
            stats_a, stats_b, eps, delta, alpha, selection_fraction, min_count)
        level = alpha
    else:
        thresholds = np.unique(np.asarray(thresholds, dtype=float).ravel())
        if thresholds.size == 0 or not np.all(np.isfinite(thresholds)):
            raise ValueError("thresholds must be a non-empty array of finite numbers.")
        kind, level = None, alpha / (len(_EVENTS) * thresholds.size)
    excess, eps_lower = _delta_excess(stats_a, stats_b, thresholds, eps, delta, level)
    if kind is not None:
        excess[np.arange(len(_EVENTS)) != kind] = -np.inf
    kind, column = np.unravel_index(int(np.argmax(excess)), excess.shape)
    return {"delta_lower": float(excess[kind, column]),
            "eps_lower": max(0.0, float(eps_lower[kind, column])),
            "rejected": bool(excess[kind, column] > delta),
            "threshold": float(thresholds[column]), "event": _EVENTS[kind]}


def noise_log_likelihood_ratio(outputs, center_a=None, center_b=None, scale=None,
                               law="gaussian", *, centre_a="deprecated",
                               centre_b="deprecated"):
    r"""Log-likelihood ratio of an output under two centres of a known additive noise.

    For outputs ``y = c + Z`` with ``Z`` of i.i.d. coordinates,

    * ``"gaussian"`` (``Z ~ N(0, scale^2)``): ``sum((y - b)^2 - (y - a)^2) / (2 scale^2)``;
    * ``"laplace"`` (``Z ~ Lap(scale)``): ``sum(|y - b| - |y - a|) / scale``,

    with ``a = center_a`` and ``b = center_b``: the log of the ratio of the
    densities at ``y`` on ``D`` (centre ``a``) and on ``D'`` (centre ``b``), the
    privacy loss of the output. The same formulas hold for the discrete Gaussian
    and the discrete Laplace (geometric) laws on the integers when the centres are
    integers, since their normalising constants do not depend on the centre. It is
    the Neyman-Pearson statistic to give :func:`tail_audit`; the scale is the one
    the mechanism claims, so a mechanism with less noise than claimed shows a
    larger loss than the claimed law allows.

    Parameters
    ----------
    outputs : array-like of shape (n_runs, n_coordinates) or (n_runs,)
        The released values, one run per row.
    center_a, center_b : float or array-like of shape (n_coordinates,)
        The exact values on ``D`` and on ``D'`` (required).
    scale : float
        The claimed noise sd (Gaussian) or Laplace scale, > 0 (required).
    law : {"gaussian", "laplace"}, default="gaussian"
        The claimed law of the noise.
    centre_a, centre_b : float or array-like, default="deprecated"
        The former names of ``center_a`` and ``center_b`` (one spelling across
        the package, as ``frame_.center``): accepted with a FutureWarning,
        removed in version 0.3.

    Returns
    -------
    ndarray of shape (n_runs,)
        The log-likelihood ratio of every run.

    See Also
    --------
    tail_audit : The test that takes it as its statistic.

    Examples
    --------
    >>> from sklearn_dppca.privacy import noise_log_likelihood_ratio
    >>> noise_log_likelihood_ratio([[3.0], [-1.0]], 1.0, 0.0, 1.0, law="laplace")
    array([ 1., -1.])
    """
    center_a = _renamed(center_a, centre_a, "centre_a", "center_a")
    center_b = _renamed(center_b, centre_b, "centre_b", "center_b")
    if center_a is None or center_b is None or scale is None:
        raise TypeError("noise_log_likelihood_ratio needs center_a, center_b and scale.")
    scale = check_param(scale, [Interval("real", 0, None, closed="neither")], "scale")
    law = check_param(law, [Options("gaussian", "laplace")], "law")
    outputs = np.asarray(outputs, dtype=float)
    if outputs.ndim == 1:
        outputs = outputs[:, np.newaxis]
    if outputs.ndim != 2:
        raise ValueError(f"outputs must be 1-D or 2-D, got shape {outputs.shape}.")
    center_a = np.broadcast_to(np.asarray(center_a, dtype=float), outputs.shape[1:])
    center_b = np.broadcast_to(np.asarray(center_b, dtype=float), outputs.shape[1:])
    if law == "gaussian":
        # (y-b)^2 - (y-a)^2 = (a - b)(2y - a - b): no cancellation of large squares
        loss = (center_a - center_b) * (2 * outputs - center_a - center_b) / (2 * scale**2)
    else:
        loss = (np.abs(outputs - center_b) - np.abs(outputs - center_a)) / scale
    return loss.sum(axis=1)


def _renamed(value, old_value, old, new):
    """``value``, or ``old_value`` given under the deprecated keyword ``old``
    (a FutureWarning; both given: a TypeError)."""
    if isinstance(old_value, str) and old_value == "deprecated":
        return value
    if value is not None:
        raise TypeError(f"give {new} only ({old} is its deprecated name).")
    warn_user(f"{old} is deprecated (one spelling across the package): use {new}; "
              f"{old} will be removed in version 0.3.", FutureWarning)
    return old_value


# ------------------------------------------------------- the GDP tradeoff audit

def _check_threshold(threshold):
    threshold = check_param(threshold, [Interval("real", None, None)], "threshold")
    if not math.isfinite(threshold):
        raise ValueError("threshold must be a finite number.")
    return float(threshold)


def _unpaired_mu_lower(wrong_on_a, wrong_on_b, n_a, n_b, alpha):
    """``Phi^-1(1 - a_U) - Phi^-1(b_U)``: the largest ``mu`` whose curve the point
    ``(a_U, b_U)`` lies below."""
    _, type_one_upper = clopper_pearson(wrong_on_a, n_a, alpha)
    _, type_two_upper = clopper_pearson(wrong_on_b, n_b, alpha)
    # Phi^{-1}(1 - a) - Phi^{-1}(b), with ndtri = Phi^{-1} (scipy.stats would cost
    # a second of import time on every fit's path)
    return float(-ndtri(type_one_upper) - ndtri(type_two_upper))


def _paired_mu_lower(only_a_right, only_b_right, n_pairs, alpha):
    """``-2 Phi^-1(U / 2)`` with ``U = 1 - L_Y + U_Z`` the upper bound on ``a + b``."""
    concordant_lower, _ = clopper_pearson(only_a_right, n_pairs, alpha)
    _, discordant_upper = clopper_pearson(only_b_right, n_pairs, alpha)
    error_sum_upper = 1.0 - concordant_lower + discordant_upper
    if error_sum_upper >= 1.0:
        return 0.0
    return float(-2.0 * ndtri(error_sum_upper / 2.0))


def gdp_tradeoff_audit(stats_a, stats_b, mu, threshold=0.0, *, alpha=0.05,
                       paired=False):
    r"""Test a ``mu``-GDP claim with one test fixed in advance.

    A mechanism is ``mu``-GDP when telling its outputs on neighbouring inputs
    ``D`` and ``D'`` apart is at least as hard as telling ``N(0, 1)`` from
    ``N(mu, 1)``: every test with type-I error ``a`` has type-II error

    .. math::

        b \ge G_\mu(a) = \Phi(\Phi^{-1}(1 - a) - \mu).

    The test here says "``D'``" when the statistic is at most ``threshold``, so
    ``a = P_D(S <= t)`` and ``b = P_{D'}(S > t)``; orient the statistic so that it
    is larger on ``D`` (a log-likelihood ratio ``log p_D / p_D'`` is). The claim is
    rejected when, with confidence ``1 - alpha``, the point ``(a, b)`` lies
    strictly below the curve:

    * unpaired runs (independent samples on ``D`` and on ``D'``): with the
      one-sided Clopper-Pearson upper bounds ``a_U`` and ``b_U`` (``alpha / 2``
      each), ``b <= b_U < G_mu(a_U) <= G_mu(a)`` since ``G_mu`` decreases; the
      largest ``mu`` so rejected is ``Phi^-1(1 - a_U) - Phi^-1(b_U)``;
    * paired runs (``stats_a[i]`` and ``stats_b[i]`` from one run each, e.g. with
      the same seed, the pairs independent of one another): ``G_mu`` is convex
      and symmetric about the diagonal, where its slope is -1, so every test has
      ``a + b >= 2 Phi(-mu / 2)``. Per pair, ``1[S_a <= t] + 1[S_b > t]`` has mean
      ``a + b`` and equals ``1 - Y + Z`` with ``Y = 1[S_a > t >= S_b]`` (both
      right) and ``Z = 1[S_a <= t < S_b]`` (both wrong); a lower bound on
      ``P(Y)`` and an upper bound on ``P(Z)`` (``alpha / 2`` each) bound ``a + b``
      above by ``U``, and the largest ``mu`` so rejected is ``-2 Phi^-1(U / 2)``.
      Runs sharing their randomness make ``Y`` and ``Z`` rare and the bound
      sharp: for the log-likelihood ratio of a Gaussian mechanism on the same
      noise, ``Z`` never happens and ``Y`` has probability about ``0.4 mu``,
      resolved far better than two error rates near one half.

    The threshold must be fixed before the runs (e.g. the midpoint ``0`` of a
    log-likelihood ratio, where a Gaussian mechanism's test meets the curve).
    Then a mechanism that is ``mu``-GDP is rejected with probability at most
    ``alpha``, whatever the statistic and whatever the law of its outputs
    (discrete ones included): the curve bounds every test.

    Parameters
    ----------
    stats_a, stats_b : array-like of shape (n_runs,)
        The statistic of independent runs on ``D`` and on ``D'`` (with
        ``paired=True``: of ``n_runs`` independent pairs, in the same order).
    mu : float
        The claimed GDP parameter, > 0.
    threshold : float, default=0.0
        The test says ``D'`` when the statistic is at most this.
    alpha : float, default=0.05
        Level: a ``mu``-GDP mechanism is rejected with probability at most
        ``alpha``.
    paired : bool, default=False
        Whether ``stats_a[i]`` and ``stats_b[i]`` come from one pair of runs.

    Returns
    -------
    dict
        ``"type_one"`` and ``"type_two"``: the observed error rates ``a`` and
        ``b``; ``"mu_lower"``: lower confidence bound on the ``mu`` of the
        mechanism (0 when nothing is shown); ``"rejected"``: ``mu_lower > mu``.

    See Also
    --------
    tail_audit : The ``(eps, delta)`` counterpart, into the tails.
    noise_log_likelihood_ratio : The statistic for a known additive noise.

    Examples
    --------
    A 0.5-GDP Gaussian mechanism and the same with half its noise (1-GDP), run on
    the same noise for both neighbours: the first passes, the second is caught.

    >>> import numpy as np
    >>> from sklearn_dppca.privacy import gdp_tradeoff_audit
    >>> z = np.random.default_rng(0).standard_normal(2_000)
    >>> def llr(centre, sd):   # log p_D / p_D' for the centres 0.5 (D) and 0 (D')
    ...     return 0.5 * (2 * (centre + sd * z) - 0.5) / 2
    >>> correct = gdp_tradeoff_audit(llr(0.5, 1.0), llr(0.0, 1.0), 0.5, paired=True)
    >>> halved = gdp_tradeoff_audit(llr(0.5, 0.5), llr(0.0, 0.5), 0.5, paired=True)
    >>> bool(correct["rejected"]), bool(halved["rejected"]), halved["mu_lower"] > 0.5
    (False, True, True)
    """
    stats_a = _check_stats(stats_a, "stats_a")
    stats_b = _check_stats(stats_b, "stats_b")
    mu = check_eps(mu, name="mu")
    threshold = _check_threshold(threshold)
    alpha = check_param(alpha, [UNIT_OPEN], "alpha")
    paired = check_param(paired, [Boolean()], "paired")
    says_b_on_a = stats_a <= threshold      # type-I errors
    says_a_on_b = stats_b > threshold       # type-II errors
    if paired:
        if stats_a.size != stats_b.size:
            raise ValueError("paired=True needs stats_a and stats_b of the same length.")
        mu_lower = _paired_mu_lower(int(np.sum(~says_b_on_a & ~says_a_on_b)),
                                    int(np.sum(says_b_on_a & says_a_on_b)),
                                    stats_a.size, alpha)
    else:
        mu_lower = _unpaired_mu_lower(int(np.sum(says_b_on_a)), int(np.sum(says_a_on_b)),
                                      stats_a.size, stats_b.size, alpha)
    mu_lower = max(0.0, mu_lower)
    return {"type_one": float(np.mean(says_b_on_a)), "type_two": float(np.mean(says_a_on_b)),
            "mu_lower": mu_lower, "rejected": bool(mu_lower > mu)}
