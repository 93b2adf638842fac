"""The request layer (``sklearn_dppca._requests``): one reading of the user's
input for the command line and the explorer, and one spend for the same shares
through the Python API, the command line and the explorer."""

import contextlib
import io
import json
import os
import warnings

import numpy as np
import pytest

from sklearn_dppca import DPPCA, DPScree, PrivacyAccountant
from sklearn_dppca._requests import (SCREE_KINDS, _SCREE_PANELS, budget_split,
                                     planned_spend, scree_panel, shares_note)

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from sklearn_dppca._cli import main  # noqa: E402
from sklearn_dppca._data_sources import TabularData  # noqa: E402
from sklearn_dppca.app._session import Explorer  # noqa: E402
from sklearn_dppca.app._sources import BUDGET_SUFFIX  # noqa: E402
from sklearn_dppca.datasets import make_gaussian_clusters  # noqa: E402

SHARES = {"loading": 0.4, "scree": 0.2, "score": 0.2}


def test_the_scree_panel_auto_reads_the_released_values():
    from types import SimpleNamespace

    nan = float("nan")

    def released(ratios, variances):
        return SimpleNamespace(explained_variance_ratio_=np.array(ratios),
                               explained_variance_=np.array(variances))

    assert SCREE_KINDS == ("auto", *_SCREE_PANELS)
    assert scree_panel("auto", released([0.6, nan], [3.0, nan])) == _SCREE_PANELS["pve"]
    # a PVE not estimable anywhere, a variance released: the variances
    assert scree_panel("auto", released([nan, nan], [3.0, nan])) == \
        _SCREE_PANELS["variance"]
    # nothing released: the PVE panel's "not estimable" marks
    assert scree_panel("auto", released([nan], [nan])) == _SCREE_PANELS["pve"]
    for kind in _SCREE_PANELS:        # an asked kind is drawn whatever the values
        assert scree_panel(kind, released([nan], [nan])) == _SCREE_PANELS[kind]


def test_budget_shares_are_fractions_of_eps():
    assert budget_split({"loading": 0.4, "scree": 0.2, "score": 0.0}) == \
        {"loading": 0.4, "scree": 0.2}
    with pytest.raises(ValueError, match=">= 0"):
        budget_split({"loading": -0.1, "scree": 0.5})
    with pytest.raises(ValueError, match=">= 0"):
        budget_split({"loading": float("nan"), "scree": 0.5})
    with pytest.raises(ValueError, match="not all be 0"):
        budget_split({"loading": 0.0, "scree": 0.0})
    assert "sum to 0.8" in shares_note(SHARES) and shares_note({"a": 0.5, "b": 0.5}) == ""


@pytest.mark.parametrize("make", [
    lambda a: DPPCA(eps=1.0, accountant=a, random_state=0),
    lambda a: DPPCA(eps=1.0, budget_split=SHARES, accountant=a, random_state=0),
    lambda a: DPPCA(eps=2.0, scale=True, accountant=a, random_state=0),
    lambda a: DPPCA(eps=3.0, accounting="basic", accountant=a, random_state=0),
    lambda a: DPScree(eps=1.0, accountant=a, random_state=0),
], ids=["default", "shares", "scale", "basic", "scree"])
def test_the_spend_read_off_the_plan_is_the_charge(make):
    X = np.random.default_rng(0).normal(size=(3000, 4)) * [3.0, 2.0, 1.0, 0.5]
    accountant = PrivacyAccountant(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = make(accountant).fit(X)
    (charge,) = accountant.charges
    spend = planned_spend(fitted.plan(*X.shape))
    assert (charge["eps"], charge["delta"], charge["mu"]) == \
        (spend.eps, spend.delta, spend.mu)


def _clusters():
    return make_gaussian_clusters(1000, n_features=10, as_frame=True, random_state=0)


def _api_charge(X):
    accountant = PrivacyAccountant(4.0, 1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPPCA(eps=1.0, budget_split=SHARES, accountant=accountant,
              random_state=0).fit(X)
    return accountant.charges[0]


def _cli_charge(X, directory):
    X.to_csv(directory / "table.csv", index=False)
    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(directory)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["table.csv", "--eps", "1", "--seed", "0", "--budget-split",
                         "loading=0.4,scree=0.2,score=0.2", "--budget-file", "b.json",
                         "--budget", "4,1e-4", "--quiet"])
    finally:
        os.chdir(previous)
        matplotlib.pyplot.close("all")
    assert code == 0, err.getvalue()
    return json.loads((directory / "b.json").read_text())["charges"][0]


def _explorer_charge(X, directory):
    data = TabularData(X, None, None, "clusters")      # (no groups, as above)
    explorer = Explorer(data, (4.0, 1e-4), directory / f"e{BUDGET_SUFFIX}")
    explorer.fit({"eps": 1.0, "delta": 1e-5, "split_loading": 0.4, "split_scree": 0.2,
                  "split_score": 0.2, "random_state": 0})
    return explorer.accountant.charges[0]


def test_the_same_shares_spend_the_same_budget_everywhere(tmp_path):
    # shares summing to 0.8 spend 0.8 of eps through every front end (the explorer
    # scaled them up to 1 and spent all of it)
    X = _clusters()
    charges = [_api_charge(X), _cli_charge(X, tmp_path), _explorer_charge(X, tmp_path)]
    spends = {(c["eps"], c["delta"], c["mu"]) for c in charges}
    assert len(spends) == 1
    (spend,) = spends
    alone = PrivacyAccountant(4.0, 1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPPCA(eps=1.0, accountant=alone, random_state=0).fit(X)
    # (the old reading of the explorer spent what the default split spends)
    assert spend[2] < 0.95 * alone.charges[0]["mu"]
