"""Noise scales for the Gaussian and Laplace mechanisms.

Both Gaussian calibrations return the standard deviation ``sigma`` of the noise that
makes the Gaussian mechanism ``(eps, delta)``-DP for a query of L2 sensitivity
``sensitivity``:

* ``"classical"`` (Dwork & Roth 2014, Thm A.1; the R package's formula):
  ``sigma = sensitivity * sqrt(2 ln(1.25 / delta)) / eps``. Its proof needs
  ``eps < 1``. It still holds some way beyond, but past an ``eps`` that grows as
  ``delta`` shrinks (about 6.8 at ``delta = 1e-2``, 8.4 at ``1e-5``, 9.4 at
  ``1e-8``) its exact ``delta`` exceeds the one claimed, and it is refused there.
* ``"analytic"`` (Balle & Wang 2018, Thm 8): the smallest ``sigma`` with
  ``Phi(D/(2s) - eps s/D) - exp(eps) Phi(-D/(2s) - eps s/D) <= delta``. This is the
  exact privacy profile of the Gaussian mechanism, so it is valid for every
  ``eps > 0`` and never noisier than the classical formula.
"""

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from .._validation import POSITIVE, Interval, Options, check_param, warn_user

NOISE_METHODS = ("analytic", "classical")


def check_eps(eps, name="eps"):
    """Validate a privacy parameter ``eps``: a finite float > 0.

    Parameters
    ----------
    eps : float
        The value to check.
    name : str, default="eps"
        The argument's name, used in the error messages.

    Returns
    -------
    eps : float
        The value as a Python float.

    Raises
    ------
    TypeError
        If ``eps`` is not a real number (booleans are refused).
    ValueError
        If ``eps`` is not finite or not > 0.

    Examples
    --------
    >>> from sklearn_dppca.privacy import check_eps
    >>> check_eps(1)
    1.0
    >>> try:
    ...     check_eps(0.0)
    ... except ValueError as error:      # an InvalidParameterError
    ...     print(error)
    eps must be a finite number > 0, got 0.0.
    """
    return check_param(eps, [POSITIVE], name)

def check_delta(delta, name="delta", allow_zero=False):
    """Validate ``delta``: in (0, 1), or [0, 1) with ``allow_zero``.

    Parameters
    ----------
    delta : float
        The value to check.
    name : str, default="delta"
        The argument's name, used in the error messages.
    allow_zero : bool, default=False
        Accept ``delta = 0`` (pure differential privacy).

    Returns
    -------
    delta : float
        The value as a Python float.

    Raises
    ------
    TypeError
        If ``delta`` is not a real number (booleans are refused).
    ValueError
        If ``delta`` lies outside its interval.

    Examples
    --------
    >>> from sklearn_dppca.privacy import check_delta
    >>> check_delta(1e-5)
    1e-05
    >>> check_delta(0, allow_zero=True)
    0.0
    """
    return check_param(delta, [Interval("real", 0, 1, closed="left" if allow_zero
                                        else "neither")], name)


def check_sensitivity(sensitivity):
    """Validate a sensitivity: a finite number > 0."""
    return check_param(sensitivity, [POSITIVE], "sensitivity")


def gaussian_delta(noise_scale, sensitivity, eps):
    """Compute the exact ``delta`` of the Gaussian mechanism at a given noise scale.

    ``delta(s) = Phi(D/(2s) - eps s/D) - exp(eps) Phi(-D/(2s) - eps s/D)``,
    evaluated in log space so that neither ``exp(eps)`` overflows nor the
    difference of two tiny numbers cancels (Balle & Wang 2018, Thm 8).

    Parameters
    ----------
    noise_scale : float
        Standard deviation ``s`` of the Gaussian noise, > 0.
    sensitivity : float
        L2 sensitivity ``D`` of the released vector, > 0.
    eps : float
        The ``eps`` at which ``delta`` is evaluated, > 0.

    Returns
    -------
    delta : float
        The smallest ``delta`` for which the mechanism is ``(eps, delta)``-DP.

    See Also
    --------
    gaussian_noise_scale : The noise scale for a given ``(eps, delta)``.

    Examples
    --------
    >>> from sklearn_dppca.privacy import gaussian_delta, gaussian_noise_scale
    >>> scale = gaussian_noise_scale(1.0, 1.0, 1e-5)
    >>> gaussian_delta(scale, 1.0, 1.0) <= 1e-5
    True
    """
    ratio = sensitivity / noise_scale
    first = ratio / 2 - eps / ratio
    second = -ratio / 2 - eps / ratio
    log_first = log_ndtr(first)
    # delta = Phi(first) * (1 - exp(eps + log Phi(second) - log Phi(first)))
    return float(-np.exp(log_first) * np.expm1(_log_ratio_exponent(ratio, eps, first,
                                                                   second, log_first)))


#: Below this ``first``, :func:`gaussian_delta` reads ``log Phi`` off its
#: asymptotic series: the two values, about ``-first^2 / 2``, are too large for
#: their difference (about ``-eps``) to survive rounding.
_ASYMPTOTIC_BELOW = -1e3


