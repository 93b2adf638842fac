"""The explorer's data sets: where a table comes from (the page's own data sets, an
uploaded CSV file read by its declarations) and the key that finds its budget
file (a keyed hash of the parsed table)."""

import csv
import hashlib
import hmac
import math
import os
import secrets
import tempfile

from .._data_sources import (
    TabularData,
    UserError,
    builtin_data,
    csv_columns,
    parse_names,
    read_csv,
)
from .._validation import MAX_ABS_VALUE

#: The value of the data source of an uploaded CSV file (a local explorer's only).
UPLOAD = "upload"
#: The data sources of the page: value -> label (:data:`UPLOAD`: a CSV file).
SOURCES = {
    "builtin": "built-in 'gau' data (5 groups, n = 5000, p = 20)",
    "wine": "wine (scikit-learn, 3 cultivars, n = 178, p = 13)",
    "breast_cancer": "breast cancer (scikit-learn, 2 diagnoses, n = 569, p = 30)",
    "diabetes": "diabetes (scikit-learn, no groups, n = 442, p = 10)",
    "digits": "digits (scikit-learn, 10 digits, n = 1797, p = 64)",
    "adult": "adult (UCI Adult, numeric columns, no groups, n = 32561, p = 5; "
             "mixed units: scale)",
    UPLOAD: "upload a CSV file",
}

#: Suffix of a budget file: ``data-<key>.dppca-budget.json`` (and, before keys,
#: ``data.csv.dppca-budget.json``).
BUDGET_SUFFIX = ".dppca-budget.json"

#: The secret of a budget directory, beside its budget files: the key of a data set
#: is a keyed hash, so that a budget file shown to others cannot test guesses about
#: the data.
_SECRET_NAME = ".dppca-data-secret"

#: The declarations as the page names them in messages about a CSV file.
_APP_SPELLING = {"columns": "'Variables'", "group": "'Group column'",
                "groups": "'Group labels'"}


# --------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------
def _example_data(name):
    """A scikit-learn example set as a :class:`TabularData` (labels as public names)."""
    if name == "wine":
        from ..datasets import load_wine_frame as load
    elif name == "breast_cancer":
        from ..datasets import load_breast_cancer_frame as load
    else:
        load = None
    if load is not None:
        X, y = load()
        labels = [str(label) for label in dict.fromkeys(sorted(map(str, y.unique())))]
        return TabularData(X, y.astype(str).to_numpy(dtype=object), labels,
                           f"scikit-learn example data '{name}'", "class")
    import sklearn.datasets

    if name == "diabetes":
        X = sklearn.datasets.load_diabetes(as_frame=True).data
        return TabularData(X, None, None, "scikit-learn example data 'diabetes'")
    bunch = sklearn.datasets.load_digits(as_frame=True)
    labels = [str(digit) for digit in range(10)]      # the ten digits, public
    y = bunch.target.astype(str).to_numpy(dtype=object)
    return TabularData(bunch.data, y, labels, "scikit-learn example data 'digits'", "digit")


def source_columns(source, *, path=None, file_name=None):
    """The names a source's variables may be picked from (public: a data set's
    declared column names, or an uploaded file's header; no cell is read):
    empty for a source without them (the data set as started, an upload not yet
    chosen). Every problem is a :class:`UserError`."""
    if source not in SOURCES:
        return []
    if source == UPLOAD:
        if path is None:
            return []
        return csv_columns(path, shown_as=file_name or os.path.basename(path))
    if source in ("builtin", "adult"):
        return [str(name) for name in builtin_data(
            "gau" if source == "builtin" else source).X.columns]
    return [str(name) for name in _example_data(source).X.columns]


def data_preview_text(data):
    """What a fit on ``data`` reads, by name and type, never by value: the number
    of rows, each variable (a number: the reader refuses any other cell) and the
    group column with its declared labels."""
    n, p = data.X.shape
    names = [str(name) for name in getattr(data.X, "columns", range(p))]
    text = (f"{n} rows x {p} variables, each a number: " + ", ".join(names[:40])
            + (f", ... ({p - 40} more)" if p > 40 else "") + ".")
    if data.labels:
        column = f" (column {data.group_column!r})" if data.group_column else ""
        text += (f" Groups{column}: the declared labels "
                 f"{', '.join(map(str, data.labels))}, drawn as groups, never a "
                 "variable.")
    return text + " No value is shown here."


