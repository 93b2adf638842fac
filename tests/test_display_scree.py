import sys
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_display_common import (  # noqa: E402
    NotFitted,
    make_fake,
    real_estimators,
    save_png,
)

from sklearn_dppca.display import ScreeDisplay  # noqa: E402


def _bar_heights(display):
    return np.array([patch.get_height() for patch in display.bars_.patches])


def test_from_estimator_draws_private_values(tmp_path):
    est = make_fake("scree", k=4)
    fig, ax = plt.subplots()
    disp = ScreeDisplay.from_estimator(est, ax=ax, cumulative=True)
    assert disp.ax_ is ax and disp.figure_ is fig
    assert np.allclose(_bar_heights(disp), 100 * est.explained_variance_ratio_)
    assert np.allclose(disp.line_.get_ydata(), est.explained_variance_)
    assert np.allclose(disp.cumulative_line_.get_ydata(),
                       100 * np.cumsum(est.explained_variance_ratio_))
    assert disp.variance_ax_ is not None and disp.variance_ax_ is not ax
    # the variance line runs through the bar tops
    lo, hi = ax.get_ylim()
    vlo, vhi = disp.variance_ax_.get_ylim()
    assert hi / 100 * est.explained_variance_.sum() == pytest.approx(vhi)
    assert "private" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "DP PC1", "DP PC2", "DP PC3", "DP PC4"
    ]
    assert len(disp.bar_labels_) == 4
    assert disp.nonprivate_lines_ == []
    save_png(fig, tmp_path)


def test_kinds():
    est = make_fake("scree", k=3)
    pve = ScreeDisplay.from_estimator(est, kind="pve")
    assert pve.line_ is None and pve.variance_ax_ is None
    assert np.allclose(_bar_heights(pve), 100 * est.explained_variance_ratio_)
    var = ScreeDisplay.from_estimator(est, kind="variance")
    assert var.bars_ is None and var.variance_ax_ is None
    assert var.line_.axes is var.ax_
    assert np.allclose(var.line_.get_ydata(), est.explained_variance_)
    assert var.ax_.get_ylim()[0] == 0


def test_nonprivate_overlay():
    est = make_fake("dppca", k=3, nonprivate=True)
    disp = ScreeDisplay.from_estimator(est)
    assert len(disp.nonprivate_lines_) == 2
    ref_pve, ref_var = disp.nonprivate_lines_
    assert np.allclose(ref_pve.get_ydata(), 100 * est.nonprivate_.explained_variance_ratio)
    assert np.allclose(ref_var.get_ydata(), est.nonprivate_.explained_variance)
    for line in disp.nonprivate_lines_:
        assert line.get_linestyle() == "--"
        assert line.get_markerfacecolor() == "none"
        assert line.get_label().startswith("non-private reference")
    legend_texts = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert any(t.startswith("non-private reference") for t in legend_texts)
    off = ScreeDisplay.from_estimator(est, show_nonprivate=False)
    assert off.nonprivate_lines_ == []


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
    "kwargs, match",
    [
        ({"kind": "bars"}, "kind"),
        ({"kind": None}, "kind"),
        ({"kind": "variance", "cumulative": True}, "cumulative"),
        ({"cumulative": "yes"}, "cumulative"),
        ({"bar_kw": "red"}, "bar_kw"),
    ],
)
def test_bad_plot_arguments(kwargs, match):
    disp = ScreeDisplay([2.0, 1.0], [2 / 3, 1 / 3])
    with pytest.raises((ValueError, TypeError), match=match):
        disp.plot(**kwargs)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (([2.0, 1.0], [0.5]), {}, "explained_variance_ratio"),
        (([[2.0, 1.0]], [0.5, 0.5]), {}, "explained_variance"),
        (([2.0, np.nan], [0.5, 0.5]), {}, "finite"),
        (([2.0, 1.0], [0.5, 0.5]), {"component_names": ["a"]}, "component_names"),
        (([2.0, 1.0], [0.5, 0.5]), {"nonprivate_variance": [1.0]}, "nonprivate"),
    ],
)
def test_bad_values(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ScreeDisplay(*args, **kwargs).plot()


def test_unsupported_estimators():
    with pytest.raises(TypeError, match="ScreeDisplay needs a fitted DPScree or DPPCA"):
        ScreeDisplay.from_estimator(make_fake("directions"))
    with pytest.raises(NotFittedError):
        ScreeDisplay.from_estimator(NotFitted())


def test_ax_is_respected_in_subplots():
    fig, axs = plt.subplots(1, 2)
    disp = ScreeDisplay.from_estimator(make_fake("scree"), ax=axs[1], kind="pve")
    assert disp.ax_ is axs[1]
    assert len(axs[0].patches) == 0


def test_real_estimators(tmp_path):
    real = real_estimators()
    for key in ("scree", "dppca", "dppca_plain"):
        est = real[key]
        disp = ScreeDisplay.from_estimator(est, cumulative=True)
        assert np.allclose(_bar_heights(disp), 100 * est.explained_variance_ratio_)
        assert np.allclose(disp.line_.get_ydata(), est.explained_variance_)
        save_png(disp.figure_, tmp_path, f"{key}.png")
    assert len(ScreeDisplay.from_estimator(real["dppca"]).nonprivate_lines_) == 2
    with pytest.raises(TypeError, match="DPKendallDirections has no private variances"):
        ScreeDisplay.from_estimator(real["directions"])
