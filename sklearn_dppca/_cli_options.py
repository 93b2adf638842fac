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
from ._data_sources import BUILTIN_DATA
from ._data_sources import UserError as _UserError
from ._data_sources import parse_names as _parse_names

#: Largest number of histogram cells per axis the command line accepts.
_MAX_BINS = 1000
_FIGURE_FORMATS = (".png", ".pdf", ".svg")
#: DPPCA's spelling of a setting -> the command line's, so that the estimator's own
#: error messages (the only check of these values) name the option the user typed.
_OPTION_SPELLING = {
    "noise='classical'": "--noise classical",
    "accounting='basic'": "--accounting basic",
    "accounting='gdp'": "--accounting gdp",
    "scale=True": "--scale",
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


def _parse_components(text):
    """An integer number of components, or a PVE fraction (DPPCA checks its range)."""
    if re.fullmatch(r"\s*[+-]?\d+\s*", str(text)):
        return _int(text, "--components")
    return _float(text, "--components")


def _parse_pairs(text):
    if text is None:
        return None
    if str(text).strip().lower() == "all":
        return "all"
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
    """The validated options of one run (command-line values, 0-based axes)."""

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
        self.eps = _float(args.eps, "--eps") if args.eps is not None else 1.0
        self.delta = _float(args.delta, "--delta") if args.delta is not None else 1e-5
        self.components = (
            _parse_components(args.components) if args.components is not None else 2
        )
        # a fraction: how many are kept is read off the released scree after the fit
        self.fixed_components = isinstance(self.components, int)
        self.axes = _parse_axes(args.axes) if args.axes is not None else (0, 1)
        self.bins = _parse_bins(args.bins) if args.bins is not None else "auto"
        self.histogram = args.histogram or "additive"
        self.scree_method = args.scree_method or "clipped"
        self.scree_params = (_parse_scree_params(args.scree_params)
                             if args.scree_params is not None else None)
        self.monotone = True if args.monotone is None else args.monotone
        self.synthetic_sampling = args.synthetic_sampling or "uniform"
        self.scree_kind = args.scree_kind or "both"
        self.noise = args.noise or "analytic"
        # the classical formula calibrates each part alone: it implies basic
        # accounting unless GDP is asked for (which DPPCA refuses with it)
        self.accounting = args.accounting or (
            "basic" if self.noise == "classical" else "gdp")
        self.budget_split = (
            _parse_budget_split(args.budget_split) if args.budget_split is not None else None
        )
        self.pairs = _parse_pairs(args.pairs)
        self.seed = _int(args.seed, "--seed", minimum=0) if args.seed is not None else None
        self.columns = (_parse_names(args.columns, "--columns", "column")
                        if args.columns is not None else None)
        self.scale = bool(args.scale)
        self.group = args.group.strip() if args.group is not None else None
        if self.group == "":
            raise _UserError("--group: the column name is empty.")
        self.groups = _parse_labels(args.groups) if args.groups is not None else None
        self.nonprivate = bool(args.nonprivate_reference)
        self.out = _figure_path(args.out if args.out is not None else "report.png")
        self.dpi = _int(args.dpi, "--dpi", minimum=10) if args.dpi is not None else 100
        self.json = args.json
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
    data is read; ``pairs`` is set once the public ``n`` is known."""
    from ._pca import DPPCA

    estimator = DPPCA(
        n_components=options.components, eps=options.eps, delta=options.delta,
        budget_split=options.budget_split, scree_method=options.scree_method,
        scree_params=options.scree_params, monotone=options.monotone,
        synthetic_sampling=options.synthetic_sampling,
        histogram=options.histogram, bins=options.bins,
        axes=options.axes if not options.fixed_components or options.components >= 2
        else (0, 1),
        groups=labels, scale=options.scale, noise=options.noise,
        accounting=options.accounting,
        pairs="all" if options.pairs is None else options.pairs,
        compute_nonprivate=options.nonprivate, random_state=options.seed,
    )
    try:
        estimator._check_params()
    except (ValueError, TypeError) as error:
        raise _UserError(in_cli_terms(error)) from None
    return estimator
