"""The plan of a fit: decided from public inputs only, followed exactly by the fit,
and honest about what the budget cannot buy (issue 27)."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, PrivacyUtilityWarning
from sklearn_dppca._algorithms._plan import _without, bought_parts
from sklearn_dppca._base import _settle_blocks
from sklearn_dppca._bunch import Bunch
from sklearn_dppca._data._rows import Rows
from sklearn_dppca._data._statistics import (
    KENDALL_MATRIX,
    RADIUS,
    SPREAD_BOUNDS,
    TOTAL_BOUND,
    TWO_SIDED,
)
from sklearn_dppca.datasets import make_gaussian_clusters
from sklearn_dppca.privacy import BudgetTree, positive_quantile
from sklearn_dppca.privacy._quantiles import search_informative


def _data(n, p=6, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, p)) * np.linspace(3.0, 0.5, p) + 7.0


def _quiet_fit(estimator, X, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


CASES = [
    (DPPCA, {}, 150), (DPPCA, {}, 600), (DPPCA, {}, 3000), (DPPCA, {"eps": 4.0}, 600),
    (DPPCA, {"scale": True}, 3000), (DPPCA, {"scree_method": "kendall"}, 800),
    # the spreads bought: released first, whatever the budget tree's order
    (DPPCA, {"scale": True, "eps": 4.0}, 3000),
    (DPPCA, {"histogram": "sparse", "eps": 3.0}, 2000),
    (DPPCA, {"radial": "clipped"}, 1000),
    (DPScree, {}, 300), (DPScree, {"scale": True, "eps": 2.0}, 2000),
    (DPScree, {"scree_params": {"clip": "scaled"}}, 2000),
    (DPPCA, {"scree_params": {"clip": "scaled"}}, 2000),
    (DPScree, {"scree_method": "huber"}, 2000),
    (DPKendallDirections, {"scale": True}, 500), (DPKendallDirections, {}, 3),
    # declared bounds: the box replaces the scree's searches at 300 rows (the plan
    # cannot buy them beside the score summary), not at 3000
    (DPPCA, {"bounds": [(0.0, 14.0)] * 6}, 300), (DPPCA, {"bounds": [(0.0, 14.0)] * 6}, 3000),
    (DPScree, {"bounds": [(0.0, 14.0)] * 6, "eps": 0.5}, 442),
]


@pytest.mark.parametrize("Estimator, params, n", CASES)
def test_the_fit_follows_the_plan_made_before_any_data(Estimator, params, n):
    X = _data(n)
    estimator = Estimator(random_state=0, **params)
    plan = estimator.plan(*X.shape, splits=True)
    fitted = _quiet_fit(estimator, X)
    # the same plan, before and after the data (with the splits that would buy
    # what it does not: the summary names them)
    assert fitted.plan_.equals(plan)
    # the ledger holds exactly the released steps, in the plan's order (the score
    # histogram may be skipped, unspent, on a frame its released values refuse)
    # (the huber and pmwm screes record their inner steps under their leaf's name)
    steps = [e["step"] for e in fitted.privacy_ledger_ if e["step"] != "gaussian block"]
    released = list(plan.loc[plan.released, "step"])

    def leaf(step):
        return next(s for s in released if step == s or step.startswith(s + "/"))

    ledger_leaves = list(dict.fromkeys(leaf(step) for step in steps))
    skipped = [step for step in released if step not in ledger_leaves]
    assert [step for step in released if step in ledger_leaves] == ledger_leaves
    # (with declared bounds the scree's mean runs only where the box's moments
    # beat the searched bound, else its budget joins the variances', exactly;
    # where they do, the total's statistic is one release with the variances')
    optional = ["scree/mean", "scree/total variance/statistic"] \
        if "bounds" in params else []
    assert [s for s in skipped if s not in optional] in ([], ["score/histogram"])
    planned = plan.set_index("step")["mu"]
    spent = {e["step"]: e.get("mu") for e in fitted.privacy_ledger_}
    joined = [step for step in optional if step in skipped]
    if joined:
        assert len(joined) == 1
        assert spent["scree/variances/statistic"] == pytest.approx(
            math.hypot(planned["scree/variances/statistic"], planned[joined[0]]),
            rel=1e-12)
    # and spends no more than the grant, however the parts were redistributed
    assert fitted.privacy_spent_[0] <= estimator.eps * (1 + 1e-9)


def test_a_part_the_plan_cannot_buy_is_nan_and_its_budget_goes_to_the_rest():
    X = _data(300)
    full = DPPCA(eps=1.0, random_state=0)
    plan = full.plan(*X.shape)
    assert not plan.loc[plan.step.str.startswith("scree"), "released"].any()
    fitted = _quiet_fit(full, X)
    assert np.all(np.isnan(fitted.explained_variance_))
    assert np.all(np.isnan(fitted.explained_variance_ratio_))
    assert math.isnan(fitted.total_variance_)
    assert fitted.frame_ is None and fitted.synthetic_scores_ is None
    # the directions got the whole grant: less noise than with their default share
    assert fitted.budget_["loading"][0] == pytest.approx(1.0)
    alone = _quiet_fit(DPKendallDirections(eps=0.35, random_state=0), X)
    assert fitted.kendall_noise_scale_ < alone.kendall_noise_scale_


def test_dropping_a_part_keeps_the_total_share():
    parts = {"loading": (0.35, "gaussian"), "scree": (0.3, "gaussian"),
             "score": (0.35, "gaussian")}
    kept = _without(parts, {"score"})
    assert list(kept) == ["loading", "scree"]
    assert math.fsum(share for share, _ in kept.values()) == pytest.approx(1.0)
    assert kept["loading"][0] / kept["scree"][0] == pytest.approx(0.35 / 0.3)


def test_the_part_shortest_of_budget_is_dropped_first():
    # at 1,000 rows and eps 1 the score frame falls short and the scree does not,
    # once the frame's budget is given to it
    params = DPPCA()._validated_params()
    _settle_blocks(params, (1000,))      # (the fit sequence's step before the spec)
    prepared = DPPCA()._prepare(params, 1000, 10, [f"x{j}" for j in range(10)])
    settings, parts = prepared.settings, prepared.parts
    kept, dropped = bought_parts(
        parts, lambda tree: BudgetTree(tree).allocate(1.0, 1e-5, "gdp"), settings)
    assert dropped == {"score"} and set(kept) == {"loading", "scree"}


@pytest.mark.parametrize("n_values, eps", [(221, 0.12), (500, 0.06), (2000, 0.02)])
def test_a_search_the_rule_calls_informative_reaches_the_data(n_values, eps):
    # the rule's union bound: at most 5% of searches stop below every value
    assert search_informative(n_values, 0.97, eps, "scale-free")
    x = np.random.default_rng(1).chisquare(3, size=n_values) * 1e3
    below = [positive_quantile(x, 0.97, eps, np.random.default_rng(seed), warn=False)
             < x.min() for seed in range(200)]
    assert np.mean(below) <= 0.05


@pytest.mark.parametrize("n_values, eps", [(221, 0.03), (75, 0.1), (500, 0.012)])
def test_a_search_the_rule_refuses_would_mostly_collapse(n_values, eps):
    # the rule can fail: far below its bound, most searches stop below the data
    assert not search_informative(n_values, 0.97, eps, "scale-free")
    x = np.random.default_rng(1).chisquare(3, size=n_values) * 1e3
    below = [positive_quantile(x, 0.97, eps, np.random.default_rng(seed), warn=False)
             < x.min() for seed in range(100)]
    assert np.mean(below) >= 0.5


def test_eps_needed_is_where_the_step_becomes_informative():
    plan = DPPCA(eps=1.0).plan(400, 5)
    needed = plan.loc[~plan.released, "eps_needed"]
    assert len(needed) and np.all(needed > 1.0) and np.all(np.isfinite(needed))
    most = float(needed.max())
    # (eps_needed is "about": two significant figures, found to 5%)
    assert DPPCA(eps=most * 1.12).plan(400, 5).released.all()
    assert not DPPCA(eps=most * 0.85).plan(400, 5).released.all()


def test_the_plan_reads_public_inputs_only():
    estimator = DPPCA(eps=1.0, random_state=0)
    first = estimator.plan(2000, 8)
    _quiet_fit(estimator, _data(700, 8))      # a fit in between changes nothing
    assert estimator.plan(2000, 8).equals(first)
    with pytest.raises(ValueError, match="n_samples"):
        estimator.plan(1, 8)
    with pytest.raises(TypeError, match="n_features"):
        estimator.plan(100, 2.5)


def test_scale_not_bought_is_said_before_any_spend_and_not_claimed():
    from sklearn_dppca import PrivacyAccountant

    X = _data(400, 5)
    estimator = DPPCA(scale=True, eps=1.0, random_state=0)
    plan = estimator.plan(*X.shape)
    assert not plan.loc[plan.step.str.startswith("scale"), "released"].any()
    accountant = PrivacyAccountant(1.0, 1e-5)
    fitted = _quiet_fit(estimator.set_params(accountant=accountant), X)
    assert np.all(np.isnan(fitted.scale_))
    # the columns stay in their own units: transform divides by nothing
    np.testing.assert_allclose(fitted.transform(X[:3]), X[:3] @ fitted.components_.T)
    summary = str(fitted.summary())
    assert "correlation PCA" not in summary


def test_the_command_line_prints_the_plan_without_reading_a_cell(tmp_path, capsys):
    from sklearn_dppca._cli import main

    path = tmp_path / "table.csv"
    # a cell that is not a number: the plan does not read cells
    path.write_text("a,b,c\n" + "1,2,3\n" * 149 + "x,2,3\n")
    assert main([str(path), "--plan"]) == 0
    out = capsys.readouterr().out
    assert "150 rows x 3 variables" in out and "no cell read" in out
    assert "Not estimable at eps = 1 with n = 150" in out
    # at eps 2 the split that buys the scree, as the estimator's plan names it
    assert main([str(path), "--plan", "--eps", "2"]) == 0
    out = capsys.readouterr().out
    plan = DPPCA(eps=2.0).plan(150, 3, splits=True)
    split = plan.loc[plan.step.str.startswith("scree"), "split_needed"].iloc[0]
    assert split and f"or at this eps the split {split})" in out
    assert not any(tmp_path.glob("*.png")) and not any(tmp_path.glob("*.json"))


def test_the_eps_preview_shows_each_eps_without_reading_a_cell(tmp_path, capsys,
                                                               monkeypatch):
    from sklearn_dppca._cli import main
    from sklearn_dppca._requests import planned_spend
    from sklearn_dppca.privacy import membership_risk

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "table.csv"
    path.write_text("a,b,c\n" + "1,2,3\n" * 149 + "x,2,3\n")
    assert main([str(path), "--plan", "--eps-range", "0.5:32"]) == 0
    out = capsys.readouterr().out
    # the preview is drawn too, and nothing else is written
    assert out.rstrip().endswith("Wrote the preview figure eps_preview.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eps_preview.png", "table.csv"]
    assert (tmp_path / "eps_preview.png").read_bytes()[:4] == b"\x89PNG"
    out = out.rstrip().rsplit("\n", 1)[0]
    # what eps 1 means for one person, beside the plan (all Gaussian here)
    assert ("For one person, at eps 1 and delta 1e-5: a membership test that wrongly "
            "flags 1% of non-members flags at most 2.0% of members") in out
    lines = out.split("Preview across eps")[1].splitlines()[2:]
    rows = [line.split() for line in lines if line.strip()]
    assert len(rows) == 7
    grid = [float(row[0]) for row in rows]
    assert grid[0] == 0.5 and grid[-1] == 32 and grid == sorted(grid)
    # each row is the plan at its eps: its parts, and the risk of its spend
    for row in rows:
        eps = float(row[0])
        plan = DPPCA(eps=eps).plan(150, 3)
        kept = {step.split("/")[0] for step in plan.step[plan.released]}
        scree_cell = row[2]
        assert (scree_cell != "-") == ("scree" in kept)
        risk = membership_risk(planned_spend(plan), 1e-5)
        assert row[-2] == f"{100 * risk['tpr']:.1f}%"
    # more eps buys more parts and lets the best test see more members
    assert rows[0][2] == "-" and rows[-1][2] != "-"
    assert float(rows[0][-1]) < float(rows[-1][-1])
    assert not any(tmp_path.glob("*.json"))


def test_a_three_row_table_says_its_directions_are_noise(tmp_path, capsys):
    from sklearn_dppca._cli import main

    path = tmp_path / "three.csv"
    path.write_text("a,b,c,d\n1,2,3,4\n2,1,0,3\n5,5,1,0\n")
    out_png = tmp_path / "report.png"
    assert main([str(path), "--out", str(out_png), "--json",
                 str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "every loading within its noise" in out
    plan = DPPCA().plan(3, 4)
    assert plan.loc[plan.step == "loading", "eps_needed"].item() > 1.0


def _steps(plan, part):
    return plan.step.str.startswith(part)


def test_without_a_box_the_scree_waits_for_the_spreads():
    # a scree of columns left in their own units is a covariance PCA's (diabetes
    # at eps 1 printed a PC1 variance of 1,412 under scale=True): it is not run
    X = _data(400, 5)
    plan = DPPCA(scale=True, eps=1.0).plan(*X.shape)
    scale, scree = _steps(plan, "scale"), _steps(plan, "scree")
    assert not plan.loc[scale | scree, "released"].any()
    unscaled = DPPCA(eps=1.0).plan(*X.shape)      # (without scale=True it is bought)
    assert unscaled.loc[_steps(unscaled, "scree"), "released"].all()
    # bought with the spreads: at their eps, or its own if larger
    needed = plan.loc[scree, "eps_needed"]
    assert (needed >= plan.loc[scale, "eps_needed"].max()).all()
    both = DPPCA(scale=True, eps=1.05 * needed.max()).plan(*X.shape)
    assert both.loc[_steps(both, "scale") | _steps(both, "scree"), "released"].all()
    with pytest.warns(PrivacyUtilityWarning, match="scale=True: the columns' spreads "
                                                   "are not estimable"):
        fitted = DPPCA(scale=True, eps=1.0, random_state=0).fit(X)
    assert np.all(np.isnan(fitted.explained_variance_))
    assert math.isnan(fitted.total_variance_)
    assert fitted.budget_["scree"] == (0.0, 0.0) and fitted.budget_["scale"] == (0.0, 0.0)
    assert not any(e["step"].startswith(("scree", "scale")) for e in fitted.privacy_ledger_)


def test_the_spreads_take_the_scree_budget_before_the_scree_is_run_unscaled():
    # at 2,000 x 20 and eps 4 the spreads fall short beside the scree and not
    # without it: the fit divides by them, and the scree waits for eps 6.7
    plan = DPScree(2, eps=4.0, scale=True).plan(2000, 20)
    scree = _steps(plan, "scree")
    assert plan.loc[_steps(plan, "scale"), "released"].all()
    assert not plan.loc[scree, "released"].any()
    assert (plan.loc[scree, "eps_needed"] > 4.0).all()
    unscaled = DPScree(2, eps=4.0).plan(2000, 20)
    assert unscaled.loc[_steps(unscaled, "scree"), "released"].all()
    # a declared box gives every column a unit: the scree does not wait
    boxed = DPScree(2, eps=4.0, scale=True, bounds=[(-50.0, 50.0)] * 20).plan(2000, 20)
    assert boxed.loc[_steps(boxed, "scree"), "released"].any()


def test_gau_and_adult_buy_every_part_at_eps_1():
    X = make_gaussian_clusters(random_state=0)
    assert DPPCA(eps=1.0).plan(*X.shape).released.all()
    assert DPPCA(eps=1.0, pairs=64).plan(32561, 5).released.all()


# ------------------------------------------- more budget, or bounds, never lose
BOX = [(0.0, 1.0)] * 10
EPS_GRID = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


def _runs_scree(Estimator, n, eps, bounds, k=2):
    plan = Estimator(n_components=k, eps=eps, bounds=bounds).plan(n, len(BOX))
    return bool(plan.loc[plan.step.str.startswith("scree"), "released"].any())


@pytest.mark.parametrize("Estimator", [DPPCA, DPScree])
@pytest.mark.parametrize("bounds", [None, BOX])
def test_a_larger_budget_never_loses_the_scree(Estimator, bounds):
    # (the variances' own search and the total's each took half the searches'
    # budget wherever the variances' alone reached the data: DPScree bought its
    # scree at eps 1 on 300 rows and not at eps 2, 75 such gaps on this grid)
    for k in (1, 3):
        for n in (150, 300, 442, 1000):
            runs = [_runs_scree(Estimator, n, eps, bounds, k) for eps in EPS_GRID]
            first = runs.index(True) if True in runs else len(runs)
            assert all(runs[first:]), (k, n, runs)


@pytest.mark.parametrize("Estimator", [DPPCA, DPScree])
def test_declared_bounds_never_lose_the_scree(Estimator):
    for n in (150, 300, 442, 1000, 2000):
        for eps in EPS_GRID:
            if _runs_scree(Estimator, n, eps, None):
                assert _runs_scree(Estimator, n, eps, BOX), (n, eps)


@pytest.mark.parametrize("Estimator", [DPPCA, DPScree])
def test_under_scale_a_larger_budget_never_loses_the_spreads_or_the_scree(Estimator):
    for n in (442, 2000, 20000):
        bought = []
        for eps in EPS_GRID + (12.0, 16.0, 24.0):
            plan = Estimator(eps=eps, scale=True).plan(n, 10)
            bought.append((plan.loc[_steps(plan, "scale"), "released"].all(),
                           plan.loc[_steps(plan, "scree"), "released"].any()))
        assert not any(scree and not spreads for spreads, scree in bought), n
        for part in (0, 1):
            runs = [pair[part] for pair in bought]
            first = runs.index(True) if True in runs else len(runs)
            assert all(runs[first:]), (n, part, runs)
        assert bought[-1] == (True, True), n


# -- what the rows compute ahead is declared with the steps ---------------------------

_AHEAD = {KENDALL_MATRIX, RADIUS, SPREAD_BOUNDS, TOTAL_BOUND, TWO_SIDED}
_AHEAD_FITS = {
    "pca": lambda: DPPCA(eps=4.0, random_state=0),
    "pca-scale-clipped": lambda: DPPCA(eps=4.0, scale=True, radial="clipped",
                                       random_state=0),
    "pca-norm-clip": lambda: DPPCA(eps=4.0, scree_params={"clip": "norm"},
                                   random_state=0),
    "directions-scale": lambda: DPKendallDirections(eps=2.0, scale=True, random_state=0),
    "scree": lambda: DPScree(eps=2.0, random_state=0),
}


def _computed_late(monkeypatch, make):
    """The statistics a fit computes in a pass of their own although they need
    no release first (a spherical Kendall sum has floor 0): not the Kendall sum
    that waits for the total's clip bound to carry the total on its pass."""
    late = []
    original = Rows._take

    def spy(self, name, function, block_args):
        key = (self._view_key(), name)
        base, floor = (name[0], name[1]) if isinstance(name, tuple) else (name, 0.0)
        waiting = key in self.passes.ready or any(p[0] == key for p in self.passes.pending)
        carries = (self._view_key(), base) in self.passes.riders
        if base in _AHEAD and floor == 0.0 and not waiting and not carries:
            late.append(base)
        return original(self, name, function, block_args)

    monkeypatch.setattr(Rows, "_take", spy)
    X = np.random.default_rng(0).normal(size=(3000, 5)) * [4.0, 3.0, 2.0, 1.0, 0.5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make().fit(X)
    return late


@pytest.mark.parametrize("name", sorted(_AHEAD_FITS))
def test_every_statistic_needing_no_release_rides_on_the_first_passes(monkeypatch, name):
    assert _computed_late(monkeypatch, _AHEAD_FITS[name]) == []


def test_a_step_the_requests_miss_is_caught(monkeypatch):
    # (as a renamed step would be: its statistic then takes a pass of its own)
    monkeypatch.setattr("sklearn_dppca._base.first_pass_requests",
                        lambda plan, radial, total_first, divided=False: Bunch(
                            scaled="scale" in plan, raw=[], rows=[], scores=[]))
    assert set(_computed_late(monkeypatch, _AHEAD_FITS["pca-scale-clipped"])) == \
        {RADIUS, SPREAD_BOUNDS, TOTAL_BOUND, TWO_SIDED}


@pytest.mark.parametrize("bounds", [None, [(-40.0, 40.0)] * 5])
@pytest.mark.parametrize("broken", [False, True])
def test_a_scaled_fit_whose_spreads_are_not_bought_sums_its_pairs_once(
        monkeypatch, bounds, broken):
    # scale=True on 150 rows at eps 1: the plan buys no spreads, and the rows
    # are divided by the box's units or by 1; the Kendall sum is computed once,
    # on the divided view the directions read (broken: the first pass asked
    # for it on the raw rows too, as before, and threw it away)
    import sklearn_dppca._algorithms._plan as plan_module

    if broken:
        original = plan_module.first_pass_requests
        monkeypatch.setattr("sklearn_dppca._base.first_pass_requests",
                            lambda plan, radial, total_first, divided=False:
                            original(plan, radial, total_first))
    sums = []
    original_ahead = Rows._pair_sum_ahead

    def spy(self, floor, pairs, name, progress=None):
        if name == KENDALL_MATRIX and floor == 0.0:
            sums.append(self._view_key())
        return original_ahead(self, floor, pairs, name, progress)

    monkeypatch.setattr(Rows, "_pair_sum_ahead", spy)
    X = np.random.default_rng(0).normal(size=(150, 5)) * [4.0, 3.0, 2.0, 1.0, 0.5]
    fit = _quiet_fit(DPPCA(eps=1.0, scale=True, bounds=bounds, random_state=0), X)
    assert "scale" not in {step.split("/")[0] for step in
                           fit.plan_.loc[fit.plan_.released, "step"]}
    assert len(set(sums)) == (2 if broken else 1)


# ----------------------------------------------------- the box's data-unit noise

def _box(centre, half):
    return [(c - h, c + h) for c, h in zip(centre, half)]


def test_a_tighter_box_shows_less_noise_in_the_data_units():
    # the relative noise (scale-free) is the same for a box and the same box
    # twice as wide; the data-unit noise of the box's moments scales with it:
    # a variance or total by 4, a mean by 2
    centre, half = np.full(6, 7.0), np.linspace(4.0, 1.0, 6)
    plans = [DPPCA(eps=4.0, bounds=_box(centre, half * factor)).plan(600, 6)
             .set_index("step") for factor in (1.0, 2.0)]
    np.testing.assert_array_equal(plans[0]["noise_sd"], plans[1]["noise_sd"])
    ratio = plans[1]["data_noise_sd"] / plans[0]["data_noise_sd"]
    assert ratio["scree/variances/statistic"] == pytest.approx(4.0, rel=1e-12)
    assert ratio["scree/total variance/statistic"] == pytest.approx(4.0, rel=1e-12)
    assert ratio["scree/mean"] == pytest.approx(2.0, rel=1e-12)
    assert math.isnan(plans[0].loc["loading", "data_noise_sd"])
    # radial="covariance": the directions' mean and covariance are box forms
    covariance = [DPPCA(eps=4.0, radial="covariance", bounds=_box(centre, half * factor))
                  .plan(600, 6).set_index("step")["data_noise_sd"] for factor in (1.0, 2.0)]
    assert covariance[1]["loading/mean"] / covariance[0]["loading/mean"] == \
        pytest.approx(2.0, rel=1e-12)
    assert covariance[1]["loading/statistic"] / covariance[0]["loading/statistic"] == \
        pytest.approx(4.0, rel=1e-12)
    # no box: no data units; scale=True: the scree's units are the spreads'
    assert DPPCA(eps=4.0).plan(600, 6)["data_noise_sd"].isna().all()
    scaled = DPPCA(eps=4.0, scale=True, bounds=_box(centre, half)).plan(3000, 6)
    on = scaled.set_index("step")["data_noise_sd"]
    assert on["scale/statistic"] > 0 and on["scale/mean"] > 0
    assert on[[step for step in on.index if step.startswith("scree")]].isna().all()


def test_the_box_form_fit_has_no_more_noise_than_the_plan_shows():
    # rows centred in their box (the plan's case): the released variances'
    # noise sd, in the data's units, is within what the plan said before the fit
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.0, 1.0, size=(3000, 4)) * np.array([3.0, 2.0, 1.0, 0.5]) + 5.0
    bounds = _box(np.full(4, 5.0), [3.0, 2.0, 1.0, 0.5])
    estimator = DPPCA(n_components=2, eps=4.0, bounds=bounds, random_state=0)
    planned = estimator.plan(3000, 4).set_index("step")["data_noise_sd"]
    fitted = _quiet_fit(estimator, X)
    assert fitted.clip_bounds_ is None        # (the box's form was the quieter)
    assert np.all(fitted.noise_scale_ <= planned["scree/variances/statistic"] * 1.02)
    # and not far below it: the plan's is a bound, not a guess of another scale
    assert fitted.noise_scale_[0] > planned["scree/variances/statistic"] / 3


