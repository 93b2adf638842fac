import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_dppca.display import ScreeDisplay


def _bar_heights(display):
    return np.array([patch.get_height() for patch in display.bars_.patches])


def test_from_estimator_draws_private_values(make_fake, save_png):
    est = make_fake("scree", k=4)
    fig, ax = plt.subplots()
    disp = ScreeDisplay.from_estimator(est, ax=ax, kind="both", cumulative=True)
    assert disp.ax_ is ax and disp.figure_ is fig
    assert np.allclose(_bar_heights(disp), 100 * est.explained_variance_ratio_)
    assert np.allclose(disp.line_.get_ydata(), est.explained_variance_)
    assert np.allclose(disp.cumulative_line_.get_ydata(),
                       100 * np.cumsum(est.explained_variance_ratio_))
    assert disp.variance_ax_ is not None and disp.variance_ax_ is not ax
    # the variance line runs through the bar tops
    lo, hi = ax.get_ylim()
    vlo, vhi = disp.variance_ax_.get_ylim()
    assert hi / 100 * est.total_variance_ == pytest.approx(vhi)
    assert "private" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "DP PC1", "DP PC2", "DP PC3", "DP PC4"
    ]
    assert len(disp.bar_labels_) == 4
    assert disp.nonprivate_lines_ == []
    save_png(fig)


def _error_segments(container):
    """(x, low, high) of each error bar of an ErrorbarContainer."""
    (lines,) = container.lines[2]
    return np.array([(seg[0, 0], seg[0, 1], seg[1, 1]) for seg in lines.get_segments()])


def test_error_bars_are_two_noise_sd_in_both_units(make_fake):
    est = make_fake("scree", k=4)
    sd = est.noise_scale_
    pve = ScreeDisplay.from_estimator(est, kind="pve")
    segments = _error_segments(pve.bar_errorbars_)
    expected = 100 * est.explained_variance_ratio_
    assert np.allclose(segments[:, 0], np.arange(4))
    assert np.allclose(segments[:, 1], expected - 200 * sd / est.total_variance_)
    assert np.allclose(segments[:, 2], expected + 200 * sd / est.total_variance_)
    assert pve.line_errorbars_ is None
    var = ScreeDisplay.from_estimator(est, kind="variance")
    segments = _error_segments(var.line_errorbars_)
    assert np.allclose(segments[:, 1], est.explained_variance_ - 2 * sd)
    assert np.allclose(segments[:, 2], est.explained_variance_ + 2 * sd)
    assert var.bar_errorbars_ is None
    # kind="both": the line runs through the bar tops, one set of bars serves both
    both = ScreeDisplay.from_estimator(est, kind="both")
    assert both.bar_errorbars_ is not None and both.line_errorbars_ is None
    for disp in (pve, var, both):
        legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
        assert "\u00b12 sd of each private variance (noise and clipping)" in legend
    # the labels sit above the error bars
    tops = [label.xy[1] for label in pve.bar_labels_]
    assert np.allclose(tops, expected + 200 * sd / est.total_variance_)


def test_pve_is_a_share_of_the_total_variance():
    # 3 of 5 components: the bars sum below 100%, the line meets the bar tops
    disp = ScreeDisplay([4.0, 2.0, 1.0], [0.4, 0.2, 0.1], noise_scale=[0.5, 0.5, 0.5],
                        total_variance=10.0).plot(kind="both",
                                                            cumulative=True)
    assert "total variance" in disp.ax_.get_ylabel()
    assert disp.cumulative_line_.get_ydata()[-1] == pytest.approx(70.0)
    assert disp.variance_ax_.get_ylim()[1] == pytest.approx(
        disp.ax_.get_ylim()[1] / 100 * 10.0)
    # without total_variance it follows from the shares
    inferred = ScreeDisplay([4.0, 2.0, 1.0], [0.4, 0.2, 0.1], noise_scale=0.5).plot(
        kind="pve")
    assert np.allclose(_error_segments(inferred.bar_errorbars_)[:, 2],
                       [40 + 10, 20 + 10, 10 + 10])
    # no noise scale, no error bars
    plain = ScreeDisplay([4.0, 2.0, 1.0], [0.4, 0.2, 0.1]).plot()
    assert plain.bar_errorbars_ is None and plain.line_errorbars_ is None


