"""A budget's numbers as written, added without round-off (privacy/_decimals.py):
no spend is accepted over its grant, not even by a float's last bit, and decimal
budgets add up as they are read."""

import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_dppca import DPPCA, BudgetExceededError
from sklearn_dppca.privacy import BudgetTree, PrivacyAccountant, Spend
from sklearn_dppca.privacy import _decimals
from sklearn_dppca.privacy._decimals import as_written, block_delta_bound, trim_to

mpmath.mp.dps = 60
# mu from 1e-7 to 200 and eps from 1e-9 to 200, log-spaced: the corners are where
# the log-space evaluation cancels most (tiny mu) and where delta underflows
GRID = [(float(mu), float(eps)) for mu in np.geomspace(1e-7, 200, 23)
        for eps in np.geomspace(1e-9, 200, 23)]


def _exact_delta(mu, eps):
    """delta(eps) of mu-GDP in 60-digit arithmetic (the same formula, no floats)."""
    mu, eps = mpmath.mpf(Fraction(mu).numerator) / Fraction(mu).denominator, \
        mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def _bound_misses():
    misses = 0
    for mu, eps in GRID:
        bound = block_delta_bound(Fraction(mu), Fraction(eps))
        if mpmath.mpf(bound.numerator) / bound.denominator < _exact_delta(mu, eps):
            misses += 1
    return misses


def test_block_delta_bound_is_never_below_the_exact_delta():
    assert _bound_misses() == 0


def test_the_bound_without_its_allowances_is_caught(monkeypatch):
    # the float evaluation alone falls below the exact delta somewhere on the grid
    # (up to 1e-6 relative at tiny mu): the check above can fail
    monkeypatch.setattr(_decimals, "_DELTA_RELATIVE", Fraction(0))
    monkeypatch.setattr(_decimals, "_LOG_ERROR", 0.0)
    monkeypatch.setattr(_decimals, "_DELTA_FLOOR", Fraction(0))
    assert _bound_misses() > 0


def test_the_bound_costs_little_where_budgets_live():
    # at mu = 0.27, eps = 1 (a fit at (1, 1e-5)) the allowance is about 4e-11
    for mu, eps in ((0.268, 1.0), (0.1, 0.5), (1.0, 4.0)):
        exact = _exact_delta(mu, eps)
        bound = block_delta_bound(Fraction(mu), Fraction(eps))
        excess = float(mpmath.mpf(bound.numerator) / bound.denominator / exact - 1)
        assert 0 < excess < 1e-8


def test_numbers_read_as_written():
    assert as_written(0.1) == Fraction(1, 10)
    assert as_written(0.1) + as_written(0.2) == as_written(0.3)
    assert Fraction(0.1) + Fraction(0.2) > Fraction(0.3)       # what binary would say


def test_trim_keeps_parts_that_add_up_and_lowers_one_that_does_not():
    assert trim_to([0.4, 0.6], as_written(1.0)) == [0.4, 0.6]
    assert trim_to([0.5, 0.3, 0.2], as_written(1.0)) == [0.5, 0.3, 0.2]
    # the float 1e-05 is above the decimal: the one part taking all of it drops a float
    (part,) = trim_to([1e-5], as_written(1e-5))
    assert part == math.nextafter(1e-5, 0) and Fraction(part) <= Fraction(1, 10**5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1e-3, 1.0), min_size=1, max_size=6),
       st.sampled_from([0.1, 0.3, 0.7, 1.0, 1.5, 2e-3, 1e-5, 3e-6]))
def test_trimmed_parts_never_exceed_the_grant(shares, total):
    shares = [share / sum(shares) for share in shares]
    parts = trim_to([total * share for share in shares], as_written(total))
    assert sum(map(Fraction, parts)) <= as_written(total)
    # and each part is its share up to a few floats
    for part, share in zip(parts, shares):
        assert part == pytest.approx(total * share, rel=1e-14)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 1.0), st.sampled_from(["gaussian", "pure",
                                                                 "basic"])),
                min_size=1, max_size=5),
       st.sampled_from([0.1, 0.3, 1.0, 2.5]), st.sampled_from([1e-5, 1e-6, 3e-7]),
       st.sampled_from(["gdp", "basic"]))