def _log_ratio_exponent(ratio, eps, first, second, log_first):
    """``eps + log Phi(second) - log Phi(first)`` for the Gaussian mechanism's
    delta, with ``first = r/2 - eps/r`` and ``second = -r/2 - eps/r``.

    Far in the left tail ``log Phi(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log S(x)``
    with ``S(x) = 1 - 1/x^2 + 3/x^4 - 15/x^6 + ...``, and ``second^2 - first^2 =
    2 eps`` exactly, so the exponent is ``-log(second / first) + log S(second) -
    log S(first)`` (``second / first = 1 + r^2 / (eps - r^2 / 2)``): no two large
    numbers are subtracted (a total of 1e7 eps made them 5e19 apart from 0,
    and the accountant refused a tiny charge).
    """
    if first >= _ASYMPTOTIC_BELOW:
        return eps + log_ndtr(second) - log_first
    return (-math.log1p(ratio * ratio / (eps - ratio * ratio / 2))
            + math.log1p(_tail_series(second)) - math.log1p(_tail_series(first)))


def _tail_series(x):
    """``S(x) - 1`` of the left tail's asymptotic series, ``|x| >= 1e3`` (its next
    term is below 1e-20)."""
    inverse = 1.0 / (x * x)
    return inverse * (-1.0 + inverse * (3.0 - 15.0 * inverse))


def _analytic_noise_scale(sensitivity, eps, delta):
    """Smallest sigma with gaussian_delta(sigma) <= delta (root in log sigma)."""

    def excess(log_scale):
        return gaussian_delta(math.exp(log_scale), sensitivity, eps) - delta

    # delta(s) falls from 1 to 0 as s grows; bracket the root around the classical
    # scale, which is never below it for eps < 1.
    guess = math.log(sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps)
    low, high = guess - 1.0, guess + 1.0
    while excess(low) <= 0:
        low -= 2.0
    while excess(high) > 0:
        high += 2.0
    root = brentq(excess, low, high, xtol=1e-14, rtol=1e-14, maxiter=500)
    scale = math.exp(root)
    # brentq may land a hair below the root; step up until the profile holds.
    while gaussian_delta(scale, sensitivity, eps) > delta:
        scale *= 1 + 1e-13
    return scale


def _classical_noise_scale(sensitivity, eps, delta):
    """The classical sigma, refused where its exact ``delta`` exceeds the claim."""
    scale = sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps
    # Past eps ~ 7-10 (by delta) the formula's noise is too small for the
    # (eps, delta) claimed: an error, since a warning would still release it.
    if gaussian_delta(scale, sensitivity, eps) > delta:
        raise ValueError(
            f"noise='classical' does not give (eps={eps:g}, delta={delta:g})-DP: at "
            "this eps its noise is too small for delta (the formula is only proven "
            "for eps < 1). Use noise='analytic', exact at every eps."
        )
    return scale


def gaussian_noise_scale(sensitivity, eps, delta, method="analytic", warn=True):
    """Noise standard deviation of the Gaussian mechanism.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity of the released vector under the adjacency in force.
    eps : float
        Privacy parameter, > 0.
    delta : float
        Privacy parameter, in (0, 1).
    method : {"analytic", "classical"}, default="analytic"
        Calibration (see the module docstring).
    warn : bool, default=True
        Emit a ``UserWarning`` when ``method="classical"`` is used with
        ``eps >= 1``, outside the range of its proof.

    Returns
    -------
    noise_scale : float
        The standard deviation ``sigma``.

    Raises
    ------
    ValueError
        If ``method="classical"`` and its ``sigma`` does not give
        ``(eps, delta)``-DP by the exact profile (large ``eps``).

    See Also
    --------
    gaussian_delta : The exact ``delta`` of a given noise scale.
    gaussian_mechanism : Add the noise and record the spend.

    Examples
    --------
    >>> from sklearn_dppca.privacy import gaussian_noise_scale
    >>> analytic = gaussian_noise_scale(1.0, eps=0.5, delta=1e-5)
    >>> classical = gaussian_noise_scale(1.0, eps=0.5, delta=1e-5, method="classical")
    >>> bool(analytic < classical)
    True
    """
    sensitivity = check_sensitivity(sensitivity)
    eps = check_eps(eps)
    delta = check_delta(delta)
    method = check_param(method, [Options(*NOISE_METHODS)], "noise")
    if method == "classical":
        scale = _classical_noise_scale(sensitivity, eps, delta)
        if eps >= 1 and warn:
            warn_user(
                f"noise='classical' is only proven for eps < 1 (got eps={eps:g}); "
                "use noise='analytic' for a calibration valid at every eps.",
                UserWarning,
            )
        return scale
    return _analytic_noise_scale(sensitivity, eps, delta)


def laplace_noise_scale(sensitivity, eps):
    """Compute the scale ``b = sensitivity / eps`` of the Laplace mechanism.

    Parameters
    ----------
    sensitivity : float
        L1 sensitivity of the released value or vector, > 0.
    eps : float
        Privacy parameter, > 0.

    Returns
    -------
    scale : float
        The Laplace scale ``b`` that makes the mechanism ``eps``-DP.

    Examples
    --------
    >>> from sklearn_dppca.privacy import laplace_noise_scale
    >>> laplace_noise_scale(2.0, eps=0.5)
    4.0
    """
    return check_sensitivity(sensitivity) / check_eps(eps)
