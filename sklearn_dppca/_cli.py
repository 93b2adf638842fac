"""``python -m sklearn_dppca``: a private PCA report from a CSV file or built-in data.

This module runs the report and writes its files; the arguments are parsed in
:mod:`~sklearn_dppca._cli_parser` and read into settings in
:mod:`~sklearn_dppca._cli_options`.

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

What makes a cell a number is our rule, not a parser's guess, whichever reader
reads the file (pandas' C parser for a plain file, the standard library's ``csv``
module for any other: :func:`~sklearn_dppca._data_sources.read_csv`).
"""

import os
import sys
import time
import warnings

from ._cli_options import Options, dppca_for, in_cli_terms
from ._cli_parser import build_parser
from ._requests import eps_preview, scree_panel
from ._data_sources import LARGE_N as _LARGE_N
from ._pair_design import design_pairs
from ._data_sources import UserError as _UserError
from ._data_sources import builtin_data, builtin_labels, csv_shape, read_csv
from ._summary import ledger_table, plan_text


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


def _pyplot():
    """pyplot, on the file backend unless the caller chose one already."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save_figure(estimator, options, out):
    _pyplot()
    from .display import plot_overview

    _write_figure(plot_overview(estimator,
                                scree_kw=scree_panel(options.scree_kind, estimator)),
                  options)


def _write_figure(figure, options):
    """Write ``figure`` to ``--out`` at ``--dpi`` and close it."""
    import matplotlib.pyplot as plt

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


def _save_preview(estimator, n_samples, n_features, options):
    """Draw the plan across ``--eps-range`` (public inputs only) to ``--out``."""
    from .display import EpsPreviewDisplay

    figure, ax = _pyplot().subplots(figsize=(8, 5.5), layout="constrained")
    EpsPreviewDisplay.from_estimator(estimator, n_samples, n_features,
                                     eps_range=options.eps_range, ax=ax)
    _write_figure(figure, options)


def _write_json(estimator, path, include_nonprivate, extra):
    from ._release_write import export_release

    try:
        # (--seed is the command line's explicit act, warned about when given: the
        # file of a seeded fit is written marked as not private)
        export_release(estimator, path, include_nonprivate=include_nonprivate, extra=extra,
                       allow_seeded=True)
    except OSError as error:
        raise _UserError(f"cannot write {path!r}: {error.strerror or error}.") from None



# --------------------------------------------------------------------------------------
# the two runs
# --------------------------------------------------------------------------------------
def _open_budget(options):
    """The accountant of ``--budget-file`` (None without it)."""
    if options.budget_file is None:
        return None
    from .privacy import PrivacyAccountant, SealError
    from .privacy._seal import custodian_folder

    path, name = options.budget_file, _data_name(options)
    custodian = custodian_folder(options.custodian)
    if options.start_over and custodian is None:
        raise _UserError("--start-over is the custodian's act on a sealed budget file: "
                         "give --custodian DIR too.")
    try:
        return PrivacyAccountant.open(path, total=options.budget,
                                      key=_DATA_KEY_PREFIX + name,
                                      custodian=custodian,
                                      start_over=options.start_over)
    except OSError as error:
        raise _UserError(f"cannot use --budget-file {path!r}: "
                         f"{error.strerror or error}.") from None
    except SealError as error:
        message = " ".join(str(error).split()).replace(
            "open it with start_over=True", "run again with --start-over").replace(
            "open it with its custodian (custodian=)",
            "give its custodian's folder (--custodian DIR)")
        raise _UserError(f"--budget-file: {message} Nothing was spent.") from None
    except (ValueError, TypeError) as error:
        message = " ".join(str(error).split())
        if "(key)" in message:
            stored = PrivacyAccountant.open(path).key or ""
            owner = stored.removeprefix(_DATA_KEY_PREFIX)
            message = (f"the file keeps the budget of data set {owner!r}, not {name!r}: "
                       "a budget file belongs to one data set. Give --data-name "
                       f"{owner} if this is that data set under another file name, or "
                       "use another budget file. Nothing was spent.")
        elif "(total)" in message and not os.path.exists(path):
            message = ("the file does not exist yet: give --budget EPS,DELTA, the total "
                       "budget of the data set, to create it.")
        elif "(total)" in message:
            message = (message.replace("(total)", "(--budget)")
                       + " Leave --budget out to use the file's total.")
        raise _UserError(f"--budget-file {path!r}: {message}") from None


#: How a budget file names its data set (the accountant's key).
_DATA_KEY_PREFIX = "data set "


def _data_name(options):
    """The data set a budget file belongs to: ``--data-name``, else the CSV file's
    name without its extension, else the built-in data's (public names)."""
    if options.data_name is not None:
        return options.data_name
    if options.csv is None:
        return f"built-in {options.data}"
    return os.path.splitext(os.path.basename(options.csv))[0]


