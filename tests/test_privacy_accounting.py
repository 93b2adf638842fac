"""Gaussian differential privacy and the budget tree, checked against independent
computations: the privacy profile integrated numerically, composition by numerical
integration and by convolving privacy-loss distributions, shares worked out by hand.
"""

import math

import numpy as np
import pytest
from scipy.integrate import dblquad, quad
from scipy.signal import fftconvolve
from scipy.stats import norm

from sklearn_dppca.privacy import (
    BudgetTree,
    Spend,
    gaussian_noise_scale,
    gdp_delta,
    gdp_mu,
)
from sklearn_dppca.privacy import _accounting

# ----------------------------------------------------------- independent references


def pdf(x, mean=0.0):
    """The N(mean, 1) density (plain math: scipy's per-call cost would slow dblquad)."""
    return math.exp(-0.5 * (x - mean) ** 2) / math.sqrt(2 * math.pi)


def profile_by_integration(mu, eps):
    """delta(eps) = integral of max(0, p1 - e^eps p0), p1 = N(mu, 1), p0 = N(0, 1)."""

    def excess(x):
        return max(0.0, pdf(x, mu) - math.exp(eps) * pdf(x))

    # p1 / p0 = exp(mu x - mu^2 / 2) exceeds e^eps exactly right of this point;
    # telling quad where the kink is keeps it accurate.
    kink = eps / mu + mu / 2
    low, high = min(kink, 0.0) - 40.0, max(kink, mu) + 40.0
    value, _ = quad(excess, low, high, points=[kink], epsabs=1e-300, epsrel=1e-11,
                    limit=200)
    return value


def composed_profile_2d(mu1, mu2, eps):
    """delta(eps) of two Gaussian mechanisms (sd 1, sensitivities mu1, mu2) run on
    the same data: integral over the plane of max(0, p1 - e^eps p0), with p1 =
    N((mu1, mu2), I) and p0 = N(0, I), by dblquad."""

    def excess(x, y):   # dblquad's inner variable comes first
        return max(0.0, pdf(x, mu1) * pdf(y, mu2) - math.exp(eps) * pdf(x) * pdf(y))

    def boundary(y):
        # where mu1 x - mu1^2/2 + mu2 y - mu2^2/2 = eps: the excess is 0 left of it
        return (eps - mu2 * y + (mu1**2 + mu2**2) / 2) / mu1

    value, _ = dblquad(excess, -12.0 + mu2, 12.0 + mu2, boundary,
                       lambda y: max(boundary(y), mu1) + 12.0, epsabs=1e-13, epsrel=1e-10)
    return value


def composed_profile_by_convolution(mus, eps, step=1e-3):
    """delta(eps) of independent Gaussian mechanisms from their privacy losses.

    Under p1, one mechanism's loss log(p1/p0)(x) = mu x - mu^2/2 is N(mu^2/2, mu^2);
    the losses of independent mechanisms add, so their density is the convolution
    of the parts' densities (done here on a grid, not in closed form), and
    delta(eps) = E[max(0, 1 - exp(eps - L))].
    """
    density, start = np.array([1.0]), 0.0
    for mu in mus:
        first = math.floor((mu**2 / 2 - 12 * mu) / step)
        grid = (first + np.arange(int(24 * mu / step) + 2)) * step
        part = norm.pdf(grid, loc=mu**2 / 2, scale=mu) * step
        density, start = fftconvolve(density, part), start + first * step
    losses = start + np.arange(density.size) * step
    return float(np.sum(density * np.maximum(0.0, -np.expm1(eps - losses))))


# ------------------------------------------------------------------- gdp_delta, gdp_mu


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 5.0])
def test_gdp_delta_matches_integrated_profile(mu, eps):
    expected = profile_by_integration(mu, eps)
    assert gdp_delta(mu, eps) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_gdp_delta_edges():
    assert gdp_delta(0.0, 1.0) == 0.0
    # falls with eps, rises with mu
    assert gdp_delta(1.0, 0.5) > gdp_delta(1.0, 1.0) > gdp_delta(1.0, 2.0)
    assert gdp_delta(0.5, 1.0) < gdp_delta(1.0, 1.0) < gdp_delta(2.0, 1.0)
    for mu in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="mu"):
            gdp_delta(mu, 1.0)


