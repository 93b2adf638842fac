"""Moments about a private mean with the sensitivity of a declared box
(``sklearn_dppca._algorithms._box_moments``): each release moves by at most its
ledger's sensitivity when one row moves to any corner of the box (or far outside
it), every term is within its bound, the sums agree with a direct loop, and the
released variances (and the covariance of ``radial="covariance"``) are unbiased
for the table's.
"""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from sklearn_dppca._algorithms._box_moments import (
    _moment_units,
    _scree_terms,
    _scree_units,
    box_diagonal,
    box_scree_sds,
    combine_means,
    complement_basis,
    project_mean,
    release_box_covariance,
    release_box_mean,
    release_box_scree,
    release_box_total,
    release_box_variances,
)
from sklearn_dppca._algorithms._scree import _share_noise, _split_leaf
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
        # (in the release's units: R_l R along directions, :func:`_moment_units`)
        units = _moment_units(bounds, projected.joint)[0]
        return (values + projected.noise_scale**2) / units, sensitivity

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


# --------------------------------------------------------------------------------------
# the scree's forms: the mean in the diagonal's unit, the variances and the rest
# in one release whose sum is the total
# --------------------------------------------------------------------------------------

def test_the_scree_mean_in_the_diagonal_unit_moves_by_one_over_n():
    X = _data()
    X[0] = LOW
    diagonal = box_diagonal(WIDTHS)

    def statistic(Y):
        released, sensitivity = _released(
            lambda rng, ledger: release_box_mean(_rows(Y), _leaf("mean"), "analytic",
                                                 rng, ledger, common_unit=True))
        return (released.mean - CENTRE) / diagonal, released.noise_scale, sensitivity

    base, noise_scale, sensitivity = statistic(X)
    assert sensitivity == pytest.approx(1 / len(X), rel=1e-4)
    # every column's noise sd is the diagonal's over n mu: equal, whatever its width
    np.testing.assert_allclose(noise_scale, diagonal * sensitivity / 1.0, rtol=1e-4)
    gaps = [np.linalg.norm(statistic(Y)[0] - base) for Y in _neighbours(X)]
    assert max(gaps) <= sensitivity
    assert max(gaps) > 0.9 * sensitivity


def _scree_vector(released, terms):
    """The released moments of :func:`release_box_scree` (the variances, then
    the rest: the total less them), the mean's noise variance added back."""
    raw = np.asarray(released.raw)
    vector = raw if terms.bounds.size == raw.size else \
        np.append(raw, released.total - np.sum(raw))
    return vector + terms.mean_variance


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_box_scree_moves_by_its_sensitivity_at_the_corners(k):
    X = _data()
    V = _orthonormal(k)
    rest = complement_basis(V)
    terms = _scree_terms(MEAN, V, rest)
    units = _scree_units(terms)[0]

    def statistic(Y):
        released, sensitivity = _released(
            lambda rng, ledger: release_box_scree(_rows(Y), MEAN, V, rest,
                                                  _leaf("scree"), "analytic", rng, ledger))
        return _scree_vector(released, terms) / units, sensitivity

    X[0] = MEAN.mean    # its terms are 0: a corner's are a row's largest
    base, sensitivity = statistic(X)
    assert sensitivity <= np.sqrt(terms.bounds.size) / len(X) * (1 + 1e-9)
    gaps = [np.linalg.norm(statistic(Y)[0] - base) for Y in _neighbours(X)]
    assert max(gaps) <= sensitivity
    # the corners come within a factor sqrt(2) of the bound (attained only by
    # two rows whose terms fall on different moments)
    assert max(gaps) > 0.6 * sensitivity


def test_every_box_scree_term_is_within_its_bound():
    corners = np.array([np.where(signs, HIGH, LOW)
                        for signs in itertools.product([0, 1], repeat=3)])
    V = _orthonormal(2)
    rest = complement_basis(V)
    terms = _scree_terms(MEAN, V, rest)
    deviations = corners - MEAN.mean
    along = (deviations @ V.T)**2
    beyond = np.sum((deviations @ rest.T)**2, axis=1)
    assert np.all(along <= terms.bounds[:2]) and np.all(beyond <= terms.bounds[2])
    # a row's terms sum to its squared distance from the mean, within the joint bound
    np.testing.assert_allclose(along.sum(axis=1) + beyond,
                               np.sum(deviations**2, axis=1), rtol=1e-12)
    assert np.max(np.sum(deviations**2, axis=1)) <= terms.joint


def test_the_box_scree_sds_are_predicted_before_the_release():
    X = _data(60)
    V = _orthonormal(2)
    rest = complement_basis(V)
    ledger = PrivacyLedger()
    released = release_box_scree(_rows(X), MEAN, V, rest, _leaf("scree", 0.7), "analytic",
                                 np.random.default_rng(0), ledger)
    sds, total_sd = box_scree_sds(MEAN, V, rest, len(X), 1 / 0.7)
    # (to the exact noise's own scale, within 1e-4 of the calibrated one)
    np.testing.assert_allclose(released.noise_scale, sds, rtol=1e-4)
    assert released.total_noise == pytest.approx(total_sd, rel=1e-4)
    assert released.covaried


