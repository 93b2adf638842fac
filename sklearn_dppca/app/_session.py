"""The explorer's logic, without any web framework: one :class:`Explorer` per data set.

An explorer holds the data, the data set's :class:`~sklearn_dppca.PrivacyAccountant`
(opened on its budget file with :meth:`~sklearn_dppca.PrivacyAccountant.open`, so
that every explorer, process and command line on the file shares one budget under a
lock) and the fits made so far. A fit charges the accountant before it reads the data
(``DPPCA(accountant=)``), and the charge is on disk before the fit computes, so a fit
that does not fit what is left is refused and spends nothing, and one that dies
after its charge stays charged.

A data set's budget is found by a key of its parsed table, not by a file name: the
same table uploaded as ``data (1).csv``, or picked as one of the page's own data
sets, finds the same budget file (:func:`data_key`, :func:`budget_file_for`). Everything
else (figures, summaries, ledgers, downloads) is drawn from released values and is
free. Nothing non-private is drawn or written unless the fit stored the reference
and the caller asks for it: without the request, pictures are drawn from the
release as exported (which holds no reference), not from the estimator.
"""

import csv
import hashlib
import hmac
import io
import json
import math
import os
import secrets
import tempfile
import threading
import warnings

from .._data_sources import (
    TabularData,
    UserError,
    builtin_data,
    parse_names,
    read_csv,
)
from .._budget_split import BUDGET_PARTS, check_budget_split
from .._budget_words import budget_words, delta_note, spent_after
from .._pca import DPPCA
from .._release_write import export_release
from .._released_pca import load_release
from .._requests import budget_split, pairs_for, planned_spend, shares_note
from .._summary import ledger_table, plan_text
from .._validation import MAX_ABS_VALUE
from ..display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
    plot_overview,
)
from ..privacy import BudgetExceededError, PrivacyAccountant

#: The data sources of the page: value -> label (``upload``: a CSV file).
SOURCES = {
    "builtin": "built-in 'gau' data (5 groups, n = 5000, p = 20)",
    "wine": "wine (scikit-learn, 3 cultivars, n = 178, p = 13)",
    "breast_cancer": "breast cancer (scikit-learn, 2 diagnoses, n = 569, p = 30)",
    "diabetes": "diabetes (scikit-learn, no groups, n = 442, p = 10)",
    "digits": "digits (scikit-learn, 10 digits, n = 1797, p = 64)",
    "adult": "adult (UCI Adult, numeric columns, no groups, n = 32561, p = 5; "
             "mixed units: scale)",
    "upload": "upload a CSV file",
}
#: The pictures of a fit.
DISPLAYS = ("scree", "loading", "variable", "score", "biplot", "overview")
SCORE_KINDS = ("histogram", "points", "both")
#: Suffix of the folder of a data set's releases, beside its budget file.
_RELEASES_SUFFIX = ".dppca-releases"
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
FIGURE_FORMATS = ("png", "pdf", "svg")
#: The mark the page and the figures carry when the reference is drawn.
REFERENCE_MARK = "NON-PRIVATE reference shown: never publish this"
_SINGLE_FIGSIZE = (8.0, 6.0)
_OVERVIEW_FIGSIZE = (17.0, 11.0)
# One fit at a time in this process: the budget file is read, charged and
# written as one step.
_FIT_LOCK = threading.Lock()


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


def _names_or_none(text, option, what):
    """A comma-separated list typed in the page, or None when the box is empty."""
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
                group_labels=""):
    """The data of one source of the page; every problem is a :class:`UserError`.

    ``source`` is a key of :data:`SOURCES`. For ``"upload"``, ``path`` is where the
    file is and ``file_name`` its name (used in messages); ``columns``,
    ``group_column`` and ``group_labels`` are the page's text boxes. For the other
    sources, ``columns`` may pick some of their variables; their groups are their
    own.
    """
    if source not in SOURCES:
        raise UserError(f"unknown data source {source!r}; choose one of "
                        f"{', '.join(SOURCES)}.")
    variables = _names_or_none(columns, "'Variables'", "column")
    if source != "upload":
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