def test_every_plan_fits_its_grant_exactly(leaves, eps, delta, accounting):
    weights = [share for share, _ in leaves]
    tree = BudgetTree({f"part {i}": (share / sum(weights), kind)
                       for i, (share, kind) in enumerate(leaves)})
    plan = tree.allocate(eps, delta, accounting=accounting)
    assert plan.planned_spend().fits(eps, delta)


def test_decimal_fits_add_up_to_their_total_and_not_a_bit_more():
    X = np.random.default_rng(0).normal(size=(400, 3))
    accountant = PrivacyAccountant(0.3, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPPCA(eps=0.1, accountant=accountant, random_state=0).fit(X)
        DPPCA(eps=0.2, accountant=accountant, random_state=0).fit(X)
    # pure spends: 0.1 and 0.2 as written fill 0.3 exactly ...
    pure = PrivacyAccountant(0.3, 1e-5)
    pure.charge(Spend(eps=0.1), label="a")
    pure.charge(Spend(eps=0.2), label="b")
    # ... and the smallest positive float more is refused (the old slack took 1e-13)
    with pytest.raises(BudgetExceededError):
        pure.charge(Spend(eps=5e-324), label="c")
    assert not pure.can_afford(Spend(eps=1e-13))


def test_a_fit_at_exactly_the_remaining_eps_is_accepted():
    X = np.random.default_rng(1).normal(size=(300, 3))
    accountant = PrivacyAccountant(1.5, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPPCA(eps=1.0, accountant=accountant, random_state=0).fit(X)
        left = accountant.remaining()["eps"]
        assert left == float(f"{left:.10g}")        # read to 10 digits ...
        DPPCA(eps=left, accountant=accountant, random_state=0).fit(X)   # ... and taken
    assert len(accountant.charges) == 2


def _recomputed_delta(charges, total_eps):
    """The exact delta of a budget's charges at its total eps: the pure parts as
    written, the Gaussian blocks composed, in 60-digit arithmetic."""
    pure = sum((as_written(c["eps"]) for c in charges), Fraction(0))
    added = sum((as_written(c["delta"]) for c in charges), Fraction(0))
    mu_square = sum((as_written(c["mu"]) ** 2 for c in charges), Fraction(0))
    if mu_square == 0:
        return added
    left = as_written(total_eps) - pure
    mu = mpmath.sqrt(mpmath.mpf(mu_square.numerator) / mu_square.denominator)
    eps = mpmath.mpf(left.numerator) / left.denominator
    block = mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
    return mpmath.mpf(added.numerator) / added.denominator + block


@pytest.mark.parametrize("seed", range(6))
def test_an_accountant_filled_to_the_edge_never_spends_over_its_grant(seed):
    # random spends, each the largest of its kind the accountant still takes:
    # recomputed in 60 digits, the total never exceeds the grant as written
    rng = np.random.default_rng(seed)
    total_eps, total_delta = float(rng.choice([0.3, 1.0, 1.5, 4.0])), 1e-5
    accountant = PrivacyAccountant(total_eps, total_delta)
    for index in range(6):
        left = accountant.remaining()
        kind = rng.choice(["mu", "pure_eps", "delta"]) if index < 5 else "mu"
        amount = left[kind] * (1.0 if index == 5 else float(rng.uniform(0.2, 0.6)))
        spend = Spend(**{{"pure_eps": "eps"}.get(kind, kind): amount})
        if amount > 0 and accountant.can_afford(spend):
            accountant.charge(spend, label=f"spend {index}")
    delta = _recomputed_delta(accountant.charges, total_eps)
    # at the edge (the last spend took all that was left) and not a bit over it
    assert mpmath.mpf(1) / 10**5 * (1 - mpmath.mpf(10)**-6) < delta <= mpmath.mpf(1) / 10**5