def _budget_line(accountant, options):
    """One line on the budget: the file's, or that no budget is kept."""
    if accountant is None:
        return ("note: no budget is kept across runs: every run on the same data "
                "spends its eps again (--budget-file FILE --budget EPS,DELTA keeps one).")
    from ._budget_words import budget_words

    words = budget_words(accountant)
    return (f"Budget of {options.budget_file}: {words['text']} ({words['charges']} "
            f"fit{'s' * (words['charges'] != 1)} charged; fits composed exactly); "
            f"{words['room']}. {words['risk']}")


def _fit(options, out, err):
    say = (lambda *a, **k: None) if options.quiet else (lambda *a: print(*a, file=out))
    estimator = dppca_for(options, builtin_labels(options.data) if options.csv is None
                           else options.groups)
    accountant = _open_budget(options)
    if accountant is not None:
        estimator.set_params(accountant=accountant)
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
    from ._data._rows import block_sizes

    chosen = estimator.get_params()
    pairs = design_pairs(chosen["pairs"], block_sizes(n_samples), chosen["eps"])
    if "pairs" not in options.settings and pairs != "all":
        # DPPCA's own rule (pairs="auto"), the same for every front end
        say(f"note: {n_samples} rows: the incomplete U-statistic with {pairs} "
            "partners per row (--pairs auto; --pairs all for every pair).")
    # what the options ask of the data's shape, refused as the fit would refuse it
    # before any charge (the plan runs the fit's own checks)
    _checked_plan(estimator, n_samples, n_features, "")
    if "random_state" in options.settings:
        print("warning: --seed fixes the noise: anyone who knows the seed can remove it. "
              "Use it for tests only; publish releases made without --seed.", file=err)
    if options.settings.get("compute_nonprivate"):
        print("warning: --nonprivate-reference: the figure and the JSON contain ordinary "
              "PCA of the raw data (NOT PRIVATE, key 'nonprivate_reference_NOT_PRIVATE'); "
              "never publish them.", file=err)
    # progress is shown unless --quiet, and always on large data (a long fit must
    # not look stuck)
    estimator.set_params(verbose=1 if (n_samples > _LARGE_N or not options.quiet) else 0)
    from ._budget_words import budget_words
    from .privacy import BudgetExceededError

    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator.fit(data.X, data.y)
        except BudgetExceededError as error:
            _show_warnings(caught, err)
            words = budget_words(accountant)
            raise _UserError(
                f"--budget-file {options.budget_file}: this fit does not fit what is left "
                f"({words['text']}; {words['room']}); nothing was spent. Details: "
                f"{' '.join(str(error).split())}") from None
        except (ValueError, TypeError) as error:
            # the data reaching the fit are checked above (labels declared, values
            # finite and inside the domain), so what is left to fail is an option
            # against the public n or p, which the message may state (the
            # estimators' messages quote no data value)
            _show_warnings(caught, err)
            # (a fit fails only before its charge: nothing after it may fail)
            raise _UserError(f"the fit refused its settings (nothing was spent): "
                             f"{in_cli_terms(error)}") from None
    _show_warnings(caught, err)
    say(f"Fitted in {time.perf_counter() - start:.1f} s.")
    say(_budget_line(accountant, options))
    # public facts only: where the data came from and the declared group column
    # (the variables are the release's feature_names; nothing here is read off
    # the cells)
    extra = {"data_source": data.source, "group_column": data.group_column}
    return estimator, extra


