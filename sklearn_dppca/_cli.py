"""``python -m sklearn_dppca``: a private PCA report from a CSV file or built-in data.

The command fits :class:`~sklearn_dppca.DPPCA`, prints its summary and privacy
ledger, draws :func:`~sklearn_dppca.display.plot_overview` and writes the released
quantities to JSON (:func:`~sklearn_dppca.export_release`). ``--from-json`` redraws
the report from such a file without touching any data.

User errors (a missing file, an invalid option, unusable data) print ONE line
``error: ...`` on stderr and return exit status 2, as argparse does for usage
errors; nothing is fitted or written then.
"""

import argparse
import math
import os
import sys
import time
import warnings

#: Above this many rows the command line uses the incomplete U-statistic.
LARGE_N = 20_000
#: Partners per row of the incomplete U-statistic used above ``LARGE_N`` rows.
LARGE_N_PAIRS = 64
#: Largest number of histogram cells per axis the command line accepts.
MAX_BINS = 1000
_FIGURE_FORMATS = (".png", ".pdf", ".svg")
_FIT_OPTIONS = ("eps", "delta", "components", "axes", "bins", "histogram", "scree_method",
                "group", "groups", "budget_split", "pairs", "noise", "seed",
                "nonprivate_reference")
_BUILTIN_GROUPS = ["G1", "G2", "G3", "G4", "G5"]


class UserError(Exception):
    """A problem with the user's input: reported as one ``error:`` line, exit 2."""


# --------------------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------------------
def _prog():
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not argv0 or argv0 in ("__main__.py", "-c", "-m") or argv0.startswith("pytest"):
        return "python -m sklearn_dppca"
    return argv0


def build_parser():
    """The argument parser of the command line."""
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description=(
            "Differentially private PCA report: fits DPPCA on a CSV file (header row; "
            "numeric columns are the variables) or, without a file, on the built-in "
            "Gaussian-cluster data 'gau'; prints the summary and the privacy ledger; "
            "writes the overview figure and a JSON file of exactly what was released."
        ),
        epilog=(
            "Public by assumption: the number of rows, the column names and the "
            "group labels. Publish only reports made without --seed and without "
            "--nonprivate-reference."
        ),
    )
    parser.add_argument("csv", nargs="?", default=None, metavar="CSV",
                        help="data file with a header row (default: built-in 'gau' data)")
    budget = parser.add_argument_group("privacy")
    budget.add_argument("--eps", type=str, default=None,
                        help="total privacy budget epsilon > 0 (default 1.0)")
    budget.add_argument("--delta", type=str, default=None,
                        help="total delta in (0, 1), well below 1/n (default 1e-5)")
    budget.add_argument("--budget-split", default=None, metavar="SPLIT",
                        help="shares of eps and delta, e.g. "
                             "loading=0.4,scree=0.2,score=0.4 (the default)")
    budget.add_argument("--noise", choices=("analytic", "classical"), default=None,
                        help="Gaussian calibration (default analytic)")
    budget.add_argument("--seed", default=None, metavar="INT",
                        help="seed of the noise, for reproducible tests only: a "
                             "release made with a known seed is not private")
    model = parser.add_argument_group("model")
    model.add_argument("--components", default=None, metavar="K",
                       help="number of components (default 2)")
    model.add_argument("--axes", default=None, metavar="A,B",
                       help="the two components of the score summary, 1-based "
                            "(default 1,2)")
    model.add_argument("--bins", default=None, metavar="B[,B]",
                       help="histogram cells per axis: 20 or 20,20 (default 20)")
    model.add_argument("--histogram", choices=("additive", "sparse"), default=None,
                       help="score histogram mechanism (default additive)")
    model.add_argument("--scree-method", choices=("clipped", "huber", "pmwm"),
                       default=None, help="private variance method (default clipped)")
    model.add_argument("--pairs", default=None, metavar="all|M",
                       help="pairs of the Kendall and scree U-statistics: 'all', or M "
                            f"partners per row (default all; {LARGE_N_PAIRS} above "
                            f"{LARGE_N} rows)")
    groups = parser.add_argument_group("groups")
    groups.add_argument("--group", default=None, metavar="COLUMN",
                        help="CSV column holding each row's group label")
    groups.add_argument("--groups", default=None, metavar="a,b,c",
                        help="the public list of group labels; without it the "
                             "column's distinct values are used and thereby made "
                             "public")
    output = parser.add_argument_group("output")
    output.add_argument("--out", default=None, metavar="FILE",
                        help="overview figure, .png, .pdf or .svg (default report.png)")
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
    from . import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _float(text, option):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise UserError(f"{option} must be a number, got {text!r}.") from None
    return value


