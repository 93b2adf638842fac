"""A total privacy budget for one data set, charged by every fit that uses it.

Each fit spends a :class:`~sklearn_dppca.privacy.Spend`: ``eps`` and ``delta``
charged by basic composition and the ``mu`` of its Gaussian parts, composed as one
``mu``-GDP block (see :mod:`sklearn_dppca.privacy._accounting`). The accountant
composes the fits in the same way: the ``eps``'s and the ``delta``'s add, the
``mu``'s add in squares. This is valid however the fits are interleaved or chosen
from earlier results, because composition in ``f``-DP is adaptive, commutative
and associative (Dong, Roth & Su 2022, Thm 3.2 and Prop. 3.2): all Gaussian parts
of all fits form one ``mu``-GDP block, and basic composition adds the rest.

A budget shared by processes lives in a file (:meth:`PrivacyAccountant.open`):
every charge is made under an exclusive OS lock on the file's lock file
(``<file>.lock``, ``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows), which
is held while the file is read, the charge checked, and the file written again
(atomically: a temporary file renamed over it). The charge is on disk before
:meth:`~PrivacyAccountant.charge` returns, that is before the fit computes
anything (write-ahead): a fit that dies after its charge leaves it spent. Each
charge has its own random ``id``; the charges in memory and those in the file are
merged by ``id`` (a union: a file rolled back or deleted gets them back), never by
counting.
"""

import contextlib
import json
import math
import os
import threading
import uuid
import weakref
from datetime import datetime, timezone

from .._validation import NON_NEGATIVE, Instance, Interval, check_field, check_param
from ._accounting import (SMALLEST_GAUSSIAN_DELTA, Spend, compose, gdp_delta, gdp_mu,
                          tidy as _tidy, tidy_down)
from ._calibration import check_delta, check_eps
from ._files import file_lock as _file_lock, write_json as _write_json
from ._seal import Custodian, SealError, new_budget_id

#: The format tag of a saved accountant (version 1, without charge ids and key, is
#: still read).
_ACCOUNTANT_FORMAT = "sklearn-dppca/accountant/2"
_FORMAT_V1 = "sklearn-dppca/accountant/1"
#: A sealed budget file (:mod:`._seal`): a seal and a chain value per charge.
_FORMAT_SEALED = "sklearn-dppca/accountant/3"
_KEYS = ("format", "eps", "delta", "key", "charges")
_KEYS_V1 = ("format", "eps", "delta", "charges")
_KEYS_SEALED = _KEYS + ("budget_id", "seal")
_CHARGE_KEYS = ("id", "label", "eps", "delta", "mu", "time")
_CHARGE_KEYS_V1 = ("label", "eps", "delta", "mu", "time")
_CHARGE_KEYS_SEALED = _CHARGE_KEYS + ("chain",)
# The accountants alive in this process, by token: unpickling one in the process
# that owns it returns the same object instead of a copy that would split its budget.
_LIVE = weakref.WeakValueDictionary()


class BudgetExceededError(ValueError):
    """A charge asks for more than what is left of an accountant's budget.

    Raised by :meth:`PrivacyAccountant.charge` before anything is computed or
    recorded: the fit that asked releases nothing and spends nothing.

    See Also
    --------
    PrivacyAccountant : The budget that refuses the charge.

    Examples
    --------
    >>> from sklearn_dppca import BudgetExceededError, PrivacyAccountant
    >>> from sklearn_dppca.privacy import Spend
    >>> accountant = PrivacyAccountant(eps=1.0, delta=1e-5)
    >>> try:
    ...     accountant.charge(Spend(eps=2.0), label="too much")
    ... except BudgetExceededError:
    ...     print("refused; spent:", accountant.spent())
    refused; spent: (0.0, 0.0)
    """


