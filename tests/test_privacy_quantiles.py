"""Durfee (2023) unbounded private quantiles."""

import math
import sys
import warnings

import numpy as np
import pytest
from scipy.stats import chi2, norm

from sklearn_dppca.privacy import (PrivacyLedger, PrivacyUtilityWarning, quantile,
                                    upper_quantile)
from sklearn_dppca.privacy._discrete import laplace_rate
from sklearn_dppca.privacy._quantiles import (
    _SCALE_FREE_GRID,
    _count_search,
    _counts_below,
    _geometric_grid,
    even_counts,
    geometric_counts,
    scale_free_counts,
)

LARGEST = sys.float_info.max


# ------------------------------------------------------- a literal sequential search

def _stops(search, x, q, eps, grid, seeds):
    """Stopping indices of ``search`` over many seeds (-1 at the cap)."""
    out = []
    for seed in seeds:
        stop = search(np.sort(x), q, eps, np.random.default_rng(seed), grid)
        out.append(-1 if stop is None else stop)
    return np.array(out)


def _search_on(sorted_x, q, eps, rng, grid):
    """The package's search (:func:`_count_search`) on sorted values: their
    counts below the grid, as the rows' passes count them."""
    return _count_search(np.searchsorted(sorted_x, grid, side="left"), sorted_x.size,
                         q, eps, rng)


def _literal_search_on(sorted_x, q, eps, rng, grid, noise_mean=None):
    """The search point by point: one fresh integer exponential per grid point.

    ``floor(Exp)`` of rate ``a`` has ``P(E >= k) = exp(-a k)``: the integer
    exponential of the package's exact sampler, drawn here another way (with the
    rate ``s/t`` of :func:`laplace_rate`, just below ``eps/2``)."""
    s, t = laplace_rate(eps)
    noise_mean = t / s if noise_mean is None else noise_mean
    target = q * sorted_x.size + math.floor(rng.exponential(noise_mean))
    for i, point in enumerate(grid):
        if np.sum(sorted_x < point) + math.floor(rng.exponential(noise_mean)) >= target:
            return i
    return None


def _same_law(a, b):
    from scipy.stats import chi2_contingency

    values = np.union1d(a, b)
    table = np.array([[np.sum(a == v) for v in values], [np.sum(b == v) for v in values]])
    keep = table.sum(axis=0) >= 10          # pool the rare stops
    pooled = np.column_stack([table[:, keep], table[:, ~keep].sum(axis=1)])
    pooled = pooled[:, pooled.sum(axis=0) > 0]
    return chi2_contingency(pooled)[1]


@pytest.mark.parametrize("q, eps", [(0.5, 0.5), (0.9, 2.0), (0.1, 0.2)])
def test_search_has_the_law_of_the_point_by_point_search(q, eps):
    # 2000 searches each on a 150-point grid over 40 values: the exact integer
    # noise must give the stopping distribution of a literal search
    x = np.abs(np.random.default_rng(1).standard_t(3, size=40)) * 3.0
    grid = _geometric_grid(0.0, 1.05, 150)
    fast = _stops(_search_on, x, q, eps, grid, range(2000))
    literal = _stops(_literal_search_on, x, q, eps, grid, range(10**6, 10**6 + 2000))
    assert _same_law(fast, literal) > 1e-3


