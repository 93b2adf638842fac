"""A total privacy budget for one data set, charged by every fit that uses it.

Each fit spends a :class:`~sklearn_dppca.privacy.Spend`: ``eps`` and ``delta``
charged by basic composition and the ``mu`` of its Gaussian parts, composed as one
``mu``-GDP block (see :mod:`sklearn_dppca.privacy._accounting`). The accountant
composes the fits in the same way: the ``eps``'s and the ``delta``'s add, the
``mu``'s add in squares. This is valid however the fits are interleaved or chosen
from earlier results, because composition in ``f``-DP is adaptive, commutative
and associative (Dong, Roth & Su 2022, Thm 3.2 and Prop. 3.2): all Gaussian parts
of all fits form one ``mu``-GDP block, and basic composition adds the rest.
"""

import contextlib
import json
import os
import tempfile
import threading
import uuid
import weakref
from datetime import datetime, timezone

from .._validation import NON_NEGATIVE, Instance, Interval, check_field, check_param
from ._accounting import Spend, gdp_mu
from ._calibration import check_delta, check_eps

#: The format tag of a saved accountant.
_ACCOUNTANT_FORMAT = "sklearn-dppca/accountant/1"
_KEYS = ("format", "eps", "delta", "charges")
_CHARGE_KEYS = ("label", "eps", "delta", "mu", "time")
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
    touches the data, and a fit that would exceed the total raises
    :class:`BudgetExceededError` instead. Fits are composed exactly for their
    Gaussian parts (``mu``'s add in squares), so two fits cost less than the sum of
    their ``(eps, delta)`` pairs.

    An accountant is a handle to one budget. Copying it (:func:`copy.copy`,
    :func:`copy.deepcopy`, :func:`sklearn.base.clone` of an estimator holding it)
    returns the same object, and so does unpickling it in the process that created
    it. In any other process (``n_jobs > 1`` with a process-based backend,
    :mod:`multiprocessing`) a copy would spend apart from the original, so
    :meth:`charge` raises ``RuntimeError`` there: run searches with an accountant
    with ``n_jobs=1`` (or a thread-based backend), or :meth:`save` it and
    :meth:`load` it in the one process that charges it. Threads may share it.

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
    exactly they fit in ``(2, 1e-5)``:

    >>> fit = Spend(eps=0.2, mu=gdp_mu(0.8, 1e-5))
    >>> accountant.charge(fit, label="first fit")
    >>> accountant.charge(fit, label="second fit")
    >>> eps, delta = accountant.spent()
    >>> eps, delta <= 1e-5
    (2.0, True)
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
        self._take_ownership()

    def _take_ownership(self, pid=None, token=None):
        """Bind to the process that may charge, and register for unpickling."""
        self._pid = os.getpid() if pid is None else pid
        self._token = uuid.uuid4().hex if token is None else token
        # one check-and-record at a time when threads share the accountant
        self._lock = threading.Lock()
        _LIVE[self._token] = self

    @property
    def eps(self):
        """The total ``eps`` (read-only: a budget is never raised)."""
        return self._eps

    @property
    def delta(self):
        """The total ``delta`` (read-only)."""
        return self._delta

    @property
    def charges(self):
        """The accepted charges, oldest first (a copy).

        Each charge is a dict with ``label``, ``eps``, ``delta``, ``mu`` and
        ``time`` (UTC, ISO 8601).
        """
        return [dict(charge) for charge in self._charges]

    def _total(self):
        """The charges composed: a :class:`Spend`."""
        return sum((Spend(c["eps"], c["delta"], c["mu"]) for c in self._charges), Spend())

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
        return (self._total() + _check_spend(spend)).fits(self._eps, self._delta)

    def charge(self, spend, label):
        """Charge ``spend`` under ``label``, or refuse it.

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
            In a process other than the accountant's (see the class docstring).
        """
        spend = _check_spend(spend)
        check_param(label, [str], "label")
        self._check_owner()
        with self._lock:
            if not (self._total() + spend).fits(self._eps, self._delta):
                raise BudgetExceededError(self._refusal(spend, label))
            self._charges.append({
                "label": label, "eps": spend.eps, "delta": spend.delta, "mu": spend.mu,
                "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            })

    def _check_owner(self):
        if os.getpid() != self._pid:
            raise RuntimeError(
                f"This PrivacyAccountant belongs to process {self._pid}, not to this "
                f"process ({os.getpid()}): a copy charged here would spend apart from "
                "the original. Fit with n_jobs=1 (or a thread-based backend), or save() "
                "the accountant and load() it in the process that fits."
            )

    def _refusal(self, spend, label):
        left = self.remaining()
        return (
            f"{label!r} asks for {_describe(spend)}, more than is left of the budget "
            f"(eps={self._eps:g}, delta={self._delta:g}), which has room, each on its "
            f"own, for eps={left['eps']:.6g}, delta={left['delta']:.6g} or a Gaussian "
            f"block of mu={left['mu']:.6g}. Nothing was charged."
        )

    def spent(self):
        """Compute the ``(eps, delta)`` of all the charges composed.

        Without Gaussian blocks, the charges' ``eps``'s and ``delta``'s added up.
        With them, the composed block is read at the ``eps`` that the other parts
        leave of the total (where its ``delta`` is smallest), so the ``eps``
        returned is the total ``eps`` and the ``delta`` is what the charges use of
        ``delta`` there.

        Returns
        -------
        eps : float
            The ``eps`` spent.
        delta : float
            The ``delta`` spent.
        """
        return self._total().as_pair(self._eps)

    def remaining(self):
        """Compute the most that one further charge of a single kind may take.

        Returns
        -------
        dict
            ``"eps"``: the largest ``e`` such that ``Spend(eps=e)`` fits (a pure
            part); ``"delta"``: the largest ``d`` such that ``Spend(delta=d)``
            fits; ``"mu"``: the largest ``m`` such that ``Spend(mu=m)`` fits (a
            Gaussian block). Each is found to float precision and is accepted by
            :meth:`can_afford`. They are alternatives, not amounts to spend
            together: once a Gaussian block is charged, every pure ``eps`` spent
            leaves the block less ``eps`` and so more ``delta``. Ask
            :meth:`can_afford` about a mixed spend.
        """
        total = self._total()

        def room(make):
            # exactly within, without the round-off slack of Spend.fits: what is
            # reported is then accepted by can_afford, and reads 0.7, not 0.7 + 1e-12
            def within(amount):
                eps, delta = (total + make(amount)).as_pair(self._eps)
                return eps <= self._eps and delta <= self._delta
            return within

        return {
            "eps": _largest(room(lambda e: Spend(eps=e)), self._eps),
            "delta": _largest(room(lambda d: Spend(delta=d)), self._delta),
            "mu": _largest(room(lambda m: Spend(mu=m)), gdp_mu(self._eps, self._delta)),
        }

    def to_dict(self):
        """Export the accountant as plain JSON-ready data.

        Returns
        -------
        dict
            The format tag, the totals and the charges (read back by
            :meth:`from_dict`).
        """
        with self._lock:
            return {"format": _ACCOUNTANT_FORMAT, "eps": self._eps, "delta": self._delta,
                    "charges": self.charges}

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
            A new accountant with the same totals and charges.

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
        never a partial file.

        Parameters
        ----------
        path : str or path-like
            The file to write (replaced if it exists).
        """
        path = os.fspath(path)
        data = self.to_dict()
        directory = os.path.dirname(os.path.abspath(path))
        handle, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(data, stream, indent=2, allow_nan=False)
                stream.write("\n")
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    @classmethod
    def load(cls, path):
        """Read the accountant saved in ``path``, owned by this process.

        Load a budget once and charge that one object: two loads of the same file
        are two budgets.

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
        with open(path, encoding="utf-8") as stream:
            try:
                data = json.load(stream)
            except ValueError:   # JSONDecodeError, UnicodeDecodeError
                raise ValueError(f"{os.fspath(path)} is not a JSON file.") from None
        return cls._from_record(data, os.fspath(path))

    @classmethod
    def _from_record(cls, data, where):
        eps, delta, charges = _check_record(data, where)
        accountant = cls(eps, delta)
        accountant._charges = charges
        if not accountant._total().fits(eps, delta):
            raise ValueError(f"{where}: the charges recorded exceed the budget.")
        return accountant

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return _unpickle, (self._token, self._pid, self.to_dict())

    def __repr__(self):
        eps, delta = self.spent()
        return (f"PrivacyAccountant(eps={self._eps:g}, delta={self._delta:g}, "
                f"spent=({eps:g}, {delta:g}))")


def _unpickle(token, pid, data):
    """The live accountant in its own process; elsewhere a copy that may not charge."""
    live = _LIVE.get(token) if os.getpid() == pid else None
    if live is not None:
        return live
    accountant = PrivacyAccountant._from_record(data, "pickled accountant")
    _LIVE.pop(accountant._token, None)
    accountant._take_ownership(pid=pid, token=token)
    return accountant


def _check_spend(spend):
    check_param(spend, [Instance(Spend, "a Spend (for example a BudgetPlan's "
                                        "planned_spend())")], "spend")
    # (a fresh Spend checks its fields again, as floats, whatever a subclass did)
    return Spend(*(check_param(getattr(spend, name), [NON_NEGATIVE], f"spend.{name}")
                   for name in ("eps", "delta", "mu")))


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
    """``(eps, delta, charges)`` of a saved accountant, each field checked."""
    check_field(data, [Instance(dict, "a JSON object")], f"{where}: a saved accountant")
    if data.get("format") != _ACCOUNTANT_FORMAT:
        raise ValueError(f"{where}: not a saved accountant (the 'format' field is not "
                         f"{_ACCOUNTANT_FORMAT!r}).")
    _check_keys(data, _KEYS, where)
    eps = _number(data, "eps", where, positive=True)
    delta = _number(data, "delta", where, positive=True, below_one=True)
    check_field(data["charges"], [Instance(list, "a list")], f"{where}: 'charges'")
    charges = [_check_charge(charge, f"{where}: charge {i}")
               for i, charge in enumerate(data["charges"])]
    return eps, delta, charges


def _check_charge(charge, where):
    check_field(charge, [Instance(dict, "a JSON object")], where)
    _check_keys(charge, _CHARGE_KEYS, where)
    check_field(charge["label"], [Instance(str, "a string")], f"{where}: 'label'")
    check_field(charge["time"], [Instance(str, "an ISO 8601 string")], f"{where}: 'time'")
    try:
        datetime.fromisoformat(charge["time"])
    except ValueError:
        raise ValueError(f"{where}: 'time' must be an ISO 8601 string.") from None
    return {"label": charge["label"],
            "eps": _number(charge, "eps", where),
            "delta": _number(charge, "delta", where, below_one=True),
            "mu": _number(charge, "mu", where),
            "time": charge["time"]}


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