@pytest.mark.parametrize("mus, eps", [
    ((0.5, 1.0), 0.5),
    ((0.3, 0.3), 0.1),
    ((1.5, 0.2), 2.0),
    ((0.8, 0.6), 1.0),
])
def test_two_gaussian_mechanisms_compose_to_root_sum_of_squares(mus, eps):
    expected = composed_profile_2d(*mus, eps)
    assert gdp_delta(math.hypot(*mus), eps) == pytest.approx(expected, rel=1e-8)
    # Adding the mu's (a wrong rule) would be far off: the check can tell.
    assert gdp_delta(sum(mus), eps) > expected * 1.05


@pytest.mark.parametrize("mus, eps", [
    ((0.3, 0.5, 0.8, 1.0), 1.0),
    ((0.2,) * 6, 0.3),
    ((1.2, 0.1, 0.7), 2.5),
])
def test_many_gaussian_mechanisms_compose_to_root_sum_of_squares(mus, eps):
    expected = composed_profile_by_convolution(mus, eps)
    mu = math.sqrt(math.fsum(m * m for m in mus))
    assert gdp_delta(mu, eps) == pytest.approx(expected, rel=1e-5)
    assert (Spend(mu=mus[0]) + Spend(mu=mus[1])).mu == pytest.approx(math.hypot(*mus[:2]))


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 5.0, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
def test_gdp_mu_inverts_gdp_delta(eps, delta):
    mu = gdp_mu(eps, delta)
    # within the grant with the outward bound on its delta (a relative 1e-11 and
    # the logs' cancellation allowed for), and no further inside than that
    assert delta * (1 - 1e-8) <= gdp_delta(mu, eps) <= delta
    assert gdp_delta(mu * (1 + 1e-6), eps) > delta
    # The analytic Gaussian mechanism of sensitivity 1 is (1 / sigma)-GDP: its
    # calibration, found by another root search, must agree.
    assert 1 / gaussian_noise_scale(1.0, eps, delta) == pytest.approx(mu, rel=1e-9)


# -------------------------------------------------------------------- the budget tree

HAND_TREE = {"a": (0.5, "gaussian"), "b": (0.3, "pure"),
             "c": (0.2, {"x": (0.5, "basic"), "y": (0.5, "pure")})}


def test_basic_allocation_reproduces_the_shares():
    plan = BudgetTree(HAND_TREE).allocate(2.0, 7e-6, accounting="basic")
    # eps: share times share down the path
    expected_eps = {"a": 1.0, "b": 0.6, "c/x": 0.2, "c/y": 0.2}
    # delta: only a and c spend it (c through x), in proportion 0.5 : 0.2
    expected_delta = {"a": 5e-6, "b": 0.0, "c/x": 2e-6, "c/y": 0.0}
    assert set(plan.allocations) == set(expected_eps)
    for path, allocation in plan.allocations.items():
        assert allocation.eps == pytest.approx(expected_eps[path], rel=1e-14)
        assert allocation.delta == pytest.approx(expected_delta[path], rel=1e-14, abs=0)
        assert allocation.mu is None
    assert plan.part("c")["x"].eps == pytest.approx(0.2)
    assert plan.block is None


def test_gdp_allocation_composes_to_the_block():
    eps, delta = 2.0, 7e-6
    plan = BudgetTree(HAND_TREE).allocate(eps, delta, accounting="gdp")
    basic = BudgetTree(HAND_TREE).allocate(eps, delta, accounting="basic")
    block_eps, block_delta, mu = plan.block
    assert (block_eps, block_delta) == pytest.approx((1.0, 5e-6), rel=1e-14)
    assert gdp_delta(mu, block_eps) == pytest.approx(block_delta, rel=1e-9)
    assert gdp_delta(mu, block_eps) <= block_delta
    gaussian = [a for a in plan.allocations.values() if a.kind == "gaussian"]
    assert math.fsum(a.mu**2 for a in gaussian) == pytest.approx(mu**2, rel=1e-12)
    assert all(a.eps == 0 and a.delta == 0 for a in gaussian)
    for path in ("b", "c/x", "c/y"):    # pure and basic leaves: as in basic mode
        assert plan[path] == basic[path]


def test_gdp_leaves_share_mu_squared_by_eps_share():
    tree = BudgetTree({"one": (0.2, "gaussian"), "three": (0.6, "gaussian"),
                       "rest": (0.2, "pure")})
    plan = tree.allocate(1.0, 1e-6)
    assert plan["three"].mu**2 == pytest.approx(3 * plan["one"].mu**2, rel=1e-12)


