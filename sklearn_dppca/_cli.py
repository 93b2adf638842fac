"""``python -m sklearn_dppca``: a private PCA report from a CSV file or built-in data.

The command fits :class:`~sklearn_dppca.DPPCA`, prints its summary and privacy
ledger, draws :func:`~sklearn_dppca.display.plot_overview` and writes the released
quantities to JSON (:func:`~sklearn_dppca.export_release`). ``--from-json`` redraws
the report from such a file without touching any data.

User errors (a missing file, an invalid option, unusable data) print ONE line
``error: ...`` on stderr and return exit status 2, as argparse does for usage
errors; nothing is fitted or written then.

What is public is declared, never read off the data: the variables are the
columns named by ``--columns`` (by default every column but ``--group``), and a
cell of a variable that is not a finite number is an error, never a reason to drop
a row or a column (that would make ``n`` or ``p`` depend on the data). ``--group``
needs the list of labels ``--groups``; a row with another label is an error. Error
messages name files, options and columns (public), never a cell's value, its row
number or a label found in the data.

The CSV file is read with the standard library's ``csv`` module (so the reading
rules above are ours, not a parser's guesses); pandas, a dependency of the
package, only carries the column names into the estimator.
"""

import argparse
import os
import re
import sys
import time
import warnings

from ._data_sources import BUILTIN_DATA, builtin_data, builtin_labels, read_csv
from ._data_sources import LARGE_N as _LARGE_N
from ._data_sources import LARGE_N_PAIRS as _LARGE_N_PAIRS
from ._data_sources import UserError as _UserError
from ._data_sources import parse_names as _parse_names
from ._budget_split import BUDGET_PARTS as _BUDGET_PARTS
from ._budget_split import DEFAULT_SCALED_SPLIT, DEFAULT_SPLIT
from ._summary import ledger_table

#: Largest number of histogram cells per axis the command line accepts.
_MAX_BINS = 1000
_FIGURE_FORMATS = (".png", ".pdf", ".svg")
_FIT_OPTIONS = ("data", "columns", "eps", "delta", "components", "scale", "axes", "bins",
                "histogram", "scree_method", "scree_params", "monotone",
                "synthetic_sampling", "group", "groups", "budget_split", "pairs",
                "noise", "accounting", "seed", "nonprivate_reference")
#: DPPCA's scree methods (its ``scree_method``; tests/test_cli.py keeps them equal).
_SCREE_METHODS = ("clipped", "huber", "pmwm", "kendall", "matrix")
#: What the scree panel shows (ScreeDisplay's ``kind``).
_SCREE_KINDS = ("both", "pve", "variance")
#: ``--scree-kind`` -> plot_overview's ``scree_kw`` (its cumulative PVE line needs
#: the PVE axis, so it is dropped with the variances alone).
_SCREE_PANELS = {"both": {}, "pve": {"kind": "pve"},
                 "variance": {"kind": "variance", "cumulative": False}}
#: The parts of ``--budget-split`` (those of ``DPPCA(budget_split=...)``); ``scale``
#: is spent only with ``--scale``.
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


# --------------------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------------------
def _prog():
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not argv0 or argv0 in ("__main__.py", "-c", "-m") or argv0.startswith("pytest"):
        return "python -m sklearn_dppca"
    return argv0


def _split_text(split):
    return ",".join(f"{part}={share:g}" for part, share in split.items() if share)


def _default_splits():
    """DPPCA's default budget splits, as --budget-split would spell them."""
    text = _split_text(DEFAULT_SPLIT)
    return f"{text}, with --scale {_split_text(DEFAULT_SCALED_SPLIT)}"


