import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_dppca.display import BiplotDisplay, ScoreDisplay


def _mesh_values(mesh, shape):
    """The histogram a QuadMesh shows, back in [ix, iy] order."""
    return np.asarray(mesh.get_array()).reshape(shape[1], shape[0]).T


def _mesh_x_edges(mesh):
    coords = mesh.get_coordinates()  # (ny + 1, nx + 1, 2)
    return coords[0, :, 0], coords[:, 0, 1]


def test_histogram_cells_are_the_released_histogram(make_fake, save_png):
    est = make_fake("dppca", bins=(12, 10))
    fig, ax = plt.subplots()
    disp = ScoreDisplay.from_estimator(est, ax=ax, groups=None)
    assert disp.ax_ is ax and disp.figure_ is fig
    H = est.score_histogram_
    assert np.allclose(_mesh_values(disp.mesh_, H.shape), H)
    xe, ye = _mesh_x_edges(disp.mesh_)
    assert np.allclose(xe, est.bin_edges_[0]) and np.allclose(ye, est.bin_edges_[1])
    # one shared scale from 0, a colour bar, the frame as the limits, equal aspect
    assert disp.mesh_.get_clim() == (0.0, pytest.approx(H.max()))
    assert disp.colorbar_ is not None
    assert np.allclose(ax.get_xlim(), est.frame_.extent[:2])
    assert np.allclose(ax.get_ylim(), est.frame_.extent[2:])
    assert ax.get_aspect() == 1.0
    assert ax.get_xlabel() == f"DP PC1 ({100 * est.explained_variance_ratio_[0]:.1f}%)"
    assert "private histogram" in ax.get_title()
    assert disp.scatter_ is None
    save_png(fig)


def test_points_and_center(make_fake):
    est = make_fake("dppca", groups=False)
    c = est.frame_.center
    disp = ScoreDisplay.from_estimator(est, kind="points")
    assert np.allclose(disp.scatter_.get_offsets(), est.synthetic_scores_)
    assert disp.mesh_ is None
    disp = ScoreDisplay.from_estimator(est, kind="both", center=True)
    assert np.allclose(disp.scatter_.get_offsets(), est.synthetic_scores_ - c)
    xe, ye = _mesh_x_edges(disp.mesh_)
    assert np.allclose(xe, est.bin_edges_[0] - c[0])
    assert np.allclose(ye, est.bin_edges_[1] - c[1])
    assert np.allclose(disp.ax_.get_xlim(), np.array(est.frame_.extent[:2]) - c[0])
    assert "centre" in disp.ax_.get_xlabel()


def test_groups_as_colors(make_fake):
    est = make_fake("dppca", n_groups=3)
    pts = ScoreDisplay.from_estimator(est, kind="points")
    assert pts.groups_ == ["G1", "G2", "G3"]
    assert len(pts.scatter_) == 3
    for label, collection in zip(pts.groups_, pts.scatter_):
        mask = est.synthetic_groups_ == label
        assert np.allclose(collection.get_offsets(), est.synthetic_scores_[mask])
    colors = [tuple(c.get_facecolor()[0][:3]) for c in pts.scatter_]
    assert len(set(colors)) == 3
    legend = [t.get_text() for t in pts.ax_.get_legend().get_texts()]
    assert legend[:3] == ["G1", "G2", "G3"]
    # histogram: each group's non-empty cells in its colour, relative to its peak
    hist = ScoreDisplay.from_estimator(est)
    assert len(hist.mesh_) == 3
    for label, mesh in zip(hist.groups_, hist.mesh_):
        H = est.score_histograms_[label]
        assert np.allclose(np.asarray(mesh.get_array()), H[H > 0])
        assert mesh.get_clim() == (0.0, pytest.approx(H.max()))
    # both: the overall histogram in grey under the coloured points
    both = ScoreDisplay.from_estimator(est, kind="both")
    assert np.allclose(_mesh_values(both.mesh_, est.score_histogram_.shape),
                       est.score_histogram_)
    assert len(both.scatter_) == 3


