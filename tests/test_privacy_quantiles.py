"""Durfee (2023) unbounded private quantiles."""

import math
import sys
import warnings

import numpy as np
import pytest
from scipy.stats import chi2, norm

from sklearn_dppca.privacy import PrivacyLedger, quantile, upper_quantile

LARGEST = sys.float_info.max


# ------------------------------------------------------- a literal sequential search

def grid_point(lower, beta, i):
    try:
        return min(lower + beta ** i - 1, LARGEST)
    except OverflowError:
        return LARGEST


def sequential_upper(x, q, eps, rng, lower=0.0, beta=1.01, max_steps=5000,
                     draw_all=False):
    """Step-by-step search; returns (t, 1-based stopping step or None at the cap)."""
    target = q * len(x) + rng.exponential(2 / eps)
    noises = rng.exponential(2 / eps, size=max_steps) if draw_all else None
    for i in range(1, max_steps + 1):
        t = grid_point(lower, beta, i)
        count = sum(1 for value in x if value < t)
        noise = noises[i - 1] if draw_all else rng.exponential(2 / eps)
        if count + noise >= target:
            return t, i
    return t, None


def sequential_quantile(x, q, eps, rng, beta=1.01, max_steps=5000):
    positive = [max(beta * v + beta - 1, 0.0) for v in x]
    negative = [max(-beta * v + beta - 1, 0.0) for v in x]
    _, stop_pos = sequential_upper(positive, q, eps / 2, rng, 0.0, beta, max_steps, True)
    _, stop_neg = sequential_upper(negative, 1 - q, eps / 2, rng, 0.0, beta, max_steps,
                                   True)
    if stop_pos is not None and stop_pos - 1 > 0:
        return grid_point(0.0, beta, stop_pos - 1)
    if stop_neg is not None and stop_neg - 1 > 0:
        return -grid_point(0.0, beta, stop_neg - 1)
    return 0.0


