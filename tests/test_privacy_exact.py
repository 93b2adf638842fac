"""Exact releases of real statistics (sklearn_dppca.privacy._exact).

Checks: the unit-step inequality the Gaussian release's privacy rests on, and that
the check fails for a law where it does not hold; each release's integer noise
against its exact law (binned chi-square, bins from the exact distribution
function); the rounding's sensitivity on adversarial neighbours and the recorded
mu; the noise-alone case; the post-processing draws' laws; and, at the end, that
no fit of any estimator calls a floating-point sampler of NumPy at all.
"""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import chi2, kstest, norm

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree
from sklearn_dppca.privacy import gaussian_mechanism, laplace_mechanism
from sklearn_dppca.privacy._discrete import _DiscreteGaussianScale, discrete_gaussian
from sklearn_dppca.privacy._exact import (
    _LAPLACE_STEPS,
    _STEP_SLACK,
    _UNIT,
    _gaussian_grid,
    _unit_step_excess,
    gaussian_release,
    laplace_release,
    standard_normal,
    unit_uniform,
    weighted_indices,
)

ALPHA = 1e-5


def binned_pvalue(draws, cdf, edges):
    """Chi-square p-value of integer draws against a law given by its
    distribution function ``cdf(k) = P(X <= k)``, on bins ``(edges[i], edges[i+1]]``
    plus the two tails."""
    probabilities = np.diff(np.concatenate(([0.0], cdf(edges), [1.0])))
    observed = np.bincount(np.searchsorted(edges, draws, side="left"),
                           minlength=edges.size + 1)
    expected = probabilities * draws.size
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    return float(chi2.sf(statistic, edges.size))


def discrete_gaussian_cdf(sigma2):
    """``P(X <= k)`` of ``N_Z(0, sigma2)``, summed exactly over the lattice."""
    width = int(40 * math.sqrt(sigma2))
    support = np.arange(-width, width + 1)
    weights = np.exp(-support.astype(float) ** 2 / (2 * sigma2))
    cumulative = np.cumsum(weights) / weights.sum()
    return lambda k: cumulative[np.asarray(k) + width]


def discrete_laplace_cdf(rate):
    """``P(X <= k)`` of the discrete Laplace of rate ``rate``, in closed form."""
    r = math.exp(-rate)

    def cdf(k):
        k = np.asarray(k, dtype=float)
        below = r ** (-k) / (1 + r)                       # k < 0
        above = 1 - r ** (k + 1) / (1 + r)                # k >= 0
        return np.where(k < 0, below, above)
    return cdf


def quantile_edges(sd, n_bins=40):
    return np.unique(np.round(np.linspace(-3.0, 3.0, n_bins) * sd)).astype(np.int64)


# --------------------------------------------------------- the privacy argument

def test_the_unit_step_inequality_holds_for_the_release_law():
    excess = _unit_step_excess()
    assert excess < _STEP_SLACK
    assert excess > -1e-6            # (the bound is tight: the steps are 1 / s)


def test_the_unit_step_check_fails_where_the_lattice_shows():
    # at s = 1 the lattice's steps are far from the continuous law's
    assert _unit_step_excess(_DiscreteGaussianScale.at_least(1.0)) > 0.01
    assert _unit_step_excess(_DiscreteGaussianScale.at_least(30.0)) > _STEP_SLACK


@pytest.mark.parametrize("n_values", [1, 6, 1275])
def test_rounding_moves_adversarial_neighbours_by_at_most_its_allowance(n_values):
    # neighbours a sensitivity apart whose values sit just off half a step, rounded
    # apart: the integer statistics move by at most sensitivity / grid + sqrt(d)
    sensitivity, mu = 0.03, 0.2
    grid, room = _gaussian_grid(sensitivity, mu, n_values)
    assert room is not None
    rng = np.random.default_rng(0)
    direction = rng.standard_normal(n_values)
    direction /= np.linalg.norm(direction)
    base = (rng.integers(-1000, 1000, n_values) + 0.5 - 1e-9 * np.sign(direction)) * grid
    moved = base + sensitivity * direction
    gap = np.linalg.norm(np.rint(moved / grid) - np.rint(base / grid))
    assert gap <= sensitivity / grid + math.sqrt(n_values)
    # the release charges that allowance: its mu is the one asked for (not above)
    _, facts = gaussian_release(base, sensitivity, mu, rng)
    steps = sensitivity / facts["grid"] + math.sqrt(n_values)
    assert facts["mu"] == pytest.approx(steps * (1 + _STEP_SLACK) / _UNIT.sigma)
    assert mu * (1 - 1e-9) <= facts["mu"] <= mu
    assert facts["noise_scale"] == pytest.approx(facts["grid"] * _UNIT.sigma)
    assert sensitivity / mu <= facts["noise_scale"]