def _build_parser():
    """The argument parser of the command line."""
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description=(
            "Differentially private PCA report: fits DPPCA on a CSV file (header row; "
            "the variables are the columns declared with --columns, or else every "
            "column but the --group column, and each of their cells must be a number) "
            "or, without a file, on built-in data (--data: the Gaussian clusters "
            "'gau' or the numeric columns of the UCI Adult data); prints "
            "the summary and the privacy ledger; writes the overview figure and a JSON "
            "file of exactly what was released."
        ),
        epilog=(
            "Public by declaration: the number of rows, the column names, the "
            "variables (--columns) and the group labels (--groups). Publish only "
            "reports made without --seed and without --nonprivate-reference."
        ),
    )
    parser.add_argument("csv", nargs="?", default=None, metavar="CSV",
                        help="data file with a header row (default: built-in data, "
                             "see --data)")
    data = parser.add_argument_group("data")
    data.add_argument("--data", default=None, metavar="{" + ",".join(BUILTIN_DATA) + "}",
                      help="built-in data used without a CSV file: 'gau' (default; 5 "
                           "Gaussian clusters, 20 columns) or 'adult' (UCI Adult, 5 "
                           "numeric columns in mixed units: use --scale)")
    data.add_argument("--columns", default=None, metavar="a,b,c",
                      help="the CSV columns that are the variables, in this order "
                           "(default: every column but --group); a missing or "
                           "non-numeric cell in one of them is an error")
    data.add_argument("--group", default=None, metavar="COLUMN",
                      help="CSV column holding each row's group label (needs --groups)")
    data.add_argument("--groups", default=None, metavar="a,b,c",
                      help="the public list of group labels, required with --group; "
                           "a row with another label is an error")
    budget = parser.add_argument_group("privacy")
    budget.add_argument("--eps", type=str, default=None,
                        help="total privacy budget epsilon > 0 (default 1.0)")
    budget.add_argument("--delta", type=str, default=None,
                        help="total delta in (0, 1), well below 1/n (default 1e-5)")
    budget.add_argument("--budget-split", default=None, metavar="SPLIT",
                        help="shares of eps and delta among the parts "
                             f"{', '.join(_BUDGET_PARTS)}; default {_default_splits()}")
    budget.add_argument("--accounting", choices=("gdp", "basic"), default=None,
                        help="composition of the Gaussian parts: gdp (exact, one "
                             "mu-GDP block; default) or basic (shares added)")
    budget.add_argument("--noise", choices=("analytic", "classical"), default=None,
                        help="Gaussian calibration of each part under --accounting "
                             "basic (default analytic; classical implies --accounting "
                             "basic)")
    budget.add_argument("--seed", default=None, metavar="INT",
                        help="seed of the noise, for reproducible tests only: a "
                             "release made with a known seed is not private")
    model = parser.add_argument_group("model")
    model.add_argument("--components", default=None, metavar="K",
                       help="number of components (default 2), or a fraction in (0, 1): "
                            "the fewest components whose cumulative private PVE "
                            "reaches it")
    model.add_argument("--scale", action="store_true", default=None,
                       help="correlation PCA: divide each variable by a private "
                            "spread, bought with the 'scale' part of the budget "
                            "(for variables in different units)")
    model.add_argument("--axes", default=None, metavar="A,B",
                       help="the two components of the score summary, 1-based "
                            "(default 1,2)")
    model.add_argument("--bins", default=None, metavar="B[,B]",
                       help="histogram cells per axis: 20 or 20,20 (default: from "
                            "the public number of rows and groups, 8 to 20)")
    model.add_argument("--histogram", choices=("additive", "sparse"), default=None,
                       help="score histogram mechanism (default additive)")
    model.add_argument("--scree-method", choices=_SCREE_METHODS,
                       default=None, help="private variance method (default clipped)")
    model.add_argument("--scree-params", default=None, metavar="KEY=VALUE,...",
                       help="tuning values of the scree method, e.g. "
                            "quantile_level=0.95,pairs=64 (DPPCA's scree_params)")
    model.add_argument("--monotone", action=argparse.BooleanOptionalAction,
                       default=None, help="make the private variances non-increasing "
                                          "(free post-processing; default on)")
    model.add_argument("--synthetic-sampling", choices=("uniform", "center"),
                       default=None, help="synthetic score points uniformly in their "
                                          "cells or at the cell centres (default "
                                          "uniform; free post-processing)")
    model.add_argument("--pairs", default=None, metavar="all|M",
                       help="pairs of the Kendall and scree U-statistics: 'all', or M "
                            f"partners per row (default all; {_LARGE_N_PAIRS} above "
                            f"{_LARGE_N} rows)")
    output = parser.add_argument_group("output")
    output.add_argument("--out", default=None, metavar="FILE",
                        help="overview figure, .png, .pdf or .svg (default report.png)")
    output.add_argument("--scree-kind", choices=_SCREE_KINDS, default=None,
                        help="the scree panel: PVE bars and variances (both, the "
                             "default), the PVE only or the variances only")
    output.add_argument("--dpi", default=None, metavar="DPI",
                        help="resolution of a PNG figure (default 100)")
    output.add_argument("--json", default=None, metavar="FILE",
                        help="JSON of the released quantities (default released.json)")
    output.add_argument("--nonprivate-reference", action="store_true", default=None,
                        help="also compute ordinary PCA, overlay it in grey and write it "
                             "to the JSON under 'nonprivate_reference_NOT_PRIVATE': "
                             "NOT PRIVATE, never publish the result")
    output.add_argument("--from-json", default=None, metavar="FILE",
                        help="redraw the report from a saved JSON release (no data, "
                             "no fit, no budget spent)")
    output.add_argument("--quiet", action="store_true",
                        help="print only warnings and errors")
    from ._version import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _float(text, option):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise _UserError(f"{option} must be a number, got {text!r}.") from None
    return value


