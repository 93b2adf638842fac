"""membership_risk: the best membership test a spend allows, against a slow
reference that sorts a fine grid of outcomes by their likelihood ratio."""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from sklearn_dppca.privacy import Spend, gdp_mu, membership_risk


def _reference(eps, mu, fpr):
    """Neyman-Pearson by brute force: randomized response at ``eps`` times a
    Gaussian shift ``mu`` on a grid of 400,001 cells, sorted by likelihood ratio;
    the true positive rate at ``fpr`` (linear within the last cell) and the
    largest true minus false positive rate."""
    edges = np.linspace(-12.0, 12.0 + mu, 400_002)
    null_cells = np.diff(ndtr(edges))
    alt_cells = np.diff(ndtr(edges - mu))
    keep = 1.0 / (1.0 + math.exp(eps))
    null = np.concatenate([(1 - keep) * null_cells, keep * null_cells])
    alternative = np.concatenate([keep * alt_cells, (1 - keep) * alt_cells])
    order = np.argsort(-(alternative / np.maximum(null, 1e-300)), kind="stable")
    false, true = np.cumsum(null[order]), np.cumsum(alternative[order])
    at = np.searchsorted(false, fpr)
    tpr = np.interp(fpr, false[at - 1:at + 1], true[at - 1:at + 1])
    return float(tpr), float(np.max(true - false))


@pytest.mark.parametrize("eps, mu, fpr", [
    (1e-9, gdp_mu(1.0, 1e-5), 0.01), (0.2, 0.2, 0.01), (0.5, 0.6, 0.05),
    (1.0, 0.1, 0.001), (0.05, 1.5, 0.1),
])
def test_the_bounds_agree_with_a_brute_force_likelihood_ratio_test(eps, mu, fpr):
    risk = membership_risk(Spend(eps=eps, mu=mu), 1e-5, fpr)
    tpr, advantage = _reference(eps, mu, fpr)
    assert risk["tpr"] == pytest.approx(tpr, abs=2e-5)
    assert risk["advantage"] == pytest.approx(advantage, abs=2e-5)


def test_a_gaussian_fit_at_eps_1_in_the_issue_s_numbers():
    # eps 1, delta 1e-5: mu 0.268; at 1% of non-members at most about 2% of
    # members, an advantage of about 0.11
    risk = membership_risk(1.0, 1e-5)
    assert risk["model"] == "gaussian"
    assert risk["mu"] == pytest.approx(gdp_mu(1.0, 1e-5))
    assert risk["tpr"] == pytest.approx(ndtr(-2.3263478740408408 + risk["mu"]), abs=1e-9)
    assert 0.0195 < risk["tpr"] < 0.0200 and 0.105 < risk["advantage"] < 0.108
    assert risk["eps"] == pytest.approx(1.0)


def test_pure_eps_alone_is_randomized_response():
    risk = membership_risk(Spend(eps=1.0), 1e-5, 0.01)
    assert risk["tpr"] == pytest.approx(math.e * 0.01)
    assert risk["advantage"] == pytest.approx((math.e - 1) / (math.e + 1))


def test_a_basic_delta_takes_the_eps_delta_curve():
    risk = membership_risk(Spend(eps=0.5, delta=1e-6), 1e-5, 0.01)
    assert risk["model"] == "eps-delta"
    assert risk["tpr"] == pytest.approx(1e-6 + math.exp(0.5) * 0.01)
    assert risk["advantage"] == pytest.approx(
        (math.exp(0.5) - 1 + 2e-6) / (math.exp(0.5) + 1))


def test_more_budget_never_lowers_the_risk():
    eps = np.geomspace(0.05, 20, 30)
    tprs = [membership_risk(float(e), 1e-5)["tpr"] for e in eps]
    advantages = [membership_risk(float(e), 1e-5)["advantage"] for e in eps]
    assert np.all(np.diff(tprs) > 0) and np.all(np.diff(advantages) > 0)
    assert advantages[-1] < 1.0


@pytest.mark.parametrize("kwargs, error, match", [
    ({"fpr": 0.0}, ValueError, "fpr"), ({"fpr": 1.0}, ValueError, "fpr"),
    ({"fpr": "0.1"}, TypeError, "fpr"), ({"delta": 0.0}, ValueError, "delta"),
])
def test_bad_arguments_name_themselves(kwargs, error, match):
    arguments = {"spend": 1.0, "delta": 1e-5, **kwargs}
    with pytest.raises(error, match=match):
        membership_risk(**arguments)