def _int(text, option, minimum=None):
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        raise UserError(f"{option} must be an integer, got {text!r}.") from None
    if minimum is not None and value < minimum:
        raise UserError(f"{option} must be an integer >= {minimum}, got {text!r}.")
    return value


def _int_list(text, option):
    parts = [part.strip() for part in str(text).split(",")]
    if not all(parts):
        raise UserError(f"{option}: empty item in {text!r}.")
    return [_int(part, option) for part in parts]


def parse_eps(text):
    eps = _float(text, "--eps")
    if not (math.isfinite(eps) and eps > 0):
        raise UserError(f"--eps must be a finite number > 0, got {text!r}.")
    return eps


def parse_delta(text):
    delta = _float(text, "--delta")
    if not (0 < delta < 1):
        raise UserError(f"--delta must lie strictly between 0 and 1, got {text!r}.")
    return delta


def parse_bins(text):
    values = _int_list(text, "--bins")
    if len(values) not in (1, 2) or not all(1 <= b <= MAX_BINS for b in values):
        raise UserError(
            f"--bins must be one or two integers in [1, {MAX_BINS}] (e.g. 20 or 20,30), "
            f"got {text!r}."
        )
    return (values[0], values[-1])


def parse_axes(text):
    """1-based ``A,B`` on the command line -> 0-based ``(a, b)``."""
    values = _int_list(text, "--axes")
    if len(values) != 2 or values[0] == values[1] or min(values) < 1:
        raise UserError(
            "--axes must be two different 1-based component numbers such as 1,2, "
            f"got {text!r}."
        )
    return values[0] - 1, values[1] - 1


def parse_budget_split(text):
    from ._pca import DEFAULT_SPLIT

    split = {}
    for item in str(text).split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UserError(
                f"--budget-split must look like loading=0.4,scree=0.2,score=0.4, got {text!r}."
            )
        if name not in DEFAULT_SPLIT:
            raise UserError(
                f"--budget-split: unknown part {name!r}; parts are "
                f"{', '.join(DEFAULT_SPLIT)}."
            )
        if name in split:
            raise UserError(f"--budget-split: part {name!r} is given twice.")
        share = _float(value.strip(), f"--budget-split {name}")
        if not (math.isfinite(share) and 0 <= share <= 1):
            raise UserError(f"--budget-split: {name} must lie in [0, 1], got {value!r}.")
        split[name] = share
    for part in ("loading", "scree"):
        if split.get(part, 0) <= 0:
            raise UserError(f"--budget-split: {part} must be given and > 0.")
    total = math.fsum(split.values())
    if total > 1 + 1e-12:
        raise UserError(f"--budget-split: the shares sum to {total:g} > 1.")
    return split


def parse_pairs(text):
    if text is None:
        return None
    if str(text).strip().lower() == "all":
        return "all"
    return _int(text, "--pairs", minimum=1)


def parse_labels(text):
    labels = [label.strip() for label in str(text).split(",")]
    if not all(labels):
        raise UserError(f"--groups: empty label in {text!r}.")
    if len(set(labels)) != len(labels):
        raise UserError(f"--groups: labels must be distinct, got {text!r}.")
    return labels


def _figure_path(path):
    extension = os.path.splitext(path)[1].lower()
    if extension not in _FIGURE_FORMATS:
        raise UserError(
            f"--out {path!r}: the figure format is taken from the extension, which must "
            f"be one of {', '.join(_FIGURE_FORMATS)}."
        )
    return path


def _check_writable(path, option):
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UserError(f"{option} {path!r}: directory {directory!r} does not exist.")
    if os.path.isdir(path):
        raise UserError(f"{option} {path!r} is a directory.")


