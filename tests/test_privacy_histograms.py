"""Grids, exact counts and the private histograms (Karwa & Vadhan stability histogram; doc/user_guide.rst)."""

import math
from fractions import Fraction

import numpy as np
import pytest

from sklearn_dppca.privacy import (
    PrivacyLedger,
    additive_histogram,
    additive_histogram_noise_scale,
    dyadic_argmax,
    gaussian_noise_scale,
    grid_cell_index,
    histogram_counts,
    normalise_histogram,
    sparse_histogram,
)
from sklearn_dppca.privacy._discrete import (
    _discrete_gaussian_delta,
    discrete_laplace,
    laplace_rate,
)
from sklearn_dppca.privacy._histograms import _sparse_threshold

X_EDGES = np.array([0.0, 1.0, 2.0, 3.0])
Y_EDGES = np.array([-1.0, 0.5, 2.0])


def literal_interval(value, edges):
    """Right-closed intervals, the first closed on both sides; -1 outside."""
    if edges[0] <= value <= edges[1]:
        return 0
    for j in range(1, len(edges) - 1):
        if edges[j] < value <= edges[j + 1]:
            return j
    return -1


def literal_cell(point, x_edges, y_edges):
    ix, iy = literal_interval(point[0], x_edges), literal_interval(point[1], y_edges)
    return -1 if ix < 0 or iy < 0 else ix + (len(x_edges) - 1) * iy


def test_cell_index_on_edges_x_fastest_and_outside():
    points = np.array([
        [0.0, -1.0],   # the very first corner belongs to cell (0, 0)
        [1.0, 0.5],    # right-closed: still (0, 0)
        [1.0001, 0.5],  # (1, 0)
        [3.0, 2.0],    # last corner: (2, 1) -> 2 + 3 * 1
        [0.5, 0.6],    # (0, 1) -> 3
        [2.5, 0.0],    # (2, 0) -> 2
        [3.0001, 1.0], [-0.1, 1.0], [1.0, 2.1], [1.0, -1.5], [np.nan, 0.0],
    ])
    expected = [0, 0, 1, 5, 3, 2, -1, -1, -1, -1, -1]
    assert grid_cell_index(points, X_EDGES, Y_EDGES).tolist() == expected


def test_cell_index_matches_literal_rule_on_random_and_edge_points():
    rng = np.random.default_rng(0)
    x_edges, y_edges = np.linspace(-2, 2, 6), np.linspace(0, 1, 4)
    points = np.column_stack((rng.uniform(-2.5, 2.5, 400), rng.uniform(-0.2, 1.2, 400)))
    # Put a quarter of the points exactly on edges.
    points[:100, 0] = rng.choice(x_edges, 100)
    points[50:150, 1] = rng.choice(y_edges, 100)
    expected = [literal_cell(point, x_edges, y_edges) for point in points]
    assert grid_cell_index(points, x_edges, y_edges).tolist() == expected


def test_counts_layout_and_sums():
    rng = np.random.default_rng(1)
    points = rng.uniform(-0.5, 3.5, size=(500, 2))
    counts = histogram_counts(points, X_EDGES, Y_EDGES)
    assert counts.shape == (3, 2)
    cells = [literal_cell(point, X_EDGES, Y_EDGES) for point in points]
    for ix in range(3):
        for iy in range(2):
            assert counts[ix, iy] == cells.count(ix + 3 * iy)
    assert counts.sum() == sum(cell >= 0 for cell in cells)


def test_group_counts():
    rng = np.random.default_rng(2)
    points = rng.uniform(0, 3, size=(300, 2))
    groups = rng.choice(["a", "b", "c"], size=300)
    counts = histogram_counts(points, X_EDGES, Y_EDGES, groups=groups,
                              labels=["c", "a", "b", "unused"])
    assert counts.shape == (4, 3, 2)
    np.testing.assert_array_equal(counts.sum(axis=0),
                                  histogram_counts(points, X_EDGES, Y_EDGES))
    np.testing.assert_array_equal(
        counts[1], histogram_counts(points[groups == "a"], X_EDGES, Y_EDGES))
    assert not counts[3].any()
    with pytest.raises(ValueError, match="labels outside labels") as caught:
        histogram_counts(points, X_EDGES, Y_EDGES, groups=groups, labels=["a", "b"])
    assert "'c'" not in str(caught.value)          # the label found is data
    with pytest.raises(ValueError, match="labels"):
        histogram_counts(points, X_EDGES, Y_EDGES, groups=groups)


