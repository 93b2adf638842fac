"""Floating-point robustness of the Kendall kernel and scale behaviour of the releases.

* The kernel neither overflows nor underflows: on rows up to 1e300 (and up to the
  largest float, where ``x_i - x_j`` itself overflows) and on differences down to the
  smallest normal float (and subnormal ones) it agrees to 1e-12 with an EXACT
  reference (differences in rational arithmetic, rescaled before rounding).
* K is invariant, to 1e-12 relative, under translation and under ``X * 2**k`` for
  every ``k`` in -900..900 for which ``X * 2**k`` is exactly representable.
* Releases with a fixed ``random_state``:

  - DPKendallDirections: invariant under ``X * 2**k`` (K is, and the noise does not
    depend on the data's scale).
  - DPScree / DPPCA variances: scale by ``4**k`` (equivariant) when every step of the
    mechanism is: public clip bounds given in the data's units (``C`` times
    ``4**k``) with norm or per-component clipping. Checked to 1e-12.
  - Equivariant up to a 1% grid: the automatic clip bounds ``C="auto"`` and the
    frame's radius come from private quantiles on the scale-free grid
    ``tiny * 1.05**i`` (geometric over the whole positive float range), so they
    follow a change of units to within one grid step; tests below check both
    the grid and the ratio.
  - NOT equivariant: PMWM's trimming quantiles and the frame's coarse centre
    (Durfee searches on ``t_i = beta**i - 1``, fixed in absolute units, relative
    resolution ``beta - 1`` only far from 0). The Huber scree is not either: its
    private scale is the noisy argmax of a histogram on absolute dyadic bins
    ``[2**k_min, 2**k_max]``; scaling the data shifts the counts by ``2 k`` bins but
    not the noise, so the argmax (and the whole estimate) changes.
  - Variances are squares of the data's scale: ``4**k`` times a variance must stay
    a normal float (for unit-scale data, ``|k| <~ 500``); DPScree and DPPCA refuse
    ``max |X| > 2**500`` with a ValueError naming X, and so does
    DPKendallDirections (one data contract for every estimator).
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, PrivacyAccountant, spherical_kendall
from sklearn_dppca._kendall import _pair_design

TOL = 1e-12
TINY = np.finfo(np.float64).tiny          # smallest normal float, 2.2e-308
HUGE = np.finfo(np.float64).max


def exact_kendall(X, pairs=None):
    """Reference K from exact rational differences, rescaled before rounding.

    ``x_i - x_j`` is formed exactly (``Fraction``), divided by its largest
    coordinate (exactly), then rounded: nothing overflows or underflows except
    coordinates below 2**-1074 of the largest one, whose true contribution to a
    unit vector is itself below the float resolution.
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    if pairs is None:
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    rows = [[Fraction(float(value)) for value in row] for row in X]
    total = np.zeros((p, p))
    for i, j in pairs:
        difference = [a - b for a, b in zip(rows[i], rows[j])]
        largest = max(abs(d) for d in difference)
        if largest == 0:
            continue
        scaled = np.array([float(d / largest) for d in difference])
        unit = scaled / math.sqrt(math.fsum(scaled * scaled))
        total += np.outer(unit, unit)
    return total / len(pairs)


def _assert_close(actual, expected, tol=TOL):
    error = np.max(np.abs(actual - expected))
    assert error <= tol * max(1.0, np.max(np.abs(expected))), f"error {error:.2e}"


