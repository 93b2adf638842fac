"""Private spreads (scale=True), the total variance, PVE of the total, the frame."""

import math
import warnings

import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator

from ._kendall_support import one_block
from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, PrivacyUtilityWarning
from sklearn_dppca._algorithms._scores import _additive_threshold
from sklearn_dppca._algorithms._spread import _box_units, _unreliable_spreads
from sklearn_dppca._algorithms._variances import (
    explained_variance_ratio,
    implied_feature_variances,
    _norm_clipped_scatter,
)
from sklearn_dppca.datasets import load_adult, make_gaussian_clusters
from sklearn_dppca.privacy import interval_quantile, positive_quantile
from sklearn.utils import Bunch


def quiet(estimator, X, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return estimator.fit(X, y)


@pytest.mark.parametrize("unit", [1e-9, 1.0, 1e9])
def test_positive_quantile_keeps_its_resolution_in_any_unit(unit):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(20_000) * unit) ** 2 / 2
    estimates = [positive_quantile(x, 0.9, 1.0, rng) for _ in range(20)]
    levels = [np.mean(x < estimate) for estimate in estimates]
    assert 0.88 <= np.median(levels) <= 0.91


def test_positive_quantile_puts_zeros_below_every_point():
    rng = np.random.default_rng(1)
    x = np.r_[np.zeros(9000), np.full(1000, 5.0)]
    assert positive_quantile(x, 0.97, 2.0, rng) == pytest.approx(5.0, rel=0.051)


def test_interval_quantile_resolution_is_absolute():
    rng = np.random.default_rng(2)
    x = 1e6 + rng.standard_normal(20_000)
    centre = interval_quantile(x - 1e6, 0.5, 1.0, rng, low=-20.0, high=20.0)
    assert abs(centre - np.median(x - 1e6)) < 0.05


def test_small_budget_warns_in_the_utility_category():
    rng = np.random.default_rng(3)
    with pytest.warns(PrivacyUtilityWarning, match="probably stopped far"):
        positive_quantile(np.arange(100.0), 0.97, 0.01, rng)


