"""Exact composition of Gaussian mechanisms (Gaussian differential privacy) and the
budget tree of a fit.

Gaussian differential privacy (Dong, Roth & Su 2022, "Gaussian differential
privacy", JRSS B). A mechanism is ``mu``-GDP when telling neighbouring data sets
apart from its output is no easier than telling ``N(0, 1)`` from ``N(mu, 1)``.

* The Gaussian mechanism with L2 sensitivity ``D`` and noise sd ``sigma`` is
  exactly ``(D / sigma)``-GDP (their Theorem 2.7).
* ``mu_1``-, ..., ``mu_m``-GDP mechanisms, even chosen adaptively, compose to
  ``sqrt(mu_1^2 + ... + mu_m^2)``-GDP, and this is exact: no smaller ``mu`` holds
  (their Corollary 3.3).
* ``mu``-GDP is ``(eps, delta(eps))``-DP for every ``eps >= 0`` with
  ``delta(eps) = Phi(-eps/mu + mu/2) - exp(eps) Phi(-eps/mu - mu/2)``, and for no
  smaller ``delta`` (their Corollary 2.13): the privacy profile of one Gaussian
  mechanism of sensitivity ``mu`` and noise sd 1 (Balle & Wang 2018, Thm 8).

A fit spends its Gaussian parts as one ``mu``-GDP block and its pure-``eps`` parts
(the quantile searches, the Laplace mechanism) beside it. Basic composition of the
block's ``(eps_G, delta(eps_G))`` with the pure parts' ``eps_P`` gives the pair
spent, ``(eps_G + eps_P, delta(eps_G))``. Basic composition of any two
``(eps, delta)``-DP mechanisms is valid (Dwork & Roth 2014, Thm 3.16), so the pair is
a guarantee; only the Gaussian block is composed more tightly than by adding.

The budget tree. A fit declares its parts once, as a tree of named shares whose
leaves say what kind of mechanism spends them: ``"gaussian"`` (a Gaussian
mechanism; composed in the block), ``"pure"`` (``eps``-DP, no ``delta``) or
``"basic"`` (an ``(eps, delta)``-DP mechanism charged by basic composition, such as
an iterative estimator that splits its share itself). :meth:`BudgetTree.allocate`
turns the tree and the grant into one :class:`Allocation` per leaf; the ledger's
step names are the leaves' paths.
"""

import functools
import math
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from fractions import Fraction

from scipy.optimize import brentq

from .._validation import NON_NEGATIVE, SHARE, Options, check_param
from ._calibration import check_delta, check_eps, gaussian_delta
from ._decimals import (as_written, block_delta_bound,
                        exact_sum, sqrt_at_least, trim_to, written_at_least,
                        written_at_most)

ACCOUNTING_METHODS = ("gdp", "basic")
_LEAF_KINDS = ("gaussian", "pure", "basic")
# Relative slack for shares that sum to 1 on paper (0.35 + 0.3 + 0.35 in floats).
# Shares only weigh the parts: what the parts may spend is trimmed exactly
# (BudgetTree.allocate), so this slack never reaches a spend.
_SHARE_ROUNDOFF = 1e-12
# gdp_mu aims this far inside the grant (relative, in mu and in eps): a block's mu
# split among its parts and composed again, and a Spend's sums rounded up to a
# float as written, come back within a few ulps of it.
_INWARD = 1e-12


def gdp_delta(mu, eps):
    """Compute the ``delta`` at ``eps`` of a ``mu``-GDP mechanism (exact, log-space).

    ``Phi(-eps/mu + mu/2) - exp(eps) Phi(-eps/mu - mu/2)``; 0 for ``mu = 0``.

    Parameters
    ----------
    mu : float
        The GDP parameter, >= 0.
    eps : float
        The ``eps`` at which ``delta`` is evaluated, >= 0.

    Returns
    -------
    delta : float
        The smallest ``delta`` for which the mechanism is ``(eps, delta)``-DP.

    Raises
    ------
    ValueError
        If ``mu`` is negative or not finite.

    See Also
    --------
    gdp_mu : The inverse: the ``mu`` that a grant ``(eps, delta)`` allows.

    Examples
    --------
    >>> from sklearn_dppca.privacy import gdp_delta
    >>> round(gdp_delta(1.0, 1.0), 4)
    0.1269
    """
    mu = check_param(mu, [NON_NEGATIVE], "mu")
    if mu == 0:
        return 0.0
    eps = check_param(eps, [NON_NEGATIVE], "eps")
    if eps == 0:
        return float(math.erf(mu / (2 * math.sqrt(2))))   # 2 Phi(mu/2) - 1
    return max(gaussian_delta(1.0, mu, eps), 0.0)


