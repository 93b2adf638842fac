"""Privacy budgets, their split into named parts, and the ledger of what was spent.

The ``eps`` and the ``delta`` of the ledger's entries add up (basic composition).
Gaussian parts spent as ``mu``-GDP parts of one block charge nothing themselves; the
block's entry, appended by :meth:`PrivacyLedger.close_gaussian_block`, charges their
exact composition (see :mod:`sklearn_dppca.privacy._accounting`).
"""

import math

from fractions import Fraction

from .._validation import SHARE, check_param
from ._accounting import charged_spend, charged_sums, tidy, within
from ._calibration import check_delta, check_eps
from ._decimals import as_granted, as_written, block_delta_bound, float_at_least, trim_to

#: The step name of the entry that charges the composed Gaussian block.
_GAUSSIAN_BLOCK_STEP = "gaussian block"

# Relative slack for shares that sum to 1 on paper (0.4 + 0.2 + 0.4 != 1.0 in
# floats); the parts themselves are trimmed to the total exactly.
_SHARE_ROUNDOFF = 1e-12


def _block_delta(mu, block_eps, block_delta):
    bound = block_delta_bound(as_written(mu), Fraction(float(block_eps)))
    if block_delta is not None and bound <= Fraction(float(block_delta)):
        return float(block_delta)
    return float_at_least(bound)


class PrivacyBudget:
    """A total ``(eps, delta)`` that can be split into named parts.

    Parameters
    ----------
    eps : float
        Total privacy parameter, > 0.
    delta : float
        Total privacy parameter, in [0, 1).

    See Also
    --------
    BudgetTree : A fit's budget as a tree of parts, with exact composition.
    PrivacyAccountant : A total budget charged by every fit on a data set.

    Examples
    --------
    >>> from sklearn_dppca.privacy import PrivacyBudget
    >>> parts = PrivacyBudget(1.0, 1e-5).split({"loading": 0.4, "scree": 0.6})
    >>> parts["loading"].eps
    0.4
    """

    def __init__(self, eps, delta):
        self.eps = check_eps(eps)
        self.delta = check_delta(delta, allow_zero=True)

    def __repr__(self):
        return f"PrivacyBudget(eps={self.eps:g}, delta={self.delta:g})"

    def __iter__(self):
        return iter((self.eps, self.delta))

    def split(self, fractions, name="budget_split"):
        """Split into named parts.

        Parameters
        ----------
        fractions : dict
            A part's name -> its share. A share applies to both ``eps`` and
            ``delta``; it may also be a pair ``(eps_share, delta_share)``. Shares
            must be in [0, 1] and sum to at most 1 for each of ``eps`` and
            ``delta``.
        name : str, default="budget_split"
            The argument's name in error messages.

        Returns
        -------
        dict
            A part's name -> its :class:`PrivacyBudget`, or None for a part with
            a zero ``eps`` share (it may not spend anything).
        """
        check_param(fractions, [dict], name)
        if not fractions:
            raise ValueError(f"{name} must be a non-empty dict of shares.")
        eps_shares, delta_shares = {}, {}
        for part, share in fractions.items():
            eps_share, delta_share = share if isinstance(share, tuple) else (share, share)
            eps_shares[part] = check_param(eps_share, [SHARE], f"{name}[{part!r}]")
            delta_shares[part] = check_param(delta_share, [SHARE], f"{name}[{part!r}]")
        for shares in (eps_shares, delta_shares):
            total = math.fsum(shares.values())
            if total > 1 + _SHARE_ROUNDOFF:
                raise ValueError(f"The shares in {name} sum to {total:g} > 1: {fractions!r}.")
        # the parts trimmed until what they charge adds up to at most the total
        # as written
        eps_parts = dict(zip(fractions, trim_to(
            [self.eps * eps_shares[part] for part in fractions], as_written(self.eps))))
        delta_parts = dict(zip(fractions, trim_to(
            [self.delta * delta_shares[part] for part in fractions],
            as_written(self.delta))))
        return {
            part: _Part(eps_parts[part], delta_parts[part]) if eps_shares[part] > 0
            else None
            for part in fractions
        }


class _Part(PrivacyBudget):
    """A budget part; unlike a total it may carry delta = 0."""

    def __init__(self, eps, delta):
        self.eps = float(eps)
        self.delta = float(delta)


