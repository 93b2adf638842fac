"""No number that is only noise: NaN (not estimable) quantities and loadings lost
in their noise, in the displays, the summary and the releases."""

import json
import warnings
import math
import re

import matplotlib
import numpy as np
import pytest
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from sklearn_dppca import (
    DPPCA,
    DPKendallDirections,
    PrivacyUtilityWarning,
    export_release,
    load_release,
)
from sklearn_dppca._algorithms._loading_noise import loading_noise_scale
from sklearn_dppca.display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
    plot_overview,
)
from sklearn_dppca.privacy import symmetric_gaussian_noise

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _not_estimable(est):
    """``est`` with every variance-like quantity NaN and no score summary."""
    k, p = est.components_.shape
    est.explained_variance_ = np.full(k, np.nan)
    est.explained_variance_raw_ = np.full(k, np.nan)
    est.explained_variance_ratio_ = np.full(k, np.nan)
    est.noise_scale_ = np.full(k, np.nan)
    est.total_variance_ = np.nan
    est.total_variance_noise_scale_ = np.nan
    est.feature_variance_ = np.full(p, np.nan)
    est.feature_variance_noise_scale_ = np.full(p, np.nan)
    if hasattr(est, "frame_"):
        est.frame_ = est.bin_edges_ = est.score_histogram_ = None
        est.score_histograms_ = est.synthetic_scores_ = est.synthetic_groups_ = None
        est.histogram_threshold_ = est.expected_noise_cells_ = None
    return est


def _texts(fig):
    return " ".join(t.get_text() for t in fig.findobj(Text))


def _axis_labels(fig):
    return [label for ax in fig.axes for label in (ax.get_xlabel(), ax.get_ylabel())]


def _drawn_values(fig):
    """Every y (and x) a line, bar or collection of the figure draws."""
    values = []
    for ax in fig.axes:
        for line in ax.lines:
            values.extend(np.asarray(line.get_ydata(), dtype=float).ravel())
        for patch in ax.patches:
            if isinstance(patch, Rectangle):
                values.append(patch.get_height())
        for collection in ax.collections:
            offsets = np.asarray(collection.get_offsets(), dtype=float)
            values.extend(offsets.ravel())
    return np.asarray(values, dtype=float)


@pytest.mark.parametrize("draw", [
    lambda est: ScreeDisplay.from_estimator(est).figure_,
    lambda est: ScreeDisplay.from_estimator(est, kind="variance").figure_,
    lambda est: ScreeDisplay.from_estimator(est, kind="pve", cumulative=True).figure_,
    lambda est: ScreeDisplay.from_estimators([est], kind="pve")[0].figure_,
    lambda est: LoadingDisplay.from_estimator(est).figure_,
    lambda est: LoadingDisplay.from_estimator(est, kind="heatmap").figure_,
    lambda est: VariableDisplay.from_estimator(est).figure_,
    lambda est: ScoreDisplay.from_estimator(est).figure_,
    lambda est: BiplotDisplay.from_estimator(est).figure_,
    lambda est: plot_overview(est),
], ids=["scree", "scree-variance", "scree-pve", "scree-overlay", "loading",
        "heatmap", "variable", "score", "biplot", "overview"])
def test_a_fit_with_nothing_estimable_draws_no_nan_and_says_so(make_fake, draw):
    est = _not_estimable(make_fake("dppca"))
    fig = draw(est)
    assert not np.any(np.isnan(_drawn_values(fig)))
    assert not any("%" in label for label in _axis_labels(fig))
    assert "not estimable" in _texts(fig)
    plt.close("all")