#: The smallest ``delta`` of a Gaussian block (:func:`gdp_mu`): the exact noise's
#: unchecked tails add at most about ``1e-280`` to ``delta`` uncharged (see the
#: floating-point page), and the bound on a block's ``delta`` carries an absolute
#: ``1e-300``; at ``1e-270`` both stay below ``1e-10`` of it.
SMALLEST_GAUSSIAN_DELTA = 1e-270


def gdp_mu(eps, delta):
    """Find the largest ``mu`` whose ``mu``-GDP gives ``(eps, delta)``-DP.

    ``gdp_delta(mu, eps)`` rises with ``mu``; the root is found in ``log mu`` and
    then stepped down until the profile holds with outward rounding (``eps`` and
    ``delta`` read as written, the block's ``delta`` bounded above, a relative
    ``1e-12`` to spare in ``mu`` and ``eps``), so the returned ``mu`` never
    overstates the budget and a :class:`Spend` of it fits the grant exactly.

    Parameters
    ----------
    eps : float
        Privacy parameter of the grant, > 0.
    delta : float
        Privacy parameter of the grant, in (0, 1).

    Returns
    -------
    mu : float
        The largest GDP parameter within the grant.

    Raises
    ------
    ValueError
        If ``delta`` is below ``1e-270``, the smallest ``delta`` a Gaussian part
        is accounted at.

    See Also
    --------
    gdp_delta : The ``delta`` of a ``mu``-GDP mechanism at a given ``eps``.

    Examples
    --------
    >>> from sklearn_dppca.privacy import gdp_delta, gdp_mu
    >>> mu = gdp_mu(1.0, 1e-5)
    >>> round(mu, 4), gdp_delta(mu, 1.0) <= 1e-5
    (0.2681, True)
    """
    eps, delta = check_eps(eps), check_delta(delta)
    if delta < SMALLEST_GAUSSIAN_DELTA:
        raise ValueError(
            f"delta={delta:g} is below {SMALLEST_GAUSSIAN_DELTA:g}, the smallest delta "
            "a Gaussian part is accounted at (the exact noise leaves tails of about "
            "1e-280 uncharged, which must stay negligible): raise delta, or the "
            "Gaussian parts' share of it.")
    return _largest_mu(eps, delta)


# A fit's public plan asks for the same few (eps, delta) many times (each part's
# candidate allocations): the root search and its exact check are pure, so kept.
@functools.lru_cache(maxsize=1024)
def _largest_mu(eps, delta):
    """:func:`gdp_mu` for validated ``eps`` and ``delta``."""
    def excess(log_mu):
        return gdp_delta(math.exp(log_mu), eps) - delta

    low, high = math.log(eps) - 3.0, math.log(eps) + 3.0
    while excess(low) > 0:
        low -= 3.0
    while excess(high) <= 0:
        high += 3.0
    mu = math.exp(brentq(excess, low, high, xtol=1e-14, rtol=1e-14, maxiter=500))
    eps_inside = as_written(eps) * (1 - Fraction(_INWARD))
    step = 1e-11
    while block_delta_bound(Fraction(mu) * (1 + Fraction(_INWARD)),
                            eps_inside) > as_written(delta):
        mu *= 1 - step
        step = min(2 * step, 0.5)
    return mu


@dataclass(frozen=True)
class Allocation:
    """What one leaf of the budget tree may spend.

    ``kind`` is ``"gaussian"``, ``"pure"`` or ``"basic"``. A Gaussian leaf under
    ``accounting="gdp"`` has ``mu`` (its noise sd is ``sensitivity / mu``) and
    ``eps = delta = 0`` (it is charged in the block); otherwise it has
    ``(eps, delta)`` and ``mu=None``. ``path`` names it in the ledger.
    """

    path: str
    kind: str
    eps: float
    delta: float
    mu: float = None

    def mechanism_budget(self):
        """Keyword arguments ``eps``, ``delta``, ``mu``, ``step`` of a mechanism."""
        return {"eps": self.eps if self.mu is None else None,
                "delta": self.delta if self.mu is None else None,
                "mu": self.mu, "step": self.path}


