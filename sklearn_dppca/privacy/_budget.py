"""Privacy budgets, their split into named parts, and the ledger of what was spent.

Composition is basic: the ``eps`` and the ``delta`` of all mechanism calls add up.
"""

import math
import numbers

from ._calibration import check_delta, check_eps

# Relative slack for float round-off when parts that sum to the total on paper are
# added in floating point (0.4 + 0.2 + 0.4 != 1.0 exactly).
_ROUNDOFF = 1e-12


class PrivacyBudget:
    """A total ``(eps, delta)`` that can be split into named parts.

    Parameters
    ----------
    eps : float
        Total privacy parameter, > 0.
    delta : float
        Total privacy parameter, in [0, 1).

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
        """Split into parts; ``fractions`` maps a part's name to its share.

        A share applies to both ``eps`` and ``delta``; it may also be a pair
        ``(eps_share, delta_share)``. Shares must be in [0, 1] and sum to at most 1
        for each of ``eps`` and ``delta``. A part with a zero ``eps`` share is
        returned as ``None`` (it may not spend anything).
        """
        if not isinstance(fractions, dict) or not fractions:
            raise TypeError(f"{name} must be a non-empty dict of shares, got {fractions!r}.")
        eps_shares, delta_shares = {}, {}
        for part, share in fractions.items():
            eps_share, delta_share = share if isinstance(share, tuple) else (share, share)
            eps_shares[part] = _check_share(eps_share, f"{name}[{part!r}]")
            delta_shares[part] = _check_share(delta_share, f"{name}[{part!r}]")
        for shares in (eps_shares, delta_shares):
            total = math.fsum(shares.values())
            if total > 1 + _ROUNDOFF:
                raise ValueError(f"The shares in {name} sum to {total:g} > 1: {fractions!r}.")
        return {
            part: _Part(self.eps * eps_shares[part], self.delta * delta_shares[part])
            if eps_shares[part] > 0
            else None
            for part in fractions
        }


class _Part(PrivacyBudget):
    """A budget part; unlike a total it may carry delta = 0."""

    def __init__(self, eps, delta):
        self.eps = float(eps)
        self.delta = float(delta)


def _check_share(share, name):
    if isinstance(share, bool) or not isinstance(share, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1], got {share!r}.")
    share = float(share)
    if not (0 <= share <= 1):
        raise ValueError(f"{name} must lie in [0, 1], got {share!r}.")
    return share


class PrivacyLedger:
    """The record of every mechanism call of one fit.

    Each entry is a dict with at least ``step``, ``mechanism``, ``eps``, ``delta``,
    ``sensitivity`` (with its norm in ``sensitivity_norm``) and ``noise_scale``.

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
        """Append one mechanism call."""
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
        """Append entries of another fit (for example reused directions)."""
        for entry in entries:
            entry = dict(entry)
            if prefix:
                entry["step"] = f"{prefix}/{entry['step']}"
            self.entries.append(entry)

    def spent(self):
        """Total ``(eps, delta)`` under basic composition."""
        return (
            math.fsum(entry["eps"] for entry in self.entries),
            math.fsum(entry["delta"] for entry in self.entries),
        )

    def check_within(self, eps, delta):
        """Return the spend, capped at the grant for float round-off only.

        Raises ``RuntimeError`` if the ledger spent more than granted beyond
        round-off: that would be a bug, and nothing may be released.
        """
        spent_eps, spent_delta = self.spent()
        capped = []
        for spent, granted, name in ((spent_eps, eps, "eps"), (spent_delta, delta, "delta")):
            if spent > granted * (1 + _ROUNDOFF) + 1e-300:
                raise RuntimeError(
                    f"Privacy ledger spent {name}={spent!r} > granted {granted!r}."
                )
            capped.append(min(spent, granted))
        return tuple(capped)

    def to_list(self):
        """The entries as a list of plain dicts (a copy)."""
        return [dict(entry) for entry in self.entries]
