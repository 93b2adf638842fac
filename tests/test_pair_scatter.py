"""Tests of the floored pair scatter ``_pair_scatter`` and of what is built on it.

``_pair_scatter(X, floor=f)`` is the mean over pairs of ``d d^T / max(||d||^2, f)``;
``f = 0`` is the spherical Kendall matrix, and ``bound * _pair_scatter(X, floor=2 bound)``
is the norm-clipped scatter of the DP scree (``_variances._norm_clipped_scatter``). Every
value is checked against a slow direct loop over the pairs, and the sensitivity
claims of the estimators built on them against adversarial neighbouring data sets.
"""

import math
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from sklearn_dppca import DPKendallDirections
from sklearn_dppca._algorithms._variances import _norm_clipped_scatter
from sklearn_dppca import _kendall, _kendall_kernel
from sklearn_dppca._kendall import _pair_design, spherical_kendall

from ._kendall_support import pair_scatter as _pair_scatter

from sklearn_dppca._data._statistics import _block_generator

from ._kendall_support import DATASETS, adversarial_neighbours, direct_kendall, one_block
from ._hang_guard import HANG_GUARD

TOL = 1e-12
DBL_MAX = np.finfo(np.float64).max


# --------------------------------------------------------------------------- helpers
def direct_pair_scatter(X, floor, pairs=None):
    """Slow reference: mean over pairs of ``d d^T / max(||d||^2, floor)``.

    ``pairs`` is an array of (i, j) rows, or None for all pairs i < j. Each difference
    is divided by its largest coordinate ``c`` first, ``e = d / c``; then the term is
    ``e e^T / max(||e||^2, floor / c / c)``, so no square overflows or underflows
    (a quotient ``floor / c / c`` that does is that far above or below ``||e||^2``).
    Coincident pairs give a zero term.
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    if pairs is None:
        pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    total = np.zeros((p, p))
    with np.errstate(over="ignore", under="ignore"):
        for start in range(0, len(pairs), 4096):
            chunk = pairs[start:start + 4096]
            diffs = X[chunk[:, 0]] - X[chunk[:, 1]]
            if not np.all(np.isfinite(diffs)):  # differences of rows near +-DBL_MAX
                diffs = 0.5 * X[chunk[:, 0]] - 0.5 * X[chunk[:, 1]]
                floor_here = floor / 4
            else:
                floor_here = floor
            largest = np.max(np.abs(diffs), axis=1)
            keep = largest > 0
            units = diffs[keep] / largest[keep, None]
            floors = floor_here / largest[keep] / largest[keep]
            weights = 1.0 / np.maximum(np.einsum("ij,ij->i", units, units), floors)
            total += (units * weights[:, None]).T @ units
    return total / len(pairs)


def direct_clipped_scatter(X, bound, pairs=None):
    """Slow reference for the DP scree: mean of ``(d d^T / 2) min(1, 2 bound / ||d||^2)``."""
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    if pairs is None:
        pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    total = np.zeros((p, p))
    for i, j in pairs:
        d = X[i] - X[j]
        squared = d @ d
        factor = 0.5 if squared <= 2 * bound else bound / squared
        total += factor * np.outer(d, d)
    return total / len(pairs)


def ring_offset_scatter(X, bound, pairs, rng):
    """The DP scree's former NumPy implementation (a loop over ring offsets), kept
    as a second reference for ``_norm_clipped_scatter``."""
    design = _pair_design(X.shape[0], X.shape[0] - 1 if pairs == "all" else pairs, rng)
    rows = X[design.order].astype(np.float64)
    scatter = np.zeros((X.shape[1], X.shape[1]))
    n_terms = 0
    offsets = list(design.offsets) + ([design.half_offset] if design.half_offset else [])
    for offset in offsets:
        stop = offset if offset == design.half_offset else rows.shape[0]
        differences = rows[:stop] - np.roll(rows, -offset, axis=0)[:stop]
        squared = np.einsum("ij,ij->i", differences, differences) / 2
        weights = np.minimum(1.0, bound / np.maximum(squared, bound)) / 2
        scatter += (differences * weights[:, None]).T @ differences
        n_terms += stop
    return scatter / n_terms


def assert_relative(actual, expected, tol=TOL):
    """Largest entry error at most ``tol`` times the largest entry of ``expected``.

    A reference below the normal range (its true value underflows) is only asked
    to be matched to within the subnormal range.
    """
    assert actual.shape == expected.shape
    scale = np.max(np.abs(expected))  # np.linalg.norm would underflow below 1e-154
    err = np.max(np.abs(actual - expected))
    if scale < 1e-290:
        assert err <= 1e-300, f"max abs error {err:.3e} on a {scale:.1e} reference"
    else:
        assert err <= tol * scale, f"relative error {err / scale:.3e} > {tol:.0e}"


def typical_squared_distance(X, seed=0):
    """A squared distance of the order of those of the rows (at most DBL_MAX)."""
    X = np.asarray(X, dtype=np.float64)
    rng = np.random.default_rng(seed)
    i, j = rng.integers(len(X), size=(2, 200))
    diffs = (0.5 * X[i] - 0.5 * X[j])[i != j]
    with np.errstate(over="ignore"):
        return float(min(np.median(np.max(np.abs(diffs), axis=1)) ** 2 * 4, DBL_MAX))


def _floors(X):
    typical = typical_squared_distance(X)
    return [typical * 1e-3, typical, min(typical * 1e3, DBL_MAX), 1e-300, 1e300,
            DBL_MAX, 5e-324]


CASES = [(name, index) for name in sorted(DATASETS) for index in range(7)]


# ------------------------------------------------------------ agreement with the loop
@pytest.mark.parametrize("name, floor_index", CASES)
def test_all_pairs_match_direct_loop(name, floor_index):
    X = DATASETS[name]
    floor = _floors(X)[floor_index]
    assert_relative(_pair_scatter(X, floor=floor), direct_pair_scatter(X, floor))


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_floor_zero_is_the_spherical_kendall_matrix(name):
    # Both entry points share one pair sum: compare each with the slow loop
    # rather than with each other.
    X = DATASETS[name]
    assert np.max(np.abs(_pair_scatter(X, floor=0.0) - direct_kendall(X))) <= TOL
    assert np.max(np.abs(_pair_scatter(X, floor=0) - direct_kendall(X))) <= TOL
    if X.shape[0] > 12:
        design = _pair_design(X.shape[0], 6, np.random.default_rng(2))
        assert np.max(np.abs(_pair_scatter(X, floor=0.0, pairs=6, random_state=2)
                             - direct_kendall(X, design.pairs()))) <= TOL


@pytest.mark.parametrize("n, m", [(101, 6), (100, 5), (64, 1), (300, 16)])
@pytest.mark.parametrize("floor_index", range(7))
def test_pairs_m_match_direct_loop_over_the_design(n, m, floor_index):
    rng = np.random.default_rng(n + m)
    X = rng.standard_cauchy((n, 4)) + 1e3
    X[3] = X[4] + 1e-9  # a near-duplicate pair, whichever its design
    X[7] = X[8]  # and a coincident one
    floor = _floors(X)[floor_index]
    design = _pair_design(n, m, np.random.default_rng(12))
    assert_relative(_pair_scatter(X, floor=floor, pairs=m, random_state=12),
                    direct_pair_scatter(X, floor, design.pairs()))


@pytest.mark.parametrize("floor", [0.0, 1e-200, 1.0, 1e200, DBL_MAX])
def test_pairs_m_extreme_values(floor):
    rng = np.random.default_rng(13)
    X = np.vstack([rng.standard_normal((20, 3)) * 1e300,
                   rng.standard_normal((20, 3)) * 1e-300,
                   rng.standard_normal((20, 3))])
    X[0] = [DBL_MAX, -DBL_MAX, 1.0]
    X[1] = [-DBL_MAX, DBL_MAX, 0.0]
    design = _pair_design(60, 6, np.random.default_rng(1))
    assert_relative(_pair_scatter(X, floor=floor, pairs=6, random_state=1),
                    direct_pair_scatter(X, floor, design.pairs()))
    assert_relative(_pair_scatter(X, floor=floor), direct_pair_scatter(X, floor))


def test_floor_near_every_distance_in_the_gram_path():
    # Far from the origin, clustered, with a floor inside the spread of the squared
    # distances: many Gram-path pairs on both sides of the floor.
    rng = np.random.default_rng(21)
    X = rng.standard_normal((700, 5)) * [1.0, 3.0, 0.3, 1.0, 0.01] + 1e4
    X[::40] = X[1::40] + 1e-8
    squared = np.sum((X[:350] - X[350:]) ** 2, axis=1)
    for floor in np.quantile(squared, [0.1, 0.5, 0.9]):
        assert_relative(_pair_scatter(X, floor=floor), direct_pair_scatter(X, floor))


def test_floor_above_every_distance_gives_the_plain_scatter():
    # Then every weight is 1 / floor: the kernel runs with a smaller floor that is
    # still above every squared distance, and rescales.
    rng = np.random.default_rng(22)
    X = rng.standard_normal((500, 4)) * [2.0, 1.0, 0.5, 0.1] + 3.0
    n = len(X)
    covariance = np.cov(X, rowvar=False, bias=True)
    for scale, floor in ((1.0, 1e3), (1.0, 1e100), (1.0, 1e300), (1e150, 1e305),
                         (1e-100, 1e-10), (2.0**-500, 2.0**-990)):
        expected = 2 * n / (n - 1) * covariance * (scale / floor * scale)
        assert_relative(_pair_scatter(X * scale, floor=floor), expected)
        design = _pair_design(n, 6, np.random.default_rng(0))
        assert_relative(_pair_scatter(X * scale, floor=floor, pairs=6, random_state=0),
                        direct_pair_scatter(X * scale, floor, design.pairs()))
    # A floor whose value in the kernel's prescaled units overflows: the result,
    # below 4 p / 2**1024, underflows as the direct loop's does.
    tiny = _pair_scatter(X * 1e-300, floor=1e10)
    assert np.all(np.abs(tiny) <= 1e-300)
    assert_relative(tiny, direct_pair_scatter(X * 1e-300, 1e10))


def test_floor_below_every_distance_is_spherical_kendall():
    X = np.random.default_rng(23).standard_normal((300, 3)) * 1e200
    K = spherical_kendall(X)
    for floor in (5e-324, 1e-300, 1.0, 1e100):
        assert_relative(_pair_scatter(X, floor=floor), K)


@pytest.mark.parametrize("block_size, run_length, max_tasks",
                         [(32, 3, 5), (50, 1, 1000), (7, 4, 64)])
def test_block_layout_and_n_jobs_do_not_change_the_result(monkeypatch, block_size,
                                                         run_length, max_tasks):
    from sklearn_dppca import _kendall

    X = DATASETS["near_duplicates"][:, :3] * [1.0, 1e-2, 1e2]
    floor = typical_squared_distance(X)
    expected = direct_pair_scatter(X, floor)
    serial = _pair_scatter(X, floor=floor)
    monkeypatch.setattr(_kendall, "_BLOCK_SIZE", block_size)
    monkeypatch.setattr(_kendall, "_RUN_LENGTH", run_length)
    monkeypatch.setattr(_kendall, "_MAX_TASKS", max_tasks)
    assert_relative(_pair_scatter(X, floor=floor), expected)
    np.testing.assert_array_equal(_pair_scatter(X, floor=floor, n_jobs=2),
                                  _pair_scatter(X, floor=floor, n_jobs=1))
    assert_relative(serial, expected)


def test_properties_symmetric_psd_trace_at_most_one():
    X = np.random.default_rng(24).standard_normal((400, 5)) * [5, 3, 1, 0.5, 0.1]
    previous = np.inf
    for floor in (0.0, 0.1, 1.0, 10.0, 100.0):
        S = _pair_scatter(X, floor=floor)
        np.testing.assert_array_equal(S, S.T)
        assert np.linalg.eigvalsh(S).min() >= -1e-12
        assert np.trace(S) <= 1 + 1e-12
        assert np.trace(S) <= previous + 1e-12  # a higher floor shrinks every term
        previous = np.trace(S)


# ---------------------------------------------------------------- design and inputs
def test_design_is_drawn_once_from_the_generator():
    X = np.random.default_rng(25).standard_normal((200, 3))
    rng = np.random.default_rng(5)
    S = _pair_scatter(X, floor=1.0, pairs=8, random_state=rng)
    reference = np.random.default_rng(5)
    design = _pair_design(200, 8, reference)
    assert rng.integers(2**62) == reference.integers(2**62)  # same stream position
    assert_relative(S, direct_pair_scatter(X, 1.0, design.pairs()))
    # all pairs (also m >= n - 1) draw nothing, like spherical_kendall
    rng = np.random.default_rng(6)
    _pair_scatter(X, floor=1.0, pairs=500, random_state=rng)
    assert rng.integers(2**62) == np.random.default_rng(6).integers(2**62)


def test_reproducible_and_independent_of_n_jobs():
    X = np.random.default_rng(26).standard_normal((9000, 4))
    a = _pair_scatter(X, floor=2.0, pairs=10, random_state=3)
    np.testing.assert_array_equal(
        a, _pair_scatter(X, floor=2.0, pairs=10, random_state=3, n_jobs=2))
    b = _pair_scatter(X[:1500], floor=2.0)
    np.testing.assert_array_equal(b, _pair_scatter(X[:1500], floor=2.0, n_jobs=-1))


def test_float32_list_and_read_only_input():
    X = np.random.default_rng(27).standard_normal((80, 3)).astype(np.float32)
    expected = direct_pair_scatter(X.astype(np.float64), 0.5)
    assert_relative(_pair_scatter(X, floor=0.5), expected)
    assert_relative(_pair_scatter(X.tolist(), floor=0.5), expected)
    X.setflags(write=False)
    assert_relative(_pair_scatter(X, floor=np.float32(0.5)), expected)


@pytest.mark.parametrize("floor, error", [
    (-1.0, ValueError), (-1e-300, ValueError), (np.nan, ValueError),
    (np.inf, ValueError), (-np.inf, ValueError), ("1.0", TypeError),
    (None, TypeError), (True, TypeError), (1 + 0j, TypeError),
])
def test_invalid_floor(floor, error):
    X = np.random.default_rng(28).standard_normal((10, 2))
    with pytest.raises(error, match="floor"):
        _pair_scatter(X, floor=floor)


def test_floor_is_keyword_only_and_required():
    X = np.random.default_rng(29).standard_normal((10, 2))
    with pytest.raises(TypeError):
        _pair_scatter(X, 1.0)
    with pytest.raises(TypeError):
        _pair_scatter(X)


# ------------------------------------------------------------------------- progress
@pytest.mark.parametrize("kwargs", [{}, {"n_jobs": 2}, {"pairs": 10, "random_state": 0},
                                    {"pairs": 7, "random_state": 0, "n_jobs": 2}])
def test_progress_reports_every_task(kwargs):
    X = np.random.default_rng(30).standard_normal((6000, 3))
    calls = []
    result = spherical_kendall(X, progress=lambda done, total: calls.append((done, total)),
                               **kwargs)
    np.testing.assert_array_equal(result, spherical_kendall(X, **kwargs))
    n_pairs = 6000 * 5999 // 2 if "pairs" not in kwargs else 6000 * kwargs["pairs"] // 2
    assert len(calls) > 1
    assert all(total == n_pairs for _, total in calls)
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[0] > 0 and done[-1] == n_pairs
    calls.clear()
    _pair_scatter(X, floor=1.0, progress=lambda *args: calls.append(args), **kwargs)
    assert calls[-1] == (n_pairs, n_pairs)


def test_progress_pair_counts_with_partial_blocks(monkeypatch):
    from sklearn_dppca import _kendall

    monkeypatch.setattr(_kendall, "_BLOCK_SIZE", 7)
    monkeypatch.setattr(_kendall, "_RUN_LENGTH", 3)
    calls = []
    spherical_kendall(np.random.default_rng(31).standard_normal((100, 2)),
                      progress=lambda *args: calls.append(args))
    assert calls[-1] == (4950, 4950)


def test_progress_errors():
    X = np.random.default_rng(32).standard_normal((10, 2))
    with pytest.raises(TypeError, match="progress"):
        spherical_kendall(X, progress="yes")

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _pair_scatter(X, floor=1.0, progress=stop)


# ------------------------------------------------------- the DP scree's clipped scatter
@pytest.mark.parametrize("pairs", ["all", 10, 7, 199])
def test_norm_clipped_scatter_matches_direct_loop(pairs):
    rng = np.random.default_rng(33)
    X = rng.standard_t(2, size=(200, 4)) * [3.0, 1.0, 0.3, 0.1] + 20.0
    X[5] = X[6]
    for bound in (0.05, 1.0, 20.0, 1e6):
        M = _norm_clipped_scatter(one_block(X, 7), bound, pairs, "s")
        if pairs == "all" or pairs >= 199:
            design_pairs = None
        else:
            # the fit's design of one block: seeded by the root 7, the name, block 0
            design_pairs = _pair_design(200, pairs, _block_generator(7, "s", 0)).pairs()
        assert_relative(M, direct_clipped_scatter(X, bound, design_pairs))
        assert_relative(M, ring_offset_scatter(X, bound, pairs,
                                               _block_generator(7, "s", 0)))


def _clipped_gap(X, X_prime, V, bound, pairs, seed):
    def statistic(data):
        M = _norm_clipped_scatter(one_block(data, seed), bound, pairs, "s")
        return np.einsum("lj,jk,lk->l", V, M, V)

    return np.linalg.norm(statistic(X) - statistic(X_prime))


@pytest.mark.parametrize("pairs", ["all", 8, 5])
def test_norm_clipped_sensitivityadversarial_neighbours(pairs):
    # n - 1 rows near 0, one row far along e1 against far along e2: the replaced
    # row's terms move from (C, 0, ...) to (0, C, ...), nearly 2 sqrt(2) C / n.
    n, p, bound = 200, 4, 1.5
    rng = np.random.default_rng(35)
    X = 1e-6 * rng.standard_normal((n, p))
    X_prime = X.copy()
    X[-1] = 1e3 * np.eye(p)[0]
    X_prime[-1] = 1e3 * np.eye(p)[1]
    limit = 2 * math.sqrt(2) * bound / n
    for V in (np.eye(p)[:2], np.eye(p), np.eye(p)[[1, 0, 3]]):
        gap = _clipped_gap(X, X_prime, V, bound, pairs, seed=9)
        assert 0.999 * limit < gap <= limit * (1 + 1e-12)
    # a random orthonormal V sees no more
    Q = np.linalg.qr(rng.standard_normal((p, p)))[0]
    assert _clipped_gap(X, X_prime, Q[:, :3].T, bound, pairs, seed=9) <= limit * (1 + 1e-12)


@pytest.mark.parametrize("pairs", ["all", 6])
def test_norm_clipped_sensitivity_random_neighbours(pairs):
    rng = np.random.default_rng(36)
    n, p = 60, 5
    for trial in range(20):
        X = rng.standard_cauchy((n, p))
        X_prime = X.copy()
        X_prime[rng.integers(n)] = 10 * rng.standard_cauchy(p)
        V = np.linalg.qr(rng.standard_normal((p, p)))[0][:, :rng.integers(1, p + 1)].T
        bound = float(rng.choice([0.1, 1.0, 10.0]))
        gap = _clipped_gap(X, X_prime, V, bound, pairs, seed=trial)
        assert gap <= 2 * math.sqrt(2) * bound / n * (1 + 1e-12)


# ---------------------------------------- the estimator's pre-noise matrix, pairs=m
@pytest.mark.parametrize("m", [8, 5, 64])
def test_directions_pairs_m_sensitivity_at_the_estimator(m):
    # DPKendallDirections draws the design, then the noise, from one generator: with
    # the same seed on neighbouring data the noise cancels, and the released matrices
    # differ as the pre-noise matrices spherical_kendall(X, pairs=m,
    # random_state=seed) do (up to the rounding to the release's grid), by at most
    # the 2 sqrt(2) / n the noise is calibrated to.
    X, X_prime = adversarial_neighbours(seed=37)
    n = X.shape[0]
    seed = 11
    kernel_gap = (spherical_kendall(X, pairs=m, random_state=seed)
                  - spherical_kendall(X_prime, pairs=m, random_state=seed))
    assert 2.8 / n < np.linalg.norm(kernel_gap) <= 2 * math.sqrt(2) / n + 1e-12
    fitted = [DPKendallDirections(pairs=m, eps=1.0, random_state=seed).fit(data)
              for data in (X, X_prime)]
    released_gap = fitted[0].kendall_matrix_ - fitted[1].kendall_matrix_
    (loading,) = [entry for entry in fitted[0].privacy_ledger_ if entry["step"] == "loading"]
    assert np.max(np.abs(released_gap - kernel_gap)) <= loading["grid"]
    assert np.linalg.norm(released_gap) <= (2 * math.sqrt(2) / n
                                            + math.sqrt(6) * loading["grid"])
    sensitivities = [entry["sensitivity"] for entry in fitted[0].privacy_ledger_
                     if entry["step"] == "loading"]
    assert sensitivities == [pytest.approx(2 * math.sqrt(2) / n)]


# ------------------------------------- the m-partner kernel: Laplacian + exact path
def fsum_clipped_shares(X, floor, pairs):
    """Slowest reference of the total riding on a design pass: the correctly
    rounded sum of ``min(||d||^2 / floor, 1)`` over the pairs, each ratio from
    the exact difference divided by its largest coordinate."""
    X = np.asarray(X, dtype=np.float64)
    shares = []
    with np.errstate(over="ignore", under="ignore"):
        for i, j in pairs:
            d, scale = X[i] - X[j], 1.0
            if not np.all(np.isfinite(d)):
                d, scale = 0.5 * X[i] - 0.5 * X[j], 2.0
            largest = np.max(np.abs(d))
            if largest == 0:
                continue
            e = d / largest
            # ||d||^2 / floor = (e . e) (largest * scale)^2 / floor, in steps that
            # neither overflow nor underflow where the ratio is near 1
            ratio = float(e @ e) * ((largest * scale) / math.sqrt(floor)) ** 2
            shares.append(min(ratio, 1.0))
    return math.fsum(shares)


def fsum_design_scatter(X, floor, pairs):
    """Slowest reference: every entry of ``sum_pairs d d^T / max(||d||^2, floor)`` as
    one correctly rounded sum (``math.fsum``) of the per-pair terms, each term from
    the exact difference divided by its largest coordinate (no over- or underflow).
    Also returns the number of coincident pairs."""
    X = np.asarray(X, dtype=np.float64)
    p = X.shape[1]
    terms = [[[] for _ in range(p)] for _ in range(p)]
    n_coincident = 0
    with np.errstate(over="ignore", under="ignore"):
        for i, j in pairs:
            d = X[i] - X[j]
            floor_here = floor
            if not np.all(np.isfinite(d)):
                d, floor_here = 0.5 * X[i] - 0.5 * X[j], floor / 4
            largest = np.max(np.abs(d))
            if largest == 0:
                n_coincident += 1
                continue
            e = d / largest
            weight = 1.0 / max(float(e @ e), floor_here / largest / largest)
            for k in range(p):
                for m in range(p):
                    terms[k][m].append(e[k] * e[m] * weight)
    total = np.array([[math.fsum(terms[k][m]) for m in range(p)] for k in range(p)])
    return total, n_coincident


def _hard_design_data(kind, n, p, rng):
    if kind == "near_duplicates_far_out":  # three tight clusters
        centres = rng.standard_normal((3, p)) + 1e6
        X = centres[rng.integers(3, size=n)] + 1e-7 * rng.standard_normal((n, p))
    elif kind == "rows_1e300":
        X = rng.standard_normal((n, p)) * 1e300
        X[::5] *= 1.7
    elif kind == "mixed_scales":
        X = rng.standard_normal((n, p)) * np.logspace(-8, 8, p) + 1e3
    elif kind == "exact_duplicates":
        X = rng.standard_normal((n, p)) + 50.0
        X[1::3] = X[::3][: len(X[1::3])]
        X[2::3] = X[::3][: len(X[2::3])]
    else:  # rows in the underflow range, next to ordinary ones
        X = rng.standard_normal((n, p))
        X[::2] *= 1e-310
    return X


HARD_KINDS = ["near_duplicates_far_out", "rows_1e300", "mixed_scales",
              "exact_duplicates", "underflow_rows"]


@pytest.mark.parametrize("kind", HARD_KINDS)
@pytest.mark.parametrize("n, p, m", [(61, 1, 6), (60, 1, 5), (41, 50, 4),
                                     (40, 50, 3), (300, 3, 17)])
def test_pairs_m_kernel_matches_fsum_reference(kind, n, p, m):
    # The Laplacian kernel against correctly rounded sums of the per-pair terms, on
    # inputs where many pairs need the exact path (and some do not).
    if m % 2 == 1 and n % 2 == 1:
        n += 1
    rng = np.random.default_rng(n * 100 + p + m)
    X = _hard_design_data(kind, n, p, rng)
    design = _pair_design(n, m, np.random.default_rng(3))
    typical = typical_squared_distance(X)
    for floor in (0.0, typical):
        expected, n_coincident = fsum_design_scatter(X, floor, design.pairs())
        # the clipped total riding on the pass, at floors below, at and above
        # the typical squared distance
        for trace_floor in (typical / 100, typical, min(typical * 100, 1e300)):
            total, n_terms, coincident, share = _kendall._design_sum(
                X, design, floor, None, None, trace_floor)
            assert n_terms == len(design.pairs())
            assert coincident == n_coincident
            assert_relative(total, expected, tol=1e-14)
            assert share == pytest.approx(
                fsum_clipped_shares(X, trace_floor, design.pairs()), rel=1e-13)


def _laplacian_only(monkeypatch):
    """Send no pair to the exact path: what a kernel without the fallback computes."""
    from sklearn_dppca import _kendall_kernel

    monkeypatch.setattr(_kendall_kernel, "GRAM_RELATIVE_FLOOR", -2.0)
    monkeypatch.setattr(_kendall_kernel, "GRAM_ABSOLUTE_FLOOR", -1.0)


def test_pairs_m_exact_fallback_is_needed_and_used(monkeypatch):
    # Near-duplicate pairs far from the origin: the Gram-form distances of those
    # pairs are pure rounding, so the Laplacian sum alone is far off; the kernel's
    # exact path puts it back to the correctly rounded value. (Before the Laplacian
    # kernel the design path had no Gram form at all, and the first check failed;
    # rows of at most DPPCA_NARROW = 4 coordinates have none either: 5 here.)
    rng = np.random.default_rng(31)
    X = _hard_design_data("near_duplicates_far_out", 400, 5, rng)
    design = _pair_design(400, 6, np.random.default_rng(4))
    expected, _ = fsum_design_scatter(X, 0.0, design.pairs())
    with monkeypatch.context() as patch:
        _laplacian_only(patch)
        without = _kendall._design_sum(X, design, 0.0, None, None)[0]
    assert np.max(np.abs(without - expected)) > 1e-10 * np.max(np.abs(expected))
    assert_relative(_kendall._design_sum(X, design, 0.0, None, None)[0], expected,
                    tol=1e-14)


@pytest.mark.parametrize("n, m", [(5000, 64), (4001, 10), (3000, 7)])
def test_pairs_m_kernel_matches_the_direct_loop_kernel(n, m):
    # Larger inputs (several tasks, blocks, offset chunks, wrap-around and antipodal
    # partners) against the direct per-pair loop that the kernel replaced; the
    # coincident pairs are reported alike.
    from sklearn_dppca._kendall_kernel import _design_partial_direct

    rng = np.random.default_rng(n + m)
    X = rng.standard_normal((n, 8)) * np.logspace(-2, 2, 8) + 1e4
    X[10:40] = X[40:70] + 1e-9
    X[100:130] = X[200:230]
    if m % 2 == 1 and n % 2 == 1:
        n, X = n - 1, X[:-1]
    design = _pair_design(n, m, np.random.default_rng(5))
    for floor in (0.0, 1.0):
        mantissa, exponent = math.frexp(floor)
        direct, n_coincident = _design_partial_direct(
            np.ascontiguousarray(X[design.order]), design.order, design.offsets,
            design.half_offset, 0, n, mantissa, exponent)
        total, _, coincident, _ = _kendall._design_sum(X, design, floor, 2, None)
        assert_relative(total, direct, tol=1e-14)
        assert coincident == n_coincident


@pytest.mark.parametrize("m", [16, 64, 80])
def test_pairs_m_window_and_band_loops_agree_with_the_direct_loop(m):
    # The design's offsets 1 ... m/2 take the window loop (on AVX-512 CPUs, for
    # m/2 <= 32); the same offsets in another order take the band loops. Both sum
    # the same pairs, hard ones included (near duplicates far out, coincident rows),
    # and must agree with the direct per-pair loop.
    from sklearn_dppca._kendall_kernel import _design_partial_direct, design_partial

    n, p = 3000, 12
    rng = np.random.default_rng(m)
    X = rng.standard_normal((n, p)) * np.logspace(-3, 3, p) + 1e5
    design = _pair_design(n, m, np.random.default_rng(6))
    ring = design.order
    X[ring[10:60]] = X[ring[13:63]] + 1e-7        # near duplicates 3 apart
    X[ring[2995:3000]] = X[ring[2:7]]             # coincident 7 apart, across the wrap
    centre = _kendall._ring_centre(X, design.order)
    direct, n_direct = _design_partial_direct(
        np.ascontiguousarray(X[design.order]), design.order, design.offsets, 0, 0, n)
    for offsets in (design.offsets, np.ascontiguousarray(design.offsets[::-1])):
        total = np.zeros((p, p))
        n_coincident = 0
        for start, stop in ((0, 1000), (1000, 2997), (2997, n)):
            part, count, _ = design_partial(X, design.order, offsets, 0, start, stop,
                                         centre)
            total += part
            n_coincident += count
        assert_relative(total, direct, tol=1e-14)
        assert n_coincident == n_direct > 0


def test_max_abs_is_the_largest_magnitude():
    rng = np.random.default_rng(3)
    for shape in [(0, 3), (1, 1), (5, 3), (7, 19)]:
        X = rng.standard_normal(shape)
        if X.size:
            X.flat[rng.integers(X.size)] = -50.0
        expected = float(np.max(np.abs(X))) if X.size else 0.0
        assert _kendall_kernel.max_abs(X) == expected


ROUTES = ["avx512", "avx2", "portable", "plain"]


def _cpu_flags():
    """The CPU's flags from /proc/cpuinfo (Linux), or None elsewhere."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


