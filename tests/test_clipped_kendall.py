"""Tests of the clipped Kendall matrix (``radial="clipped"``, issue 15).

The released matrix is ``M = mean over pairs of d d^T / max(||d||^2, c^2)``
(:func:`~sklearn_dppca._kendall._pair_scatter` with ``floor = c^2``) plus symmetric
Gaussian noise. Each term is ``a a^T`` with ``a = d / max(||d||, c)``, ``||a|| <= 1``,
and ``||a a^T - b b^T||_F^2 = ||a||^4 + ||b||^4 - 2 (a . b)^2 <= 2``: one changed row
moves ``M`` by at most ``2 sqrt(2) / n`` in Frobenius norm, for all pairs and for
every ``m``-partner design. These tests check that claim on neighbours that attain
it, at the kernel and at the estimator; the two limits of ``c``; the estimators'
``radius_``, ledgers and parameter checks; and the ``"matrix"`` scree, which reads
the variances ``(c^2 / 2) v^T M v`` and the total ``(c^2 / 2) trace M`` off ``M``.
"""

import math

import numpy as np
import pytest
from scipy.stats import chi2
from sklearn.frozen import FrozenEstimator
from ._kendall_support import adversarial_neighbours

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree
from sklearn_dppca._kendall import _pair_design, spherical_kendall

from ._kendall_support import pair_scatter as _pair_scatter
from sklearn_dppca.privacy import PrivacyAccountant

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DESIGNS = ["all", 5, 8, 64]      # 5 is odd: the antipodal partner, n must be even


def bound(n):
    """The claimed Frobenius sensitivity, ``2 sqrt(2) / n``."""
    return 2 * math.sqrt(2) / n


def kernel_gap(X, X_prime, radius, pairs, seed=11):
    """``||M(X) - M(X')||_F`` of the pre-noise clipped matrices, same design."""
    return np.linalg.norm(
        _pair_scatter(X, floor=radius**2, pairs=pairs, random_state=seed)
        - _pair_scatter(X_prime, floor=radius**2, pairs=pairs, random_state=seed))


def direct_clipped_covariance(X, radius, pairs=None):
    """Independent slow reference: mean over pairs of the pair difference clipped in
    norm at ``radius``, ``e e^T / 2`` with ``e = d min(1, radius / ||d||)``."""
    X = np.asarray(X, dtype=np.float64)
    if pairs is None:
        pairs = np.array([(i, j) for i in range(len(X)) for j in range(i + 1, len(X))])
    d = X[pairs[:, 0]] - X[pairs[:, 1]]
    norms = np.linalg.norm(d, axis=1)
    e = d * np.minimum(1.0, radius / np.where(norms > 0, norms, 1.0))[:, None]
    return e.T @ e / (2 * len(pairs))


def steps(fitted):
    return [entry["step"] for entry in fitted.privacy_ledger_]


def entry(fitted, step):
    (found,) = [e for e in fitted.privacy_ledger_ if e["step"] == step]
    return found


def t_data(n, seed=1, shift=0.0):
    rng = np.random.default_rng(seed)
    return rng.standard_t(3, size=(n, 3)) * [3.0, 1.0, 0.5] + shift


# ------------------------------------------------------------------- sensitivity
def test_term_difference_identity_and_bound():
    # ||aa^T - bb^T||_F^2 = ||a||^4 + ||b||^4 - 2 (a.b)^2 <= 2 for ||a||, ||b|| <= 1,
    # with equality for orthogonal unit vectors only.
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 2000, 4))
    a *= rng.uniform(0, 1, (2000, 1)) / np.linalg.norm(a, axis=1, keepdims=True)
    b *= rng.uniform(0, 1, (2000, 1)) / np.linalg.norm(b, axis=1, keepdims=True)
    outer = np.einsum("ti,tj->tij", a, a) - np.einsum("ti,tj->tij", b, b)
    squared = np.sum(outer**2, axis=(1, 2))
    identity = (np.sum(a**2, 1) ** 2 + np.sum(b**2, 1) ** 2
                - 2 * np.einsum("ti,ti->t", a, b) ** 2)
    np.testing.assert_allclose(squared, identity, atol=1e-14)
    assert squared.max() <= 2
    e1, e2 = np.eye(4)[:2]
    assert np.linalg.norm(np.outer(e1, e1) - np.outer(e2, e2)) == pytest.approx(
        math.sqrt(2))