def _names_or_none(text, option, what):
    """A comma-separated list typed in the page, or the names picked in a list
    (a tuple: names may hold commas), or None when there are none."""
    if isinstance(text, (list, tuple)):
        return [str(name) for name in text] or None
    if text is None or not str(text).strip():
        return None
    return parse_names(text, option, what)


def _select_columns(data, columns):
    """``data`` with only the declared ``columns`` (of a built-in or example set)."""
    if columns is None:
        return data
    missing = [name for name in columns if name not in data.X.columns]
    if missing:
        raise UserError(f"'Variables': no column {', '.join(map(repr, missing[:12]))} in "
                        f"{data.source} (its columns: "
                        f"{', '.join(map(str, list(data.X.columns)[:12]))}, ...).")
    return TabularData(data.X[list(columns)], data.y, data.labels, data.source,
                       data.group_column)


def load_source(source, *, path=None, file_name=None, columns="", group_column="",
                group_labels="", data_name=""):
    """The data of one source of the page; every problem is a :class:`UserError`.

    ``source`` is a key of :data:`SOURCES`. For ``"upload"``, ``path`` is where the
    file is and ``file_name`` its name (used in messages); ``columns`` (the
    names picked, or comma-separated text), ``group_column`` and ``group_labels``
    are the page's fields; ``data_name``, when given, is the custodian's name for
    an uploaded data set, which then keys its budget (:func:`declare_name`: an
    edited cell or a renamed copy keeps the budget). For the other sources,
    ``columns`` may pick some of their variables; their groups are their own and
    their budgets keyed by their contents.
    """
    if source not in SOURCES:
        raise UserError(f"unknown data source {source!r}; choose one of "
                        f"{', '.join(SOURCES)}.")
    variables = _names_or_none(columns, "'Variables'", "column")
    if source != UPLOAD:
        if source in ("builtin", "adult"):
            data = builtin_data("gau" if source == "builtin" else source)
        else:
            data = _example_data(source)
        # the whole table, whichever variables are picked: one budget for its rows
        fingerprint = _fingerprint_of(data)
        data = _select_columns(data, variables)
        data.fingerprint = fingerprint
        return data
    if path is None:
        raise UserError("no file uploaded yet: choose a CSV file (with a header row) first.")
    group = str(group_column or "").strip() or None
    labels = _names_or_none(group_labels, "'Group labels'", "label")
    if group is not None and labels is None:
        raise UserError("'Group column' needs 'Group labels' a,b,c: the public list of the "
                        "group labels, declared (from the study design), never read off "
                        "the data.")
    if labels is not None and group is None:
        raise UserError("'Group labels' need a 'Group column': the column holding them.")
    if variables is not None and group is not None and group in variables:
        raise UserError(f"'Variables' and 'Group column' both name {group!r}; the group "
                        "column cannot also be a variable.")
    data = read_csv(path, variables, group, labels, max_abs=MAX_ABS_VALUE,
                    shown_as=file_name or os.path.basename(path), spelling=_APP_SPELLING)
    if str(data_name or "").strip():
        return declare_name(data, data_name)
    data.fingerprint = csv_fingerprint(path)
    return data


def csv_fingerprint(path):
    """The fingerprint (:func:`_fingerprint_of`) of the whole table of a CSV file
    that :func:`~sklearn_dppca._data_sources.read_csv` has read: every column,
    whichever are declared the variables."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle, strict=True))
    while rows and not rows[0]:
        rows.pop(0)
    return _fingerprint(rows[0], rows[1:])


# --------------------------------------------------------------------------------------
# the key of a data set
# --------------------------------------------------------------------------------------
def _cell(value):
    """A cell as the key reads it: a number by its value (``1``, ``1.0`` and ``1e0``
    alike), anything else as its text."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value).strip()
    return repr(number) if math.isfinite(number) else str(value).strip()