def test_the_scree_draws_no_bar_for_a_nan_component(make_fake):
    est = make_fake("dppca")
    est.explained_variance_ = est.explained_variance_.copy()
    est.explained_variance_ratio_ = est.explained_variance_ratio_.copy()
    est.explained_variance_[2] = est.explained_variance_ratio_[2] = np.nan
    disp = ScreeDisplay.from_estimator(est, kind="both")
    assert len(disp.bars_.patches) == 2
    assert len(disp.line_.get_xdata()) == 2
    assert disp.not_estimable_.tolist() == [False, False, True]
    assert [t.get_position()[0] for t in disp.not_estimable_texts_] == [2.0]
    assert all("%" not in t.get_text() or "nan" not in t.get_text()
               for t in disp.bar_labels_)
    assert "nan" not in _texts(disp.figure_)


def test_component_label_says_not_estimable():
    from sklearn_dppca.display._labels import component_label

    assert component_label(0, [0.5, np.nan]) == "DP PC1 (50.0%)"
    assert component_label(1, [0.5, np.nan]) == "DP PC2 (PVE not estimable)"


def _monte_carlo_sd(matrix, sigma, k, runs, seed=0):
    rng = np.random.default_rng(seed)
    values, vectors = np.linalg.eigh(matrix)
    order = np.argsort(values)[::-1]
    reference = vectors[:, order[k]]
    draws = []
    for _ in range(runs):
        noisy = matrix + symmetric_gaussian_noise(matrix.shape[0], sigma, rng)
        vals, vecs = np.linalg.eigh(noisy)
        v = vecs[:, np.argsort(vals)[::-1][k]]
        draws.append(v * np.sign(v @ reference))
    return np.std(draws, axis=0)


def test_the_perturbation_formula_agrees_with_monte_carlo():
    p, sigma = 5, 0.004
    basis = np.linalg.qr(np.random.default_rng(3).normal(size=(p, p)))[0]
    matrix = basis @ np.diag([0.4, 0.25, 0.15, 0.12, 0.08]) @ basis.T
    # the noise of the released matrix has sd sigma on the diagonal,
    # sigma / sqrt(2) off it
    noise = symmetric_gaussian_noise(3000, sigma, np.random.default_rng(1))
    assert np.std(np.diag(noise)) == pytest.approx(sigma, rel=0.05)
    assert np.std(noise[np.triu_indices(3000, 1)]) == pytest.approx(
        sigma / math.sqrt(2), rel=0.05)
    released = matrix       # the formula reads the released eigenpairs
    values, vectors = np.linalg.eigh(released)
    components = vectors[:, np.argsort(values)[::-1][:3]].T
    predicted = loading_noise_scale(released, sigma, components)
    for k in range(3):
        observed = _monte_carlo_sd(matrix, sigma, k, runs=4000, seed=k)
        assert np.allclose(predicted[k], observed, rtol=0.2, atol=1e-4), k


def test_the_loading_noise_is_capped_at_one_when_eigenvalues_tie():
    components = np.eye(3)[:2]
    noise = loading_noise_scale(np.eye(3) * 0.3, 0.01, components)
    assert noise.shape == (2, 3) and np.all(noise <= 1.0)
    assert loading_noise_scale(None, 0.01, components) is None


@pytest.mark.parametrize("p", [2, 3, 4, 6, 10])
def test_a_direction_of_noise_alone_is_never_read_as_known(p):
    # a released matrix that is the noise alone (no structure): the top
    # direction's loadings must all read "anything" (sd 1). With the spectral
    # norm alone as the tie, 37% of these at p = 2 and 3% at p = 4 read known.
    rng = np.random.default_rng(p)
    sigma = 0.1
    known = 0
    for _ in range(400):
        released = symmetric_gaussian_noise(p, sigma, rng)
        values, vectors = np.linalg.eigh(released)
        top = vectors[:, [np.argmax(values)]].T
        known += bool(np.any(loading_noise_scale(released, sigma, top) < 1.0))
    assert known <= 2


def test_three_rows_show_no_structure_in_their_loadings():
    # 3 rows: the Kendall matrix is almost all noise; no seed may present a
    # loading as clear of its noise (16 of 400 did, from chance eigenvalue gaps)
    X = np.array([[1, 2, 3, 4], [2, 1, 0, 3], [5, 5, 1, 0]], float)
    for seed in range(200):
        est = DPKendallDirections(n_components=2, random_state=seed).fit(X)
        clear = np.abs(est.components_) > 2 * est.components_noise_scale_
        assert not clear.any(), seed