def test_groups_sharing_a_cell_are_drawn_side_by_side():
    """No group hides another: a cell several groups reach is split into one
    stripe per group present, in group order, together covering the cell."""
    edges = (np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0]))
    frame = {"center": [1.0, 0.5], "extent": (0.0, 2.0, -0.5, 1.5)}
    a = np.array([[0.5], [0.5]])      # group a in both cells
    b = np.array([[1.0], [0.0]])      # group b in the first only
    c = np.array([[0.2], [0.0]])      # group c in the first only
    disp = ScoreDisplay(frame, edges, (a + b + c) / 3,
                        group_histograms={"a": a, "b": b, "c": c}).plot()
    boxes = [[tuple(np.round(path.vertices[:4].min(axis=0), 9))
              + tuple(np.round(path.vertices[:4].max(axis=0), 9))
              for path in mesh.get_paths()] for mesh in disp.mesh_]
    third = 1 / 3
    assert boxes[0] == [(0.0, 0.0, round(third, 9), 1.0), (1.0, 0.0, 2.0, 1.0)]
    assert boxes[1] == [(round(third, 9), 0.0, round(2 * third, 9), 1.0)]
    assert boxes[2] == [(round(2 * third, 9), 0.0, 1.0, 1.0)]
    # opacity: the share relative to each group's own largest cell
    assert np.allclose(disp.mesh_[0].get_array(), [0.5, 0.5])
    assert disp.mesh_[0].get_clim() == (0.0, 0.5)
    alphas = [mesh.to_rgba(mesh.get_array())[:, 3] for mesh in disp.mesh_]
    assert np.allclose(alphas[0], 0.85) and np.allclose(alphas[2], 0.85)


def test_groups_as_facets(make_fake, save_png):
    est = make_fake("dppca", n_groups=3)
    disp = ScoreDisplay.from_estimator(est, kind="both", groups="facets")
    assert disp.ax_.shape == (3,)
    assert disp.bounding_ax_ is None
    vmax = max(h.max() for h in est.score_histograms_.values())
    for label, sub, mesh, points in zip(disp.groups_, disp.ax_, disp.mesh_,
                                        disp.scatter_):
        assert sub.get_title() == label
        H = est.score_histograms_[label]
        assert np.allclose(_mesh_values(mesh, H.shape), H)
        assert mesh.get_clim() == (0.0, pytest.approx(vmax))
        mask = est.synthetic_groups_ == label
        assert np.allclose(points.get_offsets(), est.synthetic_scores_[mask])
        assert np.allclose(sub.get_xlim(), est.frame_.extent[:2])
    # shared x and y
    assert disp.ax_[0].get_shared_x_axes().joined(disp.ax_[0], disp.ax_[2])
    assert disp.ax_[0].get_shared_y_axes().joined(disp.ax_[0], disp.ax_[1])
    save_png(disp.figure_)


def test_facets_in_given_axes(make_fake):
    est = make_fake("dppca", n_groups=3)
    fig, axs = plt.subplots(1, 3)
    disp = ScoreDisplay.from_estimator(est, ax=axs, groups="facets")
    assert list(disp.ax_) == list(axs)
    # one Axes is split into a row of facets
    fig, ax = plt.subplots()
    disp = ScoreDisplay.from_estimator(est, ax=ax, groups="facets", kind="points")
    assert disp.bounding_ax_ is ax and not ax.axison
    assert len(disp.ax_) == 3 and all(sub.figure is fig for sub in disp.ax_)
    with pytest.raises(ValueError, match="one per group"):
        ScoreDisplay.from_estimator(est, ax=axs[:2], groups="facets")


def test_nonprivate_overlay(make_fake):
    est = make_fake("dppca", nonprivate=True)
    disp = ScoreDisplay.from_estimator(est, groups=None)
    assert disp.nonprivate_contour_ is not None
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert any(t.startswith("non-private reference") for t in legend)
    assert ScoreDisplay.from_estimator(est, show_nonprivate=False).nonprivate_contour_ is None
    # without the true histogram, the mean-centred scores as hollow markers
    d = ScoreDisplay(est.frame_, est.bin_edges_, est.score_histogram_,
                     synthetic_scores=est.synthetic_scores_,
                     nonprivate_scores=est.nonprivate_.scores)
    d.plot(kind="points", center=True)
    offsets = d.nonprivate_scatter_.get_offsets()
    assert len(offsets) <= 600
    assert d.nonprivate_scatter_.get_facecolors().size == 0
    # drawn around the private centre when not centring
    d.plot(kind="points", center=False)
    shifted = d.nonprivate_scatter_.get_offsets()
    assert np.allclose(shifted - offsets, est.frame_.center)


