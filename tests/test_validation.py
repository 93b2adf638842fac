"""The one validation system: constraints, the error policy, the estimators' tables.

Policy: a value no constraint takes the type of raises TypeError; a value of the
right type outside its range or set raises ValueError; both name the argument.
Estimators check their hyperparameters in ``fit`` (scikit-learn's convention).
"""

import ast
import inspect
import math
import re
from pathlib import Path

import numpy as np
import pytest

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree
from sklearn_dppca._validation import (
    EXTENDED_REAL,
    N_JOBS,
    PAIRS,
    POSITIVE,
    UNIT_OPEN,
    Boolean,
    Callable,
    Interval,
    Options,
    Pair,
    as_real_numbers,
    check_component_pair,
    check_field,
    check_labels,
    check_n_components,
    check_param,
    check_values,
    _describe,
    label_codes,
)

ESTIMATORS = [DPKendallDirections, DPScree, DPPCA]


# --------------------------------------------------------------------------------
# constraints and the policy
# --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
@pytest.mark.parametrize("kind", ["real", "int"])
def test_bools_are_not_numbers(value, kind):
    with pytest.raises(TypeError, match="^x must be"):
        check_param(value, [Interval(kind, 0, None)], "x")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_real_intervals_hold_finite_numbers_only(value):
    with pytest.raises(ValueError, match="^x must be a finite number"):
        check_param(value, [Interval("real")], "x")
    with pytest.raises(ValueError):
        check_param(value, [POSITIVE], "x")


def test_an_infinity_belongs_only_to_a_closed_infinite_bound():
    up_to_inf = Interval("real", 0, math.inf, closed="right")
    assert check_param(math.inf, [up_to_inf], "clip") == math.inf
    with pytest.raises(ValueError, match="clip"):
        check_param(0.0, [up_to_inf], "clip")
    with pytest.raises(ValueError, match="clip"):
        check_param(math.nan, [up_to_inf], "clip")
    assert check_param(-math.inf, [EXTENDED_REAL], "a") == -math.inf
    with pytest.raises(ValueError, match="not NaN"):
        check_param(math.nan, [EXTENDED_REAL], "a")
    with pytest.raises(ValueError):
        check_param(math.inf, [Interval("real", 0, math.inf, closed="left")], "b")


@pytest.mark.parametrize("closed, inside", [
    ("both", [0.0, 0.5, 1.0]), ("left", [0.0, 0.5]), ("right", [0.5, 1.0]),
    ("neither", [0.5]),
])
def test_open_and_closed_bounds(closed, inside):
    rule = Interval("real", 0, 1, closed=closed)
    for value in (0.0, 0.5, 1.0):
        if value in inside:
            assert check_param(value, [rule], "share") == value
        else:
            with pytest.raises(ValueError, match="share"):
                check_param(value, [rule], "share")
    for value in (-1e-12, 1 + 1e-12):
        with pytest.raises(ValueError):
            check_param(value, [rule], "share")
    left, right = str(rule).split(" in ")[1][0], str(rule)[-1]
    assert (left, right) == ({"both": "[", "left": "["}.get(closed, "("),
                             {"both": "]", "right": "]"}.get(closed, ")"))


def test_int_intervals_take_ints_only_and_convert():
    value = check_param(np.int64(3), [Interval("int", 1, None)], "k")
    assert value == 3 and type(value) is int
    for not_an_int in (2.0, 2.5, "2", None):
        with pytest.raises(TypeError, match="^k must be an int >= 1"):
            check_param(not_an_int, [Interval("int", 1, None)], "k")
    with pytest.raises(ValueError, match="^k must be an int >= 1, got 0"):
        check_param(0, [Interval("int", 1, None)], "k")
    real = check_param(np.float32(0.5), [UNIT_OPEN], "q")
    assert real == 0.5 and type(real) is float
    assert check_param(2, [POSITIVE], "eps") == 2.0      # an int is a real number