def test_the_command_line_plan_shows_the_data_units_only_with_a_box():
    from sklearn_dppca._summary import plan_text

    boxed = plan_text(DPPCA(eps=4.0, bounds=[(0.0, 14.0)] * 6).plan(600, 6), 4.0, 600)
    assert "in units" in boxed.splitlines()[0]
    assert "in units: the noise sd in the data's own units" in boxed
    bare = plan_text(DPPCA(eps=4.0).plan(600, 6), 4.0, 600)
    assert "in units" not in bare


def test_a_budget_tree_is_allocated_once_per_grant():
    # the cache of allocations: the same tree and grant give the same plan,
    # equal to a fresh allocation; another grant another plan; bounded in size
    from sklearn_dppca._base import _KEPT_PLANS, _PLANS, _allocated

    tree = {"a": (0.5, "gaussian"), "b": (0.5, {"c": (1.0, "pure")})}
    first = _allocated(tree, 1.0, 1e-5, "gdp")
    assert _allocated(dict(tree), 1.0, 1e-5, "gdp") is first
    assert first.allocations == BudgetTree(tree).allocate(1.0, 1e-5, "gdp").allocations
    other = _allocated(tree, 2.0, 1e-5, "gdp")
    assert other is not first and other["a"].mu > first["a"].mu
    assert _allocated(tree, 1.0, 1e-5, "basic")["a"].mu is None
    for extra in range(_KEPT_PLANS + 10):
        _allocated(tree, 1.0 + extra, 1e-5, "gdp")
    assert len(_PLANS) == _KEPT_PLANS