def test_the_separate_box_sds_are_predicted_before_the_release():
    # basic accounting: the variances and the total each on its own leaf; the
    # prediction the box-or-search choice reads is the release's own noise
    X = _data(60)
    V = _orthonormal(2)
    rng, ledger = np.random.default_rng(0), PrivacyLedger()
    _, variance_sds, _ = release_box_variances(
        _rows(X).projected(V), project_mean(MEAN, V), _leaf("v", 0.7), "analytic",
        rng, ledger)
    _, total_sd, _ = release_box_total(_rows(X), MEAN, _leaf("t", 0.4), "analytic",
                                       rng, ledger)
    sds, predicted_total = box_scree_sds(MEAN, V, complement_basis(V), len(X),
                                         1 / 0.7, 1 / 0.4)
    np.testing.assert_allclose(variance_sds, sds, rtol=1e-4)
    assert total_sd == pytest.approx(predicted_total, rel=1e-4)
    # and they are not the joint release's, which the choice read before
    joint_sds, joint_total = box_scree_sds(MEAN, V, complement_basis(V), len(X), 1 / 0.7)
    assert joint_total != pytest.approx(predicted_total, rel=0.05)


def test_the_box_scree_is_unbiased_and_its_sds_are_its_spread():
    # many noise draws of the mean and of the moments: the variances and the total
    # (their sum with the rest) average to the table's; the stated sds, the
    # total's and the PVE's with the noise they share, are the spread
    X = _data(200, seed=1) * [1.0, 1.0, 1.0]
    V = _orthonormal(2)
    rest = complement_basis(V)
    truth = np.var(X @ V.T, axis=0)
    total_truth = np.var(X, axis=0).sum()
    draws, totals, shares = [], [], []
    for seed in range(400):
        rng = np.random.default_rng(seed)
        ledger = PrivacyLedger()
        mean = release_box_mean(_rows(X), _leaf("mean", 0.5), "analytic", rng, ledger,
                                common_unit=True)
        released = release_box_scree(_rows(X), mean, V, rest, _leaf("scree", 2.0),
                                      "analytic", rng, ledger)
        draws.append(released.raw)
        totals.append(released.total)
        shares.append(released.raw[0] / released.total)
    draws, totals, shares = np.array(draws), np.array(totals), np.array(shares)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - truth),
                                 4 * draws.std(axis=0) / np.sqrt(len(draws)))
    assert abs(totals.mean() - total_truth) < 4 * totals.std() / np.sqrt(len(totals))
    np.testing.assert_allclose(draws.std(axis=0), released.noise_scale, rtol=0.2)
    assert totals.std() == pytest.approx(released.total_noise, rel=0.2)
    share_sd = _share_noise(truth[:1], released.noise_scale[:1], total_truth,
                            released.total_noise, covaried=True)[0]
    assert shares.std() == pytest.approx(share_sd, rel=0.2)
    # read as independent, the share's sd would be stated too large here
    independent = _share_noise(truth[:1], released.noise_scale[:1], total_truth,
                               released.total_noise)[0]
    assert independent > 1.3 * shares.std()


def test_two_parts_of_the_mean_are_one_release():
    # split in mu^2 (never more than the whole, exactly), then combined by their
    # noise: the whole's noise sd, and the same spread over many draws
    leaf = _leaf("mean", 0.37)
    first, rest = _split_leaf(leaf, 0.25)
    assert Fraction(first.mu)**2 + Fraction(rest.mu)**2 <= Fraction(leaf.mu)**2
    X = _data(100)
    combined = []
    for seed in range(300):
        rng = np.random.default_rng(seed)
        ledger = PrivacyLedger()
        parts = [release_box_mean(_rows(X), part, "analytic", rng, ledger,
                                  common_unit=True) for part in (first, rest)]
        combined.append(combine_means(*parts))
    whole = release_box_mean(_rows(X), leaf, "analytic", np.random.default_rng(0),
                             PrivacyLedger(), common_unit=True)
    np.testing.assert_allclose(combined[0].noise_scale, whole.noise_scale, rtol=1e-4)
    spread = np.std([c.mean for c in combined], axis=0)
    np.testing.assert_allclose(spread, whole.noise_scale, rtol=0.2)
    assert _split_leaf(Allocation("m", "gaussian", 0.5, 1e-6), 0.25) is None