def test_components_within_two_noise_sd_of_zero_are_marked():
    args = ([5.0, 2.0, 0.6, 0.2], [0.25, 0.1, 0.03, 0.01])
    disp = ScreeDisplay(*args, noise_scale=0.4, total_variance=20.0)
    pve = disp.plot(kind="pve")
    assert list(pve.noise_dominated_) == [False, False, True, True]
    hatches = [patch.get_hatch() for patch in pve.bars_.patches]
    assert hatches[:2] == [None, None] and all(hatches[2:])
    legend = [t.get_text() for t in pve.ax_.get_legend().get_texts()]
    assert "within 2 noise sd of 0 (could be noise alone)" in legend
    var = disp.plot(kind="variance")
    assert np.allclose(var.noise_dominated_markers_.get_xdata(), [2, 3])
    assert np.allclose(var.noise_dominated_markers_.get_ydata(), [0.6, 0.2])
    # without noise scales nothing is marked
    plain = ScreeDisplay(*args).plot()
    assert not plain.noise_dominated_.any() and plain.noise_dominated_markers_ is None
    assert all(patch.get_hatch() is None for patch in plain.bars_.patches)


def test_huge_error_bars_do_not_stretch_the_pve_axis():
    disp = ScreeDisplay([4.0, 2.0], [0.4, 0.2], noise_scale=[50.0, 50.0],
                        total_variance=10.0).plot(kind="pve")
    assert disp.ax_.get_ylim()[1] <= 115 + 1e-9


def test_kinds(make_fake):
    est = make_fake("scree", k=3)
    # the default: one bar per component on one y axis, no twin axis
    default = ScreeDisplay.from_estimator(est)
    assert default.variance_ax_ is None and default.line_ is None
    assert len(default.bars_.patches) == 3 and len(default.figure_.axes) == 1
    pve = ScreeDisplay.from_estimator(est, kind="pve")
    assert pve.line_ is None and pve.variance_ax_ is None
    assert np.allclose(_bar_heights(pve), 100 * est.explained_variance_ratio_)
    var = ScreeDisplay.from_estimator(est, kind="variance")
    assert var.bars_ is None and var.variance_ax_ is None
    assert var.line_.axes is var.ax_
    assert np.allclose(var.line_.get_ydata(), est.explained_variance_)
    assert var.ax_.get_ylim()[0] == 0


def test_nonprivate_overlay(make_fake):
    est = make_fake("dppca", k=3, nonprivate=True)
    disp = ScreeDisplay.from_estimator(est, kind="both")
    assert len(disp.nonprivate_lines_) == 2
    ref_pve, ref_var = disp.nonprivate_lines_
    assert np.allclose(ref_pve.get_ydata(), 100 * est.nonprivate_.explained_variance
                       / est.nonprivate_.total_variance)
    assert np.allclose(ref_var.get_ydata(), est.nonprivate_.explained_variance)
    for line in disp.nonprivate_lines_:
        assert line.get_linestyle() == "--"
        assert line.get_markerfacecolor() == "none"
        assert line.get_label().startswith("non-private reference")
    legend_texts = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert any(t.startswith("non-private reference") for t in legend_texts)
    off = ScreeDisplay.from_estimator(est, show_nonprivate=False)
    assert off.nonprivate_lines_ == []
    # a reference without its total variance: its PVE has an unknown base
    del est.nonprivate_["total_variance"]
    assert [line.get_label() for line in ScreeDisplay.from_estimator(
        est, kind="both").nonprivate_lines_] == ["non-private reference (variance)"]


def test_plot_kwargs_and_styles():
    disp = ScreeDisplay([3.0, 1.0], [0.75, 0.25], component_names=["a", "b"])
    disp.plot(kind="pve", color="red", bar_kw={"alpha": 0.3})
    assert disp.bars_.patches[0].get_alpha() == 0.3
    assert matplotlib.colors.same_color(disp.bars_.patches[0].get_facecolor()[:3], "red")
    disp.plot(kind="variance", line_kw={"color": "green"})
    assert matplotlib.colors.same_color(disp.line_.get_color(), "green")
    assert [t.get_text() for t in disp.ax_.get_xticklabels()] == ["a", "b"]