def test_estimators_and_releases_carry_the_loading_noise():
    X = np.random.default_rng(0).normal(size=(400, 4)) * [3.0, 2.0, 1.0, 0.5]
    est = DPKendallDirections(n_components=2, random_state=0).fit(X)
    noise = est.components_noise_scale_
    assert noise.shape == est.components_.shape and np.all(noise >= 0)
    assert np.array_equal(noise, loading_noise_scale(
        est.kendall_matrix_, est.kendall_noise_scale_, est.components_))
    loaded = load_release(json.loads(json.dumps(export_release(est, allow_seeded=True))))
    assert loaded.kendall_noise_scale_ == pytest.approx(est.kendall_noise_scale_)
    np.testing.assert_allclose(loaded.components_noise_scale_, noise)
    assert "components_noise_scale_" not in export_release(est, allow_seeded=True)
    with pytest.raises(AttributeError):
        DPKendallDirections().components_noise_scale_


def test_a_loading_lost_in_its_noise_is_drawn_uncertain(make_fake):
    est = make_fake("directions")
    noise = np.full(est.components_.shape, 0.01)
    noise[:, 0] = 5.0         # variable 0: noise far above its loadings
    est.components_noise_scale_ = noise
    disp = LoadingDisplay.from_estimator(est)
    assert disp.uncertain_.tolist() == [True] + [False] * (len(disp.uncertain_) - 1)
    weak, plain = disp.arrows_[0].arrow_patch, disp.arrows_[1].arrow_patch
    assert weak.get_linestyle() != plain.get_linestyle()
    assert weak.get_alpha() < 1 and plain.get_alpha() in (None, 1)
    # its +-2 sd cross, clipped to [-1, 1], and a legend entry
    segments = np.concatenate([np.asarray(c.get_segments()).reshape(-1, 2)
                               for c in disp.uncertain_errorbars_.lines[2]])
    assert segments.min() == pytest.approx(-1.0) and segments.max() == pytest.approx(1.0)
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert any("within noise" in text for text in legend)
    point = LoadingDisplay.from_estimator(est, kind="point")
    faces = point.scatter_.get_facecolors()
    assert faces[0][3] == 0 and faces[1][3] > 0        # hollow when uncertain
    heat = LoadingDisplay.from_estimator(est, kind="heatmap")
    assert heat.uncertain_[0].all() and len(heat.uncertain_cells_) == heat.uncertain_.sum()
    texts = [t.get_text() for t in heat.cell_texts_]
    assert texts[0] == "noise" and texts[-1] != "noise"


def test_three_rows_give_only_uncertain_loadings():
    X = np.random.default_rng(0).normal(size=(3, 4))
    est = DPKendallDirections(n_components=2, eps=1.0, random_state=0).fit(X)
    disp = LoadingDisplay.from_estimator(est)
    assert disp.uncertain_.all()
    assert all(a.arrow_patch.get_alpha() < 1 for a in disp.arrows_)
    first = str(est.summary()).splitlines()[0]
    assert first == "Released: directions (every loading within its noise)"
    assert "loadings are within their noise" in str(est.summary())


def test_the_summary_says_what_was_not_estimable(make_fake):
    est = DPPCA(eps=1.0, random_state=0).fit(
        np.random.default_rng(0).normal(size=(150, 4)))
    _not_estimable(est)
    text = str(est.summary())
    first = text.splitlines()[0]
    assert first.startswith("Released: directions")
    # (the plan says what each part would need)
    assert re.search(r"not estimable at eps = 1 with n = 150: variances and PVE "
                     r"\(needs eps about [\d.]+\), score summary "
                     r"\(needs eps about [\d.]+\)$", first), first
    assert not re.search(r"\bnan\b", text)
    assert "PVE not estimable" in text and "Total variance not estimable" in text
    loaded = load_release(json.loads(json.dumps(export_release(est, allow_seeded=True), allow_nan=False)))
    assert str(loaded.summary()).splitlines()[0] == first     # (the plan is released)