@pytest.mark.parametrize("pairs", DESIGNS)
@pytest.mark.parametrize("radius", [1.0, 1e3])
def test_sensitivity_attained_onadversarial_neighbours(pairs, radius):
    # n - 1 rows within 1e-6 of 0, the last at 1e6 e1 against 1e6 e2: its n - 1
    # (or m) terms are clipped to e1 e1^T against e2 e2^T, sqrt(2) apart each.
    X, X_prime = adversarial_neighbours(seed=37)
    n = X.shape[0]
    gap = kernel_gap(X, X_prime, radius, pairs)
    assert 2.8 / n < gap <= bound(n) + 1e-12


@pytest.mark.parametrize("pairs", DESIGNS)
def test_sensitivity_at_the_estimator(pairs):
    # A public radius: the generator draws the design (pairs=m), then the noise;
    # with the same seed the noise cancels between neighbours and the released
    # matrices differ by the kernel gap, up to the rounding to the release's grid
    # (half a step on each side).
    X, X_prime = adversarial_neighbours(seed=37)
    n, seed, radius = X.shape[0], 11, 1.0
    gap = (_pair_scatter(X, floor=radius**2, pairs=pairs, random_state=seed)
           - _pair_scatter(X_prime, floor=radius**2, pairs=pairs, random_state=seed))
    assert 2.8 / n < np.linalg.norm(gap) <= bound(n) + 1e-12
    fitted = [DPKendallDirections(radial="clipped", radius=radius, pairs=pairs, eps=1.0,
                                  random_state=seed).fit(data) for data in (X, X_prime)]
    released = fitted[0].kendall_matrix_ - fitted[1].kendall_matrix_
    grid = entry(fitted[0], "loading")["grid"]
    assert grid == entry(fitted[1], "loading")["grid"]
    assert np.max(np.abs(released - gap)) <= grid
    assert np.linalg.norm(released) <= bound(n) + np.sqrt(6) * grid
    for f in fitted:
        assert f.radius_ == radius
        assert steps(f) == ["loading", "gaussian block"]
        assert entry(f, "loading")["sensitivity"] == pytest.approx(bound(n), rel=1e-12)
        assert entry(f, "loading")["sensitivity_norm"] == "Frobenius"


@pytest.mark.parametrize("pairs", DESIGNS)
def test_radius_inside_the_cloud_obeys_the_bound(pairs):
    # A radius at the median pair distance of a spread cloud: about half of the
    # terms are d d^T / c^2 with ||d|| < c, the rest unit directions.
    rng = np.random.default_rng(3)
    n = 120
    cloud = rng.standard_normal((n, 3)) * [2.0, 1.0, 0.5]
    distances = np.linalg.norm(cloud[:, None] - cloud[None], axis=-1)
    radius = float(np.median(distances[np.triu_indices(n, 1)]))
    share_below = np.mean(distances[np.triu_indices(n, 1)] < radius)
    assert 0.4 < share_below < 0.6
    # the far outlier moved from e1 to e2 still nearly attains the bound
    X, X_prime = cloud.copy(), cloud.copy()
    X[-1], X_prime[-1] = 1e6 * np.eye(3)[0], 1e6 * np.eye(3)[1]
    assert 2.8 / n < kernel_gap(X, X_prime, radius, pairs) <= bound(n) + 1e-12
    # any changed row, inside the cloud, at its edge or far out, stays below it
    worst = 0.0
    for trial in range(40):
        X_prime = cloud.copy()
        i = rng.integers(n)
        X_prime[i] = rng.standard_normal(3) * rng.choice([0.1, 1.0, 3.0, 1e3])
        gap = kernel_gap(cloud, X_prime, radius, pairs, seed=trial)
        assert gap <= bound(n) + 1e-12
        worst = max(worst, gap)
    assert worst > 0.5 * bound(n)


