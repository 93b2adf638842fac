"""Reading the command line's options into settings: each string parsed and checked,
the options of one run gathered in :class:`Options`, and the :class:`~sklearn_dppca.DPPCA`
they describe (:func:`dppca_for`).

A value the estimator checks is left to it, and its error message is put in the
command line's terms (:func:`in_cli_terms`); what only the command line knows
(its file names, its cap on the figure's grid, 1-based axes) is checked here.
"""

import os
import re

from ._cli_parser import FIT_OPTIONS
from ._requests import parse_bounds
from ._data_sources import BUILTIN_DATA
from ._data_sources import UserError as _UserError
from ._data_sources import parse_names as _parse_names

#: Largest number of histogram cells per axis the command line accepts.
_MAX_BINS = 1000
_FIGURE_FORMATS = (".png", ".pdf", ".svg")
#: The accounting of ``--noise classical`` without ``--accounting``: the classical
#: formula calibrates each part alone, so its parts are added (DPPCA's default
#: accounting, GDP, refuses that calibration: the command line picks the one that
#: works rather than fail on an option the user did not give).
_ACCOUNTING_WITH_CLASSICAL_NOISE = "basic"
#: DPPCA's spelling of a setting -> the command line's, so that the estimator's own
#: error messages (the only check of these values) name the option the user typed.
_OPTION_SPELLING = {
    "noise='classical'": "--noise classical",
    "accounting='basic'": "--accounting basic",
    "accounting='gdp'": "--accounting gdp",
    "scale=True": "--scale",
    "radial='clipped'": "--radial clipped",
    "radial='covariance'": "--radial covariance",
    "n_components": "--components",
    "budget_split": "--budget-split",
    "random_state": "--seed",
    "eps": "--eps",
    "delta": "--delta",
    "bins": "--bins",
    "axes": "--axes",
    "pairs": "--pairs",
    "scree_params": "--scree-params",
    "synthetic_sampling": "--synthetic-sampling",
    "bounds": "--bounds",
}



def _float(text, option):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise _UserError(f"{option} must be a number, got {text!r}.") from None
    return value


def in_cli_terms(error):
    """The library's error message on one line, naming options as typed."""
    message = " ".join(str(error).split())
    for spelling, option in _OPTION_SPELLING.items():
        # (a quoted name is a key listed in a message, not the option)
        message = re.sub(rf"(?<![\w'-]){re.escape(spelling)}(?![\w'])", option, message)
    return message


def _int(text, option, minimum=None):
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        raise _UserError(f"{option} must be an integer, got {text!r}.") from None
    if minimum is not None and value < minimum:
        raise _UserError(f"{option} must be an integer >= {minimum}, got {text!r}.")
    return value


def _int_list(text, option):
    parts = [part.strip() for part in str(text).split(",")]
    if not all(parts):
        raise _UserError(f"{option}: empty item in {text!r}.")
    return [_int(part, option) for part in parts]


def _parse_bins(text):
    """``B`` or ``B,B`` -> a pair; the cells' range is DPPCA's to check, the
    command line's own cap on the figure's grid is checked here."""
    values = _int_list(text, "--bins")
    if len(values) not in (1, 2) or max(values) > _MAX_BINS:
        raise _UserError(
            f"--bins must be one or two integers up to {_MAX_BINS} (e.g. 20 or 20,30), "
            f"got {text!r}."
        )
    return (values[0], values[-1])


def _parse_axes(text):
    """1-based ``A,B`` on the command line -> 0-based ``(a, b)``."""
    values = _int_list(text, "--axes")
    if len(values) != 2 or values[0] == values[1] or min(values) < 1:
        raise _UserError(
            "--axes must be two different 1-based component numbers such as 1,2, "
            f"got {text!r}."
        )
    return values[0] - 1, values[1] - 1


def _parse_budget(text):
    """``EPS,DELTA`` -> a pair (the accountant checks the ranges)."""
    parts = str(text).split(",")
    if len(parts) != 2:
        raise _UserError(f"--budget must be EPS,DELTA such as 4,1e-5, got {text!r}.")
    eps = _float(parts[0].strip(), "--budget EPS")
    delta = _float(parts[1].strip(), "--budget DELTA")
    from .privacy import check_delta, check_eps

    try:
        return check_eps(eps), check_delta(delta)
    except (ValueError, TypeError) as error:
        raise _UserError(f"--budget {text}: {' '.join(str(error).split())}") from None


def _parse_budget_split(text):
    """``loading=0.4,scree=0.2,score=0.4`` -> dict (the parts and shares are
    DPPCA's to check)."""
    split = {}
    for item in str(text).split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise _UserError(
                f"--budget-split must look like loading=0.4,scree=0.2,score=0.4, got {text!r}."
            )
        if name in split:
            raise _UserError(f"--budget-split: part {name!r} is given twice.")
        split[name] = _float(value.strip(), f"--budget-split {name}")
    return split