def adversarial_neighbours(n=40, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    Y = X.copy()
    Y[0] = 1e6 * np.ones(p)      # one row moved as far as possible
    return X, Y


@pytest.mark.parametrize("pairs", ["all", 3])
def test_total_variance_statistic_moves_at_most_2C_over_n(pairs):
    X, Y = adversarial_neighbours()
    bound = 0.7
    # all rows equal, then one moved far: every term of that row goes from 0 to C
    X, Y = np.zeros_like(X), np.zeros_like(Y)
    Y[0] = 1e3
    totals = [np.trace(_norm_clipped_scatter(one_block(Z, 5), bound, pairs, "s"))
              for Z in (X, Y)]
    assert abs(totals[0] - totals[1]) <= 2 * bound / X.shape[0] * (1 + 1e-12)
    if pairs == "all":
        assert abs(totals[0] - totals[1]) == pytest.approx(2 * bound / X.shape[0])


def test_projected_clip_sensitivity_on_adversarial_neighbours():
    X, Y = adversarial_neighbours(p=6)
    V = np.linalg.qr(np.random.default_rng(1).normal(size=(6, 2)))[0].T
    bound = 0.5
    diag = [np.diag(_norm_clipped_scatter(one_block(Z @ V.T), bound, "all", "s"))
            for Z in (X, Y)]
    assert np.linalg.norm(diag[0] - diag[1]) <= 2 * math.sqrt(2) * bound / X.shape[0] * (1 + 1e-12)


def test_pve_is_a_share_of_the_total():
    ratios, total = explained_variance_ratio(np.array([5.0, 3.0]), 10.0)
    np.testing.assert_allclose(ratios, [0.5, 0.3])
    ratios, total = explained_variance_ratio(np.array([5.0, 3.0]), 6.0)   # noisy total
    assert total == 8.0 and ratios.sum() == pytest.approx(1.0)
    with pytest.warns(PrivacyUtilityWarning):
        ratios, total = explained_variance_ratio(np.array([0.0, 0.0]), -1.0)
    assert total == 0.0 and not ratios.any()


def test_implied_feature_variances_sum_to_the_total_and_are_exact_at_k_equal_p():
    rng = np.random.default_rng(0)
    S = np.cov(rng.normal(size=(500, 4)) @ rng.normal(size=(4, 4)), rowvar=False)
    values, vectors = np.linalg.eigh(S)
    np.testing.assert_allclose(implied_feature_variances(vectors.T, values, values.sum()),
                               np.diag(S))
    top = vectors[:, -2:].T
    implied = implied_feature_variances(top, values[-2:], np.trace(S))
    assert implied.sum() == pytest.approx(np.trace(S))
    # isotropic rest: exact again
    S_iso = top.T @ np.diag([9.0, 4.0]) @ top + 1.5 * (np.eye(4) - top.T @ top)
    np.testing.assert_allclose(implied_feature_variances(top, np.array([9.0, 4.0]),
                                                         np.trace(S_iso)), np.diag(S_iso))


def test_unreliable_spreads_are_not_estimable():
    released = Bunch(raw=np.array([4.0, 1e-3, 2.0, 1e-250, 4.0, 4.0]),
                     noise_scale=np.array([0.1, 0.01, 0.1, 1e-260, 0.1, 0.1]),
                     clip_bounds=np.array([20.0, 1.0, 2.05, 1e-240, 20.0, 20.0]),
                     clipped_share=np.array([0.1, 0.1, 0.1, 0.1, 0.45, 0.1]),
                     separated=np.array([True] * 5 + [False]))
    # not estimable: noise alone, at its bound, a collapsed bound, too many
    # pairs clipped, a search that could not tell the column from zero
    np.testing.assert_array_equal(_unreliable_spreads(released), [False] + [True] * 5)
    # with declared bounds nothing is clipped: only the noise decides
    boxed = Bunch(**dict(released, clipped_share=None, separated=None))
    np.testing.assert_array_equal(_unreliable_spreads(boxed),
                                  [False, True, False, False, False, False])


def test_box_units_are_the_widths_over_root_twelve():
    # the sd of a value spread evenly over the range; a zero width keeps its unit
    np.testing.assert_array_equal(_box_units([math.sqrt(12.0), 0.0, 6.0]),
                                  [1.0, np.nan, 6.0 / math.sqrt(12.0)])


def zero_inflated(n=6400, seed=1):
    """Eight Gaussian columns and one of 68% zeros (the rest exponential, to one
    decimal): the tied pairs fill the bottom of the spreads' search grid."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 9)) * [3, 2, 1, 1, 1, 2, 1, 1, 1] + 20
    X[:, 8] = np.where(rng.random(n) < 0.68, 0.0, rng.exponential(2.0, n).round(1))
    return X


@pytest.mark.parametrize("seed", [1, 3, 4])
def test_a_zero_inflated_column_never_collapses_its_spread(seed):
    # before the tied and clipped shares, these seeds' searches stopped among the
    # zeros: a spread of 1e-50 to 1e-92 of the column's sd, a PC1 variance of
    # 1e99 to 1e182 printed as estimable
    X = zero_inflated()
    pca = quiet(DPPCA(eps=1.0, scale=True, random_state=seed), X)
    released = np.isfinite(pca.scale_)
    assert not released[8]
    ratio = pca.scale_[released] / X.std(axis=0)[released]
    assert np.all((ratio > 0.5) & (ratio < 1.5))
    variances = pca.explained_variance_[np.isfinite(pca.explained_variance_)]
    assert np.all(variances <= 2 * X.shape[1])


def mixed_units(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    R = np.full((4, 4), 0.6) + 0.4 * np.eye(4)
    R[:2, 2:] = R[2:, :2] = 0.0
    Z = rng.multivariate_normal(np.zeros(4), R, size=n)
    return Z * np.array([1e-3, 1.0, 1e2, 1e4]) + 5e3, R


def test_scale_recovers_the_correlation_pca_in_mixed_units():
    X, R = mixed_units()
    # (seed 0's tail count flags its variances, the rare false alarm of a light
    # tail: not estimable; seeds 1 to 3 print them)
    pca = quiet(DPPCA(n_components=2, eps=1.0, scale=True, random_state=1), X)
    top = np.linalg.eigh(R)[1][:, -2:].T
    singular = np.linalg.svd(pca.components_ @ top.T, compute_uv=False)
    assert math.sqrt(2 - np.sum(singular**2)) < 0.15
    assert pca.scale_ == pytest.approx(X.std(axis=0) * pca.scale_[1] / X[:, 1].std(), rel=0.15)
    # the scaled columns' implied variances: near 1, summing to the total
    np.testing.assert_allclose(pca.feature_variance_, 1.0, atol=0.25)
    assert pca.feature_variance_.sum() == pytest.approx(pca.total_variance_)
    # the first two PCs of R hold 0.8 of its trace
    assert pca.explained_variance_ratio_.sum() == pytest.approx(0.8, abs=0.08)
    np.testing.assert_allclose(pca.transform(X[:5]),
                               (X[:5] / pca.scale_) @ pca.components_.T)


def test_scale_is_recorded_in_the_ledger_and_split():
    X, _ = mixed_units(5000)
    pca = quiet(DPPCA(eps=1.0, scale=True, pairs=64, random_state=0), X)
    steps = [entry["step"] for entry in pca.privacy_ledger_]
    # 4 bounds, the clipped and tied shares, the statistic
    assert sum(step.startswith("scale/") for step in steps) == 6
    assert pca.budget_["scale"] == (0.2, pytest.approx(2e-6))
    assert sum(e["eps"] for e in pca.privacy_ledger_) == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"budget_split\['scale'\]"):
        DPPCA(scale=True, budget_split={"loading": 0.5, "scree": 0.5}).fit(X)
    with pytest.raises(ValueError, match="only with scale=True"):
        DPPCA(budget_split={"loading": 0.4, "scree": 0.3, "scale": 0.3}).fit(X)


@pytest.mark.parametrize("Estimator", [DPKendallDirections, DPScree])
def test_every_estimator_takes_scale(Estimator):
    X, _ = mixed_units(5000)
    fitted = quiet(Estimator(n_components=2, scale=True, random_state=0), X)
    assert fitted.scale_.shape == (4,) and np.all(fitted.scale_ > 0)
    assert fitted.privacy_spent_[0] == pytest.approx(1.0)


def test_scree_reusing_scaled_directions_must_agree():
    X, _ = mixed_units(3000)
    directions = quiet(DPKendallDirections(n_components=2, eps=0.5, scale=True,
                                           random_state=0), X)
    scree = quiet(DPScree(directions=FrozenEstimator(directions), scale=True, delta=2e-5, random_state=0), X)
    np.testing.assert_array_equal(scree.scale_, directions.scale_)
    with pytest.raises(ValueError, match="must agree"):
        DPScree(directions=FrozenEstimator(directions), scale=False).fit(X)


def test_frame_keeps_its_width_far_from_the_origin():
    # Any seed: the radius level keeps the search's target inside the cloud, so
    # no fit overshoots near the origin and not far from it (random_state=2 at
    # the old level of 0.97 reached 8 times the others' radius).
    X, y = make_gaussian_clusters(return_groups=True, random_state=0)
    widths = [quiet(DPPCA(eps=1.0, random_state=seed), X + shift).frame_.half_width
              for seed in range(4) for shift in (0.0, 1e6)]
    near, far = np.array(widths[0::2]), np.array(widths[1::2])
    assert np.all(far / near < 1.25) and np.all(near / far < 1.25)


def test_additive_threshold_controls_noise_only_cells():
    sds, expected = _additive_threshold(400)
    assert expected == pytest.approx(0.25) and sds == pytest.approx(3.227, abs=1e-3)
    sds, expected = _additive_threshold(2000)
    assert expected == pytest.approx(0.25) and sds == pytest.approx(3.662, abs=1e-3)
    assert _additive_threshold(400, 0)[1] == pytest.approx(200)
    X, y = make_gaussian_clusters(return_groups=True, random_state=0)
    pca = quiet(DPPCA(groups=sorted(set(y)), random_state=0), X, y)
    assert pca.expected_noise_cells_ == pytest.approx(0.25)
    noise = [e for e in pca.privacy_ledger_ if e["step"] == "score/histogram"][0]["noise_scale"]
    cells = 5 * pca.score_histogram_.size
    assert pca.histogram_threshold_ == pytest.approx(_additive_threshold(cells)[0] * noise)


def test_noise_dominated_variances_warn():
    # isotropic data, one strong direction: the small variances are noise at eps 0.2
    X = np.random.default_rng(0).normal(size=(3000, 6)) * [5.0, 0.1, 0.1, 0.1, 0.1, 0.1]
    # (the clipped release alone: the elliptical combination would make the small
    # variances estimable from the Kendall matrix)
    with pytest.warns(PrivacyUtilityWarning, match="not two noise sds above zero"):
        scree = DPScree(n_components=6, eps=1.0, scree_params={"elliptical": "off"},
                        random_state=0).fit(X)
    # a variance not two noise sds above zero is noise alone: not estimable
    noisy = scree.explained_variance_raw_ <= 2 * scree.noise_scale_
    assert noisy.any() and np.all(np.isnan(scree.explained_variance_[noisy]))


def test_adult_scaled_gives_a_positive_scree_in_scaled_units_only():
    table = load_adult().data
    sds = table.to_numpy(dtype=float).std(axis=0)
    seen = set()
    for seed in range(2):
        pca = quiet(DPPCA(eps=1.0, scale=True, pairs=64, random_state=seed), table)
        # capital_loss (95% zeros, 91% of its pairs tied) may not be told from
        # zero: NaN; every other spread is released, none collapsed
        assert np.all(np.isfinite(np.delete(pca.scale_, 3)))
        released = np.isfinite(pca.scale_)
        assert np.all(pca.scale_[released] > 0.3 * sds[released])
        assert pca.scale_[2] > 100          # capital_gain, in dollars, 92% zeros
        seen.add(bool(released.all()))
        if released.all():
            assert np.all(pca.explained_variance_ > 0)
            # (the PVE, or none where the total's search overshot: its level is
            # high for its budget, and an overshot bound's noise hides the total)
            assert 0 < pca.explained_variance_ratio_.sum() < 1 \
                or np.isnan(pca.total_variance_)
        else:
            # capital_loss in dollars beside four scaled columns: mixed units
            assert np.all(np.isnan(pca.explained_variance_))
            assert np.isnan(pca.total_variance_)
    assert seen == {True, False}            # (both cases, in these two seeds)


def test_a_scree_in_mixed_units_is_not_estimable():
    # the zero-inflated column keeps its own units beside eight scaled ones: the
    # variances the scree released are in mixed units, not a correlation PCA's
    X = zero_inflated()
    with pytest.warns(PrivacyUtilityWarning, match=r"scale=True: x8 kept their own "
                                                   r"units .*mixed units"):
        pca = DPPCA(eps=1.0, scale=True, random_state=1).fit(X)
    assert np.isnan(pca.scale_[8]) and np.isfinite(pca.scale_[:8]).all()
    assert np.all(np.isnan(pca.explained_variance_))
    assert np.all(np.isnan(pca.explained_variance_ratio_))
    assert np.isnan(pca.total_variance_)
    # (released and paid for before the spreads were known: in the ledger)
    assert any(e["step"] == "scree/variances/statistic" for e in pca.privacy_ledger_)
    # without x8 every column is scaled, and the scree is printed
    eight = quiet(DPPCA(eps=1.0, scale=True, random_state=1), X[:, :8])
    assert np.isfinite(eight.scale_).all()
    assert np.isfinite(eight.explained_variance_[0])


def test_a_search_that_cannot_reach_the_data_is_not_run():
    # a clip bound's search with almost no budget would stop at the bottom of its
    # range (every pair clipped, a release of about 1e-300): the plan does not buy
    # the scree, its values are NaN and nothing of it is in the ledger
    X = np.random.default_rng(0).normal(size=(2000, 3)) * 5.0
    scree = DPScree(eps=1.0, scree_params={"quantile_share": 0.001, "bound": "own"},
                    random_state=0).fit(X)
    assert not scree.plan_.loc[scree.plan_.step.str.startswith("scree"), "released"].any()
    assert np.all(np.isnan(scree.explained_variance_))
    assert np.isnan(scree.total_variance_)
    assert not any(e["step"].startswith("scree") for e in scree.privacy_ledger_)


def test_clipped_to_the_bound_compares_each_estimate_with_its_bound():
    from sklearn_dppca._algorithms._variances import clipped_to_the_bound

    np.testing.assert_array_equal(
        clipped_to_the_bound([0.2, 0.95, 1.0], [1.0, 1.0, 1.2]), [False, True, False])


def test_a_column_name_with_a_slash_does_not_nest_a_budget_step():
    # wine's "od280/od315_of_diluted_wines": a "/" separates budget parts, so the
    # column's clip bound step is written with "_" (the fit used to fail in its plan)
    import pandas as pd

    X = pd.DataFrame(np.random.default_rng(0).normal(size=(3000, 3)),
                     columns=["a/b", "c", "d"])
    est = DPPCA(scale=True, eps=4.0, random_state=0).fit(X)
    steps = list(est.plan_["step"])
    assert "scale/clip bound a_b" in steps
    assert not any(step.startswith("scale/clip bound a/") for step in steps)
    ledger = [entry["step"] for entry in est.privacy_ledger_
              if entry["step"].startswith("scale/")]
    assert ledger == [step for step, bought in zip(steps, est.plan_["released"])
                      if bought and step.startswith("scale/")]