def test_the_complement_is_orthonormal_and_orthogonal_to_the_directions():
    V = _orthonormal(2)
    rest = complement_basis(V)
    assert rest.shape == (1, 3)
    np.testing.assert_allclose(np.vstack([V, rest]) @ np.vstack([V, rest]).T, np.eye(3),
                               atol=1e-12)
    assert complement_basis(_orthonormal(3)).shape == (0, 3)
    # rows that are not orthonormal have no complement the total could use
    assert complement_basis(2.0 * V) is None
    assert complement_basis(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]) / [[1], [2**0.5]]) \
        is None


# ------------------------------------------------ the covariance about the mean


def _covariance(Y, mean=MEAN, seed=5):
    """The released covariance of ``Y`` about ``mean`` with a fixed noise draw, the
    mean's noise correction put back (the data's part, in units of ``R^2``), and
    the ledger's sensitivity (with its rounding to the grid)."""
    released, sensitivity = _released(
        lambda rng, ledger: release_box_covariance(_rows(Y), mean, _leaf("statistic"),
                                                   "analytic", "tight", rng, ledger),
        seed)
    corrected = np.diag(mean.noise_scale**2) / released.radius**2
    return released.matrix + corrected, sensitivity, released.radius


def _farthest_corner(mean):
    return np.where(mean.mean > CENTRE, LOW, HIGH)


def test_the_covariance_moves_by_its_sensitivity_at_the_corners():
    X = _data()
    X[0] = _farthest_corner(MEAN)     # its term has norm 1 in the unit R
    base, sensitivity, radius = _covariance(X)
    assert radius == pytest.approx(np.linalg.norm(X[0] - MEAN.mean))
    assert sensitivity == pytest.approx(np.sqrt(2) / len(X), rel=1e-4)   # + rounding
    at_mean = X.copy()
    at_mean[0] = MEAN.mean            # its term is 0
    gaps = [np.linalg.norm(_covariance(Y)[0] - base)
            for Y in [at_mean] + list(_neighbours(X))]
    assert max(gaps) <= sensitivity
    # (the farthest corner to the mean moves it by 1 / n, 1 / sqrt(2) of the bound,
    # which two orthogonal terms of norm 1 would reach: this box has no such corners)
    assert max(gaps) > 0.7 * sensitivity


def test_every_covariance_term_is_within_its_unit_and_the_half_diagonal_is_not_one():
    # each corner alone: the trace of its scatter is its term's squared norm, at
    # most 1 in the unit R; the box's half diagonal (the bound about the centre)
    # is exceeded by the corner farthest from the mean (a broken unit)
    radius = _covariance(_data())[2]
    half_diagonal = np.linalg.norm(WIDTHS / 2)
    corners = [np.where(signs, HIGH, LOW) for signs in itertools.product([0, 1], repeat=3)]
    norms = [np.trace(_rows(corner[None, :]).centred_scatter(MEAN.mean, radius))
             for corner in corners]
    assert max(norms) <= 1.0 and max(norms) == pytest.approx(1.0)
    broken = [np.trace(_rows(corner[None, :]).centred_scatter(MEAN.mean, half_diagonal))
              for corner in corners]
    assert max(broken) > 1.2


def test_the_scatter_agrees_with_a_direct_loop_in_blocks():
    X = _data(23) * 1.5 - 7      # some rows outside the box: clipped
    rows = _rows(X, blocks=(10, 13))
    centre, unit = np.array([0.5, -1.0, 3.0]), 7.0
    expected = np.zeros((3, 3))
    for row in np.clip(X, LOW, HIGH):
        for i in range(3):
            for j in range(3):
                expected[i, j] += (row[i] - centre[i]) * (row[j] - centre[j]) / unit**2
    np.testing.assert_allclose(rows.centred_scatter(centre, unit), expected, rtol=1e-13)
    np.testing.assert_array_equal(rows.centred_scatter(centre, unit),
                                  _rows(X, blocks=(10, 13)).centred_scatter(centre, unit))


def test_the_released_covariance_is_unbiased_for_the_table():
    # many draws of a noisy mean and of the scatter about it: R^2 times the
    # released matrix averages to the table's covariance (ddof=0), because the
    # mean's noise variance is taken off; without that, the diagonal would be
    # high by it, many standard errors here
    X = _data(200, seed=1)
    truth = np.cov(X.T, bias=True)
    draws, mean_noise = [], None
    for seed in range(400):
        rng = np.random.default_rng(seed)
        ledger = PrivacyLedger()
        mean = release_box_mean(_rows(X), _leaf("mean", 0.25), "analytic", rng, ledger,
                                common_unit=True)
        released = release_box_covariance(_rows(X), mean, _leaf("statistic", 4.0),
                                          "analytic", "tight", rng, ledger)
        draws.append(released.matrix * released.radius**2)
        mean_noise = mean.noise_scale**2
    draws = np.array(draws)
    errors = draws.std(axis=0) / np.sqrt(len(draws))
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - truth), 4 * errors)
    assert np.all(mean_noise > 6 * np.diag(errors))
