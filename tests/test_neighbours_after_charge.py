"""Nothing data-dependent after the charge (issue 26, item 2).

Each fit refuses what public settings decide before it charges its accountant;
after the charge it is total on the declared data domain (finite values with
``|x| <= 2**500``, one contract for every estimator). So two neighbouring data sets ``D`` and
``D'`` (one row replaced) must behave alike: both release (finite outputs), or
both raise before any charge. A raise, or a different branch, after the charge
that only one of them takes tells them apart.

The pairs below are planted so that one of them reached such a raise before the
fixes: a scaled column whose spread is far below one of its values, a row near
the top of the float range, and public settings a mechanism refused only after
the charge.
"""

import warnings

import numpy as np
import pytest

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, PrivacyAccountant
from sklearn_dppca.privacy import PrivacyUtilityWarning, PrivacyRiskWarning

from ._kendall_support import one_block

SEEDS = (0, 1, 2)
N_ROWS = 400


def _base(seed, n=N_ROWS, p=3):
    return np.random.default_rng(seed).normal(size=(n, p)) * [3.0, 2.0, 1.0][:p]


def _replaced(X, row, values):
    """``X`` with one row replaced: the neighbour of ``X``."""
    X = X.copy()
    X[row] = values
    return X


def _finite_release(fitted):
    """Whether every released array attribute is finite, or NaN where the fit could
    not estimate it (documented: the variances, shares, total and spreads); never
    an infinity, and the directions always finite."""
    names = ("components_", "kendall_matrix_", "scale_", "explained_variance_",
             "explained_variance_ratio_", "noise_scale_", "radius_", "total_variance_")
    for name in names:
        value = getattr(fitted, name, None)
        if value is not None and np.any(np.isinf(value)):
            return False
    return bool(np.all(np.isfinite(fitted.components_)))


def _outcome(make, X):
    """``("release", finite)`` or ``("raise before the charge", type)``; a raise
    after the accountant was charged is the failure this file looks for."""
    accountant = PrivacyAccountant(1e6, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyUtilityWarning)
        warnings.simplefilter("ignore", PrivacyRiskWarning)
        warnings.simplefilter("ignore", UserWarning)
        try:
            fitted = make(accountant).fit(X)
        except (ValueError, TypeError, OverflowError) as error:
            where = "after the charge" if accountant.charges else "before the charge"
            return (f"raise {where}", type(error).__name__)
    return ("release", _finite_release(fitted))


def _assert_alike(make, D, D_prime):
    first, second = _outcome(make, D), _outcome(make, D_prime)
    assert first == second
    assert first[0] != "raise after the charge"
    if first[0] == "release":
        assert first[1], "a release with values that are not finite"


# -- (1) scale=True: a legal value far above its column's spread ---------------

def _tiny_column_pair(seed, value):
    """D: column 0 spreads about 1e-100 (1e-90 for ``value`` past 2**500) and row 0
    holds ``value`` there; D': that value is 0."""
    X = _base(seed, n=1000)
    X[:, 0] *= 1e-100 if value < 2.0**500 else 1e-90
    return _replaced(X, 0, [value, *X[0, 1:]]), _replaced(X, 0, [0.0, *X[0, 1:]])


@pytest.mark.parametrize("seed", SEEDS)
def test_directions_scaled_far_value(seed):
    # X / scale_ overflowed to inf, which the kernel refused after the charge
    # (1e60 lies in the data domain; divided by a spread near 1e-100 it does not)
    D, D_prime = _tiny_column_pair(seed, 1e60)
    _assert_alike(lambda a: DPKendallDirections(scale=True, accountant=a, eps=4.0,
                                                random_state=seed), D, D_prime)


@pytest.mark.parametrize("seed", SEEDS)
def test_directions_scaled_clipped_far_value(seed):
    D, D_prime = _tiny_column_pair(seed, 1e60)
    _assert_alike(lambda a: DPKendallDirections(scale=True, radial="clipped",
                                                accountant=a, eps=4.0,
                                                random_state=seed), D, D_prime)


