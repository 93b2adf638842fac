"""Empirical privacy audits of the mechanisms on worst-case neighbours.

Each audit runs a mechanism many times on neighbouring inputs (vectorised where the
mechanism takes a whole array: one run per row) and tests its claim with
:func:`tail_audit` on the log-likelihood ratio of the claimed noise law (the
Neyman-Pearson statistic). The correct mechanism must pass and the variant with
HALF the noise (the scale its calibration computes divided by two) must be
caught, at ``alpha = 1e-3``. The slow tests (``--run-slow``) measure the false-alarm
rate of the correct mechanisms and the detection rate of the half-noise variants
over many seeds.

The histogram audits go through the public ``additive_histogram`` and
``sparse_histogram``; their half-noise variants patch the two calibrations,
``privacy._histograms._additive_scale`` (discrete Gaussian sd halved) and
``privacy._histograms.laplace_rate`` (discrete Laplace rate doubled), see
:func:`tests._audit_support.halve_histogram_noise_in`.
"""

import math
import sys
import warnings

import numpy as np
import pytest
from scipy.stats import binomtest, chisquare, laplace, norm

from sklearn_dppca.privacy import (
    additive_histogram,
    clopper_pearson,
    empirical_eps_lower_bound,
    gaussian_mechanism,
    gdp_tradeoff_audit,
    gaussian_noise_scale,
    laplace_mechanism,
    noise_log_likelihood_ratio,
    sparse_histogram,
    tail_audit,
    upper_quantile,
)
from sklearn_dppca.privacy._discrete import laplace_rate

from ._audit_support import halve_histogram_noise_in

EPS, DELTA = 1.0, 1e-5
RUNS = 40_000
# A small alpha keeps a correct mechanism's bound below its eps with near certainty.
ALPHA = 1e-3


def audit(stats_a, stats_b, delta):
    return empirical_eps_lower_bound(stats_a, stats_b, delta, alpha=ALPHA)


# ------------------------------------------------------------------ the auditor

@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (57, 400), (1, 5000)])
def test_clopper_pearson_matches_scipy(k, n):
    reference = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    lower, upper = clopper_pearson(k, n, 0.05)
    assert lower == pytest.approx(reference.low, abs=1e-12)
    assert upper == pytest.approx(reference.high, abs=1e-12)


def test_clopper_pearson_vectorised_and_validated():
    lower, upper = clopper_pearson(np.array([0, 5, 10]), 10, 0.1)
    assert lower[0] == 0.0 and upper[2] == 1.0
    assert lower[1] < 0.5 < upper[1]
    with pytest.raises(ValueError, match="k"):
        clopper_pearson(11, 10)
    with pytest.raises(ValueError, match="n"):
        clopper_pearson(0, 0)
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson(1, 10, alpha=1.5)