def _plan(options, out):
    """Print the plan of the fit the options describe, from the data's shape only
    (a CSV's rows are counted, no cell is read) and stop: no file is written."""
    estimator = dppca_for(options, builtin_labels(options.data) if options.csv is None
                           else options.groups)
    if options.csv is None:
        n_samples, n_features = builtin_data(options.data).X.shape
        source = f"built-in {options.data!r} data"
    else:
        n_samples, n_features = csv_shape(options.csv, options.columns, options.group)
        source = repr(options.csv)
    plan = _checked_plan(estimator, n_samples, n_features, "cannot plan the fit: ",
                         splits=True)
    eps = estimator.get_params()["eps"]
    print(f"Plan of DPPCA on {source}: {n_samples} rows x {n_features} variables, "
          f"eps = {eps:g} (no cell read, nothing spent):", file=out)
    print(plan_text(plan, eps, n_samples), file=out)
    from ._budget_words import risk_words
    from ._requests import planned_spend

    delta = estimator.get_params()["delta"]
    print(risk_words(planned_spend(plan), delta), file=out)
    if options.eps_range is not None:
        try:
            preview = eps_preview(estimator, n_samples, n_features, options.eps_range,
                                  delta)
        except (ValueError, TypeError) as error:
            raise _UserError(f"cannot plan the fit: {in_cli_terms(error)}") from None
        print(preview, file=out)
        replaced = os.path.exists(options.out)
        _save_preview(estimator, n_samples, n_features, options)
        print(f"{'Replaced' if replaced else 'Wrote'} the preview figure {options.out}",
              file=out)
    return 0


def _checked_plan(estimator, n_samples, n_features, prefix, splits=False):
    """The estimator's plan on ``n_samples`` x ``n_features`` (with ``splits``,
    the split that would buy each part it does not): one ``error:`` line (after
    ``prefix``) where the fit would refuse its options before any charge."""
    try:
        return estimator.plan(n_samples, n_features, splits=splits)
    except (ValueError, TypeError) as error:
        raise _UserError(f"{prefix}{in_cli_terms(error)}") from None


def _report(estimator, options, out, err, extra=None, json_path=None):
    say = (lambda *a, **k: None) if options.quiet else (lambda *a: print(*a, file=out))
    say("")
    say(str(estimator.summary()))
    say("")
    say(ledger_table(estimator.privacy_ledger_, estimator.privacy_spent_))
    # what an earlier run wrote is replaced, and said so (even with --quiet)
    replaced = [path for path in (options.out, json_path)
                if path is not None and os.path.exists(path)]
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
    for path in replaced:
        print(f"note: {path} existed and was replaced (--out and --json name other "
              "files).", file=err)


#: Options whose value may start with a minus sign (a negative bound): argparse
#: would read ``--bounds -5:5`` as two options.
_SIGNED_VALUES = ("--bounds",)


def _attached_values(argv):
    """``argv`` with ``--bounds -5:5,...`` written ``--bounds=-5:5,...``."""
    if argv is None:
        return None
    joined, items = [], list(argv)
    while items:
        item = items.pop(0)
        if item in _SIGNED_VALUES and items and items[0].startswith("-") \
                and not items[0].startswith("--"):
            item = f"{item}={items.pop(0)}"
        joined.append(item)
    return joined


def _run(argv=None, out=None, err=None):
    """Parse ``argv`` and run; :class:`_UserError` propagates to :func:`main`."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = build_parser().parse_args(_attached_values(argv))
    options = Options(args)
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
    if options.plan:
        return _plan(options, out)
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