def test_share_needed_is_the_least_share_that_buys_the_part():
    from sklearn_dppca._algorithms._plan import share_needed, _suggested_split

    split = {"loading": 0.35, "scree": 0.3, "score": 0.35}
    asked = []

    def buys(trial):
        asked.append(trial)
        assert 0.98 <= math.fsum(trial.values()) <= 1.0
        # the others keep their proportion, rounded down to what a user types
        assert trial["loading"] == trial["score"] == math.floor(
            (1 - trial["scree"]) / 2 * 100 + 1e-9) / 100
        return trial["scree"] >= 0.537
    share = share_needed(split, "scree", buys)
    assert share == 0.54 and len(asked) <= 8
    # typed as a user would: the part at its share, the others rounded down
    assert _suggested_split(split, "scree", share) == {"loading": 0.23, "scree": 0.54,
                                                       "score": 0.23}
    # none up to 0.95 of the total, or no other part to take it from: inf
    assert share_needed(split, "scree", lambda trial: False) == math.inf
    assert share_needed({"loading": 0.0, "scree": 0.5}, "scree", buys) == math.inf
    # a split that loses what the fit buys now is not named: checked once, at
    # the least share that buys the part (a larger one gives the others less)
    kept = []
    assert share_needed(split, "scree", buys,
                        lambda trial: kept.append(trial) or False) == math.inf
    assert kept == [_suggested_split(split, "scree", 0.54)]
    assert share_needed(split, "scree", buys, lambda trial: True) == 0.54
    # a split whose total is below 1 keeps its total
    partial = {"loading": 0.3, "scree": 0.2, "score": 0.3}
    assert share_needed(partial, "scree", lambda trial: 0.78 <= math.fsum(
        trial.values()) <= 0.8 and trial["scree"] >= 0.4) == 0.4


