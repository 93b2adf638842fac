"""The estimators' accounting: every configuration's ledger composes to at most the
grant, and a PrivacyAccountant across fits (charges before fitting, searches that
run out of budget, budgets that survive a restart), and the risk warnings."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from sklearn_dppca import (
    BudgetExceededError,
    DPKendallDirections,
    DPPCA,
    DPScree,
    PrivacyAccountant,
    PrivacyRiskWarning,
)
from sklearn_dppca.privacy import gdp_delta, gdp_mu
from sklearn_dppca.privacy._discrete import _dominated_by_gdp
from sklearn_dppca.privacy._exact import _UNIT


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4)) * [3.0, 2.0, 1.0, 0.5]
    return X, (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)


def _recomposed(ledger):
    """The ledger's total, recomputed from its parts alone.

    Pairs of the entries outside the block add up; the block's mu is the root sum
    of squares of the GDP parts' mu, charged at the block's eps.
    """
    outside = [e for e in ledger if e["step"] != "gaussian block"]
    blocks = [e for e in ledger if e["step"] == "gaussian block"]
    eps = math.fsum(e["eps"] for e in outside)
    delta = math.fsum(e["delta"] for e in outside)
    parts = [e["mu"] for e in outside if e.get("composition") == "gdp"]
    if not blocks:
        assert not parts
        return eps, delta
    (block,) = blocks
    mu = math.sqrt(math.fsum(m * m for m in parts))
    assert block["mu"] == pytest.approx(mu, rel=1e-12)
    for entry in outside:
        if entry.get("composition") != "gdp":
            continue
        if entry["mechanism"].startswith("discrete gaussian"):
            # a hair more noise than sensitivity / mu, and its privacy profile
            # (recomputed here) lies below the mu-GDP profile it is charged as
            assert entry["noise_scale"] >= entry["sensitivity"] / entry["mu"]
            assert _dominated_by_gdp(Fraction(entry["sigma2"]), entry["mu"])
        else:
            # the exact release: its mu counts the rounding to the grid (each of the
            # values moves by up to half a step), paid for in a hair more noise
            assert "noise_alone" not in entry
            steps = entry["sensitivity"] / entry["grid"] + math.sqrt(entry["values"])
            assert entry["mu"] == pytest.approx(steps * (1 + 1e-5) / _UNIT.sigma,
                                                rel=1e-12)
            assert entry["noise_scale"] == pytest.approx(entry["grid"] * _UNIT.sigma)
            ratio = entry["noise_scale"] / (entry["sensitivity"] / entry["mu"])
            assert 1 <= ratio < 1.01
    return eps + block["eps"], delta + gdp_delta(mu, block["eps"])


CONFIGURATIONS = [
    {},
    {"accounting": "basic"},
    {"scale": True},
    {"scale": True, "accounting": "basic", "noise": "classical"},
    {"histogram": "sparse"},
    {"scree_method": "huber"},
    {"scree_method": "pmwm", "histogram": "sparse", "scale": True},
    {"scree_method": "kendall"},
    {"scree_params": {"clip": "component"}},
    {"scree_params": {"C": 50.0}},
    {"budget_split": {"loading": 0.5, "scree": 0.2}},
    {"budget_split": {"loading": 0.2, "scree": 0.2, "score": 0.2}},
    {"n_components": 1},
    {"pairs": 16, "sensitivity": "standard"},
    {"groups": [0, 1]},
    {"radial": "clipped"},
    {"radial": "clipped", "scree_method": "matrix", "scale": True},
    {"radial": "clipped", "radius": 3.0, "accounting": "basic"},
]


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=lambda c: repr(c)[:60])
@pytest.mark.parametrize("eps, delta", [(0.3, 1e-6), (1.0, 1e-5), (6.0, 1e-8)])
def test_every_dppca_ledger_composes_within_the_grant(config, eps, delta):
    X, y = _data(400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pca = DPPCA(eps=eps, delta=delta, random_state=0, **config).fit(X, y)
    spent_eps, spent_delta = _recomposed(pca.privacy_ledger_)
    assert spent_eps <= eps * (1 + 1e-12) and spent_delta <= delta * (1 + 1e-12)
    assert pca.privacy_spent_ == pytest.approx((spent_eps, spent_delta), rel=1e-12)
    # a full split spends all of eps, unless a part is skipped (one component: no
    # score summary; a collapsed frame: no histogram)
    if "budget_split" not in config and pca.frame_ is not None:
        assert spent_eps == pytest.approx(eps, rel=1e-9)


def _search(accountant, error_score):
    pipe = make_pipeline(DPKendallDirections(eps=1.0, delta=1e-5, accountant=accountant,
                                             random_state=0),
                         LogisticRegression())
    return GridSearchCV(pipe, {"dpkendalldirections__n_components": [1, 2]}, cv=5,
                        error_score=error_score)


def test_grid_search_stops_when_the_budget_runs_out():
    # One fit is mu1-GDP with mu1 = gdp_mu(1, 1e-5); the accountant composes the
    # fits exactly, so (3, 1e-5) holds floor((gdp_mu(3, 1e-5) / mu1)^2) = 7 of
    # them (3 under basic composition); the search needs 10 and a refit.
    affordable = math.floor((gdp_mu(3.0, 1e-5) / gdp_mu(1.0, 1e-5)) ** 2)
    assert affordable == 7
    X, y = _data()
    accountant = PrivacyAccountant(3.0, 1e-5)
    with pytest.raises(BudgetExceededError, match="DPKendallDirections"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyRiskWarning)
            _search(accountant, "raise").fit(X, y)
    assert len(accountant.charges) == affordable
    eps, delta = accountant.spent()
    assert eps <= 3.0 and delta <= 1e-5


def test_grid_search_default_error_score_still_ends_in_the_error():
    # error_score=nan turns the refused fits into nan scores; the refit is not
    # caught, and it cannot be afforded either.
    X, y = _data()
    accountant = PrivacyAccountant(3.0, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BudgetExceededError):
            _search(accountant, np.nan).fit(X, y)
    assert len(accountant.charges) == 7


def test_refused_fit_computes_nothing_and_keeps_no_state():
    X, _ = _data()
    accountant = PrivacyAccountant(0.5, 1e-5)
    estimator = DPPCA(eps=1.0, accountant=accountant, random_state=0)
    with pytest.raises(BudgetExceededError):
        estimator.fit(X)
    assert not hasattr(estimator, "components_") and accountant.charges == []


def test_saved_accountant_refuses_the_same_overspend(tmp_path):
    X, _ = _data()
    accountant = PrivacyAccountant(1.5, 1e-5)
    DPScree(eps=1.0, accountant=accountant, random_state=0).fit(X)
    path = tmp_path / "budget.json"
    accountant.save(path)
    second = DPScree(eps=1.0, random_state=1)
    with pytest.raises(BudgetExceededError):
        second.set_params(accountant=accountant).fit(X)
    restored = PrivacyAccountant.load(path)
    with pytest.raises(BudgetExceededError):
        second.set_params(accountant=restored).fit(X)
    # what is left can still be spent
    DPScree(eps=0.3, accountant=restored, random_state=2).fit(X)
    assert len(restored.charges) == 2


def test_charge_is_the_fits_planned_spend():
    X, _ = _data()
    accountant = PrivacyAccountant(10.0, 1e-4)
    pca = DPPCA(eps=1.0, delta=1e-5, accountant=accountant, random_state=0).fit(X)
    (charge,) = accountant.charges
    block = [e for e in pca.privacy_ledger_ if e["step"] == "gaussian block"][0]
    # the pure parts' eps and the Gaussian block's mu, as the ledger records them
    pure = math.fsum(e["eps"] for e in pca.privacy_ledger_ if e["step"] != "gaussian block")
    assert charge["eps"] == pytest.approx(pure) and charge["mu"] == pytest.approx(block["mu"])
    assert charge["delta"] == 0.0


def test_basic_accounting_charges_pairs():
    X, _ = _data()
    accountant = PrivacyAccountant(10.0, 1e-4)
    pca = DPPCA(eps=1.0, accounting="basic", accountant=accountant, random_state=0).fit(X)
    (charge,) = accountant.charges
    assert (charge["eps"], charge["delta"], charge["mu"]) == pytest.approx(
        (*pca.privacy_spent_, 0.0))


def test_clone_shares_the_accountant_and_warns_without_one():
    accountant = PrivacyAccountant(1.0, 1e-5)
    estimator = DPKendallDirections(accountant=accountant)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyRiskWarning)
        assert clone(estimator).accountant is accountant
    with pytest.warns(PrivacyRiskWarning, match="spends its"):
        clone(DPKendallDirections())


def test_cross_validation_without_accountant_warns():
    X, y = _data()
    pipe = make_pipeline(DPKendallDirections(n_components=2, random_state=0),
                         LogisticRegression())
    with pytest.warns(PrivacyRiskWarning, match="accountant"):
        cross_val_score(pipe, X, y, cv=2)


def test_refit_without_accountant_warns():
    X, _ = _data()
    estimator = DPKendallDirections(random_state=0).fit(X)
    with pytest.warns(PrivacyRiskWarning, match="fitted again"):
        estimator.fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyRiskWarning)
        counted = DPKendallDirections(accountant=PrivacyAccountant(5.0, 1e-5),
                                      random_state=0)
        counted.fit(X).fit(X)


@pytest.mark.parametrize("estimator", [DPKendallDirections(), DPScree(), DPPCA()])
def test_large_delta_warns(estimator):
    X, _ = _data(n=200)
    with pytest.warns(PrivacyRiskWarning, match="delta"):
        clone(estimator).set_params(delta=0.5, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyRiskWarning)
        estimator.set_params(delta=1e-5, random_state=0).fit(X)


@pytest.mark.parametrize("Estimator", [DPKendallDirections, DPScree, DPPCA])
def test_bad_accountant_and_accounting(Estimator):
    X, _ = _data()
    with pytest.raises(TypeError, match="accountant"):
        Estimator(accountant=(1.0, 1e-5)).fit(X)
    with pytest.raises(ValueError, match="accounting"):
        Estimator(accounting="rdp").fit(X)
    with pytest.raises(ValueError, match="accounting='basic'"):
        Estimator(noise="classical").fit(X)


def test_ledger_refuses_a_gdp_fit_that_drew_too_little_noise(monkeypatch):
    # A GDP part records the mu of the noise it drew (sensitivity / sd): a broken
    # calibration composes to more than the grant and nothing is released. Under
    # basic accounting the entries record their allocated pairs, so only the
    # audits (tests/test_audit_estimators.py) can catch it there.
    from sklearn_dppca.privacy import _mechanisms

    original = _mechanisms._gaussian_scale
    monkeypatch.setattr(_mechanisms, "_gaussian_scale",
                        lambda *args: original(*args) / 2)
    X, _ = _data()
    estimator = DPKendallDirections(random_state=0)
    with pytest.raises(RuntimeError, match="spent delta"):
        estimator.fit(X)
    assert not hasattr(estimator, "components_")
    DPKendallDirections(accounting="basic", random_state=0).fit(X)


def test_after_one_fit_the_budget_reads_in_the_fits_own_eps():
    # one DPPCA fit at eps 1 against a total of 1.5 reads 1.0 spent, and
    # remaining()["eps"] is the largest further DPPCA fit accepted: a hair
    # below it is accepted, a hair above refused (150 rows: the plan buys the
    # directions only, all Gaussian)
    from sklearn.datasets import load_iris

    X = load_iris().data
    accountant = PrivacyAccountant(1.5, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPPCA(eps=1.0, accountant=accountant, random_state=0).fit(X)
        assert accountant.spent() == (1.0, 1e-5)
        left = accountant.remaining()["eps"]
        assert 0.5 < left < 1.5 - 0.4           # more than a sum leaves, not all of it
        with pytest.raises(BudgetExceededError, match=r"^'DPPCA' asks for eps 1\.05 at "):
            DPPCA(eps=left * (1 + 1e-6), accountant=accountant, random_state=0).fit(X)
        assert len(accountant.charges) == 1
        DPPCA(eps=left * (1 - 1e-6), accountant=accountant, random_state=0).fit(X)
    assert len(accountant.charges) == 2
    assert accountant.spent()[0] == pytest.approx(1.5, abs=1e-5)
