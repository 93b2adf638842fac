"""Snapping released noisy values to a power-of-two grid (sklearn_dppca.privacy.snapping).

Checks: released values lie on the grid; the default grid is the smallest power of
two >= noise_scale / 2**10; snapping is on by default (every thread), and
``snapping(False)`` / ``snapping(grid=...)`` are scoped to their ``with`` block; the
histogram counts, integers with integer noise, are not snapped; ledger entries of snapped calls say ``"snapped": grid``; and the accuracy
cost, measured on the same random draws with and without snapping, is at most
grid / 2 < noise_scale / 2**10 per value of a mechanism's own release, and below 1% of the
noise scale for releases downstream of snapped ones (printed).
"""

import math
import threading

import numpy as np
import pytest

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree
from sklearn_dppca.privacy import (
    PrivacyLedger,
    additive_histogram,
    dyadic_argmax,
    gaussian_mechanism,
    huber_mean,
    laplace_mechanism,
    pmwm_mean,
    snapping,
    sparse_histogram,
    symmetric_matrix_gaussian,
)
from sklearn_dppca.privacy._snapping import snap, _snapping_grid


def default_grid(noise_scale):
    """Smallest power of two >= noise_scale / 1024, computed independently."""
    grid = 2.0 ** math.ceil(math.log2(noise_scale / 1024))
    while grid / 2 >= noise_scale / 1024:
        grid /= 2
    while grid < noise_scale / 1024:
        grid *= 2
    return grid


def on_grid(values, grid):
    values = np.asarray(values, dtype=float)
    return bool(np.all(values / grid == np.round(values / grid)))


def rng():
    return np.random.default_rng(0)


# ---------------------------------------------------------------------- the grid

@pytest.mark.parametrize("noise_scale", [1e-300, 3e-9, 0.001, 1.0, 1024.0, 1000.0,
                                         0.6042367252, 7e100])
def test_default_grid_is_smallest_power_of_two_above_scale_over_1024(noise_scale):
    with snapping():
        grid = _snapping_grid(noise_scale)
    assert grid == default_grid(noise_scale)
    assert math.frexp(grid)[0] == 0.5                    # a power of two
    assert noise_scale / 1024 <= grid < noise_scale / 512


def test_snap_is_exact_rounding_to_the_grid():
    values = np.array([-3.3, -0.0, 0.0, 0.49, 0.5, 0.51, 1.5, 2.5, 1e300, -1e-300])
    with snapping(grid=0.5):
        snapped = snap(values, 1.0)
    np.testing.assert_array_equal(snapped, np.round(values * 2) / 2)
    with snapping(grid=2.0**-1074):            # the smallest subnormal: a no-op
        np.testing.assert_array_equal(snap(values, 1.0), values)
    # scalars stay Python floats, arrays keep their shape
    with snapping():
        assert isinstance(snap(0.123, 1.0), float)
        assert snap(np.zeros((2, 3)), 1.0).shape == (2, 3)
    huge = np.finfo(float).max
    with snapping(grid=2.0**1000):
        assert snap(huge, 1.0) == huge               # within a grid step of the max


def test_on_by_default_and_scoped():
    value = np.linspace(-1, 1, 7)
    released, sigma = gaussian_mechanism(value, 1.0, 1.0, 1e-5, rng())
    raw = value + sigma * rng().standard_normal(7)
    grid = default_grid(sigma)
    # by default the release is the raw noisy value rounded to the grid
    assert _snapping_grid(sigma) == grid
    np.testing.assert_array_equal(released, np.round(raw / grid) * grid)
    assert not np.array_equal(released, raw)
    with snapping(False):
        plain, _ = gaussian_mechanism(value, 1.0, 1.0, 1e-5, rng())
        assert _snapping_grid(sigma) is None
        with snapping():
            assert _snapping_grid(sigma) == grid
        with snapping(grid=0.25):
            assert _snapping_grid(sigma) == 0.25
        assert _snapping_grid(sigma) is None
    np.testing.assert_array_equal(plain, raw)
    assert _snapping_grid(sigma) == grid
    with pytest.raises(RuntimeError), snapping(False):
        raise RuntimeError("leaving the block by an exception also turns it back on")
    assert _snapping_grid(sigma) == grid