@pytest.mark.parametrize("params, n, p, part", [
    ({"bounds": [(4.3, 7.9), (2.0, 4.4), (1.0, 6.9), (0.1, 2.5)]}, 150, 4, "scree"),
    ({"eps": 1.0}, 300, 6, "scree"),
    ({"eps": 2.0}, 150, 4, "scree"),
])
def test_the_split_the_plan_names_buys_the_part_and_a_smaller_share_does_not(
        params, n, p, part):
    # exact agreement with the plan itself: the split it names buys the part,
    # and a share 0.01 below it (the others in proportion) does not
    from sklearn_dppca._algorithms._plan import _suggested_split

    estimator = DPPCA(n_components=3, **params)
    plan = estimator.plan(n, p, splits=True)
    rows = plan[plan.step.str.startswith(part + "/") | (plan.step == part)]
    share, text = rows.share_needed.iloc[0], rows.split_needed.iloc[0]
    assert math.isfinite(share) and (rows.share_needed == share).all()
    named = dict((name, float(value)) for name, value in
                 (item.split("=") for item in text.split(",")))
    assert named[part] == pytest.approx(share)
    bought = estimator.set_params(budget_split=named).plan(n, p)
    assert bought[bought.step.str.startswith(part)].released.all()
    split = dict(DPPCA(**params)._validated_params()["split"])
    below = estimator.set_params(budget_split=_suggested_split(split, part, share - 0.01))
    plan_below = below.plan(n, p)
    assert not plan_below[plan_below.step.str.startswith(part)].released.any()
    # the rows the plan runs say nothing, and the plan without splits is the
    # same plan, its two columns aside
    released = plan[plan.released]
    assert released.share_needed.isna().all() and (released.split_needed == "").all()
    plain = DPPCA(n_components=3, **params).plan(n, p)
    assert plain.equals(plan.drop(columns=["share_needed", "split_needed"]))


