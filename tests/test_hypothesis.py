"""Property-based tests: every entry point either succeeds or says what is wrong.

For generated inputs (shapes from 2 x 1 up to 60 x 8, values from 1e-300 to 1e300 of
both signs with subnormals and zeros, constant columns, identical and duplicated
rows, NaN and inf anywhere, int/bool/float32/object arrays, lists, pandas
DataFrames with mixed dtypes and categorical or string columns, SciPy sparse
matrices) and generated parameters, the outcome of ``spherical_kendall``,
``DPKendallDirections``, ``DPScree`` and ``DPPCA`` (fit, transform, summary) is always
either

* a result of the right shape in which every number (every fitted attribute, the
  ledger, the transform, the summary) is finite, or
* a ``ValueError`` / ``TypeError`` whose message names the problem, and only when
  the input really has that problem (predicted independently from the input),

never another exception and never a ``RuntimeWarning`` (all run under
``warnings.simplefilter("error", RuntimeWarning)``).

Data domain: every estimator accepts ``max |X| <= 2**500`` (about 3.3e150) and
raises a ValueError naming X beyond (one data contract: spreads, radii and
variances are squares of the data's scale); ``spherical_kendall`` alone is scale
invariant and accepts every finite float.

Example counts: 2000 nominal cases per entry point (``ESTIMATOR_EXAMPLES``); the
default ``ci`` profile runs one in twenty of them, derandomized, so CI is reproducible.
Run all of them, with fresh random seeds, by

    HYPOTHESIS_PROFILE=thorough pytest tests/test_hypothesis.py

(the profiles are described in tests/_hypothesis_support.py).

The displays and the command line have their own property tests, on generated
releases and argument lists: tests/test_hypothesis_displays.py and
tests/test_hypothesis_cli.py (same profiles).
"""

import math
import re

import numpy as np
import pytest
import pandas as pd
import scipy.sparse as sp
from hypothesis import example, given
from hypothesis import strategies as st

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, spherical_kendall

from ._hypothesis_support import (
    profile_settings as _settings,
    run_contract,
    strict_warnings as _strict_warnings,
)


ESTIMATOR_EXAMPLES = 2000

# The public data domain of the estimators that release variances.
VARIANCE_LIMIT = 2.0 ** 500
# the message of an n_components above the number of features p
N_COMPONENTS_ERROR = r"n_components=\d+ must lie in \[1, \d+\]"

MAX_ROWS, MAX_COLS = 60, 8
# mostly a few components (the common use), sometimes more than p (an error)
N_COMPONENTS = st.one_of(st.none(), st.integers(1, 3), st.integers(1, MAX_COLS + 1))


# --------------------------------------------------------------------------- inputs

def _finite_floats():
    # Magnitudes from 1e-300 to 1e300 (and zeros, subnormals), both signs.
    return st.one_of(
        st.floats(min_value=-1e300, max_value=1e300, allow_nan=False),
        st.builds(lambda sign, mantissa, exponent: sign * mantissa * 10.0 ** exponent,
                  st.sampled_from([-1.0, 1.0]), st.floats(1.0, 9.999),
                  st.integers(-300, 299)),
    )


@st.composite
def numeric_matrices(draw, min_rows=2):
    """A float64 matrix (n, p) with the structures that break numerical code."""
    n = draw(st.integers(min_rows, MAX_ROWS))
    p = draw(st.integers(1, MAX_COLS))
    kind = draw(st.sampled_from(["pool", "pool", "gaussian", "gaussian", "lattice"]))
    if kind == "pool":
        # a few values chosen by hypothesis (extremes, zeros, subnormals), spread
        # over the matrix by a seeded index: cheap to generate, and it makes ties
        pool = np.array(draw(st.lists(_finite_floats(), min_size=1, max_size=6)))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        X = pool[rng.integers(0, pool.size, size=(n, p))]
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        if kind == "lattice":   # small integers: many exact ties and duplicates
            X = rng.integers(-2, 3, size=(n, p)).astype(float)
        else:
            X = rng.standard_normal((n, p))
        # column scales and offsets over the whole float range
        exponents = draw(st.lists(st.integers(-300, 300), min_size=1, max_size=p))
        scales = 10.0 ** np.resize(np.array(exponents, dtype=float), p)
        offset = draw(st.sampled_from([0.0, 1.0, -7.5, 1e6, -1e150, 1e300]))
        with np.errstate(over="ignore", under="ignore"):
            X = X * scales
            if offset:
                # a far offset on a small spread: catastrophic cancellation
                X = X / max(1.0, np.max(np.abs(X)) / abs(offset)) + offset
        X = np.clip(np.nan_to_num(X, posinf=1e300, neginf=-1e300), -1e300, 1e300)
    structure = draw(st.sampled_from(["none", "none", "constant column",
                                      "identical rows", "duplicates", "near duplicates"]))
    if structure == "constant column":
        column = draw(st.integers(0, p - 1))
        X[:, column] = draw(_finite_floats())
    elif structure == "identical rows":
        X[:] = X[0]
    elif structure == "duplicates":
        X[n // 2:] = X[: n - n // 2]
    elif structure == "near duplicates":
        X[1::2] = np.nextafter(X[::2][: len(X[1::2])], np.inf)
    if draw(st.integers(0, 14)) == 0:     # NaN or inf somewhere, 1 case in 15
        bad = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, p - 1))] = bad
    return X


