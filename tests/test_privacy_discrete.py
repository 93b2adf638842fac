"""Exact integer samplers and the discrete Gaussian's calibration
(sklearn_dppca.privacy._discrete; Canonne, Kamath & Steinke 2020).

Checks: each sampler against its exact pmf (chi-square on pooled cells, draws
enough for power, seconds in all); integer-only outputs and determinism under the
generator; the privacy profile of the (+1, -1) shift against a brute-force sum over
the joint law of two cells; the calibrations: the chosen sigma meets the target
and one grid step (or one inflation step) less does not; the mu-GDP dominance
check catches a scale that is too small.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chi2

from sklearn_dppca.privacy import gaussian_noise_scale, gdp_delta
from sklearn_dppca.privacy._integer_noise import bernoulli_exp
from sklearn_dppca.privacy._discrete import (
    _bernoulli_exp_scalar,
    _DiscreteGaussianScale,
    discrete_gaussian,
    _discrete_gaussian_delta,
    discrete_gaussian_scale_dp,
    discrete_gaussian_scale_gdp,
    discrete_geometric,
    discrete_laplace,
    _dominated_by_gdp,
    laplace_rate,
)

# a chi-square p-value below this fails (one false alarm in 10**5 runs)
ALPHA = 1e-5


def chi_square_pvalue(draws, support, pmf, min_expected=20):
    """p-value of draws against an exact pmf, cells pooled to >= min_expected."""
    inside = draws[(draws >= support[0]) & (draws <= support[-1])]
    counts = np.bincount(inside - support[0], minlength=support.size).astype(float)
    expected = pmf * draws.size
    outside = draws.size - counts.sum()
    observed, wanted, run_o, run_e = [], [], 0.0, 0.0
    for o, e in zip(counts, expected):
        run_o, run_e = run_o + o, run_e + e
        if run_e >= min_expected:
            observed.append(run_o)
            wanted.append(run_e)
            run_o = run_e = 0.0
    observed[-1] += run_o + outside
    wanted[-1] += run_e + max(draws.size - expected.sum(), 0.0)
    observed, wanted = np.array(observed), np.array(wanted)
    statistic = float(np.sum((observed - wanted) ** 2 / wanted))
    return float(chi2.sf(statistic, len(observed) - 1))


def gaussian_pmf(sigma2, width):
    support = np.arange(-width, width + 1)
    weights = np.exp(-support.astype(float) ** 2 / (2 * float(sigma2)))
    return support, weights / weights.sum()


def laplace_pmf(rate, width):
    support = np.arange(-width, width + 1)
    weights = np.exp(-rate * np.abs(support))
    return support, weights / weights.sum()


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 7), Fraction(1),
                                   Fraction(13, 5), Fraction(9)])
def test_bernoulli_exp_rates(gamma):
    n = 200_000
    rng = np.random.default_rng(1)
    vector = bernoulli_exp(rng, np.full(n, gamma.numerator), gamma.denominator)
    p = math.exp(-gamma)
    # 5 binomial sds, but at least 3 counts for the rare case
    assert abs(vector.sum() - n * p) <= 5 * math.sqrt(n * p * (1 - p)) + 3
    scalar = [_bernoulli_exp_scalar(gamma, rng) for _ in range(4000)]
    assert abs(sum(scalar) - 4000 * p) <= 5 * math.sqrt(4000 * p * (1 - p)) + 3


def test_bernoulli_exp_huge_denominators_go_through_python_integers():
    rng = np.random.default_rng(2)
    gamma = Fraction(2**70 + 1, 2**71)       # about 1/2, far beyond int64
    draws = [_bernoulli_exp_scalar(gamma, rng) for _ in range(4000)]
    p = math.exp(-float(gamma))
    assert abs(sum(draws) - 4000 * p) <= 5 * math.sqrt(4000 * p * (1 - p))


@pytest.mark.parametrize("sigma", [0.4, 1.0, 2.7, 12.0, 300.0])
def test_discrete_gaussian_matches_its_pmf(sigma):
    scale = _DiscreteGaussianScale.at_least(sigma)
    assert scale.sigma2 >= Fraction(sigma) ** 2
    assert scale.sigma2 - Fraction(scale.t, 2**scale.k) < Fraction(sigma) ** 2
    draws = discrete_gaussian(scale, 60_000, np.random.default_rng(3))
    assert draws.dtype == np.int64
    support, pmf = gaussian_pmf(scale.sigma2, int(12 * sigma) + 3)
    assert chi_square_pvalue(draws, support, pmf) > ALPHA


def test_the_chi_square_check_has_power():
    """A law 3% too wide, and the continuous Gaussian rounded, are rejected."""
    scale = _DiscreteGaussianScale.at_least(2.7)
    draws = discrete_gaussian(scale, 60_000, np.random.default_rng(4))
    support, wider = gaussian_pmf(scale.sigma2 * Fraction(106, 100), 40)
    assert chi_square_pvalue(draws, support, wider) < ALPHA
    small = _DiscreteGaussianScale.at_least(0.4)
    rounded = np.round(np.random.default_rng(5).normal(0, 0.4, 60_000)).astype(int)
    support, pmf = gaussian_pmf(small.sigma2, 10)
    assert chi_square_pvalue(rounded, support, pmf) < ALPHA


@pytest.mark.parametrize("s, t", [(1, 1), (1, 5), (3, 7), (2**10 + 3, 2**20)])
def test_discrete_laplace_matches_its_pmf(s, t):
    draws = discrete_laplace(s, t, 60_000, np.random.default_rng(6))
    assert draws.dtype == np.int64
    support, pmf = laplace_pmf(s / t, int(60 * t / s) + 3)
    assert chi_square_pvalue(draws, support, pmf) > ALPHA


def test_samplers_are_deterministic_under_the_generator():
    scale = _DiscreteGaussianScale.at_least(5.0)
    first = discrete_gaussian(scale, 500, np.random.default_rng(7))
    np.testing.assert_array_equal(first, discrete_gaussian(scale, 500,
                                                           np.random.default_rng(7)))
    assert not np.array_equal(first, discrete_gaussian(scale, 500,
                                                       np.random.default_rng(8)))
    np.testing.assert_array_equal(discrete_laplace(1, 3, 500, np.random.default_rng(7)),
                                  discrete_laplace(1, 3, 500, np.random.default_rng(7)))
    assert discrete_gaussian(scale, 0, np.random.default_rng(7)).shape == (0,)


def test_samplers_use_no_floating_point_randomness():
    # a generator whose floating-point samplers all raise: the samplers read only
    # the bit generator's raw words (and Python's exact path, rng.integers)
    trap = type("Trap", (np.random.Generator,), {
        name: lambda self, *a, **k: pytest.fail("a float sampler was called")
        for name in ("random", "uniform", "normal", "standard_normal", "exponential",
                     "standard_exponential", "laplace", "geometric", "choice")})
    scale = _DiscreteGaussianScale.at_least(3.0)
    draws = discrete_gaussian(scale, 1000, trap(np.random.PCG64(0)))
    np.testing.assert_array_equal(draws, discrete_gaussian(scale, 1000,
                                                           np.random.default_rng(0)))
    discrete_laplace(2, 9, 1000, trap(np.random.PCG64(0)))
    discrete_geometric(2, 9, 1000, trap(np.random.PCG64(0)))


def brute_force_delta(sigma2, eps, width):
    """delta(eps) of the (+1, -1) shift, summed over the joint law of two cells."""
    support, pmf = gaussian_pmf(sigma2, width)
    x_a, x_b = np.meshgrid(support, support, indexing="ij")
    joint = np.outer(pmf, pmf)
    loss = ((x_a - 1.0) ** 2 - x_a**2 + (x_b + 1.0) ** 2 - x_b**2) / (2 * float(sigma2))
    return float(np.sum(joint * np.maximum(0.0, 1.0 - np.exp(eps - loss))))


@pytest.mark.parametrize("sigma2", [Fraction(1, 3), Fraction(2), Fraction(37, 4),
                                    Fraction(80)])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.9, 2.5])
def test_profile_agrees_with_a_brute_force_sum(sigma2, eps):
    width = int(25 * math.sqrt(sigma2)) + 5
    expected = brute_force_delta(sigma2, eps, width)
    assert _discrete_gaussian_delta(sigma2, eps) == pytest.approx(expected, rel=1e-9,
                                                                 abs=1e-300)


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-5), (0.2, 1e-8), (4.0, 1e-3),
                                        (12.0, 1e-6)])
def test_dp_calibration_meets_the_target_and_one_step_less_does_not(eps, delta):
    scale = discrete_gaussian_scale_dp(eps, delta)
    assert _discrete_gaussian_delta(scale.sigma2, eps) <= delta
    smaller = _DiscreteGaussianScale(scale.m - 1, scale.t, scale.k)
    assert _discrete_gaussian_delta(smaller.sigma2, eps) > delta * (1 - 1e-5)
    # close to the continuous Gaussian's exact calibration
    continuous = gaussian_noise_scale(math.sqrt(2), eps, delta)
    assert 0.9 < scale.sigma / continuous < 1.1


@pytest.mark.parametrize("mu", [0.01, 0.3, 1.0, 3.0])
def test_gdp_calibration_is_dominated_and_a_smaller_scale_is_not(mu):
    scale = discrete_gaussian_scale_gdp(mu)
    assert scale.sigma >= math.sqrt(2) / mu
    # spot checks off the grid, against the exact GDP profile
    for eps in np.linspace(0, 6 * mu + mu * mu, 37) + mu / 7777:
        assert _discrete_gaussian_delta(scale.sigma2, eps) <= gdp_delta(mu, eps)
    # the continuous Gaussian's own scale is not enough for the discrete one
    plain = _DiscreteGaussianScale.at_least(math.sqrt(2) / mu)
    assert not _dominated_by_gdp(plain.sigma2, mu)


def test_gdp_dominance_fails_where_the_profile_is_exceeded():
    mu = 0.5
    small = _DiscreteGaussianScale.at_least(math.sqrt(2) / mu * 0.97)
    worst = max(_discrete_gaussian_delta(small.sigma2, eps) - gdp_delta(mu, eps)
                for eps in np.linspace(0, 2, 41))
    assert worst > 0 and not _dominated_by_gdp(small.sigma2, mu)


def test_sparse_laplace_rate_is_within_its_eps():
    for eps in (1e-4, 0.3, 1.0, 7.5):
        s, t = laplace_rate(eps)
        assert Fraction(s, t) <= Fraction(eps) / 2
        assert Fraction(s, t) > Fraction(eps) / 2 * (1 - Fraction(1, 2**10))


def test_invalid_scales():
    with pytest.raises(ValueError, match="noise scale"):
        _DiscreteGaussianScale.at_least(2.0**21)
    with pytest.raises(ValueError, match="s and t"):
        discrete_laplace(0, 3, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="mu"):
        discrete_gaussian_scale_gdp(-1.0)


@pytest.mark.parametrize("s, t", [(1, 1), (1, 5), (3, 7), (2**10 + 3, 2**20)])
def test_discrete_geometric_matches_its_pmf(s, t):
    # the quantile searches' integer exponential: P(k) ~ exp(-k s / t), k >= 0
    draws = discrete_geometric(s, t, 60_000, np.random.default_rng(9))
    assert draws.dtype == np.int64 and draws.min() >= 0
    width = int(60 * t / s) + 3
    support = np.arange(-width, width + 1)
    weights = np.where(support >= 0, np.exp(-s / t * np.maximum(support, 0)), 0.0)
    assert chi_square_pvalue(draws, support, weights / weights.sum()) > ALPHA
    # and a rate 10% off is seen
    wrong = np.where(support >= 0, np.exp(-1.1 * s / t * np.maximum(support, 0)), 0.0)
    if s / t < 1:
        assert chi_square_pvalue(draws, support, wrong / wrong.sum()) < ALPHA


def test_decaying_sums_without_carry_when_the_decay_underflows():
    # exp(-1 / sigma2) is 0 below sigma2 of about 1 / 745: nothing carries (this
    # took log(0) and the histogram's calibration raised a math domain error)
    from sklearn_dppca.privacy._discrete import _decaying_sums
    values = np.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(_decaying_sums(values, 0.0, 5.0), values)
    np.testing.assert_allclose(_decaying_sums(values, 0.5, 4.0), [5.0, 3.5, 3.75])