class Options:
    """The validated options of one run (command-line values, 0-based axes)."""

    def __init__(self, args):
        self.csv = args.csv
        self.from_json = args.from_json
        self.quiet = args.quiet
        self.eps = parse_eps(args.eps) if args.eps is not None else 1.0
        self.delta = parse_delta(args.delta) if args.delta is not None else 1e-5
        self.components = (
            _int(args.components, "--components", minimum=1)
            if args.components is not None else 2
        )
        self.axes = parse_axes(args.axes) if args.axes is not None else (0, 1)
        self.bins = parse_bins(args.bins) if args.bins is not None else (20, 20)
        self.histogram = args.histogram or "additive"
        self.scree_method = args.scree_method or "clipped"
        self.noise = args.noise or "analytic"
        self.budget_split = (
            parse_budget_split(args.budget_split) if args.budget_split is not None else None
        )
        self.pairs = parse_pairs(args.pairs)
        self.seed = _int(args.seed, "--seed", minimum=0) if args.seed is not None else None
        self.group = args.group
        self.groups = parse_labels(args.groups) if args.groups is not None else None
        self.nonprivate = bool(args.nonprivate_reference)
        self.out = _figure_path(args.out if args.out is not None else "report.png")
        self.dpi = _int(args.dpi, "--dpi", minimum=10) if args.dpi is not None else 100
        self.json = args.json
        if self.groups is not None and self.group is None and self.csv is not None:
            raise UserError("--groups needs --group COLUMN: the column holding the labels.")
        if self.group is not None and self.csv is None:
            raise UserError("--group needs a CSV file; the built-in data has its own groups.")
        if self.groups is not None and self.csv is None:
            raise UserError("--groups needs a CSV file with --group COLUMN.")
        if self.from_json is not None:
            given = [f"--{name.replace('_', '-')}" for name in _FIT_OPTIONS
                     if getattr(args, name) is not None]
            if self.csv is not None:
                given.insert(0, "CSV")
            if given:
                raise UserError(
                    f"--from-json redraws a saved release without data or fitting; "
                    f"{', '.join(given)} cannot apply to it."
                )
        _check_writable(self.out, "--out")
        if self.json is not None:
            _check_writable(self.json, "--json")


# --------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------
class Data:
    """The numeric table, the group labels and what the report must say about them."""

    def __init__(self, X, y, labels, source, dropped=(), group_column=None,
                 labels_from_data=False):
        self.X = X
        self.y = y
        self.labels = labels
        self.source = source
        self.dropped = list(dropped)
        self.group_column = group_column
        self.labels_from_data = labels_from_data


def builtin_data():
    """The ``gau`` data: 5 groups x 1000 rows x 20 columns, groups G1..G5 (public)."""
    from .datasets import make_gaussian_clusters

    X, y = make_gaussian_clusters(return_groups=True, as_frame=True, random_state=0)
    return Data(X, y.to_numpy(dtype=object), list(_BUILTIN_GROUPS),
                "built-in 'gau' data (make_gaussian_clusters, random_state=0)")


def _describe_rows(mask, limit=3):
    import numpy as np

    rows = np.flatnonzero(mask)
    shown = ", ".join(str(row + 2) for row in rows[:limit])   # line 1 is the header
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return f"line{'s' if len(rows) > 1 else ''} {shown}{more}"