def _scree_value(text):
    """One ``--scree-params`` value: an int, a float, a boolean, None or a string
    (the scree method's own constraints decide whether it fits its key)."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def _parse_scree_params(text):
    """``key=value,...`` -> dict (names and values are DPPCA's to check)."""
    params = {}
    for item in str(text).split(","):
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise _UserError(
                f"--scree-params must look like quantile_level=0.95,pairs=64, got {text!r}."
            )
        if name in params:
            raise _UserError(f"--scree-params: {name!r} is given twice.")
        params[name] = _scree_value(value)
    return params


def _parse_eps_range(text):
    """``LOW:HIGH`` of ``--eps-range``: two positive eps, LOW < HIGH."""
    parts = str(text).split(":")
    if len(parts) != 2:
        raise _UserError(f"--eps-range must look like LOW:HIGH (e.g. 0.25:8), got "
                         f"{text!r}.")
    low, high = (_float(part, "--eps-range") for part in parts)
    if not (0 < low < high < float("inf")):
        raise _UserError(f"--eps-range needs 0 < LOW < HIGH, finite; got {text!r}.")
    return low, high


def _parse_bounds(text):
    """``--bounds``: the request layer's reading (:func:`~sklearn_dppca._requests.parse_bounds`)."""
    try:
        return parse_bounds(text, "--bounds")
    except ValueError as error:
        raise _UserError(str(error)) from None


def _parse_components(text):
    """An integer number of components, or a PVE fraction (DPPCA checks its range)."""
    if re.fullmatch(r"\s*[+-]?\d+\s*", str(text)):
        return _int(text, "--components")
    return _float(text, "--components")


def _parse_pairs(text):
    if text is None:
        return None
    if str(text).strip().lower() in ("all", "auto"):
        return str(text).strip().lower()
    return _int(text, "--pairs")


def _parse_labels(text):
    return _parse_names(text, "--groups", "label")


def _figure_path(path):
    extension = os.path.splitext(path)[1].lower()
    if extension not in _FIGURE_FORMATS:
        raise _UserError(
            f"--out {path!r}: the figure format is taken from the extension, which must "
            f"be one of {', '.join(_FIGURE_FORMATS)}."
        )
    return path


def _check_writable(path, option):
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise _UserError(f"{option} {path!r}: directory {directory!r} does not exist.")
    if os.path.isdir(path):
        raise _UserError(f"{option} {path!r} is a directory.")


class Options:
    """The validated options of one run: the command line's own (data, files, figure)
    and, in ``settings``, DPPCA's parameters the user gave (0-based axes)."""

    def __init__(self, args):
        self.csv = args.csv
        if self.csv is not None and args.data is not None:
            raise _UserError(f"--data {args.data} picks built-in data; it cannot be used "
                             "with a CSV file.")
        if args.data is not None and args.data not in BUILTIN_DATA:
            raise _UserError(f"--data must be one of {', '.join(BUILTIN_DATA)}, got "
                             f"{args.data!r}.")
        self.data = args.data or "gau"
        self.from_json = args.from_json
        self.quiet = args.quiet
        self.plan = args.plan
        self.eps_range = (_parse_eps_range(args.eps_range) if args.eps_range is not None
                          else None)
        if self.eps_range is not None and not self.plan:
            raise _UserError("--eps-range previews the plan across eps: give --plan too "
                             "(it reads no data and spends nothing).")
        self.scree_kind = args.scree_kind or "auto"
        # DPPCA's settings the user gave, by DPPCA's names, parsed in the order of
        # the options; an option not given is left out, so that DPPCA's own
        # default holds (one place for the defaults: the estimator's signature)
        parsers = {
            "eps": (args.eps, lambda text: _float(text, "--eps")),
            "delta": (args.delta, lambda text: _float(text, "--delta")),
            "n_components": (args.components, _parse_components),
            "axes": (args.axes, _parse_axes),
            "bins": (args.bins, _parse_bins),
            "histogram": (args.histogram, str),
            "radial": (args.radial, str),
            "scree_method": (args.scree_method, str),
            "scree_params": (args.scree_params, _parse_scree_params),
            "monotone": (args.monotone, bool),
            "synthetic_sampling": (args.synthetic_sampling, str),
            "noise": (args.noise, str),
            "accounting": (args.accounting, str),
            "budget_split": (args.budget_split, _parse_budget_split),
            "pairs": (args.pairs, _parse_pairs),
            "random_state": (args.seed, lambda text: _int(text, "--seed", minimum=0)),
            "scale": (args.scale, bool),
            "bounds": (args.bounds, _parse_bounds),
            "compute_nonprivate": (args.nonprivate_reference, bool),
        }
        self.settings = {name: parse(value) for name, (value, parse) in parsers.items()
                         if value is not None}
        self.columns = (_parse_names(args.columns, "--columns", "column")
                        if args.columns is not None else None)
        self.group = args.group.strip() if args.group is not None else None
        if self.group == "":
            raise _UserError("--group: the column name is empty.")
        self.groups = _parse_labels(args.groups) if args.groups is not None else None
        # (a preview across eps draws its own figure: it never replaces a report)
        default_out = "eps_preview.png" if self.eps_range is not None else "report.png"
        self.out = _figure_path(args.out if args.out is not None else default_out)
        self.dpi = _int(args.dpi, "--dpi", minimum=10) if args.dpi is not None else 100
        self.json = args.json
        self.budget_file = args.budget_file
        self.budget = _parse_budget(args.budget) if args.budget is not None else None
        self.data_name = args.data_name.strip() if args.data_name is not None else None
        if self.data_name == "":
            raise _UserError("--data-name: the name is empty.")
        if self.data_name is not None and self.budget_file is None:
            raise _UserError("--data-name names the data set of a --budget-file: give "
                             "--budget-file FILE too.")
        # (--custodian's default, $SKLEARN_DPPCA_CUSTODIAN, is read where the budget
        # file is opened: sklearn_dppca._cli._open_budget)
        self.custodian = args.custodian
        self.start_over = bool(args.start_over)
        if self.custodian is not None and self.budget_file is None:
            raise _UserError("--custodian seals a --budget-file: give --budget-file FILE "
                             "too.")
        if self.start_over and self.budget_file is None:
            raise _UserError("--start-over is the custodian's act on a sealed budget "
                             "file: give --budget-file FILE and --custodian DIR too.")
        if self.budget is not None and self.budget_file is None:
            raise _UserError("--budget is the total of a --budget-file: give "
                             "--budget-file FILE too (without it no budget is kept "
                             "across runs).")
        if self.budget_file is not None and self.from_json is None:
            _check_writable(self.budget_file, "--budget-file")
        if self.csv is None:
            for name, value in (("--columns", self.columns), ("--group", self.group),
                                ("--groups", self.groups)):
                if value is not None and self.from_json is None:
                    raise _UserError(
                        f"{name} needs a CSV file; the built-in data has its own "
                        "variables and declared groups."
                    )
        if self.groups is not None and self.group is None and self.csv is not None:
            raise _UserError("--groups needs --group COLUMN: the column holding the labels.")
        if self.group is not None and self.groups is None and self.csv is not None:
            raise _UserError(
                "--group needs --groups a,b,c: the public list of group labels, declared "
                "(from the study design), never read off the data."
            )
        if self.columns is not None and self.group is not None \
                and self.group in self.columns:
            raise _UserError(f"--columns and --group both name {self.group!r}; the group "
                            "column cannot also be a variable.")
        if self.from_json is not None:
            given = [f"--{name.replace('_', '-')}" for name in FIT_OPTIONS
                     if getattr(args, name) is not None]
            if self.csv is not None:
                given.insert(0, "CSV")
            if given:
                raise _UserError(
                    f"--from-json redraws a saved release without data or fitting; "
                    f"{', '.join(given)} cannot apply to it."
                )
        _check_writable(self.out, "--out")
        if self.json is not None:
            _check_writable(self.json, "--json")


def dppca_for(options, labels):
    """The DPPCA of the options, its parameters checked (by DPPCA itself) before any
    data is read.

    What the options do not set is DPPCA's default, with one rule of the command
    line's own (:data:`_ACCOUNTING_WITH_CLASSICAL_NOISE`); ``pairs="auto"`` decides
    the pair design from the public ``n`` in the fit itself.

    Parameters
    ----------
    options : Options
        The options of the run.
    labels : list or None
        The declared group labels.

    Returns
    -------
    estimator : DPPCA
        Not fitted.
    """
    from ._pca import DPPCA
    from ._validation import validate_params

    settings = dict(options.settings)
    if settings.get("noise") == "classical":
        settings.setdefault("accounting", _ACCOUNTING_WITH_CLASSICAL_NOISE)
    estimator = DPPCA(groups=labels, **settings)
    k, axes = estimator.n_components, estimator.axes
    # a fraction: how many are kept is read off the released scree after the fit
    if isinstance(k, int) and k < 2:
        # one component has no pair of score axes: --axes is not used, and
        # DPPCA's default stands
        settings.pop("axes", None)
        estimator = DPPCA(groups=labels, **settings)
    elif isinstance(k, int) and max(axes) >= k:
        # (the command line numbers the components from 1: checked in its terms)
        raise _UserError(
            f"--axes {axes[0] + 1},{axes[1] + 1}: components are numbered "
            f"1..{k} (--components {k})."
        )
    try:
        # the hyperparameters alone, before any data is read (the shared
        # validation); what they ask of the data's public shape is the plan's
        validate_params(estimator)
    except (ValueError, TypeError) as error:
        raise _UserError(in_cli_terms(error)) from None
    return estimator
