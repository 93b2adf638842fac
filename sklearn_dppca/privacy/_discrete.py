"""Exact integer noise: Bernoulli(exp(-gamma)), discrete Laplace, discrete Gaussian.

The samplers follow Canonne, Kamath & Steinke (2020), "The discrete Gaussian for
differential privacy" (their Algorithms 1-3). Every random choice is a uniform
integer below a bound, from the generator's raw 64-bit words, and every decision
an integer comparison: no float enters the sampling path, so the released
integers follow the stated law exactly (up to the quality of NumPy's bit
generator). The loops are compiled (``_integer_noise.pyx``), one draw at a time;
the bounds keep every product in 64 bits (a draw that would leave them, with
probability below ``e**-1000``, is finished on Python integers and fractions,
below).

Laws.

* ``discrete Laplace`` with rate ``a = s/t`` (integers ``s, t > 0``):
  ``P(z) = (1 - e**-a) / (1 + e**-a) * e**(-a |z|)`` on the integers.
* ``discrete Gaussian`` ``N_Z(0, sigma2)`` with a rational ``sigma2``:
  ``P(z)`` proportional to ``exp(-z**2 / (2 sigma2))`` on the integers. Here
  ``sigma2 = m t / 2**k`` (:class:`_DiscreteGaussianScale`): ``t`` is the integer
  scale of the discrete Laplace proposal, and this form keeps the acceptance
  probability ``exp(-(|y| - sigma2/t)**2 / (2 sigma2))`` a ratio of small integers.

Privacy profiles (used by the histogram mechanisms, ``_histograms.py``). A count
vector under replacement adjacency moves by ``+1`` in one cell and ``-1`` in another.
With independent ``N_Z(0, sigma2)`` noise on every cell, the privacy loss is
``L = (1 + D) / sigma2`` with ``D = X_b - X_a`` the difference of two independent
draws, whose law has the closed form
``P(D = k) = exp(-k**2 / (4 sigma2)) S_(k mod 2) / Z**2`` (``Z`` the normaliser of
``N_Z(0, sigma2)``, ``S_0 = sum_j exp(-j**2/sigma2)``,
``S_1 = sum_j exp(-(j + 1/2)**2/sigma2)``), from
``j**2 + (j + k)**2 = 2 (j + k/2)**2 + k**2/2``. The exact profile is
``delta(eps) = sum_{k: L_k > eps} P(D = k) (1 - exp(eps - L_k))``; it is the same
in both directions since ``D`` is symmetric.
"""

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import log_ndtr, logsumexp

from ._integer_noise import exponential as _exponential_draws
from ._integer_noise import gaussian as _gaussian_draws
from ._calibration import check_delta, check_eps, gaussian_noise_scale

# Largest noise scale the discrete Gaussian accepts: its privacy profile is summed
# over about 70 sigma lattice points.
_MAX_SIGMA = 2.0**20
# Denominators of the Bernoulli draws stay below 2**_DEN_BITS ...
_DEN_BITS = 40
# Python's uniform integers below a bound up to this come from one rng.integers.
_SAFE = 2**62
# The mu-GDP dominance is checked where the mu-GDP profile is at least this.
_PROFILE_FLOOR = 1e-200
# Relative slack of the numerical sums (round-off of sums of ~1e7 positive terms).
_SUM_SLACK = 1e-6
# Grid of the dominance check: eps steps of mu / _GRID_PER_MU.
_GRID_PER_MU = 2000
# Chunk of lattice points summed at once (memory).
_CHUNK = 2**20


# --- exact sampling -----------------------------------------------------------

