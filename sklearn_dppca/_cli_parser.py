"""The command line's arguments: the parser of ``python -m sklearn_dppca``, its
options and their help.

Parsing reads strings only (:mod:`~sklearn_dppca._cli_options` turns them into
settings): it imports neither the estimators nor scikit-learn, so that a redraw
with ``--from-json`` does not pay for them.
"""

import argparse
import os
import sys

#: The parts of ``--budget-split`` (those of ``DPPCA(budget_split=...)``); ``scale``
#: is spent only with ``--scale``.
from ._budget_split import BUDGET_PARTS as _BUDGET_PARTS
from ._budget_split import DEFAULT_SCALED_SPLIT, DEFAULT_SPLIT, split_text
from ._data_sources import BUILTIN_DATA
from ._pair_design import AUTO_ALL_ROWS, AUTO_MAX_PARTNERS, AUTO_PARTNERS
from ._requests import SCREE_KINDS

#: The options that fit (or choose the data of a fit): none applies to a redraw
#: with ``--from-json``.
FIT_OPTIONS = ("data", "columns", "eps", "delta", "components", "scale", "axes", "bins",
               "histogram", "radial", "scree_method", "scree_params", "monotone",
               "synthetic_sampling", "group", "groups", "budget_split", "pairs",
               "noise", "accounting", "seed", "nonprivate_reference", "bounds",
               "budget_file", "budget", "data_name", "custodian", "start_over")
#: DPPCA's scree methods (its ``scree_method``; tests/test_cli.py keeps them equal).
_SCREE_METHODS = ("clipped", "huber", "pmwm", "kendall", "matrix")
#: DPPCA's directions' statistics (its ``radial``; tests/test_cli.py keeps them equal).
_RADIALS = ("spherical", "clipped", "covariance")


def _prog():
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not argv0 or argv0 in ("__main__.py", "-c", "-m") or argv0.startswith("pytest"):
        return "python -m sklearn_dppca"
    return argv0


def _default_splits():
    """DPPCA's default budget splits, as --budget-split would spell them."""
    text = split_text(DEFAULT_SPLIT)
    return f"{text}, with --scale {split_text(DEFAULT_SCALED_SPLIT)}"


def _axes_text(axes):
    return ",".join(str(axis + 1) for axis in axes)


#: An option's ``dest`` -> DPPCA's parameter whose default its help states, and how
#: the command line spells that default.
_DPPCA_DEFAULTS = {
    "eps": ("eps", str), "delta": ("delta", str), "accounting": ("accounting", str),
    "noise": ("noise", str), "components": ("n_components", str),
    "axes": ("axes", _axes_text), "bins": ("bins", str), "histogram": ("histogram", str),
    "scree_method": ("scree_method", str), "pairs": ("pairs", str),
    "radial": ("radial", str),
    "monotone": ("monotone", lambda on: "on" if on else "off"),
    "synthetic_sampling": ("synthetic_sampling", str),
}


class _HelpFormatter(argparse.HelpFormatter):
    """Help whose ``{dppca}`` is DPPCA's default of the option's parameter.

    The defaults are read off the estimator when the help is printed, not when the
    parser is built: parsing, and a redraw with ``--from-json``, import neither the
    estimators nor scikit-learn.
    """

    def _get_help_string(self, action):
        text = super()._get_help_string(action)
        if action.dest not in _DPPCA_DEFAULTS:
            return text
        from ._pca import DPPCA

        name, spell = _DPPCA_DEFAULTS[action.dest]
        # (the help is %-formatted next: a % in the value is escaped)
        default = spell(DPPCA().get_params()[name]).replace("%", "%%")
        return text.replace("{dppca}", default)