def read_csv(path, group=None, declared=None, note=print):
    """Read ``path`` into a :class:`Data`; every problem is a :class:`UserError`."""
    import numpy as np
    import pandas as pd
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if not os.path.exists(path):
        raise UserError(f"cannot read {path!r}: no such file.")
    if os.path.isdir(path):
        raise UserError(f"cannot read {path!r}: it is a directory.")
    try:
        frame = pd.read_csv(path, dtype=None if group is None else {group: str})
    except pd.errors.EmptyDataError:
        raise UserError(f"{path!r} is empty: a CSV with a header row is needed.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise UserError(f"cannot parse {path!r} as CSV: {first}") from None
    except OSError as error:
        raise UserError(f"cannot read {path!r}: {error.strerror or error}.") from None
    if frame.shape[0] == 0:
        raise UserError(f"{path!r} has a header but no data rows.")
    columns = [str(column) for column in frame.columns]
    if len(set(columns)) != len(columns):
        raise UserError(f"{path!r} has duplicate column names.")
    frame.columns = columns

    y = labels = None
    labels_from_data = False
    if group is not None:
        if group not in frame.columns:
            raise UserError(
                f"--group {group!r}: no such column in {path!r} (columns: "
                f"{', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''})."
            )
        raw = frame.pop(group)
        missing = raw.isna().to_numpy()
        if missing.any():
            raise UserError(
                f"--group {group!r}: {int(missing.sum())} row(s) have no group label "
                f"({_describe_rows(missing)})."
            )
        y = raw.astype(str).str.strip().to_numpy(dtype=object)
        if declared is not None:
            outside = ~np.isin(y, np.array(declared, dtype=object))
            if outside.any():
                bad = sorted(set(y[outside]))[:3]
                raise UserError(
                    f"--group {group!r}: {int(outside.sum())} row(s) have a label outside "
                    f"--groups {','.join(declared)} ({', '.join(map(repr, bad))} at "
                    f"{_describe_rows(outside)})."
                )
            labels = list(declared)
        else:
            labels = sorted(set(y))
            labels_from_data = True

    dropped = [column for column in frame.columns if not is_numeric_dtype(frame[column])]
    numeric = frame.drop(columns=dropped)
    if numeric.shape[1] == 0:
        raise UserError(
            f"{path!r} has no numeric columns"
            + (f" (non-numeric: {', '.join(dropped[:8])})." if dropped else ".")
        )
    if dropped:
        note(f"note: dropping non-numeric columns: {', '.join(dropped)}")
    for column in numeric.columns:
        if is_bool_dtype(numeric[column]):
            numeric[column] = numeric[column].astype(float)
    values = numeric.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        column = numeric.columns[np.flatnonzero(bad.any(axis=0))[0]]
        raise UserError(
            f"{path!r}: column {column!r} has missing or infinite values "
            f"({_describe_rows(bad[:, list(numeric.columns).index(column)])}); "
            f"{int(bad.sum())} such value(s) in all. Remove or impute them first (an "
            "imputation from the data itself is not private)."
        )
    if values.shape[0] < 2:
        raise UserError(f"{path!r} has {values.shape[0]} data row; at least 2 are needed.")
    return Data(numeric, y, labels, f"CSV file {os.path.basename(path)!r}", dropped,
                group, labels_from_data)


# --------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------
def _fmt(value, spec):
    try:
        return format(float(value), spec)
    except (TypeError, ValueError):
        return "-" if value is None else str(value)


def ledger_table(ledger, spent):
    """The privacy ledger as a small text table (one row per mechanism call)."""
    header = ("step", "mechanism", "eps", "delta", "sensitivity", "noise scale")
    rows = [
        (
            str(entry.get("step", "")),
            str(entry.get("mechanism", "")),
            _fmt(entry.get("eps"), ".4g"),
            _fmt(entry.get("delta"), ".3g"),
            _fmt(entry.get("sensitivity"), ".4g")
            + (f" ({entry['sensitivity_norm']})" if entry.get("sensitivity_norm") else ""),
            _fmt(entry.get("noise_scale"), ".4g"),
        )
        for entry in ledger
    ]
    rows.append(("total (basic composition)", "", _fmt(spent[0], ".4g"),
                 _fmt(spent[1], ".3g"), "", ""))
    widths = [max(len(row[j]) for row in [header] + rows) for j in range(len(header))]

    def line(row):
        return "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join(["Privacy ledger:", line(header), rule]
                     + [line(row) for row in rows[:-1]] + [rule, line(rows[-1])])


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

    figure = plot_overview(estimator)
    try:
        figure.savefig(options.out, dpi=options.dpi)
    except OSError as error:
        raise UserError(f"cannot write {options.out!r}: {error.strerror or error}.") from None
    finally:
        plt.close(figure)


def _write_json(estimator, path, include_nonprivate, extra):
    from ._release import export_release

    try:
        export_release(estimator, path, include_nonprivate=include_nonprivate, extra=extra)
    except OSError as error:
        raise UserError(f"cannot write {path!r}: {error.strerror or error}.") from None


