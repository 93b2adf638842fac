"""Reliability of the three estimators: no input is modified, fitted estimators
pickle exactly, ``n_jobs=2`` equals a serial fit, and ``clone`` + refit reproduces.

Every check runs on DPKendallDirections, DPScree and DPPCA (with groups), with
NumPy float64, float32 and pandas (mixed dtypes, a dropped non-numeric column) input.
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree

GROUPS = ["g1", "g2", "g3"]


def _estimators():
    return {
        "directions": DPKendallDirections(n_components=3, compute_nonprivate=True,
                                          random_state=0),
        "scree": DPScree(random_state=0, compute_nonprivate=True),
        "scree huber whiten": DPScree(scree_method="huber", whiten=True, random_state=0),
        "dppca": DPPCA(n_components=3, groups=GROUPS, bins=6, compute_nonprivate=True,
                       random_state=0),
        "dppca sparse pmwm": DPPCA(histogram="sparse", scree_method="pmwm", bins=4,
                                   whiten=True, random_state=0),
    }


ESTIMATORS = sorted(_estimators())


def _numeric(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 4)) * [3.0, 2.0, 1.0, 0.5] + [5.0, 0.0, -2.0, 1e3]


def _inputs(n=300):
    X = _numeric(n)
    frame = pd.DataFrame({
        "a": X[:, 0],
        "label": pd.Categorical(np.resize(["u", "v"], n)),   # dropped with a warning
        "b": X[:, 1].astype(np.float32),
        "c": np.round(X[:, 2]).astype(np.int64),
        "d": X[:, 3],
    })
    return {"float64": X, "float32": X.astype(np.float32), "pandas": frame}


def _labels(n):
    return np.resize(np.array(GROUPS, dtype=object), n)


def _fit(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return estimator.fit(X, _labels(len(X)))


def _fitted_attributes(estimator):
    return {name: value for name, value in vars(estimator).items()
            if name.endswith("_") and not name.startswith("__")}


def assert_same(actual, expected, atol=0.0, path="estimator"):
    """Recursive equality of fitted attributes (arrays to ``atol``; NaN, a value
    not estimable, equals NaN)."""
    if hasattr(expected, "equals") and hasattr(expected, "columns"):   # the plan
        assert expected.equals(actual), path
    elif isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), path
        assert actual.shape == expected.shape and actual.dtype == expected.dtype, path
        if expected.dtype.kind in "fc":
            np.testing.assert_allclose(actual, expected, rtol=0, atol=atol, err_msg=path)
        else:
            np.testing.assert_array_equal(actual, expected, err_msg=path)
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), path
        for key in expected:
            assert_same(actual[key], expected[key], atol, f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected), path
        for index, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, atol, f"{path}[{index}]")
    elif isinstance(expected, (float, np.floating)) and not isinstance(expected, bool):
        if np.isnan(expected):
            assert np.isnan(actual), path
        else:
            assert abs(float(actual) - float(expected)) <= atol, path
    else:
        assert actual == expected, path


# ---------------------------------------------------------- inputs not modified

def _snapshot(X):
    if isinstance(X, pd.DataFrame):
        return X.copy(deep=True)
    return X.copy()


def _unchanged(X, snapshot):
    if isinstance(X, pd.DataFrame):
        pd.testing.assert_frame_equal(X, snapshot, check_exact=True)
    else:
        assert X.dtype == snapshot.dtype
        np.testing.assert_array_equal(X, snapshot)


@pytest.mark.parametrize("kind", ["float64", "float32", "pandas"])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_inputs_are_not_modified(name, kind):
    X = _inputs()[kind]
    y = _labels(len(X))
    X_before, y_before = _snapshot(X), y.copy()
    estimator = _estimators()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        estimator.fit(X, y)
        projection = estimator.transform(X)
        estimator.fit_transform(X, y)
    _unchanged(X, X_before)
    np.testing.assert_array_equal(y, y_before)
    if kind == "float32":
        assert projection.dtype == np.float32


@pytest.mark.parametrize("name", ESTIMATORS)
def test_read_only_input_works(name):
    X = _numeric()
    X.setflags(write=False)
    estimator = _fit(_estimators()[name], X)
    estimator.transform(X)
    assert not X.flags.writeable


# ---------------------------------------------------------------------- pickle

@pytest.mark.parametrize("kind", ["float64", "pandas"])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_pickle_round_trip_is_exact(name, kind):
    X = _inputs()[kind]
    estimator = _fit(_estimators()[name], X)
    restored = pickle.loads(pickle.dumps(estimator, protocol=pickle.HIGHEST_PROTOCOL))
    assert_same(_fitted_attributes(restored), _fitted_attributes(estimator))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        np.testing.assert_array_equal(restored.transform(X), estimator.transform(X))
    assert str(restored.summary()) == str(estimator.summary())
    assert restored.get_params().keys() == estimator.get_params().keys()


# -------------------------------------------------------------------- parallel

@pytest.mark.parametrize("name", ESTIMATORS)
def test_two_jobs_equal_serial_fit(name):
    # 700 rows: the all-pairs kernel splits into several blocks and tasks.
    X = _numeric(700, seed=1)
    serial = _fit(_estimators()[name].set_params(n_jobs=None), X)
    parallel = _fit(_estimators()[name].set_params(n_jobs=2), X)
    assert_same(_fitted_attributes(parallel), _fitted_attributes(serial), atol=1e-12)
    np.testing.assert_allclose(parallel.transform(X), serial.transform(X), rtol=0,
                               atol=1e-12 * np.max(np.abs(serial.transform(X))))


# ----------------------------------------------------------------------- clone

@pytest.mark.parametrize("name", ESTIMATORS)
def test_clone_and_refit_reproduces(name):
    X = _inputs()["pandas"]
    first = _fit(_estimators()[name], X)
    second = _fit(clone(first), X)
    assert_same(_fitted_attributes(second), _fitted_attributes(first))
    # and refitting the same object gives the same release again
    third = _fit(first, X)
    assert_same(_fitted_attributes(third), _fitted_attributes(second))


def test_clone_does_not_share_fitted_state():
    X = _numeric()
    fitted = _fit(_estimators()["dppca"], X)
    cloned = clone(fitted)
    assert not any(name.endswith("_") and not name.startswith("__")
                   for name in vars(cloned))