def build_parser():
    """The argument parser of the command line.

    Returns
    -------
    parser : argparse.ArgumentParser
        Every option defaults to None (not given), so that what is not given is
        left to DPPCA's defaults (:class:`~sklearn_dppca._cli_options.Options`).
    """
    parser = argparse.ArgumentParser(
        prog=_prog(), formatter_class=_HelpFormatter,
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
            "reports made without --seed and without --nonprivate-reference.\n\n"
            "Subcommand: 'app' (%(prog)s app [CSV]) starts the explorer, a local "
            "web app that fits and redraws interactively against a budget kept "
            "beside the data; its options: %(prog)s app --help."
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
                        help="total privacy budget epsilon > 0 (default {dppca})")
    budget.add_argument("--delta", type=str, default=None,
                        help="total delta in (0, 1), well below 1/n (default {dppca})")
    budget.add_argument("--budget-split", default=None, metavar="SPLIT",
                        help="shares of eps and delta among the parts "
                             f"{', '.join(_BUDGET_PARTS)}; default {_default_splits()}")
    budget.add_argument("--accounting", choices=("gdp", "basic"), default=None,
                        help="composition of the Gaussian parts: gdp (exact, one "
                             "mu-GDP block) or basic (shares added); default {dppca}")
    budget.add_argument("--noise", choices=("analytic", "classical"), default=None,
                        help="Gaussian calibration of each part under --accounting "
                             "basic (default {dppca}; classical implies --accounting "
                             "basic)")
    budget.add_argument("--budget-file", default=None, metavar="FILE",
                        help="a budget kept across runs: the fit is charged to FILE "
                             "(under a lock, before it computes) and refused if it "
                             "does not fit what is left; without it no budget is kept "
                             "across runs")
    budget.add_argument("--budget", default=None, metavar="EPS,DELTA",
                        help="the total budget of a new --budget-file (an existing "
                             "one keeps its own; if given, it must match)")
    budget.add_argument("--data-name", default=None, metavar="NAME",
                        help="the data set a --budget-file belongs to, as the "
                             "custodian names it (default: the CSV file's name without "
                             "its extension, or the built-in data's); a budget file "
                             "refuses a run on another data set")
    budget.add_argument("--custodian", default=None, metavar="DIR",
                        help="the custodian's folder (a key and a witness, made on "
                             "first use; default: $SKLEARN_DPPCA_CUSTODIAN if set): the "
                             "--budget-file is sealed, and a file edited, rolled back "
                             "or deleted is refused")
    budget.add_argument("--start-over", action="store_true", default=None,
                        help="the custodian's act, with --custodian: a fresh budget "
                             "where a deleted one was, or seal a file as it is")
    budget.add_argument("--seed", default=None, metavar="INT",
                        help="seed of the noise, for reproducible tests only: a "
                             "release made with a known seed is not private")
    model = parser.add_argument_group("model")
    model.add_argument("--components", default=None, metavar="K",
                       help="number of components (default {dppca}), or a fraction in (0, 1): "
                            "the fewest components whose cumulative private PVE "
                            "reaches it")
    model.add_argument("--scale", action="store_true", default=None,
                       help="correlation PCA: divide each variable by a private "
                            "spread, bought with the 'scale' part of the budget "
                            "(for variables in different units); with --bounds, a "
                            "variable whose spread is not estimable is divided by "
                            "its range / sqrt(12)")
    model.add_argument("--bounds", default=None, metavar="LOW:HIGH,...",
                       help="public ranges of the variables, from a codebook (never "
                            "from the data): low:high for each variable in order, or "
                            "name=low:high for each by name; values outside are "
                            "clipped, and the private searches the ranges make "
                            "unnecessary are skipped")
    model.add_argument("--axes", default=None, metavar="A,B",
                       help="the two components of the score summary, 1-based "
                            "(default {dppca})")
    model.add_argument("--bins", default=None, metavar="B[,B]",
                       help="histogram cells per axis: 20 or 20,20 (default {dppca}: from "
                            "the public number of rows and groups, 8 to 20)")
    model.add_argument("--histogram", choices=("additive", "sparse"), default=None,
                       help="score histogram mechanism (default {dppca})")
    model.add_argument("--radial", choices=_RADIALS, default=None,
                       help="the directions' statistic (default {dppca}): the "
                            "spherical Kendall matrix (scale-free), the Kendall matrix "
                            "clipped at a private radius, or the covariance about the "
                            "declared box's private mean (needs --bounds)")
    model.add_argument("--scree-method", choices=_SCREE_METHODS,
                       default=None, help="private variance method (default {dppca})")
    model.add_argument("--scree-params", default=None, metavar="KEY=VALUE,...",
                       help="tuning values of the scree method, e.g. "
                            "quantile_level=0.95,pairs=64 (DPPCA's scree_params)")
    model.add_argument("--monotone", action=argparse.BooleanOptionalAction,
                       default=None, help="make the private variances non-increasing "
                                          "(free post-processing; default {dppca})")
    model.add_argument("--synthetic-sampling", choices=("uniform", "center"),
                       default=None, help="synthetic score points uniformly in their "
                                          "cells or at the cell centres (default "
                                          "{dppca}; free post-processing)")
    model.add_argument("--pairs", default=None, metavar="auto|all|M",
                       help="pairs of the Kendall and scree U-statistics: 'all', M "
                            "partners per row, or 'auto' (every pair up to "
                            f"{AUTO_ALL_ROWS} rows, above {AUTO_PARTNERS} partners per "
                            f"row up to eps 1, {AUTO_PARTNERS} eps^2 beyond, at most "
                            f"{AUTO_MAX_PARTNERS}; default {{dppca}})")
    output = parser.add_argument_group("output")
    output.add_argument("--out", default=None, metavar="FILE",
                        help="overview figure, .png, .pdf or .svg (default report.png; "
                             "with --plan --eps-range the preview figure, default "
                             "eps_preview.png)")
    output.add_argument("--scree-kind", choices=SCREE_KINDS, default=None,
                        help="the scree panel: PVE bars on one axis (pve), the "
                             "variances only, or both on two axes; auto (the "
                             "default): the PVE, or the variances where no PVE is "
                             "estimable")
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
    output.add_argument("--plan", action="store_true",
                        help="print what the fit would buy (one line per mechanism "
                        "step, from the number of rows, the variables and the "
                        "budget: no cell is read) and stop; no file is written "
                        "(with --eps-range, only its figure)")
    output.add_argument("--eps-range", default=None, metavar="LOW:HIGH",
                        help="with --plan: the plan at 7 eps from LOW to HIGH "
                             "(geometric), each part's predicted noise and whether it "
                             "is bought, and what each eps means for one person, "
                             "printed and drawn to --out (default eps_preview.png); "
                             "nothing is read or spent")
    output.add_argument("--quiet", action="store_true",
                        help="print only warnings and errors")
    from ._version import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # the subcommand is dispatched before parsing (sklearn_dppca._cli.main): the
    # usage names it on a line of its own, after the report's generated one
    report_usage = parser.format_usage().removeprefix("usage: ").rstrip()
    parser.usage = (report_usage.replace("%", "%%")
                    + "\n       %(prog)s app [--help] [options] [CSV]")
    return parser
