"""Starting the explorer: from Python (:func:`run`, :func:`create_app`) and from the
command line (``python -m sklearn_dppca app``)."""

import argparse
import os
import socket
import sys
import webbrowser

from .._data_sources import UserError, builtin_data, read_csv
from .._data_sources import TabularData
from .._validation import MAX_ABS_VALUE
from ._access import TOKEN_VARIABLE, access_for, local_access, served_access
from ..privacy._seal import CUSTODIAN_VARIABLE, custodian_folder
from ._session import open_explorer
from ._sources import BUDGET_SUFFIX, csv_fingerprint, declare_name

_INSTALL_HINT = 'the explorer app needs Shiny for Python: pip install "sklearn-dppca[app]"'
_BUILTIN_BUDGET = "gau" + BUDGET_SUFFIX
_GIVEN_BUDGET = "data" + BUDGET_SUFFIX


def _check_shiny():
    """ImportError with the install hint when the optional extra is missing."""
    from . import _ui

    if _ui.App is None:
        raise ImportError(_INSTALL_HINT)


def _start(X, groups, y, budget, budget_file, access, data_name=None, custodian=None):
    """The explorer of the starting data and the choice of ``data_source`` it is."""
    if X is None:
        if groups is not None or y is not None:
            raise ValueError("groups and y describe X; without X the app starts on the "
                             "built-in data, which has its own groups.")
        if data_name is not None:
            raise ValueError("data_name names X; without X the app starts on the "
                             "built-in data, which has its own budget.")
        data, source = builtin_data(), "builtin"
        legacy = _BUILTIN_BUDGET
    else:
        if groups is not None and y is None:
            raise ValueError("groups is set, so y is needed: each row's group label.")
        if not hasattr(X, "shape"):
            import numpy as np

            X = np.asarray(X)
        data = TabularData(X, None if groups is None else y,
                           None if groups is None else list(groups), "the data given to the app")
        source, legacy = "start", _GIVEN_BUDGET   # (_ui.START)
        if data_name is not None:
            declare_name(data, data_name)
            legacy = None
    # (a budget file named after the data, from before keys, is still used)
    return open_explorer(data, budget, ".", budget_file, legacy,
                         reference=access.reference, custodian=custodian), source


def _build(X, groups, y, budget, budget_file, access, data_name=None, custodian=None):
    from . import _ui

    _check_shiny()
    start, source = _start(X, groups, y, budget, budget_file, access, data_name,
                           custodian)
    budget_dir = os.path.dirname(start.budget_file)
    return _ui.build_app(start, start.budget, budget_dir, start_source=source,
                         access=access)