def _uniform_below(bound, rng):
    """One uniform integer in ``[0, bound)`` for a Python int of any size."""
    if bound <= _SAFE:
        return int(rng.integers(0, bound))
    n_words = -(-bound.bit_length() // 62)
    while True:   # rejection from [0, 2**(62 n)): exact
        value = 0
        for word in rng.integers(0, 2**62, size=n_words):
            value = (value << 62) | int(word)
        value >>= 62 * n_words - bound.bit_length()
        if value < bound:
            return value


def _bernoulli_exp_unit_scalar(gamma, rng):
    """Bernoulli(exp(-gamma)) for a Fraction in [0, 1] (CKS Algorithm 1)."""
    k = 1
    while _uniform_below(gamma.denominator * k, rng) < gamma.numerator:
        k += 1          # Bernoulli(gamma / k) succeeded
    return k % 2 == 1


def _bernoulli_exp_scalar(gamma, rng):
    """One draw of Bernoulli(exp(-gamma)) for a Fraction ``gamma >= 0``."""
    gamma = Fraction(gamma)
    whole = math.floor(gamma)
    for _ in range(whole):
        if not _bernoulli_exp_unit_scalar(Fraction(1), rng):
            return False
    return _bernoulli_exp_unit_scalar(gamma - whole, rng)


def discrete_laplace(s, t, size, rng):
    """Draw ``size`` integers from the discrete Laplace law of rate ``s/t``.

    ``P(z)`` is proportional to ``exp(-|z| s / t)``; Canonne, Kamath & Steinke
    (2020), Algorithm 2, from uniform integers only.

    Parameters
    ----------
    s, t : int
        Positive integers; the rate is ``s / t`` (scale ``t / s``).
    size : int
        Number of draws.
    rng : numpy.random.Generator
        The only source of randomness (its bit generator's raw words).

    Returns
    -------
    ndarray of shape (size,), int64
        The draws.
    """
    return _exponential_draws(rng, _check_rate(s, t), int(t), int(size), True)


def discrete_geometric(s, t, size, rng):
    """``size`` integers ``y >= 0`` with ``P(y)`` proportional to ``exp(-y s/t)``:
    the one-sided :func:`discrete_laplace` (same arguments; the integer analogue
    of an exponential of mean ``t/s``), for the quantile searches."""
    return _exponential_draws(rng, _check_rate(s, t), int(t), int(size), False)


def _check_rate(s, t):
    """``s`` after checking the rate ``s/t``: positive integers, ``t < 2**40``."""
    s, t = int(s), int(t)
    if s <= 0 or t <= 0 or t >= 2**40:
        raise ValueError("s and t must be positive integers with t < 2**40.")
    return s


@dataclass(frozen=True)
class _DiscreteGaussianScale:
    """``sigma2 = m t / 2**k``: ``t`` the integer scale of the Laplace proposal."""

    m: int
    t: int
    k: int

    @property
    def sigma2(self):
        return Fraction(self.m * self.t, 2**self.k)

    @property
    def sigma(self):
        return math.sqrt(self.m * self.t / 2.0**self.k)

    @classmethod
    def at_least(cls, sigma):
        """The smallest representable scale with ``sigma2 >= sigma**2``.

        ``t = floor(sigma) + 1`` (the efficient proposal of CKS) and ``k`` as large
        as keeps ``2**(k+1) m t`` below ``2**40``: a grid of ``sigma2`` with steps
        ``t / 2**k``, relative steps of about ``2**-20`` or finer.
        """
        if not (math.isfinite(sigma) and 0 < sigma <= _MAX_SIGMA):
            raise ValueError(
                f"The discrete Gaussian's noise scale must be in (0, {_MAX_SIGMA:g}], "
                f"got {sigma:g}: increase eps (or mu).")
        t = math.floor(sigma) + 1
        k = max(0, math.floor((_DEN_BITS - 1 - math.log2(sigma * sigma)) / 2) - 1)
        m = math.ceil(Fraction(sigma) ** 2 * 2**k / t)
        return cls(m, t, k)


def discrete_gaussian(scale, size, rng):
    """Draw ``size`` integers from ``N_Z(0, scale.sigma2)`` (CKS Algorithm 3).

    A discrete Laplace proposal of scale ``t``, accepted with probability
    ``exp(-(|y| - sigma2/t)**2 / (2 sigma2))``, decided by an exact Bernoulli.

    Parameters
    ----------
    scale : _DiscreteGaussianScale
        The rational ``sigma2``.
    size : int
        Number of draws.
    rng : numpy.random.Generator
        The only source of randomness (its bit generator's raw words).

    Returns
    -------
    ndarray of shape (size,), int64
        The draws.
    """
    def slow_accept(y):    # a proposal past 2**31 steps: exact fractions
        gamma = (abs(y) - scale.sigma2 / scale.t) ** 2 / (2 * scale.sigma2)
        return _bernoulli_exp_scalar(gamma, rng)

    return _gaussian_draws(rng, scale.m, scale.t, scale.k, int(size), slow_accept)


# --- privacy profiles -----------------------------------------------------------

def _log_normalisers(sigma2):
    """``log Z``, ``log S_0``, ``log S_1`` of the module docstring.

    For ``sigma2 >= 64`` Poisson summation gives ``sum_j exp(-(j+c)**2/(2 v)) =
    sqrt(2 pi v) (1 + r)`` with ``|r| <= 2 exp(-2 pi**2 v) / (1 - ...)``, below
    ``1e-500`` here (every ``v >= 32``): the closed forms are exact in double
    precision. Below, the sums are taken directly over ``|j| <= 40 sigma + 10``.
    """
    if sigma2 >= 64:
        log_z = 0.5 * math.log(2 * math.pi * sigma2)
        log_s = 0.5 * math.log(math.pi * sigma2)
        return log_z, log_s, log_s
    width = int(40 * math.sqrt(sigma2)) + 10
    j = np.arange(-width, width + 1, dtype=float)
    return (float(logsumexp(-j**2 / (2 * sigma2))), float(logsumexp(-j**2 / sigma2)),
            float(logsumexp(-(j + 0.5) ** 2 / sigma2)))


def _log_pmf_difference(k, sigma2, normalisers):
    """``log P(D = k)`` for an integer array ``k`` (``D = X_b - X_a``)."""
    log_z, log_even, log_odd = normalisers
    return -(k.astype(float) ** 2) / (4 * sigma2) \
        + np.where(k % 2 == 0, log_even, log_odd) - 2 * log_z


def _first_index(eps, sigma2):
    """Smallest ``k`` with ``L_k = (1 + k)/sigma2 > eps`` (``eps >= 0``)."""
    return np.floor(np.asarray(eps) * sigma2 - 1).astype(np.int64) + 1


def _discrete_gaussian_delta(sigma2, eps):
    """The exact ``delta(eps)`` of ``N_Z(0, sigma2)`` noise on a count vector.

    The shift is ``+1`` in one cell and ``-1`` in another (one row replaced).
    The sum is taken in log space over ``k*`` to ``k* + 14 sigma`` (the rest
    weighs below ``exp(-49)`` of it).

    Parameters
    ----------
    sigma2 : Fraction or float
        The discrete Gaussian's ``sigma2``.
    eps : float
        The ``eps`` at which ``delta`` is evaluated, >= 0.

    Returns
    -------
    float
        ``delta(eps)``.
    """
    sigma2 = float(sigma2)
    sigma = math.sqrt(sigma2)
    start = int(_first_index(eps, sigma2))
    k = np.arange(start, start + int(14 * sigma) + 20, dtype=np.int64)
    log_pmf = _log_pmf_difference(k, sigma2, _log_normalisers(sigma2))
    # 1 - exp(eps - L_k) without cancellation
    log_factor = np.log(-np.expm1(eps - (1.0 + k) / sigma2))
    return float(np.exp(logsumexp(log_pmf + log_factor)))


def _decaying_sums(values, decay, previous):
    """``y_n = values_n + decay y_{n-1}`` with ``y_{-1} = previous``, every term >= 0.

    In runs short enough that ``decay**-length`` stays below ``e**200``:
    ``y_i = decay**i (sum_{m <= i} decay**-m values_m + decay previous)``, a sum of
    positive terms (no cancellation). (NumPy only: SciPy's ``lfilter`` would bring
    ``scipy.signal``, a long import, onto every fit's path.)
    """
    if decay == 0.0:
        # (a scale so small that exp(-1 / sigma2) underflows: nothing carries;
        # eps = 1e4 reached here and the histogram's budget check raised)
        return np.array(values, dtype=float, copy=True)
    rate = -math.log(decay)
    run = values.size if rate == 0 else max(1, int(200.0 / rate))
    sums = np.empty_like(values)
    for start in range(0, values.size, run):
        part = values[start:start + run]
        growth = np.exp(rate * np.arange(part.size))
        sums[start:start + part.size] = (np.cumsum(part * growth) + decay * previous) / growth
        previous = sums[start + part.size - 1]
    return sums


def _discrete_profile_on_grid(sigma2, eps):
    """``delta(eps)`` on a sorted grid ``eps >= 0``, all at once, no cancellation.

    With ``c = 1/sigma2`` and ``j = k*(eps)``, ``1 - exp(eps - L_k) =
    (1 - exp(-(k-j) c)) + exp(-(k-j) c) (1 - exp(eps - L_j))``, hence
    ``delta = A_j + (1 - exp(eps - L_j)) B_j`` with the positive tail sums
    ``B_j = sum_{k >= j} P_k exp(-(k-j) c) = P_j + exp(-c) B_{j+1}`` and
    ``A_j = (1 - exp(-c)) T_{j+1} + exp(-c) A_{j+1}``, ``T`` the tail of ``P``:
    first-order recursions summed backwards in chunks, every term positive.
    """
    sigma = math.sqrt(sigma2)
    starts = _first_index(eps, sigma2)
    low, high = int(starts.min()), int(starts.max()) + int(14 * sigma) + 20
    normalisers = _log_normalisers(sigma2)
    decay = math.exp(-1.0 / sigma2)
    gap = -math.expm1(-1.0 / sigma2)
    # the probabilities are scaled by exp(offset) so that the tails at the grid's
    # end do not underflow (the profile's floor is 1e-200)
    offset = -float(_log_pmf_difference(np.array([low]), sigma2, normalisers)[0])
    tail_a, tail_b = {}, {}
    state_a = state_b = state_t = 0.0
    for stop in range(high, low - 1, -_CHUNK):
        k = np.arange(stop, max(stop - _CHUNK, low - 1), -1, dtype=np.int64)
        pmf = np.exp(_log_pmf_difference(k, sigma2, normalisers) + offset)
        t_next = state_t + np.concatenate(([0.0], np.cumsum(pmf)[:-1]))   # T_{k+1}
        b = _decaying_sums(pmf, decay, state_b)
        a = _decaying_sums(gap * t_next, decay, state_a)
        state_t, state_b, state_a = t_next[-1] + pmf[-1], b[-1], a[-1]
        wanted = (starts <= stop) & (starts > stop - _CHUNK)
        for j in np.unique(starts[wanted]):
            tail_a[j], tail_b[j] = a[stop - j], b[stop - j]
    a = np.array([tail_a[j] for j in starts])
    b = np.array([tail_b[j] for j in starts])
    factor = -np.expm1(np.asarray(eps) - (1.0 + starts) / sigma2)
    with np.errstate(divide="ignore"):
        return np.log(a + factor * b) - offset


def _log_gdp_delta(mu, eps):
    """``log delta(eps)`` of ``mu``-GDP, vectorised, in log space."""
    eps = np.asarray(eps, dtype=float)
    first = log_ndtr(-eps / mu + mu / 2)
    second = log_ndtr(-eps / mu - mu / 2)
    with np.errstate(divide="ignore"):
        return first + np.log(-np.expm1(eps + second - first))


def _gdp_grid(mu):
    """``eps_0 = 0 < eps_1 < ...`` in steps ``mu/2000`` until the mu-GDP profile
    falls below ``_PROFILE_FLOOR``, plus one point beyond."""
    step = mu / _GRID_PER_MU
    end = mu * mu / 2 + mu * math.sqrt(2 * -math.log(_PROFILE_FLOOR)) + 2 * mu
    grid = np.arange(0.0, end + step, step)
    log_gdp = _log_gdp_delta(mu, grid)
    last = int(np.flatnonzero(log_gdp >= math.log(_PROFILE_FLOOR))[-1])
    return grid[:last + 2], log_gdp[:last + 2]


def _dominated_by_gdp(sigma2, mu):
    """Whether the discrete Gaussian's profile lies below the ``mu``-GDP one.

    On the grid ``eps_i`` of :func:`_gdp_grid` it checks
    ``delta_Z(eps_i) (1 + 1e-6) <= delta_mu(eps_{i+1})``. Both profiles fall
    with ``eps``, so for ``eps`` in ``[eps_i, eps_{i+1}]``:
    ``delta_Z(eps) <= delta_Z(eps_i) <= delta_mu(eps_{i+1}) <= delta_mu(eps)``.
    This covers every ``eps >= 0`` at which ``delta_mu(eps) >= 1e-200``, and
    beyond that point ``delta_Z <= delta_mu(eps_last) < 1e-200``.

    Parameters
    ----------
    sigma2 : Fraction or float
        The discrete Gaussian's ``sigma2``.
    mu : float
        The GDP parameter, > 0.

    Returns
    -------
    bool
    """
    grid, log_gdp = _gdp_grid(mu)
    log_discrete = _discrete_profile_on_grid(float(sigma2), grid[:-1])
    return bool(np.all(log_discrete + math.log1p(_SUM_SLACK) <= log_gdp[1:]))


# Inflations of sqrt(2)/mu tried, smallest first (the grid's steps alone need about 1e-3).
_GDP_INFLATIONS = (1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1.0, 3.0)


@functools.lru_cache(maxsize=256)
def discrete_gaussian_scale_gdp(mu):
    """The discrete Gaussian scale whose histogram release is ``mu``-GDP.

    The smallest ``sigma = (sqrt(2)/mu)(1 + tau)``, ``tau`` in
    ``1e-3, 2e-3, 5e-3, 1e-2, ...``, rounded up to the rational grid, whose profile
    passes :func:`_dominated_by_gdp`.

    Parameters
    ----------
    mu : float
        The part's GDP parameter, > 0.

    Returns
    -------
    _DiscreteGaussianScale
    """
    mu = check_eps(mu, name="mu")
    for tau in _GDP_INFLATIONS:
        scale = _DiscreteGaussianScale.at_least(math.sqrt(2.0) / mu * (1 + tau))
        if _dominated_by_gdp(scale.sigma2, mu):
            return scale
    raise ValueError(f"No discrete Gaussian scale found for mu={mu:g}.")


@functools.lru_cache(maxsize=256)
def discrete_gaussian_scale_dp(eps, delta):
    """The smallest discrete Gaussian scale (on the rational grid) whose exact
    histogram profile meets ``delta(eps) <= delta``.

    Bisection on the grid's integer ``m``, from the continuous Gaussian's scale;
    the slack ``1e-6`` of the sums is kept.

    Parameters
    ----------
    eps : float
        Privacy parameter, > 0.
    delta : float
        Privacy parameter, in (0, 1).

    Returns
    -------
    _DiscreteGaussianScale
    """
    eps, delta = check_eps(eps), check_delta(delta)

    def meets(scale):
        return _discrete_gaussian_delta(scale.sigma2, eps) * (1 + _SUM_SLACK) <= delta

    sigma = gaussian_noise_scale(math.sqrt(2.0), eps, delta)
    high = _DiscreteGaussianScale.at_least(sigma)
    factor = 1.001
    while not meets(high):
        high = _DiscreteGaussianScale.at_least(sigma * factor)
        factor = 1 + 2 * (factor - 1)
    low = _DiscreteGaussianScale(max(high.m // 2, 1), high.t, high.k)
    while meets(low) and low.m > 1:
        low = _DiscreteGaussianScale(max(low.m // 2, 1), low.t, low.k)
    if meets(low):
        return low
    while high.m - low.m > 1:   # meets(high), not meets(low)
        middle = _DiscreteGaussianScale((low.m + high.m) // 2, high.t, high.k)
        low, high = (low, middle) if meets(middle) else (middle, high)
    return high


# --- the sparse histogram's discrete Laplace ------------------------------------

def laplace_rate(eps):
    """The rate ``s/t <= eps/2`` of the sparse histogram's discrete Laplace.

    ``t = 2**j`` with ``j >= 20`` and ``s = floor(eps/2 * t) >= 2**10``: a rate
    within ``2**-10`` (relative) of ``eps/2`` and never above it.
    """
    eps = check_eps(eps)
    half = Fraction(eps) / 2
    j = 20
    while math.floor(half * 2**j) < 2**10:
        j += 1
    if j >= 40:
        raise ValueError(f"eps={eps:g} is too small for the discrete Laplace.")
    return math.floor(half * 2**j), 2**j
