"""``n_components`` as a float in (0, 1): the number of components is chosen from
the released private PVE, as post-processing of a fit with ``n_components=None``."""

import warnings

import numpy as np
import pytest

from sklearn_dppca import DPPCA, DPScree
from sklearn_dppca._algorithms._scree import feature_variances

PER_COMPONENT = ("explained_variance_", "explained_variance_raw_",
                 "explained_variance_ratio_", "noise_scale_")


#: The tests truncate released PVEs: a seed whose fits release them (10 seeds of
#: 12 do; at the others the total variance, or a PVE, is not estimable: NaN).
SEED = 1


def test_the_seed_releases_every_pve_the_tests_truncate():
    for estimator, params in CASES + [(DPPCA, {"axes": (0, 3)})]:
        every = _fit(estimator, None, **params)
        assert np.isfinite(every.total_variance_)
        assert np.all(np.isfinite(every.explained_variance_ratio_[:3]))


def _data():
    # a decaying spectrum: the cumulative PVE crosses 0.5, 0.8 and 0.9 at
    # different numbers of components
    rng = np.random.default_rng(3)
    return rng.normal(size=(3000, 6)) * [5.0, 3.0, 2.0, 1.0, 0.5, 0.3] + 40.0


def _fit(estimator, n_components, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator(n_components, eps=2.0, random_state=SEED, **params).fit(_data())


def _rule(ratio, threshold):
    """The smallest k with sum(ratio[:k]) >= threshold, else all (written here
    with a loop, independently of the package)."""
    total = 0.0
    for k, value in enumerate(ratio, start=1):
        total += value
        if total >= threshold:
            return k
    return len(ratio)


CASES = [
    (DPScree, {}),
    (DPScree, {"scree_params": {"clip": "component"}}),   # one clip bound each
    (DPScree, {"whiten": True, "scale": True}),
    (DPPCA, {}),
    (DPPCA, {"budget_split": {"loading": 0.5, "scree": 0.5}}),  # no score summary
]


@pytest.mark.parametrize("estimator, params", CASES,
                         ids=lambda value: getattr(value, "__name__", str(value)))
@pytest.mark.parametrize("threshold", [0.3, 0.8, 0.95])
def test_the_choice_truncates_the_scree_of_all_components(estimator, params, threshold):
    every = _fit(estimator, None, **params)
    chosen = _fit(estimator, threshold, **params)
    expected = _rule(every.explained_variance_ratio_, threshold)
    if estimator is DPPCA and "budget_split" not in params:
        expected = max(expected, 2)        # the score summary's two axes
    assert chosen.n_components_ == expected
    # nothing more is spent than by the release of all components
    assert chosen.privacy_ledger_ == every.privacy_ledger_
    assert chosen.privacy_spent_ == every.privacy_spent_
    assert np.array_equal(chosen.components_, every.components_[:expected])
    for name in PER_COMPONENT:
        assert np.array_equal(getattr(chosen, name), getattr(every, name)[:expected],
                              equal_nan=True), name
    assert chosen.total_variance_ == every.total_variance_
    bounds = every.clip_bounds_
    if bounds is not None and len(bounds) == every.n_components_:
        assert np.array_equal(chosen.clip_bounds_, bounds[:expected])
    elif bounds is not None:
        assert np.array_equal(chosen.clip_bounds_, bounds)
    implied = feature_variances(chosen.components_, chosen.explained_variance_,
                                chosen.noise_scale_, every.total_variance_,
                                every.total_variance_noise_scale_,
                                [f"x{j}" for j in range(6)])
    assert np.allclose(chosen.feature_variance_, implied[0], equal_nan=True)
    assert np.allclose(chosen.feature_variance_noise_scale_, implied[1], equal_nan=True)
    assert chosen.transform(_data()).shape == (3000, expected)
    if expected < every.n_components_ and "scale" not in params \
            and np.isfinite(every.explained_variance_[expected:]).any():
        # (after scaling the columns are near isotropic: the share the dropped
        # components leave spreads evenly, as they did)
        assert not np.allclose(chosen.feature_variance_, every.feature_variance_)


def test_the_thresholds_choose_different_numbers():
    # (so that the test above exercises more than one truncation)
    every = _fit(DPScree, None)
    chosen = {_rule(every.explained_variance_ratio_, t) for t in (0.3, 0.8, 0.95)}
    assert len(chosen) == 3


def test_dppca_keeps_the_score_axes_and_releases_the_same_summary():
    every = _fit(DPPCA, None, axes=(0, 3))
    chosen = _fit(DPPCA, 0.3, axes=(0, 3))
    assert _rule(every.explained_variance_ratio_, 0.3) < 4
    assert chosen.n_components_ == 4
    assert chosen.axes_ == (0, 3)
    assert np.array_equal(chosen.score_histogram_, every.score_histogram_)
    assert np.array_equal(chosen.synthetic_scores_, every.synthetic_scores_)


def test_dppca_without_a_score_share_may_keep_one_component():
    chosen = _fit(DPPCA, 0.3, budget_split={"loading": 0.5, "scree": 0.5})
    assert chosen.n_components_ == 1
    assert chosen.frame_ is None and chosen.score_histogram_ is None


@pytest.mark.parametrize("estimator", [DPScree, DPPCA])
@pytest.mark.parametrize("value", [0.0, 1.0, 1.5, -0.2])
def test_a_float_outside_the_open_unit_interval_is_refused(estimator, value):
    with pytest.raises(ValueError, match="n_components"):
        estimator(value).fit(_data())