def test_a_part_held_back_for_bounds_or_out_of_reach_names_no_split():
    # iris's shape with its observed ranges at eps 1: the score summary is held
    # back (the same fit without bounds does not buy it): no split is offered;
    # wine's shape: no share of the grant buys its scree at eps 1
    iris = DPPCA(n_components=3, bounds=[(4.3, 7.9), (2.0, 4.4), (1.0, 6.9),
                                         (0.1, 2.5)]).plan(150, 4, splits=True)
    score = iris[iris.step.str.startswith("score")]
    assert score.share_needed.isna().all() and (score.split_needed == "").all()
    wine = DPPCA(n_components=3, bounds=[(0.0, 1.0)] * 13).plan(178, 13, splits=True)
    scree = wine[wine.step.str.startswith("scree")]
    assert np.isinf(scree.share_needed).all() and (scree.split_needed == "").all()


@pytest.mark.parametrize("params, n, p", [
    ({"bounds": [(4.3, 7.9), (2.0, 4.4), (1.0, 6.9), (0.1, 2.5)]}, 150, 4),
    ({}, 150, 4),
    ({"scale": True}, 500, 10),
])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_a_step_never_needs_the_eps_it_has(params, n, p, eps):
    # eps_needed is an eps that buys the step, to two significant figures: a
    # step not bought at eps never needs "about" eps or less (iris's shape with
    # its observed ranges at eps 1: the total's statistic needs 1.02, which
    # rounded to the nearest read "1")
    plan = DPPCA(n_components=3, eps=eps, **params).plan(n, p)
    needed = plan.eps_needed[np.isfinite(plan.eps_needed)]
    assert (needed > eps).all()


