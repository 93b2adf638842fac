"""One fit sequence for every estimator (``_PrivateProjection._fit_sequence``):
``plan()`` raises exactly when ``fit`` refuses before its charge, every estimator
keeps the same data contract, and the releases follow the charge."""

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, PrivacyAccountant
from sklearn_dppca.privacy import BudgetExceededError

N, P = 300, 3
BOX = [(-6.0, 6.0)] * P

#: Public settings every estimator takes, among them every refusal the estimators
#: share (bounds, noise and accounting, radial, leaves too small, pair designs).
COMMON = [
    {}, {"row_blocks": 150}, {"row_blocks": 150, "pairs": 8}, {"radial": "covariance"},
    {"radial": "covariance", "bounds": BOX}, {"bounds": BOX[:2]},
    {"bounds": [(6.0, -6.0)] * P}, {"bounds": [(0.0, np.inf)] * P},
    {"bounds": {"a": (0, 1), "b": (0, 1), "c": (0, 1)}}, {"bounds": {"a": (0, 1)}},
    {"noise": "classical"}, {"noise": "classical", "accounting": "basic"},
    {"noise": "classical", "accounting": "basic", "eps": 30.0},
    {"eps": 1e-310}, {"eps": 1e-310, "accounting": "basic"}, {"delta": 1e-320},
    {"n_components": 5}, {"scale": True}, {"scale": True, "bounds": BOX},
    {"compute_nonprivate": True, "row_blocks": 150, "pairs": 8},
    {"radius": 2.0, "radial": "clipped"}, {"eps": 1e6}, {"pairs": 7},
    {"pairs": 400}, {"row_blocks": [100, 200]}, {"row_blocks": [100, 100]},
]
OWN = {
    DPPCA: [
        {"scree_method": "matrix", "radial": "covariance", "bounds": BOX},
        {"scree_method": "matrix"}, {"scree_method": "matrix", "radial": "clipped"},
        {"axes": (0, 4)}, {"n_components": 1}, {"n_components": 0.8},
        {"histogram": "discrete", "eps": 0.01}, {"histogram": "sparse", "eps": 1e6},
        {"scree_params": {"bogus": 1}}, {"scree_params": {"C": "box"}},
        {"scree_params": {"C": "box"}, "bounds": BOX},
        {"budget_split": {"loading": 0.9, "scree": 0.9}},
        {"budget_split": {"loading": 0.5, "scree": 0.5, "scale": 0.1}},
        {"scree_method": "huber", "noise": "classical", "accounting": "basic"},
        {"scree_method": "huber", "noise": "classical", "accounting": "basic",
         "eps": 25.0},
        {"groups": ["a", "b"]}, {"groups": ["a", "b"], "eps": 0.05},
    ],
    DPScree: [
        {"scree_method": "matrix", "radial": "covariance", "bounds": BOX},
        {"scree_method": "matrix"}, {"scree_method": "matrix", "radial": "clipped"},
        {"scree_params": {"bogus": 1}}, {"scree_method": "kendall", "directions": np.eye(P)},
        {"directions": np.eye(P)}, {"directions": np.eye(P + 1)},
        {"scree_params": {"C": "box"}}, {"scree_params": {"C": "box"}, "bounds": BOX},
        {"scree_params": {"pairs": 400, "clip": "norm"}},
        {"scree_params": {"clip": "scaled", "C": 2.0}},
        {"scree_method": "huber", "scree_params": {"k_min": 5, "k_max": 1}},
        {"scree_method": "huber", "noise": "classical", "accounting": "basic", "eps": 25.0},
    ],
    DPKendallDirections: [{"scale_share": 0.99}, {"n_components": 2}],
}
CASES = [(cls, settings) for cls in (DPPCA, DPScree, DPKendallDirections)
         for settings in COMMON + OWN[cls]]