def _fingerprint(header, rows):
    """SHA-256 of a table in a canonical form: columns by name, rows sorted, cells
    by :func:`_cell`. Kept in memory only (it is no secret from a guesser)."""
    order = sorted(range(len(header)), key=lambda j: str(header[j]).strip())
    digest = hashlib.sha256()
    digest.update("\x1f".join(str(header[j]).strip() for j in order).encode())
    canonical = sorted("\x1f".join(_cell(row[j]) if j < len(row) else "" for j in order)
                       for row in rows)
    for row in canonical:
        digest.update(b"\x1e" + row.encode())
    return digest.hexdigest()


def _fingerprint_of(data):
    """The fingerprint of a :class:`TabularData`: its variables and, under its group
    column's name (``"group"`` if unnamed), its group labels; what
    :func:`load_source` stored, if any (the whole table before a choice of
    variables)."""
    stored = getattr(data, "fingerprint", None)
    if stored is not None:
        return stored
    X = data.X
    if hasattr(X, "columns"):
        header = [str(name) for name in X.columns]
        columns = [X.iloc[:, j].tolist() for j in range(X.shape[1])]
    else:                           # an array given to create_app
        import numpy as np

        values = np.asarray(X)
        header = [f"x{j}" for j in range(values.shape[1])]
        columns = values.T.tolist()
    if data.y is not None:
        header.append(str(data.group_column or "group"))
        columns.append([str(label) for label in data.y])
    return _fingerprint(header, list(zip(*columns)) if columns else [])


def _directory_secret(directory):
    """The secret of ``directory``'s budgets (made once, readable by its owner only)."""
    path = os.path.join(directory, _SECRET_NAME)
    try:
        with open(path, encoding="ascii") as stream:
            secret = stream.read().strip()
        if secret:
            return secret
    except FileNotFoundError:
        pass
    except OSError as error:
        raise UserError(f"cannot read {path!r}: {error.strerror or error}.") from None
    try:
        handle, temporary = tempfile.mkstemp(prefix=".dppca-secret.", dir=directory)
        with os.fdopen(handle, "w", encoding="ascii") as stream:
            stream.write(secrets.token_hex(32) + "\n")
        try:
            os.link(temporary, path)          # fails if another process made it first
        except FileExistsError:
            pass
        finally:
            os.unlink(temporary)
    except OSError as error:
        raise UserError(f"cannot write {path!r}: {error.strerror or error}.") from None
    return _directory_secret(directory)


#: What a declared data-set name is keyed as (never equal to a table's fingerprint).
_DECLARED_PREFIX = "declared data set name: "


def declare_name(data, name):
    """Key ``data``'s budget by the custodian's ``name`` for it, not its cells:
    the same name finds the same budget whatever the file's bytes (an edited
    cell, a renamed column, ``true``/``false`` for 0/1) under the same secret."""
    text = " ".join(str(name).split())
    if not text:
        raise UserError("the data set's name (--data-name, 'Data set name') must not "
                        "be empty.")
    data.fingerprint = _DECLARED_PREFIX + text
    return data


def data_key(data, directory="."):
    """The key of a data set's budget in ``directory``: an HMAC-SHA256, under the
    directory's secret, of the parsed table (:func:`_fingerprint_of`).

    The same table (the same column names and cells, in any row or column order)
    has the same key, whatever its file is called or wherever it was picked; a
    data set its custodian named (:func:`declare_name`) is keyed by that name.
    """
    secret = _directory_secret(os.path.abspath(directory))
    return hmac.new(secret.encode(), _fingerprint_of(data).encode(),
                    hashlib.sha256).hexdigest()


def budget_file_for(key, directory="."):
    """The budget file of the data set whose :func:`data_key` is ``key``:
    ``data-<key>.dppca-budget.json`` in ``directory`` (16 hex digits of the key
    in the name; the whole key inside)."""
    return os.path.join(directory, f"data-{key[:16]}{BUDGET_SUFFIX}")