def tidy(value):
    """``value`` to 10 significant digits: a reading of a budget without float
    noise (0.9999999999999999 reads 1.0; a Gaussian block's ``delta``, computed to
    about a hundred ulps, 1e-05 and not 9.99999999998e-06). Only what is reported
    is rounded: the accountants decide on the exact values."""
    return float(f"{value:.10g}") if math.isfinite(value) else value


def tidy_down(value):
    """``value`` to 10 significant digits, rounded down: a reading of what is
    left (:meth:`PrivacyAccountant.remaining`), so that a fit at exactly the
    reading is accepted."""
    read = tidy(value)
    if not math.isfinite(value) or value <= 0 or as_written(read) <= as_written(value):
        return read
    exponent = math.floor(math.log10(value)) - 9
    floored = Decimal(repr(float(value))).scaleb(-exponent).to_integral_value(ROUND_FLOOR)
    return float(floored.scaleb(exponent))


@dataclass(frozen=True)
class Spend:
    """A spend as the accountant composes it.

    It holds the ``eps`` charged by basic composition (pure and basic parts, and
    the Gaussian block's ``eps`` under basic accounting), its ``delta``, and the
    ``mu`` of the Gaussian parts composed in GDP (0 if none).

    ``(eps, delta)`` pairs add; ``mu``'s add in squares. The spend fits a grant
    ``(E, D)`` when some ``eps_G >= 0`` has ``eps + eps_G <= E`` and
    ``delta + gdp_delta(mu, eps_G) <= D``; the best ``eps_G`` is ``E - eps``.

    Each number stands for the decimal it prints as (``0.1`` is one tenth, not
    the float ``0.1000000000000000055``): spends add exactly in these decimals
    (their sum rounded up to a float) and :meth:`fits` compares them with no
    slack, the block's ``delta`` bounded above. The package's mechanisms run at
    floats no larger than the decimals they charge (:ref:`floating_point`,
    "Budgets add up as written").

    Parameters
    ----------
    eps : float, default=0.0
        The ``eps`` charged by basic composition, >= 0.
    delta : float, default=0.0
        The ``delta`` charged by basic composition, >= 0.
    mu : float, default=0.0
        The GDP parameter of the Gaussian parts composed exactly, >= 0.

    See Also
    --------
    PrivacyAccountant : Composes the spends of the fits on one data set.
    PrivacyLedger.spend : The spend of one fit.

    Examples
    --------
    >>> from sklearn_dppca.privacy import Spend
    >>> total = Spend(eps=0.2) + Spend(mu=0.06) + Spend(mu=0.08)
    >>> round(total.mu, 10)
    0.1
    >>> total.fits(1.0, 1e-5)
    True
    >>> (total + Spend(mu=1.0)).fits(1.0, 1e-5)
    False
    """

    eps: float = 0.0
    delta: float = 0.0
    mu: float = 0.0

    def __post_init__(self):
        for name in ("eps", "delta", "mu"):
            check_param(getattr(self, name), [NON_NEGATIVE], f"Spend.{name}")

    def __add__(self, other):
        return compose((self, other))

    def as_pair(self, grant_eps):
        """Convert to the ``(eps, delta)`` spent when the block takes what ``grant_eps`` leaves.

        Parameters
        ----------
        grant_eps : float
            The grant's ``eps``; the Gaussian block is converted at
            ``grant_eps - eps``.

        Returns
        -------
        eps : float
            The ``eps`` spent (``inf`` when ``eps`` alone exceeds the grant).
        delta : float
            The ``delta`` spent.
        """
        if self.mu == 0:
            return self.eps, self.delta
        block_eps = grant_eps - self.eps
        if block_eps < 0:
            return math.inf, 1.0
        return grant_eps, self.delta + gdp_delta(self.mu, block_eps)

    def eps_at(self, delta):
        """Compute the least ``eps`` for which this spend is ``(eps, delta)``-DP.

        The reading of a spend at a given ``delta`` (say a budget's total): the
        pure and basic parts' ``eps`` plus the least ``eps_G`` with
        ``self.delta + gdp_delta(mu, eps_G) <= delta``. A spend whose own
        ``delta`` exceeds ``delta`` has no such ``eps`` (``inf``); a spend with
        ``delta = 1e-4`` in its Gaussian block alone may read well at
        ``delta = 1e-5``.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        eps : float
            The ``eps`` at ``delta`` (``inf`` when none holds), found to about
            ``1e-12``.

        Examples
        --------
        >>> from sklearn_dppca.privacy import Spend, gdp_mu
        >>> block = Spend(mu=gdp_mu(1.0, 1e-4))      # (1, 1e-4)-DP
        >>> 1.0 < block.eps_at(1e-5) < 1.5           # also (1.x, 1e-5)-DP
        True
        >>> Spend(eps=0.5).eps_at(1e-5)
        0.5
        """
        delta = check_delta(delta)
        if self.delta > delta:
            return math.inf
        if self.mu == 0:
            return self.eps
        rest = delta - self.delta
        if rest <= 0:
            return math.inf
        if gdp_delta(self.mu, 0.0) <= rest:
            return self.eps
        high = 1.0
        while gdp_delta(self.mu, high) > rest:
            high *= 2
            if high > 1e12:      # (a block this large holds at no useful eps)
                return math.inf
        block = brentq(lambda e: gdp_delta(self.mu, e) - rest, 0.0, high, xtol=1e-13,
                       rtol=1e-13)
        return self.eps + block

    def fits(self, eps, delta):
        """Tell whether this spend stays within the grant ``(eps, delta)``.

        Parameters
        ----------
        eps : float
            The grant's ``eps``.
        delta : float
            The grant's ``delta``.

        Returns
        -------
        bool
            True when the spend fits: the decimals compared exactly, the
            Gaussian block's ``delta`` bounded above (never a spend over the
            grant, not even by round-off).
        """
        return within((as_written(self.eps), as_written(self.delta),
                       as_written(self.mu)), as_written(eps), as_written(delta))