def _data(settings):
    X = np.random.default_rng(0).normal(size=(N, P))
    if isinstance(settings.get("bounds"), dict):
        X = pd.DataFrame(X, columns=["a", "b", "c"])
    y = np.array(["a", "b"] * (N // 2), dtype=object) if "groups" in settings else None
    return X, y


def _outcome(call):
    """None, or the type and message of what ``call`` raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except BudgetExceededError:
            raise
        except (ValueError, TypeError) as error:
            return type(error).__name__, str(error)
    return None


def _assert_plan_agrees_with_fit(cls, settings):
    X, y = _data(settings)
    planned = _outcome(lambda: cls(**settings).plan(N, P))
    accountant = PrivacyAccountant(max(1e3, 2.0 * settings.get("eps", 1.0)), 0.5)
    fitted = _outcome(lambda: cls(**settings, accountant=accountant).fit(X, y))
    if fitted is not None:
        assert accountant.charges == [], "refused after the charge"
    if isinstance(settings.get("bounds"), dict) and planned and fitted:
        # the plan knows no column names: the message names what it can
        assert planned[0] == fitted[0]
        return
    assert planned == fitted


@pytest.mark.parametrize("cls, settings", CASES,
                         ids=[f"{cls.__name__}-{i}" for i, (cls, _) in enumerate(CASES)])
def test_plan_raises_exactly_when_fit_refuses_before_the_charge(cls, settings):
    _assert_plan_agrees_with_fit(cls, settings)


def test_the_grid_holds_refusals_of_every_kind():
    # the test above must see both outcomes, for each estimator, or it is vacuous
    for cls in (DPPCA, DPScree, DPKendallDirections):
        outcomes = [_outcome(lambda: cls(**settings).plan(N, P))
                    for settings in COMMON + OWN[cls]]
        refused = [outcome for outcome in outcomes if outcome is not None]
        assert 8 <= len(refused) <= len(outcomes) - 5, cls.__name__


def test_a_refusal_left_out_of_the_plan_is_caught(monkeypatch):
    # a public refusal made in fit alone (here: where the sequence reads y) is
    # what the comparison is there to catch
    def refuse(*args):
        raise ValueError("refused by fit alone")

    monkeypatch.setattr(DPKendallDirections, "_targets", refuse)
    with pytest.raises(AssertionError):
        _assert_plan_agrees_with_fit(DPKendallDirections, {})


@pytest.mark.parametrize("make", [
    lambda a: DPKendallDirections(scale=True, eps=8.0, accountant=a, random_state=0),
    lambda a: DPScree(scale=True, eps=8.0, accountant=a, random_state=0),
    lambda a: DPPCA(scale=True, eps=8.0, accountant=a, random_state=0),
], ids=["directions", "scree", "pca"])
def test_one_data_contract_for_every_estimator(make):
    # X * 1e300: DPKendallDirections(scale=True) charged, overflowed and released
    # scale_ = [nan nan nan]; now every estimator refuses in the first pass
    X = np.random.default_rng(1).normal(size=(2000, P)) * 1e300
    accountant = PrivacyAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match=r"beyond 2\*\*500"):
        make(accountant).fit(X)
    assert accountant.charges == []


@pytest.mark.parametrize("cls", [DPPCA, DPScree, DPKendallDirections])
def test_releases_follow_the_charge(cls, monkeypatch):
    # a fit the accountant refuses reaches none of the estimator's releases
    def no_release(*args, **kwargs):
        raise AssertionError("a release ran before the charge was accepted")

    monkeypatch.setattr(cls, "_release", no_release)
    accountant = PrivacyAccountant(0.5, 1e-5)
    with pytest.raises(BudgetExceededError):
        cls(eps=1.0, accountant=accountant).fit(_data({})[0])
    assert accountant.charges == []


def test_the_plans_splits_are_made_before_the_charge(monkeypatch):
    # the splits that plan_ names are public and searched before the charge:
    # a failure there charges nothing (after the charge nothing may fail)
    def failing(*args, **kwargs):
        raise RuntimeError("the split search failed")

    monkeypatch.setattr(DPPCA, "_shares_needed", failing)
    accountant = PrivacyAccountant(10.0, 1e-3)
    with pytest.raises(RuntimeError, match="the split search failed"):
        DPPCA(eps=1.0, accountant=accountant, random_state=0).fit(_data({})[0])
    assert accountant.charges == []


@pytest.mark.parametrize("cls", [DPPCA, DPScree, DPKendallDirections])
def test_plan_reads_no_state_and_leaves_none(cls):
    estimator = cls(eps=2.0)
    before = dict(vars(estimator))
    estimator.plan(N, P)
    assert vars(estimator) == before


@pytest.mark.parametrize("cls", [DPKendallDirections, DPScree, DPPCA])
def test_no_estimator_sees_block_sizes(cls):
    """The fit sequence settles what the blocks decide before the spec: an
    estimator's own steps take no block sizes and read no blocks' rule."""
    for method in ("_spec", "_release"):
        assert "sizes" not in inspect.signature(getattr(cls, method)).parameters
    source = inspect.getsource(inspect.getmodule(cls))
    for name in ("check_blockwise_fit", "block_sizes", "check_design", "design_pairs"):
        assert name not in source, name
