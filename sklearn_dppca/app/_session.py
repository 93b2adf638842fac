"""The explorer's logic, without any web framework: one :class:`Explorer` per data set.

An explorer holds the data, the data set's :class:`~sklearn_dppca.PrivacyAccountant`
(opened on its budget file with :meth:`~sklearn_dppca.PrivacyAccountant.open`, so
that every explorer, process and command line on the file shares one budget under a
lock) and the fits made so far. A fit charges the accountant after its first pass
over the data (the input checks and what it computes ahead) and before it releases
anything (``DPPCA(accountant=)``), and the charge is on disk before any release, so a fit
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

import json
import os
import secrets
import tempfile
import threading
import warnings

from .._data_sources import UserError
from .._budget_words import budget_words, delta_note, spent_after
from .._pca import DPPCA
from .._release_write import export_release
from .._released_pca import load_release
from .._requests import eps_preview, planned_spend, shares_note
from .._summary import ledger_table, plan_text
from ._figures import draw_figure, figure_bytes, preview_png
from ._inputs import dppca_params
from ._sources import BUDGET_SUFFIX, budget_file_for, data_key
from ..privacy import BudgetExceededError, PrivacyAccountant, SealError

#: Suffix of the folder of a data set's releases, beside its budget file.
_RELEASES_SUFFIX = ".dppca-releases"

# One fit at a time in this process: the budget file is read, charged and
# written as one step.
_FIT_LOCK = threading.Lock()


def open_explorer(data, budget, directory=".", budget_file=None, legacy=None,
                  reference=False, custodian=None):
    """The :class:`Explorer` of ``data``: its budget file is ``budget_file`` if
    given, else ``legacy`` (a file named after the data, from before keys) if it
    exists, else the keyed file of ``directory`` (:func:`budget_file_for`).
    ``reference``: whether its fits may store the non-private reference;
    ``custodian``: the custodian's folder that seals its budget file.

    With a custodian and no ``budget_file``, the budget files and their secret
    live in the custodian's folder, not beside the data: a data set the
    custodian named keeps one budget wherever the explorer is started from
    (another folder, a copy of the CSV), and no stray file of the working
    folder is picked up.
    """
    if budget_file is not None:
        directory = os.path.dirname(os.path.abspath(budget_file))
    elif custodian is not None:
        directory, legacy = _custodian_budgets(custodian), None
    key = data_key(data, directory)
    if budget_file is None:
        budget_file = legacy if legacy is not None and os.path.exists(legacy) else \
            budget_file_for(key, directory)
    return Explorer(data, budget, budget_file, key=key, reference=reference,
                    custodian=custodian)


def _custodian_budgets(custodian):
    """The custodian's folder, made (owner only) if new: where the budget files
    of a sealed explorer are kept."""
    folder = os.path.abspath(os.fspath(custodian))
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot use the custodian's folder {folder!r}: "
                        f"{error.strerror or error}.") from None
    return folder


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


def _open_budget(path, budget, key=None, custodian=None):
    """The accountant of the budget file ``path``, opened
    (:meth:`~sklearn_dppca.PrivacyAccountant.open`): created with ``budget`` if
    new, with the data set's ``key``, sealed by the ``custodian``'s folder if
    given (a file that does not prove its history is refused, with what happened).

    Raises :class:`UserError` when the file holds another total than ``budget``
    or is not a saved accountant: the budget of a data set is never reset or
    raised by restarting with other numbers.
    """
    eps, delta = _check_budget(budget)
    try:
        return PrivacyAccountant.open(path, total=(eps, delta),
                                      key=None if os.path.exists(path) else key,
                                      custodian=custodian)
    except OSError as error:
        raise UserError(f"cannot use the budget file {path!r}: "
                        f"{error.strerror or error}.") from None
    except SealError as error:
        raise UserError(f"the budget file cannot be used: {error} (The custodian "
                        "starts a budget over with python -m sklearn_dppca "
                        "--budget-file FILE --custodian DIR --start-over.)") from None
    except (ValueError, TypeError) as error:
        if "holds a total" not in str(error):
            raise UserError(f"the budget file {path!r} cannot be used: {error}") from None
    stored = PrivacyAccountant.load(path)
    raise UserError(
        f"the budget file {path!r} holds a total budget of eps={stored.eps:g}, "
        f"delta={stored.delta:g}, not eps={eps:g}, delta={delta:g}: pass the same "
        f"budget (--budget {stored.eps:g},{stored.delta:g}) or another budget file.")

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
        return cls(load_release(export_release(estimator, allow_seeded=True)), label,
                   estimator, extra)

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
        # (the page never seeds a fit; one made in Python with a seed is written
        # marked as not private)
        release = export_release(source, include_nonprivate=with_reference,
                                 allow_seeded=True, extra=self.extra or None)
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
        release = load_release(export_release(release, allow_seeded=True))
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
    key : str, default=None
        The data set's key (the name of its budget file), checked against the
        key the file holds.
    custodian : str, default=None
        The custodian's folder that seals the budget file
        (:meth:`~sklearn_dppca.privacy.PrivacyAccountant.open`).
    reference : bool, default=False
        Whether a fit may store the NON-PRIVATE reference (``nonprivate`` among
        its inputs): only on an explorer local to its custodian, who turned it on
        (:mod:`._access`). Otherwise such a fit is refused before any charge.
    """

    def __init__(self, data, budget, budget_file, key=None, reference=False,
                 custodian=None):
        self.data = data
        self.custodian = custodian
        self.reference = bool(reference)
        self.budget_file = os.path.abspath(budget_file)
        self.budget = _check_budget(budget)
        self.key = key
        self.accountant = _open_budget(self.budget_file, self.budget, key, custodian)
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
            composition in one sentence), ``details`` (lines: each fit's eps at
            the total delta, its pure eps, delta and Gaussian mu, and the mu of
            all of them) and ``risk`` (what the spend so far and the whole budget
            mean for one person).
        """
        words = budget_words(self.accountant)
        charges = words["charges"]
        text = (f"{words['text']} ({100 * words['fraction']:.0f}% of the budget of this "
                f"data set; {charges} fit{'s' * (charges != 1)} charged); "
                f"{words['room']}")
        return {**words, "text": text,
                "budget_file": os.path.basename(self.budget_file)}

    # -- fitting (spends) ------------------------------------------------------------
    def _unfitted(self, params):
        """The DPPCA the page's fit inputs ask for on this data set, not fitted,
        and its keyword arguments."""
        kwargs = dppca_params(params, self.data.X.shape[0])
        return DPPCA(groups=self.data.labels, **kwargs), kwargs

    def plan(self, params):
        """The plan of the next fit: what it would buy, as text, before any data
        are read and before anything is spent (:meth:`sklearn_dppca.DPPCA.plan`).

        Parameters
        ----------
        params : dict
            The fit inputs by id (see :func:`dppca_params`).

        Returns
        -------
        str
            One line per mechanism step, then what is not estimable and the eps
            each part would need, then whether the fit fits what is left of the
            budget and what the meter would read after it.
        """
        estimator, kwargs = self._unfitted(params)
        n_samples, n_features = self.data.X.shape
        plan = estimator.plan(n_samples, n_features, splits=True)
        note = shares_note(kwargs["budget_split"])
        return "\n".join([plan_text(plan, kwargs["eps"], n_samples)]
                         + ([note] if note else [])
                         + [self._afford_text(planned_spend(plan))])

    def eps_preview(self, params):
        """The next fit's plan across eps, a quarter to four times its own (the
        same settings and rows; public, nothing spent): each part's largest
        noise sd relative to its scale and the best membership test, as text
        (:func:`~sklearn_dppca._requests.eps_preview`)."""
        estimator, kwargs = self._unfitted(params)
        n_samples, n_features = self.data.X.shape
        eps = kwargs["eps"]
        return eps_preview(estimator, n_samples, n_features, (eps / 4, eps * 4),
                           kwargs["delta"]).lstrip("\n")

    def eps_preview_picture(self, params, size=(8.0, 5.0), dpi=100):
        """The same preview drawn (:class:`~sklearn_dppca.display.EpsPreviewDisplay`),
        as a PNG file's bytes: public inputs only, nothing spent."""
        estimator, kwargs = self._unfitted(params)
        n_samples, n_features = self.data.X.shape
        eps = kwargs["eps"]
        return preview_png(estimator, n_samples, n_features, (eps / 4, eps * 4),
                           size, dpi)

    def _afford_text(self, spend):
        """Whether a fit charging ``spend`` fits what is left, and the meter after
        it (public numbers only: the plan and the charges)."""
        words = budget_words(self.accountant)
        if not self.accountant.can_afford(spend):
            return (f"Over the budget: {words['text']}, and this fit needs more than "
                    f"is left ({words['room']}). Fit would be refused (nothing spent).")
        after = spent_after(self.accountant, spend)
        return (f"Within the budget: {words['text']} now, {after:.2f} after this fit "
                f"({100 * after / words['eps_total']:.0f}% of the budget).")

    def fit(self, params):
        """Fit DPPCA with the page's fit inputs, charging the data set's budget.

        Parameters
        ----------
        params : dict
            The fit inputs by id (see :func:`dppca_params`).

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
        UserError
            For the non-private reference asked of an explorer without it
            (``reference``), before any charge.
        """
        kwargs = dppca_params(params, self.data.X.shape[0])
        if kwargs["compute_nonprivate"] and not self.reference:
            raise UserError("the NON-PRIVATE reference is off in this explorer: it is "
                            "local only, and its custodian turns it on when starting it "
                            "(python -m sklearn_dppca app --allow-reference). Nothing "
                            "was spent.")
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
                f"than is left of the budget of this data set: {words['text']}; "
                f"{words['room']}. Nothing was spent. Try a smaller eps, or show an earlier fit again "
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