def data_key(data, directory="."):
    """The key of a data set's budget in ``directory``: an HMAC-SHA256, under the
    directory's secret, of the parsed table (:func:`_fingerprint_of`).

    The same table (the same column names and cells, in any row or column order)
    has the same key, whatever its file is called or wherever it was picked.
    """
    secret = _directory_secret(os.path.abspath(directory))
    return hmac.new(secret.encode(), _fingerprint_of(data).encode(),
                    hashlib.sha256).hexdigest()


def budget_file_for(key, directory="."):
    """The budget file of the data set whose :func:`data_key` is ``key``:
    ``data-<key>.dppca-budget.json`` in ``directory`` (16 hex digits of the key
    in the name; the whole key inside)."""
    return os.path.join(directory, f"data-{key[:16]}{BUDGET_SUFFIX}")


def open_explorer(data, budget, directory=".", budget_file=None, legacy=None):
    """The :class:`Explorer` of ``data``: its budget file is ``budget_file`` if
    given, else ``legacy`` (a file named after the data, from before keys) if it
    exists, else the keyed file of ``directory`` (:func:`budget_file_for`)."""
    directory = os.path.dirname(os.path.abspath(budget_file)) if budget_file is not None \
        else directory
    key = data_key(data, directory)
    if budget_file is None:
        budget_file = legacy if legacy is not None and os.path.exists(legacy) else \
            budget_file_for(key, directory)
    return Explorer(data, budget, budget_file, key=key)


# --------------------------------------------------------------------------------------
# the budget file
# --------------------------------------------------------------------------------------
def _check_budget(budget):
    try:
        eps, delta = (float(value) for value in budget)
    except (TypeError, ValueError):
        raise TypeError("budget must be a pair (eps, delta) of numbers.") from None
    # (the accountant checks the ranges and names eps or delta)
    PrivacyAccountant(eps, delta)
    return eps, delta


def _open_budget(path, budget, key=None):
    """The accountant of the budget file ``path``, opened
    (:meth:`~sklearn_dppca.PrivacyAccountant.open`): created with ``budget`` if
    new, with the data set's ``key``.

    Raises :class:`UserError` when the file holds another total than ``budget``
    or is not a saved accountant: the budget of a data set is never reset or
    raised by restarting with other numbers.
    """
    eps, delta = _check_budget(budget)
    try:
        return PrivacyAccountant.open(path, total=(eps, delta),
                                      key=None if os.path.exists(path) else key)
    except OSError as error:
        raise UserError(f"cannot use the budget file {path!r}: "
                        f"{error.strerror or error}.") from None
    except (ValueError, TypeError) as error:
        if "holds a total" not in str(error):
            raise UserError(f"the budget file {path!r} cannot be used: {error}") from None
    stored = PrivacyAccountant.load(path)
    raise UserError(
        f"the budget file {path!r} holds a total budget of eps={stored.eps:g}, "
        f"delta={stored.delta:g}, not eps={eps:g}, delta={delta:g}: pass the same "
        f"budget (--budget {stored.eps:g},{stored.delta:g}) or another budget file.")