def test_values_from_a_plain_dict_frame(make_fake):
    est = make_fake("dppca")
    frame = {"center": est.frame_.center, "extent": est.frame_.extent}
    disp = ScoreDisplay(frame, est.bin_edges_, est.score_histogram_,
                        axes=(1, 2)).plot()
    assert disp.ax_.get_xlabel() == "DP PC2"


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"kind": "dots"}, ValueError),
        ({"groups": "rainbow"}, ValueError),
        ({"groups": True}, TypeError),
        ({"center": "yes"}, TypeError),
        ({"hist_kw": 1}, TypeError),
        ({"scatter_kw": "red"}, TypeError),
        ({"axes": (1, 0)}, ValueError),
        ({"axes": (0.0, 1.0)}, TypeError),
    ],
)
def test_bad_plot_arguments(kwargs, error, make_fake):
    est = make_fake("dppca")
    (name,) = kwargs
    with pytest.raises(error, match=f"^{name}"):
        ScoreDisplay.from_estimator(est, **kwargs)


def test_missing_pieces(make_fake):
    est = make_fake("dppca", groups=False)
    base = ScoreDisplay(est.frame_, est.bin_edges_, est.score_histogram_)
    with pytest.raises(ValueError, match="synthetic_scores"):
        base.plot(kind="points")
    with pytest.raises(ValueError, match="facets"):
        base.plot(groups="facets")
    # groups="colors" without groups: one colour, no error
    assert ScoreDisplay.from_estimator(est, kind="points").groups_ is None
    with pytest.raises(ValueError, match="histogram"):
        ScoreDisplay(est.frame_, est.bin_edges_, np.ones((3, 3))).plot()
    with pytest.raises(ValueError, match="non-negative"):
        ScoreDisplay(est.frame_, est.bin_edges_, -est.score_histogram_).plot()
    with pytest.raises(ValueError, match="synthetic_scores"):
        ScoreDisplay(est.frame_, est.bin_edges_, est.score_histogram_,
                     synthetic_scores=np.ones((4, 3))).plot()
    with pytest.raises(ValueError, match="axes"):
        ScoreDisplay(est.frame_, est.bin_edges_, est.score_histogram_, axes=(0, 5),
                     explained_variance_ratio=[0.5, 0.3, 0.2]).plot()


def test_axes_must_be_the_released_ones(make_fake):
    est = make_fake("dppca", k=3)
    assert ScoreDisplay.from_estimator(est, axes=(0, 1)) is not None
    with pytest.raises(ValueError, match="axes"):
        ScoreDisplay.from_estimator(est, axes=(0, 2))
    with pytest.raises(ValueError, match="axes"):
        ScoreDisplay.from_estimator(est, axes=(1, 1))


def test_unsupported_estimators(make_fake, not_fitted):
    for kind, name in (("scree", "FakeDPScree"), ("directions", "FakeDPKendallDirections")):
        with pytest.raises(TypeError, match=f"ScoreDisplay needs a fitted DPPCA; {name} "
                                            "has no score summary"):
            ScoreDisplay.from_estimator(make_fake(kind))
    with pytest.raises(NotFittedError):
        ScoreDisplay.from_estimator(not_fitted)
    skipped = make_fake("dppca")
    skipped.frame_ = None
    # no score step in the ledger: the score part was skipped
    skipped.privacy_ledger_ = [item for item in skipped.privacy_ledger_
                               if not item["step"].startswith("score")]
    with pytest.raises(TypeError, match="skipped"):
        ScoreDisplay.from_estimator(skipped)


def test_score_summary_not_estimable_is_a_panel_not_axes(make_fake):
    """A fit that ran its score part but found no frame draws no axes: the panel
    says the score summary is not estimable."""
    est = make_fake("dppca")
    assert any(item["step"].startswith("score") for item in est.privacy_ledger_)
    est.frame_ = est.bin_edges_ = est.score_histogram_ = None
    est.synthetic_scores_ = est.score_histograms_ = est.synthetic_groups_ = None
    disp = ScoreDisplay.from_estimator(est)
    assert disp.mesh_ is None and disp.scatter_ is None
    assert "score summary not estimable" in disp.not_estimable_text_.get_text()
    assert not disp.ax_.axison
    plt.close("all")