def create_app(X=None, *, groups=None, y=None, budget=(1.0, 1e-5), budget_file=None,
               data_name=None, custodian=None, token=None, allow_reference=False):
    """Build the explorer as a Shiny ``App``, without serving it.

    The app fits :class:`~sklearn_dppca.DPPCA` on the chosen data set and charges
    every fit to the data set's :class:`~sklearn_dppca.PrivacyAccountant`, kept
    in its budget file (:meth:`~sklearn_dppca.PrivacyAccountant.open`: charged
    under a lock, before the fit computes): a fit that does not fit what is left
    is refused before any computation, several apps or processes on one file
    share its budget, and restarting the app keeps what was spent. Each fit's
    release is kept beside the budget file (``data-<key>.dppca-releases``,
    without the non-private reference) and listed again after a restart.
    Redrawing an earlier fit, or opening a release file, is free. Serve the app with any ASGI server, or use
    :func:`run`.

    Without ``token`` the app is a local, single-user tool: serve it on this
    computer's loopback address only (127.0.0.1). With ``token`` it is a
    custodian's deployment, safe to serve beyond: every request must carry the
    token (the page's address ends in ``?token=...`` once; the browser then
    keeps it in a cookie), CSV uploads are off and no fit can store the
    non-private reference.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), default=None
        The data the app starts on (a DataFrame names the variables); None starts
        on the built-in ``gau`` data. The page can switch to the example data
        sets or to an uploaded CSV file, each with a budget of its own.
    groups : list, default=None
        The public list of group labels of ``X``'s rows.
    y : array-like of shape (n_samples,), default=None
        Each row's group label, needed with ``groups``.
    budget : (float, float), default=(1.0, 1e-5)
        The total ``(eps, delta)`` of each data set, spent by all fits together.
    budget_file : str, default=None
        The JSON file of the starting data's budget. An existing file is opened
        and must hold the same total; a missing one is created. Default: the file
        of the data's key in the current directory, ``data-<key>.dppca-budget.json``
        (the key is a keyed hash of the parsed table, so the same table finds the
        same file under any name; a ``data.dppca-budget.json`` or, without ``X``,
        ``gau.dppca-budget.json`` made by an earlier version is used if present).
        The other data sets' files go in the same directory, by their keys.
    data_name : str, default=None
        The custodian's name for ``X``: its budget is then keyed by this name
        (under the directory's secret), not by its cells, so that an edited
        cell or a renamed column does not start a fresh budget for the same
        people. None: keyed by the table.
    custodian : str, default=None
        The custodian's folder (a key and a witness): every data set's budget
        file is then sealed, and one edited, rolled back or deleted is refused
        (:meth:`~sklearn_dppca.privacy.PrivacyAccountant.open`).
    token : str, default=None
        The access token of a served app (at least 16 characters among letters,
        digits and ``-_.~``; e.g. ``secrets.token_urlsafe()``). None: a local app.
    allow_reference : bool, default=False
        Offer "store the NON-PRIVATE reference" on the page (the exact PCA, for
        comparison on this computer; never to publish). Local apps only: with
        ``token`` it is an error.

    Returns
    -------
    app : shiny.App
        The explorer.

    Raises
    ------
    ImportError
        If Shiny for Python is not installed (``pip install "sklearn-dppca[app]"``).
    ValueError
        If the budget file holds another total, or an argument is invalid (a
        token too short, the reference asked of a served app).

    See Also
    --------
    run : Build the explorer and serve it.

    Examples
    --------
    >>> from sklearn_dppca.app import create_app
    >>> app = create_app(budget=(4.0, 1e-5))   # doctest: +SKIP
    >>> import uvicorn                         # doctest: +SKIP
    >>> uvicorn.run(app, port=8000)            # doctest: +SKIP
    """
    try:
        access = local_access(allow_reference) if token is None else \
            served_access(token, allow_reference)
        return _build(X, groups, y, budget, budget_file, access, data_name, custodian)
    except UserError as error:
        raise ValueError(str(error)) from None


def _listen(host, port):
    """A socket bound to ``(host, port)``, or :class:`UserError` (the port is in use)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as error:
        sock.close()
        reason = getattr(error, "strerror", None) or error
        raise UserError(f"cannot listen on {host}:{port}: {reason} (another program may "
                        "use the port: pick another with --port).") from None
    return sock


def _serve(app, sock, host, launch, access):
    """Print the address and serve ``app`` on the bound ``sock`` until interrupted
    (a served app's address carries its token, printed here once)."""
    try:
        import uvicorn   # installed with shiny
    except ImportError:
        raise ImportError(_INSTALL_HINT) from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{bound}" + \
        (f"/?token={access.token}" if access.served else "")
    print(f"sklearn-dppca explorer on {address}", flush=True)
    if access.served:
        print("Served beyond this computer: whoever has this address (its token) can "
              "fit on the budgets; CSV uploads and the non-private reference are off.",
              flush=True)
    if launch:
        webbrowser.open(address)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])


