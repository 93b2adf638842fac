import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine, TightLayoutEngine
from matplotlib.table import Table
from sklearn.exceptions import NotFittedError

from sklearn_dppca.display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
    plot_overview,
)


def _table(fig):
    tables = [t for ax in fig.axes for t in ax.tables if isinstance(t, Table)]
    assert len(tables) == 1
    cells = tables[0].get_celld()
    n_rows = max(r for r, _ in cells) + 1
    return [[cells[(r, c)].get_text().get_text() for c in range(5)] for r in range(n_rows)]


def _titles(fig):
    return [ax.get_title() for ax in fig.axes]


def test_dppca_overview_has_all_panels(make_fake, save_png):
    est = make_fake("dppca", nonprivate=True)
    fig = plot_overview(est)
    assert isinstance(fig, Figure)
    assert set(fig.displays_) == {"scree", "loading", "score", "variable", "biplot"}
    assert isinstance(fig.displays_["scree"], ScreeDisplay)
    assert isinstance(fig.displays_["loading"], LoadingDisplay)
    assert isinstance(fig.displays_["score"], ScoreDisplay)
    assert isinstance(fig.displays_["variable"], VariableDisplay)
    assert isinstance(fig.displays_["biplot"], BiplotDisplay)
    assert all(d.figure_ is fig for d in fig.displays_.values())
    rows = _table(fig)
    assert rows[0] == ["step", "mechanism", "eps", "delta", "noise scale"]
    assert len(rows) == 1 + len(est.privacy_ledger_) + 1
    assert rows[1][:3] == ["loading", "gaussian", "0.4"]
    assert rows[-1][0] == "total spent" and rows[-1][2] == "1"
    assert "eps = 1" in fig._suptitle.get_text()
    save_png(fig)