def random_parts(rng, depth=0, full=False):
    """A random tree of parts and, per leaf path, its share times the shares above.

    ``full``: every share positive and each parent's shares summing to 1, so that
    the tree leaves none of the grant unallocated."""
    n_parts = int(rng.integers(1, 5))
    shares = rng.dirichlet(np.ones(n_parts))
    if not full:
        shares *= 1.0 if rng.random() < 0.5 else rng.uniform(0.3, 1.0)
        shares[rng.random(n_parts) < 0.1] = 0.0
    parts, absolute = {}, {}
    for i, share in enumerate(shares):
        name = f"p{i}"
        if depth < 2 and rng.random() < 0.35:
            inner, inner_absolute = random_parts(rng, depth + 1, full)
            parts[name] = (float(share), inner)
            absolute.update({f"{name}/{path}": share * value
                             for path, value in inner_absolute.items()})
        else:
            parts[name] = (float(share), str(rng.choice(["gaussian", "pure", "basic"])))
            absolute[name] = share
    return parts, absolute


def plan_fits(plan, eps, delta):
    """The fit's guarantee from the allocations, composed here without Spend.

    Pure and basic leaves add up; the Gaussian leaves are one block of
    mu = sqrt(sum mu_i^2) (or, in basic mode, add up like the rest); the block gets
    the eps the others leave, where its delta is smallest."""
    leaves = list(plan.allocations.values())
    other_eps = math.fsum(a.eps for a in leaves)
    other_delta = math.fsum(a.delta for a in leaves)
    mu = math.sqrt(math.fsum(a.mu**2 for a in leaves if a.mu is not None))
    slack = 1 + 1e-12
    if mu == 0:
        return other_eps <= eps * slack and other_delta <= delta * slack
    return (other_eps < eps
            and other_delta + gdp_delta(mu, eps - other_eps) <= delta * slack)


def random_grants(seed, n_cases=200, full=False):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        parts, absolute = random_parts(rng, full=full)
        eps = float(np.exp(rng.uniform(math.log(0.05), math.log(10.0))))
        delta = float(10 ** rng.uniform(-10, -3))
        yield parts, absolute, eps, delta


def test_random_trees_stay_within_their_grant():
    n_gaussian_plans = 0
    for parts, absolute, eps, delta in random_grants(seed=20250611):
        tree = BudgetTree(parts)
        basic = tree.allocate(eps, delta, accounting="basic")
        nonzero = {path for path, share in absolute.items() if share > 0}
        assert set(basic.allocations) == nonzero
        for path in nonzero:
            allocation = basic[path]
            assert allocation.eps == pytest.approx(eps * absolute[path], rel=1e-12)
            assert allocation.delta >= 0
            assert (allocation.delta == 0) == (allocation.kind == "pure")
        for plan in (basic, tree.allocate(eps, delta, accounting="gdp")):
            assert plan.planned_spend().fits(eps, delta)
            assert plan_fits(plan, eps, delta)
        n_gaussian_plans += plan.block is not None
    assert n_gaussian_plans > 100   # the random trees do exercise the block


def test_a_too_large_mu_is_caught(monkeypatch):
    """A deliberately broken allocation (mu 10% too large) must fail the checks.

    Only trees that allocate all of the grant: in the others the block may use the
    eps and delta left over, and a larger mu can still fit."""
    true_gdp_mu = _accounting.gdp_mu
    monkeypatch.setattr(_accounting, "gdp_mu", lambda e, d: 1.1 * true_gdp_mu(e, d))
    n_checked = 0
    for parts, _, eps, delta in random_grants(seed=7, n_cases=60, full=True):
        plan = BudgetTree(parts).allocate(eps, delta, accounting="gdp")
        if plan.block is None:
            continue
        assert not plan_fits(plan, eps, delta)
        assert not plan.planned_spend().fits(eps, delta)
        n_checked += 1
    assert n_checked > 20


DPPCA_TREE = {
    "loading": (0.35, "gaussian"),
    "scree": (0.3, {"clip bound": (0.1875, "pure"), "statistic": (0.5625, "gaussian"),
                    "total": (0.25, {"clip bound": (0.5, "pure"),
                                     "statistic": (0.5, "gaussian")})}),
    "score": (0.35, {"frame": (0.35, "pure"), "histogram": (0.65, "gaussian")}),
}


