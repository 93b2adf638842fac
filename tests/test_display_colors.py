"""Group colours and colormaps of the score display and the biplot: the
colour-blind safe default palette, ``colors=`` and ``cmap=``."""

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from sklearn_dppca.display import BiplotDisplay, ScoreDisplay

# Okabe & Ito (2008), in the order the displays use them (written out here, not
# read from the package)
ORANGE, SKY_BLUE, BLUISH_GREEN, VERMILLION = "#E69F00", "#56B4E9", "#009E73", "#D55E00"


def _rgb(color):
    return tuple(np.round(to_rgb(color), 6))


def _point_colors(scatters):
    return [_rgb(collection.get_facecolor()[0][:3]) for collection in scatters]


def _cell_colors(meshes):
    # the opaque end of each group's colormap is the group's colour
    return [_rgb(mesh.get_cmap()(1.0)[:3]) for mesh in meshes]


def test_the_default_palette_is_okabe_ito(make_fake):
    est = make_fake("dppca", n_groups=4)
    expected = [_rgb(c) for c in (ORANGE, SKY_BLUE, BLUISH_GREEN, VERMILLION)]
    points = ScoreDisplay.from_estimator(est, kind="points")
    assert _point_colors(points.scatter_) == expected
    assert _cell_colors(ScoreDisplay.from_estimator(est).mesh_) == expected
    assert _point_colors(BiplotDisplay.from_estimator(est).scatter_) == expected


@pytest.mark.parametrize("colors", [
    ["red", (0.0, 0.5, 0.0), "#0000ff", "black"],            # a list: the first 3
    {"G3": "#0000ff", "G1": "red", "G2": (0.0, 0.5, 0.0)},   # a dict: by label
])
def test_colors_choose_the_groups_colours(make_fake, colors):
    est = make_fake("dppca", n_groups=3)
    expected = [_rgb("red"), _rgb((0.0, 0.5, 0.0)), _rgb("#0000ff")]
    points = ScoreDisplay.from_estimator(est, kind="points", colors=colors)
    assert _point_colors(points.scatter_) == expected
    legend = points.ax_.get_legend().legend_handles[:3]
    assert [_rgb(handle.get_color()) for handle in legend] == expected
    cells = ScoreDisplay.from_estimator(est, colors=colors)
    assert _cell_colors(cells.mesh_) == expected
    facets = ScoreDisplay.from_estimator(est, kind="points", groups="facets",
                                         colors=colors)
    assert _point_colors(facets.scatter_) == expected
    biplot = BiplotDisplay.from_estimator(est, colors=colors)
    assert _point_colors(biplot.scatter_) == expected


def test_cmap_colours_the_histogram_without_groups(make_fake):
    est = make_fake("dppca", n_groups=3)
    default = ScoreDisplay.from_estimator(est, groups=None)
    assert default.mesh_.get_cmap().name == "Blues"
    plain = ScoreDisplay.from_estimator(est, groups=None, cmap="viridis")
    assert plain.mesh_.get_cmap().name == "viridis"
    under_points = ScoreDisplay.from_estimator(est, kind="both", groups=None,
                                               cmap=matplotlib.colormaps["cividis"])
    assert under_points.mesh_.get_cmap().name == "cividis"
    facets = ScoreDisplay.from_estimator(est, groups="facets", cmap="magma")
    assert {mesh.get_cmap().name for mesh in facets.mesh_} == {"magma"}
    # a cmap in hist_kw is the more specific style
    styled = ScoreDisplay.from_estimator(est, groups=None, cmap="viridis",
                                         hist_kw={"cmap": "Reds"})
    assert styled.mesh_.get_cmap().name == "Reds"


@pytest.mark.parametrize("colors, error, match", [
    ("red", TypeError, "colors must be None, a list"),
    (3, TypeError, "colors must be None, a list"),
    (["red", "blue"], ValueError, "colors has 2 colours for 3 groups"),
    ({"G1": "red", "G2": "blue"}, ValueError, "lacks a colour for 1 of the 3"),
    (["red", "not a colour", "blue"], ValueError, "group 2 .* not a matplotlib"),
])
def test_bad_colors_are_refused_without_naming_the_groups(make_fake, colors, error,
                                                         match):
    est = make_fake("dppca", n_groups=3)
    for draw in (lambda: ScoreDisplay.from_estimator(est, colors=colors),
                 lambda: BiplotDisplay.from_estimator(est, colors=colors)):
        with pytest.raises(error, match=match) as caught:
            draw()
        assert "G3" not in str(caught.value)


@pytest.mark.parametrize("cmap, error", [(3, TypeError), ("no such map", ValueError)])
def test_a_bad_cmap_is_refused(make_fake, cmap, error):
    est = make_fake("dppca", n_groups=3)
    with pytest.raises(error, match="cmap"):
        ScoreDisplay.from_estimator(est, cmap=cmap)


def test_the_loading_heatmap_cmap_is_checked(make_fake):
    from sklearn_dppca.display import LoadingDisplay

    est = make_fake("dppca")
    drawn = LoadingDisplay.from_estimator(est, kind="heatmap", cmap="cividis")
    assert drawn.image_.get_cmap().name == "cividis"
    with pytest.raises(ValueError, match="cmap"):
        LoadingDisplay.from_estimator(est, kind="heatmap", cmap="no such map")
    with pytest.raises(TypeError, match="cmap"):
        LoadingDisplay.from_estimator(est, kind="heatmap", cmap=[1, 2])
