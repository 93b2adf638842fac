"""Eigenvalues from the Kendall matrix under an elliptical model (method="kendall")."""

import warnings

import numpy as np
import pytest
from scipy.integrate import quad_vec
from sklearn.frozen import FrozenEstimator

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, spherical_kendall
from sklearn_dppca._algorithms._kendall_spectrum import _eigenvalue_ratios, _kendall_eigenvalues

SPECTRUM = np.array([6.0, 3.0, 1.0, 0.5])


def _adaptive_reference(ratios):
    """The defining integral by adaptive quadrature (slow, independent of the rule)."""
    ratios = np.asarray(ratios, dtype=float) / np.sum(ratios)

    def integrand(t):
        grown = 1.0 + 2.0 * ratios * t
        return ratios / grown * np.prod(grown ** -0.5)

    return quad_vec(integrand, 0.0, np.inf, epsrel=1e-12)[0]


def _gaussian(n, seed, spectrum=SPECTRUM, shift=0.0):
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.standard_normal((spectrum.size, spectrum.size)))
    return rng.standard_normal((n, spectrum.size)) * np.sqrt(spectrum) @ rotation.T + shift


@pytest.mark.parametrize("seed", range(6))
def test_map_agrees_with_adaptive_quadrature(seed):
    rng = np.random.default_rng(seed)
    p = [2, 3, 5, 10, 30, 64][seed]
    # spread over four decades, and floored as the estimator floors them
    ratios = np.maximum(np.exp(rng.uniform(-np.log(1e4), 0.0, p)), 1e-6)
    np.testing.assert_allclose(_kendall_eigenvalues(ratios), _adaptive_reference(ratios),
                               rtol=1e-7)


def test_map_agrees_with_monte_carlo_spatial_signs():
    # E[lambda_j z_j^2 / sum_l lambda_l z_l^2] by simulation: 4e5 draws, a few
    # standard errors of 1e-3 at most
    z = np.random.default_rng(0).standard_normal((400_000, SPECTRUM.size))
    weighted = SPECTRUM * z**2
    simulated = np.mean(weighted / weighted.sum(axis=1, keepdims=True), axis=0)
    np.testing.assert_allclose(_kendall_eigenvalues(SPECTRUM), simulated, atol=3e-3)
    assert _kendall_eigenvalues(SPECTRUM).sum() == pytest.approx(1.0, abs=1e-8)


def test_inversion_round_trip_and_scale_freedom():
    ratios = SPECTRUM / SPECTRUM.sum()
    np.testing.assert_allclose(_eigenvalue_ratios(_kendall_eigenvalues(ratios)), ratios,
                               rtol=1e-7)
    np.testing.assert_allclose(_kendall_eigenvalues(7.0 * SPECTRUM),
                               _kendall_eigenvalues(SPECTRUM), rtol=1e-12)
    # a noise-only (negative) eigenvalue is floored, not an error
    assert np.all(_eigenvalue_ratios([0.6, 0.3, 0.11, -0.01]) > 0)


def test_sample_kendall_matrix_gives_the_covariance_ratios():
    X = _gaussian(6000, 1)
    ratios = _eigenvalue_ratios(np.linalg.eigvalsh(spherical_kendall(X))[::-1])
    sample = np.linalg.eigvalsh(np.cov(X.T))[::-1]
    np.testing.assert_allclose(ratios, sample / sample.sum(), rtol=0.06)


def _fits(make, X, seeds):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return [make(seed).fit(X) for seed in seeds]


def test_kendall_scree_spends_the_scree_on_the_total_only():
    X = _gaussian(1500, 2, shift=40.0)
    (scree,) = _fits(lambda s: DPScree(scree_method="kendall", random_state=s), X, [0])
    steps = [entry["step"] for entry in scree.privacy_ledger_]
    assert steps == ["loading", "scree/total variance/clip bound",
                     "scree/total variance/statistic", "gaussian block"]
    assert scree.clip_bounds_ is None and np.all(scree.noise_scale_ > 0)
    # the released Kendall matrix is kept, and the variances follow from it
    ratios = _eigenvalue_ratios(np.linalg.eigvalsh(scree.kendall_matrix_)[::-1])
    np.testing.assert_allclose(scree.explained_variance_raw_,
                               scree.total_variance_ * ratios, rtol=1e-6)