def test_on_in_every_thread_and_scoped_to_the_thread():
    seen = []
    with snapping(False):
        worker = threading.Thread(target=lambda: seen.append(_snapping_grid(1.0)))
        worker.start()
        worker.join()
    assert seen == [default_grid(1.0)]


@pytest.mark.parametrize("grid, error", [(0.3, ValueError), (0.0, ValueError),
                                         (-0.5, ValueError), (np.inf, ValueError),
                                         (np.nan, ValueError), ("fine", TypeError),
                                         (True, TypeError)])
def test_invalid_grid(grid, error):
    with pytest.raises(error, match="grid"):
        with snapping(grid=grid):
            pass
    with pytest.raises(TypeError, match="enabled"):
        with snapping("yes"):
            pass


# ---------------------------------------------------------------- the mechanisms

def test_mechanisms_release_on_the_grid_and_the_ledger_says_so():
    ledger = PrivacyLedger()
    value = np.linspace(-5, 5, 11)
    with snapping():
        gauss, sigma = gaussian_mechanism(value, 1.0, 1.0, 1e-5, rng(), ledger=ledger)
        scalar, _ = gaussian_mechanism(0.3, 1.0, 1.0, 1e-5, rng(), ledger=ledger)
        lap, b = laplace_mechanism(value, 1.0, 1.0, rng(), ledger=ledger)
        matrix, sigma_m = symmetric_matrix_gaussian(np.eye(3), 0.4, 1.0, 1e-5, rng(),
                                                    ledger=ledger)
        dyadic_argmax(np.logspace(-3, 3, 50), 1.0, rng(), ledger=ledger)
    assert on_grid(gauss, default_grid(sigma)) and isinstance(scalar, float)
    assert on_grid(scalar, default_grid(sigma))
    assert on_grid(lap, default_grid(b))
    assert on_grid(matrix, default_grid(sigma_m))
    np.testing.assert_array_equal(matrix, matrix.T)
    for entry in ledger.entries:
        assert entry["snapped"] == default_grid(entry["noise_scale"]), entry["step"]


def test_histograms_are_integers_and_not_snapped():
    counts = np.arange(12.0).reshape(3, 4) * 10
    ledger = PrivacyLedger()
    for enabled in (True, False):
        with snapping(enabled):
            additive = additive_histogram(counts, 1.0, 1e-5, rng(), ledger=ledger)
            sparse = sparse_histogram(counts, 1.0, 1e-5, rng(), ledger=ledger)
        assert additive.dtype == sparse.dtype == np.int64
        if enabled:
            first = (additive, sparse)
    # snapping cannot touch an integer release: the same draws give the same counts
    np.testing.assert_array_equal(first[0], additive)
    np.testing.assert_array_equal(first[1], sparse)
    assert all("snapped" not in entry for entry in ledger.entries)


def test_mean_estimators_are_snapped_through_their_mechanisms():
    w = np.random.default_rng(1).exponential(size=400)
    for estimator in (huber_mean, pmwm_mean):
        ledger = PrivacyLedger()
        with snapping():
            estimate = estimator(w, 1.0, 1e-5, rng(), ledger=ledger)
        entries = list(ledger.entries)
        for entry in ledger.entries:
            entries += entry.get("parts", [])
        noisy = [e for e in entries if "durfee" not in e["mechanism"]
                 and "parallel" not in e["mechanism"]]
        assert noisy and all("snapped" in e for e in noisy)
        # the last Gaussian release is the estimate (Huber: mu of the last step)
        last = [e for e in noisy if "gaussian" in e["mechanism"]][-1]
        assert on_grid(estimate, last["snapped"])
        # quantile searches release grid indices only: nothing to snap
        assert all("snapped" not in e for e in entries if "durfee" in e["mechanism"])


def test_ledger_of_an_unsnapped_fit_has_no_snapped_entry():
    X = np.random.default_rng(2).standard_normal((60, 3))
    with snapping(False):
        pca = DPPCA(random_state=0).fit(X)
    assert all("snapped" not in entry for entry in pca.privacy_ledger_)
    # by default every continuous noisy release of the fit is snapped
    default = DPPCA(random_state=0).fit(X)
    for entry in default.privacy_ledger_:
        continuous = not any(word in entry["mechanism"] for word in
                             ("durfee", "discrete", "composition"))
        assert ("snapped" in entry) == continuous, entry["step"]