class PrivacyAccountant:
    """A total ``(eps, delta)`` for one data set, shared by every fit on it.

    Hand the same accountant to every estimator fitted on a data set
    (``accountant=`` parameter): each fit charges its planned spend before it
    releases anything (after its first pass over the data: the input checks and
    what it computes ahead), and a fit that would exceed the total raises
    :class:`BudgetExceededError` instead. Fits are composed exactly for their
    Gaussian parts (``mu``'s add in squares), so two fits cost less than the sum of
    their ``(eps, delta)`` pairs.

    ``PrivacyAccountant(eps, delta)`` keeps its budget in memory, for one process.
    A budget that several processes (or runs, or an explorer and a script) share
    lives in a file: :meth:`open` it in each process. Each charge of an opened
    accountant reads the file, checks and writes it under an exclusive OS lock,
    before the fit computes, so no interleaving of processes overspends it and a
    fit that dies after its charge stays charged.

    An accountant is a handle to one budget. Copying it (:func:`copy.copy`,
    :func:`copy.deepcopy`, :func:`sklearn.base.clone` of an estimator holding it)
    returns the same object, and so does unpickling it in the process that created
    it while it is alive. Anywhere else (another process, ``n_jobs > 1`` with a
    process-based backend, :mod:`multiprocessing`, or this process once the
    original is gone) unpickling returns a read-only view: its charges and totals
    can be read, but :meth:`charge` raises ``RuntimeError``, and so does the
    original object in a forked child. Run searches with an accountant with
    ``n_jobs=1`` (or a thread-based backend), or :meth:`open` the budget file in
    the process that fits. Threads may share it.

    Parameters
    ----------
    eps : float
        Total privacy parameter, > 0.
    delta : float
        Total privacy parameter, in (0, 1): Gaussian mechanisms need ``delta > 0``.

    See Also
    --------
    DPPCA : An estimator that charges it (``accountant=`` parameter).
    BudgetExceededError : Raised when a charge does not fit.

    Examples
    --------
    >>> from sklearn_dppca.privacy import (BudgetExceededError, PrivacyAccountant,
    ...                                    Spend, gdp_mu)
    >>> accountant = PrivacyAccountant(eps=2.0, delta=1e-5)

    Each fit below spends ``0.2`` pure ``eps`` and a Gaussian block worth
    ``(0.8, 1e-5)``; added up, two of them would need ``(2, 2e-5)``, but composed
    exactly they fit in ``(2, 1e-5)``: read at the total's ``delta``, the two
    together spend about ``eps = 1.57``.

    >>> fit = Spend(eps=0.2, mu=gdp_mu(0.8, 1e-5))
    >>> accountant.charge(fit, label="first fit")
    >>> accountant.charge(fit, label="second fit")
    >>> eps, delta = accountant.spent()
    >>> round(eps, 2), delta
    (1.57, 1e-05)
    >>> accountant.can_afford(Spend(eps=0.5))
    False
    >>> try:
    ...     accountant.charge(Spend(eps=0.5), label="third fit")
    ... except BudgetExceededError:
    ...     print("refused")
    refused
    >>> len(accountant.charges)
    2
    """

    def __init__(self, eps, delta):
        self._eps = check_eps(eps)
        self._delta = check_delta(delta)
        self._charges = []
        self._path = None        # the budget file of an opened accountant
        self._key = None         # what the budget protects, as the file names it
        self._read_only = False  # an unpickled copy
        self._last = None        # the last charge this object made
        self._custodian = None   # the custodian of a sealed file (_seal.Custodian)
        self._sealed = None      # its {"budget_id", "seal"}
        self._take_ownership()

    def _take_ownership(self, pid=None, token=None):
        """Bind to the process that may charge, and register for unpickling."""
        self._pid = os.getpid() if pid is None else pid
        self._token = uuid.uuid4().hex if token is None else token
        # one check-and-record at a time when threads share the accountant
        self._lock = threading.Lock()
        _LIVE[self._token] = self

    # -- the budget file ------------------------------------------------------------
    @classmethod
    def open(cls, path, total=None, *, key=None, custodian=None, start_over=False):
        """Open the budget kept in the file ``path``, shared with other processes.

        A new file is created with the budget ``total``; an existing one is read
        (and must hold the same total when ``total`` is given). Every
        :meth:`charge` of the returned accountant then takes an exclusive OS lock
        on the file (on its lock file ``<path>.lock``, left in place), reads the
        charges on disk, merges them with its own by charge ``id``, checks the new
        charge against the merged total and writes the file atomically before it
        returns: two processes charging one file at once never overspend it, and
        a charge is on disk before the fit that asked for it computes anything.
        Reading the accountant (:attr:`charges`, :meth:`spent`,
        :meth:`remaining`, :meth:`can_afford`) reads the file again first.

        Only the object returned here (in this process) charges the file: a
        pickled copy is a read-only view, and a forked child must open the file
        itself.

        Parameters
        ----------
        path : str or path-like
            The budget file (JSON, as written by :meth:`save`).
        total : (float, float), default=None
            The total ``(eps, delta)``: needed for a new file; for an existing
            one, checked against what the file holds (None: the file's).
        key : str, default=None
            Names what the budget protects (for example a keyed hash of the data
            set), stored in a new file; an existing file with another key is
            refused. None: no check (a file without a key gets none).
        custodian : str or path-like, default=None
            The custodian's folder (its key and witness, made on first use; keep
            it out of reach of those who only fit). The file is then **sealed**: a
            chain of MACs under the custodian's key proves its history, and a
            file edited, rolled back to an older copy, given a raised total, or
            deleted is refused with a :class:`~sklearn_dppca.privacy.SealError`
            that says which (:mod:`sklearn_dppca.privacy._seal`). None: the file
            is not sealed (and a sealed file cannot be opened).
        start_over : bool, default=False
            The custodian's explicit act, with ``custodian``: start a fresh
            budget where a deleted one was, take on a file this custodian's
            witness does not know, or seal an unsealed file as it is.

        Returns
        -------
        PrivacyAccountant
            The accountant of the file.

        Raises
        ------
        TypeError
            If ``path``, ``total`` or ``key`` has a wrong type.
        ValueError
            If ``total`` is missing for a new file or differs from the file's, if
            ``key`` differs from the file's, or if the file is not a saved
            accountant (the message names the problem).
        SealError
            With ``custodian``, if the file does not prove its history; without,
            if the file is sealed.

        Examples
        --------
        >>> import os, tempfile
        >>> from sklearn_dppca.privacy import PrivacyAccountant, Spend
        >>> path = os.path.join(tempfile.mkdtemp(), "budget.json")
        >>> accountant = PrivacyAccountant.open(path, total=(1.0, 1e-5))
        >>> accountant.charge(Spend(eps=0.75), label="first fit")

        Another process (here a second handle) sees the charge and cannot spend it
        again:

        >>> other = PrivacyAccountant.open(path)
        >>> other.spent()
        (0.75, 0.0)
        >>> other.can_afford(Spend(eps=0.5))
        False
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or path-like, got {type(path).__name__}.")
        path = os.path.abspath(os.fspath(path))
        if total is not None:
            try:
                eps, delta = total
            except (TypeError, ValueError):
                raise TypeError("total must be a pair (eps, delta) of numbers.") from None
            total = (check_eps(eps), check_delta(delta))
        if key is not None:
            check_param(key, [str], "key")
        check_param(start_over, [bool], "start_over")
        if start_over and custodian is None:
            raise ValueError("start_over is the custodian's act: it needs custodian.")
        custodian = None if custodian is None else Custodian(custodian)
        with _file_lock(path):
            if os.path.exists(path):
                eps, delta, stored_key, charges, sealed = _read_file(path)
                if total is not None and not (math.isclose(eps, total[0], rel_tol=1e-12)
                                              and math.isclose(delta, total[1],
                                                               rel_tol=1e-12)):
                    raise ValueError(
                        f"{path}: the budget file holds a total of eps={eps:g}, "
                        f"delta={delta:g}, not eps={total[0]:g}, delta={total[1]:g} "
                        "(total): a budget is never changed by opening it with other "
                        "numbers.")
                if key is not None and stored_key is not None and key != stored_key:
                    raise ValueError(f"{path}: the budget file belongs to another data set "
                                     "(key).")
                accountant = cls(eps, delta)
                accountant._charges = charges
                accountant._key = stored_key if stored_key is not None else key
                accountant._path = path
                if custodian is not None or sealed is not None:
                    accountant._open_sealed(custodian, sealed, start_over)
                elif stored_key is None and key is not None:
                    accountant._write()
            else:
                if total is None:
                    raise ValueError(f"{path} does not exist: a new budget file needs its "
                                     "total (eps, delta) (total).")
                if custodian is not None and custodian.known_at(path) and not start_over:
                    raise SealError(
                        f"{path} was deleted: this custodian's witness holds a budget "
                        "for it. To start a fresh budget for this data set, open it with "
                        "start_over=True.")
                accountant = cls(*total)
                accountant._key = key
                accountant._path = path
                if custodian is not None:
                    accountant._seal_now(custodian)
                else:
                    accountant._write()
        return accountant

    def _open_sealed(self, custodian, sealed, start_over):
        """Check an existing file against its seal and the custodian's witness
        (the caller holds the file lock), or seal it as it is with ``start_over``."""
        if custodian is None:
            raise SealError(f"{self._path}: the budget file is sealed: open it with its "
                            "custodian (custodian=).")
        self._custodian = custodian
        if sealed is None:
            if not start_over:
                raise SealError(f"{self._path}: the budget file is not sealed; to seal it "
                                "as it is, open it with start_over=True.")
            self._seal_now(custodian)
            return
        self._sealed = sealed
        record = self._record()
        chain = custodian.verify(record, self._path)
        taken_on = start_over and custodian.known_at(self._path) != sealed["budget_id"]
        if not taken_on:
            custodian.check_witness(record, chain, self._path)
        custodian.witness(self._path, record, chain)

    def _seal_now(self, custodian):
        """Seal this accountant's file afresh: a new budget id, its seal, every
        charge chained (the caller holds the file lock)."""
        self._custodian = custodian
        budget_id = new_budget_id()
        self._sealed = {"budget_id": budget_id,
                        "seal": custodian.seal(budget_id, self._eps, self._delta, self._key)}
        previous = self._sealed["seal"]
        for charge in self._charges:
            charge["chain"] = previous = custodian.link(previous, charge)
        self._write()
        custodian.witness(self._path, self._record(), self._links())

    def _links(self):
        """The chain values of a sealed accountant's charges, oldest first."""
        return [charge["chain"] for charge in self._charges]

    @property
    def path(self):
        """The budget file of an accountant from :meth:`open`, else None."""
        return self._path

    @property
    def key(self):
        """What the budget protects, as its file names it (None: not named)."""
        return self._key

    def _write(self):
        """Write the record to ``self._path`` (the caller holds the file lock)."""
        _write_json(self._record(), self._path)

    def _record(self):
        record = {"format": _ACCOUNTANT_FORMAT, "eps": self._eps, "delta": self._delta,
                  "key": self._key, "charges": [dict(charge) for charge in self._charges]}
        if self._sealed is not None:
            record.update(format=_FORMAT_SEALED, **self._sealed)
        return record

    def _merge_file(self):
        """Merge the file's charges with ours by id (the caller holds both locks).

        The file's charges come first, in its order; ours that the file lacks (it
        was rolled back or deleted) follow, and the file is written again: a
        charge is never given back. Returns nothing.
        """
        if not os.path.exists(self._path):
            if self._custodian is not None:
                raise SealError(f"{self._path} was deleted while open; its custodian "
                                "must start it over (start_over=True).")
            self._write()
            return
        eps, delta, key, charges, sealed = _read_file(self._path)
        if self._custodian is not None:
            self._merge_sealed(eps, delta, key, charges, sealed)
            return
        if not (math.isclose(eps, self._eps, rel_tol=1e-12)
                and math.isclose(delta, self._delta, rel_tol=1e-12)):
            raise ValueError(f"{self._path}: the budget file now holds another total "
                             f"(eps={eps:g}, delta={delta:g}); it was replaced.")
        if key is not None and self._key is not None and key != self._key:
            raise ValueError(f"{self._path}: the budget file now belongs to another "
                             "data set (key); it was replaced.")
        known = {charge["id"] for charge in charges}
        lost = [charge for charge in self._charges if charge["id"] not in known]
        self._charges = charges + lost
        if lost or (key is None and self._key is not None):
            self._write()

    def _merge_sealed(self, eps, delta, key, charges, sealed):
        """Take the sealed file's charges after checking them against the seal
        and the witness (the caller holds the file lock): a sealed file is never
        mended by re-adding charges, it is refused (:class:`SealError`)."""
        if sealed is None:
            raise SealError(f"{self._path}: the budget file lost its seal while open.")
        record = {"format": _FORMAT_SEALED, "eps": eps, "delta": delta, "key": key,
                  "charges": charges, **sealed}
        chain = self._custodian.verify(record, self._path)
        self._custodian.check_witness(record, chain, self._path)
        if sealed != self._sealed or {c["id"] for c in self._charges} - \
                {c["id"] for c in charges}:
            raise SealError(f"{self._path}: the budget file was replaced by another "
                            "budget while open.")
        self._charges = charges

    def _refresh(self):
        """Read the file again (an opened accountant); nothing for the others."""
        if self._path is None or self._read_only or os.getpid() != self._pid:
            return
        with self._lock, _file_lock(self._path):
            self._merge_file()

    # -- reading ---------------------------------------------------------------------
    @property
    def eps(self):
        """The total ``eps`` (read-only: a budget is never raised)."""
        return self._eps

    @property
    def delta(self):
        """The total ``delta`` (read-only)."""
        return self._delta

    @property
    def read_only(self):
        """True for an unpickled copy, which never charges."""
        return self._read_only

    @property
    def last_charge(self):
        """The last charge this object accepted (a copy; None before any).

        Other objects' and processes' charges to the same file are in
        :attr:`charges` only.
        """
        return None if self._last is None else dict(self._last)

    @property
    def charges(self):
        """The accepted charges, oldest first (a copy).

        Each charge is a dict with ``id`` (its own, random), ``label``, ``eps``,
        ``delta``, ``mu`` and ``time`` (UTC, ISO 8601).
        """
        self._refresh()
        return _unchained(self._charges)

    def _total(self):
        """The charges composed: a :class:`Spend`."""
        return compose(Spend(c["eps"], c["delta"], c["mu"]) for c in self._charges)

    def can_afford(self, spend):
        """Tell whether ``spend`` fits in what is left.

        Parameters
        ----------
        spend : Spend
            The spend asked about.

        Returns
        -------
        bool
            True when :meth:`charge` would accept ``spend`` now.
        """
        spend = _check_spend(spend)
        self._refresh()
        return (self._total() + spend).fits(self._eps, self._delta)

    def charge(self, spend, label):
        """Charge ``spend`` under ``label``, or refuse it.

        An accountant from :meth:`open` writes the charge to its file, under the
        file's lock, before it returns.

        Parameters
        ----------
        spend : Spend
            What the fit will spend at most, for example its
            ``BudgetPlan.planned_spend()``.
        label : str
            Names the charge in :attr:`charges` and in error messages.

        Raises
        ------
        BudgetExceededError
            If the charges so far composed with ``spend`` do not fit in ``(eps,
            delta)``; nothing is recorded.
        RuntimeError
            For an unpickled copy, or in a process other than the accountant's
            (see the class docstring).
        OSError
            If the budget file cannot be written; nothing is charged.
        """
        spend = _check_spend(spend)
        check_param(label, [str], "label")
        self._check_owner()
        with self._lock, (_file_lock(self._path) if self._path is not None
                          else contextlib.nullcontext()):
            if self._path is not None:
                self._merge_file()
            if not (self._total() + spend).fits(self._eps, self._delta):
                raise BudgetExceededError(self._refusal(spend, label))
            charge = {
                "id": uuid.uuid4().hex, "label": label, "eps": spend.eps,
                "delta": spend.delta, "mu": spend.mu,
                "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
            if self._custodian is not None:
                previous = self._charges[-1]["chain"] if self._charges else \
                    self._sealed["seal"]
                charge["chain"] = self._custodian.link(previous, charge)
            self._charges.append(charge)
            if self._path is not None:
                try:
                    self._write()
                except BaseException:
                    self._charges.pop()
                    raise
            if self._custodian is not None:
                # (after the file: a crash between the two leaves the file ahead of
                # its witness, which the next open accepts, never behind it)
                self._custodian.witness(self._path, self._record(), self._links())
            self._last = _unchained([charge])[0]

    def _check_owner(self):
        if self._read_only:
            raise RuntimeError(
                "This PrivacyAccountant is an unpickled copy, a read-only view of the "
                "charges it was pickled with: a copy never charges (it would spend "
                "apart from the original). Fit with n_jobs=1 (or a thread-based "
                "backend), or save() the budget to a file and open() it in the process "
                "that fits.")
        if os.getpid() != self._pid:
            raise RuntimeError(
                f"This PrivacyAccountant belongs to process {self._pid}, not to this "
                f"process ({os.getpid()}): a copy charged here would spend apart from "
                "the original. Fit with n_jobs=1 (or a thread-based backend), or save() "
                "the budget to a file and open() it in the process that fits."
            )

    def _refusal(self, spend, label):
        # (under the charge's locks: the charges as merged, no second read)
        left = self._room()
        spent = _reading(self._total(), self._eps, self._delta)[0]
        asked = spend.eps_at(self._delta) if spend.delta <= self._delta else math.inf
        asked_text = (f"eps {_plain(asked)} at delta {_plain(self._delta)}"
                      if math.isfinite(asked) else _describe(spend))
        return (
            f"{label!r} asks for {asked_text}, more than is left of the budget: "
            f"{_plain(spent)} of eps {_plain(self._eps)} is spent, and the "
            f"largest further fit like this one it takes is eps "
            f"{_plain(self._largest_like(spend, asked, left))} at delta "
            f"{_plain(self._delta)}. Nothing was charged. (Composed exactly: the fit "
            f"is {_describe(spend)}; the budget has room, each on its own, for pure "
            f"eps={left['pure_eps']:.6g}, delta={left['delta']:.6g} or a Gaussian block of "
            f"mu={left['mu']:.6g}.)"
        )

    def _largest_like(self, spend, asked, left):
        """The ``eps`` of the largest further fit shaped like ``spend`` (which reads
        ``asked`` at the total's delta): the same share of pure ``eps``, its
        Gaussian block at the total's ``delta`` (as a fit's plan splits its grant).
        All Gaussian: ``left["eps"]``."""
        if spend.eps == 0 or spend.delta > 0 or not math.isfinite(asked) or asked <= 0:
            return left["eps"]
        pure_share = spend.eps / asked
        total = self._total()

        def accepts(eps):
            block_eps = (1 - pure_share) * eps
            block = gdp_mu(block_eps, self._delta) if block_eps > 0 else 0.0
            return (total + Spend(eps=pure_share * eps, mu=block)).fits(self._eps,
                                                                         self._delta)
        return tidy_down(_largest(accepts, self._eps))

    def spent(self):
        """Compute the ``eps`` the charges spend, read at the total's ``delta``.

        The charges are composed exactly (their Gaussian blocks as one
        ``mu``-GDP block, the rest added) and read the way the total was asked
        for: the least ``eps`` at which all of them together are ``(eps,
        delta)``-DP at the total's ``delta``. One fit at ``(1, 1e-5)`` against a
        total of ``(1.5, 1e-5)`` reads ``(1.0, 1e-5)``; two such fits read about
        1.5, less than 2, because Gaussian fits compose below their sum. Without
        Gaussian blocks it is the charges' ``eps``'s and ``delta``'s added up.
        Values are rounded to 10 significant digits, so a total reads 1.0, not
        0.9999999999999999 (the accountant decides on the exact values).

        Returns
        -------
        eps : float
            The ``eps`` spent, at the total's ``delta``.
        delta : float
            The ``delta`` spent (the total's ``delta``, or less: the charges'
            ``delta``'s added up when there is no Gaussian block, or when the
            block alone already holds at ``eps`` 0).
        """
        self._refresh()
        return _reading(self._total(), self._eps, self._delta)

    def remaining(self):
        """Compute the most that one further charge may take.

        Returns
        -------
        dict
            ``"eps"``: the ``eps`` of the largest further fit the accountant
            accepts, a fit whose parts are all Gaussian at the total's ``delta``
            (after one fit at ``(1, 1e-5)`` against ``(1.5, 1e-5)``, about 1.05:
            Gaussian fits compose below their sum). A fit with pure parts (the
            quantile searches some plans buy) composes less well, so the largest
            such fit is a little smaller: :meth:`can_afford` its planned spend to
            know exactly. Then the most each single kind of charge may take:
            ``"pure_eps"``, the largest ``e`` such that ``Spend(eps=e)`` fits (a
            pure part); ``"delta"``, the largest ``d`` such that ``Spend(delta=d)``
            fits; ``"mu"``, the largest ``m`` such that ``Spend(mu=m)`` fits (a
            Gaussian block). Each is found to float precision and is accepted by
            :meth:`can_afford`. They are alternatives, not amounts to spend
            together.
        """
        self._refresh()
        return self._room()

    def _room(self):
        total = self._total()
        mu = self._largest_beside(total, lambda m: Spend(mu=m), self._largest_block())
        return {
            "eps": self._largest_fits_reading(total, mu, 1),
            "pure_eps": self._largest_beside(total, lambda e: Spend(eps=e), self._eps),
            "delta": self._largest_beside(total, lambda d: Spend(delta=d), self._delta),
            "mu": mu,
        }

    def _largest_block(self):
        """The ``mu`` of the whole grant as one Gaussian block; 0 when its
        ``delta`` is below the smallest a Gaussian part is accounted at (such an
        accountant funds pure parts only)."""
        if self._delta < SMALLEST_GAUSSIAN_DELTA:
            return 0.0
        return gdp_mu(self._eps, self._delta)

    def _largest_beside(self, total, make, high):
        """The largest amount in ``[0, high]`` whose spend ``make(amount)`` fits
        beside ``total`` (Spend.fits, exact): what is reported is then accepted by
        can_afford."""
        return _largest(lambda amount: (total + make(amount)).fits(self._eps, self._delta),
                        high)

    def fits_left(self, counts=(1, 2, 4)):
        """The ``eps`` of each of ``count`` equal further fits the budget takes.

        For each count ``c``, the largest ``e`` such that ``c`` more fits at
        ``(e, delta)`` (all Gaussian, at the total's ``delta``) are accepted
        together: their blocks compose to ``sqrt(c)`` times one fit's ``mu``.

        Parameters
        ----------
        counts : sequence of int, default=(1, 2, 4)
            Numbers of further fits, each >= 1.

        Returns
        -------
        dict
            ``{count: eps}``, 0 when nothing is left.
        """
        self._refresh()
        mu = self._largest_beside(self._total(), lambda m: Spend(mu=m),
                                  self._largest_block())
        return {int(count): self._largest_fits_reading(self._total(), mu, int(count))
                for count in counts}

    def _largest_fits_reading(self, total, mu, count):
        """The eps of each of ``count`` further all-Gaussian fits at the total's
        delta beside ``total``, given ``mu`` (the largest block that fits), to 10
        significant digits: the estimate read off ``mu``, lowered a last digit at a
        time until ``count`` fits at it (each spending ``gdp_mu(eps, delta)``, which
        aims a hair inside) are accepted, so a fit at exactly the reading is."""
        if mu <= 0:
            return 0.0
        read = _tidy(Spend(mu=mu / math.sqrt(count)).eps_at(self._delta))
        while read > 0:
            fits = compose([Spend(mu=gdp_mu(read, self._delta))] * count)
            if (total + fits).fits(self._eps, self._delta):
                return read
            read = tidy_down(math.nextafter(read, 0.0))
        return 0.0

    # -- saving ---------------------------------------------------------------------
    def to_dict(self):
        """Export the accountant as plain JSON-ready data.

        Returns
        -------
        dict
            The format tag, the totals, the key and the charges (read back by
            :meth:`from_dict`).
        """
        self._refresh()
        with self._lock:
            return self._record()

    @classmethod
    def from_dict(cls, data):
        """Rebuild an accountant from :meth:`to_dict`'s data, owned by this process.

        Parameters
        ----------
        data : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        PrivacyAccountant
            A new accountant with the same totals and charges (in memory).

        Raises
        ------
        TypeError
            If ``data`` is not a dict.
        ValueError
            If a field is missing or bad (the message names it).
        """
        check_param(data, [dict], "data")
        return cls._from_record(data, "data")

    def save(self, path):
        """Write the accountant to ``path`` as JSON, atomically.

        The file is written next to ``path`` under a temporary name and then
        renamed over it, so a crash leaves the previous file or the new one,
        never a partial file. An accountant from :meth:`open` saved to its own
        file merges and writes it under the file's lock.

        Parameters
        ----------
        path : str or path-like
            The file to write (replaced if it exists).
        """
        if self._path is not None and os.path.abspath(os.fspath(path)) == self._path:
            self._refresh()
            return
        _write_json(self.to_dict(), os.fspath(path))

    @classmethod
    def load(cls, path):
        """Read the accountant saved in ``path`` into memory, owned by this process.

        Load a budget once and charge that one object: two loads of the same file
        are two budgets. For a file that several processes charge, use
        :meth:`open`.

        Parameters
        ----------
        path : str or path-like
            A file written by :meth:`save`.

        Returns
        -------
        PrivacyAccountant
            The saved accountant, with its charges.

        Raises
        ------
        ValueError
            If the file is not JSON, not a saved accountant, or has a bad field
            (the message names the problem).
        """
        eps, delta, key, charges, sealed = _read_file(os.fspath(path))
        accountant = cls(eps, delta)
        accountant._charges, accountant._key = _unchained(charges), key
        return accountant

    @classmethod
    def _from_record(cls, data, where):
        eps, delta, key, charges, sealed = _check_record(data, where)
        accountant = cls(eps, delta)
        accountant._charges, accountant._key = _unchained(charges), key
        return accountant

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        with self._lock:
            record = self._record()
        return _unpickle, (self._token, self._pid, record)

    def __repr__(self):
        eps, delta = self.spent()
        return (f"PrivacyAccountant(eps={self._eps:g}, delta={self._delta:g}, "
                f"spent=({eps:g}, {delta:g}))")


def _unpickle(token, pid, data):
    """The live accountant in its own process; elsewhere a read-only copy."""
    live = _LIVE.get(token) if os.getpid() == pid else None
    if live is not None:
        return live
    accountant = PrivacyAccountant._from_record(data, "pickled accountant")
    accountant._read_only = True
    return accountant


def _read_file(path):
    """``(eps, delta, key, charges, sealed)`` of a budget file, each field checked
    (:func:`_check_record`)."""
    with open(path, encoding="utf-8") as stream:
        try:
            data = json.load(stream)
        except ValueError:   # JSONDecodeError, UnicodeDecodeError
            raise ValueError(f"{path} is not a JSON file.") from None
    return _check_record(data, path)


def _unchained(charges):
    """The charges without their chain values (an accountant in memory, which
    seals nothing: :meth:`PrivacyAccountant.load`, a pickled copy)."""
    return [{name: value for name, value in charge.items() if name != "chain"}
            for charge in charges]


def _check_spend(spend):
    check_param(spend, [Instance(Spend, "a Spend (for example a BudgetPlan's "
                                        "planned_spend())")], "spend")
    # (a fresh Spend checks its fields again, as floats, whatever a subclass did)
    return Spend(*(check_param(getattr(spend, name), [NON_NEGATIVE], f"spend.{name}")
                   for name in ("eps", "delta", "mu")))


def _plain(value):
    """A reading as people write it: 3 significant digits (``0.97``, ``1e-05``)."""
    return f"{value:.3g}"


def _reading(total, eps, delta):
    """The ``(eps, delta)`` of the composed ``total`` at the grant's ``delta``
    (:meth:`PrivacyAccountant.spent`); a reading within round-off of the grant's
    ``eps`` is the grant's."""
    if total.mu == 0 or total.delta > delta:
        spent_eps, spent_delta = total.as_pair(eps) if total.mu else (total.eps,
                                                                       total.delta)
        return _tidy(spent_eps), _tidy(spent_delta)
    at = total.eps_at(delta)
    if at <= eps * (1 + 1e-9):
        at = min(at, eps)
    block_delta = gdp_delta(total.mu, max(at - total.eps, 0.0)) if math.isfinite(at) \
        else 1.0
    return _tidy(at), _tidy(min(delta, total.delta + block_delta))


def _describe(spend):
    text = f"eps={spend.eps:.6g}, delta={spend.delta:.6g}"
    return text + (f" and a Gaussian block of mu={spend.mu:.6g}" if spend.mu else "")


def _largest(accepts, high):
    """The largest ``x`` in ``[0, high]`` that ``accepts`` (true up to a point)."""
    if not accepts(0.0):
        return 0.0
    if accepts(high):
        return float(high)
    low = 0.0
    # 200 halvings reach adjacent floats (or high * 2**-200): what is returned is
    # accepted, and a hair more is not
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        low, high = (middle, high) if accepts(middle) else (low, middle)
    return low


def _check_record(data, where):
    """``(eps, delta, key, charges, sealed)`` of a saved accountant, each field
    checked (``sealed``: the ``budget_id`` and ``seal`` of a sealed file, else
    None; its charges keep their ``chain``)."""
    check_field(data, [Instance(dict, "a JSON object")], f"{where}: a saved accountant")
    version = data.get("format")
    if version not in (_ACCOUNTANT_FORMAT, _FORMAT_V1, _FORMAT_SEALED):
        raise ValueError(f"{where}: not a saved accountant (the 'format' field is not "
                         f"{_ACCOUNTANT_FORMAT!r}).")
    _check_keys(data, {_ACCOUNTANT_FORMAT: _KEYS, _FORMAT_V1: _KEYS_V1,
                       _FORMAT_SEALED: _KEYS_SEALED}[version], where)
    sealed = None
    if version == _FORMAT_SEALED:
        sealed = {name: check_field(data[name], [Instance(str, "a string")],
                                    f"{where}: {name!r}") for name in ("budget_id", "seal")}
    eps = _number(data, "eps", where, positive=True)
    delta = _number(data, "delta", where, positive=True, below_one=True)
    key = data.get("key")
    if key is not None:
        check_field(key, [Instance(str, "a string or null")], f"{where}: 'key'")
    check_field(data["charges"], [Instance(list, "a list")], f"{where}: 'charges'")
    charges = [_check_charge(charge, f"{where}: charge {i}", version, i)
               for i, charge in enumerate(data["charges"])]
    ids = [charge["id"] for charge in charges]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: two charges have the same 'id'.")
    if not compose(Spend(c["eps"], c["delta"], c["mu"]) for c in charges).fits(eps,
                                                                                delta):
        raise ValueError(f"{where}: the charges recorded exceed the budget.")
    return eps, delta, key, charges, sealed


def _check_charge(charge, where, version=_ACCOUNTANT_FORMAT, index=0):
    check_field(charge, [Instance(dict, "a JSON object")], where)
    _check_keys(charge, {_ACCOUNTANT_FORMAT: _CHARGE_KEYS, _FORMAT_V1: _CHARGE_KEYS_V1,
                         _FORMAT_SEALED: _CHARGE_KEYS_SEALED}[version], where)
    if version == _FORMAT_V1:
        # (a file of version 1 has no ids: its charges are named by position)
        identifier = f"v1-{index}"
    else:
        identifier = check_field(charge["id"], [Instance(str, "a string")], f"{where}: 'id'")
        if not identifier:
            raise ValueError(f"{where}: 'id' must be a non-empty string.")
    check_field(charge["label"], [Instance(str, "a string")], f"{where}: 'label'")
    check_field(charge["time"], [Instance(str, "an ISO 8601 string")], f"{where}: 'time'")
    try:
        datetime.fromisoformat(charge["time"])
    except ValueError:
        raise ValueError(f"{where}: 'time' must be an ISO 8601 string.") from None
    checked = {"id": identifier, "label": charge["label"],
               "eps": _number(charge, "eps", where),
               "delta": _number(charge, "delta", where, below_one=True),
               "mu": _number(charge, "mu", where),
               "time": charge["time"]}
    if version == _FORMAT_SEALED:
        checked["chain"] = check_field(charge["chain"], [Instance(str, "a string")],
                                       f"{where}: 'chain'")
    return checked


def _check_keys(record, keys, where):
    missing = [key for key in keys if key not in record]
    if missing:
        raise ValueError(f"{where}: missing field {missing[0]!r}.")
    extra = sorted(str(key) for key in record if key not in keys)
    if extra:
        raise ValueError(f"{where}: unknown field {extra[0]!r}.")


def _number(record, key, where, positive=False, below_one=False):
    """A finite float >= 0 (> 0 if ``positive``, < 1 if ``below_one``)."""
    rule = Interval("real", 0, 1 if below_one else None,
                    closed="neither" if positive else "left")
    return check_field(record[key], [rule], f"{where}: {key!r}")
