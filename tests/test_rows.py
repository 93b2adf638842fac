"""The rows of a fit (``sklearn_dppca._data._rows``): narrow views kept across
passes are the views a pass would compute."""

import warnings

import numpy as np

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