def _in_cli_terms(error):
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


class _Options:
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
            given = [f"--{name.replace('_', '-')}" for name in _FIT_OPTIONS
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


# --------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------
def _show_warnings(caught, err):
    seen = set()
    for warning in caught:
        message = " ".join(str(warning.message).split())
        if message not in seen:
            seen.add(message)
            print(f"warning: {message}", file=err)


def _save_figure(estimator, options, out):
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .display import plot_overview

    figure = plot_overview(estimator, scree_kw=_SCREE_PANELS[options.scree_kind])
    # zlib level 2 instead of PIL's 6: a third less time for a file ~1% smaller or
    # larger (flat colours and text compress about as well either way)
    png = os.path.splitext(options.out)[1].lower() == ".png"
    try:
        figure.savefig(options.out, dpi=options.dpi,
                       **({"pil_kwargs": {"compress_level": 2}} if png else {}))
    except OSError as error:
        raise _UserError(f"cannot write {options.out!r}: {error.strerror or error}.") from None
    finally:
        plt.close(figure)


def _write_json(estimator, path, include_nonprivate, extra):
    from ._release_write import export_release

    try:
        export_release(estimator, path, include_nonprivate=include_nonprivate, extra=extra)
    except OSError as error:
        raise _UserError(f"cannot write {path!r}: {error.strerror or error}.") from None


# --------------------------------------------------------------------------------------
# the two runs
# --------------------------------------------------------------------------------------
def _estimator(options, labels):
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
        raise _UserError(_in_cli_terms(error)) from None
    return estimator


def _fit(options, out, err):
    say = (lambda *a, **k: None) if options.quiet else (lambda *a: print(*a, file=out))
    if options.fixed_components and options.components >= 2 \
            and max(options.axes) >= options.components:
        # (the command line numbers the components from 1: checked in its terms)
        raise _UserError(
            f"--axes {options.axes[0] + 1},{options.axes[1] + 1}: components are numbered "
            f"1..{options.components} (--components {options.components})."
        )
    estimator = _estimator(options, builtin_labels(options.data) if options.csv is None
                           else options.groups)
    if options.csv is None:
        data = builtin_data(options.data)
    else:
        from ._validation import MAX_ABS_VALUE

        # the estimators reject values beyond their domain too; checked here per
        # column, so that the message can name the column
        data = read_csv(options.csv, options.columns, options.group, options.groups,
                        max_abs=MAX_ABS_VALUE)
    n_samples, n_features = data.X.shape
    names = [str(name) for name in data.X.columns]
    say(f"Data: {data.source}: {n_samples} rows x {n_features} variables "
        f"({', '.join(names[:12])}{', ...' if len(names) > 12 else ''})"
        + (f", groups {', '.join(map(str, data.labels))}" if data.labels else ""))
    # (delta >= 1/n: the estimator's PrivacyRiskWarning is shown as a warning line)
    pairs = options.pairs
    if pairs is None:
        pairs = _LARGE_N_PAIRS if n_samples > _LARGE_N else "all"
        if pairs != "all":
            say(f"note: n = {n_samples} > {_LARGE_N}: the incomplete U-statistic with "
                f"{_LARGE_N_PAIRS} partners per row is used (--pairs all for every pair).")
    if options.seed is not None:
        print("warning: --seed fixes the noise: anyone who knows the seed can remove it. "
              "Use it for tests only; publish releases made without --seed.", file=err)
    if options.nonprivate:
        print("warning: --nonprivate-reference: the figure and the JSON contain ordinary "
              "PCA of the raw data (NOT PRIVATE, key 'nonprivate_reference_NOT_PRIVATE'); "
              "never publish them.", file=err)
    estimator.set_params(pairs=pairs,
                         verbose=1 if (n_samples > _LARGE_N or not options.quiet) else 0)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator.fit(data.X, data.y)
        except (ValueError, TypeError) as error:
            # the data reaching the fit are checked above (labels declared, values
            # finite and inside the domain), so what is left to fail is an option
            # against the public n or p, which the message may state (the
            # estimators' messages quote no data value)
            _show_warnings(caught, err)
            raise _UserError(f"the private fit failed: {_in_cli_terms(error)}") from None
    _show_warnings(caught, err)
    say(f"Fitted in {time.perf_counter() - start:.1f} s.")
    # public facts only: where the data came from and the declared group column
    # (the variables are the release's feature_names; nothing here is read off
    # the cells)
    extra = {"data_source": data.source, "group_column": data.group_column}
    return estimator, extra


def _report(estimator, options, out, err, extra=None, json_path=None):
    say = (lambda *a, **k: None) if options.quiet else (lambda *a: print(*a, file=out))
    say("")
    say(str(estimator.summary()))
    say("")
    say(ledger_table(estimator.privacy_ledger_, estimator.privacy_spent_))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _save_figure(estimator, options, out)
    _show_warnings(caught, err)
    say("")
    say(f"Wrote the overview figure to {options.out}")
    if json_path is not None:
        _write_json(estimator, json_path,
                    include_nonprivate=getattr(estimator, "nonprivate_", None) is not None,
                    extra=extra)
        say(f"Wrote the released quantities to {json_path}"
            + (" (with a NON-PRIVATE reference: do not publish)"
               if getattr(estimator, "nonprivate_", None) is not None else ""))


def _run(argv=None, out=None, err=None):
    """Parse ``argv`` and run; :class:`_UserError` propagates to :func:`main`."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = _build_parser().parse_args(argv)
    options = _Options(args)
    if options.from_json is not None:
        from ._released_pca import load_release

        path = options.from_json
        if not os.path.isfile(path):
            raise _UserError(f"cannot read {path!r}: no such file.")
        try:
            release = load_release(path)
        except (ValueError, TypeError, KeyError) as error:
            raise _UserError(f"{path!r} is not a usable release: {error}") from None
        except (OSError, UnicodeDecodeError) as error:
            raise _UserError(f"cannot read {path!r}: {error}") from None
        if release.nonprivate_ is not None:
            print(f"warning: {path} holds a NON-PRIVATE reference; the figure overlays it: "
                  "never publish it.", file=err)
        try:
            _report(release, options, out, err, json_path=options.json)
        except (ValueError, TypeError, KeyError, IndexError) as error:
            # it loads but does not hold together (shapes or indices edited by hand)
            message = " ".join(str(error).split())
            raise _UserError(f"{path!r} is not a usable release: {message}") from None
        return 0
    estimator, extra = _fit(options, out, err)
    _report(estimator, options, out, err, extra=extra,
            json_path=options.json if options.json is not None else "released.json")
    return 0


def main(argv=None):
    """Entry point of ``python -m sklearn_dppca`` and the ``sklearn-dppca`` script.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (without the program name); None reads ``sys.argv[1:]``.
        ``app`` as the first argument starts the explorer app instead (see
        :mod:`sklearn_dppca.app`).

    Returns
    -------
    status : int
        0 on success, 2 on a user error (one ``error:`` line on stderr).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["app"]:
        # the explorer app has its own options (python -m sklearn_dppca app --help)
        from .app._launch import main as app_main

        return app_main(argv[1:])
    try:
        return _run(argv)
    except _UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except SystemExit as exit_:    # argparse: --help, --version and usage errors
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
