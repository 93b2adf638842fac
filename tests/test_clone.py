"""Cloning a scree that reuses fitted directions: the clones share that release."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline

from sklearn_dppca import (
    DPKendallDirections,
    DPScree,
    PrivacyAccountant,
    PrivacyRiskWarning,
)
from sklearn_dppca.datasets import make_gaussian_clusters


@pytest.fixture(scope="module")
def X():
    return make_gaussian_clusters(400, n_features=10, random_state=0)


@pytest.fixture(scope="module")
def directions(X):
    return DPKendallDirections(4, eps=0.5, random_state=0).fit(X)


def _scree(directions, **params):
    return DPScree(directions=directions, eps=2.0, delta=1e-4, **params)


def _total_variance(estimator, X, y=None):
    return estimator.total_variance_


def test_a_clone_reuses_the_same_fitted_directions(X, directions):
    components = directions.components_.copy()
    ledger = list(directions.privacy_ledger_)
    with pytest.warns(PrivacyRiskWarning, match="spends its"):
        twin = clone(_scree(directions, random_state=0))
    assert twin.directions is directions
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
    assert twin.accountant is accountant and twin.directions is directions


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
    assert deep == scree.get_params(deep=False)
    assert deep["directions"] is directions
    assert not any(key.startswith("directions__") for key in deep)
    with pytest.raises(ValueError, match="directions__eps"):
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
    assert all(fitted.directions is directions for fitted in results["estimator"])
    assert np.all(results["test_score"] > 0)
    assert search.best_estimator_.directions is directions
    assert search.best_estimator_.n_components_ in (2, 3)
    assert pipeline[0].directions is directions