@pytest.mark.parametrize("pairs", ["all", 5])
@pytest.mark.parametrize("ratio", [1.0, 0.5, 0.25])
def test_terms_below_the_radius_move_by_their_squared_norm(pairs, ratio):
    # The changed row at distance r <= c from a tight cluster at 0, moved from r e1
    # to r e2: each of its terms has ||a|| = r / c, and moves by sqrt(2) (r / c)^2.
    # At r = c the bound is attained, below it the gap shrinks as (r / c)^2.
    n, radius = 200, 2.0
    X = 1e-9 * np.random.default_rng(4).standard_normal((n, 3))
    X_prime = X.copy()
    X[-1], X_prime[-1] = ratio * radius * np.eye(3)[0], ratio * radius * np.eye(3)[1]
    gap = kernel_gap(X, X_prime, radius, pairs)
    assert gap <= bound(n) + 1e-12
    assert gap == pytest.approx(ratio**2 * bound(n), rel=1e-6)


# ------------------------------------------------------------------------ limits
def test_large_radius_gives_the_covariance():
    # Above every distance each weight is 1 / c^2: (c^2 / 2) M is the mean of
    # d d^T / 2 over all pairs, which is the covariance with ddof = 1.
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 4)) * [3.0, 1.0, 0.5, 0.1] + 7.0
    covariance = np.cov(X, rowvar=False)
    largest = np.max(np.linalg.norm(X[:, None] - X[None], axis=-1))
    for radius in (largest, 10 * largest, 1e3 * largest, 1e100):
        clipped = radius**2 / 2 * _pair_scatter(X, floor=radius**2)
        np.testing.assert_allclose(clipped, covariance, rtol=0,
                                   atol=1e-12 * np.max(np.abs(covariance)))
    # a design's pairs: the same mean over its pairs only
    design = _pair_design(300, 8, np.random.default_rng(0))
    np.testing.assert_allclose(
        largest**2 / 2 * _pair_scatter(X, floor=largest**2, pairs=8, random_state=0),
        direct_clipped_covariance(X, largest, design.pairs()), rtol=0,
        atol=1e-12 * np.max(np.abs(covariance)))


@pytest.mark.parametrize("pairs", ["all", 8])
def test_tiny_radius_gives_spherical_kendall(pairs):
    X = np.random.default_rng(6).standard_normal((300, 4)) * [3.0, 1.0, 0.5, 0.1]
    smallest = np.min(np.linalg.norm(X[:, None] - X[None], axis=-1)[np.triu_indices(300, 1)])
    for radius in (smallest, 1e-3 * smallest, 1e-150):
        np.testing.assert_allclose(
            _pair_scatter(X, floor=radius**2, pairs=pairs, random_state=2),
            spherical_kendall(X, pairs=pairs, random_state=2), rtol=0, atol=1e-15)
    # and the estimators agree: same design, same noise, same budget leaf
    tiny = 1e-3 * smallest
    clipped = DPKendallDirections(radial="clipped", radius=tiny, pairs=pairs,
                                  random_state=3).fit(X)
    spherical = DPKendallDirections(pairs=pairs, random_state=3).fit(X)
    np.testing.assert_allclose(clipped.kendall_matrix_, spherical.kendall_matrix_,
                               rtol=0, atol=1e-14)
    assert clipped.noise_scale_ == spherical.noise_scale_
    assert spherical.radius_ is None


def test_clipped_matrix_matches_the_independent_reference():
    X = t_data(150, seed=7)
    for radius in (0.5, 3.0, 30.0):
        np.testing.assert_allclose(radius**2 / 2 * _pair_scatter(X, floor=radius**2),
                                   direct_clipped_covariance(X, radius), rtol=1e-12,
                                   atol=1e-13)


# --------------------------------------------------------------------- estimator
def test_private_radius_is_released_and_accounted():
    X = t_data(2000)
    eps, delta = 1.0, 1e-5
    fitted = DPKendallDirections(radial="clipped", eps=eps, delta=delta,
                                 random_state=0).fit(X)
    assert steps(fitted) == ["loading/radius", "loading/statistic", "gaussian block"]
    radius_entry = entry(fitted, "loading/radius")
    # radius_level="auto": clip(1 - 22 / sqrt(n eps), 0.5, 0.99) = 1 - 22 / sqrt(2000)
    assert radius_entry["delta"] == 0
    assert radius_entry["level"] == pytest.approx(1 - 22 / math.sqrt(2000))
    assert radius_entry["eps"] == pytest.approx(0.2 * eps)        # RADIUS_SHARE
    statistic = entry(fitted, "loading/statistic")
    assert statistic["sensitivity"] == pytest.approx(bound(2000))
    assert fitted.noise_scale_ == statistic["noise_scale"]
    assert entry(fitted, "gaussian block")["composes"] == ["loading/statistic"]
    assert fitted.privacy_spent_ == pytest.approx((eps, delta), rel=1e-6)
    # the radius is a median distance of random pairs, on a 5% grid
    distances = np.linalg.norm(X[:1000] - X[1000:], axis=1)
    assert np.quantile(distances, 0.4) < fitted.radius_ < np.quantile(distances, 0.6)
    # a higher level, a larger radius (and the level is on the ledger)
    high = DPKendallDirections(radial="clipped", radius_level=0.9, random_state=0).fit(X)
    assert entry(high, "loading/radius")["level"] == 0.9
    assert high.radius_ > 1.5 * fitted.radius_


