"""Moments about a private mean with the sensitivity of a declared box
(``sklearn_dppca._algorithms._box_moments``): each release moves by at most its
ledger's sensitivity when one row moves to any corner of the box (or far outside
it), every term is within its bound, the sums agree with a direct loop, and the
released variances are unbiased for the table's.
"""

import itertools

import numpy as np
import pytest

from sklearn_dppca._algorithms._box_moments import (
    project_mean,
    release_box_mean,
    release_box_total,
    release_box_variances,
)
from sklearn_dppca._bunch import Bunch
from sklearn_dppca._data._rows import Rows
from sklearn_dppca.privacy import PrivacyLedger
from sklearn_dppca.privacy._accounting import Allocation

LOW = np.array([-2.0, 0.0, 10.0])
HIGH = np.array([3.0, 1.0, 50.0])
WIDTHS = HIGH - LOW
CENTRE = (LOW + HIGH) / 2


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return LOW + rng.uniform(0.1, 0.6, size=(n, 3)) * WIDTHS


def _neighbours(X):
    """``X`` with its first row moved to every corner of the box, and far
    outside it (clipped back to a corner)."""
    for signs in itertools.product([0, 1], repeat=3):
        neighbour = X.copy()
        neighbour[0] = np.where(signs, HIGH, LOW)
        yield neighbour
    far = X.copy()
    far[0] = [1e9, -1e9, 1e9]
    yield far


def _rows(X, blocks=None):
    sizes = (len(X),) if blocks is None else blocks
    return Rows(np.asarray(X, dtype=float), sizes, root=0).clipped(LOW, HIGH)


def _leaf(step, mu=1.0):
    return Allocation(step, "gaussian", 0.0, 0.0, mu)


def _released(release, seed=5):
    """``release(rng, ledger)`` with a fixed noise draw, and the ledger's
    sensitivity of its one entry, plus the most its rounding to the release's grid
    can move the released vector between two data sets (a step per value)."""
    ledger = PrivacyLedger()
    value = release(np.random.default_rng(seed), ledger)
    entry = ledger.to_list()[-1]
    return value, entry["sensitivity"] + np.sqrt(entry["values"]) * entry["grid"]


#: A public mean off the box centre (as a released one may be), in the box.
MEAN = Bunch(mean=CENTRE + np.array([0.3, -0.2, 0.1]) * WIDTHS,
             noise_scale=np.array([0.1, 0.02, 0.5]), centre=CENTRE, half=WIDTHS / 2)


def _orthonormal(k, seed=3):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    return q.T[:k]


def test_the_mean_moves_by_its_sensitivity_at_the_corners():
    X = _data()
    X[0] = LOW          # moved to the opposite corner: the largest change

    def statistic(Y):
        released, sensitivity = _released(
            lambda rng, ledger: release_box_mean(_rows(Y), _leaf("mean"), "analytic",
                                                 rng, ledger))
        return (released.mean - CENTRE) / WIDTHS, sensitivity

    base, sensitivity = statistic(X)
    assert sensitivity == pytest.approx(np.sqrt(3) / len(X), rel=1e-4)   # + rounding
    gaps = [np.linalg.norm(statistic(Y)[0] - base) for Y in _neighbours(X)]
    assert max(gaps) <= sensitivity
    # the corners are adversarial: some neighbour comes within a tenth of it
    assert max(gaps) > 0.9 * sensitivity


@pytest.mark.parametrize("k", [1, 2, 3])
def test_moments_about_a_mean_move_by_their_sensitivity_at_the_corners(k):
    X = _data()
    V = _orthonormal(k)
    projected = project_mean(MEAN, V)

    def statistic(Y):
        (values, _, bounds), sensitivity = _released(
            lambda rng, ledger: release_box_variances(
                _rows(Y).projected(V), projected, _leaf("variances"), "analytic", rng,
                ledger))
        return (values + projected.noise_scale**2) / bounds, sensitivity

    base, sensitivity = statistic(X)
    gaps = [np.linalg.norm(statistic(Y)[0] - base) for Y in _neighbours(X)]
    assert max(gaps) <= sensitivity
    assert max(gaps) > 0.5 * sensitivity / np.sqrt(k)