def test_the_law_check_catches_a_wrong_noise_scale():
    # the same comparison against a search with half the noise must fail
    x = np.abs(np.random.default_rng(1).standard_t(3, size=40)) * 3.0
    grid = _geometric_grid(0.0, 1.05, 150)
    fast = _stops(_search_on, x, 0.5, 0.5, grid, range(2000))
    halved = _stops(lambda *a: _literal_search_on(*a, noise_mean=2.0), x, 0.5, 0.5, grid,
                    range(10**6, 10**6 + 2000))
    assert _same_law(fast, halved) < 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_two_sided_and_one_sided_follow_their_definition(seed):
    # quantile() is the two one-sided searches and the choice rule between them
    x = np.random.default_rng(200 + seed).standard_normal(80) * 5.0 + [0.0, 30.0][seed % 2]
    beta, steps = 1.02, 1500
    value = quantile(x, 0.5, 1.0, np.random.default_rng(seed), beta=beta, max_steps=steps)
    rng = np.random.default_rng(seed)
    xs = np.sort(x)
    grid = _geometric_grid(0.0, beta, steps)
    positive = np.maximum(beta * xs + beta - 1, 0.0)
    negative = np.maximum(-beta * xs[::-1] + beta - 1, 0.0)
    up, down = _search_on(positive, 0.5, 0.5, rng, grid), _search_on(negative, 0.5, 0.5,
                                                                      rng, grid)
    expected = (grid[up - 1] if up not in (None, 0) else
                -grid[down - 1] if down not in (None, 0) else 0.0)
    assert value == expected
    upper = upper_quantile(np.abs(x), 0.9, 1.0, np.random.default_rng(seed), beta=beta,
                           max_steps=steps)
    stop = _search_on(np.sort(np.abs(x)), 0.9, 1.0, np.random.default_rng(seed), grid)
    assert upper == grid[stop]


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


def test_upper_quantile_overshoots_only_when_its_target_passes_n():
    # The threshold noise (mean 2 / eps) lifts the target q n + Exp above n with
    # probability exp(-(1 - q) n eps / 2); only then can the search pass the
    # largest value, and it may run far past it (each grid point beyond stops it
    # with probability exp(-(T - n) eps / 2)). A tail of one noise mean overshoots
    # often and far; a tail of six almost never.
    x = np.random.default_rng(0).uniform(1.0, 2.0, size=1000)
    eps, runs = 0.1, 2000
    rng = np.random.default_rng(1)
    for tail_means, lowest, highest in [(1.0, 0.02, math.exp(-1.0)), (6.0, 0.0, 0.01)]:
        q = 1.0 - tail_means * (2.0 / eps) / x.size
        with warnings.catch_warnings():   # a run may reach the end of the grid
            warnings.simplefilter("ignore", PrivacyUtilityWarning)
            found = np.array([upper_quantile(x, q, eps, rng) for _ in range(runs)])
        past = np.mean(found > x.max())
        assert lowest <= past <= highest
        if tail_means == 1.0:
            assert np.max(found) > 1.5 * x.max()


# --- the counts a search reads: binned from the grid's formula, exact -------------

def _hard_values(grid, rng):
    """Values where a bin guessed from a formula is most likely wrong: every grid
    point, its float neighbours, the ends of the float range, zero, negatives,
    infinities and NaN, and random values over many scales."""
    points = grid[rng.choice(grid.size, size=min(grid.size, 2000), replace=False)]
    spread = np.abs(rng.standard_cauchy(3000)) * 10.0 ** rng.uniform(-300, 300, 3000)
    with np.errstate(over="ignore"):   # the largest float's neighbour is inf
        above = np.nextafter(points, np.inf)
    return np.concatenate([
        points, np.nextafter(points, -np.inf), above,
        grid[:3], grid[-3:], spread, -spread,
        [0.0, -0.0, 5e-324, np.finfo(float).tiny, np.finfo(float).max, np.inf,
         -np.inf, np.nan],
    ])


def _sorted_counts(values, grid):
    """The reference: #{x < t} by sorting the values."""
    return np.searchsorted(np.sort(values), grid, side="left")


@pytest.mark.parametrize("lower, beta, max_steps", [
    (0.0, 1.01, 5000), (0.0, 1.0001, 29000), (-3.5, 1.2, 400), (0.0, 2.0, 1100),
])
def test_geometric_counts_equal_the_sorted_counts(lower, beta, max_steps):
    grid = _geometric_grid(lower, beta, max_steps)
    values = _hard_values(grid, np.random.default_rng(0))
    np.testing.assert_array_equal(geometric_counts(values, lower, beta, max_steps),
                                  _sorted_counts(values, grid))


def test_scale_free_and_even_counts_equal_the_sorted_counts():
    rng = np.random.default_rng(1)
    values = _hard_values(_SCALE_FREE_GRID, rng)
    np.testing.assert_array_equal(scale_free_counts(values),
                                  _sorted_counts(values, _SCALE_FREE_GRID))
    for low, high, points in [(-4.0, 4.0, 40_001), (0.1, 0.3, 7), (-1e300, 1e300, 101)]:
        grid = np.linspace(low, high, points)
        values = np.concatenate([_hard_values(grid, rng), rng.uniform(low, high, 500)])
        np.testing.assert_array_equal(even_counts(values, low, high, points),
                                      _sorted_counts(values, grid))