def test_count_sensitivity_on_neighbours_also_across_groups():
    rng = np.random.default_rng(3)
    points = rng.uniform(0, 3, size=(50, 2))
    groups = rng.choice([0, 1], size=50)
    labels = [0, 1]
    neighbours = [
        (np.array([2.9, 1.9]), groups[0]),       # another cell, same group
        (np.array([2.9, 1.9]), 1 - groups[0]),   # another cell and group
        (np.array([50.0, 50.0]), groups[0]),     # out of the grid
    ]
    original = histogram_counts(points, X_EDGES, Y_EDGES, groups, labels)
    for point, group in neighbours:
        moved_points, moved_groups = points.copy(), groups.copy()
        moved_points[0], moved_groups[0] = point, group
        changed = histogram_counts(moved_points, X_EDGES, Y_EDGES, moved_groups, labels)
        difference = (changed - original).ravel()
        assert np.linalg.norm(difference) <= math.sqrt(2) + 1e-12
        assert np.abs(difference).sum() <= 2


def _discrete_gaussian_pmf(sigma2, width):
    """Exact pmf of N_Z(0, sigma2) on -width..width (the rest weighs < 1e-300)."""
    support = np.arange(-width, width + 1)
    weights = np.exp(-support.astype(float) ** 2 / (2 * float(sigma2)))
    return support, weights / weights.sum()


def test_additive_noise_law_clamp_and_ledger():
    ledger = PrivacyLedger()
    zeros = np.zeros((3, 150, 150))
    noisy = additive_histogram(zeros, 0.5, 1e-6, np.random.default_rng(4), ledger=ledger)
    sigma = additive_histogram_noise_scale(0.5, 1e-6)
    assert noisy.shape == zeros.shape and noisy.dtype == np.int64 and noisy.min() == 0
    # Clamped N_Z(0, sigma^2): P(0) = P(Z <= 0), E[max(Z, 0)] from the exact pmf.
    support, pmf = _discrete_gaussian_pmf(sigma**2, int(40 * sigma))
    assert np.mean(noisy == 0) == pytest.approx(pmf[support <= 0].sum(), abs=0.01)
    assert np.mean(noisy == 0) > 0.51       # the atom at 0: not the continuous 1/2
    expected_mean = float(np.sum(np.maximum(support, 0) * pmf))
    assert noisy.mean() == pytest.approx(expected_mean, rel=0.02)
    (entry,) = ledger.entries
    assert entry["mechanism"] == "discrete gaussian"
    assert entry["sensitivity"] == pytest.approx(math.sqrt(2))
    assert entry["noise_scale"] == pytest.approx(sigma)
    assert Fraction(entry["sigma2"]) >= Fraction(sigma**2) * (1 - 1e-15)
    assert (entry["eps"], entry["delta"]) == (0.5, 1e-6)
    # the exact profile meets the pair; the continuous Gaussian's sd is close
    assert _discrete_gaussian_delta(Fraction(entry["sigma2"]), 0.5) <= 1e-6
    assert sigma == pytest.approx(gaussian_noise_scale(math.sqrt(2), 0.5, 1e-6), rel=0.01)


def test_histogram_releases_are_integers_also_per_group():
    counts = np.arange(2 * 6 * 5, dtype=float).reshape(2, 6, 5)
    rng = np.random.default_rng(3)
    for noisy in (additive_histogram(counts, 1.0, 1e-5, rng),
                  additive_histogram(counts, None, None, rng, mu=0.5),
                  sparse_histogram(counts, 1.0, 1e-5, rng)):
        assert noisy.shape == counts.shape
        assert noisy.dtype == np.int64 and noisy.min() >= 0
    with pytest.raises(ValueError, match="whole numbers"):
        additive_histogram(counts + 0.5, 1.0, 1e-5, rng)