class Case:
    """A generated input: the object passed in and what the estimator should see."""

    def __init__(self, data, values, container, n_numeric_columns=None):
        self.data = data                  # what is passed to fit
        self.values = values              # float64 numeric values the estimator sees
        self.container = container
        self.n_numeric = values.shape[1] if n_numeric_columns is None else n_numeric_columns

    def __repr__(self):
        return (f"Case({self.container}, shape={getattr(self.data, 'shape', None)}, "
                f"values=\n{np.array2string(self.values, threshold=80)})")


@st.composite
def inputs(draw, min_rows=2):
    X = draw(numeric_matrices(min_rows=min_rows))
    container = draw(st.sampled_from([
        "float64", "float64", "float64", "float32", "int", "bool", "object", "list",
        "dataframe", "dataframe mixed", "dataframe mixed", "sparse",
    ]))
    with np.errstate(all="ignore"):
        if container == "float64":
            return Case(X, X, container)
        if container == "float32":
            data = X.astype(np.float32)        # large values become inf: an error
            return Case(data, data.astype(np.float64), container)
        if container == "int":
            finite = np.where(np.isfinite(X), X, 0.0)
            data = np.clip(np.round(finite), -2.0**62, 2.0**62).astype(np.int64)
            return Case(data, data.astype(np.float64), container)
        if container == "bool":
            data = np.where(np.isfinite(X), X, 0.0) > 0
            return Case(data, data.astype(np.float64), container)
        if container == "object":
            return Case(X.astype(object), X, container)
        if container == "list":
            return Case(X.tolist(), X, container)
        if container == "sparse":
            return Case(sp.csr_matrix(np.nan_to_num(X)), X, container)
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        if container == "dataframe mixed":
            n, p = X.shape
            # numeric columns of other dtypes
            kinds = draw(st.lists(st.sampled_from(["float64", "float32", "int", "bool"]),
                                  min_size=p, max_size=p))
            values = X.copy()
            for j, kind in enumerate(kinds):
                column = X[:, j]
                if kind == "float32":
                    frame[f"x{j}"] = column.astype(np.float32)
                elif kind == "int" and np.all(np.isfinite(column)):
                    frame[f"x{j}"] = np.clip(np.round(column), -2.0**62,
                                             2.0**62).astype(np.int64)
                elif kind == "bool" and np.all(np.isfinite(column)):
                    frame[f"x{j}"] = column > 0
                values[:, j] = frame[f"x{j}"].to_numpy(dtype=np.float64)
            # non-numeric columns, dropped with a warning
            rng = np.random.default_rng(draw(st.integers(0, 2**16)))
            extra = draw(st.sets(st.sampled_from(["category", "string", "datetime"]),
                                 max_size=3))
            if "category" in extra:
                frame.insert(0, "cat", pd.Categorical(rng.choice(["a", "b"], n)))
            if "string" in extra:
                frame["name"] = rng.choice(["u", "v", "w"], n).astype(object)
            if "datetime" in extra:
                frame["when"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(
                    rng.integers(0, 100, n), unit="D")
            if draw(st.booleans()):
                # only the non-numeric columns: nothing left to fit on
                if extra:
                    return Case(frame.drop(columns=[f"x{j}" for j in range(p)]),
                                np.empty((n, 0)), container, 0)
            return Case(frame, values, container)
        return Case(frame, X, container)


def _expected_input_errors(case, *, variance_limit):
    """Every problem of the input, as (exception types, message regex) pairs.

    An input with several problems may report any one of them; an input with
    none must not raise (beyond the parameter-dependent errors of each test).
    """
    values = case.values
    if case.container == "sparse":
        return [((TypeError, ValueError), r"[Ss]parse")]
    problems = []
    if case.n_numeric == 0:
        problems.append(((ValueError,), r"numeric"))
    if values.shape[0] < 2:
        problems.append(((ValueError,), r"sample"))
    if not np.all(np.isfinite(values)):
        problems.append(((ValueError,), r"NaN|infinity|finite"))
    elif variance_limit and values.size and np.max(np.abs(values)) > VARIANCE_LIMIT:
        problems.append(((ValueError,), r"X .*too large"))
    return problems


def _publicly_checked(expected):
    """Whether a fit reaches its public refusals: the input's own problems, if
    any, are only values past the variances' domain, which the first pass over
    the rows checks after them (both before the charge)."""
    return all("too large" in pattern for _, pattern in expected)


# ---------------------------------------------------------------------- assertions

def _all_finite(value, path="", seen=None):
    """Paths of every non-finite number inside ``value`` (arrays, dicts, Bunches...)."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, (bool, np.bool_, str, type(None))):
        return []
    if isinstance(value, (int, float, np.integer, np.floating)):
        return [] if math.isfinite(float(value)) else [path]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return [] if np.all(np.isfinite(value)) else [path]
        if value.dtype == object:
            return [p for i, item in enumerate(value.ravel())
                    for p in _all_finite(item, f"{path}[{i}]", seen)]
        return []
    if isinstance(value, dict):
        return [p for key, item in value.items()
                for p in _all_finite(item, f"{path}[{key!r}]", seen)]
    if isinstance(value, (list, tuple)):
        return [p for i, item in enumerate(value)
                for p in _all_finite(item, f"{path}[{i}]", seen)]
    return []


#: Attributes that hold NaN where the fit could not estimate a value (a part the
#: plan did not buy, or a value that is noise alone); never an infinity.
_MAY_BE_NOT_ESTIMABLE = {
    "explained_variance_raw_", "explained_variance_", "explained_variance_ratio_",
    "explained_variance_ratio_noise_scale_", "total_variance_", "total_variance_noise_scale_", "noise_scale_",
    "feature_variance_", "feature_variance_noise_scale_", "scale_"}


def _check_fitted(estimator, n_components, n_features):
    attributes = {name: value for name, value in vars(estimator).items()
                  if name.endswith("_") and not name.startswith("__")}
    bad = [path for path in _all_finite(attributes)
           if not (path.strip("[]'") in _MAY_BE_NOT_ESTIMABLE
                   and not np.any(np.isinf(attributes[path.strip("[]'")])))]
    assert not bad, f"non-finite fitted attributes: {bad}"
    raw = attributes.get("explained_variance_raw_")
    if raw is not None and np.any(np.isnan(raw)):
        # a raw release is NaN only when the plan did not buy the scree
        plan = estimator.plan_
        assert not plan.loc[plan.step.str.startswith("scree"), "released"].any()
    ratio = attributes.get("explained_variance_ratio_")
    if ratio is not None:
        # a share states its sd exactly where it is estimable
        share_sd = attributes["explained_variance_ratio_noise_scale_"]
        assert np.array_equal(np.isfinite(ratio), np.isfinite(share_sd))
        assert np.all(share_sd[np.isfinite(share_sd)] >= 0)
    assert estimator.components_.shape == (n_components, n_features)
    gram = estimator.components_ @ estimator.components_.T
    np.testing.assert_allclose(gram, np.eye(n_components), atol=1e-8)
    eps, delta = estimator.privacy_spent_
    assert 0 < eps <= estimator.eps and 0 <= delta <= estimator.delta
    for entry in estimator.privacy_ledger_:
        if entry["step"] == "gaussian block":       # composes the mu-GDP parts
            parts = [e["mu"] for e in estimator.privacy_ledger_
                     if e.get("composition") == "gdp"]
            assert entry["mu"] == pytest.approx(np.sqrt(np.sum(np.square(parts))))
        else:
            assert entry["noise_scale"] >= 0


def _check_transform(estimator, case, n_components):
    """transform of the fitted data: finite, right shape and dtype, or a clear error."""
    try:
        with _strict_warnings():
            projection = estimator.transform(case.data)
    except ValueError as error:
        # whitening by a tiny variance, or float32 data near its largest value
        assert re.search(r"X .*too large|overflow", str(error)), str(error)
        return
    projection = np.asarray(projection)
    assert projection.shape == (case.values.shape[0], n_components)
    assert np.all(np.isfinite(projection)), "transform returned non-finite values"
    if case.container == "float32":
        assert projection.dtype == np.float32


def _check_summary(estimator):
    with _strict_warnings():
        summary = estimator.summary()
        text = str(summary)
        html = summary._repr_html_()
    assert text and html
    assert not re.search(r"\b(nan|inf)\b", text), text


def _run(fit, expected, extra_errors=()):
    """``fit()`` under the outcome contract (see ``run_contract``).

    ``extra_errors`` lists (condition, types, regex) of parameter-dependent errors,
    allowed when their condition holds.
    """
    return run_contract(fit, expected, [rule[1:] for rule in extra_errors if rule[0]])


def _case(X, container="float64"):
    X = np.asarray(X, dtype=np.float64)
    return Case(X, X, container)


_RNG = np.random.default_rng(12345)
# The known hot spots, run first on every entry point (hypothesis' explicit phase).
HOT_SPOTS = {
    "rows of size 1e300": _case(_RNG.standard_normal((12, 3)) * 1e300),
    "rows at 2**500": _case(np.sign(_RNG.standard_normal((12, 3))) * 2.0**500),
    "near the largest float": _case(np.array([[1.7e308, -1.7e308], [-1.7e308, 1.7e308],
                                              [1.0, 0.0]])),
    "rows of size 1e-300": _case(_RNG.standard_normal((12, 3)) * 1e-300),
    "subnormal differences": _case(5e-324 * _RNG.integers(-9, 10, (12, 2))),
    "constant columns": _case(np.column_stack([_RNG.standard_normal(12),
                                               np.full(12, 7.0), np.zeros(12)])),
    "all rows identical": _case(np.full((9, 3), -2.5)),
    "n = 2": _case(_RNG.standard_normal((2, 3))),
    "n = 3, p = 1": _case(_RNG.standard_normal((3, 1))),
    "p = 1": _case(_RNG.standard_normal((30, 1))),
    "far offset, tiny spread": _case(1e12 + _RNG.standard_normal((20, 2)) * 1e-3),
}


def _hot_spot_examples(**fixed):
    """Decorators: one explicit example per hot spot, with ``fixed`` parameters."""
    def decorate(test):
        for case in HOT_SPOTS.values():
            test = example(case=case, **fixed)(test)
        return test
    return decorate


# ----------------------------------------------------------------- spherical_kendall

@_settings(ESTIMATOR_EXAMPLES)
@_hot_spot_examples(pairs="all")
@given(case=inputs(min_rows=1), pairs=st.one_of(st.just("all"), st.integers(1, 6)))
def test_spherical_kendall_property(case, pairs):
    values = case.values
    expected = _expected_input_errors(case, variance_limit=False)
    p = values.shape[1]
    non_numeric = case.container.startswith("dataframe") and case.data.shape[1] != p
    if non_numeric:
        # spherical_kendall does not drop non-numeric columns: strings and
        # categories cannot be converted (an error), dates convert to numbers.
        expected = [rule for rule in expected if rule[1] != r"numeric"]
        p = case.data.shape[1]
    n = values.shape[0]
    odd_design = isinstance(pairs, int) and pairs % 2 == 1 and n % 2 == 1 \
        and pairs < n - 1
    K = _run(
        lambda: spherical_kendall(case.data, pairs=pairs, random_state=0),
        expected,
        [(odd_design, (ValueError,), r"pairs=\d+ is odd"),
         # (dates next to numbers: numpy's DTypePromotionError, a TypeError)
         (non_numeric, (ValueError, TypeError), r"convert|float|numeric|promoted")],
    )
    if K is None:
        return
    assert K.shape == (p, p) and np.all(np.isfinite(K))
    np.testing.assert_allclose(K, K.T, atol=1e-15)
    assert -1e-12 <= np.trace(K) <= 1 + 1e-12
    assert np.min(np.linalg.eigvalsh(K)) >= -1e-12


# ------------------------------------------------------------- DPKendallDirections

@_settings(ESTIMATOR_EXAMPLES)
@_hot_spot_examples(n_components=None, sensitivity="standard",
                    compute_nonprivate=True, eps=1.0)
@given(case=inputs(), n_components=N_COMPONENTS,
       sensitivity=st.sampled_from(["standard", "tight"]),
       compute_nonprivate=st.booleans(), eps=st.sampled_from([0.1, 1.0, 10.0]))
def test_dp_kendall_directions_property(case, n_components, sensitivity,
                                        compute_nonprivate, eps):
    expected = _expected_input_errors(case, variance_limit=True)
    values = case.values
    p = values.shape[1]
    estimator = DPKendallDirections(
        n_components, eps=eps, sensitivity=sensitivity,
        compute_nonprivate=compute_nonprivate, random_state=0)
    fitted = _run(
        lambda: estimator.fit(case.data),
        expected,
        [(_publicly_checked(expected) and n_components is not None and n_components > p, (ValueError,),
          N_COMPONENTS_ERROR)],
    )
    if fitted is None:
        return
    k = p if n_components is None else n_components
    _check_fitted(fitted, k, p)
    assert fitted.kendall_matrix_.shape == (p, p)
    _check_transform(fitted, case, k)
    _check_summary(fitted)


# --------------------------------------------------------------------------- DPScree

@st.composite
def scree_params(draw):
    method = draw(st.sampled_from(["clipped", "clipped", "huber", "pmwm"]))
    params = None
    if method == "clipped":
        params = draw(st.sampled_from([
            None, {"clip": "norm"}, {"clip": "component"},
            {"clip": "norm", "pairs": 3}, {"clip": "component", "quantile_level": 0.5},
        ]))
    elif method == "pmwm":
        params = draw(st.sampled_from([None, {"split": False}]))
    return method, params


def _paired_method_too_small(method, params, n):
    """huber and pmwm (split) pair the rows and need two pairs."""
    split = (params or {}).get("split", True)
    return n < 4 and (method == "huber" or (method == "pmwm" and split))


@_settings(ESTIMATOR_EXAMPLES)
@_hot_spot_examples(method_params=("clipped", None), n_components=None, whiten=True,
                    monotone=True, eps=1.0)
@_hot_spot_examples(method_params=("huber", None), n_components=None, whiten=True,
                    monotone=False, eps=0.1)
@_hot_spot_examples(method_params=("pmwm", None), n_components=None, whiten=False,
                    monotone=True, eps=10.0)
@given(case=inputs(), method_params=scree_params(),
       n_components=N_COMPONENTS,
       whiten=st.booleans(), monotone=st.booleans(),
       eps=st.sampled_from([0.1, 1.0, 10.0]))
def test_dp_scree_property(case, method_params, n_components, whiten, monotone, eps):
    method, params = method_params
    expected = _expected_input_errors(case, variance_limit=True)
    values = case.values
    n, p = values.shape
    design_pairs = (params or {}).get("pairs")
    estimator = DPScree(n_components, eps=eps, scree_method=method, scree_params=params,
                        whiten=whiten, monotone=monotone, random_state=0)
    fitted = _run(
        lambda: estimator.fit(case.data),
        expected,
        [(_publicly_checked(expected) and n_components is not None and n_components > p, (ValueError,),
          N_COMPONENTS_ERROR),
         # public refusals come before the first pass's domain check
         (_publicly_checked(expected) and _paired_method_too_small(method, params, n),
          (ValueError,), r"at least 4 rows"),
         (_publicly_checked(expected) and design_pairs is not None
          and design_pairs % 2 == 1 and n % 2 == 1 and design_pairs < n - 1,
          (ValueError,), r"pairs=\d+ is odd")],
    )
    if fitted is None:
        return
    k = p if n_components is None else n_components
    _check_fitted(fitted, k, p)
    for name in ("explained_variance_", "explained_variance_raw_",
                 "explained_variance_ratio_", "noise_scale_"):
        assert getattr(fitted, name).shape == (k,), name
    # (NaN: not estimable; the rules hold for the values released)
    variances = fitted.explained_variance_
    assert np.all(np.isnan(variances) | (variances >= 0))
    ratio = fitted.explained_variance_ratio_
    # shares of the private total: in [0, 1], summing to at most 1
    assert np.all(np.isnan(ratio) | (ratio >= 0)) and np.nansum(ratio) <= 1 + 1e-9
    if np.isfinite(fitted.total_variance_):
        assert fitted.total_variance_ >= np.nansum(variances) * (1 - 1e-12)
    if monotone:
        assert np.all(np.diff(variances[np.isfinite(variances)]) <= 0)
    _check_transform(fitted, case, k)
    _check_summary(fitted)


# ----------------------------------------------------------------------------- DPPCA

@st.composite
def dppca_params(draw):
    return dict(
        n_components=draw(st.one_of(st.integers(1, 3), st.integers(1, MAX_COLS + 1))),
        eps=draw(st.sampled_from([0.1, 1.0, 10.0])),
        scree_method=draw(st.sampled_from(["clipped", "clipped", "huber", "pmwm"])),
        histogram=draw(st.sampled_from(["additive", "sparse"])),
        bins=draw(st.sampled_from([1, 3, (5, 2), (20, 20)])),
        sensitivity=draw(st.sampled_from(["standard", "tight"])),
        pairs=draw(st.sampled_from(["all", "all", 2, 3])),
        compute_nonprivate=draw(st.booleans()),
        whiten=draw(st.booleans()),
        synthetic_jitter=draw(st.sampled_from([0.0, 0.25])),
        n_synthetic=draw(st.sampled_from([None, 0, 7])),
        scale=draw(st.booleans()),
    )


@_settings(ESTIMATOR_EXAMPLES)
@_hot_spot_examples(params=dict(n_components=3, eps=1.0, scree_method="clipped",
                                histogram="additive", bins=(20, 20),
                                sensitivity="standard", pairs="all",
                                compute_nonprivate=True, whiten=True,
                                synthetic_jitter=0.25, n_synthetic=None, scale=True),
                    groups=None, label_seed=0, outside_label=False)
@_hot_spot_examples(params=dict(n_components=2, eps=0.1, scree_method="huber",
                                histogram="sparse", bins=3, sensitivity="tight",
                                pairs=3, compute_nonprivate=False, whiten=False,
                                synthetic_jitter=0.0, n_synthetic=7, scale=False),
                    groups=["a", "b"], label_seed=1, outside_label=False)
@given(case=inputs(), params=dppca_params(),
       groups=st.sampled_from([None, None, None, ["a", "b"], ["a", "b", "c"]]),
       label_seed=st.integers(0, 2**16), outside_label=st.booleans())
def test_dppca_property(case, params, groups, label_seed, outside_label):
    expected = _expected_input_errors(case, variance_limit=True)
    values = case.values
    n, p = values.shape
    y = None
    if groups is not None:
        y = np.random.default_rng(label_seed).choice(groups, size=n).astype(object)
        if outside_label:
            y[0] = "z"
    k = params["n_components"]
    pairs = params["pairs"]
    estimator = DPPCA(groups=groups, random_state=0, **params)
    fitted = _run(
        lambda: estimator.fit(case.data, y),
        expected,
        [(_publicly_checked(expected) and k > p, (ValueError,), N_COMPONENTS_ERROR),
         # (an input with several public problems may report any one of them)
         (_publicly_checked(expected)
          and _paired_method_too_small(params["scree_method"], None, n),
          (ValueError,), r"at least 4 rows"),
         (_publicly_checked(expected) and isinstance(pairs, int)
          and pairs % 2 == 1 and n % 2 == 1 and pairs < n - 1, (ValueError,),
          r"pairs=\d+ is odd"),
         (_publicly_checked(expected) and k <= p and groups is not None and outside_label, (ValueError,),
          r"labels outside groups"),
         ],
    )
    if fitted is None:
        return
    _check_fitted(fitted, k, p)
    if params["scale"]:
        assert fitted.scale_.shape == (p,)
        assert np.all(np.isnan(fitted.scale_) | (fitted.scale_ > 0))
    else:
        assert fitted.scale_ is None
    ratio = fitted.explained_variance_ratio_
    assert np.all(np.isnan(ratio) | (ratio >= 0)) and np.nansum(ratio) <= 1 + 1e-9
    assert fitted.feature_variance_.shape == (p,)
    assert np.all(np.isnan(fitted.feature_variance_) | (fitted.feature_variance_ >= 0))
    if k >= 2 and fitted.frame_ is not None:   # (a collapsed frame skips the rest)
        bins = (params["bins"],) * 2 if isinstance(params["bins"], int) else params["bins"]
        assert fitted.score_histogram_.shape == bins
        total = fitted.score_histogram_.sum()
        assert total == 0 or abs(total - 1) < 1e-9
        n_points = n if params["n_synthetic"] is None else params["n_synthetic"]
        assert fitted.synthetic_scores_.shape in ((n_points, 2), (0, 2))
        x_min, x_max, y_min, y_max = fitted.frame_.extent
        assert x_min < x_max and y_min < y_max
    else:
        assert fitted.frame_ is None and fitted.score_histogram_ is None
    _check_transform(fitted, case, k)
    _check_summary(fitted)