def within(spent, eps, delta):
    """Tell whether an exact spend stays within an exact grant.

    Parameters
    ----------
    spent : tuple of Fraction
        ``(eps, delta, mu)`` spent: the pair added by basic composition and the
        Gaussian block's ``mu``.
    eps, delta : Fraction
        The grant.

    Returns
    -------
    bool
        True when ``eps`` covers the pair's and the block's ``delta``, bounded
        above at what ``eps`` leaves it, fits beside the pair's ``delta``.
    """
    spent_eps, spent_delta, mu = spent
    eps_left, delta_left = eps - spent_eps, delta - spent_delta
    if eps_left < 0 or delta_left < 0:
        return False
    return block_delta_bound(mu, eps_left) <= delta_left


def charged_sums(eps, delta, mu):
    """The exact ``(eps, delta, mu)`` a mechanism's numbers charge (a ledger's
    entries, a plan's allocations): each at its binary value, at which it ran;
    ``mu`` composed in squares and rounded up to a float as written."""
    return (sum(map(Fraction, eps), Fraction(0)), sum(map(Fraction, delta), Fraction(0)),
            as_written(sqrt_at_least(sum((Fraction(m) ** 2 for m in mu), Fraction(0)))))


def compose(spends):
    """Compose spends exactly: the decimals of their ``eps``'s and ``delta``'s
    added, their ``mu``'s in squares, each total rounded up once to a float as
    written (:class:`Spend` reads its numbers as decimals).

    Parameters
    ----------
    spends : iterable of Spend

    Returns
    -------
    Spend
    """
    spends = list(spends)
    return Spend(written_at_least(exact_sum(s.eps for s in spends)),
                 written_at_least(exact_sum(s.delta for s in spends)),
                 sqrt_at_least(sum((as_written(s.mu) ** 2 for s in spends),
                                   Fraction(0))))


def charged_spend(eps, delta, mu):
    """The :class:`Spend` of a mechanism's numbers (a ledger's entries, a plan's
    allocations): :func:`charged_sums`, each at its binary value, at which it
    ran.

    Parameters
    ----------
    eps, delta, mu : iterable of float
        The ``eps``'s and ``delta``'s added by basic composition, and the
        ``mu``'s of the Gaussian parts composed in GDP.

    Returns
    -------
    Spend
        :func:`charged_sums`, each rounded up to a float as written.
    """
    eps, delta, mu = charged_sums(eps, delta, mu)
    return Spend(written_at_least(eps), written_at_least(delta), written_at_least(mu))


