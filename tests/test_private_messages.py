"""No message echoes private data.

Whether a fit fails may depend on the data only through the documented input
contracts (finite real values, the data domain ``|x| <= 2**500``, declared group
labels), and what the user then reads names the rule, and public names (arguments,
columns, options), but never a value, a row, a line of the user's file or a label
found in the data. Each test plants a distinctive secret (a value, a text cell, a
label, a row or line position) on a data-dependent error path and looks for it, in
every form it could be printed in, in the error and in every warning.
"""

import contextlib
import inspect
import io
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dppca import (
    DPKendallDirections,
    DPPCA,
    DPScree,
    export_release,
    load_release,
    spherical_kendall,
)
from sklearn_dppca._cli import main
from sklearn_dppca._data_sources import UserError, read_csv
from ._kendall_support import pair_scatter as _pair_scatter
from sklearn_dppca._validation import MAX_ABS_VALUE
from sklearn_dppca.privacy import (
    dyadic_argmax,
    gaussian_mechanism,
    grid_cell_index,
    histogram_counts,
    laplace_mechanism,
    quantile,
)

SECRET_VALUE = 123456.789
SECRET_CELL = "SECRET-CELL-123456.789"
SECRET_LABEL = "SECRET-LABEL"
SECRET_ROW = 42          # a row of the small in-memory tables
SECRET_LINE = 4242       # a line of the CSV file
# every way the secrets could appear in a message
SECRET_TEXTS = ("SECRET", "123456", "1.23456", "123,456", "4242", "4241", "4243")