# ----------------------------------------------------------- the releases' laws

def test_gaussian_release_is_the_rounded_statistic_plus_the_exact_noise():
    values = np.array([0.123456789, -7.5, 1e3])
    released, facts = gaussian_release(values, 0.01, 0.5, np.random.default_rng(3))
    grid = facts["grid"]
    # the float nearest a whole number of grid steps (multiplying by the public
    # grid is post-processing of the integer release)
    steps = np.rint(released / grid)
    np.testing.assert_array_equal(released, steps * grid)
    noise = discrete_gaussian(_UNIT, 3, np.random.default_rng(3))
    np.testing.assert_array_equal(steps - noise, np.rint(values / grid))


def test_gaussian_release_noise_follows_the_discrete_gaussian():
    values = np.full(60_000, 0.37)
    released, facts = gaussian_release(values, 1.0, 0.7, np.random.default_rng(4))
    noise = np.rint(released / facts["grid"]).astype(np.int64) \
        - np.rint(values / facts["grid"]).astype(np.int64)
    sigma2 = float(_UNIT.sigma2)
    edges = quantile_edges(math.sqrt(sigma2))
    assert binned_pvalue(noise, discrete_gaussian_cdf(sigma2), edges) > ALPHA
    # and the check has power: a law 4% wider is rejected
    assert binned_pvalue(noise, discrete_gaussian_cdf(sigma2 * 1.08), edges) < ALPHA


def test_laplace_release_noise_follows_the_discrete_laplace():
    values = np.full(1000, 2.5)
    noise = []
    for seed in range(60):
        released, scale, grid = laplace_release(values, 1.0, 0.8,
                                                np.random.default_rng(seed))
        assert scale == pytest.approx(grid * _LAPLACE_STEPS)
        noise.append(np.rint(released / grid).astype(np.int64)
                     - np.rint(values / grid).astype(np.int64))
    noise = np.concatenate(noise)
    edges = quantile_edges(_LAPLACE_STEPS * math.sqrt(2))
    rate = 1.0 / _LAPLACE_STEPS
    assert binned_pvalue(noise, discrete_laplace_cdf(rate), edges) > ALPHA
    assert binned_pvalue(noise, discrete_laplace_cdf(rate * 1.04), edges) < ALPHA


def test_a_mu_too_small_for_the_rounding_releases_the_noise_alone():
    # mu s below twice sqrt(d): the statistic is not read (a NaN would show)
    sensitivity, mu = 1.0, 1e-5
    released, facts = gaussian_release(np.full(100, np.nan), sensitivity, mu,
                                       np.random.default_rng(5))
    assert facts["noise_alone"] and facts["mu"] == mu
    assert np.all(np.isfinite(released))
    assert facts["noise_scale"] == pytest.approx(sensitivity / mu, rel=1e-4)
    noisy, scale = laplace_mechanism(np.full(5, np.nan), 1.0, 1e-8,
                                     np.random.default_rng(5))
    assert np.all(np.isfinite(noisy)) and scale == pytest.approx(1e8, rel=1e-6)


def test_mechanisms_release_on_their_grid_and_record_it():
    from sklearn_dppca.privacy import PrivacyLedger

    ledger = PrivacyLedger()
    noisy, _ = gaussian_mechanism(np.linspace(0, 1, 7), 0.1, 1.0, 1e-5,
                                  np.random.default_rng(6), ledger=ledger)
    entry = ledger.entries[-1]
    assert entry["values"] == 7
    np.testing.assert_array_equal(noisy, np.rint(noisy / entry["grid"]) * entry["grid"])