def test_zero_variances_are_drawn():
    disp = ScreeDisplay([0.0, 0.0], [0.0, 0.0]).plot()
    assert np.allclose(_bar_heights(disp), 0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"kind": "bars"}, ValueError, "^kind"),
        ({"kind": None}, TypeError, "^kind"),
        ({"kind": "variance", "cumulative": True}, ValueError, "cumulative"),
        ({"cumulative": "yes"}, TypeError, "^cumulative"),
        ({"show_nonprivate": 1}, TypeError, "^show_nonprivate"),
        ({"bar_kw": "red"}, TypeError, "^bar_kw"),
        ({"line_kw": ["red"]}, TypeError, "^line_kw"),
        ({"line_kw": {"lw": 2}}, ValueError, "^line_kw styles the variance line"),
    ],
)
def test_bad_plot_arguments(kwargs, error, match):
    disp = ScreeDisplay([2.0, 1.0], [2 / 3, 1 / 3])
    with pytest.raises(error, match=match):
        disp.plot(**kwargs)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (([2.0, 1.0], [0.5]), {}, "explained_variance_ratio"),
        (([[2.0, 1.0]], [0.5, 0.5]), {}, "explained_variance"),
        (([2.0, np.inf], [0.5, 0.5]), {}, "finite"),
        (([2.0, 1.0], [0.5, 0.5]), {"component_names": ["a"]}, "component_names"),
        (([2.0, 1.0], [0.5, 0.5]), {"nonprivate_variance": [1.0]}, "nonprivate"),
        (([2.0, 1.0], [0.5, 0.5]), {"noise_scale": [1.0]}, "noise_scale"),
        (([2.0, 1.0], [0.5, 0.5]), {"noise_scale": -1.0}, "noise_scale"),
        (([2.0, 1.0], [0.5, 0.5]), {"total_variance": -1.0}, "total_variance"),
        (([2.0, 1.0], [0.5, 0.5]), {"total_variance": np.inf}, "total_variance"),
        (([2.0, 1.0], [0.5, 0.5]), {"ratio_noise_scale": [0.1]}, "ratio_noise_scale"),
        (([2.0, 1.0], [0.5, 0.5]), {"ratio_noise_scale": [-0.1, 0.1]},
         "ratio_noise_scale"),
        (([2.0, 1.0], [0.5, 0.5]), {"ratio_noise_scale": [np.inf, 0.1]},
         "ratio_noise_scale"),
        # not numbers: one error naming the argument
        (("ab", [0.5, 0.5]), {}, "explained_variance must hold numbers"),
        (([2.0, 1.0], [0.5, 0.5]), {"noise_scale": "x"}, "noise_scale must hold numbers"),
        (([2.0, 1.0], [0.5, 0.5]), {"total_variance": "x"},
         "total_variance must hold numbers"),
        (([2.0, 1.0], [0.5, 0.5]), {"ratio_noise_scale": ["x", 0.1]},
         "ratio_noise_scale must hold numbers"),
    ],
)
def test_bad_values(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ScreeDisplay(*args, **kwargs).plot()


def test_unsupported_estimators(make_fake, not_fitted):
    with pytest.raises(TypeError, match="ScreeDisplay needs a fitted DPScree or DPPCA"):
        ScreeDisplay.from_estimator(make_fake("directions"))
    with pytest.raises(NotFittedError):
        ScreeDisplay.from_estimator(not_fitted)


def test_ax_is_respected_in_subplots(make_fake):
    fig, axs = plt.subplots(1, 2)
    disp = ScreeDisplay.from_estimator(make_fake("scree"), ax=axs[1], kind="pve")
    assert disp.ax_ is axs[1]
    assert len(axs[0].patches) == 0


def test_real_estimators(real_estimators, save_png):
    real = real_estimators
    for key in ("scree", "dppca", "dppca_plain"):
        est = real[key]
        disp = ScreeDisplay.from_estimator(est, kind="both", cumulative=True)
        # (a component whose variance is not estimable gets no bar)
        shown = np.isfinite(est.explained_variance_ratio_)
        assert np.allclose(_bar_heights(disp), 100 * est.explained_variance_ratio_[shown])
        assert np.allclose(est.explained_variance_ratio_,
                           est.explained_variance_ / est.total_variance_, equal_nan=True)
        assert np.allclose(disp.line_.get_ydata(), est.explained_variance_[shown])
        # the PVE's error bars are +-2 sd of each share (its total's noise too),
        # left of the bar's centre; the variance's, +-2 of its own sd, right
        share_sd = est.explained_variance_ratio_noise_scale_
        assert np.array_equal(np.isfinite(share_sd), shown)
        bars = _error_segments(disp.bar_errorbars_)
        assert np.allclose(bars[:, 0], np.flatnonzero(shown) - 0.12)
        assert np.allclose(bars[:, 2] - bars[:, 1], 400 * share_sd[shown])
        line = _error_segments(disp.line_errorbars_)
        variance_shown = np.isfinite(est.explained_variance_)
        assert np.allclose(line[:, 0], np.flatnonzero(variance_shown) + 0.12)
        assert np.allclose(line[:, 2] - line[:, 1],
                           4 * est.noise_scale_[variance_shown])
        texts = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
        assert any("sd of each private PVE" in t for t in texts)
        assert any("sd of each private variance" in t for t in texts)
        save_png(disp.figure_, f"{key}.png")
    # the reference PVE needs the reference's total variance
    reference = real["dppca"].nonprivate_
    both = ScreeDisplay.from_estimator(real["dppca"], kind="both")
    assert len(both.nonprivate_lines_) == (
        2 if "total_variance" in reference else 1)
    with pytest.raises(TypeError, match="DPKendallDirections has no private variances"):
        ScreeDisplay.from_estimator(real["directions"])


def test_from_estimators_overlays_each_fit(make_fake, save_png):
    fits = [make_fake("scree", k=4, seed=s) for s in (0, 1, 2)]
    for fit, eps in zip(fits, (0.25, 0.5, 0.25)):
        fit.privacy_spent_ = (eps, 1e-6)
    fig, ax = plt.subplots()
    displays = ScreeDisplay.from_estimators(fits, labels=["a", "b", "c"], ax=ax)
    assert len(displays) == 3
    assert all(d.ax_ is ax and d.figure_ is fig for d in displays)
    colors = [matplotlib.colors.to_hex(d.line_.get_color()) for d in displays]
    assert len(set(colors)) == 3
    xs = [d.line_.get_xdata() for d in displays]
    for fit, d, x in zip(fits, displays, xs):
        assert np.allclose(d.line_.get_ydata(), fit.explained_variance_)
        # the error bars are +-2 noise sd, in the fit's colour
        segs = _error_segments(d.line_errorbars_)
        assert np.allclose(segs[:, 2] - segs[:, 1], 4 * np.broadcast_to(
            fit.noise_scale_, segs[:, 0].shape))
    # side by side: no two fits at the same place
    assert np.all(xs[0] < xs[1]) and np.all(xs[1] < xs[2])
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts[:3] == ["a (eps 0.25)", "b (eps 0.5)", "c (eps 0.25)"]
    assert any("sd of each private variance" in t for t in texts)
    save_png(fig)


def test_from_estimators_pve_bars_and_aliases(make_fake):
    fits = [make_fake("scree", k=3, seed=s) for s in (0, 1)]
    displays = ScreeDisplay.from_estimators(fits, kind="pve", ec="k", lw=2)
    for fit, d in zip(fits, displays):
        assert np.allclose(_bar_heights(d), 100 * fit.explained_variance_ratio_)
        assert d.bar_errorbars_ is not None and d.line_ is None
        patch = d.bars_.patches[0]
        assert patch.get_linewidth() == 2
        assert matplotlib.colors.to_hex(patch.get_edgecolor()) == "#000000"
    lefts = [np.array([p.get_x() for p in d.bars_.patches]) for d in displays]
    widths = np.array([p.get_width() for p in displays[0].bars_.patches])
    # the bars of the two fits do not overlap
    assert np.all(lefts[0] + widths <= lefts[1])
    # labels default to each fit's method, numbered when they repeat
    texts = [t.get_text() for t in displays[0].ax_.get_legend().get_texts()]
    assert texts[0] != texts[1]
    plt.close("all")


def test_from_estimators_line_aliases_and_errors(make_fake):
    fits = [make_fake("scree", k=3, seed=s) for s in (0, 1)]
    displays = ScreeDisplay.from_estimators(fits, ls=":", lw=3)
    assert all(d.line_.get_linestyle() == ":" and d.line_.get_linewidth() == 3
               for d in displays)
    with pytest.raises(ValueError, match="labels"):
        ScreeDisplay.from_estimators(fits, labels=["only one"])
    with pytest.raises(ValueError, match="distinct"):
        ScreeDisplay.from_estimators(fits, labels=["a", "a"])
    with pytest.raises(ValueError, match="estimators"):
        ScreeDisplay.from_estimators([])
    with pytest.raises(ValueError, match="kind"):
        ScreeDisplay.from_estimators(fits, kind="both")
    plt.close("all")


def test_a_total_variance_near_the_float_limit_draws(make_fake):
    # A private total at ~1e307 (its clip bound's search stopped far on a tiny,
    # noisy fit) put the variance axis's top past the float range: the display
    # raised instead of drawing. The variance axis then keeps its own scale.
    est = make_fake("scree", k=3)
    est.explained_variance_ = est.explained_variance_ * 1e306
    est.noise_scale_ = est.noise_scale_ * 1e306
    est.total_variance_ = 1e307
    est.explained_variance_ratio_ = est.explained_variance_ / est.total_variance_
    display = ScreeDisplay.from_estimator(est, kind="both")
    assert np.all(np.isfinite(display.variance_ax_.get_ylim()))


def test_overlaid_pve_bars_carry_each_shares_own_sd(real_estimators):
    fits = [real_estimators["scree"], real_estimators["dppca"]]
    displays = ScreeDisplay.from_estimators(fits, labels=["scree", "pca"], kind="pve")
    for fit, display in zip(fits, displays):
        shown = np.isfinite(fit.explained_variance_ratio_)
        bars = _error_segments(display.bar_errorbars_)
        # +-2 sd of each share, in points, on the bars the fit drew
        np.testing.assert_allclose(bars[:, 2] - bars[:, 1],
                                   400 * fit.explained_variance_ratio_noise_scale_[shown])
    texts = [t.get_text() for t in displays[0].ax_.get_legend().get_texts()]
    assert any("sd of each private PVE" in t for t in texts)
