"""Style keywords of the displays: matplotlib's aliases (``c``, ``lw``, ``ls``,
``ec``, ``fc``, ...) are honoured and replace the displays' default style, for
every keyword argument of every ``plot`` (and of ``plot_overview``); checked on
the properties of the artists actually drawn."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import Collection, PathCollection
from matplotlib.colors import Normalize, to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.text import Text

from sklearn_dppca.display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
    plot_overview,
)
from sklearn_dppca.display._style import merge_style

RED = to_rgba("red")
GREEN = to_rgba("green")


def _is(color, expected):
    """Same RGB (the displays set their own opacities)."""
    return np.allclose(to_rgba(color)[:3], expected[:3])


def _all(colors, expected):
    colors = np.atleast_2d(colors)
    return len(colors) > 0 and np.allclose(colors[:, :3], expected[:3])


# ------------------------------------------------------------------ the helper


def test_merge_style_replaces_defaults_by_their_aliases():
    defaults = {"color": "C0", "linewidth": 1.0, "linestyle": "-", "marker": "o"}
    user = {"c": "red", "lw": 3, "ls": ":"}
    style = merge_style(defaults, user, Line2D)
    assert style == {"color": "red", "linewidth": 3, "linestyle": ":", "marker": "o"}
    # the inputs are left as they were
    assert defaults["color"] == "C0" and user == {"c": "red", "lw": 3, "ls": ":"}


def test_merge_style_refuses_one_property_given_twice():
    with pytest.raises(TypeError, match="'lw' and 'linewidth'"):
        merge_style({}, {"lw": 1, "linewidth": 2}, Line2D)
    with pytest.raises(TypeError, match="'color' and 'c'"):
        merge_style({}, {"c": "red", "color": "blue"}, Rectangle)


def test_merge_style_colours_of_patches_and_collections():
    # c means color for a patch; a user's colour replaces a default face or edge
    assert merge_style({"facecolor": "C0"}, {"c": "red"}, Rectangle) == {"color": "red"}
    # a user's face colour replaces that part of the default colour only
    assert merge_style({"color": "C0"}, {"fc": "red"}, FancyArrowPatch) == {
        "facecolor": "red", "edgecolor": "C0"}
    # in a scatter, c stays scatter's argument and replaces the default colour
    assert merge_style({"color": "C0", "linewidths": 0}, {"c": [1.0, 2.0]},
                       PathCollection) == {"linewidth": 0, "c": [1.0, 2.0]}
    # a norm carries its own limits
    assert merge_style({"vmin": 0, "vmax": 1, "cmap": "Blues"}, {"norm": "log"},
                       Collection) == {"cmap": "Blues", "norm": "log"}


# ------------------------------------------------------------------ scree


@pytest.mark.parametrize("where", ["bar_kw", "kwargs"])
def test_scree_bars(where):
    style = {"c": "red", "ec": "green", "lw": 2.5}
    options = {"bar_kw": style} if where == "bar_kw" else style
    disp = ScreeDisplay([4.0, 2.0, 1.0], [0.4, 0.2, 0.1]).plot(kind="pve", **options)
    for patch in disp.bars_.patches:
        assert _is(patch.get_facecolor(), RED)
        assert _is(patch.get_edgecolor(), GREEN)
        assert patch.get_linewidth() == 2.5


def test_scree_bar_face_colour_alone_adds_no_edge():
    disp = ScreeDisplay([4.0, 2.0], [0.4, 0.2]).plot(kind="pve", bar_kw={"fc": "red"})
    default = ScreeDisplay([4.0, 2.0], [0.4, 0.2]).plot(kind="pve")
    for patch, plain in zip(disp.bars_.patches, default.bars_.patches):
        assert _is(patch.get_facecolor(), RED)
        assert np.allclose(patch.get_edgecolor(), plain.get_edgecolor())


@pytest.mark.parametrize("where", ["line_kw", "kwargs"])
def test_scree_line(where):
    style = {"c": "red", "lw": 3.0, "ls": ":"}
    options = {"line_kw": style} if where == "line_kw" else style
    disp = ScreeDisplay([4.0, 2.0, 1.0], [0.4, 0.2, 0.1]).plot(kind="variance",
                                                                **options)
    assert _is(disp.line_.get_color(), RED)
    assert disp.line_.get_linewidth() == 3.0
    assert disp.line_.get_linestyle() == ":"
    # the legend entry is the line itself
    legend = disp.ax_.get_legend()
    handle = legend.legend_handles[[t.get_text() for t in legend.get_texts()]
                                   .index("private variance")]
    assert _is(handle.get_color(), RED)


def test_scree_line_kw_with_kind_both():
    disp = ScreeDisplay([4.0, 2.0], [0.4, 0.2]).plot(kind="both",
                                                     line_kw={"c": "red", "lw": 4})
    assert _is(disp.line_.get_color(), RED) and disp.line_.get_linewidth() == 4


# ------------------------------------------------------------------ arrows


def _arrow_checks(arrows, color=RED, linewidth=3.0, linestyle=":"):
    assert arrows
    for annotation in arrows:
        patch = annotation.arrow_patch
        assert _is(patch.get_edgecolor(), color)
        assert patch.get_linewidth() == linewidth
        assert patch.get_linestyle() == linestyle


@pytest.mark.parametrize("where", ["arrow_kw", "kwargs"])
def test_loading_arrows(where, make_fake):
    style = {"c": "red", "lw": 3.0, "ls": ":"}
    options = {"arrow_kw": style} if where == "arrow_kw" else style
    disp = LoadingDisplay.from_estimator(make_fake("dppca", nonprivate=True), **options)
    _arrow_checks(disp.arrows_)
    handle = disp.ax_.get_legend().legend_handles[0]
    assert _is(handle.get_color(), RED)
    # the reference keeps its own style
    assert all(a.arrow_patch.get_linestyle() == "--" for a in disp.nonprivate_arrows_)


def test_arrow_face_colour_replaces_only_the_face(make_fake):
    disp = LoadingDisplay.from_estimator(make_fake("dppca"), arrow_kw={"fc": "red"})
    for annotation in disp.arrows_:
        assert _is(annotation.arrow_patch.get_facecolor(), RED)
        assert _is(annotation.arrow_patch.get_edgecolor(), to_rgba("C0"))


@pytest.mark.parametrize("where", ["arrow_kw", "kwargs"])
def test_loading_points(where, make_fake):
    style = {"c": "red", "ec": "green", "lw": 2.0}
    options = {"arrow_kw": style} if where == "arrow_kw" else style
    disp = LoadingDisplay.from_estimator(make_fake("dppca"), kind="point", **options)
    assert _all(disp.scatter_.get_facecolor(), RED)
    assert _all(disp.scatter_.get_edgecolor(), GREEN)
    assert np.all(disp.scatter_.get_linewidths() == 2.0)


def test_loading_heatmap_norm_replaces_the_limits(make_fake):
    norm = Normalize(-2.0, 2.0)
    disp = LoadingDisplay.from_estimator(make_fake("dppca"), kind="heatmap",
                                         arrow_kw={"norm": norm}, text_kw={"c": "red",
                                                                           "size": 4})
    assert disp.image_.norm is norm
    assert all(_is(t.get_color(), RED) and t.get_fontsize() == 4 for t in disp.texts_)


@pytest.mark.parametrize("display", ["loading", "variable", "biplot"])
def test_labels_text_kw(display, make_fake):
    cls = {"loading": LoadingDisplay, "variable": VariableDisplay,
           "biplot": BiplotDisplay}[display]
    disp = cls.from_estimator(make_fake("dppca"), text_kw={"c": "red", "size": 5.0})
    labelled = [t for t in disp.texts_ if t.get_text()]
    assert labelled
    assert all(_is(t.get_color(), RED) and t.get_fontsize() == 5.0 for t in labelled)


@pytest.mark.parametrize("where", ["arrow_kw", "kwargs"])
def test_variable_arrows(where, make_fake):
    style = {"c": "red", "lw": 3.0, "ls": ":"}
    options = {"arrow_kw": style} if where == "arrow_kw" else style
    disp = VariableDisplay.from_estimator(make_fake("scree"), **options)
    plain = ~disp.beyond_ & ~disp.uncertain_
    _arrow_checks([a for a, keep in zip(disp.arrows_, plain) if keep])


def test_variable_marked_arrows_keep_the_user_style_but_not_its_colour():
    # the second variable's correlation lies beyond the circle (noise)
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    disp = VariableDisplay(V, [1.0, 4.0], [1.0, 1.0]).plot(c="red", lw=3.0,
                                                           text_kw={"c": "green"})
    assert list(disp.beyond_) == [False, True]
    _arrow_checks(disp.arrows_[:1], linestyle="solid")
    marked = disp.arrows_[1].arrow_patch
    assert not _is(marked.get_edgecolor(), RED) and marked.get_linewidth() == 3.0
    # the user's text colour, given as c, is kept on the marked label too
    assert all(_is(t.get_color(), GREEN) for t in disp.texts_)


@pytest.mark.parametrize("where", ["arrow_kw", "kwargs"])
def test_biplot_arrows(where, make_fake):
    style = {"c": "red", "lw": 3.0, "ls": ":"}
    options = {"arrow_kw": style} if where == "arrow_kw" else style
    disp = BiplotDisplay.from_estimator(make_fake("dppca"), **options)
    _arrow_checks(disp.arrows_)


@pytest.mark.parametrize("groups", [True, False])
def test_biplot_points(groups, make_fake):
    disp = BiplotDisplay.from_estimator(make_fake("dppca", groups=groups),
                                        scatter_kw={"c": "red", "ec": "green", "lw": 2})
    scatters = disp.scatter_ if groups else [disp.scatter_]
    for scatter in scatters:
        assert _all(scatter.get_facecolor(), RED)
        assert _all(scatter.get_edgecolor(), GREEN)
        assert np.all(scatter.get_linewidths() == 2)


# ------------------------------------------------------------------ scores


@pytest.mark.parametrize("where", ["scatter_kw", "kwargs"])
@pytest.mark.parametrize("groups", [None, "colors", "facets"])
def test_score_points(where, groups, make_fake):
    style = {"c": "red", "ec": "green", "lw": 2.0}
    options = {"scatter_kw": style} if where == "scatter_kw" else style
    disp = ScoreDisplay.from_estimator(make_fake("dppca"), kind="points", groups=groups,
                                       **options)
    scatters = disp.scatter_ if isinstance(disp.scatter_, list) else [disp.scatter_]
    for scatter in scatters:
        assert _all(scatter.get_facecolor(), RED)
        assert _all(scatter.get_edgecolor(), GREEN)
        assert np.all(scatter.get_linewidths() == 2.0)
    if groups is None:
        handles = disp.ax_.get_legend().legend_handles
        assert _is(handles[0].get_color(), RED)


@pytest.mark.parametrize("where", ["hist_kw", "kwargs"])
@pytest.mark.parametrize("groups", [None, "colors", "facets"])
def test_score_cells(where, groups, make_fake):
    style = {"ec": "green", "lw": 1.5}
    options = {"hist_kw": style} if where == "hist_kw" else style
    disp = ScoreDisplay.from_estimator(make_fake("dppca"), kind="histogram",
                                       groups=groups, **options)
    meshes = disp.mesh_ if groups is not None else [disp.mesh_]
    assert len(meshes)
    for mesh in meshes:
        assert _all(mesh.get_edgecolor(), GREEN)
        assert np.all(mesh.get_linewidths() == 1.5)


@pytest.mark.parametrize("groups", [None, "facets"])
def test_score_norm_replaces_the_limits(groups, make_fake):
    norm = Normalize(0.0, 0.5)
    disp = ScoreDisplay.from_estimator(make_fake("dppca"), groups=groups,
                                       hist_kw={"norm": norm})
    meshes = disp.mesh_ if groups is not None else [disp.mesh_]
    assert all(mesh.norm is norm for mesh in meshes)


# ------------------------------------------------------------------ the overview


def test_overview_passes_aliases_to_the_panels(make_fake):
    fig = plot_overview(
        make_fake("dppca"),
        scree_kw={"kind": "both", "c": "red", "line_kw": {"lw": 4.0}},
        loading_kw={"c": "red", "lw": 3.0, "ls": ":"},
        variable_kw={"arrow_kw": {"c": "red", "lw": 3.0, "ls": ":"}},
        score_kw={"kind": "points", "groups": None, "c": "green"},
        biplot_kw={"scatter_kw": {"c": "green"}, "text_kw": {"c": "red"}},
    )
    displays = fig.displays_
    assert all(_is(p.get_facecolor(), RED)
               for p in displays["scree"].bars_.patches)
    assert displays["scree"].line_.get_linewidth() == 4.0
    _arrow_checks(displays["loading"].arrows_)
    variable = displays["variable"]
    _arrow_checks([a for a, b, u in zip(variable.arrows_, variable.beyond_,
                                        variable.uncertain_) if not (b or u)])
    assert _all(displays["score"].scatter_.get_facecolor(), GREEN)
    assert all(_all(s.get_facecolor(), GREEN) for s in displays["biplot"].scatter_)
    assert all(_is(t.get_color(), RED) for t in displays["biplot"].texts_)
    plt.close(fig)


def test_text_style_alias_with_text_class():
    # the helper is what every label goes through: Text aliases too
    assert merge_style({"fontsize": 9, "ha": "center"}, {"size": 5, "c": "red"}, Text) == {
        "fontsize": 5, "horizontalalignment": "center", "color": "red"}