def test_public_radius_spends_nothing_on_a_search():
    X = t_data(600)
    clipped = DPKendallDirections(radial="clipped", radius=2.5, random_state=4).fit(X)
    spherical = DPKendallDirections(random_state=4).fit(X)
    assert clipped.radius_ == 2.5 and isinstance(clipped.radius_, float)
    assert steps(clipped) == ["loading", "gaussian block"]
    # the whole directions budget on the matrix: the spherical fit's noise
    assert clipped.noise_scale_ == spherical.noise_scale_
    assert clipped.privacy_spent_ == spherical.privacy_spent_
    # and no draw before the noise: the same noise matrix as the spherical fit
    noise_clipped = clipped.kendall_matrix_ - _pair_scatter(X, floor=2.5**2)
    noise_spherical = spherical.kendall_matrix_ - spherical_kendall(X)
    # (each up to half a step of the release's grid from the drawn noise)
    grid = entry(clipped, "loading")["grid"]
    assert grid == entry(spherical, "loading")["grid"]
    np.testing.assert_allclose(noise_clipped, noise_spherical, rtol=0, atol=grid)


@pytest.mark.parametrize("pairs", ["all", 8])
@pytest.mark.parametrize("radius", ["auto", 2.0])
def test_translation_invariance(pairs, radius):
    X = t_data(1000, seed=8)
    fits = [DPKendallDirections(radial="clipped", radius=radius, pairs=pairs,
                                random_state=5).fit(data) for data in (X, X + 1e6)]
    # ulp(1e6) ~ 1.2e-10: the differences, and so the terms, agree to ~1e-10
    assert fits[1].radius_ == pytest.approx(fits[0].radius_, rel=1e-12)
    np.testing.assert_allclose(fits[1].kendall_matrix_, fits[0].kendall_matrix_,
                               rtol=0, atol=1e-9)


ESTIMATORS = [DPKendallDirections, DPScree, DPPCA]
# wrong type: TypeError; right type, wrong value: ValueError (both name the parameter)
BAD = [
    ({"radial": "elliptical"}, "radial", ValueError), ({"radial": None}, "radial", TypeError),
    ({"radial": "Clipped"}, "radial", ValueError),
    ({"radius": 0.0}, "^radius must", ValueError), ({"radius": -1.0}, "^radius must", ValueError),
    ({"radius": np.nan}, "^radius must", ValueError),
    ({"radius": np.inf}, "^radius must", ValueError),
    ({"radius": "median"}, "^radius must", ValueError),
    ({"radius": True}, "^radius must", TypeError),
    ({"radius": None}, "^radius must", TypeError),
    ({"radius": [1.0]}, "^radius must", TypeError),
    ({"radius_level": 0.0}, "radius_level", ValueError),
    ({"radius_level": 1.0}, "radius_level", ValueError),
    ({"radius_level": 1.5}, "radius_level", ValueError),
    ({"radius_level": np.nan}, "radius_level", ValueError),
    ({"radius_level": True}, "radius_level", TypeError),
    ({"radius_level": "0.5"}, "radius_level", ValueError),
]


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("params, name, error", BAD)
def test_bad_radial_parameters(estimator, params, name, error):
    X = t_data(100)
    accountant = PrivacyAccountant(10.0, 1e-3)
    params = {"radial": "clipped", **params}
    with pytest.raises(error, match=name):
        estimator(accountant=accountant, **params).fit(X)
    assert accountant.charges == []       # raised before anything was spent