# ---------------------------------------------------------------- the estimators

def _data(n=400):
    return np.random.default_rng(3).standard_normal((n, 4)) * [4.0, 2.0, 1.0, 0.5]


def test_estimator_releases_lie_on_the_grid():
    X = _data()
    with snapping():
        directions = DPKendallDirections(random_state=0).fit(X)
        scree = DPScree(scree_params={"clip": "norm"}, monotone=False,
                        random_state=0).fit(X)
    assert on_grid(directions.kendall_matrix_, directions.privacy_ledger_[0]["snapped"])
    scree_entry = [e for e in scree.privacy_ledger_
                   if e["step"] == "scree/variances/statistic"][0]
    assert on_grid(scree.explained_variance_raw_, scree_entry["snapped"])
    for entry in directions.privacy_ledger_ + scree.privacy_ledger_:
        # the quantile searches release grid indices; the block entry releases nothing
        releases_noise = "durfee" not in entry["mechanism"] and entry["step"] != "gaussian block"
        assert ("snapped" in entry) == releases_noise


def test_accuracy_cost_is_negligible():
    """Same seeds with and without snapping: every release moves by <= grid / 2."""
    X = _data(2000)
    # a public clip bound: a private quantile search draws one geometric per run of
    # equal count, so a tiny move of the data re-deals its draws (same law, other
    # path) and would hide what snapping itself costs
    params = dict(eps=2.0, random_state=0, scree_params={"clip": "norm", "C": 20.0},
                  bins=5)
    with snapping(False):
        plain = DPPCA(**params).fit(X)
    assert plain.score_histogram_.sum() > 0
    snapped = DPPCA(**params).fit(X)            # snapping is on by default
    ledger = {entry["step"]: entry for entry in snapped.privacy_ledger_}
    loading = ledger["loading"]
    scree = ledger["scree/variances/statistic"]
    assert ledger["score/histogram"]["mechanism"].startswith("discrete gaussian")
    assert "snapped" not in ledger["score/histogram"]
    kendall_change = np.max(np.abs(snapped.kendall_matrix_ - plain.kendall_matrix_))
    variance_change = np.max(np.abs(snapped.explained_variance_raw_
                                    - plain.explained_variance_raw_))
    histogram_l1 = np.sum(np.abs(snapped.score_histogram_ - plain.score_histogram_))
    relative = {
        "kendall matrix (max |change| / noise scale)": kendall_change
        / loading["noise_scale"],
        "raw variances (max |change| / noise scale)": variance_change
        / scree["noise_scale"],
    }
    # the Laplace mechanism itself, on the same draws
    value = np.arange(400.0)
    lap_snapped, b = laplace_mechanism(value, 2.0, 0.5, rng())
    with snapping(False):
        lap_plain, _ = laplace_mechanism(value, 2.0, 0.5, rng())
    relative["laplace release (max |change| / noise scale)"] = np.max(
        np.abs(lap_snapped - lap_plain)) / b
    print("\nSnapping accuracy cost (same random draws):")
    for name, value in relative.items():
        print(f"  {name}: {value:.2e}")
    print(f"  score histogram of DPPCA, L1 change of the normalised histogram: "
          f"{histogram_l1:.2e}")
    # A mechanism's own release moves by at most grid / 2 < noise_scale / 2**10.
    # Downstream releases also see the (snapped) earlier releases, e.g. the scree is
    # measured along slightly moved directions: they move by < 1% of their noise.
    assert relative["laplace release (max |change| / noise scale)"] < 2.0**-10
    assert relative["kendall matrix (max |change| / noise scale)"] < 2.0**-10
    for name, value in relative.items():
        assert 0 < value < 0.01, name
    # (the DPPCA score histogram sits on a frame from private quantile searches,
    # whose draws re-deal when the directions move a little: its L1 change is
    # printed, and the histogram mechanism's own cost is asserted above)
    # the grid is what the ledger says, and the directions agree
    assert loading["snapped"] == default_grid(loading["noise_scale"])
    np.testing.assert_allclose(np.abs(np.sum(snapped.components_ * plain.components_,
                                             axis=1)), 1.0, atol=1e-3)
