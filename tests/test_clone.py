"""Cloning a scree that reuses fitted directions: the clones share that release.

Fitted directions are passed frozen, ``directions=FrozenEstimator(fitted)``
(scikit-learn's convention for a fitted estimator as a parameter): scikit-learn's
own clone, get_params and set_params then keep them as released, with no code of
ours.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline

from sklearn_dppca import (
    DPKendallDirections,
    DPScree,
    InvalidParameterError,
    PrivacyAccountant,
    PrivacyRiskWarning,
    export_release,
    load_release,
)
from sklearn_dppca.datasets import make_gaussian_clusters


@pytest.fixture(scope="module")
def X():
    return make_gaussian_clusters(400, n_features=10, random_state=0)


@pytest.fixture(scope="module")
def directions(X):
    return DPKendallDirections(4, eps=0.5, random_state=0).fit(X)


def _scree(directions, **params):
    return DPScree(directions=FrozenEstimator(directions), eps=2.0, delta=1e-4, **params)


def _total_variance(estimator, X, y=None):
    return estimator.total_variance_


def _reused(scree):
    return scree.directions.estimator


def test_a_clone_reuses_the_same_fitted_directions(X, directions):
    components = directions.components_.copy()
    ledger = list(directions.privacy_ledger_)
    scree = _scree(directions, random_state=0)
    with pytest.warns(PrivacyRiskWarning, match="spends its"):
        twin = clone(scree)
    assert twin.directions is scree.directions and _reused(twin) is directions
    twin.fit(X)          # fitted, not refitted: its ledger is carried over
    assert twin.components_.shape == (4, 10)
    assert np.array_equal(twin.components_, components)
    assert np.array_equal(directions.components_, components)
    assert directions.privacy_ledger_ == ledger
    carried = [entry for entry in twin.privacy_ledger_
               if str(entry.get("step", "")).startswith("directions")]
    assert len(carried) == len(ledger)


def test_a_clone_with_an_accountant_shares_it_and_does_not_warn(X, directions):
    accountant = PrivacyAccountant(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyRiskWarning)
        twin = clone(_scree(directions, accountant=accountant))
    assert twin.accountant is accountant and _reused(twin) is directions


def test_other_directions_are_cloned_as_usual(X, directions):
    public = np.eye(10)[:3]
    with pytest.warns(PrivacyRiskWarning):
        twin = clone(DPScree(directions=public))
    assert twin.directions is not public and np.array_equal(twin.directions, public)
    with pytest.warns(PrivacyRiskWarning):
        assert clone(DPScree()).directions is None


def test_the_directions_parameters_are_not_parameters_of_the_scree(directions):
    scree = _scree(directions)
    deep = scree.get_params(deep=True)
    # the frozen estimator's one parameter is the fitted estimator, not its settings
    assert {key for key in deep if key.startswith("directions__")} == {"directions__estimator"}
    assert deep["directions__estimator"] is directions
    with pytest.raises(ValueError, match="frozen"):
        scree.set_params(directions__eps=5.0)
    assert directions.eps == 0.5
    assert scree.set_params(n_components=2).n_components == 2


def test_cross_validation_and_grid_search_reuse_the_directions(X, directions):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = cross_validate(_scree(directions, random_state=0), X, cv=2,
                                 scoring=_total_variance, return_estimator=True)
        search = GridSearchCV(_scree(directions, random_state=0),
                              {"n_components": [2, 3]}, scoring=_total_variance,
                              cv=2).fit(X)
        pipeline = clone(make_pipeline(_scree(directions, random_state=0)))
    assert all(_reused(fitted) is directions for fitted in results["estimator"])
    assert np.all(results["test_score"] > 0)
    assert _reused(search.best_estimator_) is directions
    assert search.best_estimator_.n_components_ in (2, 3)
    assert _reused(pipeline[0]) is directions


def test_a_bare_fitted_estimator_is_refused_before_any_charge(X, directions):
    # bare, a clone would get an unfitted copy that would have to be fitted (and
    # paid for) again: the error says how to pass it
    accountant = PrivacyAccountant(10.0, 1e-3)
    scree = DPScree(directions=directions, eps=2.0, delta=1e-4, accountant=accountant)
    with pytest.raises(InvalidParameterError,
                       match=r"directions is a DPKendallDirections given bare: .*"
                             r"FrozenEstimator\(fitted\)"):
        scree.fit(X)
    with pytest.raises(InvalidParameterError, match="given bare"):
        scree.plan(*X.shape)
    assert accountant.charges == [] and accountant.spent() == (0.0, 0.0)


def test_only_private_directions_can_be_frozen_in(X):
    # the directions of an ordinary PCA are not a release: no ledger to carry
    with pytest.raises(InvalidParameterError, match="FrozenEstimator of PCA"):
        DPScree(directions=FrozenEstimator(PCA(3).fit(X))).fit(X)


def test_a_frozen_loaded_release_is_reused_as_the_estimator_is(X, directions):
    # exact agreement: the release carries every number the reuse reads
    released = load_release(export_release(directions, allow_seeded=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = _scree(directions, random_state=3).fit(X)
        loaded = DPScree(directions=FrozenEstimator(released), eps=2.0, delta=1e-4,
                         random_state=3).fit(X)
    assert np.array_equal(fitted.components_, loaded.components_)
    assert np.array_equal(fitted.explained_variance_, loaded.explained_variance_,
                          equal_nan=True)
    assert fitted.privacy_ledger_ == loaded.privacy_ledger_
    assert np.isfinite(fitted.explained_variance_[:2]).all()