def test_real_estimators(real_estimators, save_png):
    real = real_estimators
    est = real["dppca"]
    for kind in ("histogram", "points", "both"):
        for groups in ("colors", "facets", None):
            disp = ScoreDisplay.from_estimator(est, kind=kind, groups=groups,
                                               center=kind == "both")
            if groups == {"histogram": "colors", "points": None, "both": "facets"}[kind]:
                save_png(disp.figure_, f"{kind}_{groups}.png")
            plt.close("all")
    disp = ScoreDisplay.from_estimator(est, groups=None)
    assert np.allclose(_mesh_values(disp.mesh_, est.score_histogram_.shape),
                       est.score_histogram_)
    assert disp.groups_ is None
    assert ScoreDisplay.from_estimator(est).groups_ == ["G1", "G2", "G3", "G4", "G5"]
    plain = ScoreDisplay.from_estimator(real["dppca_plain"], kind="both")
    assert np.allclose(plain.scatter_.get_offsets(), real["dppca_plain"].synthetic_scores_)
    for key in ("scree", "directions"):
        with pytest.raises(TypeError, match="ScoreDisplay needs a fitted DPPCA"):
            ScoreDisplay.from_estimator(real[key])


def test_expected_noise_cells_are_stated(make_fake):
    est = make_fake("dppca", groups=False)
    disp = ScoreDisplay.from_estimator(est)
    assert disp.noise_text_.get_text() == "\u22480.4 noise-only cells expected"
    assert disp.noise_text_.axes is disp.ax_
    grey = matplotlib.colors.to_rgb(disp.noise_text_.get_color())
    # from one expected noise cell on, the note turns red
    est.expected_noise_cells_ = 3.2
    loud = ScoreDisplay.from_estimator(est, kind="both")
    assert loud.noise_text_.get_text().startswith("\u22483.2 ")
    assert matplotlib.colors.to_rgb(loud.noise_text_.get_color()) != grey
    # the sparse histogram: none
    est.expected_noise_cells_ = 0.0
    sparse = ScoreDisplay.from_estimator(est, kind="points")
    assert sparse.noise_text_.get_text() == "0 noise-only cells expected"
    # with groups the count covers every group's grid; facets: on the last one
    grouped = make_fake("dppca", n_groups=3)
    assert ScoreDisplay.from_estimator(grouped).noise_text_.get_text().endswith(
        "(all groups)")
    facets = ScoreDisplay.from_estimator(grouped, groups="facets")
    assert facets.noise_text_.axes is facets.ax_[-1]
    # unknown: nothing written
    plain = ScoreDisplay(est.frame_, est.bin_edges_, est.score_histogram_).plot()
    assert plain.noise_text_ is None
    with pytest.raises(ValueError, match="expected_noise_cells"):
        ScoreDisplay(est.frame_, est.bin_edges_, est.score_histogram_,
                     expected_noise_cells=-1.0).plot()


def _cell_counts(points, edges):
    return np.histogram2d(points[:, 0], points[:, 1], bins=edges)[0]


def test_synthetic_points_never_come_from_a_cell_below_the_threshold(real_estimators):
    """A cell the threshold zeroed gets no synthetic point (without jitter, every
    point lies in the cell it was drawn from)."""
    from sklearn_dppca import DPPCA

    real = real_estimators
    X, y = real["X"], real["y"]
    for groups in (None, ["G1", "G2", "G3", "G4", "G5"]):
        est = DPPCA(eps=5.0, bins=(12, 12), groups=groups, synthetic_jitter=0.0,
                    random_state=3).fit(X, y)
        assert est.histogram_threshold_ > 0
        zeroed = est.score_histogram_ == 0
        assert zeroed.any()
        counts = _cell_counts(est.synthetic_scores_, est.bin_edges_)
        assert counts.sum() == len(est.synthetic_scores_) > 0
        assert np.all(counts[zeroed] == 0)
        if groups is not None:
            for label in groups:
                mine = est.synthetic_groups_ == label
                counts = _cell_counts(est.synthetic_scores_[mine], est.bin_edges_)
                assert np.all(counts[est.score_histograms_[label] == 0] == 0)
        # the displays draw exactly these points, nothing else
        both = ScoreDisplay.from_estimator(est, kind="both", groups=None)
        assert np.allclose(both.scatter_.get_offsets(), est.synthetic_scores_)
        biplot = BiplotDisplay.from_estimator(est, alpha=0.0, center=False)
        assert np.allclose(biplot.observation_coordinates_, est.synthetic_scores_)
        plt.close("all")


def test_hist_kw_norm_replaces_the_linear_scale(make_fake):
    from matplotlib.colors import PowerNorm

    est = make_fake("dppca")
    for groups in (None, "colors", "facets"):
        disp = ScoreDisplay.from_estimator(est, groups=groups,
                                           hist_kw={"norm": PowerNorm(0.5)})
        mesh = disp.mesh_ if groups is None else disp.mesh_[0]
        assert isinstance(mesh.norm, PowerNorm)
        plt.close("all")


