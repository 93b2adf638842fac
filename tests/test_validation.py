"""The one validation system: constraints, the error policy, the estimators' tables.

Policy: a value no constraint takes the type of, or one of the right type outside
its range or set, raises InvalidParameterError (both a ValueError and a TypeError,
as scikit-learn's parameter errors are); a setting that does not fit the data, and
bad data, raise a plain ValueError; all name the argument. Estimators check their
hyperparameters in ``fit`` (scikit-learn's convention). Warnings point at the
user's call.
"""

import ast
import inspect
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import sklearn_dppca
from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, InvalidParameterError
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
    warn_user,
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
    with pytest.raises(ValueError, match="pairs must be 'all' or 'auto' or an int >= 1"):
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
def test_a_wrong_type_raises_invalid_parameter_error_at_fit(estimator, name):
    model = estimator(**{name: WRONG_TYPE[name]})     # __init__ only stores it
    with pytest.raises(InvalidParameterError, match=rf"(^|\W){re.escape(name)}\W"):
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


# (values that meet their constraint but not the data: 3 ranges for 4 columns,
# directions of the right shape that are not orthonormal)
FITS_NOT_THE_DATA = {"bounds", "directions"}


@pytest.mark.parametrize("estimator, name", _cases(OUT_OF_RANGE),
                         ids=lambda value: getattr(value, "__name__", value))
def test_an_out_of_range_value_raises_invalid_parameter_error_at_fit(estimator, name):
    model = estimator(**{name: OUT_OF_RANGE[name]})
    with pytest.raises(ValueError, match=rf"(^|\W){re.escape(name)}\W") as caught:
        model.fit(_fit_data())
    assert (caught.type is InvalidParameterError) == (name not in FITS_NOT_THE_DATA)


def test_code_written_for_scikit_learn_catches_a_parameter_error():
    # the case: `except ValueError` (scikit-learn's own parameter errors
    # are ValueErrors) must catch a string for a number, which is a type error too
    assert issubclass(InvalidParameterError, ValueError)
    assert issubclass(InvalidParameterError, TypeError)
    assert sklearn_dppca.InvalidParameterError is InvalidParameterError
    for handled in (ValueError, TypeError):
        try:
            DPPCA(eps="1").fit(_fit_data())
        except handled as error:
            assert "eps must be a finite number > 0, got '1'." in str(error)
        else:
            raise AssertionError("no error")


def test_bad_data_is_not_a_parameter_error():
    # scikit-learn's convention: a data problem is a plain ValueError
    X = _fit_data()
    X[3, 1] = np.nan
    for estimator in ESTIMATORS:
        with pytest.raises(ValueError) as caught:
            estimator().fit(X)
        assert caught.type is not InvalidParameterError


def test_check_param_raises_one_class_for_type_and_value():
    for value in ("1", -1.0, True, math.nan):
        with pytest.raises(InvalidParameterError, match="^eps must be a finite number > 0"):
            check_param(value, [POSITIVE], "eps")


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
        assert name.split(".")[0] in {"math", "numbers", "sys", "warnings", "numpy",
                                      "sklearn", "pandas"}, name
        # scikit-learn's public API only
        assert not any(part.startswith("_") for part in name.split(".")), name


# --------------------------------------------------------------------------------
# warnings point at the user's call
# --------------------------------------------------------------------------------