def test_the_total_moves_by_its_sensitivity_at_the_corners():
    X = _data()
    X[0] = MEAN.mean    # its term is 0; the farthest corner's is the bound

    def statistic(Y):
        (total, _, bound), sensitivity = _released(
            lambda rng, ledger: release_box_total(_rows(Y), MEAN, _leaf("total"),
                                                  "analytic", rng, ledger))
        return (total + np.sum(MEAN.noise_scale**2)) / bound, sensitivity

    base, sensitivity = statistic(X)
    gaps = [abs(statistic(Y)[0] - base) for Y in _neighbours(X)]
    assert max(gaps) <= sensitivity
    assert max(gaps) > 0.9 * sensitivity


def test_every_term_is_within_its_bound_and_the_half_width_alone_is_not_one():
    # the bound of a term about the mean m is (h + |c - m|)^2: the box's half
    # width alone (the bound about the centre) is exceeded by a corner's term
    corners = np.array([np.where(signs, HIGH, LOW)
                        for signs in itertools.product([0, 1], repeat=3)])
    ledger = PrivacyLedger()
    _, _, bounds = release_box_variances(_rows(corners), MEAN, _leaf("v"), "analytic",
                                         np.random.default_rng(0), ledger)
    terms = (corners - MEAN.mean)**2
    assert np.all(terms <= bounds)
    assert np.all(terms.max(axis=0) > (WIDTHS / 2)**2)


def test_the_sums_agree_with_a_direct_loop_in_blocks():
    X = _data(23) * 1.5 - 7      # some rows outside the box: clipped
    rows = _rows(X, blocks=(10, 13))
    clipped = np.clip(X, LOW, HIGH)
    centre = np.array([0.5, -1.0, 3.0])
    expected = np.zeros((2, 3))
    for row in clipped:
        for j in range(3):
            expected[0, j] += row[j] - centre[j]
            expected[1, j] += (row[j] - centre[j]) ** 2
    np.testing.assert_allclose(rows.centred_sums(centre), expected, rtol=1e-13)


def test_released_variances_are_unbiased_for_the_table():
    # many noise draws of the mean and of the moments: the mean's noise variance
    # is subtracted, so their average is the table's variance (ddof=0)
    X = _data(200, seed=1)
    V = _orthonormal(2)
    truth = np.var(X @ V.T, axis=0)
    total_truth = np.var(X, axis=0).sum()
    draws, totals = [], []
    for seed in range(400):
        rng = np.random.default_rng(seed)
        ledger = PrivacyLedger()
        mean = release_box_mean(_rows(X), _leaf("mean", 0.5), "analytic", rng, ledger)
        values, sds, _ = release_box_variances(_rows(X).projected(V), project_mean(mean, V),
                                               _leaf("v", 2.0), "analytic", rng, ledger)
        total, total_sd, _ = release_box_total(_rows(X), mean, _leaf("t", 2.0), "analytic",
                                               rng, ledger)
        draws.append(values)
        totals.append(total)
    draws, totals = np.array(draws), np.array(totals)
    # within four standard errors of the average; the stated sds are the spread
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - truth),
                                 4 * draws.std(axis=0) / np.sqrt(len(draws)))
    assert abs(totals.mean() - total_truth) < 4 * totals.std() / np.sqrt(len(totals))
    np.testing.assert_allclose(draws.std(axis=0), sds, rtol=0.2)
    assert totals.std() == pytest.approx(total_sd, rel=0.2)


def test_the_mean_of_the_box_is_near_the_rows_with_a_large_budget():
    X = _data(500, seed=2)
    ledger = PrivacyLedger()
    mean = release_box_mean(_rows(X), _leaf("mean", 1e6), "analytic",
                            np.random.default_rng(0), ledger)
    np.testing.assert_allclose(mean.mean, X.mean(axis=0), atol=1e-6 * WIDTHS.max())
    assert ledger.to_list()[0]["step"] == "mean"