def _kernel_inputs():
    rng = np.random.default_rng(1)
    signs = rng.choice([-1.0, 1.0], size=(14, 3))
    return {
        "rows of size 1e300": rng.standard_normal((14, 3)) * 1e300,
        # x_i - x_j overflows: +-1.7e308 with mixed signs
        "near the largest float": signs * HUGE * rng.uniform(0.5, 1.0, (14, 3)),
        "largest float, exact ties": signs * HUGE,
        # differences are small multiples of the smallest normal float
        "differences down to the smallest normal": TINY * rng.integers(-3, 4, (14, 3)),
        "subnormal values": 5e-324 * rng.integers(-50, 51, (14, 3)),
        "1e300 next to 1e-300 columns": rng.standard_normal((14, 3))
        * [1e300, 1e-300, 1.0],
        "rows from 1e-300 to 1e300": rng.standard_normal((14, 3))
        * np.logspace(-300, 300, 14)[:, None],
        "near duplicates far out": 1e300 * (1 + 2.0**-50 * rng.integers(0, 4, (14, 3))),
        "one column": rng.standard_normal((14, 1)) * 1e300,
    }


KERNEL_INPUTS = _kernel_inputs()


@pytest.mark.parametrize("name", sorted(KERNEL_INPUTS))
def test_kernel_matches_exact_reference_without_overflow(name):
    X = KERNEL_INPUTS[name]
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise",
                                                divide="raise"):
        warnings.simplefilter("error", RuntimeWarning)
        K = spherical_kendall(X)
        design = _pair_design(len(X), 4, np.random.default_rng(3))
        K_design = spherical_kendall(X, pairs=4, random_state=3)
    assert np.all(np.isfinite(K)) and np.all(np.isfinite(K_design))
    _assert_close(K, exact_kendall(X))
    _assert_close(K_design, exact_kendall(X, design.pairs()))


def test_exact_reference_is_sharp():
    # Guards the reference: a naive float loop overflows on these rows.
    X = KERNEL_INPUTS["near the largest float"]
    with np.errstate(over="ignore", invalid="ignore"):
        naive = X[0] - X[1:]
    assert not np.all(np.isfinite(naive))
    assert abs(np.trace(exact_kendall(X)) - 1) < 1e-14


# --------------------------------------------------------------------- invariances

def _dyadic(rng, n, p, bits=20):
    """Normal values rounded to multiples of 2**-bits: translations by large dyadic
    numbers stay exact."""
    return np.round(rng.standard_normal((n, p)) * 2.0**bits) / 2.0**bits


@pytest.mark.parametrize("k", [-900, -600, -300, -40, -1, 1, 40, 300, 600, 900])
def test_kernel_invariant_under_powers_of_two(k):
    X = np.random.default_rng(4).standard_normal((50, 4)) * [3.0, 1.0, 0.5, 0.01]
    scaled = X * 2.0**k
    assert np.array_equal(scaled / 2.0**k, X)   # representable: the scaling is exact
    K = spherical_kendall(X)
    _assert_close(spherical_kendall(scaled), K)
    _assert_close(spherical_kendall(scaled, pairs=6, random_state=0),
                  spherical_kendall(X, pairs=6, random_state=0))


@pytest.mark.parametrize("offset", [1e6, -2.0**40, 2.0**44, 7.0])
def test_kernel_invariant_under_exact_translation(offset):
    X = _dyadic(np.random.default_rng(5), 50, 3, bits=8)
    shifted = X + offset * np.array([1.0, -1.0, 0.5])
    assert np.array_equal(shifted - offset * np.array([1.0, -1.0, 0.5]), X)
    _assert_close(spherical_kendall(shifted), spherical_kendall(X))


def test_kernel_invariant_under_inexact_translation():
    # x + c rounds each entry to ulp(c): K moves by about ulp(c) / spread.
    X = np.random.default_rng(6).standard_normal((50, 3))
    _assert_close(spherical_kendall(X + [123.456, -98.7, 3.3]), spherical_kendall(X))


def test_kernel_invariant_under_translation_and_scaling_to_extremes():
    X = _dyadic(np.random.default_rng(7), 40, 3)
    K = spherical_kendall(X)
    for k in (-900, 900):
        _assert_close(spherical_kendall((X + 2.0**30) * 2.0**k), K)


# --------------------------------------------------------------- release behaviour