# ----------------------------------------------------- post-processing draws

def test_standard_normal_is_the_inverse_cdf_of_the_dyadic_uniforms():
    # exact agreement with the slow reference: scipy.stats.norm.ppf of the same
    # generator's unit_uniform draws (a fixed function of integers), then the law
    draws = standard_normal((30_000, 2), np.random.default_rng(7))
    assert draws.shape == (30_000, 2)
    reference = norm.ppf(unit_uniform((30_000, 2), np.random.default_rng(7)))
    np.testing.assert_allclose(draws, reference, rtol=1e-14, atol=1e-15)
    assert np.all(np.isfinite(draws)) and np.max(np.abs(draws)) < 8.3
    assert kstest(draws.ravel(), "norm").pvalue > ALPHA
    # the tails too: a two-sd share within its binomial noise
    beyond = np.mean(np.abs(draws) > 2.0)
    assert abs(beyond - 2 * norm.sf(2.0)) < 4 * math.sqrt(0.0455 / draws.size)


def test_unit_uniform_sits_on_midpoints_of_equal_cells():
    draws = unit_uniform(50_000, np.random.default_rng(8))
    assert np.all((draws > 0) & (draws < 1))
    cells = draws * 2.0**53 - 0.5
    np.testing.assert_array_equal(cells, np.round(cells))
    counts = np.bincount((draws * 20).astype(int), minlength=20)
    assert chi2.sf(np.sum((counts - 2500.0) ** 2 / 2500.0), 19) > ALPHA


def test_weighted_indices_follow_the_weights():
    weights = np.array([0.0, 1.0, 2.5, 0.5, 6.0])
    draws = weighted_indices(weights, 40_000, np.random.default_rng(9))
    assert not np.any(draws == 0)
    expected = weights / weights.sum() * draws.size
    counts = np.bincount(draws, minlength=weights.size)
    keep = expected > 0
    statistic = np.sum((counts[keep] - expected[keep]) ** 2 / expected[keep])
    assert chi2.sf(statistic, keep.sum() - 1) > ALPHA