@pytest.mark.parametrize("make", [
    lambda a, seed: DPPCA(scale=True, accountant=a, eps=4.0, random_state=seed),
    lambda a, seed: DPScree(scale=True, accountant=a, eps=4.0, random_state=seed),
], ids=["DPPCA", "DPScree"])
def test_scaled_value_beyond_the_domain_after_scaling(make):
    # 1e60 is inside |x| <= 2**500, but 1e60 / scale_ (about 1e160) is not: the
    # re-check of X / scale_ raises after the charge (the views will clamp)
    D, D_prime = _tiny_column_pair(0, 1e60)
    _assert_alike(lambda a: make(a, 0), D, D_prime)


def test_directions_scaled_far_value_in_row_blocks():
    # per block: the matched squared differences overflow (a RuntimeWarning, an
    # error under this suite's filter) and the view X / scale_ is not clamped
    D, D_prime = _tiny_column_pair(0, 1e60)
    _assert_alike(lambda a: DPKendallDirections(scale=True, pairs=10, row_blocks=500,
                                                accountant=a, eps=4.0, random_state=0),
                  D, D_prime)


# -- (2) DPKendallDirections: a row near the top of the float range ------------

def _far_row_pair(seed, value=2.0**500):
    X = _base(seed)
    return _replaced(X, 0, [value, -value, value]), X


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("options", [
    dict(radial="clipped"),
    dict(radial="clipped", pairs=10),
    dict(scale=True),
    dict(scale=True, radial="clipped"),
], ids=["clipped", "clipped-pairs", "scale", "scale-clipped"])
def test_directions_far_row(seed, options):
    D, D_prime = _far_row_pair(seed)
    _assert_alike(lambda a: DPKendallDirections(accountant=a, random_state=seed,
                                                **options), D, D_prime)


@pytest.mark.parametrize("radius", [1e200, 1e300])
def test_public_radius_past_sqrt_of_the_largest_float(radius):
    # radius**2 overflowed (as the kernel's floor, and in the "matrix" scree)
    D, D_prime = _far_row_pair(0)
    _assert_alike(lambda a: DPKendallDirections(radial="clipped", radius=radius,
                                                accountant=a, random_state=0),
                  D, D_prime)
    D, D_prime = _base(0), _replaced(_base(0), 0, [5.0, 5.0, 5.0])
    _assert_alike(lambda a: DPScree(scree_method="matrix", radial="clipped", radius=radius,
                                    accountant=a, random_state=0), D, D_prime)


@pytest.mark.parametrize("make", [
    lambda a: DPPCA(accountant=a, random_state=0),
    lambda a: DPScree(accountant=a, random_state=0),
    lambda a: DPPCA(radial="clipped", accountant=a, random_state=0),
    lambda a: DPScree(scree_params={"clip": "scaled"}, accountant=a, random_state=0),
], ids=["DPPCA", "DPScree", "DPPCA-clipped", "DPScree-scaled"])
def test_row_at_the_edge_of_the_domain(make):
    D, D_prime = _far_row_pair(0, value=2.0**500)
    _assert_alike(make, D, D_prime)


# -- (3) public errors: raised before any charge, for D and D' alike ------------

PUBLIC_ERRORS = {
    "scree-kendall-array": lambda a: DPScree(scree_method="kendall", directions=np.eye(3),
                                             accountant=a),
    "huber-k-range": lambda a: DPScree(scree_method="huber", accountant=a,
                                       scree_params={"k_min": 5, "k_max": 1}),
    "pmwm-a-b": lambda a: DPScree(scree_method="pmwm", accountant=a,
                                  scree_params={"a": 5.0, "b": 1.0}),
    "clip-bounds-count": lambda a: DPScree(accountant=a,
                                           scree_params={"C": [1.0, 2.0]}),
    "scree-scaled-public-directions": lambda a: DPScree(
        scree_params={"clip": "scaled"}, directions=np.eye(3), accountant=a),
    "scree-scaled-public-bound": lambda a: DPScree(
        scree_params={"clip": "scaled", "C": 2.0}, accountant=a),
    "pca-odd-pairs": lambda a: DPPCA(pairs=3, accountant=a),
    "directions-odd-pairs": lambda a: DPKendallDirections(pairs=3, accountant=a),
    "scree-odd-pairs": lambda a: DPScree(scree_params={"pairs": 3, "clip": "norm"},
                                         accountant=a),
    "pca-classical": lambda a: DPPCA(eps=30.0, noise="classical", accounting="basic",
                                     accountant=a),
    "directions-classical": lambda a: DPKendallDirections(
        eps=30.0, noise="classical", accounting="basic", accountant=a),
    # subnormal leaves: the calibrations divided by zero after the charge
    "directions-subnormal-eps": lambda a: DPKendallDirections(
        eps=1e-310, accounting="basic", radial="clipped", scale=True, accountant=a),
    "scree-subnormal-eps": lambda a: DPScree(eps=1e-310, accounting="basic",
                                             scree_method="kendall", accountant=a),
}