def test_additive_is_deterministic_under_the_generator():
    counts = np.full((8, 8), 30)
    first = additive_histogram(counts, 1.0, 1e-5, np.random.default_rng(11))
    again = additive_histogram(counts, 1.0, 1e-5, np.random.default_rng(11))
    other = additive_histogram(counts, 1.0, 1e-5, np.random.default_rng(12))
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_additive_gdp_part_ledger():
    ledger = PrivacyLedger()
    additive_histogram(np.zeros((4, 4)), None, None, np.random.default_rng(0), mu=0.3,
                       ledger=ledger, step="score/histogram")
    (entry,) = ledger.entries
    assert entry["mechanism"] == "discrete gaussian (mu-GDP part)"
    assert (entry["eps"], entry["delta"], entry["mu"]) == (0.0, 0.0, 0.3)
    assert entry["composition"] == "gdp"
    # a hair more noise than the continuous part of the same mu
    assert 1.0 < entry["noise_scale"] * 0.3 / math.sqrt(2) < 1.01
    assert ledger.gdp_parts() == [entry]


def test_additive_keeps_large_counts():
    counts = np.full((4, 4), 1e6)
    noisy = additive_histogram(counts, 1.0, 1e-5, np.random.default_rng(5))
    assert np.allclose(noisy, counts, rtol=1e-4)


def test_normalise():
    counts = np.array([[1.0, 3.0], [0.0, 4.0]])
    np.testing.assert_allclose(normalise_histogram(counts), counts / 8)
    stacked = np.stack((counts, 2 * counts + 1))
    np.testing.assert_allclose(normalise_histogram(stacked).sum(axis=(1, 2)), [1, 1])
    with pytest.raises(ValueError, match="all noisy counts are zero; increase eps"):
        normalise_histogram(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="group 1"):
        normalise_histogram(np.stack((counts, np.zeros((2, 2)))))


def test_sparse_threshold_and_empty_cells():
    eps, delta = 1.0, 1e-5
    s_rate, t_rate = laplace_rate(eps)
    q = math.exp(-s_rate / t_rate)
    threshold = _sparse_threshold(eps, delta)
    # a lone count of 1 passes with probability q**(T-1) / (1 + q) <= delta e**-eps,
    # and T is the smallest such whole number
    assert isinstance(threshold, int)
    assert q ** (threshold - 1) / (1 + q) <= delta * math.exp(-eps)
    assert q ** (threshold - 2) / (1 + q) > delta * math.exp(-eps)
    assert 2 * s_rate / t_rate <= eps and s_rate / t_rate > eps / 2 * (1 - 2**-10)
    counts = np.zeros((40, 40))
    counts[0, :] = 1.0                      # far below the threshold
    counts[1, :] = threshold + 60           # far above it
    counts[2, :] = threshold                # on it: passes when Z >= 0
    ledger = PrivacyLedger()
    noisy = np.stack([sparse_histogram(counts, eps, delta, np.random.default_rng(seed),
                                       ledger=ledger) for seed in range(200)])
    assert noisy.dtype == np.int64
    assert not noisy[:, 3:].any()            # empty cells are never released
    assert not noisy[:, 0].any()
    assert noisy[:, 1].all()
    assert np.mean(noisy[:, 2] > 0) == pytest.approx(1 / (1 + q), abs=0.05)
    # Released cells carry discrete Laplace noise: E|Z| = 2q / (1 - q**2).
    assert np.mean(np.abs(noisy[:, 1] - counts[1])) == pytest.approx(
        2 * q / (1 - q * q), rel=0.05)
    entry = ledger.entries[0]
    assert (entry["sensitivity"], entry["sensitivity_norm"]) == (2.0, "L1")
    assert (entry["noise_scale"], entry["delta"]) == (t_rate / s_rate, delta)
    assert entry["threshold"] == threshold


def test_sparse_draws_noise_for_occupied_cells_only():
    counts = np.zeros((5, 5))
    counts[2, 3] = 1000.0
    noisy = sparse_histogram(counts, 1.0, 1e-5, np.random.default_rng(6))
    expected = 1000 + discrete_laplace(*laplace_rate(1.0), 1, np.random.default_rng(6))[0]
    assert noisy[2, 3] == expected
    assert np.count_nonzero(noisy) == 1


