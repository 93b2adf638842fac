"""The rows of a fit (``sklearn_dppca._data._rows``): narrow views kept across
passes are the views a pass would compute."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dppca import DPPCA
from sklearn_dppca._data import _rows, _statistics


def _fit(X, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # score axes (1, 0): a view of the same width as the scree's, not the same
        return DPPCA(n_components=2, eps=4.0, random_state=5, axes=(1, 0),
                     **params).fit(X)


def _counting_views(monkeypatch):
    computed = []
    original = _statistics.view_rows

    def counted(block, view):
        rows = original(block, view)
        computed.append(rows.shape)
        return rows

    monkeypatch.setattr(_statistics, "view_rows", counted)
    return computed


def test_a_kept_view_is_computed_once_and_releases_the_same(monkeypatch):
    X = np.random.default_rng(0).standard_normal((3000, 6)) * np.arange(6, 0, -1)
    computed = _counting_views(monkeypatch)
    kept = _fit(X, row_blocks=[1500, 1500])
    narrow_kept = sum(width <= _rows._KEPT_VIEW_COLUMNS and width < 6
                      for _, width in computed)
    computed.clear()
    monkeypatch.setattr(_rows, "_KEPT_VIEW_COLUMNS", 0)
    every = _fit(X, row_blocks=[1500, 1500])
    narrow_every = sum(width < 6 for _, width in computed)
    # the score axes' view is read by the frame's searches and the histogram,
    # pass after pass: once per block when kept
    assert narrow_every > narrow_kept >= 2
    for name in ("components_", "explained_variance_", "score_histogram_",
                 "synthetic_scores_"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(every, name))
    for key, value in kept.frame_.items():
        np.testing.assert_array_equal(value, every.frame_[key])


# ------------------------------------------ a total riding on the Kendall pass

def _ridden(X, sizes, floor, pairs=16, ride_first=True):
    rows = _rows.Rows(np.ascontiguousarray(X, dtype=float), sizes, root=3)
    if not ride_first:          # the sum asked ahead, then the ride: too late
        rows._pair_sum_ahead(0.0, pairs, _statistics.KENDALL_MATRIX)
    rows.ride_on_pair_sum(_statistics.KENDALL_MATRIX, floor)
    rows.pair_sum(0.0, pairs, _statistics.KENDALL_MATRIX)
    return rows.ridden_mean(_statistics.KENDALL_MATRIX, floor)


def _design_clipped_mean(X, sizes, floor, pairs=16):
    """Slow reference: over each block's own design (its seed: the fit's root,
    the Kendall sum's name and the block), the correctly rounded mean of
    min(||d||^2 / floor, 1)."""
    from sklearn_dppca._kendall import _pair_design

    shares, starts = [], np.concatenate([[0], np.cumsum(sizes)])
    for index, (start, size) in enumerate(zip(starts, sizes)):
        block = X[start:start + size]
        design = _pair_design(size, pairs, _statistics._block_generator(
            3, _statistics.KENDALL_MATRIX, index))
        for i, j in design.pairs():
            shares.append(min(float(np.sum((block[i] - block[j]) ** 2)) / floor, 1.0))
    return math.fsum(shares) / len(shares)


def test_a_total_riding_on_the_kendall_pass_is_its_designs_clipped_mean():
    # the pairs of the Kendall sum's own designs (two blocks), each term
    # min(||d||^2 / F, 1): below, at and above the typical squared distance
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 5)) * [5.0, 3.0, 1.0, 1.0, 0.2] + 40.0
    X[:30] = X[30:60]                       # coincident pairs: zero terms
    for floor in (1.0, 20.0, 400.0):
        assert _ridden(X, (350, 250), floor) == pytest.approx(
            _design_clipped_mean(X, (350, 250), floor), rel=1e-13)
    # a sum asked before the ride ran without it: nothing ridden, the total
    # takes its own pass
    assert _ridden(X, (350, 250), 20.0, ride_first=False) is None


def test_one_row_moves_the_ridden_total_by_at_most_2_c_over_n():
    # C times the ridden mean is the total clipped at C: one replaced row is in
    # m of the n m / 2 pairs, each term in [0, C], so it moves by at most
    # 2 C / n; rows all at one point, then one far away, attain it exactly
    n, bound = 400, 2.5
    X = np.zeros((n, 3))
    moved = []
    for far in (np.full(3, 1e6), np.array([3.0, 0.0, 0.0]), np.array([0.5, 0.5, 0.5])):
        neighbour = X.copy()
        neighbour[17] = far
        moved.append(abs(bound * _ridden(neighbour, (n,), 2 * bound)
                         - bound * _ridden(X, (n,), 2 * bound)))
    assert max(moved) == pytest.approx(2 * bound / n, rel=1e-12)
    assert all(shift <= 2 * bound / n * (1 + 1e-12) for shift in moved)
    # a broken ride (the terms clipped at 4 C, released as if at C): the far
    # row moves it four times past 2 C / n
    far = X.copy()
    far[17] = 1e6
    broken = abs(4 * bound * _ridden(far, (n,), 8 * bound)
                 - 4 * bound * _ridden(X, (n,), 8 * bound))
    assert broken == pytest.approx(4 * (2 * bound / n), rel=1e-12)