def test_counts_are_exact_whatever_the_guess():
    """A guess far off (here: every value guessed in bin 0, or past the end)
    falls back to the binary search: the guess buys speed, never the counts."""
    grid = _geometric_grid(0.0, 1.05, 800)
    values = _hard_values(grid, np.random.default_rng(2))
    for guess in (lambda v: np.zeros(v.shape), lambda v: np.full(v.shape, 1e9),
                  lambda v: np.full(v.shape, np.nan)):
        np.testing.assert_array_equal(_counts_below(values, grid, guess),
                                      _sorted_counts(values, grid))


def test_the_grids_formulas_place_almost_every_value():
    """The closed forms are what makes the counts linear: each grid's formula
    puts at least 99.9% of random values in their bin without the search."""
    from sklearn_dppca.privacy._quantiles import _geometric_position, _scale_free_position

    rng = np.random.default_rng(3)
    spread = np.abs(rng.standard_cauchy(20_000)) * 10.0 ** rng.uniform(-30, 30, 20_000)
    grid = _geometric_grid(0.0, 1.01, 5000)
    low, high, points = -4.0, 4.0, 40_001
    even = np.linspace(low, high, points)
    cases = [
        (spread, _SCALE_FREE_GRID, _scale_free_position(spread)),
        (spread, grid, _geometric_position(0.0, 1.01)(spread)),
        (rng.uniform(low, high, 20_000), even, None),
    ]
    values = cases[2][0]
    cases[2] = (values, even, (values - low) / ((high - low) / (points - 1)) + 1.0)
    for values, grid, guess in cases:
        exact = np.searchsorted(grid, values, side="right")
        placed = np.clip(np.floor(guess), 0, grid.size)     # as the counting does
        assert np.mean(placed == exact) >= 0.999


def test_a_search_short_of_budget_says_where_it_probably_stops():
    from sklearn_dppca.privacy import PrivacyUtilityWarning
    from sklearn_dppca.privacy._quantiles import rank_slack, warn_if_far

    # 221 values and eps 0.17: about 35 values early, near level 0.81 (public)
    assert rank_slack(0.17) == pytest.approx(35.3, abs=0.1)
    with pytest.warns(PrivacyUtilityWarning,
                      match=r"about 35 values early, near level 0\.81\), so it clips"):
        warn_if_far(221, 0.97, 0.17, "scree/total variance/clip bound")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_far(221, 0.97, 1.0, "scree/total variance/clip bound")   # 6 early: quiet


@pytest.mark.parametrize("guessing", ["closed form", "garbage", "nan"])
def test_counts_below_are_the_sorted_counts_whatever_the_guess(guessing):
    # the compiled pass against searchsorted: every value (on a grid point, an
    # ulp either side, below, above, NaN, infinite) in its bin, whatever the guess
    from sklearn_dppca.privacy._integer_noise import counts_below
    from sklearn_dppca.privacy._quantiles import _geometric_grid, _geometric_position

    rng = np.random.default_rng(5)
    grid = _geometric_grid(0.0, 1.01, 3000)
    values = np.concatenate([np.abs(rng.standard_normal(2000)) * 10.0**rng.uniform(-3, 3),
                             grid[::7], np.nextafter(grid[::7], 0.0),
                             np.nextafter(grid[::7], np.inf),
                             [np.nan, np.inf, -np.inf, -1.0, 0.0, grid[-1] * 2]])
    guess = {"closed form": _geometric_position(0.0, 1.01)(values),
             "garbage": rng.uniform(-1e9, 1e9, values.size),
             "nan": np.full(values.size, np.nan)}[guessing]
    expected = np.cumsum(np.bincount(np.searchsorted(grid, values, side="right"),
                                     minlength=grid.size + 1))[:grid.size]
    np.testing.assert_array_equal(counts_below(values, guess, grid), expected)
    with pytest.raises(ValueError, match="guess"):
        counts_below(values, guess[:-1], grid)