def _data(seed=8, n=40):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 3)) * [3.0, 1.5, 0.5] + [10.0, -4.0, 2.0]


@pytest.mark.parametrize("k", [-900, -200, 7, 200, 490])
def test_directions_release_is_scale_invariant(k):
    # (within the data domain |x| <= 2**500, which every estimator shares)
    X = _data()
    base = DPKendallDirections(random_state=0).fit(X)
    scaled = DPKendallDirections(random_state=0).fit(X * 2.0**k)
    _assert_close(scaled.kendall_matrix_, base.kendall_matrix_)
    np.testing.assert_allclose(scaled.components_, base.components_, atol=1e-10)
    assert scaled.noise_scale_ == base.noise_scale_


def _assert_equivariant(scaled, base, factor):
    scale = max(np.max(np.abs(base)), 1e-300)
    np.testing.assert_allclose(scaled / factor, base, rtol=TOL, atol=TOL * scale)


SCREE_EQUIVARIANT = {
    "norm clip, public C": lambda f: {"scree_method": "clipped",
                                      "scree_params": {"clip": "norm", "C": 20.0 * f}},
    "component clip, public C": lambda f: {
        "scree_method": "clipped",
        "scree_params": {"clip": "component", "C": [30.0 * f, 5.0 * f, 1.0 * f]}},
    "norm clip, public C, pair design": lambda f: {
        "scree_method": "clipped", "scree_params": {"clip": "norm", "C": 20.0 * f, "pairs": 4}},
}