def _least_split_that_buys(params, n, p, part):
    """The least share's split that buys ``part``, searched without asking
    whether it keeps what the fit buys now (through the public plan)."""
    from sklearn_dppca._algorithms._plan import share_needed, _suggested_split

    def buys(trial):
        plan = DPPCA(n_components=3, budget_split=trial, **params).plan(n, p)
        return bool(plan[plan.step.str.startswith(part)].released.all())

    split = dict(DPPCA(**params)._validated_params()["split"])
    share = share_needed(split, part, buys)
    assert math.isfinite(share)
    return _suggested_split(split, part, share)


def test_a_split_that_loses_what_the_fit_buys_is_not_named():
    # wine's shape at eps 4 buys its scree; its score summary is bought only
    # with 0.95 of the grant, where the scree is lost: no split is named
    params = {"eps": 4.0}
    plan = DPPCA(n_components=3, **params).plan(178, 13, splits=True)
    assert plan[plan.step.str.startswith("scree")].released.all()
    score = plan[plan.step.str.startswith("score")]
    assert np.isinf(score.share_needed).all() and (score.split_needed == "").all()
    least = _least_split_that_buys(params, 178, 13, "score")
    trial = DPPCA(n_components=3, budget_split=least, **params).plan(178, 13)
    assert not trial[trial.step.str.startswith("scree")].released.any()


