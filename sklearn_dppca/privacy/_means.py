"""One-dimensional private means for the scree, and the helpers around them.

The estimators take values ``w_1..w_m`` of which one data row affects exactly one
(the paired form of the scree: ``w = (v^T (x_a - x_b))^2 / 2`` over a
data-independent matching of the rows). Sensitivities below are under replacement
adjacency on those values.
"""

import math

import numpy as np

from .._validation import (
    EXTENDED_REAL,
    POSITIVE,
    UNIT_OPEN,
    Boolean,
    Interval,
    check_param,
    check_values,
    warn_user,
)
from ._budget import PrivacyLedger
from ._calibration import check_delta, check_eps
from ._decimals import as_granted, trim_to
from ._histograms import dyadic_argmax
from ._mechanisms import gaussian_mechanism
from ._pair_sums import clipped_pair_sum
from ._quantiles import quantile


def _gaussian_release(value, sensitivity, eps, delta, rng, noise, ledger, step):
    """Gaussian mechanism that also accepts a zero sensitivity (a constant)."""
    if sensitivity > 0:
        return gaussian_mechanism(value, sensitivity, eps, delta, rng, noise=noise,
                                  ledger=ledger, step=step)
    # The statistic is a function of earlier private releases only: no noise is
    # needed, and the share stays charged as granted.
    if ledger is not None:
        ledger.record(step=step, mechanism=f"gaussian ({noise}), zero sensitivity",
                      eps=eps, delta=delta, sensitivity=0.0, noise_scale=0.0)
    return float(value), 0.0


# ----------------------------------------------------------------------------- PMWM

def _clipped_mean(values, low, high):
    """Mean of ``values`` clipped to ``[low, high]``; sensitivity ``(high-low)/m``."""
    return float(np.clip(values, low, high).mean())


def _trimming_interval(low, high, a, b):
    """Clamp the private quantiles into the public ``[a, b]``, with fallbacks.

    Falls back to ``[a, b]`` when the interval is not finite or reversed; when
    ``[a, b]`` is unbounded too, the two released quantiles are taken in
    increasing order (post-processing). Raises when no finite interval is left.
    """
    low, high = min(max(low, a), b), min(max(high, a), b)
    if math.isfinite(high - low) and high >= low:
        return low, high
    if math.isfinite(b - a):
        return a, b
    low, high = min(low, high), max(low, high)
    if not math.isfinite(high - low):
        raise ValueError("The private trimming interval is unbounded; give finite "
                         "public bounds a and b.")
    return low, high


