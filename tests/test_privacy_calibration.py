"""Noise calibration: the classical formula, the analytic Gaussian profile, validation,
and the warning on a delta too large for the number of rows."""

import inspect
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import erfcx, log_ndtr
from scipy.stats import norm

import sklearn_dppca
from sklearn_dppca.privacy import (
    PrivacyAccountant,
    PrivacyRiskWarning,
    Spend,
    check_delta,
    check_eps,
    gaussian_delta,
    gaussian_noise_scale,
    laplace_noise_scale,
)
from sklearn_dppca.privacy import _calibration
from sklearn_dppca.privacy._warnings import warn_risky_delta


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
    # The claim of the user guide (doc/user_guide.rst, the Gaussian calibration): at
    # eps = 1, delta = 1e-5 the analytic sigma (Balle & Wang 2018) is about 23%
    # smaller than the classical one.
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


def classical_failure_eps(delta):
    """The eps above which the classical sigma no longer gives (eps, delta)-DP,
    by bisection on the exact profile evaluated directly (not by the package)."""

    def excess(eps):
        scale = math.sqrt(2 * math.log(1.25 / delta)) / eps
        return gaussian_profile(scale, 1.0, eps) - delta

    assert excess(1.0) < 0 < excess(30.0)
    return brentq(excess, 1.0, 30.0, xtol=1e-12)


@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_classical_refused_where_its_delta_exceeds_the_claim(delta):
    threshold = classical_failure_eps(delta)
    assert 7 < threshold < 10
    for eps in (threshold * (1 + 1e-6), threshold * 1.1, 20.0, 100.0):
        with pytest.raises(ValueError, match=r"noise='classical'.*eps=.*delta=.*analytic"):
            gaussian_noise_scale(1.0, eps, delta, method="classical", warn=False)
    for eps in (0.1, 0.5, 0.99, 3.0, threshold * 0.9, threshold * (1 - 1e-6)):
        scale = gaussian_noise_scale(2.0, eps, delta, method="classical", warn=False)
        assert scale == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25 / delta)) / eps)
        assert gaussian_profile(scale, 2.0, eps) <= delta


def test_classical_still_warns_where_it_holds():
    with pytest.warns(UserWarning, match="only proven for eps < 1"):
        gaussian_noise_scale(1.0, 5.0, 1e-5, method="classical")


@pytest.mark.parametrize("delta, n_samples", [(1e-2, 100), (0.5, 3), (1e-3, 5000)])
def test_risky_delta_warns_at_the_callers_line(delta, n_samples):
    # (the first line outside the package: here, this test's own call)
    with pytest.warns(PrivacyRiskWarning, match="1/n_samples") as record:
        warn_risky_delta(delta, n_samples)
        call_line = inspect.currentframe().f_lineno - 1
    assert (record[0].filename, record[0].lineno) == (__file__, call_line)
    assert "much smaller" in str(record[0].message)


@pytest.mark.parametrize("delta, n_samples", [(1e-5, 1000), (0.0099, 100), (1e-3, 999)])
def test_small_delta_does_not_warn(delta, n_samples):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_risky_delta(delta, n_samples)


def test_risk_warning_category():
    assert issubclass(PrivacyRiskWarning, UserWarning)
    assert not issubclass(PrivacyRiskWarning, sklearn_dppca.PrivacyUtilityWarning)
    assert sklearn_dppca.PrivacyRiskWarning is PrivacyRiskWarning


def _exponent_reference(ratio, eps):
    """``eps + log Phi(second) - log Phi(first)`` through the scaled erfc:
    ``log Phi(x) = log erfcx(-x / sqrt 2) - x^2 / 2 - log 2`` for ``x < 0``, and
    ``second^2 - first^2 = 2 eps``, so no two large numbers meet."""
    first, second = ratio / 2 - eps / ratio, -ratio / 2 - eps / ratio
    return math.log(erfcx(-second / math.sqrt(2)) / erfcx(-first / math.sqrt(2)))


@pytest.mark.parametrize("ratio, eps", [(1e-3, 1e-2 * 1e3), (0.1, 1e4), (1.0, 1e5),
                                        (2.0, 1e7), (30.0, 1e8), (1e-2, 11.0)])
def test_gaussian_delta_far_in_the_tail_is_exact_and_finite(ratio, eps):
    # far in the tail the two log Phi are about -first^2 / 2 (up to 1e20 here):
    # subtracted as they are, the exponent was noise, and expm1 overflowed
    first, second = ratio / 2 - eps / ratio, -ratio / 2 - eps / ratio
    assert first < _calibration._ASYMPTOTIC_BELOW
    exponent = _calibration._log_ratio_exponent(ratio, eps, first, second,
                                                log_ndtr(first))
    assert exponent == pytest.approx(_exponent_reference(ratio, eps), rel=1e-9)
    delta = gaussian_delta(1.0, ratio, eps)
    assert math.isfinite(delta) and 0.0 <= delta <= math.exp(log_ndtr(first))


def test_the_plain_difference_fails_where_the_series_is_used():
    # the check above can fail: at eps 1e7 the direct formula's exponent (about
    # -1e-13) comes out in the thousands, and expm1 of it overflows (the bug a
    # huge accountant total met)
    ratio, eps = 1e-3, 1e7
    first, second = ratio / 2 - eps / ratio, -ratio / 2 - eps / ratio
    direct = eps + log_ndtr(second) - log_ndtr(first)
    assert _exponent_reference(ratio, eps) < 0 < 1.0 < direct


def test_an_accountant_with_a_huge_total_takes_a_tiny_gaussian_charge():
    accountant = PrivacyAccountant(1e7, 1e-5)
    accountant.charge(Spend(mu=1e-3, delta=1e-9), "tiny")
    assert accountant.charges[0]["delta"] == 1e-9
    # read at the total's delta, the tiny block costs a tiny eps
    eps, delta = accountant.spent()
    assert 0 < eps < 0.01 and delta == pytest.approx(1e-5)
