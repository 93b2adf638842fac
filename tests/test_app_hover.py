"""What the explorer says under the pointer (``sklearn_dppca.app._hover``): the
released value of the thing pointed at, with its noise sd, found where the
picture draws it, and never a non-private number."""

import io
import re
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from sklearn_dppca._data_sources import TabularData  # noqa: E402
from sklearn_dppca.app._hover import (  # noqa: E402
    _NEAR_PIXELS, _share_points, hover_targets, hover_text)
from sklearn_dppca.app._figures import draw_figure  # noqa: E402
from sklearn_dppca.app._session import Explorer  # noqa: E402
from sklearn_dppca.app._sources import BUDGET_SUFFIX  # noqa: E402
from sklearn_dppca.datasets import make_gaussian_clusters  # noqa: E402

DPI = 100


@pytest.fixture(scope="module")
def fit(tmp_path_factory):
    """One fit on 5,000 rows of 10 variables in 5 groups that stored the reference
    (the seed, which the page never sets, makes it reproducible: a score summary)."""
    X, y = make_gaussian_clusters(1000, n_features=10, return_groups=True,
                                  as_frame=True, random_state=0)
    data = TabularData(X, y.to_numpy(dtype=object), sorted(set(y)), "clusters")
    folder = tmp_path_factory.mktemp("hover")
    explorer = Explorer(data, (4.0, 1e-5), folder / f"clusters{BUDGET_SUFFIX}",
                        reference=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = explorer.fit({"eps": 2.0, "delta": 1e-6, "n_components": 3,
                              "nonprivate": True, "random_state": 1})
    return explorer.fits[index]


def _drawn(fit, display, pair=(0, 1), show_reference=False):
    figure, shown = draw_figure(fit, display, axes=pair, figsize=(9.0, 5.0),
                                show_reference=show_reference)
    figure.set_dpi(DPI)
    figure.savefig(io.BytesIO(), format="png", dpi=DPI)
    return figure, shown, hover_targets(figure, display, shown, fit.release, pair)


def _at(x, y):
    return {"coords_img": {"x": x, "y": y}}


def _arrow_tips(figure, shown, arrows):
    """Where the picture's arrows end (``annotation.xy``), in image pixels: the
    truth to find."""
    height = figure.bbox.height
    tips = []
    for arrow in arrows:
        tx, ty = shown.ax_.transData.transform(arrow.xy)
        tips.append((tx, height - ty))
    return tips


@pytest.mark.parametrize("display, pair", [("loading", (0, 1)), ("loading", (2, 0)),
                                           ("biplot", (0, 1))])
def test_pointing_at_an_arrow_names_its_variable_and_released_loadings(fit, display,
                                                                       pair):
    figure, shown, targets = _drawn(fit, display, pair)
    release = fit.release
    names = list(release.feature_names_in_)
    pair = pair if display == "loading" else tuple(release.axes_)
    # the arrows as drawn (their ends), each named by the picture's own label
    for arrow, name in zip(shown.arrows_, shown.variables_):
        tip = _arrow_tips(figure, shown, [arrow])[0]
        said = hover_text(targets, _at(tip[0] + 3, tip[1] - 3))
        j = names.index(name)
        a, b = pair
        # a variable whose arrow ends near another's may be named for it: the
        # words must then be the other's own
        said_name = said.split(":")[0]
        assert said_name in names, said
        k = names.index(said_name)
        expected = (f"{said_name}: PC{a + 1} loading {release.components_[a, k]:+.3f} "
                    f"(noise sd {release.components_noise_scale_[a, k]:.2g}), "
                    f"PC{b + 1} loading {release.components_[b, k]:+.3f} "
                    f"(noise sd {release.components_noise_scale_[b, k]:.2g})")
        assert said == expected
        if k != j:
            other = _arrow_tips(figure, shown, [shown.arrows_[shown.variables_.index(
                said_name)]])[0]
            assert np.hypot(other[0] - tip[0], other[1] - tip[1]) < 2 * _NEAR_PIXELS


def test_the_values_said_are_the_release_s_even_with_the_reference_drawn(fit):
    assert fit.has_reference
    exact = np.asarray(fit.estimator.nonprivate_.components)
    released = fit.release.components_
    names = list(fit.release.feature_names_in_)
    figure, shown, targets = _drawn(fit, "loading", show_reference=True)
    differ = 0
    for text in targets["texts"]:
        name, words = text.split(": ", 1)
        said = [float(v) for v in re.findall(r"loading ([+-][0-9.]+)", words)]
        j = names.index(name)
        assert said == pytest.approx(released[:2, j], abs=5e-4)
        differ += int(np.any(np.abs(exact[:2, j] - released[:2, j]) > 2e-3))
    assert differ      # (the test can tell them apart: the noise moved some)


def test_pointing_at_a_variable_of_the_circle_says_its_correlations(fit):
    figure, shown, targets = _drawn(fit, "variable", (1, 2))
    height = figure.bbox.height
    assert len(shown.variables_) == len(targets["texts"]) > 0
    for i, name in enumerate(shown.variables_):
        x, y = shown.ax_.transData.transform(shown.coordinates_[i])
        said = hover_text(targets, _at(x, height - y))
        r = shown.correlations_[i]
        if said.startswith(f"{name}: "):
            assert said.startswith(f"{name}: correlation with PC2 {r[0]:+.2f}, with PC3 "
                                   f"{r[1]:+.2f} (private)"), said
        else:       # another variable drawn at the same place: its own words
            other = said.split(": ")[0]
            j = shown.variables_.index(other)
            assert np.allclose(shown.coordinates_[j], shown.coordinates_[i], atol=0.1)


def test_pointing_far_from_everything_says_nothing(fit):
    figure, shown, targets = _drawn(fit, "loading")
    corner = hover_text(targets, _at(1, 1))
    assert corner == ""
    assert hover_text(targets, None) == "" and hover_text(None, _at(1, 1)) == ""


def test_the_scree_says_each_component_over_its_column(fit):
    figure, shown, targets = _drawn(fit, "scree")
    release = fit.release
    height = figure.bbox.height
    ratio = release.explained_variance_ratio_
    # each share's own sd (the total's noise too), as the error bars draw it
    share_sd = release.explained_variance_ratio_noise_scale_
    for i, bar in enumerate(shown.bars_.patches):
        # anywhere over the bar's column, high or low
        x = shown.ax_.transData.transform((bar.get_x() + 0.8 * bar.get_width(), 0))[0]
        for y in (0.2 * height, 0.8 * height):
            said = hover_text(targets, _at(x, y))
            assert said.startswith(f"PC{i + 1}: PVE {100 * ratio[i]:.1f}% (sd of noise and "
                                   f"clipping {100 * share_sd[i]:.2g} points)"), said


def test_the_score_picture_says_the_cell_under_the_pointer(fit):
    figure, shown, targets = _drawn(fit, "score")
    release = fit.release
    (ex, ey), histogram = release.bin_edges_, release.score_histogram_
    ix, iy = np.unravel_index(np.argmax(histogram), histogram.shape)
    x = 0.5 * (ex[ix] + ex[ix + 1])
    y = 0.5 * (ey[iy] + ey[iy + 1])
    px, py = shown.ax_.transData.transform((x, y))
    said = hover_text(targets, _at(px, figure.bbox.height - py))
    assert said.startswith(f"cell PC1 {ex[ix]:.3g} to {ex[ix + 1]:.3g}, PC2 "
                           f"{ey[iy]:.3g} to {ey[iy + 1]:.3g}: "), said
    assert f"all rows {histogram[ix, iy]:.3g}" in said
    for label in release.groups_:
        assert f"{label} {release.score_histograms_[label][ix, iy]:.3g}" in said


def test_a_release_without_share_sds_reads_the_variance_sd_over_the_total():
    """A file written before the shares' sds were kept: the hover says what
    its error bars draw, the variance's sd over the total, in points."""
    old = SimpleNamespace(explained_variance_ratio_noise_scale_=None)
    assert _share_points(old, 0, 2.0, 50.0) == pytest.approx(4.0)
    assert _share_points(old, 0, np.nan, 50.0) is None
    new = SimpleNamespace(explained_variance_ratio_noise_scale_=np.array([0.03, np.nan]))
    assert _share_points(new, 0, 2.0, 50.0) == pytest.approx(3.0)
    assert _share_points(new, 1, 2.0, 50.0) is None