def run(X=None, *, groups=None, y=None, budget=(1.0, 1e-5), budget_file=None,
        data_name=None, custodian=None, host="127.0.0.1", port=8000, launch=True,
        token=None, allow_reference=False):
    """Serve the explorer on ``host:port`` until interrupted.

    The explorer (see :func:`create_app`) prints its address, ``sklearn-dppca
    explorer on http://127.0.0.1:8000``, and serves there; from the command line
    it is ``python -m sklearn_dppca app [data.csv] --budget EPS,DELTA``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), default=None
        The data the app starts on; None starts on the built-in ``gau`` data.
    groups : list, default=None
        The public list of group labels of ``X``'s rows.
    y : array-like of shape (n_samples,), default=None
        Each row's group label, needed with ``groups``.
    budget : (float, float), default=(1.0, 1e-5)
        The total ``(eps, delta)`` of each data set.
    budget_file : str, default=None
        The JSON file of the starting data's budget (see :func:`create_app`).
    data_name : str, default=None
        The custodian's name for ``X``, which keys its budget (see
        :func:`create_app`).
    custodian : str, default=None
        The custodian's folder that seals the budget files (see
        :func:`create_app`).
    host : str, default="127.0.0.1"
        The address to listen on: only this computer by default.
    port : int, default=8000
        The port (0: any free port, printed).
    launch : bool, default=True
        Open the address in a web browser.
    token : str, default=None
        The access token when ``host`` is not a loopback address (see
        :func:`create_app`); None: the environment variable
        ``SKLEARN_DPPCA_APP_TOKEN`` if set, else a new random token, printed in
        the address. On the loopback there is none.
    allow_reference : bool, default=False
        Offer the non-private reference (see :func:`create_app`); only on the
        loopback.

    Raises
    ------
    ImportError
        If Shiny for Python is not installed.
    ValueError
        If the budget file holds another total, or an argument is invalid.
    OSError
        If the port is in use.

    See Also
    --------
    create_app : The same explorer as an App object, not served.

    Examples
    --------
    >>> from sklearn_dppca.app import run
    >>> from sklearn_dppca.datasets import load_wine_frame
    >>> X, y = load_wine_frame()
    >>> groups = ["class_0", "class_1", "class_2"]   # declared, not read off y
    >>> run(X, groups=groups, y=y, budget=(2.0, 1e-5))   # doctest: +SKIP
    sklearn-dppca explorer on http://127.0.0.1:8000
    """
    try:
        access = access_for(host, token, allow_reference)
        app = _build(X, groups, y, budget, budget_file, access, data_name, custodian)
    except UserError as error:
        raise ValueError(str(error)) from None
    try:
        sock = _listen(host, port)
    except UserError as error:
        raise OSError(str(error)) from None
    _serve(app, sock, host, launch, access)


# --------------------------------------------------------------------------------------
# python -m sklearn_dppca app
# --------------------------------------------------------------------------------------
def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_dppca app",
        description=(
            "A local web app to explore a data set with differentially private PCA. "
            "Every fit is charged to the data set's total budget (--budget), kept in "
            "a JSON file beside the data (data-KEY" + BUDGET_SUFFIX + ", KEY a keyed "
            "hash of the table: the same table under any name shares it) with the "
            "fits' releases; a fit that would exceed it is refused, redrawing is "
            "free, and a restart keeps what was spent and what was released."),
    )
    parser.add_argument("csv", nargs="?", default=None, metavar="CSV",
                        help="data file with a header row (default: built-in 'gau' data)")
    parser.add_argument("--budget", default="1,1e-5", metavar="EPS,DELTA",
                        help="total budget of each data set (default 1,1e-5)")
    parser.add_argument("--budget-file", default=None, metavar="FILE",
                        help="the budget file of the starting data (default: "
                             "data-KEY" + BUDGET_SUFFIX + " beside the CSV, or here "
                             "for the built-in data)")
    parser.add_argument("--data-name", default=None, metavar="NAME",
                        help="the custodian's name for the CSV's data set: its budget "
                             "is keyed by this name, not by the file's cells (needed "
                             "with a --host beyond this computer)")
    parser.add_argument("--custodian", default=None, metavar="DIR",
                        help="the custodian's folder (a key and a witness; default: "
                             "$" + CUSTODIAN_VARIABLE + " if set): the budget files are "
                             "sealed, and one edited, rolled back or deleted is refused")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this computer; "
                             "any other needs the access token printed in the address, "
                             "or set in " + TOKEN_VARIABLE + ", and turns uploads off)")
    parser.add_argument("--allow-reference", action="store_true",
                        help="offer to store the NON-PRIVATE reference with a fit "
                             "(on this computer only; never publish it)")
    parser.add_argument("--port", default="8000", help="port (default 8000; 0: any)")
    parser.add_argument("--columns", default=None, metavar="a,b,c",
                        help="the CSV columns that are the variables")
    parser.add_argument("--group", default=None, metavar="COLUMN",
                        help="CSV column of the group labels (needs --groups)")
    parser.add_argument("--groups", default=None, metavar="a,b,c",
                        help="the public list of group labels")
    return parser