def test_auditor_on_known_laws():
    rng = np.random.default_rng(0)
    same = audit(rng.normal(size=RUNS), rng.normal(size=RUNS), 0.0)
    assert same < 0.1
    # Lap(1) shifted by 1 has privacy loss exactly 1 in its tails: the bound
    # approaches it from below.
    shifted = audit(rng.laplace(0, 1, RUNS), rng.laplace(1, 1, RUNS), 0.0)
    assert 0.75 < shifted <= 1.0
    with pytest.raises(ValueError, match="delta"):
        empirical_eps_lower_bound([0.0, 1.0], [0.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="stats_b"):
        empirical_eps_lower_bound([0.0, 1.0], [np.nan, 1.0], 0.0)


# ------------------------------------------------------------- the tail audit

def test_tail_audit_validates():
    with pytest.raises(ValueError, match="eps"):
        tail_audit([0.0, 1.0], [0.0, 1.0], 0.0, 0.0)
    with pytest.raises(ValueError, match="delta"):
        tail_audit([0.0, 1.0], [0.0, 1.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="stats_a"):
        tail_audit([0.0], [0.0, 1.0], 1.0, 0.0)
    with pytest.raises(ValueError, match="thresholds"):
        tail_audit([0.0, 1.0], [0.0, 1.0], 1.0, 0.0, thresholds=[np.inf])
    with pytest.raises(ValueError, match="min_count"):
        tail_audit([0.0, 1.0], [0.0, 1.0], 1.0, 0.0, min_count=0)


def test_tail_audit_fixed_event_matches_clopper_pearson():
    # One threshold fixed in advance: four tests share alpha; the best is
    # "S > 0 on D vs D'", with its bounds at alpha / 8 each.
    stats_a = np.array([1.0] * 60 + [-1.0] * 40)
    stats_b = np.array([1.0] * 10 + [-1.0] * 90)
    result = tail_audit(stats_a, stats_b, 1.0, 0.0, thresholds=[0.0], alpha=0.04)
    lower, _ = clopper_pearson(60, 100, 0.01)
    _, upper = clopper_pearson(10, 100, 0.01)
    assert result["event"] == "S > t on D vs D'" and result["threshold"] == 0.0
    assert result["delta_lower"] == pytest.approx(lower - np.e * upper, rel=1e-12)
    assert result["eps_lower"] == pytest.approx(np.log(lower / upper), rel=1e-12)
    assert result["rejected"] == (lower - np.e * upper > 0)


def test_tail_audit_on_known_laws():
    rng = np.random.default_rng(1)
    # Lap(1) shifted by 1 is exactly 1-DP: the claim eps = 1 holds, 0.8 does not.
    on_d, on_neighbour = rng.laplace(1, 1, RUNS), rng.laplace(0, 1, RUNS)
    assert not tail_audit(on_d, on_neighbour, 1.0, 0.0, alpha=ALPHA)["rejected"]
    caught = tail_audit(on_d, on_neighbour, 0.8, 0.0, alpha=ALPHA)
    assert caught["rejected"] and 0.8 < caught["eps_lower"] <= 1.0
    # Identical laws: nothing to see on either side.
    same = tail_audit(rng.normal(size=RUNS), rng.normal(size=RUNS), 0.1, 0.0,
                      alpha=ALPHA)
    assert not same["rejected"]


def test_tail_audit_sees_what_body_thresholds_miss():
    # Half the noise of the Gaussian mechanism at (1, 1e-5) is ~0.54-GDP: its
    # delta at eps = 1 is 0.011, a thousand times the claim. Thresholds in the
    # body with eps bounds (the older auditor) do not resolve it at this run
    # count; the tail audit, which tests the rates at the claimed eps, does.
    sigma = gaussian_noise_scale(1.0, EPS, DELTA) / 2
    rng = np.random.default_rng(2)
    on_d, on_neighbour = rng.normal(1, sigma, RUNS), rng.normal(0, sigma, RUNS)
    assert audit(on_d, on_neighbour, DELTA) <= EPS
    assert tail_audit(on_d, on_neighbour, EPS, DELTA, alpha=ALPHA)["rejected"]


@pytest.mark.parametrize("law, logpdf", [
    ("gaussian", lambda y, c, s: norm.logpdf(y, c, s)),
    ("laplace", lambda y, c, s: laplace.logpdf(y, c, s)),
])
def test_noise_log_likelihood_ratio_matches_densities(law, logpdf):
    rng = np.random.default_rng(3)
    outputs = rng.normal(0, 3, size=(50, 2))
    centre_a, centre_b, scale = np.array([1.0, -1.0]), np.array([0.0, 0.5]), 1.7
    reference = (logpdf(outputs, centre_a, scale)
                 - logpdf(outputs, centre_b, scale)).sum(axis=1)
    assert np.allclose(noise_log_likelihood_ratio(outputs, centre_a, centre_b, scale,
                                                  law), reference, atol=1e-12)
    with pytest.raises(ValueError, match="law"):
        noise_log_likelihood_ratio(outputs, centre_a, centre_b, scale, "cauchy")
    with pytest.raises(ValueError, match="scale"):
        noise_log_likelihood_ratio(outputs, centre_a, centre_b, 0.0, law)


def test_noise_log_likelihood_ratio_of_integer_laws():
    # Discrete Gaussian / Laplace on the integers, integer centres: the normalising
    # constants cancel, so the continuous formula is the exact ratio of the pmfs.
    support = np.arange(-60, 61)
    for law, weight in (("gaussian", lambda z: np.exp(-z**2 / (2 * 2.5**2))),
                        ("laplace", lambda z: np.exp(-np.abs(z) / 2.5))):
        pmf_a = weight(support - 2) / weight(support - 2).sum()
        pmf_b = weight(support + 1) / weight(support + 1).sum()
        y = np.array([-3.0, 0.0, 4.0])
        index = np.searchsorted(support, y)
        assert np.allclose(noise_log_likelihood_ratio(y, 2.0, -1.0, 2.5, law),
                           np.log(pmf_a[index] / pmf_b[index]), atol=1e-9)


# ---------------------------------------------------------------- the mechanisms

# Runs per neighbour of the vectorised mechanisms (one run per row of one call).
TAIL_RUNS = 200_000


def rounded_loss(outputs, centre_a, centre_b, scale, law):
    """The claimed law's log-likelihood ratio, rounded to 9 decimals.

    Rounding is post-processing, so the audit stays valid. It keeps the audit on
    the noise scale: the exact ratio of Laplace outputs sits on a plateau of +-1
    whose last bits depend on the low bits of the floating-point output, which
    differ between neighbours (the Mironov 2012 effect, which snapping removes).
    """
    return np.round(noise_log_likelihood_ratio(outputs, centre_a, centre_b, scale, law),
                    9)


def claim_holds(stats_a, stats_b, eps=EPS, delta=DELTA, **kwargs):
    return not tail_audit(stats_a, stats_b, eps, delta, alpha=ALPHA, **kwargs)["rejected"]


# Runs per call: each call is one release of RUNS_PER_CALL values, whose rounding to
# the grid is paid for in noise (sqrt(RUNS_PER_CALL) steps, 0.1% here): the runs
# of a call are independent, each a little more private than one release alone.
RUNS_PER_CALL = 1000


def gaussian_runs(value, sensitivity, seed, noise="analytic", n_runs=TAIL_RUNS):
    rng = np.random.default_rng(seed)
    return np.concatenate([
        gaussian_mechanism(np.full(RUNS_PER_CALL, value), sensitivity, EPS, DELTA, rng,
                           noise=noise)[0]
        for _ in range(n_runs // RUNS_PER_CALL)])


def gaussian_audit(noise_fraction, seed, noise="analytic", n_runs=TAIL_RUNS):
    """The neighbours' values differ by 1; the mechanism is told the sensitivity is
    ``noise_fraction``, so its sd is that fraction of the right one."""
    on_d = gaussian_runs(1.0, noise_fraction, seed, noise, n_runs)
    on_neighbour = gaussian_runs(0.0, noise_fraction, seed + 1, noise, n_runs)
    # the projection is the Gaussian log-likelihood ratio up to a positive factor
    return claim_holds(on_d, on_neighbour)


# The classical noise is 1.3 times the analytic one at (1, 1e-5): halved, its delta
# at eps = 1 is 0.0019 (the analytic one's 0.011), which takes a million runs.
@pytest.mark.parametrize("noise, n_runs", [("analytic", TAIL_RUNS),
                                           ("classical", 1_000_000)])
@pytest.mark.filterwarnings("ignore:noise='classical'")
def test_gaussian_mechanism_audit(noise, n_runs):
    assert gaussian_audit(1.0, 1, noise, n_runs)
    assert not gaussian_audit(0.5, 3, noise, n_runs)


def laplace_audit(noise_fraction, seed, n_runs=TAIL_RUNS):
    rng = np.random.default_rng(seed)
    on_d, _ = laplace_mechanism(np.full(n_runs, 1.0), noise_fraction, EPS, rng)
    on_neighbour, _ = laplace_mechanism(np.zeros(n_runs), noise_fraction, EPS, rng)
    claimed_scale = 1.0 / EPS
    return claim_holds(rounded_loss(on_d, 1.0, 0.0, claimed_scale, "laplace"),
                       rounded_loss(on_neighbour, 1.0, 0.0, claimed_scale, "laplace"),
                       delta=0.0)


def test_laplace_mechanism_audit():
    assert laplace_audit(1.0, 5)
    assert not laplace_audit(0.5, 7)


# The Durfee search on n = 10 values, q = 0.5 (target 5), grid t_i = 2^i - 1. On D
# five values lie below t_1 = 1 and one in [t_1, t_2), on D' six lie below t_1 (the
# rest at 1000 on both): the count at t_1 is 5 on D and 6 on D', and equal beyond.
# Of the neighbours tried (every count profile of one moved value, targets 3 to
# 7) this pair shows the largest delta of the half-noise search at the claimed
# eps: the claimed law's loss peaks at 0.94 (stop at t_2), the half-noise one's at
# 1.71, and the half-noise delta at eps = 1 is 0.17, seen with a few thousand runs.
QUANTILE_D = np.array([0.0] * 5 + [2.0] + [1000.0] * 4)
QUANTILE_NEIGHBOUR = np.array([0.0] * 6 + [1000.0] * 4)
QUANTILE_BETA, QUANTILE_STEPS = 2.0, 41
QUANTILE_RUNS = 3_000


def durfee_pmf(sorted_x, q, eps, n_points=12):
    """Law of the stopping index of :func:`upper_quantile` (the last index lumps all
    later stops), by summing the point-by-point search over the target's noise.

    The noise is the integer exponential of rate ``s/t`` just below ``eps/2``
    (``P(E = k) = (1 - r) r**k``, ``r = exp(-s/t)``); a point of count ``c`` is
    crossed when its own noise reaches ``q n + E_0 - c``, with probability
    ``r**max(ceil(q n + E_0 - c), 0)``."""
    grid = QUANTILE_BETA ** np.arange(1, n_points) - 1.0
    counts = np.searchsorted(sorted_x, grid, side="left")
    s, t = laplace_rate(eps)
    rate = s / t
    target_noise = np.arange(int(80.0 / rate) + 1)
    weight = -np.expm1(-rate) * np.exp(-rate * target_noise)
    still_searching, pmf = np.ones(target_noise.size), []
    for count in counts:
        gap = np.maximum(np.ceil(q * sorted_x.size + target_noise - count), 0.0)
        stop = np.exp(-rate * gap)
        pmf.append(math.fsum(weight * still_searching * stop))
        still_searching = still_searching * (1.0 - stop)
    pmf.append(math.fsum(weight * still_searching))
    return np.array(pmf), grid


def quantile_runs(values, eps, seed, n_runs=QUANTILE_RUNS):
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # a run may reach the grid's end
        return np.array([upper_quantile(values, 0.5, eps, rng, beta=QUANTILE_BETA,
                                        max_steps=QUANTILE_STEPS)
                         for _ in range(n_runs)])


def quantile_audit(eps_used, seed, n_runs=QUANTILE_RUNS):
    """Claim ``EPS``; the search runs at ``eps_used`` (noise mean ``2 / eps_used``)."""
    pmf_a, grid = durfee_pmf(QUANTILE_D, 0.5, EPS)
    pmf_b, _ = durfee_pmf(QUANTILE_NEIGHBOUR, 0.5, EPS)
    loss = np.log(pmf_a / pmf_b)      # the claimed law's privacy loss per stop

    def statistic(outputs):
        return loss[np.minimum(np.searchsorted(grid, outputs), grid.size)]

    # thresholds between the claimed law's loss levels: fixed before any run
    levels = np.unique(loss)
    return claim_holds(statistic(quantile_runs(QUANTILE_D, eps_used, seed, n_runs)),
                       statistic(quantile_runs(QUANTILE_NEIGHBOUR, eps_used, seed + 1,
                                               n_runs)),
                       delta=0.0, thresholds=(levels[1:] + levels[:-1]) / 2)


def test_durfee_pmf_matches_the_search():
    # the reference law behind the audit's statistic is the law of the real search
    pmf, grid = durfee_pmf(QUANTILE_D, 0.5, EPS)
    stops = np.minimum(np.searchsorted(grid, quantile_runs(QUANTILE_D, EPS, 17, 2000)),
                       grid.size)
    observed = np.bincount(stops, minlength=pmf.size)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-6)
    assert chisquare(observed[:4], 2000 * pmf[:4] * observed[:4].sum()
                     / (2000 * pmf[:4].sum())).pvalue > 1e-4


def test_durfee_quantile_audit():
    assert quantile_audit(EPS, 9)
    # the doubled-eps search's delta at eps = 1 is 0.11 (its loss reaches 2 at the
    # second stop); 3,000 runs per side reject it on each of the seeds 20-29
    assert not quantile_audit(2 * EPS, 21)


@pytest.fixture
def halve_histogram_noise(monkeypatch):
    halve_histogram_noise_in(monkeypatch)


# Two cells of 100; on the neighbour one row moved from the first to the second
# (L2 change sqrt(2), L1 change 2). Counts this large are never clamped or cut.
CELLS_D, CELLS_NEIGHBOUR = np.array([100.0, 100.0]), np.array([99.0, 101.0])


def histogram_runs(release, cells, seed, n_runs=TAIL_RUNS):
    counts = np.tile(cells, (n_runs, 1, 1))          # one run per group
    noisy = release(counts, EPS, DELTA, np.random.default_rng(seed))
    return noisy[:, 0, :]


def histogram_audit(release, seed, n_runs=TAIL_RUNS):
    law = "gaussian" if release is additive_histogram else "laplace"
    # the statistic is scale-free up to a positive factor: any scale will do
    def statistic(noisy):
        return rounded_loss(noisy, CELLS_D, CELLS_NEIGHBOUR, 1.0, law)

    return claim_holds(statistic(histogram_runs(release, CELLS_D, seed, n_runs)),
                       statistic(histogram_runs(release, CELLS_NEIGHBOUR, seed + 1,
                                                n_runs)))


@pytest.mark.parametrize("release", [additive_histogram, sparse_histogram])
def test_histogram_audit(release):
    assert histogram_audit(release, 13)


@pytest.mark.parametrize("release", [additive_histogram, sparse_histogram])
def test_histogram_audit_catches_half_noise(release, halve_histogram_noise):
    assert not histogram_audit(release, 15)


# ------------------------------------------- measured false-alarm and detection

# Each audit above at ALPHA, repeated over seeds. The false-alarm runs use alpha =
# 0.05 so that a rate can be seen at all; it must not exceed 0.05 (beyond
# binomial spread).
SCALAR_AUDITS = {
    "gaussian": lambda half, seed, n: gaussian_audit(0.5 if half else 1.0, seed,
                                                      n_runs=n),
    "laplace": lambda half, seed, n: laplace_audit(0.5 if half else 1.0, seed, n),
    "quantile": lambda half, seed, n: quantile_audit((2 if half else 1) * EPS, seed,
                                                     max(n // 60, 500)),
    "additive histogram": lambda half, seed, n: histogram_audit(additive_histogram,
                                                                seed, n),
    "sparse histogram": lambda half, seed, n: histogram_audit(sparse_histogram, seed,
                                                              n),
}
REPEATS = 100


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCALAR_AUDITS))
def test_false_alarm_rate(name, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ALPHA", 0.05)
    alarms = sum(not SCALAR_AUDITS[name](False, 1000 + 2 * i, 20_000)
                 for i in range(REPEATS))
    print(f"\n[audit] {name}: false alarms {alarms}/{REPEATS} at alpha 0.05")
    # P(Binomial(100, 0.05) > 12) < 0.002
    assert alarms <= 12


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCALAR_AUDITS))
def test_detection_rate(name, monkeypatch):
    if "histogram" in name:
        halve_histogram_noise_in(monkeypatch)
    caught = sum(not SCALAR_AUDITS[name](True, 5000 + 2 * i, TAIL_RUNS)
                 for i in range(REPEATS // 5))
    print(f"\n[audit] {name}, half noise: caught {caught}/{REPEATS // 5} at alpha {ALPHA}")
    assert caught == REPEATS // 5


# ------------------------------------------------------ the GDP tradeoff audit

def gaussian_llr(mu, sd, z):
    """``log p_D / p_D'`` of ``N(mu, 1)`` against ``N(0, 1)`` (the claimed law) at
    outputs ``mu + sd z`` on D and ``sd z`` on D' (``sd < 1``: less noise than
    claimed, the mechanism is ``mu / sd``-GDP)."""
    return mu * (2 * (mu + sd * z[0]) - mu) / 2, mu * (2 * sd * z[1] - mu) / 2


def test_gdp_tradeoff_audit_validates():
    with pytest.raises(ValueError, match="mu"):
        gdp_tradeoff_audit([0.0, 1.0], [0.0, 1.0], 0.0)
    with pytest.raises(ValueError, match="threshold"):
        gdp_tradeoff_audit([0.0, 1.0], [0.0, 1.0], 1.0, threshold=np.nan)
    with pytest.raises(TypeError, match="paired"):
        gdp_tradeoff_audit([0.0, 1.0], [0.0, 1.0], 1.0, paired="yes")
    with pytest.raises(ValueError, match="paired"):
        gdp_tradeoff_audit([0.0, 1.0], [0.0, 1.0, 2.0], 1.0, paired=True)
    with pytest.raises(ValueError, match="stats_a"):
        gdp_tradeoff_audit([np.nan, 1.0], [0.0, 1.0], 1.0)


def test_gdp_tradeoff_audit_matches_its_formulas():
    # 30 of 100 runs on D say D' (type I), 20 of 100 on D' say D (type II)
    stats_a = np.r_[np.full(30, -1.0), np.full(70, 1.0)]
    stats_b = np.r_[np.full(20, 1.0), np.full(80, -1.0)]
    result = gdp_tradeoff_audit(stats_a, stats_b, 0.5, alpha=0.1)
    _, a_upper = clopper_pearson(30, 100, 0.1)
    _, b_upper = clopper_pearson(20, 100, 0.1)
    assert (result["type_one"], result["type_two"]) == (0.3, 0.2)
    assert result["mu_lower"] == pytest.approx(norm.isf(a_upper) - norm.ppf(b_upper),
                                               rel=1e-12)
    # paired, in this order: 50 pairs both right, 10 both wrong, 40 split
    paired_a = np.r_[np.full(50, 1.0), np.full(10, -1.0), np.full(40, 1.0)]
    paired_b = np.r_[np.full(50, -1.0), np.full(10, 1.0), np.full(40, 1.0)]
    result = gdp_tradeoff_audit(paired_a, paired_b, 0.5, alpha=0.1, paired=True)
    both_right, _ = clopper_pearson(50, 100, 0.1)
    _, both_wrong = clopper_pearson(10, 100, 0.1)
    assert result["mu_lower"] == pytest.approx(
        -2 * norm.ppf((1 - both_right + both_wrong) / 2), rel=1e-12)
    assert result["rejected"] == (result["mu_lower"] > 0.5)


@pytest.mark.parametrize("paired, n_runs", [(False, 20_000), (True, 2_000)])
def test_gdp_tradeoff_audit_on_known_laws(paired, n_runs):
    # N(mu, 1) against N(0, 1) is exactly mu-GDP, and its midpoint test lies ON
    # the curve: the hardest case for false alarms. With half the noise it is
    # 2 mu-GDP. Paired runs share their noise; 100 audits of each.
    mu, repeats, alpha = 0.2, 100, 0.01
    rng = np.random.default_rng(7)
    alarms = caught = 0
    for _ in range(repeats):
        z = rng.standard_normal((2, n_runs))
        if paired:
            z[1] = z[0]
        alarms += gdp_tradeoff_audit(*gaussian_llr(mu, 1.0, z), mu, alpha=alpha,
                                     paired=paired)["rejected"]
        caught += gdp_tradeoff_audit(*gaussian_llr(mu, 0.5, z), mu, alpha=alpha,
                                     paired=paired)["rejected"]
    # P(Binomial(100, 0.01) > 5) < 1e-3
    assert alarms <= 5
    assert caught == repeats
    # independent runs declared paired: still valid (any dependence is allowed)
    z = rng.standard_normal((2, n_runs))
    assert not gdp_tradeoff_audit(*gaussian_llr(mu, 1.0, z), mu, paired=True)["rejected"]


def test_gdp_tradeoff_audit_mu_lower_is_sharp():
    # On shared noise the paired bound approaches the true mu from below.
    z = np.random.default_rng(8).standard_normal(50_000)
    result = gdp_tradeoff_audit(*gaussian_llr(0.4, 0.5, np.vstack([z, z])), 0.4,
                                paired=True, alpha=1e-3)
    assert 0.7 < result["mu_lower"] <= 0.8


def test_centre_keywords_are_deprecated_for_center():
    outputs = np.array([[3.0], [-1.0]])
    expected = noise_log_likelihood_ratio(outputs, center_a=1.0, center_b=0.0, scale=1.0)
    with pytest.warns(FutureWarning, match="centre_a is deprecated.*use center_a"):
        old = noise_log_likelihood_ratio(outputs, centre_a=1.0, center_b=0.0, scale=1.0)
    assert np.array_equal(old, expected)
    with pytest.raises(TypeError, match="center_a only"):
        noise_log_likelihood_ratio(outputs, 1.0, 0.0, 1.0, centre_a=1.0)
    with pytest.raises(TypeError, match="needs center_a, center_b and scale"):
        noise_log_likelihood_ratio(outputs, 1.0, 0.0)