def _warnings_of(call):
    """The warnings ``call()`` raises, every one recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return caught


def _kendall_with_large_delta():
    # delta >= 1/n: a PrivacyRiskWarning raised below fit, in the budget plan
    DPKendallDirections(delta=0.1, random_state=0).fit(_fit_data())


def _kendall_fitted_twice():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # (only the second fit's warning counts)
        estimator = DPKendallDirections(random_state=0).fit(_fit_data())
    estimator.fit(_fit_data())


def _scree_of_noise():
    # two columns of tiny spread on a small budget: their variances are noise
    # (a PrivacyUtilityWarning from the algorithms, four calls below fit)
    X = np.random.default_rng(0).normal(size=(3000, 3)) * [5.0, 0.1, 0.1]
    DPScree(eps=1.0, random_state=0).fit(X)


def _frame_with_text():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(_fit_data(), columns=list("abcd")).assign(city="x")
    DPKendallDirections(random_state=0).fit(X)


def _pca_of_one_component():
    DPPCA(n_components=1, random_state=0).fit(_fit_data())


def _pipeline_of_kendall():
    from sklearn.pipeline import make_pipeline

    make_pipeline(DPKendallDirections(delta=0.1, random_state=0)).fit(_fit_data())


def _clone_of_pca():
    from sklearn.base import clone

    clone(DPPCA())


def _classical_noise_scale():
    from sklearn_dppca.privacy import gaussian_noise_scale

    gaussian_noise_scale(1.0, 2.0, 1e-6, method="classical")


@pytest.mark.parametrize("call", [
    _kendall_with_large_delta, _kendall_fitted_twice, _scree_of_noise,
    _frame_with_text, _pca_of_one_component, _pipeline_of_kendall, _clone_of_pca,
    _classical_noise_scale,
], ids=lambda call: call.__name__.strip("_"))
def test_a_warning_points_at_the_users_call(call):
    caught = _warnings_of(call)
    assert caught, "the case raises no warning: it tests nothing"
    source, first = inspect.getsourcelines(call)
    for warning in caught:
        # this file, inside the case's own lines: the user's call
        assert warning.filename == __file__, (warning.filename, str(warning.message))
        assert first < warning.lineno < first + len(source)


# a stand-in for a module of the package: its functions run with the package's
# module name, as the estimators' code does
_PACKAGE_CODE = '''
def inner(message):
    warn_user(message)

def outer(message):
    inner(message)

def calls_back(user_function):
    user_function()
'''


def _package_module():
    namespace = {"__name__": "sklearn_dppca._stand_in", "warn_user": warn_user}
    exec(compile(_PACKAGE_CODE, "<package>", "exec"), namespace)
    return namespace


def test_the_walk_stops_at_the_innermost_frame_outside_the_package():
    package = _package_module()
    caught = _warnings_of(lambda: package["outer"]("two calls deep"))
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, _line_of("two calls deep"))]

    def user_callback():
        package["outer"]("from a callback")      # user code the package calls

    caught = _warnings_of(lambda: package["calls_back"](user_callback))
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, _line_of("from a callback"))]


def test_a_frame_outside_is_not_skipped():
    # the broken variant: a stand-in named outside the package is where the
    # warning points, so the test above would fail if the walk ignored names
    namespace = {"__name__": "somebody_else", "warn_user": warn_user}
    exec(compile(_PACKAGE_CODE, "<elsewhere>", "exec"), namespace)
    caught = _warnings_of(lambda: namespace["outer"]("here"))
    assert [w.filename for w in caught] == ["<elsewhere>"]


def _line_of(text):
    """The line of this file that calls the stand-in with ``text``."""
    source = Path(__file__).read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(source, 1)
                if f'("{text}")' in line and "package[" in line)


def test_every_warning_of_the_package_goes_through_warn_user():
    # one piece of code attributes warnings: no other warnings.warn, no stacklevel
    package = Path(sklearn_dppca.__file__).parent
    offenders = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                called = ast.unparse(node.func)
                keywords = {keyword.arg for keyword in node.keywords}
                if (called.endswith("warn") and called != "warn_user") \
                        or "stacklevel" in keywords and called != "warnings.warn":
                    offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    validation = f"_validation.py:{inspect.getsourcelines(warn_user)[1]}"
    assert [o for o in offenders if not o.startswith("_validation.py:")] == []
    assert len([o for o in offenders if o.startswith("_validation.py:")]) == 1, validation
