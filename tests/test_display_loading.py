import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_dppca.display import LoadingDisplay


def _orthonormal(k, p, seed=0):
    return np.linalg.qr(np.random.default_rng(seed).normal(size=(p, k)))[0].T


def test_vector_arrow_ends_are_the_components(make_fake, save_png):
    est = make_fake("dppca", p=7, k=3, feature_names=True)
    fig, ax = plt.subplots()
    disp = LoadingDisplay.from_estimator(est, ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    V = est.components_
    assert len(disp.arrows_) == 7
    for j, arrow in enumerate(disp.arrows_):
        assert np.allclose(arrow.xy, (V[0, j], V[1, j]))
        assert np.allclose(arrow.xyann, (0, 0))
    assert disp.variables_ == [f"feat_{j}" for j in range(7)]
    assert [t.get_text() for t in disp.texts_] == disp.variables_
    assert ax.get_xlabel() == f"DP PC1 ({100 * est.explained_variance_ratio_[0]:.1f}%)"
    assert ax.get_ylabel().startswith("DP PC2 (")
    assert "private" in ax.get_title()
    assert ax.get_aspect() == 1.0
    # every arrow end and label lies inside the limits
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    for text in disp.texts_:
        x, y = text.get_position()
        assert x0 <= x <= x1 and y0 <= y <= y1
    save_png(fig)


def test_labels_sit_outward_along_the_arrow():
    V = np.array([[0.9, 0.0, -0.3], [0.1, 0.8, -0.5]])
    disp = LoadingDisplay(V, feature_names=["a", "b", "c"]).plot()
    for j, text in enumerate(disp.texts_):
        end = V[:, j]
        pos = np.array(text.get_position())
        # farther from the origin than the end, roughly in the same direction
        assert np.linalg.norm(pos) > np.linalg.norm(end)
        assert pos @ end / (np.linalg.norm(pos) * np.linalg.norm(end)) > 0.9


def test_point_kind_and_axes():
    V = _orthonormal(4, 6)
    disp = LoadingDisplay(V).plot(kind="point", axes=(2, 0))
    assert np.allclose(disp.scatter_.get_offsets(), np.column_stack([V[2], V[0]]))
    assert disp.arrows_ == []
    assert disp.ax_.get_xlabel() == "DP PC3"
    assert disp.ax_.get_ylabel() == "DP PC1"
    assert disp.variables_ == [f"x{j}" for j in range(6)]


def test_variables_selection():
    V = _orthonormal(3, 40, seed=1)
    names = [f"v{j}" for j in range(40)]
    disp = LoadingDisplay(V, feature_names=names).plot(kind="point")
    assert len(disp.variables_) == 30
    norms = np.hypot(V[0], V[1])
    dropped = sorted(set(names) - set(disp.variables_), key=names.index)
    kept_min = min(norms[names.index(v)] for v in disp.variables_)
    assert all(norms[names.index(v)] <= kept_min for v in dropped)
    # a smaller font for many labels
    assert disp.texts_[0].get_fontsize() < 9
    disp = LoadingDisplay(V, feature_names=names).plot(variables=["v3", 0, "v39"])
    assert disp.variables_ == ["v3", "v0", "v39"]
    assert np.allclose(disp.arrows_[2].xy, (V[0, 39], V[1, 39]))
    assert len(LoadingDisplay(V).plot(variables="all").arrows_) == 40


def test_heatmap(save_png):
    V = _orthonormal(5, 8, seed=2)
    ratio = np.array([0.4, 0.3, 0.15, 0.1, 0.05])
    disp = LoadingDisplay(V, explained_variance_ratio=ratio).plot(
        kind="heatmap", components=[0, 2, 4], cmap="PuOr"
    )
    data = np.asarray(disp.image_.get_array())
    assert np.allclose(data, V[[0, 2, 4]].T)
    vmin, vmax = disp.image_.get_clim()
    assert vmin == -vmax == pytest.approx(-np.max(np.abs(V[[0, 2, 4]])))
    assert disp.image_.get_cmap().name == "PuOr"
    assert disp.colorbar_ is not None
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == [f"x{j}" for j in range(8)]
    assert disp.ax_.get_xticklabels()[1].get_text().startswith("DP PC3")
    assert len(disp.cell_texts_) == 24
    save_png(disp.figure_)
    # default: all components up to 10
    disp = LoadingDisplay(_orthonormal(12, 15)).plot(kind="heatmap")
    assert np.asarray(disp.image_.get_array()).shape == (15, 10)


def test_nonprivate_overlay(make_fake):
    est = make_fake("dppca", p=6, k=3, nonprivate=True)
    ref = est.nonprivate_.components
    vec = LoadingDisplay.from_estimator(est)
    assert len(vec.nonprivate_arrows_) == 6
    for j, arrow in enumerate(vec.nonprivate_arrows_):
        assert np.allclose(arrow.xy, (ref[0, j], ref[1, j]))
        assert arrow.arrow_patch.get_linestyle() == "--"
    labels = [t.get_text() for t in vec.ax_.get_legend().get_texts()]
    assert "non-private reference" in labels
    pts = LoadingDisplay.from_estimator(est, kind="point")
    assert np.allclose(pts.nonprivate_scatter_.get_offsets(), ref[[0, 1]].T)
    assert pts.nonprivate_scatter_.get_facecolors().size == 0  # hollow
    heat = LoadingDisplay.from_estimator(est, kind="heatmap")
    assert np.allclose(np.asarray(heat.nonprivate_cells_.get_array()),
                       ref.T.ravel())
    assert heat.nonprivate_cells_.get_clim() == heat.image_.get_clim()
    assert heat.cell_texts_ == []
    off = LoadingDisplay.from_estimator(est, show_nonprivate=False)
    assert off.nonprivate_arrows_ == [] and off.ax_.get_legend() is None


def test_directions_estimator_has_no_pve_in_labels(make_fake):
    est = make_fake("directions", k=3)
    disp = LoadingDisplay.from_estimator(est, axes=(1, 2))
    assert disp.ax_.get_xlabel() == "DP PC2"
    assert disp.ax_.get_ylabel() == "DP PC3"


def test_from_estimator_defaults_to_the_estimator_axes(make_fake):
    est = make_fake("dppca", k=3)
    est.axes_ = (0, 2)
    disp = LoadingDisplay.from_estimator(est)
    assert np.allclose(disp.arrows_[0].xy, est.components_[[0, 2], 0])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"kind": "arrows"}, ValueError, "kind"),
        ({"kind": 1}, TypeError, "kind"),
        ({"axes": (0, 0)}, ValueError, "axes"),
        ({"axes": (0, 5)}, ValueError, "axes"),
        ({"axes": (0,)}, ValueError, "axes"),
        ({"axes": "01"}, TypeError, "axes"),
        ({"variables": ["nope"]}, ValueError, "variables"),
        ({"variables": [10]}, ValueError, "variables"),
        ({"variables": [1.0]}, TypeError, "variables"),
        ({"kind": "heatmap", "components": [7]}, ValueError, "components"),
        ({"kind": "heatmap", "components": []}, ValueError, "components"),
        ({"kind": "heatmap", "components": "0"}, TypeError, "components"),
        ({"kind": "vector", "components": [0, 1]}, ValueError, "components"),
        ({"arrow_kw": "red"}, TypeError, "arrow_kw"),
        ({"text_kw": 1}, TypeError, "text_kw"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    disp = LoadingDisplay(_orthonormal(3, 4))
    with pytest.raises(error, match=match):
        disp.plot(**kwargs)


def test_bad_values():
    with pytest.raises(ValueError, match="components"):
        LoadingDisplay(np.ones(3)).plot()
    with pytest.raises(ValueError, match="feature_names"):
        LoadingDisplay(_orthonormal(2, 4), feature_names=["a"]).plot()
    with pytest.raises(ValueError, match="nonprivate_components"):
        LoadingDisplay(_orthonormal(2, 4), nonprivate_components=np.eye(2)).plot()
    with pytest.raises(ValueError, match="axes"):
        LoadingDisplay(_orthonormal(1, 4)).plot()
    # not numbers: one error naming the argument, not numpy's
    with pytest.raises(ValueError, match="^components must hold numbers"):
        LoadingDisplay([["a", "b"], ["c", "d"]]).plot()
    with pytest.raises(ValueError, match="^components_noise_scale must hold numbers"):
        LoadingDisplay(_orthonormal(2, 4), components_noise_scale="x").plot()
    # one component: the heatmap still works
    LoadingDisplay(_orthonormal(1, 4)).plot(kind="heatmap")


def test_unsupported_estimators(not_fitted):
    with pytest.raises(NotFittedError):
        LoadingDisplay.from_estimator(not_fitted)

    class PlainPCA:
        def fit(self, X=None, y=None):
            return self

        def __sklearn_is_fitted__(self):
            return True

        def __sklearn_tags__(self):
            from sklearn.utils import Tags, TargetTags

            return Tags(estimator_type=None, target_tags=TargetTags(required=False))

        components_ = np.eye(2)

    with pytest.raises(TypeError, match="not a private estimator"):
        LoadingDisplay.from_estimator(PlainPCA())


def test_real_estimators(real_estimators, save_png):
    real = real_estimators
    for key in ("directions", "scree", "dppca"):
        est = real[key]
        for kind in ("vector", "point", "heatmap"):
            disp = LoadingDisplay.from_estimator(est, kind=kind)
            if kind == "vector":
                ends = np.array([a.xy for a in disp.arrows_])
                assert np.allclose(ends, est.components_[[0, 1]].T)
                assert disp.variables_ == [f"V{j}" for j in range(1, 21)]
            if key == "dppca" or kind == "vector":
                save_png(disp.figure_, f"{key}_{kind}.png")
            plt.close("all")
    assert len(LoadingDisplay.from_estimator(real["directions"]).nonprivate_arrows_) == 20


def _crowd(n_lost, n_clear=4, n_features=30):
    """Loadings on two components: ``n_clear`` clear of their noise on PC1 only
    (PC2's noise is wide), ``n_lost`` within it on both axes, the rest clear on
    both."""
    rng = np.random.default_rng(0)
    V = np.zeros((2, n_features))
    noise = np.full((2, n_features), 0.01)
    V[:, :n_lost] = rng.uniform(-0.01, 0.01, size=(2, n_lost))     # within 2 sd
    clear = slice(n_lost, n_lost + n_clear)
    V[0, clear], V[1, clear], noise[1, clear] = 0.4, 0.3, 0.5        # PC1 only
    V[:, n_lost + n_clear:] = 0.2
    names = [f"v{j}" for j in range(n_features)]
    return LoadingDisplay(V, feature_names=names, components_noise_scale=noise)


@pytest.mark.parametrize("kind", ["vector", "point"])
def test_a_crowd_of_loadings_within_noise_is_not_labelled(kind):
    disp = _crowd(n_lost=20).plot(kind=kind)
    shown = [t.get_text() for t in disp.texts_ if t.get_visible()]
    # the names of the 20 lost on both axes are hidden, said in one note; those
    # clear on PC1 alone (uncertain as arrows) and the rest keep theirs
    assert shown == [f"v{j}" for j in range(20, 30)]
    assert disp.uncertain_[20:24].all()
    assert "20 of 30 loadings within their noise on both axes" in \
        disp.unlabelled_note_.get_text()
    assert [t.get_text() for t in disp.texts_] == disp.variables_     # one per variable
    plt.close("all")


def test_a_few_loadings_within_noise_keep_their_labels():
    disp = _crowd(n_lost=10).plot()
    assert all(t.get_visible() for t in disp.texts_)
    assert disp.unlabelled_note_ is None
    plt.close("all")