@pytest.mark.parametrize("seed", range(12))
def test_one_sided_matches_sequential_search(seed):
    data_rng = np.random.default_rng(100 + seed)
    x = np.abs(data_rng.standard_t(3, size=60)) * 10.0 ** data_rng.integers(-3, 4)
    q = [0.1, 0.5, 0.9][seed % 3]
    eps = [0.2, 1.0, 5.0][seed % 3]
    lower = [0.0, -2.5, 0.0][seed % 3]
    vectorised = upper_quantile(x, q, eps, np.random.default_rng(seed), lower=lower,
                                beta=1.05, max_steps=600)
    literal, _ = sequential_upper(list(x), q, eps, np.random.default_rng(seed),
                                  lower=lower, beta=1.05, max_steps=600)
    assert vectorised == pytest.approx(literal, rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_two_sided_matches_sequential_search(seed):
    data_rng = np.random.default_rng(200 + seed)
    centre = [0.0, 30.0, -30.0, 0.001][seed % 4]
    x = centre + data_rng.standard_normal(80) * [1.0, 5.0, 5.0, 0.01][seed % 4]
    q = [0.5, 0.05, 0.95][seed % 3]
    vectorised = quantile(x, q, 1.0, np.random.default_rng(seed), beta=1.02,
                          max_steps=1500)
    literal = sequential_quantile(list(x), q, 1.0, np.random.default_rng(seed),
                                  beta=1.02, max_steps=1500)
    assert vectorised == pytest.approx(literal, rel=1e-12, abs=1e-300)


def test_both_sides_always_run():
    # The number of draws does not depend on the data (nothing leaks through
    # the generator's later state).
    after = []
    for x in (np.full(50, 1e9), np.full(50, -1e9), np.zeros(50)):
        rng = np.random.default_rng(7)
        quantile(x, 0.5, 1.0, rng)
        after.append(rng.random())
    assert after[0] == after[1] == after[2]


# ------------------------------------------------------------------------- accuracy

def share_within(estimates, truth, tolerance):
    return np.mean(np.abs(np.asarray(estimates) - truth) <= tolerance)


def test_accuracy_median_and_tail_and_far_data():
    rng = np.random.default_rng(2023)
    medians, tails, far, chi_tails = [], [], [], []
    for _ in range(50):
        x = rng.standard_normal(10_000)
        medians.append(quantile(x, 0.5, 1.0, rng))
        tails.append(quantile(x, 0.99, 1.0, rng))
        far.append(quantile(1e4 + x, 0.5, 1.0, rng))
        chi_tails.append(upper_quantile(x * x, 0.99, 1.0, rng))
    assert share_within(medians, 0.0, 0.1) >= 0.9
    assert share_within(tails, norm.ppf(0.99), 0.1 * norm.ppf(0.99)) >= 0.9
    assert share_within(far, 1e4, 0.015 * 1e4) >= 0.9
    assert share_within(chi_tails, chi2.ppf(0.99, 1), 0.1 * chi2.ppf(0.99, 1)) >= 0.9


def test_one_sided_result_sits_on_grid_above_lower():
    rng = np.random.default_rng(5)
    x = 3.0 + rng.exponential(size=500)
    result = upper_quantile(x, 0.5, 1.0, rng, lower=3.0, beta=1.1, max_steps=300)
    step = math.log(result - 3.0 + 1) / math.log(1.1)
    assert result > 3.0 and step == pytest.approx(round(step), abs=1e-9)


# ----------------------------------------------------------------- cap, saturation

def test_cap_warns_and_returns_grid_end():
    x = np.full(1000, 1e30)
    with pytest.warns(UserWarning, match="max_steps"):
        result = upper_quantile(x, 0.5, 1.0, np.random.default_rng(0), max_steps=2800)
    assert result == pytest.approx(1.01 ** 2800 - 1, rel=1e-9)
    with pytest.warns(UserWarning, match="max_steps"):
        assert quantile(x, 0.5, 1.0, np.random.default_rng(0), max_steps=2800) == 0.0


def test_grid_saturates_at_largest_float():
    x = np.full(100, 1.7e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning, no cap warning
        warnings.filterwarnings("ignore", message=".*probably stopped far")  # n = 100
        above = upper_quantile(x, 0.5, 1.0, np.random.default_rng(1), beta=2.0,
                               max_steps=2000)
        # The two-sided search maps x to beta |x| + beta - 1: keep that finite.
        below = quantile(np.full(100, -1e307), 0.5, 1.0, np.random.default_rng(1),
                         beta=2.0, max_steps=2000)
    # 2**1024 - 1 overflows: the first grid point above the data is (at most) the
    # largest float, the search stops there.
    assert 1.7e308 <= above <= LARGEST
    # The negative side stops at the first 2**i - 1 above 2e307 + 1, i = 1021, and
    # reports -(2**(i - 1) - 1).
    assert below == pytest.approx(-(2.0 ** 1020), rel=1e-12)


def test_ledger_entry():
    ledger = PrivacyLedger()
    x = np.arange(20.0)
    upper_quantile(x, 0.9, 0.4, np.random.default_rng(0), ledger=ledger, step="radius")
    quantile(x, 0.5, 0.6, np.random.default_rng(0), ledger=ledger, step="centre")
    radius, centre = ledger.entries
    assert radius["mechanism"] == centre["mechanism"] == "durfee quantile"
    assert (radius["step"], radius["eps"], radius["delta"]) == ("radius", 0.4, 0.0)
    assert (radius["sensitivity"], radius["sensitivity_norm"]) == (1.0, "count")
    assert radius["noise_scale"] == pytest.approx(2 / 0.4)
    # Each side of the two-sided search runs at eps/2: Exp noise of mean 4/eps.
    assert centre["noise_scale"] == pytest.approx(4 / 0.6)
    assert ledger.spent() == pytest.approx((1.0, 0.0))


# ----------------------------------------------------------------------- validation

@pytest.mark.parametrize("q", [0.0, 1.0, -0.2, 1.5, float("nan")])
def test_bad_level(q):
    with pytest.raises(ValueError, match="q"):
        quantile(np.arange(5.0), q, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="q"):
        upper_quantile(np.arange(5.0), q, 1.0, np.random.default_rng(0))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"beta": 1.0}, ValueError, "beta"),
    ({"beta": 0.5}, ValueError, "beta"),
    ({"beta": float("inf")}, ValueError, "beta"),
    ({"beta": "2"}, TypeError, "beta"),
    ({"max_steps": 0}, ValueError, "max_steps"),
    ({"max_steps": 10.5}, TypeError, "max_steps"),
    ({"beta": 1.001}, ValueError, "max_steps"),  # 1.001**5000 is only about 148
    ({"beta": 2.0, "max_steps": 30}, ValueError, "max_steps"),
])
def test_bad_grid(kwargs, error, match):
    for function in (quantile, upper_quantile):
        with pytest.raises(error, match=match):
            function(np.arange(5.0), 0.5, 1.0, np.random.default_rng(0), **kwargs)


@pytest.mark.parametrize("x", [[], [[1.0, 2.0]], [1.0, float("nan")], [1.0, np.inf],
                               ["a", "b"]])
def test_bad_values(x):
    with pytest.raises((ValueError, TypeError), match="x"):
        quantile(x, 0.5, 1.0, np.random.default_rng(0))
    with pytest.raises((ValueError, TypeError), match="x"):
        upper_quantile(x, 0.5, 1.0, np.random.default_rng(0))


def test_one_sided_needs_values_above_lower_and_valid_eps():
    with pytest.raises(ValueError, match="lower"):
        upper_quantile([0.5, 1.0], 0.5, 1.0, np.random.default_rng(0), lower=0.75)
    with pytest.raises(ValueError, match="lower"):
        upper_quantile([0.5, 1.0], 0.5, 1.0, np.random.default_rng(0), lower=-np.inf)
    with pytest.raises(ValueError, match="eps"):
        upper_quantile([0.5, 1.0], 0.5, 0.0, np.random.default_rng(0))