@pytest.fixture
def kernel_route():
    """Switch the design kernel to a route for one test; skip when this CPU (or
    build) cannot run it; put back the route in use before."""
    switched = []

    def use(route):
        if route not in _kendall_kernel.available_routes():
            pytest.skip(f"this CPU or build cannot run the {route} kernel "
                        f"(it runs {_kendall_kernel.available_routes()})")
        switched.append(_kendall_kernel._set_route(route))
        assert _kendall_kernel.current_route() == route

    yield use
    for previous in switched[:1]:
        _kendall_kernel._set_route(previous)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("m", [64, 65])
@pytest.mark.parametrize("p", [11, 2])
def test_pairs_m_each_route_agrees_with_the_direct_loop(route, m, p, kernel_route):
    # Each route of the design kernel (AVX-512 window loop and hand-written
    # accumulation; AVX2 band loops; the baseline vectors of builds without x86
    # dispatch; the plain loops of compilers without vector extensions) against the
    # direct per-pair loop, on the hard rows of the test above: a CPU runs one route
    # by default, the others only when forced, so each is forced here in turn.
    from sklearn_dppca._kendall_kernel import _design_partial_direct

    # (p = 2: the narrow loop, from the pairs' differences; 11: the Gram form)
    n = 2000
    rng = np.random.default_rng(m)
    X = rng.standard_normal((n, p)) * np.logspace(-3, 3, p) + 1e5
    design = _pair_design(n, m, np.random.default_rng(7))
    ring = design.order
    X[ring[10:60]] = X[ring[13:63]] + 1e-7
    X[ring[1995:2000]] = X[ring[2:7]]
    kernel_route(route)
    pairs = design.pairs()
    with np.errstate(under="ignore"):
        squared = np.sum((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2, axis=1)
    typical = float(np.median(squared))
    for floor, trace_floor in ((0.0, typical), (1.0, typical / 100)):
        direct, n_direct = _design_partial_direct(
            np.ascontiguousarray(X[ring]), ring, design.offsets, design.half_offset,
            0, n, *math.frexp(floor))
        total, _, n_coincident, share = _kendall._design_sum(X, design, floor, 1, None,
                                                             trace_floor)
        assert_relative(total, direct, tol=1e-14)
        assert n_coincident == n_direct > 0
        # the clipped total riding on the pass, the same on every route (the
        # plain loops add 64,000 terms in one running sum: n eps at worst)
        assert share == pytest.approx(
            math.fsum(np.minimum(squared / trace_floor, 1.0)), rel=1e-11)
    assert _kendall_kernel.current_route() == route


def test_kernel_routes_follow_the_cpu():
    # The kernel's own detection against /proc/cpuinfo: a route is offered exactly
    # when the CPU has its instructions (x86 Linux; elsewhere only what is always
    # there is checked).
    available = _kendall_kernel.available_routes()
    assert {"portable", "plain"} <= set(available)
    assert _kendall_kernel.current_route() in available
    flags = _cpu_flags()
    if flags is None or platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("no /proc/cpuinfo x86 flags to compare with")
    assert ("avx512" in available) == ({"avx512f", "avx512dq", "avx512vl"} <= flags)
    assert ("avx2" in available) == ({"avx2", "fma"} <= flags)


def _import_kernel_with(value):
    env = dict(os.environ, SKLEARN_DPPCA_KERNEL=value)
    return subprocess.run(
        [sys.executable, "-c", "from sklearn_dppca import _kendall_kernel as k; "
         "print(k.current_route(), k.KERNEL_LANES, ' '.join(k.available_routes()))"],
        env=env, capture_output=True, text=True, timeout=HANG_GUARD)


def test_kernel_route_is_forced_by_the_environment():
    # SKLEARN_DPPCA_KERNEL, read at import: a route this CPU runs is taken; "auto"
    # takes the widest; a misspelt or unavailable route is an error naming the
    # choices, never a silent fallback.
    done = _import_kernel_with("portable")
    assert done.returncode == 0, done.stderr[-2000:]
    route, lanes, available = done.stdout.split(maxsplit=2)
    assert (route, available.split()) == ("portable",
                                          _kendall_kernel.available_routes())
    assert int(lanes) in (1, 4)
    done = _import_kernel_with(" AUTO ")
    assert done.stdout.split()[0] == _kendall_kernel.available_routes()[0]
    done = _import_kernel_with("avx1024")
    assert done.returncode != 0
    assert "SKLEARN_DPPCA_KERNEL must be one of auto, avx512, avx2" in done.stderr
    missing = [r for r in ROUTES if r not in _kendall_kernel.available_routes()]
    if missing:
        done = _import_kernel_with(missing[0])
        assert done.returncode != 0 and "cannot run" in done.stderr


@pytest.mark.parametrize("change, message", [
    ({"order": lambda o: np.where(o == 5, 50, o)}, "order\\[.*\\] = 50"),
    ({"order": lambda o: np.where(o == 5, -1, o)}, "order\\[.*\\] = -1"),
    ({"order": lambda o: o[:-1]}, "one entry per row"),
    ({"offsets": lambda o: np.append(o, 40)}, "offsets\\[3\\] = 40"),
    ({"offsets": lambda o: np.append(o, 0)}, "offsets\\[3\\] = 0"),
    ({"offsets": lambda o: -o}, "offsets\\[0\\] = -1"),
    ({"start": -1}, "0 <= start <= stop"),
    ({"stop": 41}, "0 <= start <= stop"),
    ({"start": 30, "stop": 20}, "0 <= start <= stop"),
    ({"half_offset": 21}, "half_offset"),
    ({"centre": np.zeros(2)}, "centre must have 3"),
])
def test_design_kernels_refuse_out_of_range_indices(change, message):
    # The C loops trust their indices: the wrappers check them (a ValueError, not a
    # read out of bounds), for the kernel and for its direct reference alike.
    from sklearn_dppca._kendall_kernel import _design_partial_direct, design_partial

    n = 40
    X = np.random.default_rng(0).standard_normal((n, 3))
    args = {"order": np.arange(n, dtype=np.intp),
            "offsets": np.arange(1, 4, dtype=np.intp), "half_offset": 0,
            "start": 0, "stop": n, "centre": np.zeros(3)}
    for key, value in change.items():
        args[key] = value(args[key]) if callable(value) else value
    for key in ("order", "offsets"):
        args[key] = np.ascontiguousarray(args[key], dtype=np.intp)
    with pytest.raises(ValueError, match=message):
        design_partial(X, args["order"], args["offsets"], args["half_offset"],
                       args["start"], args["stop"], args["centre"])
    if "centre" not in change:
        with pytest.raises(ValueError, match=message):
            _design_partial_direct(X, args["order"], args["offsets"],
                                   args["half_offset"], args["start"], args["stop"])


@pytest.mark.parametrize("change, message", [
    ({"runs": [[0, 0, 3]]}, "runs\\[0\\]"),
    ({"runs": [[1, 0, 2]]}, "runs\\[0\\]"),
    ({"runs": [[-1, 0, 1]]}, "runs\\[0\\]"),
    ({"runs": [[0, 0]]}, "3 columns"),
    ({"block_starts": [0, 30, 20]}, "non-decreasing"),
    ({"block_starts": [0, 10, 41]}, "non-decreasing"),
    ({"centres": np.zeros((1, 3))}, "runs\\[0\\]"),
    ({"X_scaled": np.zeros((40, 2))}, "X_scaled"),
])
def test_all_pairs_kernel_refuses_out_of_range_indices(change, message):
    from sklearn_dppca._kendall_kernel import all_pairs_partial

    X = np.random.default_rng(0).standard_normal((40, 3))
    args = {"X_scaled": X / 4, "centres": np.zeros((2, 3)),
            "block_starts": [0, 20, 40], "runs": [[1, 1, 2]]}
    args.update(change)
    call = (X, np.ascontiguousarray(args["X_scaled"]),
            np.ascontiguousarray(args["centres"]),
            np.asarray(args["block_starts"], dtype=np.intp),
            np.asarray(args["runs"], dtype=np.intp).reshape(len(args["runs"]), -1))
    with pytest.raises(ValueError, match=message):
        all_pairs_partial(*call)


@pytest.mark.parametrize("m", [8, 9])
def test_design_kernel_checks_the_ring_entries_it_reads(m):
    # A task checks the ring positions it reads (its owners, their partners up to
    # the farthest offset, the antipodes when m is odd), not the whole ring: a
    # bad entry there is refused with its position, one outside is never read.
    from sklearn_dppca._kendall_kernel import design_partial

    n, p = 400, 3
    X = np.random.default_rng(0).standard_normal((n, p))
    design = _pair_design(n, m, np.random.default_rng(1))
    centre = np.zeros(p)
    start, stop = 100, 150
    reference, *_ = design_partial(X, design.order, design.offsets, design.half_offset,
                                  start, stop, centre)
    read = [stop + m // 2 - 1] + ([start + n // 2] if m % 2 else [])
    for position in read:
        order = design.order.copy()
        order[position] = n
        with pytest.raises(ValueError, match=rf"order\[{position}\] = {n} is not"):
            design_partial(X, order, design.offsets, design.half_offset, start, stop,
                           centre)
    order = design.order.copy()
    order[start - 1] = n      # before the task's window: never read
    total, *_ = design_partial(X, order, design.offsets, design.half_offset, start,
                              stop, centre)
    np.testing.assert_array_equal(total, reference)


# ------------------------------------------------- the ring's clipped squares, 1-D

@pytest.mark.parametrize("n, m", [(9, 2), (10, 3), (257, 8), (1000, 64)])
def test_ring_clipped_sum_matches_the_pairs_of_the_design(n, m):
    # the compiled loop against a direct fsum over the design's own pairs (each
    # pair once), on the ring order: every term min(d^2, floor), a third of them
    # at the floor
    rng = np.random.default_rng(n + m)
    values = rng.standard_normal(n) * 3.0
    design = _pair_design(n, m, np.random.default_rng(0))
    ring = np.ascontiguousarray(values[design.order])
    floor = float(np.quantile(np.subtract.outer(values, values)**2, 0.66))
    offsets = np.ascontiguousarray(design.offsets, dtype=np.intp)
    pairs = [(t, (t + o) % n) for o in offsets for t in range(n)]
    pairs += [(t, t + design.half_offset) for t in range(design.half_offset)]
    assert len(pairs) == n * m // 2
    direct = math.fsum(min((ring[a] - ring[b])**2, floor) for a, b in pairs)
    computed = _kendall_kernel.ring_clipped_sum(ring, offsets, design.half_offset, floor)
    assert computed == pytest.approx(direct, rel=len(pairs) * 2.0**-52)
    # an overflowed square counts the floor, as NumPy's minimum of inf does
    huge = np.array([DBL_MAX, -DBL_MAX, 0.0, 1.0])
    assert _kendall_kernel.ring_clipped_sum(huge, np.array([1], dtype=np.intp), 0,
                                            2.0) == 2.0 + 2.0 + 1.0 + 2.0


@pytest.mark.parametrize("offsets, half, floor, message", [
    ([0], 0, 1.0, "offsets must lie"), ([5], 0, 1.0, "offsets must lie"),
    ([1], 3, 1.0, "half_offset"), ([1], 0, 0.0, "floor must be positive"),
    ([1], 0, float("nan"), "floor must be positive")])
def test_ring_clipped_sum_refuses_out_of_range_indices(offsets, half, floor, message):
    with pytest.raises(ValueError, match=message):
        _kendall_kernel.ring_clipped_sum(np.arange(5.0), np.array(offsets, dtype=np.intp),
                                         half, floor)


def test_column_max_abs_is_numpys_with_nan_kept():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1001, 7)) * 10.0**rng.uniform(-300, 300, 7)
    np.testing.assert_array_equal(_kendall_kernel.column_max_abs(X), np.abs(X).max(axis=0))
    X[500, 2], X[0, 4], X[3, 5] = np.nan, np.nan, -np.inf
    X[900, 4] = 1e308         # a larger value after the NaN keeps the NaN
    got = _kendall_kernel.column_max_abs(X)
    assert np.isnan(got[2]) and np.isnan(got[4]) and got[5] == np.inf
    np.testing.assert_array_equal(got[[0, 1, 3, 6]], np.abs(X).max(axis=0)[[0, 1, 3, 6]])
    np.testing.assert_array_equal(_kendall_kernel.column_max_abs(np.empty((0, 3))),
                                  np.zeros(3))


def test_matched_squared_distances_are_the_pairs_squared_norms():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((501, 9)) * 10.0**rng.uniform(-100, 100, 9)
    first, second = rng.permutation(501)[:250], rng.permutation(501)[:250]
    got = _kendall_kernel.matched_squared_distances(X, first.astype(np.intp),
                                                    second.astype(np.intp))
    direct = np.array([math.fsum((X[a] - X[b])**2) for a, b in zip(first, second)])
    np.testing.assert_allclose(got, direct, rtol=12 * 2.0**-53, atol=0)
    with pytest.raises(ValueError, match="pair indices"):
        _kendall_kernel.matched_squared_distances(X, np.array([501], dtype=np.intp),
                                                  np.array([0], dtype=np.intp))
    with pytest.raises(ValueError, match="same length"):
        _kendall_kernel.matched_squared_distances(X, np.array([1, 2], dtype=np.intp),
                                                  np.array([0], dtype=np.intp))