def test_empty_histograms_are_drawn_without_error(make_fake, save_png):
    """Thresholding can leave a group (or everything) with no mass at all."""
    est = make_fake("dppca", n_groups=3)
    est.score_histograms_["G2"] = np.zeros_like(est.score_histogram_)
    keep = est.synthetic_groups_ != "G2"
    est.synthetic_scores_ = est.synthetic_scores_[keep]
    est.synthetic_groups_ = est.synthetic_groups_[keep]
    for kind in ("histogram", "points", "both"):
        for groups in ("colors", "facets", None):
            disp = ScoreDisplay.from_estimator(est, kind=kind, groups=groups)
            assert "G2" in (disp.groups_ or ["G2"])
            plt.close("all")
    # an empty panel says why it is empty
    layers = ScoreDisplay.from_estimator(est)
    legend = [t.get_text() for t in layers.ax_.get_legend().get_texts()]
    assert "G2 (no cell passed)" in legend and "G1" in legend
    facets = ScoreDisplay.from_estimator(est, groups="facets")
    notes = [[t.get_text() for t in sub.texts] for sub in facets.ax_]
    assert notes[1][0].startswith("no cell passed")
    assert not any(text.startswith("no cell") for text in notes[0] + notes[2])
    empty = ScoreDisplay(est.frame_, est.bin_edges_, np.zeros_like(est.score_histogram_),
                         synthetic_scores=np.empty((0, 2)))
    for kind in ("histogram", "both", "points"):
        shown = empty.plot(kind=kind)
        assert any(t.get_text().startswith("no ") for t in shown.ax_.texts), kind
    save_png(empty.plot(kind="both").figure_)


def test_facet_titles_keep_the_shared_scale(make_fake, save_png):
    est = make_fake("dppca", n_groups=3)
    vmax = max(h.max() for h in est.score_histograms_.values())
    wanted = ["first arm", "second arm", "third arm"]
    as_list = ScoreDisplay.from_estimator(est, groups="facets", titles=wanted)
    assert [sub.get_title() for sub in as_list.ax_] == wanted
    by_label = ScoreDisplay.from_estimator(
        est, groups="facets", titles={"G3": "c", "G1": "a", "G2": "b"})
    assert [sub.get_title() for sub in by_label.ax_] == ["a", "b", "c"]
    for disp in (as_list, by_label):
        assert all(mesh.get_clim() == (0.0, pytest.approx(vmax)) for mesh in disp.mesh_)
        assert len(disp.figure_.axes) == 4  # three facets and one colour bar
    save_png(by_label.figure_)
    plt.close("all")


def test_facet_titles_are_checked(make_fake):
    est = make_fake("dppca", n_groups=3)
    with pytest.raises(ValueError, match="titles has 2 titles for 3"):
        ScoreDisplay.from_estimator(est, groups="facets", titles=["a", "b"])
    with pytest.raises(ValueError, match="lacks a title for 1 of the 3"):
        ScoreDisplay.from_estimator(est, groups="facets", titles={"G1": "a", "G2": "b"})
    with pytest.raises(TypeError, match="titles"):
        ScoreDisplay.from_estimator(est, groups="facets", titles="abc")
    with pytest.raises(TypeError, match="strings"):
        ScoreDisplay.from_estimator(est, groups="facets", titles=[1, 2, 3])
    with pytest.raises(ValueError, match="facets"):
        ScoreDisplay.from_estimator(est, groups="colors", titles=["a", "b", "c"])
    plt.close("all")


def test_two_score_displays_side_by_side(make_fake, save_png):
    fits = {"additive": make_fake("dppca", seed=0, groups=False),
            "sparse": make_fake("dppca", seed=1, groups=False)}
    fig, axs = plt.subplots(1, 2, figsize=(8, 4))
    shown = {}
    for ax, (name, fit) in zip(axs, fits.items()):
        shown[name] = ScoreDisplay.from_estimator(fit, ax=ax, groups=None)
        ax.set_title(f"{name} histogram")
    for ax, (name, fit) in zip(axs, fits.items()):
        disp = shown[name]
        assert disp.ax_ is ax and disp.figure_ is fig
        assert ax.get_title() == f"{name} histogram"
        H = fit.score_histogram_
        assert np.allclose(_mesh_values(disp.mesh_, H.shape), H)
    assert shown["additive"].mesh_ is not shown["sparse"].mesh_
    save_png(fig)
    plt.close("all")