def test_dyadic_argmax_bins():
    rng = np.random.default_rng(7)
    sharp = 1e6  # noise of scale 2e-6 cannot change an argmax of integer counts
    assert dyadic_argmax([5.0, 6.0, 7.9, 0.1], sharp, rng) == 4.0
    assert dyadic_argmax([8.0, 8.0, 15.99, 4.0], sharp, rng) == 8.0
    assert dyadic_argmax([7.999999999, 4.0, 100.0], sharp, rng) == 4.0
    assert dyadic_argmax([0.0, -3.0, 1.0], sharp, rng) == 2.0 ** -40
    assert dyadic_argmax([1e300, np.inf, 1.0], sharp, rng) == 2.0 ** 40
    # (two in the clamped lowest bin, one above: no tie for the noise to break)
    assert dyadic_argmax([1e-300, 1e-300, 3.0], sharp, rng, k_min=-5, k_max=5) == 2.0 ** -5
    assert dyadic_argmax([0.75] * 3 + [3.0], sharp, rng, k_min=0, k_max=3) == 1.0


def test_dyadic_argmax_noise_and_validation():
    ledger = PrivacyLedger()
    rng = np.random.default_rng(8)
    # With no signal every bin wins about equally often.
    wins = [dyadic_argmax([1.0], 0.01, rng, k_min=0, k_max=3, ledger=ledger)
            for _ in range(4000)]
    assert np.bincount(np.log2(wins).astype(int), minlength=4) == pytest.approx(
        [1000] * 4, rel=0.15)
    assert ledger.entries[0]["sensitivity"] == 2.0
    # sensitivity / eps, and a hair (4 bins / (eps 2**24)) for the rounding
    assert ledger.entries[0]["noise_scale"] == pytest.approx(200.0, rel=1e-4)
    with pytest.raises(ValueError, match="k_min"):
        dyadic_argmax([1.0], 1.0, rng, k_min=3, k_max=2)
    with pytest.raises(TypeError, match="k_max"):
        dyadic_argmax([1.0], 1.0, rng, k_max=2.5)
    with pytest.raises(ValueError, match="NaN"):
        dyadic_argmax([1.0, np.nan], 1.0, rng)


def test_validation():
    with pytest.raises(ValueError, match="x_edges"):
        grid_cell_index(np.zeros((2, 2)), [0.0, 0.0, 1.0], Y_EDGES)
    with pytest.raises(ValueError, match="y_edges"):
        grid_cell_index(np.zeros((2, 2)), X_EDGES, [1.0])
    with pytest.raises(ValueError, match="points"):
        grid_cell_index(np.zeros((2, 3)), X_EDGES, Y_EDGES)
    with pytest.raises(ValueError, match="counts"):
        additive_histogram(np.array([[-1.0]]), 1.0, 1e-5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="delta"):
        sparse_histogram(np.ones((2, 2)), 1.0, 0.0, np.random.default_rng(0))


@pytest.mark.parametrize("even", [True, False])
def test_cell_index_agrees_with_the_binary_search_on_any_edges(even):
    # the closed-form guess is only a shortcut: every value (at an edge, an ulp
    # either side, outside, NaN, infinite) gets the binary search's interval
    rng = np.random.default_rng(11)
    for _ in range(200):
        m = int(rng.integers(1, 60))
        low = rng.normal()
        edges = (np.linspace(low, low + 0.01 + abs(rng.normal()), m + 1)
                 if even else np.sort(rng.normal(size=m + 1)))
        values = np.concatenate([rng.normal(size=300) * 2, edges, [np.nan, np.inf, -np.inf],
                                 np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
        expected = np.searchsorted(edges, values, side="left") - 1
        expected[values == edges[0]] = 0
        expected[~((values >= edges[0]) & (values <= edges[-1]))] = -1
        points = np.column_stack([values, np.full(values.size, 0.5)])
        np.testing.assert_array_equal(
            grid_cell_index(points, edges, [0.0, 1.0]), expected)