def _budget(text):
    parts = str(text).split(",")
    try:
        eps, delta = (float(part) for part in parts)
    except ValueError:
        raise UserError(f"--budget must be EPS,DELTA such as 4,1e-5, got {text!r}.") from None
    from ..privacy import PrivacyAccountant

    try:
        PrivacyAccountant(eps, delta)
    except (ValueError, TypeError) as error:
        raise UserError(f"--budget {text}: {error}") from None
    return eps, delta


def _port(text):
    try:
        port = int(str(text).strip())
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise UserError(f"--port must be an integer in 0..65535, got {text!r}.")
    return port


def _start_data(args):
    """The CSV's data, or None for the built-in data (checked as the report does)."""
    from .._data_sources import parse_names

    columns = (parse_names(args.columns, "--columns", "column")
               if args.columns is not None else None)
    labels = parse_names(args.groups, "--groups", "label") if args.groups is not None \
        else None
    group = args.group.strip() if args.group is not None else None
    if args.csv is None:
        if columns or group or labels or args.data_name is not None:
            raise UserError("--columns, --group, --groups and --data-name need a CSV "
                            "file; the built-in data has its own variables, groups and "
                            "budget.")
        return None
    if (group is None) != (labels is None):
        raise UserError("--group COLUMN and --groups a,b,c come together: the column of "
                        "the labels and their public list.")
    data = read_csv(args.csv, columns, group, labels, max_abs=MAX_ABS_VALUE)
    if args.data_name is not None:                   # the custodian's name: its key
        return declare_name(data, args.data_name)
    data.fingerprint = csv_fingerprint(args.csv)     # the whole table: its budget's key
    return data


def _run(argv):
    args = _parser().parse_args(argv)
    budget = _budget(args.budget)
    port = _port(args.port)
    data = _start_data(args)
    access = access_for(args.host, None, args.allow_reference)
    if access.served and args.csv is not None and args.data_name is None:
        raise UserError("an explorer served beyond this computer keys its data set's "
                        "budget by the custodian's name for it: add --data-name NAME.")
    try:
        _check_shiny()
    except ImportError as error:
        raise UserError(str(error)) from None
    # the port first: a port in use is reported before anything else is built
    sock = _listen(args.host, port)
    try:
        app = _app_of(args, data, budget, access)
    except BaseException:
        sock.close()
        raise
    _serve(app, sock, args.host, False, access)
    return 0


def _app_of(args, data, budget, access):
    """The app of the command line's starting data."""
    from . import _ui

    custodian = custodian_folder(args.custodian)
    if data is None:
        start, source = _start(None, None, None, budget, args.budget_file, access,
                               custodian=custodian)
    else:
        legacy = None if args.data_name is not None else args.csv + BUDGET_SUFFIX
        start = open_explorer(data, budget, os.path.dirname(os.path.abspath(args.csv)),
                              args.budget_file, legacy=legacy,
                              reference=access.reference, custodian=custodian)
        source = _ui.START
    return _ui.build_app(start, start.budget, os.path.dirname(start.budget_file),
                         start_source=source, access=access)


def main(argv):
    """``python -m sklearn_dppca app ...``: 0, or 2 after one ``error:`` line."""
    try:
        return _run(argv)
    except UserError as error:
        print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    except SystemExit as exit_:       # argparse: --help and usage errors
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except KeyboardInterrupt:
        return 0
