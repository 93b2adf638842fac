"""The numbers of a budget as people write them, added without round-off.

A budget is written in decimals: a total of ``eps = 0.3`` and fits at ``0.1`` and
``0.2``. In binary floating point ``0.1 + 0.2`` is more than ``0.3`` (by 4e-17),
and the float ``0.1`` itself is ``0.1000000000000000055...``. So that a budget
adds up as it is read *and* no spend ever exceeds its grant, the accountant keeps
two rules:

* **A number of a budget stands for its decimal**: the shortest decimal that
  reads back as the same float (Python's ``repr``), as an exact fraction
  (:func:`as_written`). Grants, :class:`~sklearn_dppca.privacy.Spend` fields and
  the charges of a budget file are added and compared in these fractions, with
  no slack: 0.1 + 0.2 is 0.3, and 0.3 + 1e-17 is more than 0.3.
* **A mechanism never runs at more than it is charged**: a ledger entry, the
  float a mechanism was calibrated at, is charged at its binary value, and a
  fit's allocation is trimmed until its parts add up to at most the fit's grant
  as written (:func:`trim_to`; most parts are unchanged, a few lose one float).
  A fit's spend is then rounded up to a float whose decimal covers it: a fit at
  ``0.1`` charges ``0.1``, since its parts run at ``0.09999999999999999`` or
  less.

Where a quantity is irrational (a composed ``mu``, a Gaussian block's ``delta``)
it is rounded outward: up for what is spent, down for what is left
(:func:`float_at_least`, :func:`block_delta_bound`).
"""

import math
from fractions import Fraction

from scipy.special import log_ndtr

from ._calibration import gaussian_delta

# The error allowed for in a Gaussian block's computed delta,
# ``Phi(a) (1 - exp(x))`` with ``x = eps + log Phi(b) - log Phi(a)``: a relative
# part, and ``Phi(a)`` times an absolute error of ``x`` (where ``x`` is near 0,
# for tiny ``mu``, the logs cancel: measured up to 1e-6 of delta at mu = 1e-6);
# then a floor below which a computed delta may underflow to 0. Checked against
# 60-digit arithmetic over mu in [1e-7, 200] and eps in [1e-9, 200]
# (tests/test_privacy_decimals.py): never below the exact value, 4e-11 above
# it at mu = 0.27, eps = 1.
_DELTA_RELATIVE = Fraction(1, 10**11)
_LOG_ERROR = 1e-13
_DELTA_FLOOR = Fraction(1, 10**300)


def as_written(value):
    """The exact fraction a budget's float stands for: its shortest decimal.

    Parameters
    ----------
    value : float or Fraction
        A budget's number (a fraction is returned as it is).

    Returns
    -------
    Fraction
        ``Fraction(repr(float(value)))``: ``1/10`` for ``0.1``.
    """
    if isinstance(value, Fraction):
        return value
    return Fraction(repr(float(value)))


def _float_from(exact, holds, towards):
    """The float nearest ``exact``, stepped one float at a time towards
    ``towards`` until ``holds`` (within an ulp or two of ``exact``)."""
    value = float(exact)
    while not holds(value):
        value = math.nextafter(value, towards)
    return value


def _float_at_most(exact):
    """The largest float whose binary value is at most ``exact``."""
    return _float_from(exact, lambda value: Fraction(value) <= exact, -math.inf)


def float_at_least(exact):
    """The smallest float whose binary value is at least ``exact``."""
    return _float_from(exact, lambda value: Fraction(value) >= exact, math.inf)


def written_at_most(exact):
    """A float whose decimal (:func:`as_written`) is at most ``exact``, within an ulp."""
    return _float_from(exact, lambda value: as_written(value) <= exact, -math.inf)


def written_at_least(exact):
    """A float whose decimal (:func:`as_written`) is at least ``exact``, within an ulp."""
    return _float_from(exact, lambda value: as_written(value) >= exact, math.inf)


def as_granted(value):
    """A grant handed to a mechanism as a float: the larger of that float and its
    decimal (a mechanism called with ``3e-06`` runs at the float, which is above
    the decimal; one called with ``0.3`` is within the decimal too)."""
    return max(Fraction(float(value)), as_written(value))


def exact_sum(values):
    """The exact sum of numbers read as written."""
    return sum((as_written(value) for value in values), Fraction(0))


def trim_to(values, limit):
    """Lower ``values`` one float at a time until their binary values, at which
    mechanisms run, add up to at most ``limit``.

    Parameters
    ----------
    values : list of float
        Non-negative parts of a grant, as computed (``eps * share``).
    limit : Fraction
        What they may add up to: the grant as written.

    Returns
    -------
    list of float
        The values, in order, most of them unchanged (``0.4`` and ``0.6`` of
        ``1.0`` add up to exactly 1); a part whose float is above its decimal
        and takes the whole grant is one float lower (``1e-05`` gives
        ``9.999999999999999e-06``).
    """
    values = list(values)
    # A share of a grant is within a few ulps of its part; each step takes one
    # float off the largest of the parts whose float is above their decimal
    # (they overcharge), else off the largest, so a handful of steps suffice.
    while values and sum(map(Fraction, values), Fraction(0)) > limit:
        over = [i for i, value in enumerate(values) if Fraction(value) > as_written(value)]
        index = max(over or range(len(values)), key=values.__getitem__)
        if values[index] == 0:
            break
        values[index] = math.nextafter(values[index], 0.0)
    return values


def sqrt_at_least(square):
    """A float whose decimal is at least ``sqrt(square)`` (a fraction), within an ulp:
    the composition of ``mu``'s, rounded up as written."""
    return _float_from(math.sqrt(square), lambda value: as_written(value) ** 2 >= square,
                       math.inf)


def block_delta_bound(mu, eps):
    """An upper bound on the ``delta`` at ``eps`` of a ``mu``-GDP block.

    Parameters
    ----------
    mu : Fraction
        The block's GDP parameter, exact (rounded up to a float here).
    eps : Fraction
        The ``eps`` the block may take, exact (rounded down to a float here).

    Returns
    -------
    Fraction
        ``gdp_delta(mu, eps)`` computed in floats, raised by its error allowance:
        never below the true value (``delta`` rises with ``mu`` and falls with
        ``eps``, so the rounding of the arguments is outward too).
    """
    if mu == 0:
        return Fraction(0)
    mu_float, eps_float = float_at_least(mu), _float_at_most(max(eps, Fraction(0)))
    if eps_float == 0:
        computed = math.erf(mu_float / (2 * math.sqrt(2)))      # 2 Phi(mu/2) - 1
        return Fraction(computed) * (1 + _DELTA_RELATIVE) + _DELTA_FLOOR
    computed = max(gaussian_delta(1.0, mu_float, eps_float), 0.0)
    log_first = float(log_ndtr(mu_float / 2 - eps_float / mu_float))
    log_second = float(log_ndtr(-mu_float / 2 - eps_float / mu_float))
    cancelled = math.exp(log_first) * _LOG_ERROR * (abs(log_first) + abs(log_second)
                                                    + eps_float + 1)
    return (Fraction(computed) * (1 + _DELTA_RELATIVE) + Fraction(cancelled)
            + _DELTA_FLOOR)