@pytest.mark.parametrize("name", sorted(SCREE_EQUIVARIANT))
@pytest.mark.parametrize("k", [-200, -13, 5, 150])
def test_scree_release_scale_equivariant_with_public_bounds(name, k):
    X = _data()
    factor = 4.0**k                       # variances are squares of the scale
    base = DPScree(random_state=0, **SCREE_EQUIVARIANT[name](1.0)).fit(X)
    scaled = DPScree(random_state=0, **SCREE_EQUIVARIANT[name](factor)).fit(X * 2.0**k)
    np.testing.assert_allclose(scaled.components_, base.components_, atol=1e-10)
    _assert_equivariant(scaled.explained_variance_raw_, base.explained_variance_raw_,
                        factor)
    _assert_equivariant(scaled.explained_variance_, base.explained_variance_, factor)
    _assert_equivariant(scaled.noise_scale_, base.noise_scale_, factor)
    np.testing.assert_allclose(scaled.explained_variance_ratio_,
                               base.explained_variance_ratio_, rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Every noisy cell:UserWarning")
@pytest.mark.parametrize("k", [-10, 10])
def test_dppca_variances_equivariant_score_frame_up_to_its_grid(k):
    X = _data(n=60)
    params = dict(n_components=2, random_state=0, bins=5)
    base = DPPCA(scree_params={"clip": "norm", "C": 20.0}, **params).fit(X)
    scaled = DPPCA(scree_params={"clip": "norm", "C": 20.0 * 4.0**k},
                   **params).fit(X * 2.0**k)
    _assert_close(scaled.kendall_matrix_, base.kendall_matrix_)
    _assert_equivariant(scaled.explained_variance_raw_, base.explained_variance_raw_,
                        4.0**k)
    # (the frame: test_score_frame_follows_the_unit)


@pytest.mark.parametrize("k", [-10, 10])
def test_score_frame_follows_the_unit(k):
    # With a budget that leaves the searches little slack, the frame of X * 2**k
    # is 2**k times the frame of X up to the grid and the searches' noise (the
    # grid shifts against the data, so the searches draw other noise).
    X = _data(n=5000)
    base = DPPCA(n_components=2, eps=20.0, random_state=0).fit(X)
    scaled = DPPCA(n_components=2, eps=20.0, random_state=0).fit(X * 2.0**k)
    ratio = scaled.frame_.half_width / base.frame_.half_width / 2.0**k
    assert ratio == pytest.approx(1, rel=0.05)
    np.testing.assert_allclose(scaled.frame_.center / 2.0**k, base.frame_.center,
                               atol=0.05 * base.frame_.radius)


def _on_scale_free_grid(value):
    steps = (math.log(value) - math.log(np.finfo(float).tiny)) / math.log(1.05)
    return abs(steps - round(steps)) < 1e-6 * steps


@pytest.mark.parametrize("k", [-20, 0, 20])
def test_auto_clip_bound_follows_the_unit_on_the_scale_free_grid(k):
    # C="auto": one private quantile on tiny * 1.05**i, whatever the unit
    # (a budget large enough that the searches' noise stays below 5%)
    X = _data(n=4000)
    params = dict(eps=20.0, scree_params={"clip": "norm"}, random_state=0)
    base = DPScree(**params).fit(X)
    scree = DPScree(**params).fit(X * 2.0**k)
    assert _on_scale_free_grid(scree.clip_bounds_[0])
    assert scree.clip_bounds_[0] / base.clip_bounds_[0] / 4.0**k == pytest.approx(1, rel=0.05)


@pytest.mark.parametrize("make", [
    lambda a: DPScree(accountant=a, random_state=0),
    lambda a: DPPCA(accountant=a, random_state=0),
    lambda a: DPKendallDirections(accountant=a, random_state=0),
    lambda a: DPKendallDirections(scale=True, accountant=a, random_state=0),
    lambda a: DPKendallDirections(compute_nonprivate=True, accountant=a, random_state=0),
], ids=["scree", "pca", "directions", "directions-scale", "directions-nonprivate"])
def test_every_estimator_refuses_values_beyond_the_domain(make):
    # one data contract for every estimator, checked in the first pass: nothing
    # is spent (DPKendallDirections(scale=True) once charged, overflowed and
    # released NaN spreads)
    accountant = PrivacyAccountant(10.0, 1e-3)
    for factor in (2.0**501 / 12.0, 1e300):
        with pytest.raises(ValueError, match=r"X has values beyond 2\*\*500 .* too large"):
            make(accountant).fit(_data(n=2000) * factor)
    assert accountant.charges == []


def test_variance_estimators_at_the_edge_of_their_domain():
    # 2**500 is accepted, and every number released is finite (no RuntimeWarning).
    # (rows enough for the plan to buy every part)
    X = _data(n=3000)
    X = X / np.max(np.abs(X)) * 2.0**500
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)    # Durfee searches hit their cap
        warnings.simplefilter("error", RuntimeWarning)
        for method in ("clipped", "huber", "pmwm"):
            scree = DPScree(scree_method=method, random_state=0).fit(X)
            assert scree.plan_.released.all()
            assert np.all(np.isfinite(scree.explained_variance_raw_))
            assert np.all(np.isfinite(scree.transform(X)))
        pca = DPPCA(random_state=0, compute_nonprivate=True, eps=4.0).fit(X)
        assert pca.plan_.released.all()
        assert np.all(np.isfinite(pca.explained_variance_))
        assert np.all(np.isfinite(pca.synthetic_scores_))
        assert np.all(np.isfinite(pca.transform(X)))


def test_whitening_tiny_variance_overflow_is_a_clear_error():
    # transform is not a release: a projection that overflows raises, naming X.
    # Two components of 4000 rows: their variances (~2e-300 and more) lie about 5
    # noise sds (4e-301) above 0 under a public bound above the data's scale (one
    # below it would clip every pair, and such a release is not estimable), so
    # whitening divides by tiny positive numbers.
    X = _data(n=4000)
    scree = DPScree(n_components=2, whiten=True,
                    scree_params={"clip": "norm", "C": 1e-298},
                    random_state=0).fit(X * 1e-150)
    assert np.all(scree.explained_variance_ > 0)
    with pytest.raises(ValueError, match="X is too large to project"):
        scree.transform(X * 1e160)