def _said(call):
    """The message of the error ``call`` raises and of every warning it emits."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((ValueError, TypeError)) as error:
            call()
    return [str(error.value)] + [str(w.message) for w in caught]


def _assert_no_secret(messages, *more):
    for message in messages:
        for secret in SECRET_TEXTS + more:
            assert secret not in message, (secret, message)


def _table(n=60, p=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, p))


def _with_cell(value, dtype=object):
    X = _table().astype(dtype)
    X[SECRET_ROW, 1] = value
    return X


# ----------------------------------------------------------------- duplicates

@pytest.mark.filterwarnings("ignore::sklearn_dppca.privacy.PrivacyUtilityWarning")
def test_repeated_rows_never_make_a_fit_fail():
    # duplicates="raise" made success depend on ties in the private data and its
    # message counted them and named the rows; it is gone, and a repeated row is
    # a zero term (covered by the sensitivity) for every estimator.
    X = _table(n=300)
    X[SECRET_ROW] = X[7]
    X[250:] = X[:50]                      # many repeats, as in the Adult table
    for estimator in (DPKendallDirections, DPPCA):
        assert "duplicates" not in estimator().get_params()
    assert "duplicates" not in inspect.signature(spherical_kendall).parameters
    fitted = DPPCA(eps=4.0, random_state=0).fit(X)
    assert np.all(np.isfinite(fitted.components_))
    K = spherical_kendall(X)
    assert 0 < np.trace(K) < 1            # the coincident pairs add nothing


# ------------------------------------------------------------ non-numeric cells

NON_NUMERIC = {
    # numpy's conversion error quoted the cell
    "text cell": lambda: _with_cell(SECRET_CELL),
    # ... and a string dtype's length ('<U4242') is the longest cell's
    "strings": lambda: np.array([["1.5", "x" * SECRET_LINE]] * 4),
    # scikit-learn's complex-data error printed the whole array
    "complex": lambda: _with_cell(SECRET_VALUE * 1j, complex),
    "sequence cell": lambda: _with_cell([SECRET_VALUE]),
}


def _fitted_pca():
    return DPPCA(eps=4.0, random_state=0).fit(_table())


ENTRY_POINTS = {
    "DPKendallDirections.fit": lambda X: DPKendallDirections(random_state=0).fit(X),
    "DPScree.fit": lambda X: DPScree(random_state=0).fit(X),
    "DPPCA.fit": lambda X: DPPCA(random_state=0).fit(X),
    "spherical_kendall": spherical_kendall,
    "_pair_scatter": lambda X: _pair_scatter(X, floor=1.0),
    "transform": lambda X: _fitted_pca().transform(X),
    "inverse_transform": lambda X: _fitted_pca().inverse_transform(X[:, :2]),
    "ReleasedPCA.transform": lambda X: load_release(export_release(_fitted_pca(), allow_seeded=True))
    .transform(X),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("case", list(NON_NUMERIC))
def test_non_numeric_cells_are_not_quoted(entry, case):
    X = NON_NUMERIC[case]()
    if case == "strings" and entry == "inverse_transform":
        X = np.array([["1.5", "x" * SECRET_LINE]] * 4)
    messages = _said(lambda: ENTRY_POINTS[entry](X))
    assert "X" in messages[0]
    if case == "complex":
        # (the words scikit-learn's estimator checks look for)
        assert "Complex data not supported" in messages[0]
    _assert_no_secret(messages, "xxxx")


@pytest.mark.parametrize("entry", ["spherical_kendall", "_pair_scatter"])
def test_dataframe_text_cells_are_not_quoted(entry):
    # (the estimators drop a non-numeric column by its public name; the kernel
    # functions convert every column)
    X = pd.DataFrame(_table(), columns=["a", "b", "c"]).astype({"b": object})
    X.loc[SECRET_ROW, "b"] = SECRET_CELL
    _assert_no_secret(_said(lambda: ENTRY_POINTS[entry](X)))


def test_dropped_column_warning_names_the_column_only():
    X = pd.DataFrame(_table(), columns=["a", "b", "c"])
    X["notes"] = "ok"
    X.loc[SECRET_ROW, "notes"] = SECRET_CELL
    with pytest.warns(UserWarning, match="notes") as caught:
        DPKendallDirections(random_state=0).fit(X)
    _assert_no_secret([str(w.message) for w in caught])


VALUE_FUNCTIONS = {
    "quantile": lambda x: quantile(x, 0.5, 1.0, np.random.default_rng(0)),
    "gaussian_mechanism": lambda x: gaussian_mechanism(x, 1.0, 1.0, 1e-5,
                                                       np.random.default_rng(0)),
    "laplace_mechanism": lambda x: laplace_mechanism(x, 1.0, 1.0,
                                                     np.random.default_rng(0)),
}
VALUE_CASES = {
    "text cell": lambda: np.array([1.0] * 9 + [SECRET_CELL], dtype=object),
    "strings": lambda: np.array(["1.5"] * 9 + ["x" * SECRET_LINE]),
}


@pytest.mark.parametrize("function", list(VALUE_FUNCTIONS))
@pytest.mark.parametrize("case", list(VALUE_CASES))
def test_private_values_given_to_mechanisms_are_not_quoted(function, case):
    _assert_no_secret(_said(lambda: VALUE_FUNCTIONS[function](VALUE_CASES[case]())),
                      "xxxx")


HISTOGRAM_FUNCTIONS = {
    "grid_cell_index": lambda x: grid_cell_index(np.c_[x, x], [-1, 0, 1], [-1, 0, 1]),
    "histogram_counts": lambda x: histogram_counts(np.c_[x, x], [-1, 0, 1], [-1, 0, 1]),
    "dyadic_argmax": lambda x: dyadic_argmax(x, 1.0, np.random.default_rng(0)),
}


@pytest.mark.parametrize("function", list(HISTOGRAM_FUNCTIONS))
def test_private_points_given_to_histograms_are_not_quoted(function):
    x = VALUE_CASES["text cell"]()
    _assert_no_secret(_said(lambda: HISTOGRAM_FUNCTIONS[function](x)))


# ------------------------------------------------------------------ data domain

@pytest.mark.parametrize("estimator", [
    DPScree(random_state=0), DPPCA(random_state=0),
    DPKendallDirections(compute_nonprivate=True, random_state=0)])
def test_domain_error_quotes_no_value(estimator):
    X = _with_cell(SECRET_VALUE * 1e195, float)       # 1.23456789e200
    assert np.max(np.abs(X)) > MAX_ABS_VALUE
    messages = _said(lambda: estimator.fit(X))
    assert "2**500" in messages[0]
    _assert_no_secret(messages, "e+200", "e200", "1e+", str(SECRET_ROW))


# ------------------------------------------------------------------ group labels

@pytest.mark.parametrize("label", [SECRET_LABEL, SECRET_VALUE, ("SECRET", 4242)])
def test_undeclared_labels_are_not_quoted(label):
    y = np.array(["north"] * 60, dtype=object)
    y[SECRET_ROW] = label
    messages = _said(lambda: DPPCA(groups=["north", "south"], random_state=0)
                     .fit(_table(), y))
    assert "groups" in messages[0]
    _assert_no_secret(messages, str(SECRET_ROW))
    points = np.zeros((60, 2))
    _assert_no_secret(_said(lambda: histogram_counts(points, [-1, 0, 1], [-1, 0, 1],
                                                     groups=y, labels=["north"])))


# ---------------------------------------------------------------- the CSV reader

def _csv(tmp_path, column, cell):
    """A CSV file of 4300 rows whose column ``column`` holds ``cell`` on line
    :data:`SECRET_LINE` (the header is line 1)."""
    rng = np.random.default_rng(3)
    rows = [[f"{v:.4f}" for v in rng.normal(size=2)] + ["north" if i % 2 else "south"]
            for i in range(4300)]
    rows[SECRET_LINE - 2][["age", "income", "site"].index(column)] = cell
    path = tmp_path / "survey.csv"
    path.write_text("age,income,site\n" + "".join(",".join(r) + "\n" for r in rows),
                    encoding="utf-8")
    return path


CSV_CASES = {
    "text cell": ("age", SECRET_CELL),
    "number with separators": ("age", "123_456.789"),
    "missing cell": ("income", "NA"),
    "infinite cell": ("income", "-inf"),
    "beyond the domain": ("age", "1.23456789e300"),
    "undeclared label": ("site", SECRET_LABEL),
    "empty label": ("site", " "),
}


@pytest.mark.parametrize("case", list(CSV_CASES))
@pytest.mark.parametrize("columns", [None, ["age", "income"]])
def test_csv_errors_name_the_column_not_the_cell_or_line(case, columns, tmp_path):
    column, cell = CSV_CASES[case]
    path = _csv(tmp_path, column, cell)
    with pytest.raises(UserError) as error:
        read_csv(str(path), columns, "site", ["north", "south"], MAX_ABS_VALUE)
    message = str(error.value)
    assert f"'{column}'" in message
    _assert_no_secret([message], "e300", "e+300", "line 4", "row 4")


def test_command_line_prints_one_generic_error_line(tmp_path):
    path = _csv(tmp_path, "age", SECRET_CELL)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(path), "--columns", "age,income", "--group", "site",
                     "--groups", "north,south"])
    assert code == 2
    assert err.getvalue().startswith("error: ") and err.getvalue().count("\n") == 1
    assert "'age'" in err.getvalue()
    _assert_no_secret([err.getvalue(), out.getvalue()], "line 4", "row 4")


def test_explorer_upload_errors_are_generic(tmp_path):
    from sklearn_dppca.app._sources import load_source

    path = _csv(tmp_path, "site", SECRET_LABEL)
    with pytest.raises(UserError) as error:
        load_source("upload", path=str(path), file_name="survey.csv",
                    columns="age,income", group_column="site",
                    group_labels="north,south")
    assert "'site'" in str(error.value)
    _assert_no_secret([str(error.value)], "line 4", "row 4")