def test_a_split_that_leaves_the_directions_to_noise_is_not_named():
    # 150 rows x 30 columns at eps 2: the scree's least split would push the
    # Kendall matrix's predicted noise past the plan's limit for directions
    from sklearn_dppca._algorithms._plan import _RELATIVE_NOISE

    params = {"eps": 2.0}
    plan = DPPCA(n_components=3, **params).plan(150, 30, splits=True)
    limit = _RELATIVE_NOISE["kendall"]
    assert plan.loc[plan.step == "loading", "noise_sd"].item() <= limit
    scree = plan[plan.step.str.startswith("scree")]
    assert np.isinf(scree.share_needed).all() and (scree.split_needed == "").all()
    least = _least_split_that_buys(params, 150, 30, "scree")
    trial = DPPCA(n_components=3, budget_split=least, **params).plan(150, 30)
    assert trial.loc[trial.step == "loading", "noise_sd"].item() > limit


def test_the_plans_text_names_the_split_beside_the_eps():
    from sklearn_dppca._summary import plan_text

    estimator = DPPCA(n_components=3, bounds=[(4.3, 7.9), (2.0, 4.4), (1.0, 6.9),
                                              (0.1, 2.5)])
    plan = estimator.plan(150, 4, splits=True)
    split = plan.loc[plan.step == "scree/mean", "split_needed"].item()
    text = plan_text(plan, 1.0, 150)
    assert f"variances and PVE (needs eps about 1.5, or at this eps the split {split})" \
        in text
    # without splits: the eps alone
    assert "or at this eps" not in plan_text(estimator.plan(150, 4), 1.0, 150)