def test_options_boolean_instance_callable_pair():
    assert check_param("sparse", [Options("additive", "sparse")], "histogram") == "sparse"
    with pytest.raises(ValueError, match="histogram must be 'additive' or 'sparse'"):
        check_param("dense", [Options("additive", "sparse")], "histogram")
    with pytest.raises(TypeError, match="histogram"):
        check_param(1, [Options("additive", "sparse")], "histogram")
    assert check_param(np.bool_(False), [Boolean()], "flag") is False
    with pytest.raises(TypeError, match="flag must be True or False"):
        check_param(1, [Boolean()], "flag")
    with pytest.raises(TypeError, match="a dict"):
        check_param([1], [dict], "params")
    assert check_param(print, [None, Callable()], "progress") is print
    with pytest.raises(TypeError, match="progress must be None or a callable"):
        check_param("print", [None, Callable()], "progress")
    assert check_param([0, np.int64(2)], [Pair(Interval("int", 0, 3))], "axes") == (0, 2)
    with pytest.raises(ValueError, match="axes"):
        check_param((0, 1, 2), [Pair(Interval("int", 0, 3))], "axes")
    with pytest.raises(ValueError, match="axes"):
        check_param((0, 4), [Pair(Interval("int", 0, 3))], "axes")
    for wrong in ("01", 1, (0, 1.0), {0: 1, 1: 2}):
        with pytest.raises(TypeError, match="axes must be a pair"):
            check_param(wrong, [Pair(Interval("int", 0, 3))], "axes")


def test_several_constraints_type_then_value():
    # a string is the type of "all", so an unknown string is a wrong value
    with pytest.raises(ValueError, match="pairs must be 'all' or an int >= 1"):
        check_param("some", PAIRS, "pairs")
    with pytest.raises(TypeError, match="pairs"):
        check_param(2.5, PAIRS, "pairs")
    assert check_param(None, N_JOBS, "n_jobs") is None
    assert check_param(-1, N_JOBS, "n_jobs") == -1
    with pytest.raises(ValueError, match="n_jobs"):
        check_param(0, N_JOBS, "n_jobs")
    with pytest.raises(TypeError, match="n_jobs"):
        check_param(1.5, N_JOBS, "n_jobs")
    assert _describe(["auto", POSITIVE]) == "'auto' or a finite number > 0"


def test_messages_show_settings_but_never_an_array():
    secret = np.array([[123.456, 789.012]] * 50)
    for value in (secret, secret.tolist(), {"rows": secret}):
        with pytest.raises(TypeError) as caught:
            check_param(value, [POSITIVE], "eps")
        assert "123.456" not in str(caught.value)
        assert "eps must be a finite number > 0, got an object of type" in str(caught.value)
    with pytest.raises(ValueError, match=r"got -0\.5\.$"):
        check_param(-0.5, [POSITIVE], "eps")


def test_check_field_reports_every_problem_as_a_value_error():
    with pytest.raises(ValueError, match="'eps' must be a finite number > 0, got '1'"):
        check_field("1", [POSITIVE], "'eps'")
    assert check_field(1, [POSITIVE], "'eps'") == 1.0


def test_component_helpers():
    assert check_n_components(None, 4) == 4
    assert check_n_components(np.int64(2), 4) == 2
    with pytest.raises(ValueError, match=r"n_components=5 must lie in \[1, 4\]"):
        check_n_components(5, 4)
    with pytest.raises(TypeError, match="n_components"):
        check_n_components(2.0, 4)
    assert check_component_pair((1, 0), 2) == (1, 0)
    with pytest.raises(ValueError, match="two different"):
        check_component_pair((1, 1), 2)