class BudgetTree:
    """A fit's budget, declared once: named parts, shares of their parent.

    Parameters
    ----------
    parts : dict
        Name -> ``(share, kind)`` for a leaf (``kind`` in ``"gaussian"``,
        ``"pure"``, ``"basic"``) or ``(share, parts)`` for an inner part. Shares
        of one parent must sum to at most 1; a share of 0 leaves the part out.

    See Also
    --------
    PrivacyBudget : A plain split of ``(eps, delta)`` into named parts.
    gdp_mu : The ``mu`` of the Gaussian block under ``accounting="gdp"``.

    Examples
    --------
    >>> from sklearn_dppca.privacy import BudgetTree
    >>> tree = BudgetTree({"clip bound": (0.25, "pure"),
    ...                    "statistic": (0.75, "gaussian")})
    >>> plan = tree.allocate(1.0, 1e-5, accounting="basic")
    >>> plan["statistic"].eps
    0.75

    The float ``1e-05`` is a hair above the decimal 1e-05, so the one part that
    takes all of it runs at the float just below:

    >>> plan["statistic"].delta
    9.999999999999999e-06
    """

    def __init__(self, parts):
        self.parts = _check_parts(parts, "budget")
        paths = [path for path, _, _, _ in self.leaves()]
        if len(set(paths)) != len(paths):
            # A name holding "/" can repeat a nested part's path; one allocation
            # would then overwrite the other and its spend would go uncounted.
            raise ValueError("Two parts of the budget have the same path; part names "
                             "must not repeat a nested part's path.")

    def leaves(self):
        """List the leaves of the tree, in order.

        Returns
        -------
        list of tuple
            ``(path, absolute share, delta weight, kind)`` of every leaf.
        """
        return list(_leaves(self.parts, "", 1.0, 1.0))

    def allocate(self, eps, delta, accounting="gdp"):
        """Allocate the grant ``(eps, delta)``: one allocation per leaf.

        ``"basic"``: a leaf gets ``eps`` times its share, and ``delta`` times its
        share among the parts that spend ``delta`` (pure parts spend none, so
        their siblings share it). ``"gdp"``: the same for pure and basic leaves;
        the Gaussian leaves together get the block ``(eps_G, delta_G)``, the sums
        of what they would get under basic accounting, which is ``mu``-GDP for
        ``mu = gdp_mu(eps_G, delta_G)``; leaf ``i`` gets ``mu_i^2`` in
        proportion to its share, so ``sqrt(sum mu_i^2) = mu``.

        Parameters
        ----------
        eps : float
            The grant's ``eps``, > 0.
        delta : float
            The grant's ``delta``, in (0, 1).
        accounting : {"gdp", "basic"}, default="gdp"
            How the Gaussian leaves compose.

        Returns
        -------
        BudgetPlan
            The leaves' allocations, indexed by path (``plan["a/b"]``), with
            ``plan.part(name)`` the view of one inner part.
        """
        accounting = check_param(accounting, [Options(*ACCOUNTING_METHODS)], "accounting")
        eps, delta = check_eps(eps), check_delta(delta)
        leaves = self.leaves()
        in_block = [leaf for leaf in leaves if accounting == "gdp" and leaf[3] == "gaussian"]
        alone = [leaf for leaf in leaves if leaf not in in_block]
        # the parts outside the block trimmed until what they charge adds up to
        # at most the grant as written
        eps_parts = trim_to([eps * share for _, share, _, _ in alone], as_written(eps))
        delta_parts = trim_to([delta * weight for _, _, weight, _ in alone],
                              as_written(delta))
        allocations = {path: Allocation(path, kind, part_eps, part_delta)
                       for (path, _, _, kind), part_eps, part_delta
                       in zip(alone, eps_parts, delta_parts)}
        block = None
        if in_block:
            outside = charged_spend(eps_parts, delta_parts, ())
            # the block takes its share, and never more than the parts leave
            block_eps = min(eps * math.fsum(share for _, share, _, _ in in_block),
                            written_at_most(as_written(eps) - as_written(outside.eps)))
            block_delta = min(delta * math.fsum(w for _, _, w, _ in in_block), delta,
                              written_at_most(as_written(delta)
                                              - as_written(outside.delta)))
            mu = gdp_mu(block_eps, block_delta)
            total_share = math.fsum(share for _, share, _, _ in in_block)
            for path, share, _, _ in in_block:
                allocations[path] = Allocation(path, "gaussian", 0.0, 0.0,
                                               mu * math.sqrt(share / total_share))
            block = (block_eps, block_delta, mu)
        allocations = {path: allocations[path] for path, _, _, _ in leaves}
        return BudgetPlan(allocations, accounting, block)