class PrivacyLedger:
    """The record of every mechanism call of one fit.

    Each entry is a dict with at least ``step``, ``mechanism``, ``eps``, ``delta``,
    ``sensitivity`` (with its norm in ``sensitivity_norm``) and ``noise_scale``.

    Parameters
    ----------
    entries : list of dict, default=None
        Entries to start from (copied); None starts an empty ledger.

    Attributes
    ----------
    entries : list of dict
        The entries, in the order of the calls.

    See Also
    --------
    PrivacyAccountant : The budget across fits, charged before each fit.

    Examples
    --------
    >>> from sklearn_dppca.privacy import PrivacyLedger
    >>> ledger = PrivacyLedger()
    >>> ledger.record(step="demo", mechanism="laplace", eps=0.5, delta=0.0,
    ...               sensitivity=1.0, noise_scale=2.0)
    >>> ledger.spent()
    (0.5, 0.0)
    """

    def __init__(self, entries=None):
        self.entries = [dict(entry) for entry in (entries or [])]

    def record(self, *, step, mechanism, eps, delta, sensitivity, noise_scale,
               sensitivity_norm="L2", **extra):
        """Append one mechanism call.

        Parameters
        ----------
        step : str
            Name of the call (the budget tree's path of its part).
        mechanism : str
            Name of the mechanism.
        eps : float
            The ``eps`` this call charges.
        delta : float
            The ``delta`` this call charges.
        sensitivity : float
            Sensitivity the noise was calibrated to.
        noise_scale : float
            Scale of the noise drawn (standard deviation or Laplace scale).
        sensitivity_norm : str, default="L2"
            The norm of ``sensitivity``.
        **extra : dict
            Further keys of the entry (for example ``mu`` and ``composition``).
        """
        entry = {
            "step": str(step),
            "mechanism": str(mechanism),
            "eps": float(eps),
            "delta": float(delta),
            "sensitivity": float(sensitivity),
            "sensitivity_norm": sensitivity_norm,
            "noise_scale": float(noise_scale),
        }
        entry.update(extra)
        self.entries.append(entry)

    def extend(self, entries, prefix=None):
        """Append entries of another fit (for example reused directions).

        Parameters
        ----------
        entries : list of dict
            The other fit's entries (copied).
        prefix : str, default=None
            Prefixed to each entry's ``step`` as ``prefix/step``.
        """
        for entry in entries:
            entry = dict(entry)
            if prefix:
                entry["step"] = f"{prefix}/{entry['step']}"
            if entry.get("composition") == "gdp":
                # Already charged by the other fit's block entry (carried too).
                entry["composition"] = "gdp, charged in its own block"
            self.entries.append(entry)

    def gdp_parts(self):
        """List the entries spent as ``mu``-GDP parts of the Gaussian block.

        Returns
        -------
        list of dict
            Those entries, in order (not copies).
        """
        return [entry for entry in self.entries if entry.get("composition") == "gdp"]

    def close_gaussian_block(self, block_eps, block_delta=None):
        """Charge the Gaussian block: one entry with its composed ``mu`` and pair.

        ``mu = sqrt(sum mu_i^2)`` over the GDP parts recorded so far (exact
        composition, each part's ``mu`` charged as
        :func:`~sklearn_dppca.privacy._decimals.charged`), charged as
        ``(block_eps, delta)`` with ``delta`` the block's ``gdp_delta(mu,
        block_eps)`` bounded above. Does nothing when there are no such parts
        (for example a skipped histogram).

        Parameters
        ----------
        block_eps : float
            The ``eps`` at which the composed block is charged.
        block_delta : float, default=None
            The ``delta`` the block was calibrated within (its plan's): recorded
            when the bound at the composed ``mu`` is within it (the block is
            then ``(block_eps, block_delta)``-DP, and a fit at ``delta = 1e-6``
            reads ``1e-06``), else the bound.
        """
        parts = self.gdp_parts()
        if not parts or any(e.get("step") == _GAUSSIAN_BLOCK_STEP for e in self.entries):
            return
        mu = charged_spend((), (), (entry["mu"] for entry in parts)).mu
        self.entries.append({
            "step": _GAUSSIAN_BLOCK_STEP,
            "mechanism": f"mu-GDP composition of {len(parts)} Gaussian parts",
            "eps": float(block_eps),
            "delta": _block_delta(mu, block_eps, block_delta),
            "sensitivity": None,
            "sensitivity_norm": None,
            "noise_scale": None,
            "mu": mu,
            "composes": [entry["step"] for entry in parts],
        })

    def spend(self):
        """Compute the :class:`Spend` of this ledger.

        Returns
        -------
        Spend
            ``eps`` and ``delta`` of the entries outside the Gaussian block, and
            the block's composed ``mu``: what an accountant composes across fits.
        """
        outside = [e for e in self.entries if e.get("step") != _GAUSSIAN_BLOCK_STEP]
        parts = self.gdp_parts()
        return charged_spend((e["eps"] for e in outside), (e["delta"] for e in outside),
                             (e["mu"] for e in parts))

    def spent(self):
        """Compute the total ``(eps, delta)``: the entries' pairs added.

        Returns
        -------
        eps : float
            The sum of the entries' ``eps``.
        delta : float
            The sum of the entries' ``delta`` (the Gaussian block's entry carries
            the exact composition of its parts).
        """
        return (
            math.fsum(entry["eps"] for entry in self.entries),
            math.fsum(entry["delta"] for entry in self.entries),
        )

    def check_within(self, eps, delta):
        """Check the spend against the grant exactly; return its reading.

        Parameters
        ----------
        eps : float
            The granted ``eps``.
        delta : float
            The granted ``delta``.

        Returns
        -------
        eps : float
            The ``eps`` spent, at most the grant (to 10 significant digits).
        delta : float
            The ``delta`` spent, at most the grant (to 10 significant digits).

        Raises
        ------
        RuntimeError
            If the ledger's :meth:`spend` does not fit the grant, compared
            exactly (no round-off slack) with the grant read as the larger of
            the float given and its decimal (a mechanism called with the float
            ``3e-06`` runs at that float; an estimator's parts are trimmed to
            the decimal, see :meth:`BudgetTree.allocate`): that would be a bug,
            and nothing may be released.
        """
        spent_eps, spent_delta = self.spent()
        outside = [e for e in self.entries if e.get("step") != _GAUSSIAN_BLOCK_STEP]
        spent = charged_sums((e["eps"] for e in outside), (e["delta"] for e in outside),
                             (e["mu"] for e in self.gdp_parts()))
        if not within(spent, as_granted(eps), as_granted(delta)):
            over = "eps" if as_written(spent_eps) > as_written(eps) else "delta"
            spent, granted = (spent_eps, eps) if over == "eps" else (spent_delta, delta)
            raise RuntimeError(f"Privacy ledger spent {over}={spent!r} > granted "
                               f"{granted!r}.")
        return min(tidy(spent_eps), eps), min(tidy(spent_delta), delta)

    def to_list(self):
        """Copy the entries.

        Returns
        -------
        list of dict
            The entries as plain dicts (a copy).
        """
        return [dict(entry) for entry in self.entries]