@pytest.mark.parametrize("name", sorted(PUBLIC_ERRORS))
def test_public_error_before_the_charge(name):
    make = PUBLIC_ERRORS[name]
    D = _base(0, n=N_ROWS - 1)            # odd n: the odd pair designs fail on it
    D_prime = _replaced(D, 0, [1e100, -1e100, 1e100])
    for X in (D, D_prime):
        accountant = PrivacyAccountant(1e6, 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError):
                make(accountant).fit(X)
        assert accountant.charges == []
        assert accountant.spent() == (0.0, 0.0)


@pytest.mark.parametrize("bins", ["auto", 5])
def test_a_histogram_budget_its_mechanism_cannot_spend_is_not_bought(bins):
    # eps = 1e-9 gives the sparse histogram a rate its discrete Laplace cannot
    # take: it was refused after the directions and the scree were spent; now the
    # plan does not buy the score part, for D and D' alike
    D = _base(0)
    D_prime = _replaced(D, 0, [1e100, -1e100, 1e100])
    for X in (D, D_prime):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = DPPCA(eps=1e-9, histogram="sparse", bins=bins,
                           random_state=0).fit(X)
        assert fitted.score_histogram_ is None
        assert not any(e["step"].startswith("score") for e in fitted.privacy_ledger_)


@pytest.mark.parametrize("method", ["huber", "pmwm"])
def test_paired_scree_on_three_rows_refused_before_the_charge(method):
    for X in (_base(0, n=3), _replaced(_base(0, n=3), 0, [1e100, 0.0, 0.0])):
        accountant = PrivacyAccountant(1e6, 0.5)
        with pytest.raises(ValueError, match="at least 4 rows"):
            DPScree(scree_method=method, accountant=accountant).fit(X)
        assert accountant.charges == []


# -- (4) the score frame: search results clamped, never an error ----------------

def test_score_frame_of_overflowing_scores_is_useless_not_an_error():
    from sklearn_dppca._algorithms._scores import release_score_summary, score_parts
    from sklearn_dppca.privacy import BudgetTree, PrivacyLedger

    budget = BudgetTree({"score": (1.0, score_parts("additive"))}).allocate(
        2.0, 1e-5, "gdp").part("score")
    scores = np.random.default_rng(0).normal(size=(2000, 2))
    far = _replaced(scores, 0, [1e308, -1e308])    # its distances overflow
    for S in (scores, far):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyUtilityWarning)
            summary = release_score_summary(
                one_block(S), budget, bins=(8, 8), method="additive", threshold="auto",
                unit=1e-300, labels=None, group_codes=None, n_points=10, jitter=0.25,
                rng=np.random.default_rng(0), ledger=PrivacyLedger())
        if summary is not None:
            assert np.all(np.isfinite(summary.frame.extent))
            assert np.isfinite(summary.frame.radius) and summary.frame.radius > 0


# -- (5) the same neighbours as Dask arrays: the same rows, the same behaviour ---

@pytest.mark.parametrize("make, value", [
    (lambda a: DPKendallDirections(scale=True, accountant=a, eps=4.0, random_state=0),
     1e60),
    (lambda a: DPKendallDirections(scale=True, radial="clipped", accountant=a, eps=4.0,
                                   random_state=0), 1e60),
    (lambda a: DPScree(scale=True, accountant=a, eps=4.0, random_state=0), 1e60),
    (lambda a: DPPCA(scale=True, radial="clipped", accountant=a, eps=4.0,
                     random_state=0), 1e60),
], ids=["directions", "directions-clipped", "scree", "dppca-clipped"])
def test_dask_input_neighbours(make, value):
    da = pytest.importorskip("dask.array")
    D, D_prime = _tiny_column_pair(0, value)
    # uneven chunks, and different ones for the two: the blocks are public anyway
    _assert_alike(make, da.from_array(D, chunks=(300, 3)),
                  da.from_array(D_prime, chunks=(450, 3)))