# --------------------------------------------------------------------------------------
# fit parameters
# --------------------------------------------------------------------------------------
def _number(params, key, cast=float):
    value = params.get(key)
    try:
        number = cast(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, got {value!r}.") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError(f"{key} must be a finite number, got {value!r}.")
    return number


def _whole(params, key, minimum):
    number = _number(params, key)
    if number != int(number) or number < minimum:
        raise ValueError(f"{key} must be a whole number >= {minimum}, got {params.get(key)!r}.")
    return int(number)


def _split(params, scale):
    """DPPCA's budget split from the page's shares: fractions of the fit's eps, as
    everywhere (:func:`~sklearn_dppca._requests.budget_split`)."""
    parts = ("loading", "scree", "score") + (("scale",) if scale else ())
    try:
        return budget_split({part: _number(params, f"split_{part}") for part in parts})
    except ValueError as error:
        raise ValueError(str(error).replace("the budget shares",
                                            "the budget shares (split_...)")) from None


def _score_axes(text, n_components):
    """The fit's score axes: ``"1,2"`` (1-based) -> ``(0, 1)``."""
    parts = [part.strip() for part in str(text if text is not None else "1,2").split(",")]
    try:
        axes = tuple(int(part) - 1 for part in parts)
    except ValueError:
        raise ValueError(f"score_axes must be two component numbers such as 1,2, got "
                         f"{text!r}.") from None
    if len(axes) != 2 or axes[0] == axes[1] or min(axes) < 0 \
            or max(axes) >= max(n_components, 2):
        raise ValueError(f"score_axes must be two different component numbers in "
                         f"1..{n_components} (n_components), got {text!r}.")
    return axes


def split_defaults(scale):
    """DPPCA's default budget split as the page's shares, by input id.

    Parameters
    ----------
    scale : bool
        Whether the fit scales its columns: DPPCA's default split then gives the
        private spreads a part of their own.

    Returns
    -------
    shares : dict
        ``split_<part>`` -> share, one per part of ``budget_split`` (0: no part).
    """
    split = check_budget_split(DPPCA().get_params()["budget_split"], scale)
    return {f"split_{part}": split.get(part, 0.0) for part in BUDGET_PARTS}


def fit_defaults(scale=None):
    """The page's fit inputs, by input id, when none is given: DPPCA's defaults.

    Read off the estimator, so that the page cannot drift from it: ``bins`` 0 is
    DPPCA's ``"auto"``, ``score_axes`` are its ``axes`` numbered from 1, and the
    budget shares are its default split (see :func:`split_defaults`).

    Parameters
    ----------
    scale : bool, default=None
        The split for this ``scale``; None: DPPCA's default ``scale``.

    Returns
    -------
    defaults : dict
        Input id -> value.
    """
    dppca = DPPCA().get_params()
    scale = dppca["scale"] if scale is None else scale
    return {
        "n_components": dppca["n_components"], "eps": dppca["eps"],
        "delta": dppca["delta"], **split_defaults(scale), "scale": scale,
        "radial": dppca["radial"], "accounting": dppca["accounting"],
        "scree_method": dppca["scree_method"], "histogram": dppca["histogram"],
        "bins": 0 if dppca["bins"] == "auto" else dppca["bins"],
        "score_axes": ",".join(str(axis + 1) for axis in dppca["axes"]),
        "nonprivate": dppca["compute_nonprivate"],
    }


def _dppca_params(params, n_samples):
    """DPPCA's keyword arguments from the page's fit inputs (``params``: by input id).

    Keys: ``n_components``, ``eps``, ``delta``, ``split_loading``, ``split_scree``,
    ``split_score``, ``split_scale`` (with ``scale``), ``scale``, ``radial``,
    ``accounting``, ``scree_method``, ``histogram``, ``bins`` (0: automatic),
    ``score_axes`` (``"1,2"``) and ``nonprivate``. Missing keys take DPPCA's
    defaults (:func:`fit_defaults`). Raises ValueError naming the input.
    """
    scale = bool(params.get("scale", fit_defaults()["scale"]))
    params = {**fit_defaults(scale), **params}
    k = _whole(params, "n_components", 1)
    bins = _whole(params, "bins", 0)
    kwargs = dict(
        n_components=k, eps=_number(params, "eps"), delta=_number(params, "delta"),
        budget_split=_split(params, scale), scale=scale,
        radial=str(params["radial"]), accounting=str(params["accounting"]),
        scree_method=str(params["scree_method"]), histogram=str(params["histogram"]),
        bins="auto" if bins == 0 else bins,
        axes=_score_axes(params["score_axes"], k) if k >= 2 else (0, 1),
        compute_nonprivate=bool(params["nonprivate"]),
        # the front ends' own rule (as the command line's): DPPCA's default, every
        # pair, up to LARGE_N rows, the incomplete U-statistic above
        pairs=pairs_for(n_samples),
        # the page never sets a seed (a release made with a known seed is not
        # private); tests do, for reproducible pictures
        random_state=params.get("random_state"),
    )
    return kwargs


class _Fit:
    """One release shown by the explorer: its label, the release as exported (no
    reference) and, for a fit made by this process, the fitted DPPCA.

    ``estimator`` is None for a release read back from a file (an earlier run's
    fit, or a release JSON opened to look at): everything is drawn from
    ``release`` then, and there is no non-private reference to show.
    """

    def __init__(self, release, label, estimator=None, extra=None, path=None):
        self.release = release
        self.label = label
        self.estimator = estimator
        self.extra = dict(extra or {})
        self.path = path          # the file it is kept in (None: not kept)
        self.warnings = []
        self.notes = []     # why a fit was accepted, when that needs saying

    @classmethod
    def of_estimator(cls, estimator, label, extra):
        # what every picture is drawn from unless the reference is asked for: the
        # release as exported (no non-private value can be in it)
        return cls(load_release(export_release(estimator)), label, estimator, extra)

    @property
    def has_reference(self):
        return getattr(self.estimator, "nonprivate_", None) is not None

    def drawn(self, show_reference):
        """The object pictures are drawn from, and whether it holds the reference."""
        if show_reference and self.has_reference:
            return self.estimator, True
        return self.release, False

    def release_json(self, include_nonprivate=False):
        """The JSON release (with the reference only when asked and stored)."""
        with_reference = bool(include_nonprivate) and self.has_reference
        source = self.estimator if self.estimator is not None else self.release
        release = export_release(source, include_nonprivate=with_reference,
                                 extra=self.extra or None)
        return json.dumps(release, indent=2, allow_nan=False)

    def ledger_lines(self):
        """The release's own privacy ledger, as lines of text."""
        return [f"Privacy ledger of {self.label}:",
                ledger_table(self.release.privacy_ledger_, self.release.privacy_spent_)]


def _release_label(release, number=None):
    """The label of a release read back from a file: what it spent, k and p."""
    eps, delta = release.privacy_spent_
    head = f"fit {number}" if number is not None else "release"
    return (f"{head}: eps={eps:g} delta={delta:g} k={int(release.n_components_)} "
            f"p={int(release.n_features_in_)}")


def _read_release(path):
    """The release in the file ``path``, without any non-private reference it may
    hold (a file exported with ``include_nonprivate=True``): the explorer draws
    a file's reference never, since no fit of this page stored it."""
    release = load_release(path)
    if release.nonprivate_ is not None:
        release = load_release(export_release(release))
    return release


def open_release(path, name=None):
    """A release JSON file read to look at (free): a :class:`_Fit` without an
    estimator, and without the file's non-private reference if it holds one.
    Raises :class:`UserError` naming the file when it is no release."""
    shown = name or os.path.basename(str(path))
    try:
        release = _read_release(path)
    except (OSError, ValueError, TypeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise UserError(f"{shown!r} is not a sklearn-dppca release: {reason}") from None
    return _Fit(release, f"opened {shown}: " + _release_label(release).split(": ", 1)[1],
                path=str(path))


def _releases_dir_for(budget_file):
    """The folder of the releases kept beside ``budget_file``:
    ``data-<key>.dppca-releases`` for ``data-<key>.dppca-budget.json``."""
    budget_file = os.fspath(budget_file)
    stem = budget_file[:-len(BUDGET_SUFFIX)] if budget_file.endswith(BUDGET_SUFFIX) \
        else budget_file
    return stem + _RELEASES_SUFFIX


def _write_atomically(text, path):
    """Write ``text`` to ``path`` whole or not at all (a temporary file renamed)."""
    folder = os.path.dirname(path)
    handle, temporary = tempfile.mkstemp(prefix=".release.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text + "\n")
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


# --------------------------------------------------------------------------------------
# the explorer
# --------------------------------------------------------------------------------------
class Explorer:
    """One data set, its budget (an accountant kept in ``budget_file``) and its fits.

    Parameters
    ----------
    data : TabularData
        The variables (a DataFrame), the group labels of the rows and their public
        list, and a description of the source.
    budget : (float, float)
        The total ``(eps, delta)`` of the data set; an existing ``budget_file``
        must hold the same total.
    budget_file : str
        The JSON file of the accountant; read now (or created) and written after
        every charge. The releases of the fits are kept beside it, one JSON file
        each (without any non-private reference) in the folder
        ``data-<key>.dppca-releases`` of ``data-<key>.dppca-budget.json``, and
        read back by the next explorer on the file.
    """

    def __init__(self, data, budget, budget_file, key=None):
        self.data = data
        self.budget_file = os.path.abspath(budget_file)
        self.budget = _check_budget(budget)
        self.key = key
        self.accountant = _open_budget(self.budget_file, self.budget, key)
        self.releases_dir = _releases_dir_for(self.budget_file)
        self.fits = []
        self.unreadable = set()     # files in the releases folder that are no release
        self.refresh_releases()

    # -- the kept releases -------------------------------------------------------------
    def refresh_releases(self):
        """List the releases kept beside the budget file that are not listed yet
        (an earlier run's, or another process's), oldest first; returns how many
        were added. A file that is not a release is skipped: the page names it."""
        try:
            names = sorted(name for name in os.listdir(self.releases_dir)
                           if name.endswith(".json"))
        except FileNotFoundError:
            return 0
        known = {os.path.basename(fit.path) for fit in self.fits if fit.path}
        added = 0
        for name in names:
            if name in known:
                continue
            path = os.path.join(self.releases_dir, name)
            try:
                release = _read_release(path)
            except (OSError, ValueError, TypeError):
                self.unreadable.add(name)
                continue
            number = len(self.fits) + 1
            self.fits.append(_Fit(release, _release_label(release, number) + " (kept)",
                                  extra=release.release_, path=path))
            added += 1
        return added

    def _keep(self, fit, charge):
        """Write ``fit``'s release (never the reference) beside the budget file,
        named by the time and id of its charge, so that the next run lists it."""
        os.makedirs(self.releases_dir, exist_ok=True)
        stamp = "".join(ch for ch in str(charge.get("time", "")) if ch.isalnum())
        name = f"fit-{stamp}-{str(charge.get('id', secrets.token_hex(4)))[:8]}.json"
        path = os.path.join(self.releases_dir, name)
        _write_atomically(fit.release_json(include_nonprivate=False), path)
        fit.path = path

    # -- the budget ----------------------------------------------------------------
    def meter(self):
        """The budget spent, in words and numbers (the file as it is now).

        Returns
        -------
        dict
            ``eps_spent`` (the least eps at which all the fits so far, composed
            exactly, are private at the total delta), ``eps_total``,
            ``delta_total``, ``fraction`` (``eps_spent / eps_total``), ``charges``
            (how many fits were charged, by any session or process), ``text``
            ("0.90 of eps 1 spent at delta 1e-5 ..."), ``sentence`` (the exact
            composition in one sentence) and ``details`` (lines: each fit's eps at
            the total delta, its pure eps, delta and Gaussian mu, and the mu of
            all of them).
        """
        words = budget_words(self.accountant)
        charges = words["charges"]
        text = (f"{words['text']} ({100 * words['fraction']:.0f}% of the budget of this "
                f"data set; {charges} fit{'s' * (charges != 1)} charged)")
        return {**words, "text": text,
                "budget_file": os.path.basename(self.budget_file)}

    # -- fitting (spends) ------------------------------------------------------------
    def plan(self, params):
        """The plan of the next fit: what it would buy, as text, before any data
        are read and before anything is spent (:meth:`sklearn_dppca.DPPCA.plan`).

        Parameters
        ----------
        params : dict
            The fit inputs by id (see :func:`_dppca_params`).

        Returns
        -------
        str
            One line per mechanism step, then what is not estimable and the eps
            each part would need, then whether the fit fits what is left of the
            budget and what the meter would read after it.
        """
        n_samples, n_features = self.data.X.shape
        kwargs = _dppca_params(params, n_samples)
        estimator = DPPCA(groups=self.data.labels, **kwargs)
        plan = estimator.plan(n_samples, n_features)
        note = shares_note(kwargs["budget_split"])
        return "\n".join([plan_text(plan, kwargs["eps"], n_samples)]
                         + ([note] if note else [])
                         + [self._afford_text(planned_spend(plan))])

    def _afford_text(self, spend):
        """Whether a fit charging ``spend`` fits what is left, and the meter after
        it (public numbers only: the plan and the charges)."""
        words = budget_words(self.accountant)
        if not self.accountant.can_afford(spend):
            return (f"Over the budget: {words['text']}, and this fit needs more than "
                    "is left. Fit would be refused (nothing spent).")
        after = spent_after(self.accountant, spend)
        return (f"Within the budget: {words['text']} now, {after:.2f} after this fit "
                f"({100 * after / words['eps_total']:.0f}% of the budget).")

    def fit(self, params):
        """Fit DPPCA with the page's fit inputs, charging the data set's budget.

        Parameters
        ----------
        params : dict
            The fit inputs by id (see :func:`_dppca_params`).

        Returns
        -------
        index : int
            The position of the new fit in :attr:`fits`.

        Raises
        ------
        BudgetExceededError
            When the fit's planned spend does not fit what is left; raised by the
            accountant before the data are read for any release: nothing is spent
            and no fit is added.
        ValueError, TypeError
            For a bad input (named in the message).
        """
        kwargs = _dppca_params(params, self.data.X.shape[0])
        with _FIT_LOCK:
            # (the accountant writes its charge to the budget file, under the file's
            # lock, before the fit computes: kept even if the fit fails after it)
            estimator = DPPCA(groups=self.data.labels, accountant=self.accountant,
                              **kwargs)
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    estimator.fit(self.data.X, self.data.y)
            except BudgetExceededError as error:
                raise BudgetExceededError(self._refusal(kwargs, error)) from error
            charge = self.accountant.last_charge
        number = len(self.fits) + 1
        label = (f"fit {number}: eps={kwargs['eps']:g} delta={kwargs['delta']:g} "
                 f"k={kwargs['n_components']} p={self.data.X.shape[1]}"
                 + (" (+ NON-PRIVATE reference)" if kwargs["compute_nonprivate"] else ""))
        extra = {"data_source": self.data.source, "group_column": self.data.group_column}
        self.fits.append(_Fit.of_estimator(estimator, label, extra))
        self._keep(self.fits[-1], charge)
        # the library's warnings (a risky delta, a noisy release) for the page; their
        # messages quote no data value
        self.fits[-1].warnings = list(dict.fromkeys(
            " ".join(str(warning.message).split()) for warning in caught))
        note = delta_note(kwargs["eps"], kwargs["delta"], charge, self.accountant.delta)
        self.fits[-1].notes = [note] if note else []
        return len(self.fits) - 1

    def _refusal(self, kwargs, error):
        """The refusal in the page's words, then the accountant's exact account."""
        words = budget_words(self.accountant)
        return (f"This fit (eps={kwargs['eps']:g}, delta={kwargs['delta']:g}) needs more "
                f"than is left of the budget of this data set: {words['text']}. "
                f"Nothing was spent. Try a smaller eps, or show an earlier fit again "
                f"(free). Details: {error}")

    # -- drawing (free) ----------------------------------------------------------------
    def _fit(self, index):
        try:
            return self.fits[int(index)]
        except (IndexError, TypeError, ValueError):
            raise ValueError(f"there is no fit {index!r}; fit first.") from None

    def figure(self, index, display="overview", **drawing):
        """Draw one picture of fit ``index`` from released values (free; see
        :func:`draw_figure`); returns the Figure."""
        return draw_figure(self._fit(index), display, **drawing)[0]

    def figure_bytes(self, index, display="overview", fmt="png", dpi=100, **drawing):
        """The picture as a PNG, PDF or SVG file's bytes (see :func:`draw_figure`)."""
        return figure_bytes(self._fit(index), display, fmt, dpi, **drawing)

    def release_json(self, index, include_nonprivate=False):
        """The JSON release of fit ``index`` (with the reference only when asked and
        stored), as text that :func:`~sklearn_dppca.load_release` reads."""
        return self._fit(index).release_json(include_nonprivate)

    def summary(self, index, show_reference=False):
        """The fit's summary, from the release unless the reference is shown."""
        source, _ = self._fit(index).drawn(show_reference)
        return str(source.summary())

    def ledger(self, index):
        """The fit's privacy ledger and the data set's charges, as text."""
        lines = self._fit(index).ledger_lines()
        lines += ["", f"Charges to the budget of this data set ({self.data.source}):"]
        words = budget_words(self.accountant)
        lines.append(f"  {words['text']}. {words['sentence']}")
        lines.extend(f"  {line}" for line in words["details"])
        return "\n".join(lines)

    def labels(self):
        """The labels of the fits, oldest first."""
        return [fit.label for fit in self.fits]


# --------------------------------------------------------------------------------------
# drawing a release (free)
# --------------------------------------------------------------------------------------
def _pc_pair(pair):
    return f"PC{pair[0] + 1} x PC{pair[1] + 1}"


def view_axes(fit, axes):
    """The 0-based pair ``axes`` checked against ``fit``'s components (None: the
    fit's score axes; None too when it released fewer than 2)."""
    k = int(fit.release.n_components_)
    if axes is None or k < 2:
        own = fit.release.axes_ if fit.release.axes_ is not None else (0, 1)
        return tuple(int(a) for a in own) if k >= 2 else None
    a, b = (int(axis) for axis in axes)
    if a == b or min(a, b) < 0 or max(a, b) >= k:
        raise ValueError(f"the axes must be two different components in 1..{k} "
                         f"(the fit released {k}), got {a + 1} and {b + 1}.")
    return a, b


def _score_pair(fit, display, pair):
    """The score summary's own axes, when ``pair`` (the view's) is them; else a
    ValueError saying which pair was released: the score picture and the biplot
    are never drawn on other axes than the view asks for."""
    if fit.release.axes_ is None:
        return pair
    released = tuple(int(a) for a in fit.release.axes_)
    if pair is not None and tuple(pair) != released:
        raise ValueError(
            f"the {display} picture of this fit exists for {_pc_pair(released)} only "
            f"(its score summary was released for those axes), not for "
            f"{_pc_pair(pair)}: set the axes to {released[0] + 1}, {released[1] + 1}, "
            f"or fit again with score axes {pair[0] + 1},{pair[1] + 1} (spends).")
    return released


def draw_figure(fit, display="overview", *, axes=None, score_kind="histogram",
                biplot_alpha=1.0, show_reference=False, figsize=None):
    """Draw one picture of ``fit`` (a :class:`_Fit`) from released values (free).

    ``axes`` (0-based) applies to every two-axis picture; the score picture and
    the biplot exist only for the fit's own score axes, so other ``axes`` are a
    ValueError saying which were released (the overview draws its score and
    biplot panels on the fit's axes, labelled). The non-private reference is
    drawn only with ``show_reference`` and when the fit stored it; the figure then
    carries :data:`REFERENCE_MARK`. ``figsize`` (inches) sizes the figure to the
    page. Returns ``(figure, display_object)``: a matplotlib Figure (not
    registered with pyplot) and the display drawn (None for the overview).
    """
    if display not in DISPLAYS:
        raise ValueError(f"display must be one of {', '.join(DISPLAYS)}, got {display!r}.")
    if score_kind not in SCORE_KINDS:
        raise ValueError(f"score_kind must be one of {', '.join(SCORE_KINDS)}, got "
                         f"{score_kind!r}.")
    alpha = float(biplot_alpha)
    if not 0 <= alpha <= 1:
        raise ValueError(f"biplot_alpha must be in [0, 1], got {biplot_alpha!r}.")
    source, with_reference = fit.drawn(show_reference)
    pair = view_axes(fit, axes)
    _use_agg()
    shown = None
    if display == "overview":
        import matplotlib.pyplot as plt

        figure = plot_overview(source, axes=pair, figsize=figsize or _OVERVIEW_FIGSIZE,
                               score_kw={"kind": score_kind},
                               biplot_kw={"alpha": alpha})
        plt.close(figure)     # served as an image: pyplot must not keep it
    else:
        if display in ("score", "biplot") and pair is not None:
            pair = _score_pair(fit, display, None if axes is None else pair)
        figure, shown = _single(source, display, pair, score_kind, alpha,
                                figsize or _SINGLE_FIGSIZE)
    if with_reference:
        figure.text(0.5, 0.002, REFERENCE_MARK, ha="center", va="bottom",
                    color="red", fontsize=11, fontweight="bold")
    return figure, shown


def _single(source, display, pair, score_kind, alpha, figsize):
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, layout="constrained")
    ax = figure.add_subplot()
    if display == "scree":
        shown = ScreeDisplay.from_estimator(source, ax=ax, cumulative=True)
    elif display == "loading":
        if pair is None:
            shown = LoadingDisplay.from_estimator(source, ax=ax, kind="heatmap")
        else:
            shown = LoadingDisplay.from_estimator(source, ax=ax, axes=pair)
    elif pair is None:
        raise ValueError(f"the {display} picture needs at least 2 components.")
    elif display == "variable":
        shown = VariableDisplay.from_estimator(source, ax=ax, axes=pair)
    elif getattr(source, "frame_", None) is None:
        raise ValueError(f"the {display} picture needs the score summary, which this "
                         "fit did not release (a score share of 0, or too little "
                         "budget for these rows: see the fit's warnings).")
    elif display == "score":
        shown = ScoreDisplay.from_estimator(source, ax=ax, kind=score_kind)
    else:
        shown = BiplotDisplay.from_estimator(source, ax=ax, alpha=alpha)
    return figure, shown


def figure_bytes(fit, display="overview", fmt="png", dpi=100, **drawing):
    """The picture of ``fit`` as a PNG, PDF or SVG file's bytes (see
    :func:`draw_figure`)."""
    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FIGURE_FORMATS)}, got {fmt!r}.")
    figure, _ = draw_figure(fit, display, **drawing)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=dpi)
    return buffer.getvalue()


def describe_error(error):
    """A plain message for the page (an error's own message names inputs, never data)."""
    text = " ".join(str(error).split())
    if isinstance(error, BudgetExceededError):
        return f"Fit refused. {text}"
    return text


def warm_up():
    """Import the drawing stack and render a blank figure once, at start-up, so that
    the first fit's picture does not wait for them."""
    _use_agg()
    from matplotlib.figure import Figure

    figure = Figure(figsize=(1, 1))
    figure.add_subplot().set_title("warm-up")
    figure.savefig(io.BytesIO(), format="png")


def _use_agg():
    import sys

    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")