def test_the_plans_text_writes_a_large_eps_out():
    # 12 rows at eps 1: the score summary needs eps about 190, written so, as
    # the plan's own column holds it (not "1.9e+02")
    from sklearn_dppca._summary import plan_text

    plan = DPPCA(n_components=2, eps=1.0).plan(12, 4)
    largest = plan.eps_needed.max()
    assert 100 <= largest < 1000
    text = plan_text(plan, 1.0, 12)
    assert f"score summary (needs eps about {largest:.0f})" in text
    assert "e+" not in text


def test_a_table_of_one_part_is_that_parts_rows_of_the_whole_table():
    # (the held-back summary's eps and the split search read only what they
    # need: the same rows, exactly, and nothing of the other parts)
    estimator = DPPCA(n_components=3, eps=1.0)
    from sklearn_dppca._data._rows import block_sizes
    from sklearn_dppca.privacy import PrivacyLedger

    spec = estimator._public_plan(estimator._validated_params(), 150, 4,
                                  ["a", "b", "c", "d"], block_sizes(150, None),
                                  PrivacyLedger())
    _, whole, kept = estimator._bought(spec.parts, spec.grant, spec.settings)
    assert "score" not in kept and "scree" not in kept
    for part in ("loading", "scree", "score"):
        _, rows, _ = estimator._bought(spec.parts, spec.grant, spec.settings, part=part)
        assert rows == [row for row in whole if row["step"].split("/")[0] == part]
        assert rows
    assert estimator._bought(spec.parts, spec.grant, spec.settings, table=False)[1] is None