@pytest.mark.parametrize("n_cells", [1, 2, 7, 400, 3000])
def test_the_bucketed_search_is_the_binary_search(n_cells):
    # weighted_indices' cells through buckets of the picks' range, against
    # searchsorted itself: heavy-tailed weights, empty cells (repeated cumulative
    # values), every bucket boundary and the picks next to each cell boundary
    from sklearn_dppca.privacy._exact import _bins_of

    rng = np.random.default_rng(n_cells)
    weights = np.abs(rng.standard_cauchy(n_cells)) * (rng.random(n_cells) < 0.7)
    weights[rng.integers(n_cells)] = 1.0
    cumulative = np.cumsum(np.floor(weights / weights.max() * 2.0**40).astype(np.int64))
    top = int(cumulative[-1])
    picks = np.concatenate([
        rng.integers(0, top, size=20_000), [0, top - 1],
        np.clip(np.concatenate([cumulative - 1, cumulative]), 0, top - 1),
        np.arange(0, top, max(1, top // 16384), dtype=np.int64)[:50_000]])
    np.testing.assert_array_equal(_bins_of(cumulative, picks),
                                  np.searchsorted(cumulative, picks, side="right"))


# ---------------------------------------------------- no float sampler in a fit

_FLOAT_SAMPLERS = (
    "normal", "standard_normal", "laplace", "exponential", "standard_exponential",
    "uniform", "random", "choice", "multinomial", "binomial", "poisson", "gamma",
    "standard_gamma", "beta", "gumbel", "logistic", "lognormal", "rayleigh", "vonmises",
    "wald", "weibull", "triangular", "standard_t", "chisquare", "noncentral_chisquare",
    "f", "noncentral_f", "geometric", "hypergeometric", "negative_binomial",
    "dirichlet", "multivariate_normal", "multivariate_hypergeometric", "pareto",
    "power", "standard_cauchy", "zipf", "logseries",
)


def _refuse(name):
    def method(self, *args, **kwargs):
        raise AssertionError(f"a fit called the floating-point sampler {name}")
    return method


#: A Generator whose every floating-point sampler raises: only ``integers``,
#: ``permutation``, ``shuffle`` and ``bytes`` remain.
IntegerGenerator = type("IntegerGenerator", (np.random.Generator,),
                        {name: _refuse(name) for name in _FLOAT_SAMPLERS})


@pytest.fixture
def integer_generators(monkeypatch):
    """Every generator the package makes (from an int, None, a RandomState or a
    seed sequence) is an IntegerGenerator."""
    monkeypatch.setattr(np.random, "default_rng",
                        lambda seed=None: IntegerGenerator(np.random.PCG64(seed)))


FIT_CASES = [
    (DPPCA, {}),
    (DPPCA, {"scale": True, "histogram": "sparse"}),
    (DPPCA, {"scree_method": "huber"}),
    (DPPCA, {"scree_method": "pmwm"}),
    (DPPCA, {"scree_method": "kendall", "groups": [0, 1]}),
    (DPPCA, {"radial": "clipped", "scree_method": "matrix", "n_components": 0.8}),
    (DPPCA, {"bounds": [(-12.0, 12.0)] * 4}),
    (DPScree, {"scree_params": {"clip": "component"}}),
    (DPKendallDirections, {"pairs": 8}),
]


@pytest.mark.parametrize("estimator, params", FIT_CASES,
                         ids=lambda value: getattr(value, "__name__", repr(value)[:40]))
def test_no_fit_calls_a_floating_point_sampler(integer_generators, estimator, params):
    rng = np.random.Generator(np.random.PCG64(0))
    X = rng.standard_normal((400, 4)) * [3.0, 2.0, 1.0, 0.5]
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for random_state in (0, IntegerGenerator(np.random.PCG64(1))):
            fitted = estimator(random_state=random_state, **params).fit(X, y)
            if estimator is DPPCA:
                from sklearn_dppca.display import plot_overview

                plot_overview(fitted)
                import matplotlib.pyplot as plt

                plt.close("all")


def test_the_float_sampler_trap_catches_a_float_draw(integer_generators):
    rng = np.random.default_rng(0)
    rng.integers(0, 10, size=5)
    rng.permutation(5)
    with pytest.raises(AssertionError, match="standard_normal"):
        rng.standard_normal(3)
    with pytest.raises(AssertionError, match="choice"):
        rng.choice(5, 2)


def test_a_statistic_out_of_range_is_clamped_and_nan_stays_nan():
    # (the fits' contracts keep statistics finite; the release does not invent a
    # number where one is not)
    released, facts = gaussian_release(np.array([np.nan, np.inf, -np.inf, 1.0]), 1.0,
                                       0.5, np.random.default_rng(10))
    assert np.isnan(released[0])
    steps = np.rint(released[1:] / facts["grid"])
    assert steps[0] > 2.0**52 - 2**40 and steps[1] < -(2.0**52 - 2**40)
    assert np.isfinite(released[3])


@pytest.mark.parametrize("sensitivity", [7.152082120577607e-309, 1e-320, 0.3, 1e300])
def test_the_grid_never_lets_a_statistic_move_further_than_its_mu(sensitivity):
    # a subnormal sensitivity (a clip bound found at the bottom of its grid, as on
    # ten rows of zeros and one outlier) leaves sensitivity / grid few bits: the
    # grid is rounded up, and the recorded mu is at most the one asked for
    from fractions import Fraction

    mu = 0.2682449939511572
    grid, room = _gaussian_grid(sensitivity, mu, 3)
    steps = mu * _UNIT.sigma / (1 + _STEP_SLACK) * (1 - 1e-12) - math.sqrt(3)
    assert room == steps and Fraction(sensitivity) <= Fraction(steps) * Fraction(grid)
    _, facts = gaussian_release(np.zeros(3), sensitivity, mu, np.random.default_rng(11))
    assert facts["mu"] <= mu
