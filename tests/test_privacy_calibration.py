"""Noise calibration: the classical formula, the analytic Gaussian profile, validation."""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

from sklearn_dppca.privacy import (
    check_delta,
    check_eps,
    gaussian_delta,
    gaussian_noise_scale,
    laplace_noise_scale,
)


def gaussian_profile(noise_scale, sensitivity, eps):
    """Balle & Wang (2018, Thm 8), evaluated directly (an independent reference)."""
    ratio = sensitivity / noise_scale
    return (norm.cdf(ratio / 2 - eps / ratio)
            - math.exp(eps) * norm.cdf(-ratio / 2 - eps / ratio))


PARAMS = [
    (1.0, 1.0, 1e-5),
    (4 / 50, 0.5, 1e-3),
    (math.sqrt(2), 0.1, 1e-6),
    (0.3, 2.5, 1e-8),
    (2.0, 0.01, 0.05),
]


@pytest.mark.parametrize("sensitivity, eps, delta", PARAMS)
def test_classical_formula(sensitivity, eps, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        scale = gaussian_noise_scale(sensitivity, eps, delta, method="classical")
    expected = sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert scale == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("sensitivity, eps, delta", PARAMS)
def test_analytic_scale_meets_profile_and_is_tight(sensitivity, eps, delta):
    scale = gaussian_noise_scale(sensitivity, eps, delta)
    # Holds at the returned scale (up to the round-off of the direct formula) ...
    assert gaussian_profile(scale, sensitivity, eps) <= delta * (1 + 1e-9)
    # ... and fails just below it: the scale is the smallest that works.
    assert gaussian_profile(scale * (1 - 1e-6), sensitivity, eps) > delta


@pytest.mark.parametrize("sensitivity, eps, delta", PARAMS)
def test_gaussian_delta_matches_direct_profile(sensitivity, eps, delta):
    scale = 0.7 * sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert gaussian_delta(scale, sensitivity, eps) == pytest.approx(
        gaussian_profile(scale, sensitivity, eps), rel=1e-9)


@pytest.mark.parametrize("eps", np.linspace(0.02, 0.98, 13))
@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-9])
def test_analytic_never_noisier_than_classical_below_one(eps, delta):
    analytic = gaussian_noise_scale(1.0, eps, delta)
    classical = gaussian_noise_scale(1.0, eps, delta, method="classical")
    assert analytic <= classical


def test_analytic_gain_at_eps_one():
    # SPEC section 1: about 23% less noise at eps = 1, delta = 1e-5.
    with pytest.warns(UserWarning):
        classical = gaussian_noise_scale(1.0, 1.0, 1e-5, method="classical")
    gain = 1 - gaussian_noise_scale(1.0, 1.0, 1e-5) / classical
    assert 0.20 < gain < 0.26


def test_analytic_scales_linearly_with_sensitivity():
    base = gaussian_noise_scale(1.0, 0.7, 1e-6)
    assert gaussian_noise_scale(3.0, 0.7, 1e-6) == pytest.approx(3 * base, rel=1e-9)


def test_classical_warns_from_eps_one_on():
    with pytest.warns(UserWarning, match="analytic"):
        gaussian_noise_scale(1.0, 1.0, 1e-5, method="classical")
    with pytest.warns(UserWarning, match="analytic"):
        gaussian_noise_scale(1.0, 3.0, 1e-5, method="classical")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gaussian_noise_scale(1.0, 0.99, 1e-5, method="classical")
        gaussian_noise_scale(1.0, 3.0, 1e-5)  # analytic never warns


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_eps_raises(eps):
    with pytest.raises(ValueError, match="eps"):
        gaussian_noise_scale(1.0, eps, 1e-5)
    with pytest.raises(ValueError, match="eps"):
        laplace_noise_scale(1.0, eps)
    with pytest.raises(ValueError, match="eps"):
        check_eps(eps)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5, 1.5, float("nan")])
def test_bad_delta_raises(delta):
    with pytest.raises(ValueError, match="delta"):
        gaussian_noise_scale(1.0, 1.0, delta)
    with pytest.raises(ValueError, match="delta"):
        check_delta(delta)


def test_wrong_types_and_method():
    with pytest.raises(TypeError, match="eps"):
        gaussian_noise_scale(1.0, "1", 1e-5)
    with pytest.raises(TypeError, match="delta"):
        gaussian_noise_scale(1.0, 1.0, None)
    with pytest.raises(ValueError, match="noise"):
        gaussian_noise_scale(1.0, 1.0, 1e-5, method="exact")
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_noise_scale(0.0, 1.0, 1e-5)


def test_laplace_scale():
    assert laplace_noise_scale(2.0, 0.5) == 4.0
    assert check_delta(0.0, allow_zero=True) == 0.0