def test_kendall_scree_reuses_a_fitted_kendall_matrix_and_refuses_arrays():
    X = _gaussian(800, 3)
    directions = DPKendallDirections(eps=0.5, random_state=0).fit(X)
    scree = DPScree(eps=1.0, delta=2e-5, scree_method="kendall",
                    directions=FrozenEstimator(directions),
                    random_state=1).fit(X)
    np.testing.assert_array_equal(scree.kendall_matrix_, directions.kendall_matrix_)
    assert scree.kendall_noise_scale_ == directions.noise_scale_
    with pytest.raises(ValueError, match="Kendall matrix"):
        DPScree(scree_method="kendall", directions=np.eye(4), random_state=0).fit(X)


def test_kendall_noise_sd_matches_the_spread_over_seeds():
    # Fixed data, 40 fits: the bootstrap sd of each variance against the sd of the
    # released variances over the seeds (the sd of a sd from 40 draws is ~11%).
    X = _gaussian(1000, 4)
    fits = _fits(lambda s: DPPCA(n_components=3, eps=2.0, scree_method="kendall",
                                 budget_split={"loading": 0.5, "scree": 0.5},
                                 random_state=s), X, range(40))
    spread = np.std([f.explained_variance_raw_ for f in fits], axis=0, ddof=1)
    reported = np.median([f.noise_scale_ for f in fits], axis=0)
    np.testing.assert_allclose(reported / spread, 1.0, atol=0.35)


def test_kendall_scree_beats_clipping_on_gaussian_data():
    X = _gaussian(3000, 5, shift=100.0)
    truth = np.linalg.eigvalsh(np.cov(X.T))[::-1][:3]

    def worst(method, params=None):
        fits = _fits(lambda s: DPScree(n_components=3, scree_method=method, random_state=s,
                                       scree_params=params), X, range(8))
        # (a variance not estimable, NaN, counts as an error of 1)
        return np.median([np.max(np.nan_to_num(np.abs(f.explained_variance_ / truth - 1),
                                               nan=1.0)) for f in fits])

    # (the clipped release alone: by default it is combined with these variances)
    clipped = worst("clipped", {"elliptical": "off"})
    assert worst("kendall") < clipped
    # and the combination keeps most of the model's gain
    assert worst("clipped") < clipped


def test_component_scales_are_the_standard_deviation_ratios():
    from sklearn_dppca._algorithms._kendall_spectrum import component_scales

    X = _gaussian(6000, 2)
    matrix = spherical_kendall(X)
    scales = component_scales(matrix, 1e-6, 3)
    np.testing.assert_allclose(scales, np.sqrt(SPECTRUM[:3] / SPECTRUM[2]), rtol=0.08)
    assert scales[-1] == 1.0
    # a clipped matrix (a radius) is read directly: its eigenvalues' ratios
    diagonal = np.diag([0.5, 0.2, 0.05, 0.01])
    np.testing.assert_allclose(component_scales(diagonal, 1e-6, 3, radius=2.0),
                               np.sqrt([10.0, 4.0, 1.0]))
    # eigenvalues below the noise's operator norm are floored at it: a noise-only
    # trailing direction gets no tiny scale (which would blow up the bound)
    floored = component_scales(diagonal, 0.1 / np.sqrt(8), 3, radius=2.0)
    np.testing.assert_allclose(floored, np.sqrt([5.0, 2.0, 1.0]))


def test_bias_correction_does_not_carry_the_totals_redrawn_noise():
    # the correction moves the ratios by the bootstrap's bias estimate; the
    # total's redrawn noise has no bias, so however large it is the corrected
    # variances are the same (only their sds grow)
    from sklearn_dppca._algorithms._kendall_spectrum import elliptical_variances

    matrix = spherical_kendall(np.random.default_rng(0).normal(size=(2000, 5))
                               * np.sqrt([10.0, 5.0, 1.0, 1.0, 1.0]))
    quiet, quiet_sd = elliptical_variances(matrix, 0.01, 18.0, 0.0, 3,
                                           np.random.default_rng(1), correct_bias=True)
    loud, loud_sd = elliptical_variances(matrix, 0.01, 18.0, 50.0, 3,
                                         np.random.default_rng(1), correct_bias=True)
    np.testing.assert_allclose(loud, quiet, rtol=1e-12)
    assert np.all(loud_sd > 10 * quiet_sd)
    # and the correction lowers the top of the flat tail, which noise lifts
    plain, _ = elliptical_variances(matrix, 0.01, 18.0, 0.0, 3,
                                    np.random.default_rng(1))
    assert quiet[2] < plain[2]