def test_valid_radius_types():
    X = t_data(100)
    reference = DPKendallDirections(radial="clipped", radius=2.0, random_state=0).fit(X)
    for radius in (np.float64(2.0), np.int64(2), 2):
        fitted = DPKendallDirections(radial="clipped", radius=radius, random_state=0).fit(X)
        assert fitted.radius_ == 2.0
        np.testing.assert_array_equal(fitted.kendall_matrix_, reference.kendall_matrix_)


# ------------------------------------------------------------- the "matrix" scree
def test_matrix_scree_needs_clipped_directions():
    X = t_data(200)
    spherical = DPKendallDirections(random_state=0).fit(X)
    for make in (lambda a: DPScree(scree_method="matrix", accountant=a),
                 lambda a: DPScree(scree_method="matrix", directions=np.eye(3), accountant=a),
                 lambda a: DPScree(scree_method="matrix", directions=FrozenEstimator(spherical), eps=2.0,
                                   delta=2e-5, accountant=a),
                 lambda a: DPPCA(scree_method="matrix", accountant=a)):
        accountant = PrivacyAccountant(10.0, 1e-3)
        with pytest.raises(ValueError, match="clipped"):
            make(accountant).fit(X)
        assert accountant.charges == []


def test_matrix_scree_spends_nothing_beyond_the_directions(monkeypatch):
    X = t_data(2000)
    trees = []
    original = DPScree._bought

    def spy(self, parts, *args, **kwargs):
        trees.append(parts)
        return original(self, parts, *args, **kwargs)

    monkeypatch.setattr(DPScree, "_bought", spy)
    scree = DPScree(scree_method="matrix", radial="clipped", eps=1.0, random_state=0).fit(X)
    (tree,) = trees
    assert list(tree) == ["loading"] and tree["loading"][0] == 1.0
    assert steps(scree) == ["loading/radius", "loading/statistic", "gaussian block"]
    assert scree.privacy_spent_ == pytest.approx((1.0, 1e-5), rel=1e-6)
    # the same release as the directions alone with the same budget and seed
    directions = DPKendallDirections(radial="clipped", eps=1.0, random_state=0).fit(X)
    assert scree.radius_ == directions.radius_
    np.testing.assert_array_equal(scree.kendall_matrix_, directions.kendall_matrix_)
    half_square = scree.radius_**2 / 2
    eigenvalues = np.linalg.eigvalsh(scree.kendall_matrix_)[::-1]
    np.testing.assert_allclose(scree.explained_variance_raw_, half_square * eigenvalues,
                               rtol=1e-12)
    np.testing.assert_allclose(scree.noise_scale_, half_square * scree.kendall_noise_scale_)

    # reused clipped directions: nothing spent beyond their ledger
    trees.clear()
    reused = DPScree(scree_method="matrix", directions=FrozenEstimator(directions),
                     eps=2.0, delta=2e-5,
                     n_components=2, random_state=1).fit(X)
    assert trees == [{}]
    assert steps(reused) == ["directions/" + s for s in steps(directions)]
    assert reused.privacy_spent_ == pytest.approx(directions.privacy_spent_)
    V = directions.components_[:2]
    np.testing.assert_allclose(
        reused.explained_variance_raw_,
        half_square * np.diag(V @ directions.kendall_matrix_ @ V.T), rtol=1e-12)


def test_dppca_clipped_matrix_scree():
    X = t_data(3000, seed=9) + 100.0
    eps, delta = 2.0, 1e-5
    pca = DPPCA(n_components=2, radial="clipped", scree_method="matrix", eps=eps,
                delta=delta, random_state=0).fit(X)
    names = steps(pca)
    assert names[:2] == ["loading/radius", "loading/statistic"]
    assert names[-1] == "gaussian block"
    assert len(names) > 3 and all(s.startswith("score/") for s in names[2:-1])
    assert not any(s.startswith("scree") for s in names)
    assert set(pca.budget_) == {"loading", "score"}
    assert pca.budget_["loading"][0] + pca.budget_["score"][0] == pytest.approx(eps)
    assert pca.privacy_spent_[0] <= eps * (1 + 1e-9)
    # variances and total read off the released matrix: an independent computation
    K, radius = pca.kendall_matrix_, pca.radius_
    top = np.linalg.eigh(K)
    order = np.argsort(top[0])[::-1][:2]
    np.testing.assert_allclose(pca.explained_variance_raw_,
                               radius**2 / 2 * top[0][order], rtol=1e-10)
    for l in range(2):
        v = pca.components_[l]
        assert pca.explained_variance_raw_[l] == pytest.approx(radius**2 / 2 * v @ K @ v,
                                                               rel=1e-12)
    assert pca.total_variance_ == pytest.approx(radius**2 / 2 * np.trace(K), rel=1e-12)
    s = pca.kendall_noise_scale_
    np.testing.assert_allclose(pca.noise_scale_, radius**2 / 2 * s)
    assert pca.total_variance_noise_scale_ == pytest.approx(radius**2 / 2 * s * math.sqrt(3))