def pmwm_mean(w, eps, delta, rng, *, beta=1.01, trim_const=10, eta=0.01, a=0.0,
              b=np.inf, split=True, noise="analytic", ledger=None, step="pmwm mean",
              return_noise_scale=False):
    """Release a mean by private winsorisation (PMWM, Ramsay & Spicker 2025).

    1. Trim level ``p = min(max(trim_const / m_q, eta), 0.49)``, ``m_q`` the number
       of values used for the quantiles.
    2. ``L``, ``U``: fully unbounded Durfee quantiles (:func:`quantile`) at levels
       ``p`` and ``1 - p``, clamped into the public ``[a, b]`` (see below for the
       fallbacks).
    3. Release ``mean(clip(w, L, U)) + N(0, s^2)`` over the ``m_m`` values of the
       mean part, ``s`` calibrated to L2 sensitivity ``(U - L) / m_m``.

    Budget. With ``split=True`` a random, data-independent permutation splits ``w``
    into a quantile half (``m_q = floor(m/2)``) and a mean half (``m_m = m - m_q``).
    One row lies in one half only, so the halves compose in parallel and each uses
    the whole budget: ``eps/2`` per quantile and ``(eps, delta)`` for the mean; the
    ledger gets one entry of ``(eps, delta)`` whose ``parts`` list the three calls.
    With ``split=False`` all values serve both: ``eps/4`` per quantile and
    ``(eps/2, delta)`` for the mean, three ledger entries.

    Sensitivity (one row changes one value): each quantile search releases count
    comparisons of sensitivity 1 (pure DP); given ``L`` and ``U``, the clipped
    mean changes by at most ``(U - L) / m_m``.

    If the clamped interval is not finite or ``U < L``, ``[a, b]`` is used; if
    ``[a, b]`` is unbounded too, the two quantiles in increasing order; a
    remaining unbounded interval raises ``ValueError``. If ``U == L`` the clipped
    mean is the constant ``L`` and is released as is.

    Parameters
    ----------
    w : array-like of shape (m,)
        Finite values; ``m >= 2`` with ``split=True``.
    eps : float
        Privacy parameter, > 0.
    delta : float
        Privacy parameter, in (0, 1).
    rng : numpy.random.Generator
        The only source of the noise and of the split.
    beta : float, default=1.01
        Grid ratio of the quantile searches.
    trim_const : float, default=10
        The constant of the trim level ``trim_const / m_q``, > 0.
    eta : float, default=0.01
        Smallest trim level, in (0, 0.5).
    a, b : float, default=0, inf
        Public bounds of the values (``a < b``, may be infinite).
    split : bool, default=True
        Split the values into a quantile half and a mean half (see above).
    noise : {"analytic", "classical"}, default="analytic"
        Calibration of the Gaussian noise (see :func:`gaussian_noise_scale`).
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="pmwm mean"
        Name of this call in the ledger.
    return_noise_scale : bool, default=False
        Also return the sd of the Gaussian noise on the mean (0 for a constant).

    Returns
    -------
    float, or (float, float) with ``return_noise_scale``
        The private mean, and with ``return_noise_scale`` the sd of its noise.

    See Also
    --------
    huber_mean : Another private mean, by noisy gradient descent.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import pmwm_mean
    >>> w = np.random.default_rng(0).exponential(2.0, size=5000)
    >>> mean = pmwm_mean(w, 1.0, 1e-5, np.random.default_rng(1))
    >>> bool(abs(mean - 2.0) < 0.5)
    True
    """
    w = check_values(w, "w")
    eps = check_eps(eps)
    delta = check_delta(delta)
    trim_const = check_param(trim_const, [POSITIVE], "trim_const")
    eta = check_param(eta, [Interval("real", 0.0, 0.5, closed="neither")], "eta")
    a, b = check_param(a, [EXTENDED_REAL], "a"), check_param(b, [EXTENDED_REAL], "b")
    split = check_param(split, [Boolean()], "split")
    if not a < b:
        raise ValueError(f"a must be < b, got a={a!r}, b={b!r}.")
    if split:
        if w.size < 2:
            raise ValueError("split=True needs at least 2 values in w.")
        order = rng.permutation(w.size)
        quantile_part, mean_part = w[order[: w.size // 2]], w[order[w.size // 2:]]
        quantile_eps, mean_eps = eps, eps
        parts = PrivacyLedger()  # the three calls, reported as one parallel entry
    else:
        quantile_part = mean_part = w
        quantile_eps, mean_eps = eps / 2, eps / 2
        parts = ledger
    trim = min(max(trim_const / quantile_part.size, eta), 0.49)
    low = quantile(quantile_part, trim, quantile_eps / 2, rng, beta=beta,
                   ledger=parts, step=f"{step}/lower quantile")
    high = quantile(quantile_part, 1 - trim, quantile_eps / 2, rng, beta=beta,
                    ledger=parts, step=f"{step}/upper quantile")
    low, high = _trimming_interval(low, high, a, b)
    sensitivity = (high - low) / mean_part.size
    estimate, noise_scale = _gaussian_release(_clipped_mean(mean_part, low, high),
                                              sensitivity, mean_eps, delta, rng, noise,
                                              parts, f"{step}/mean")
    if split and ledger is not None:
        ledger.record(step=step, mechanism="parallel composition (disjoint halves)",
                      eps=eps, delta=delta, sensitivity=sensitivity,
                      noise_scale=noise_scale, parts=parts.to_list())
    return (estimate, noise_scale) if return_noise_scale else estimate


# ---------------------------------------------------------------------------- Huber

def _pair_block_medians(w, rng, block_size):
    """Block medians of ``(w_a - w_b)^2 / 2`` over a random pairing of ``w``.

    One changed value changes one pair, hence one block median. Blocks hold
    ``block_size`` pairs; ``None`` gives Yu, Ren & Zhou's ``floor(sqrt(m)/2)``
    blocks.
    """
    m = w.size
    pairs = w[rng.permutation(m)[: 2 * (m // 2)]].reshape(-1, 2)
    with np.errstate(over="ignore"):  # an overflow is +inf, binned at k_max
        halved_squares = (pairs[:, 0] - pairs[:, 1]) ** 2 / 2
    if block_size is None:
        n_blocks = max(1, math.floor(math.sqrt(m) / 2))
    else:
        n_blocks = max(1, len(halved_squares) // block_size)
    return np.array([np.median(block) for block in np.array_split(halved_squares,
                                                                   n_blocks)])


def _huber_tau(scale, gd_eps, m):
    """Robustification ``tau = sqrt(m2) sqrt(eps m / sqrt((1 + ln m) ln m))``."""
    log_m = math.log(m)
    tau = math.sqrt(scale) * math.sqrt(gd_eps * m / math.sqrt((1 + log_m) * log_m))
    return tau if math.isfinite(tau) and tau > 0 else 1.0


def _huber_gradient(w, mu, tau):
    """``mean(clip(w - mu, -tau, tau))``; sensitivity ``2 tau / m``."""
    return float(np.clip(w - mu, -tau, tau).mean())


def _warn_if_scale_is_noise(n_medians, scale_eps, n_bins):
    """Warn when the scale step's argmax is decided by its noise, not the data.

    The largest of ``n_bins`` Laplace(2/eps) noises is about ``(2/eps) ln(n_bins)``;
    with fewer block medians than that, the winning bin is close to random and so is
    ``tau``. Public quantities only (m, eps, the bin range).
    """
    noise_peak = 2.0 / scale_eps * math.log(n_bins)
    if n_medians < noise_peak:
        warn_user(
            f"huber_mean: {n_medians} block medians against a noise peak of about "
            f"{noise_peak:.0f} counts in the private scale step; the scale (and the "
            "estimate) is unreliable at this budget. Give it more eps or values, or "
            "use the clipped scree.",
            UserWarning,
        )


def huber_mean(w, eps, delta, rng, *, m2_frac=0.25, k_min=-40, k_max=40, block_size=16,
               noise="analytic", ledger=None, step="huber mean", return_noise_scale=False):
    """Release a mean by noisy gradient descent on the Huber loss (Yu, Ren & Zhou 2024).

    1. Scale, with ``eps_m2 = m2_frac * eps`` (pure): pair the values at random,
       ``s = (w_a - w_b)^2 / 2``, split into blocks of ``block_size`` pairs,
       take the block medians and release ``m2`` by
       :func:`dyadic_argmax` (L1 sensitivity 2: one changed value moves one
       median between two bins).
    2. ``tau = sqrt(m2) sqrt(eps_gd m / sqrt((1 + ln m) ln m))`` with
       ``eps_gd = eps - eps_m2`` (1 when not positive and finite).
    3. ``T = max(1, ceil(ln m))`` steps from ``mu = 0`` with step size 1:
       ``mu <- mu + mean(clip(w - mu, -tau, tau)) + N(0, s^2)``, each step a
       Gaussian mechanism at ``(eps_gd / T, delta / T)`` on L2 sensitivity
       ``2 tau / m`` (one changed value moves its clipped residual by at most
       ``2 tau``; ``mu`` is an earlier release).

    Every share is spent: the ledger gets one scale entry and ``T`` step entries
    summing to ``(eps, delta)``.

    Parameters
    ----------
    w : array-like of shape (m,)
        Finite values, ``m >= 2``.
    eps : float
        Privacy parameter, > 0.
    delta : float
        Privacy parameter, in (0, 1).
    rng : numpy.random.Generator
        The only source of the noise and of the pairing.
    m2_frac : float, default=0.25
        Share of ``eps`` for the scale, in (0, 1).
    k_min, k_max : int, default=-40, 40
        Exponent range of the dyadic scale search.
    block_size : int or None, default=16
        Pairs per block of the scale step. ``None`` uses Yu, Ren & Zhou's
        ``floor(sqrt(m)/2)`` blocks; with so few medians (50 at m = 1e4) the
        Laplace noise on 81 bins picks a wrong bin about half of the time at
        eps = 1, and a wrong scale ruins ``tau``. Blocks of 16 pairs give
        hundreds of medians, which fall in two or three neighbouring bins.
    noise : {"analytic", "classical"}, default="analytic"
        Calibration of the Gaussian noise (see :func:`gaussian_noise_scale`).
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="huber mean"
        Name of this call in the ledger.
    return_noise_scale : bool, default=False
        Also return the sd of the last step's Gaussian noise.

    Returns
    -------
    float, or (float, float) with ``return_noise_scale``
        The private mean, and with ``return_noise_scale`` the sd of the last
        step's noise.

    See Also
    --------
    pmwm_mean : Another private mean, by private winsorisation.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import huber_mean
    >>> w = np.random.default_rng(0).normal(5.0, 1.0, size=5000)
    >>> mean = huber_mean(w, 1.0, 1e-5, np.random.default_rng(1))
    >>> bool(abs(mean - 5.0) < 0.5)
    True
    """
    w = check_values(w, "w")
    if w.size < 2:
        raise ValueError("huber_mean needs at least 2 values in w.")
    eps = check_eps(eps)
    delta = check_delta(delta)
    m2_frac = check_param(m2_frac, [UNIT_OPEN], "m2_frac")
    m = w.size
    n_steps = max(1, math.ceil(math.log(m)))
    # the scale's share and the steps' trimmed so that together they spend at
    # most the grant (gd_eps / n_steps added n_steps times may exceed gd_eps)
    gd_eps = eps - m2_frac * eps
    scale_eps, *step_eps = trim_to([m2_frac * eps] + [gd_eps / n_steps] * n_steps,
                                   as_granted(eps))
    step_delta = trim_to([delta / n_steps] * n_steps, as_granted(delta))
    block_size = check_param(block_size, [None, Interval("int", 1, None)], "block_size")
    medians = _pair_block_medians(w, rng, block_size)
    scale = dyadic_argmax(medians, scale_eps, rng,
                          k_min=k_min,
                          k_max=k_max, ledger=ledger, step=f"{step}/scale")
    _warn_if_scale_is_noise(medians.size, scale_eps, k_max - k_min + 1)
    tau = _huber_tau(scale, gd_eps, m)
    mu = 0.0
    for index in range(1, n_steps + 1):
        # mu + gradient: adding the earlier release mu is post-processing.
        mu, noise_scale = gaussian_mechanism(mu + _huber_gradient(w, mu, tau), 2 * tau / m,
                                   step_eps[index - 1], step_delta[index - 1], rng,
                                   noise=noise, ledger=ledger,
                                   step=f"{step}/gd step {index}")
    return (mu, noise_scale) if return_noise_scale else mu


# --------------------------------------------------------------- non-private helpers

def clipped_pair_mean(y, clip):
    """Compute ``(1/C(n,2)) sum_{i<j} min((y_i - y_j)^2 / 2, clip)`` in ``O(n log n)``.

    Not a private release by itself. Replacing one value changes ``n - 1`` of the
    ``C(n, 2)`` terms, each by at most ``clip``, so the result has sensitivity
    ``2 clip / n`` (the basis of the ``clipped`` scree).

    How: sort ``y``. Pairs further apart than ``r = sqrt(2 clip)`` contribute
    ``clip`` and are only counted. The close pairs (never across a gap wider than
    ``r``) are summed exactly in integers: each value is put on a grid of step
    ``delta`` (a power of two, at most ``2**-72`` of ``r`` and of the range of
    ``y``) measured from the smallest value of its run of gaps ``<= r``; a pair is
    close when its grid difference is at most ``r / delta``; the squared grid
    differences over the close pairs are summed without rounding, and only the
    final division rounds. No float prefix sum is involved, hence no cancellation
    across a long run of close values.

    Accuracy: the grid and the close/far decision taken on it move each pair's
    term by less than ``2 delta r <= 2**-70 clip``, and the final rounding moves
    the mean (at most ``clip``) by at most ``2**-53 clip``. So the result is within
    ``(2**-53 + 2**-70) clip`` of the exact value: ``n (2**-54 + 2**-71)``, about
    ``5.6e-17 n``, of the sensitivity ``2 clip / n``, below ``1e-9`` of it for
    ``n <= 1.8e7`` (``5.6e-10`` at ``n = 1e7``; the last rounding alone is most of
    it and cannot be avoided by a float result). The results for two neighbouring
    samples thus differ by at most ``2 clip / n (1 + 1.12e-16 n)``. Relative to
    the exact value (``clip=inf`` included) the error is at most
    ``2**-53 + 2**-71 n^2``. (A subnormal result adds at most ``2**-1075``.)

    Parameters
    ----------
    y : array-like of shape (n,)
        Finite values, ``n >= 2``.
    clip : float
        ``> 0``; ``np.inf`` gives the plain pairwise variance.

    Returns
    -------
    float
        The mean of the clipped half squared differences over all pairs.

    Examples
    --------
    >>> from sklearn_dppca.privacy import clipped_pair_mean
    >>> clipped_pair_mean([0.0, 1.0, 3.0], clip=float("inf"))
    2.333...
    >>> clipped_pair_mean([0.0, 1.0, 3.0], clip=1.0)
    0.8333...
    """
    y = np.sort(check_values(y, "y"))
    n = y.size
    if n < 2:
        raise ValueError(f"y needs at least 2 values, got {n}.")
    clip = check_param(clip, [Interval("real", 0, math.inf, closed="right")], "clip")
    return clipped_pair_sum(y, clip)


def monotone_scree(values):
    """Fit a non-negative, non-increasing sequence in least squares (post-processing).

    Clamp at 0, fit the closest non-increasing sequence in least squares (pool
    adjacent violators, unit weights), clamp at 0 again.

    Parameters
    ----------
    values : array-like of shape (k,)
        Finite values, for example raw private variances.

    Returns
    -------
    ndarray of shape (k,)
        The fitted non-negative, non-increasing sequence.

    Examples
    --------
    >>> from sklearn_dppca.privacy import monotone_scree
    >>> monotone_scree([3, 5, 1, 2, -1]).tolist()
    [4.0, 4.0, 1.5, 1.5, 0.0]
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise ValueError("values must be a 1-D array of finite numbers.")
    # Each block is [sum, count]; a block whose mean exceeds the previous one's
    # violates the order and is pooled with it.
    blocks = []
    for value in np.maximum(values, 0.0):
        blocks.append([value, 1])
        while len(blocks) > 1 and (blocks[-1][0] * blocks[-2][1]
                                   > blocks[-2][0] * blocks[-1][1]):
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    fitted = np.concatenate([np.full(count, total / count) for total, count in blocks]
                            ) if blocks else np.empty(0)
    return np.maximum(fitted, 0.0)