@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_gdp_never_noisier_than_basic_on_the_dppca_tree(delta):
    tree = BudgetTree(DPPCA_TREE)
    for eps in np.round(np.arange(0.1, 8.0 + 1e-9, 0.1), 10):
        gdp = tree.allocate(eps, delta, accounting="gdp")
        basic = tree.allocate(eps, delta, accounting="basic")
        for path, allocation in gdp.allocations.items():
            if allocation.kind != "gaussian":
                continue
            alone = gaussian_noise_scale(1.0, basic[path].eps, basic[path].delta)
            assert 1.0 / allocation.mu <= alone, (path, eps)


@pytest.mark.parametrize("parts, error, match", [
    ({"a": (0.7, "pure"), "b": (0.4, "gaussian")}, ValueError, "sum"),
    ({"a": (0.5, {"x": (0.6, "pure"), "y": (0.6, "basic")})}, ValueError, "sum"),
    ({"a": (0.5, "laplace")}, ValueError, "kind"),
    ({"a": (-0.1, "pure")}, ValueError, "share"),
    ({"a": (1.5, "pure")}, ValueError, "share"),
    ({"a": (float("nan"), "pure")}, ValueError, "share"),
    ({"a": (True, "pure")}, TypeError, "share"),
    ({"a": ("0.5", "pure")}, TypeError, "share"),
    ({"a": 0.5}, TypeError, "pair"),
    ({"a": (0.5, "pure", 1)}, ValueError, "pair"),
    ({"a": (0.5, 3)}, TypeError, "kind"),
    ({"a": (0.5, {})}, ValueError, "non-empty"),
])
def test_bad_trees_raise(parts, error, match):
    with pytest.raises(error, match=match):
        BudgetTree(parts)


def test_unknown_accounting_raises():
    with pytest.raises(ValueError, match="accounting"):
        BudgetTree(HAND_TREE).allocate(1.0, 1e-5, accounting="rdp")


def test_part_names_cannot_collide():
    # "a/b" repeats the nested part a -> b: one allocation would overwrite the other
    parts = {"a/b": (0.5, "gaussian"), "a": (0.5, {"b": (1.0, "pure")})}
    with pytest.raises(ValueError, match="same path"):
        BudgetTree(parts)
    # a "/" in a name alone is fine (column names may hold one)
    BudgetTree({"a/b": (0.5, "gaussian"), "a": (0.5, {"c": (1.0, "pure")})})


def test_spend_composition_and_fit():
    mu = gdp_mu(1.0, 1e-6)
    assert Spend(mu=mu).fits(1.0, 1e-6)
    assert not Spend(mu=mu * 1.01).fits(1.0, 1e-6)
    # the block takes the eps the pure part leaves, and its delta rises with that
    assert not Spend(eps=0.1, mu=mu).fits(1.0, 1e-6)
    assert Spend(eps=0.1, mu=mu).as_pair(1.0) == pytest.approx(
        (1.0, gdp_delta(mu, 0.9)), rel=1e-12)
    assert Spend(eps=0.3, delta=1e-7).as_pair(5.0) == (0.3, 1e-7)



def test_an_empty_budget_allocates_nothing():
    # a fit that releases nothing new (a scree read off reused directions' matrix)
    plan = BudgetTree({}).allocate(1.0, 1e-5)
    assert plan.allocations == {} and plan.block is None
    assert plan.planned_spend() == Spend()


def test_a_gaussian_block_below_the_smallest_delta_is_refused_by_name():
    # Below 1e-270 the exact noise's uncharged tails (about 1e-280) and the bound's
    # absolute allowance (1e-300) are no longer negligible: one clear ValueError,
    # at the plan of a fit as at gdp_mu, never a failed search (it used to end in
    # "cannot convert NaN to integer ratio" for a block delta below 1e-300).
    from sklearn_dppca import DPPCA

    assert gdp_mu(1.0, 1e-270) > 0
    for delta in (9.9e-271, 1e-300, 5e-324):
        with pytest.raises(ValueError, match=r"below 1e-270, the smallest delta"):
            gdp_mu(1.0, delta)
    with pytest.raises(ValueError, match=r"delta=.* is below 1e-270"):
        DPPCA(delta=1e-300).plan(300, 3)
    # an accountant of such a delta funds pure parts only: its room reads no
    # Gaussian fit (it used to raise gdp_mu's refusal from remaining())
    from sklearn_dppca.privacy import PrivacyAccountant

    accountant = PrivacyAccountant(1.0, 1e-300)
    room = accountant.remaining()
    assert room["eps"] == room["mu"] == 0.0 and room["pure_eps"] == 1.0
    assert accountant.fits_left() == {1: 0.0, 2: 0.0, 4: 0.0}
    assert accountant.can_afford(Spend(eps=0.5))