def test_matrix_scree_without_noise_is_the_clipped_covariance():
    # Nearly noiseless (huge eps), public radius: the variances are the clipped
    # pair covariance of the direct loop along the released components, up to
    # the noise (whose sd falls only as 1 / sqrt(eps) at large eps: 1e-7 here).
    X = t_data(400, seed=10)
    radius = 2.0
    scree = DPScree(scree_method="matrix", radial="clipped", radius=radius, eps=1e9,
                    delta=1e-3, random_state=0).fit(X)
    reference = direct_clipped_covariance(X, radius)
    V = scree.components_
    assert np.all(scree.noise_scale_ < 1e-6)
    np.testing.assert_allclose(scree.explained_variance_raw_,
                               np.diag(V @ reference @ V.T), rtol=0,
                               atol=6 * scree.noise_scale_[0])
    assert scree.total_variance_ == pytest.approx(
        np.trace(reference), abs=6 * scree.total_variance_noise_scale_)
    # ... whose directions are those of the clipped covariance
    eigenvectors = np.linalg.eigh(reference)[1][:, ::-1]
    np.testing.assert_allclose(np.abs(V @ eigenvectors), np.eye(3), atol=1e-4)


def test_matrix_scree_noise_matches_noise_scale():
    # Fixed data and public radius, 40 seeds. The raw variances are (c^2 / 2) times
    # the eigenvalues of K + E; to first order in E their errors are v_l^T E v_l,
    # Gaussian with sd noise_scale_ (diagonal sd s, off-diagonal s / sqrt(2):
    # Var(v^T E v) = s^2 (sum_j v_j^2)^2 = s^2) and independent across l
    # (Cov = s^2 (v_l . v_k)^2 = 0). The eigengaps of K are over 20 s (asserted),
    # so the second-order terms (of relative size s / gap) change the sd by well
    # under 1%. The sum of squared deviations from each component's mean over
    # noise_scale_^2 is then chi2 with 3 * 39 = 117 degrees of freedom; the central
    # 99.98% of that law, [68, 183], puts the sd within 0.76 and 1.25 of
    # noise_scale_ (a correct noise fails with probability 2e-4 over the choice of
    # seeds): a noise sd off by sqrt(2) (a Frobenius/diagonal mix-up) or by the
    # c^2 / 2 factor falls outside. The total variance is the trace, with sd
    # s sqrt(p), checked the same way with 39 degrees of freedom ([0.61, 1.44]).
    X = t_data(1000, seed=12)
    radius = 3.0
    fits = [DPScree(scree_method="matrix", radial="clipped", radius=radius, eps=4.0,
                    monotone=False, random_state=seed).fit(X) for seed in range(40)]
    scale = fits[0].noise_scale_[0]
    assert all(np.all(f.noise_scale_ == scale) for f in fits)
    assert scale == pytest.approx(radius**2 / 2 * fits[0].kendall_noise_scale_)
    raw = np.array([f.explained_variance_raw_ for f in fits])
    eigengaps = -np.diff(raw.mean(axis=0)) * 2 / radius**2
    assert np.min(eigengaps) > 20 * fits[0].kendall_noise_scale_
    statistic = np.sum((raw - raw.mean(axis=0)) ** 2) / scale**2
    assert chi2.ppf(1e-4, 117) < statistic < chi2.ppf(1 - 1e-4, 117)
    totals = np.array([f.total_variance_ for f in fits])
    total_scale = fits[0].total_variance_noise_scale_
    assert total_scale == pytest.approx(scale * math.sqrt(3))
    statistic = np.sum((totals - totals.mean()) ** 2) / total_scale**2
    assert chi2.ppf(1e-4, 39) < statistic < chi2.ppf(1 - 1e-4, 39)