def test_labels_and_codes_quote_no_data_label():
    assert check_labels(("a", "b"), "groups") == ["a", "b"]
    with pytest.raises(TypeError, match="groups must be a list of labels"):
        check_labels("ab", "groups")
    with pytest.raises(ValueError, match="distinct"):
        check_labels(["a", "a"], "groups")
    with pytest.raises(ValueError, match="non-empty"):
        check_labels([], "groups")
    np.testing.assert_array_equal(label_codes(["b", "a", "b"], ["a", "b"], "y", "groups", 3),
                                  [1, 0, 1])
    with pytest.raises(ValueError, match="labels outside groups") as caught:
        label_codes(["a", "secret-label"], ["a", "b"], "y", "groups", 2)
    assert "secret-label" not in str(caught.value)
    with pytest.raises(ValueError, match="y has 1 labels for 2 rows"):
        label_codes(["a"], ["a", "b"], "y", "groups", 2)


def test_as_real_numbers_passes_numbers_and_converts_the_rest():
    pd = pytest.importorskip("pandas")
    X = np.ones((3, 2), dtype=np.float32)
    assert as_real_numbers(X) is X                     # no copy, float32 kept
    frame = pd.DataFrame({"a": [1, 2], "b": [True, False]})
    assert as_real_numbers(frame) is frame
    converted = as_real_numbers(pd.DataFrame({"a": [1.5, "2"]}, dtype=object))
    assert list(converted.columns) == ["a"] and converted["a"].tolist() == [1.5, 2.0]
    np.testing.assert_array_equal(as_real_numbers([["1", "2.5"]]), [[1.0, 2.5]])
    np.testing.assert_array_equal(as_real_numbers(np.array([[1, None]], dtype=object)),
                                  [[1.0, np.nan]])
    for bad, error, words in [
        (np.array([[1.0, "word 77.7"]], dtype=object), ValueError, "a cell is not"),
        (np.array([[1.0, {"k": 77.7}]], dtype=object), TypeError,
         "argument must be a string or a real number"),
        (np.array([[1.0, 77.7j]]), ValueError, "Complex data not supported"),
        (pd.DataFrame({"t": pd.to_datetime(["2001-07-07"])}), TypeError, "date"),
    ]:
        with pytest.raises(error, match=words) as caught:
            as_real_numbers(bad, "Z")
        assert str(caught.value).startswith(("Z ", "Complex data not supported: Z"))
        assert "77" not in str(caught.value) and "2001" not in str(caught.value)


def test_check_values():
    assert check_values([1, 2.5, True]).tolist() == [1.0, 2.5, 1.0]
    with pytest.raises(TypeError, match="w must be an array of real numbers") as caught:
        check_values(["a", "bbbbbbb"], "w")
    assert "7" not in str(caught.value)     # no '<U7': the longest cell's length
    with pytest.raises(ValueError, match="non-empty 1-D"):
        check_values([[1.0, 2.0]], "w")
    with pytest.raises(ValueError, match="finite"):
        check_values([1.0, np.nan], "w")


# --------------------------------------------------------------------------------
# the estimators' tables
# --------------------------------------------------------------------------------


def _init_parameters(estimator):
    return set(inspect.signature(estimator.__init__).parameters) - {"self"}


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: e.__name__)
def test_constraints_cover_exactly_the_init_parameters(estimator):
    assert set(estimator._parameter_constraints) == _init_parameters(estimator)