def test_the_summary_reads_the_plan(make_fake):
    import pandas as pd

    from sklearn_dppca._summary import summarize

    est = _not_estimable(make_fake("dppca"))
    est.method_label_ = "clipped"
    est.plan_ = pd.DataFrame({
        "step": ["loading", "scree/variances/statistic", "score/frame/radius"],
        "mechanism": ["gaussian"] * 3, "eps": [0.4, 0.2, 0.3], "delta": [0.0] * 3,
        "mu": [np.nan] * 3, "noise_sd": [0.1] * 3, "released": [True, False, False],
        "eps_needed": [np.nan, 3.2, 12.0]})
    first = str(summarize(est)).splitlines()[0]
    assert "variances and PVE (needs eps about 3.2)" in first
    assert "score summary (needs eps about 12)" in first


def test_nan_round_trips_in_a_release_and_inf_stays_refused(make_fake):
    est = DPPCA(eps=1.0, random_state=0).fit(
        np.random.default_rng(0).normal(size=(4000, 4)) * [4.0, 2.0, 1.0, 0.5])
    assert np.isfinite(est.explained_variance_[0])
    est.explained_variance_ = est.explained_variance_.copy()
    est.explained_variance_ratio_ = est.explained_variance_ratio_.copy()
    est.explained_variance_[1] = est.explained_variance_ratio_[1] = np.nan
    est.total_variance_ = np.nan
    release = json.loads(json.dumps(export_release(est, allow_seeded=True), allow_nan=False))
    assert release["explained_variance"][1] == "not estimable"
    assert release["total_variance"] == "not estimable"
    loaded = load_release(release)
    assert np.isnan(loaded.explained_variance_[1])
    assert loaded.explained_variance_[0] == est.explained_variance_[0]
    assert math.isnan(loaded.total_variance_)
    est.total_variance_ = np.inf
    with pytest.raises(ValueError, match="total_variance"):
        export_release(est, allow_seeded=True)
    with pytest.raises(ValueError, match="explained_variance"):
        load_release({**release, "explained_variance": ["not estimable", "oops"]})


def test_the_variable_plot_greys_a_loading_lost_in_its_noise(make_fake):
    est = make_fake("dppca")
    noise = np.full(est.components_.shape, 0.01)
    noise[:, 1] = 5.0
    est.components_noise_scale_ = noise
    disp = VariableDisplay.from_estimator(est)
    assert disp.uncertain_[disp.variables_.index("x1")]
    assert disp.uncertain_.sum() == 1


def test_a_release_within_four_noise_sds_of_zero_is_not_printed():
    # scree_values prints a variance (and the total) only four noise sds above 0:
    # its two-sd interval then lies within a factor of two of it
    from sklearn_dppca._algorithms._scree import scree_values
    from sklearn_dppca._bunch import Bunch

    released = Bunch(raw=np.array([10.0, 3.9, 4.1]), noise_scale=np.array([1.0, 1.0, 1.0]),
                     bounds=None, total=30.0, total_noise=1.0)
    values = scree_values(released, monotone=False)
    assert np.isfinite(values.explained_variance[[0, 2]]).all()
    assert np.isnan(values.explained_variance[1])
    noisy_total = Bunch(**dict(released, total=3.9 * 16, total_noise=16.0))
    assert np.isnan(scree_values(noisy_total, monotone=False).total_variance)