class BudgetPlan:
    """The allocations of one fit (from :meth:`BudgetTree.allocate`).

    ``plan[path]`` is a leaf's :class:`Allocation`; ``plan.part(prefix)`` is the
    view an algorithm gets for its own part (its leaves by their short names).
    ``block`` is ``(eps_G, delta_G, mu)`` of the Gaussian block, or None.
    """

    def __init__(self, allocations, accounting, block, prefix=""):
        self.allocations = allocations
        self.accounting = accounting
        self.block = block
        self.prefix = prefix

    def _full(self, name):
        return f"{self.prefix}/{name}" if self.prefix else name

    def __getitem__(self, name):
        try:
            return self.allocations[self._full(name)]
        except KeyError:
            raise KeyError(f"The budget has no part {self._full(name)!r}.") from None

    def __contains__(self, name):
        full = self._full(name)
        return any(path == full or path.startswith(full + "/") for path in self.allocations)

    def node(self, name):
        """A leaf's :class:`Allocation`, or the view of an inner part."""
        if self._full(name) in self.allocations:
            return self[name]
        return self.part(name)

    def part(self, name):
        """The view of one part: its leaves by their names below ``name``."""
        if name not in self:
            raise KeyError(f"The budget has no part {self._full(name)!r}.")
        return BudgetPlan(self.allocations, self.accounting, self.block, self._full(name))

    def planned_spend(self):
        """The :class:`Spend` if every leaf is spent (an upper bound on the fit's)."""
        leaves = [a for path, a in self.allocations.items()
                  if not self.prefix or path.startswith(self.prefix + "/")]
        return charged_spend((a.eps for a in leaves), (a.delta for a in leaves),
                             (a.mu for a in leaves if a.mu is not None))


def _check_parts(parts, where):
    # (an empty budget is a fit that releases nothing new, e.g. reused directions
    # and a scree read off their matrix; an empty inner part is a mistake)
    check_param(parts, [dict], where)
    if not parts and where != "budget":
        raise ValueError(f"{where} must be a non-empty dict of parts.")
    checked = {}
    for name, part in parts.items():
        check_param(part, [tuple], f"{where}/{name} (a pair: share, kind or parts)")
        if len(part) != 2:
            raise ValueError(f"{where}/{name} must be a pair (share, kind or parts), "
                             f"got {len(part)} items.")
        share, content = part
        share = check_param(share, [SHARE], f"the share of {where}/{name}")
        if not isinstance(content, dict):
            content = check_param(content, [Options(*_LEAF_KINDS)], f"{where}/{name}'s kind")
        else:
            content = _check_parts(content, f"{where}/{name}")
        checked[name] = (share, content)
    total = math.fsum(share for share, _ in checked.values())
    if total > 1 + _SHARE_ROUNDOFF:
        raise ValueError(f"The shares of {where} sum to {total:g} > 1.")
    return checked


def _spends_delta(content):
    if isinstance(content, dict):
        return any(share > 0 and _spends_delta(inner) for share, inner in content.values())
    return content != "pure"


def _leaves(parts, prefix, eps_share, delta_share):
    """Leaves with their absolute eps share and delta share (see ``allocate``)."""
    total = math.fsum(share for share, _ in parts.values())
    bearing = math.fsum(share for share, content in parts.values() if _spends_delta(content))
    for name, (share, content) in parts.items():
        if share == 0:
            continue
        path = f"{prefix}/{name}" if prefix else name
        weight = delta_share * share * total / bearing if _spends_delta(content) else 0.0
        if isinstance(content, dict):
            yield from _leaves(content, path, eps_share * share, weight)
        else:
            yield path, eps_share * share, weight, content