# One value of the wrong type and (where a range or a set exists) one of the right
# type outside it, for every hyperparameter of the three estimators.
WRONG_TYPE = {
    "n_components": "2", "eps": "1", "delta": None, "noise": 3, "sensitivity": 3,
    "accounting": 3, "accountant": "total", "radial": 3, "radius": True,
    "radius_level": True, "scale": "yes", "compute_nonprivate": 1,
    "random_state": "seed", "n_jobs": 1.5, "pairs": 2.5,
    "scale_share": "0.2", "method": 3, "method_params": [1], "directions": "abc",
    "directions_share": "0.4", "monotone": "yes", "whiten": 1, "budget_split": [0.5],
    "scree_method": 3, "scree_params": [1], "histogram": 3, "bins": 2.5, "axes": "01",
    "n_synthetic": 2.5, "synthetic_jitter": "0.25", "synthetic_sampling": 3,
    "histogram_threshold": [1], "groups": 3, "verbose": "loud", "row_blocks": "rows",
    "bounds": "wide",
}
OUT_OF_RANGE = {
    "n_components": 0, "eps": 0.0, "delta": 1.5, "noise": "laplace",
    "sensitivity": "loose", "accounting": "rdp", "radial": "elliptical", "radius": -1.0,
    "radius_level": 1.5, "random_state": -1, "n_jobs": 0, "pairs": 0,
    "scale_share": 1.0, "method": "median",
    "method_params": {"bogus": 1}, "directions": np.ones((2, 4)),
    "directions_share": 1.0, "budget_split": {"loading": 2.0, "scree": 0.1},
    "scree_method": "robust", "scree_params": {"nope": 1}, "histogram": "dense",
    "bins": 0, "axes": (0, 0), "n_synthetic": -1, "synthetic_jitter": -0.5,
    "synthetic_sampling": "grid",    "histogram_threshold": -1.0, "groups": ["a", "a"], "verbose": -1,
    "row_blocks": 1, "bounds": [(0.0, 1.0)] * 3,
}
# (True/False only, or an object of a class: no range to leave)
NO_RANGE = {"accountant", "scale", "compute_nonprivate", "monotone", "whiten"}


def _cases(table):
    return [(estimator, name) for estimator in ESTIMATORS
            for name in sorted(_init_parameters(estimator)) if name in table]


def _fit_data():
    return np.random.default_rng(0).standard_normal((60, 4)) * [3.0, 2.0, 1.0, 0.5]


def test_the_tables_cover_every_parameter():
    every = set().union(*(_init_parameters(estimator) for estimator in ESTIMATORS))
    assert set(WRONG_TYPE) == every
    assert set(OUT_OF_RANGE) == every - NO_RANGE


@pytest.mark.parametrize("estimator, name", _cases(WRONG_TYPE),
                         ids=lambda value: getattr(value, "__name__", value))
def test_a_wrong_type_raises_type_error_at_fit(estimator, name):
    model = estimator(**{name: WRONG_TYPE[name]})     # __init__ only stores it
    with pytest.raises(TypeError, match=rf"(^|\W){re.escape(name)}\W"):
        model.fit(_fit_data())


@pytest.mark.parametrize("estimator, error", [
    (DPKendallDirections, TypeError),     # a number of directions: an int only
    (DPScree, ValueError), (DPPCA, ValueError),   # a float is a PVE in (0, 1)
])
def test_a_float_n_components_is_a_pve_in_the_open_unit_interval(estimator, error):
    with pytest.raises(error, match=r"n_components\W"):
        estimator(n_components=1.5).fit(_fit_data())
    if error is ValueError:
        assert estimator(n_components=0.5).fit(_fit_data()).n_components_ >= 1


@pytest.mark.parametrize("estimator, name", _cases(OUT_OF_RANGE),
                         ids=lambda value: getattr(value, "__name__", value))
def test_an_out_of_range_value_raises_value_error_at_fit(estimator, name):
    model = estimator(**{name: OUT_OF_RANGE[name]})
    with pytest.raises(ValueError, match=rf"(^|\W){re.escape(name)}\W"):
        model.fit(_fit_data())


# --------------------------------------------------------------------------------
# a leaf module
# --------------------------------------------------------------------------------


def test_validation_imports_nothing_of_the_package():
    import sklearn_dppca._validation as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"relative import of {node.module!r}"
            imported.append(node.module)
        elif isinstance(node, ast.Import):
            imported.extend(alias.name for alias in node.names)
    assert imported, "no import found: the parse is wrong"
    for name in imported:
        assert not name.startswith("sklearn_dppca"), name
        assert name.split(".")[0] in {"math", "numbers", "warnings", "numpy", "sklearn",
                                      "pandas"}, name
        # scikit-learn's public API only
        assert not any(part.startswith("_") for part in name.split(".")), name