# --------------------------------------------------------------------------------------
# the two runs
# --------------------------------------------------------------------------------------
def _fit(options, out, err):
    say = (lambda *a, **k: None) if options.quiet else (lambda *a: print(*a, file=out))
    if options.csv is None:
        data = builtin_data()
    else:
        data = read_csv(options.csv, options.group, options.groups, note=say)
    n_samples, n_features = data.X.shape
    say(f"Data: {data.source}: {n_samples} rows x {n_features} numeric columns"
        + (f", groups {', '.join(map(str, data.labels))}" if data.labels else ""))
    if data.labels_from_data:
        print(
            f"warning: no --groups given: the group labels ({', '.join(data.labels[:10])}"
            f"{', ...' if len(data.labels) > 10 else ''}) were read off the data and are "
            "therefore treated as public; declare them with --groups to avoid that.",
            file=err,
        )
    if options.components > n_features:
        raise UserError(
            f"--components {options.components}: the data have only {n_features} numeric "
            f"column(s); use --components {n_features} or fewer."
        )
    if options.components >= 2 and max(options.axes) >= options.components:
        raise UserError(
            f"--axes {options.axes[0] + 1},{options.axes[1] + 1}: components are numbered "
            f"1..{options.components} (--components {options.components})."
        )
    if options.delta >= 1 / n_samples:
        print(f"warning: --delta {options.delta:g} is not below 1/n = "
              f"{1 / n_samples:.3g}; choose delta << 1/n.", file=err)
    pairs = options.pairs
    if pairs is None:
        pairs = LARGE_N_PAIRS if n_samples > LARGE_N else "all"
        if pairs != "all":
            say(f"note: n = {n_samples} > {LARGE_N}: the incomplete U-statistic with "
                f"{LARGE_N_PAIRS} partners per row is used (--pairs all for every pair).")
    if options.seed is not None:
        print("warning: --seed fixes the noise: anyone who knows the seed can remove it. "
              "Use it for tests only; publish releases made without --seed.", file=err)
    if options.nonprivate:
        print("warning: --nonprivate-reference: the figure and the JSON contain ordinary "
              "PCA of the raw data (NOT PRIVATE, key 'nonprivate_reference_NOT_PRIVATE'); "
              "never publish them.", file=err)

    from ._pca import DPPCA

    estimator = DPPCA(
        n_components=options.components, eps=options.eps, delta=options.delta,
        budget_split=options.budget_split, scree_method=options.scree_method,
        histogram=options.histogram, bins=options.bins,
        axes=options.axes if options.components >= 2 else (0, 1),
        groups=data.labels, noise=options.noise, pairs=pairs,
        compute_nonprivate=options.nonprivate, random_state=options.seed,
        verbose=1 if (n_samples > LARGE_N or not options.quiet) else 0,
    )
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator.fit(data.X, data.y)
        except (ValueError, TypeError) as error:
            _show_warnings(caught, err)
            raise UserError(f"the private fit failed: {error}") from None
    _show_warnings(caught, err)
    say(f"Fitted in {time.perf_counter() - start:.1f} s.")
    extra = {
        "data_source": data.source,
        "dropped_columns": data.dropped,
        "group_column": data.group_column,
        "group_labels_read_from_data": bool(data.labels_from_data),
    }
    return estimator, extra


def _report(estimator, options, out, err, extra=None, json_path=None):
    say = (lambda *a, **k: None) if options.quiet else (lambda *a: print(*a, file=out))
    say("")
    say(str(estimator.summary()))
    say("")
    say(ledger_table(estimator.privacy_ledger_, estimator.privacy_spent_))
    if extra and extra.get("group_labels_read_from_data"):
        say("Note: the group labels were read off the data and are treated as public.")
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


def run(argv=None, out=None, err=None):
    """Parse ``argv`` and run; :class:`UserError` propagates to :func:`main`."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = build_parser().parse_args(argv)
    options = Options(args)
    if options.from_json is not None:
        from ._release import load_release

        path = options.from_json
        if not os.path.isfile(path):
            raise UserError(f"cannot read {path!r}: no such file.")
        try:
            release = load_release(path)
        except (ValueError, TypeError, KeyError) as error:
            raise UserError(f"{path!r} is not a usable release: {error}") from None
        except (OSError, UnicodeDecodeError) as error:
            raise UserError(f"cannot read {path!r}: {error}") from None
        if release.nonprivate_ is not None:
            print(f"warning: {path} holds a NON-PRIVATE reference; the figure overlays it: "
                  "never publish it.", file=err)
        try:
            _report(release, options, out, err, json_path=options.json)
        except (ValueError, TypeError, KeyError, IndexError) as error:
            # it loads but does not hold together (shapes or indices edited by hand)
            message = " ".join(str(error).split())
            raise UserError(f"{path!r} is not a usable release: {message}") from None
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

    Returns
    -------
    status : int
        0 on success, 2 on a user error (one ``error:`` line on stderr).
    """
    try:
        return run(argv)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except SystemExit as exit_:    # argparse: --help, --version and usage errors
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