def test_a_share_is_printed_by_the_variances_four_sd_rule():
    # a share is printed when it stands four of its own noise sds above zero
    # (first order: share * hypot(s_l / lambda_l, s_T / T)), as a variance is
    from sklearn_dppca._algorithms._scree import scree_values
    from sklearn_dppca._bunch import Bunch

    # of a total of 40 +- 3 (relative sd 0.075): PC1 12 +- 1, share 0.3 with
    # relative sd hypot(1/12, 0.075) = 0.11 (8.9 sds; sd 0.034), printed; PC2
    # 6 +- 1, hypot(0.17, 0.075) = 0.18 (5.5 sds), printed; PC3 4.1 +- 1, a
    # variance printed (4.1 sds) but a share of relative sd hypot(0.244, 0.075)
    # = 0.255 (3.9 sds), not
    released = Bunch(raw=np.array([12.0, 6.0, 4.1]), noise_scale=np.ones(3),
                     bounds=None, total=40.0, total_noise=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = scree_values(released, monotone=False)
    assert np.isfinite(values.explained_variance).all()
    assert values.total_variance == 40.0
    ratios = values.explained_variance_ratio
    np.testing.assert_allclose(ratios[:2], [0.3, 0.15])
    assert np.isnan(ratios[2])
    # a share whose total is not estimable is not printed either
    lost_total = Bunch(**dict(released, total=40.0, total_noise=10.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(scree_values(lost_total, monotone=False)
                        .explained_variance_ratio).all()


def test_the_warning_names_exactly_what_is_not_estimable():
    # one rule for the NaN and the warnings: a variance between one and two noise
    # sds (PC2, 1.9 sd) is named noise, one between two and four (PC3, 2.1 sd,
    # and PC5, 3.5 sd) too imprecise to print
    from sklearn_dppca._algorithms._scree import scree_values
    from sklearn_dppca._bunch import Bunch

    released = Bunch(raw=np.array([10.0, 1.9, 2.1, 0.5, 3.5, 4.5]), noise_scale=np.ones(6),
                     bounds=None, total=30.0, total_noise=1.0)
    with pytest.warns(PrivacyUtilityWarning) as caught:
        values = scree_values(released, monotone=False)
    named = [str(w.message) for w in caught if "variance of" in str(w.message)]
    assert len(named) == 2, named
    assert "of PC2, PC4 is not two noise sds" in named[0]
    assert "of PC3, PC5 is only 2 to 4 noise sds" in named[1]
    assert np.isnan(values.explained_variance[[1, 2, 3, 4]]).all()
    assert np.isfinite(values.explained_variance[[0, 5]]).all()


def test_pure_noise_passes_as_an_estimate_rarely():
    # a true value of 0 released with Gaussian noise: about 2.3% pass (one sd: 16%)
    from sklearn_dppca._validation import above_noise

    noise = np.random.default_rng(0).normal(size=200_000)
    passed = above_noise(noise, np.ones_like(noise)).mean()
    assert 0.020 < passed < 0.026


def test_a_spread_within_two_noise_sds_of_zero_is_not_estimable():
    from sklearn_dppca._algorithms._spread import _unreliable_spreads
    from sklearn_dppca._bunch import Bunch

    released = Bunch(raw=np.array([4.0, 1.9]), noise_scale=np.array([1.0, 1.0]),
                     clip_bounds=np.array([100.0, 100.0]),
                     clipped_share=np.array([0.1, 0.1]), separated=np.array([True, True]))
    np.testing.assert_array_equal(_unreliable_spreads(released), [False, True])


def test_a_component_not_estimable_joins_the_rest_in_the_column_variances():
    # PC2's variance is NaN: the column variances still sum to the total, PC2's
    # direction sharing the rest evenly with the directions not kept
    from sklearn_dppca._algorithms._scree import feature_variances

    components = np.eye(4)[:2]
    values, noise = feature_variances(components, np.array([6.0, np.nan]),
                                      np.array([0.5, 0.5]), 10.0, 1.0, list("abcd"))
    assert np.all(np.isfinite(values)) and np.all(np.isfinite(noise))
    np.testing.assert_allclose(values, [6.0, 4 / 3, 4 / 3, 4 / 3])
    assert math.isclose(values.sum(), 10.0)