def _cells_hold_their_text(fig):
    """Every ledger cell's text lies inside the cell, and the table in the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    table = [t for ax in fig.axes for t in ax.tables][0]
    figure_box = fig.bbox
    for cell in table.get_celld().values():
        box = cell.get_window_extent(renderer)
        text = cell.get_text().get_window_extent(renderer)
        assert text.x0 >= box.x0 - 0.5 and text.x1 <= box.x1 + 0.5, \
            cell.get_text().get_text()
        assert text.y0 >= box.y0 - 0.5 and text.y1 <= box.y1 + 0.5, \
            cell.get_text().get_text()
        assert box.x1 <= figure_box.x1 + 0.5 and box.y0 >= figure_box.y0 - 0.5
    return table


def test_long_ledgers_merge_calls_and_fit(make_fake, make_ledger):
    est = make_fake("dppca", scale=True, p=6)
    steps = [(f"scale/spread of column {j}", "gaussian (analytic)", 0.002, 1e-8)
             for j in range(30)]
    steps += [("scree/total variance/norm-clipped U-statistic", "gaussian (analytic)",
               0.03, 4e-7)]
    est.privacy_ledger_ = make_ledger(steps) + est.privacy_ledger_
    fig = plot_overview(est)
    rows = _table(fig)
    assert len(rows) <= 16
    merged = [row for row in rows if row[0] == "scale/* (30 calls)"]
    assert len(merged) == 1 and float(merged[0][2]) == pytest.approx(0.06)
    assert float(merged[0][3]) == pytest.approx(3e-7)
    assert rows[-1][0] == "total spent"
    ledger_ax = [ax for ax in fig.axes if ax.tables][0]
    assert "merge" in ledger_ax.get_title()
    _cells_hold_their_text(fig)
    # the summary states the scaling, the share of the total variance and the
    # expected number of noise-only cells
    summary = " ".join(" ".join(t.get_text().split()) for ax in fig.axes
                       for t in ax.texts)
    assert "each divided by a private spread" in summary
    share = 100 * est.explained_variance_ratio_.sum()
    assert f"{share:.1f}% of the total variance" in summary
    assert "noise-only cells expected: 0.4" in summary
    # a short ledger: one row per call
    fig = plot_overview(make_fake("dppca"), layout=None)
    assert "one row per mechanism call)" in [ax for ax in fig.axes if ax.tables][
        0].get_title()


@pytest.mark.parametrize("layout, engine", [("constrained", ConstrainedLayoutEngine),
                                            ("tight", TightLayoutEngine),
                                            (None, type(None))])
def test_the_layout_engine_is_kept(layout, engine, make_fake):
    # the panels are drawn on the laid-out figure without its engine, which is
    # then given back (with the settings it had)
    fig = plot_overview(make_fake("dppca"), layout=layout)
    assert isinstance(fig.get_layout_engine(), engine)
    if layout == "constrained":
        fig2 = plot_overview(make_fake("dppca"), layout=ConstrainedLayoutEngine(w_pad=0.3))
        assert fig2.get_layout_engine().get()["w_pad"] == 0.3


def test_the_default_figure_comes_back_laid_out_without_an_engine(make_fake):
    # no layout of the caller's choosing: the drawn figure is laid out by
    # constrained layout once and returned without an engine, so that saving it
    # draws it once instead of laying it out again and drawing it twice
    fig = plot_overview(make_fake("dppca"))
    assert fig.get_layout_engine() is None
    laid_out = np.array([ax.get_position().bounds for ax in fig.axes])
    ConstrainedLayoutEngine().execute(fig)
    again = np.array([ax.get_position().bounds for ax in fig.axes])
    # (a second layout run moves panels a little: it is not exactly idempotent)
    np.testing.assert_allclose(laid_out, again, rtol=0, atol=0.01)
    # the two-tick stand-ins of the empty-panel layout are gone: the score panel
    # keeps its automatic ticks
    from matplotlib.ticker import AutoLocator, ScalarFormatter

    score = fig.displays_["score"].ax_
    assert isinstance(score.xaxis.get_major_locator(), AutoLocator)
    assert isinstance(score.yaxis.get_major_formatter(), ScalarFormatter)
    assert score.xaxis.isDefault_majloc and score.yaxis.isDefault_majfmt
    assert len(score.get_xticks()) > 2


def test_the_saved_default_figure_matches_a_constrained_one(make_fake, tmp_path):
    # the same picture as with the engine kept (which lays it out again on save)
    import matplotlib.image as mpimg

    est = make_fake("dppca")
    fast, kept = tmp_path / "fast.png", tmp_path / "kept.png"
    for path, fig_kw in ((fast, {}), (kept, {"layout": "constrained"})):
        fig = plot_overview(est, figsize=(12, 8), **fig_kw)
        fig.savefig(path, dpi=fig.dpi)
        plt.close(fig)
    np.testing.assert_array_equal(mpimg.imread(fast), mpimg.imread(kept))


def test_scree_overview_skips_the_score_panels(make_fake, save_png):
    fig = plot_overview(make_fake("scree"))
    assert set(fig.displays_) == {"scree", "loading", "variable"}
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("ScoreDisplay needs a fitted DPPCA" in t.replace("\n", " ") for t in texts)
    assert any("BiplotDisplay needs a fitted DPPCA" in t.replace("\n", " ") for t in texts)
    save_png(fig)


def test_directions_overview(make_fake):
    fig = plot_overview(make_fake("directions"))
    assert set(fig.displays_) == {"loading"}
    texts = " ".join(t.get_text().replace("\n", " ") for ax in fig.axes for t in ax.texts)
    assert "ScreeDisplay needs a fitted DPScree or DPPCA" in texts
    assert "VariableDisplay needs" in texts


def test_options_are_passed_to_the_panels(make_fake):
    est = make_fake("dppca", k=3)
    fig = plot_overview(est, figsize=(12, 8), score_kw={"kind": "points", "groups": None},
                        biplot_kw={"alpha": 0.0}, loading_kw={"kind": "heatmap"})
    assert tuple(fig.get_size_inches()) == (12, 8)
    assert fig.displays_["score"].mesh_ is None
    assert "alpha=0" in fig.displays_["biplot"].ax_.get_title()
    assert fig.displays_["loading"].image_ is not None
    # other components: the score summary exists for axes_ only
    fig = plot_overview(est, axes=(0, 2))
    assert set(fig.displays_) == {"scree", "loading", "variable"}
    # the note names the components as the panels do, with the 0-based argument
    notes = " ".join(" ".join(t.get_text().split()) for ax in fig.axes for t in ax.texts)
    assert "released for PC1 x PC2 (axes=(0, 1)), not PC1 x PC3 (axes=(0, 2))" in notes
    assert np.allclose(fig.displays_["loading"].arrows_[0].xy, est.components_[[0, 2], 0])


def test_one_component_and_zero_variance(make_fake):
    est = make_fake("scree", k=3)
    est.n_components_ = 1
    est.components_ = est.components_[:1]
    est.explained_variance_ = est.explained_variance_[:1]
    est.explained_variance_ratio_ = est.explained_variance_ / est.total_variance_
    est.noise_scale_ = est.noise_scale_[:1]
    fig = plot_overview(est)
    assert fig.displays_["loading"].image_ is not None  # heatmap
    assert "variable" not in fig.displays_
    zero = make_fake("dppca", k=3)
    zero.explained_variance_ = np.array([2.0, 0.0, 0.0])
    fig = plot_overview(zero)
    assert "biplot" not in fig.displays_
    assert "biplot" in plot_overview(zero, biplot_kw={"alpha": 0}).displays_


def test_errors(make_fake, not_fitted):
    with pytest.raises(NotFittedError):
        plot_overview(not_fitted)
    est = make_fake("dppca")
    with pytest.raises(ValueError, match="score_kw"):
        plot_overview(est, score_kw={"ax": None})
    with pytest.raises(TypeError, match="biplot_kw"):
        plot_overview(est, biplot_kw=1)
    with pytest.raises(ValueError, match="axes"):
        plot_overview(est, axes=(1, 1))

    class Unrelated:
        def fit(self):
            return self

    with pytest.raises(TypeError):
        plot_overview(Unrelated())


def test_real_estimators(real_estimators, save_png):
    real = real_estimators
    expected = {
        "directions": {"loading"},
        "scree": {"scree", "loading", "variable"},
        "dppca": {"scree", "loading", "variable", "score", "biplot"},
    }
    for key, panels in expected.items():
        fig = plot_overview(real[key])
        assert set(fig.displays_) == panels
        assert len(_table(fig)) == len(real[key].privacy_ledger_) + 2
        if key == "dppca":
            save_png(fig, f"{key}.png")
        plt.close(fig)


def test_loaded_releases(real_estimators):
    """Every display accepts a loaded release in place of the fitted estimator."""
    sklearn_dppca = pytest.importorskip("sklearn_dppca")
    if not hasattr(sklearn_dppca, "load_release"):
        pytest.skip("load_release is not available")
    real = real_estimators
    loaded = {
        key: sklearn_dppca.load_release(sklearn_dppca.export_release(
            real[key], include_nonprivate=real[key].nonprivate_ is not None, allow_seeded=True))
        for key in ("directions", "scree", "dppca")
    }
    fig = plot_overview(loaded["dppca"])
    assert set(fig.displays_) == {"scree", "loading", "score", "variable", "biplot"}
    assert fig._suptitle.get_text().startswith("DPPCA (loaded release)")
    est = real["dppca"]
    disp = BiplotDisplay.from_estimator(loaded["dppca"])
    assert disp.gamma_ == pytest.approx(BiplotDisplay.from_estimator(est).gamma_)
    with pytest.raises(TypeError, match=r"ScoreDisplay needs a fitted DPPCA; DPScree "
                                        r"\(loaded release\) has no score summary"):
        ScoreDisplay.from_estimator(loaded["scree"])
    assert set(plot_overview(loaded["directions"]).displays_) == {"loading"}


def test_ledger_steps_with_dollar_signs_draw_literally():
    # column names end up in step names ("scale/clip bound price_$_usd_$")
    import warnings

    import pandas as pd

    from sklearn_dppca import DPPCA
    from sklearn_dppca.display import plot_overview

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(3000, 3)) * [1.0, 10.0, 100.0],
                     columns=["price_$_usd_$", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fig = plot_overview(DPPCA(scale=True, random_state=0).fit(X))
    fig.canvas.draw()   # an unescaped "$...$" pair fails here, as invalid mathtext
    from matplotlib.text import Text

    texts = [text.get_text() for text in fig.findobj(Text)]
    assert any(r"price_\$_usd_\$" in text for text in texts)
    assert not any("price_$" in text for text in texts)


# --- the drawn layout, measured with the renderer ---------------------------------
def _overlap(a, b, tolerance=1.0):
    """Whether two window boxes share more than ``tolerance`` pixels each way."""
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance
            and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance)


def _layout_problems(fig):
    """Variable labels that collide or leave their panel, and panels (with their
    tick labels, axis labels and legends) that run into each other or off the
    figure, as drawn at 100 dpi."""
    fig.set_dpi(100)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for name, display in fig.displays_.items():
        texts = [t for t in getattr(display, "texts_", []) or []
                 if t.get_text() and t.get_visible()]
        boxes = [t.get_window_extent(renderer) for t in texts]
        panel = display.ax_.get_window_extent(renderer)
        for text, box in zip(texts, boxes):
            if not panel.expanded(1.0, 1.0).contains(box.x0, box.y0) or \
                    not panel.expanded(1.0, 1.0).contains(box.x1, box.y1):
                problems.append(f"{name}: {text.get_text()!r} leaves its panel")
        for i, j in zip(*np.triu_indices(len(texts), 1)):
            if _overlap(boxes[i], boxes[j]):
                problems.append(f"{name}: {texts[i].get_text()!r} covers "
                                f"{texts[j].get_text()!r}")
    # a twin axis shares its panel's place: measured together with it
    panels = {}
    for ax in fig.axes:
        if ax.get_visible():
            key = tuple(np.round(ax.get_position().bounds, 6))
            panels.setdefault(key, []).append(ax.get_tightbbox(renderer))
    from matplotlib.transforms import Bbox

    boxes = [Bbox.union(group) for group in panels.values()]
    for i, j in zip(*np.triu_indices(len(boxes), 1)):
        if _overlap(boxes[i], boxes[j]):
            problems.append(f"panels {i} and {j} overlap")
    inside = fig.bbox.expanded(1.0, 1.0)
    problems += [f"panel {i} leaves the figure" for i, box in enumerate(boxes)
                 if not (inside.contains(box.x0, box.y0)
                         and inside.contains(box.x1, box.y1))]
    return problems


def _real_table(name):
    """A scikit-learn data set standardised (a layout test: privacy of the
    scaling is not the point), or the command line's Gaussian clusters."""
    from sklearn import datasets

    from sklearn_dppca.datasets import make_gaussian_clusters

    if name == "gau":
        return make_gaussian_clusters(return_groups=True, as_frame=True,
                                      random_state=0)
    table = getattr(datasets, f"load_{name}")(as_frame=True).data
    return (table - table.mean()) / table.std(), None


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow),
                                  pytest.param(2, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", ["gau", "iris", "wine", "diabetes", "breast_cancer"])
def test_labels_neither_collide_nor_leave_the_figure(name, seed):
    import warnings

    from sklearn_dppca import DPPCA

    X, y = _real_table(name)
    groups = None if y is None else sorted(set(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # eps large enough for every panel at these sizes (178 rows for wine)
        pca = DPPCA(eps=1.0 if name == "gau" else 20.0, groups=groups,
                    random_state=seed).fit(X, y)
        fig = plot_overview(pca)
    assert set(fig.displays_) == {"scree", "loading", "score", "variable", "biplot"}
    assert _layout_problems(fig) == []
    # the ledger is readable at 100 dpi: at least 7 points, no cell cut
    table = _cells_hold_their_text(fig)
    assert min(cell.get_fontsize() for cell in table.get_celld().values()) >= 7


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_thirty_variables_at_eps_4_stay_readable(seed):
    # Breast cancer's 30 variables at eps 4, no groups (the report a custodian
    # gets from the command line): every loading is within its noise on PC2,
    # so each picture shows 30 names in a small region; none may cover another
    # or leave its panel.
    import warnings

    from sklearn_dppca import DPPCA

    X, _ = _real_table("breast_cancer")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig = plot_overview(DPPCA(eps=4.0, random_state=seed).fit(X))
    assert _layout_problems(fig) == []
