"""Scree helpers and one-dimensional private means (Yu, Ren & Zhou 2024; Ramsay & Spicker 2025)."""

import math
import warnings

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from sklearn_dppca.privacy import (
    PrivacyLedger,
    clipped_pair_mean,
    huber_mean,
    monotone_scree,
    pmwm_mean,
)
from sklearn_dppca.privacy._means import (
    _clipped_mean,
    _gaussian_release,
    _huber_gradient,
    _pair_block_medians,
    _trimming_interval,
)


# ------------------------------------------------------------- clipped_pair_mean

def direct_pair_mean(y, clip):
    y = np.asarray(y, dtype=float)
    rows, cols = np.triu_indices(y.size, k=1)
    return np.minimum((y[rows] - y[cols]) ** 2 / 2, clip).mean()


SAMPLES = {
    "normal": np.random.default_rng(0).standard_normal(300),
    "ties": np.random.default_rng(1).integers(0, 6, 300).astype(float),
    "offset": 1e8 + np.random.default_rng(2).standard_normal(300) * 1e-3,
    "outliers": np.concatenate((np.random.default_rng(3).standard_normal(297),
                                [1e12, -1e12, 3e11])),
    "two": np.array([1.0, 4.0]),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("clip", [1e-7, 0.02, 0.5, 3.0, 1e30, np.inf])
def test_clipped_pair_mean_matches_direct_sum(name, clip):
    y = SAMPLES[name]
    assert clipped_pair_mean(y, clip) == pytest.approx(direct_pair_mean(y, clip),
                                                       rel=1e-9, abs=1e-300)


def test_clipped_pair_mean_without_clip_is_sample_variance():
    y = np.random.default_rng(4).normal(3.0, 2.0, 1000)
    assert clipped_pair_mean(y, np.inf) == pytest.approx(np.var(y, ddof=1), rel=1e-12)


@pytest.mark.parametrize("clip", [0.1, 2.0])
@pytest.mark.parametrize("moved_to", [1e12, -1e12, 0.0, 1e-3])
def test_clipped_pair_mean_sensitivity(clip, moved_to):
    y = np.random.default_rng(5).standard_normal(200)
    for index in (0, int(np.argmax(y)), int(np.argmin(y))):
        neighbour = y.copy()
        neighbour[index] = moved_to
        change = abs(clipped_pair_mean(neighbour, clip) - clipped_pair_mean(y, clip))
        assert change <= 2 * clip / y.size * (1 + 1e-9)


def test_clipped_pair_mean_validation():
    with pytest.raises(ValueError, match="y"):
        clipped_pair_mean([1.0], 1.0)
    with pytest.raises(ValueError, match="clip"):
        clipped_pair_mean([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="clip"):
        clipped_pair_mean([1.0, 2.0], float("nan"))
    with pytest.raises(ValueError, match="y"):
        clipped_pair_mean([1.0, np.nan], 1.0)


# ---------------------------------------------------------------- monotone_scree

def brute_force_non_increasing(values):
    """Min-max formula of the least-squares non-increasing fit."""
    n = len(values)
    return np.array([
        min(max(np.mean(values[j:k + 1]) for k in range(i, n)) for j in range(i + 1))
        for i in range(n)
    ])


def test_monotone_scree_example():
    np.testing.assert_allclose(monotone_scree([3, 5, 1, 2, -1]), [4, 4, 1.5, 1.5, 0])


@pytest.mark.parametrize("seed", range(30))
def test_monotone_scree_against_brute_force_and_sklearn(seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(0.5, 1.0, rng.integers(1, 9))
    clamped = np.maximum(values, 0)
    expected = np.maximum(brute_force_non_increasing(clamped), 0)
    fitted = monotone_scree(values)
    np.testing.assert_allclose(fitted, expected, atol=1e-12)
    reference = IsotonicRegression(increasing=False).fit_transform(
        np.arange(len(values)), clamped)
    np.testing.assert_allclose(fitted, reference, atol=1e-12)
    assert np.all(np.diff(fitted) <= 1e-15) and np.all(fitted >= 0)


def test_monotone_scree_keeps_sorted_input_and_rejects_nan():
    np.testing.assert_array_equal(monotone_scree([5.0, 2.0, 2.0, 0.0]), [5, 2, 2, 0])
    assert monotone_scree([]).size == 0
    with pytest.raises(ValueError, match="values"):
        monotone_scree([1.0, np.nan])


# -------------------------------------------------------------------------- PMWM

def test_pmwm_accuracy():
    rng = np.random.default_rng(10)
    for split in (True, False):
        estimates = [pmwm_mean(rng.normal(5, 1, 10_000), 1.0, 1e-5, rng, split=split)
                     for _ in range(30)]
        assert np.mean(np.abs(np.array(estimates) / 5 - 1) <= 0.02) >= 0.9


def test_pmwm_budget_split_halves():
    ledger = PrivacyLedger()
    pmwm_mean(np.random.default_rng(11).normal(5, 1, 2000), 0.7, 3e-6,
              np.random.default_rng(12), ledger=ledger)
    (entry,) = ledger.entries
    assert (entry["eps"], entry["delta"]) == (0.7, 3e-6)
    lower, upper, mean = entry["parts"]
    # Disjoint halves compose in parallel: each half spends the whole budget.
    assert lower["eps"] + upper["eps"] == pytest.approx(0.7, rel=1e-15)
    assert (lower["delta"], upper["delta"]) == (0.0, 0.0)
    assert (mean["eps"], mean["delta"]) == (0.7, 3e-6)
    assert entry["sensitivity"] == mean["sensitivity"] > 0


def test_pmwm_budget_without_split():
    ledger = PrivacyLedger()
    pmwm_mean(np.random.default_rng(13).normal(5, 1, 2000), 0.7, 3e-6,
              np.random.default_rng(14), split=False, ledger=ledger)
    lower, upper, mean = ledger.entries
    assert lower["eps"] == upper["eps"] == pytest.approx(0.7 / 4)
    assert (mean["eps"], mean["delta"]) == (pytest.approx(0.35), 3e-6)
    assert ledger.spent() == pytest.approx((0.7, 3e-6), rel=1e-14)
    assert ledger.check_within(0.7, 3e-6)


def test_pmwm_split_uses_a_random_permutation():
    # Sorted skewed input: halves taken in row order would clip the whole mean half
    # at the top of the lower half (about 5.7 instead of a mean near 6).
    values = np.sort(5 + np.random.default_rng(15).exponential(1.0, 10_000))
    estimates = [pmwm_mean(values, 1.0, 1e-5, np.random.default_rng(seed))
                 for seed in range(5)]
    np.testing.assert_allclose(estimates, values.mean(), rtol=0.02)


@pytest.mark.parametrize("moved_to", [1e12, -1e12, 3.0])
def test_pmwm_statistic_sensitivity(moved_to):
    w = np.random.default_rng(16).normal(5, 1, 500)
    for low, high in ((2.7, 7.3), (0.0, 1.0), (5.0, 5.0)):
        for index in (0, int(np.argmax(w))):
            neighbour = w.copy()
            neighbour[index] = moved_to
            change = abs(_clipped_mean(neighbour, low, high) - _clipped_mean(w, low, high))
            assert change <= (high - low) / w.size * (1 + 1e-12) + 1e-15


def test_trimming_interval_fallbacks():
    assert _trimming_interval(-1.0, 9.0, 0.0, 5.0) == (0.0, 5.0)
    assert _trimming_interval(2.0, 3.0, 0.0, np.inf) == (2.0, 3.0)
    assert _trimming_interval(3.0, 2.0, 0.0, 10.0) == (0.0, 10.0)  # crossed: [a, b]
    assert _trimming_interval(3.0, 2.0, 0.0, np.inf) == (2.0, 3.0)  # no finite [a, b]
    with pytest.raises(ValueError, match="a and b"):
        _trimming_interval(-1.7e308, 1.7e308, -np.inf, np.inf)


def test_zero_sensitivity_release_is_exact_and_recorded():
    ledger = PrivacyLedger()
    assert _gaussian_release(0.25, 0.0, 0.5, 1e-6, None, "analytic", ledger, "m") == (
        0.25, 0.0)
    assert ledger.spent() == (0.5, 1e-6)
    assert ledger.entries[0]["noise_scale"] == 0.0
    constant = pmwm_mean(np.zeros(1000), 1.0, 1e-5, np.random.default_rng(17))
    assert abs(constant) <= 0.03  # the grid's resolution around 0 is beta - 1


def test_pmwm_validation():
    rng = np.random.default_rng(0)
    w = np.arange(10.0)
    with pytest.raises(ValueError, match="eta"):
        pmwm_mean(w, 1.0, 1e-5, rng, eta=0.5)
    with pytest.raises(ValueError, match="trim_const"):
        pmwm_mean(w, 1.0, 1e-5, rng, trim_const=0)
    with pytest.raises(ValueError, match="a must be < b"):
        pmwm_mean(w, 1.0, 1e-5, rng, a=2.0, b=2.0)
    with pytest.raises(ValueError, match="split"):
        pmwm_mean([1.0], 1.0, 1e-5, rng)
    with pytest.raises(ValueError, match="delta"):
        pmwm_mean(w, 1.0, 0.0, rng)
    with pytest.raises(ValueError, match="w"):
        pmwm_mean([1.0, np.inf], 1.0, 1e-5, rng)


# ------------------------------------------------------------------------- Huber

def test_huber_accuracy_large_sample():
    rng = np.random.default_rng(20)
    estimates = [huber_mean(rng.normal(5, 1, 100_000), 1.0, 1e-5, rng)
                 for _ in range(15)]
    assert np.mean(np.abs(np.array(estimates) / 5 - 1) <= 0.02) >= 0.9


def test_huber_accuracy_at_ten_thousand_values():
    # 91% of 200 estimates are within 5% (before and after the exact noise); of 40
    # estimates, fewer than 30 within would have chance below 0.5%
    rng = np.random.default_rng(21)
    estimates = [huber_mean(rng.normal(5, 1, 10_000), 1.0, 1e-5, rng)
                 for _ in range(40)]
    assert np.mean(np.abs(np.array(estimates) / 5 - 1) <= 0.05) >= 0.75


def test_huber_sqrt_block_rule_is_what_fails_at_ten_thousand_values():
    # The huber scale's floor(sqrt(m)/2) = 50 medians at m = 1e4: the noisy argmax
    # over 81 dyadic bins often picks a wrong scale; this is why block_size exists.
    rng = np.random.default_rng(21)
    estimates = [huber_mean(rng.normal(5, 1, 10_000), 1.0, 1e-5, rng, block_size=None)
                 for _ in range(40)]
    assert np.mean(np.abs(np.array(estimates) / 5 - 1) <= 0.05) < 0.9


def test_huber_budget():
    ledger = PrivacyLedger()
    m = 3000
    huber_mean(np.random.default_rng(22).normal(5, 1, m), 0.9, 2e-6,
               np.random.default_rng(23), ledger=ledger)
    n_steps = math.ceil(math.log(m))
    scale, *steps = ledger.entries
    assert len(steps) == n_steps
    assert scale["eps"] == pytest.approx(0.25 * 0.9) and scale["delta"] == 0.0
    assert scale["sensitivity"] == 2.0 and scale["sensitivity_norm"] == "L1"
    for entry in steps:
        assert entry["eps"] == pytest.approx(0.75 * 0.9 / n_steps)
        assert entry["delta"] == pytest.approx(2e-6 / n_steps)
    assert ledger.spent() == pytest.approx((0.9, 2e-6), rel=1e-14)
    assert ledger.check_within(0.9, 2e-6)


@pytest.mark.parametrize("moved_to", [1e12, -1e12, 0.0])
def test_huber_statistic_sensitivities(moved_to):
    w = np.random.default_rng(24).normal(5, 1, 400)
    for mu, tau in ((0.0, 3.0), (5.0, 0.5), (-2.0, 40.0)):
        for index in (0, int(np.argmin(w))):
            neighbour = w.copy()
            neighbour[index] = moved_to
            change = abs(_huber_gradient(neighbour, mu, tau) - _huber_gradient(w, mu, tau))
            assert change <= 2 * tau / w.size * (1 + 1e-12)
            # Scale step: with the same pairing, at most one block median moves.
            medians = _pair_block_medians(w, np.random.default_rng(25), 16)
            moved = _pair_block_medians(neighbour, np.random.default_rng(25), 16)
            assert np.sum(medians != moved) <= 1


def test_huber_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="m2_frac"):
        huber_mean(np.arange(10.0), 1.0, 1e-5, rng, m2_frac=1.0)
    with pytest.raises(ValueError, match="at least 2"):
        huber_mean([1.0], 1.0, 1e-5, rng)
    with pytest.raises(ValueError, match="k_min"):
        huber_mean(np.arange(10.0), 1.0, 1e-5, rng, k_min=5, k_max=0)


def test_huber_warns_when_its_scale_step_is_decided_by_noise():
    rng = np.random.default_rng(30)
    # 1000 values -> 31 medians; Laplace(2/0.0125) peak over 81 bins ~ 700 counts
    with pytest.warns(UserWarning, match="unreliable"):
        huber_mean(rng.normal(5, 1, 1000), 0.05, 1e-6, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        huber_mean(rng.normal(5, 1, 100_000), 1.0, 1e-6, rng)
