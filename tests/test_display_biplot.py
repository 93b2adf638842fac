import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_dppca.display import BiplotDisplay


def _expected(V, lam, S, c, n, a, b, alpha, center):
    """The biplot coordinates, written out step by step."""
    d = np.array([np.sqrt((n - 1) * lam[a]), np.sqrt((n - 1) * lam[b])])
    shift = np.asarray(c) if center else np.zeros(2)
    G = np.empty_like(S)
    for i in range(len(S)):
        for m in range(2):
            G[i, m] = (S[i, m] - shift[m]) / d[m] ** alpha
    H = np.array([[V[a, j] * d[0] ** alpha, V[b, j] * d[1] ** alpha]
                  for j in range(V.shape[1])])
    dist = np.sqrt(((G - G.mean(axis=0)) ** 2).sum(axis=1))
    r_G = np.quantile(dist, 0.9)
    r_H = max(np.sqrt((H**2).sum(axis=1)))
    gamma = r_G / r_H if r_G > 0 and r_H > 0 else 0.0
    origin = np.zeros(2) if center else np.asarray(c) / d**alpha
    return G, gamma, gamma * H, origin


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("center", [True, False])
def test_coordinates_match_the_formula(alpha, center, make_fake):
    est = make_fake("dppca", p=6, k=3)
    disp = BiplotDisplay.from_estimator(est, alpha=alpha, center=center)
    G, gamma, arrows, origin = _expected(
        est.components_, est.explained_variance_, est.synthetic_scores_,
        est.frame_.center, est.n_samples_, 0, 1, alpha, center,
    )
    assert disp.gamma_ == pytest.approx(gamma)
    assert np.allclose(disp.observation_coordinates_, G)
    assert np.allclose(disp.variable_coordinates_, arrows)
    assert np.allclose(disp.arrow_origin_, origin)
    # what is drawn
    offsets = np.vstack([c.get_offsets() for c in disp.scatter_])
    order = np.concatenate([np.flatnonzero(est.synthetic_groups_ == g)
                            for g in dict.fromkeys(est.synthetic_groups_)])
    assert np.allclose(offsets, G[order])
    for j, arrow in enumerate(disp.arrows_):
        assert np.allclose(arrow.xyann, origin)
        assert np.allclose(arrow.xy, origin + arrows[j])
    # the longest arrow reaches the 0.9 quantile of the point spread
    longest = np.max(np.hypot(*disp.variable_coordinates_.T))
    spread = np.quantile(np.hypot(*(G - G.mean(axis=0)).T), 0.9)
    assert longest == pytest.approx(spread)


def test_alpha_scaling_and_labels(make_fake, save_png):
    est = make_fake("dppca", p=5, k=3, feature_names=True)
    d0 = BiplotDisplay.from_estimator(est, alpha=0.0)
    d1 = BiplotDisplay.from_estimator(est, alpha=1.0)
    d = np.sqrt((est.n_samples_ - 1) * est.explained_variance_[:2])
    assert np.allclose(d1.observation_coordinates_ * d, d0.observation_coordinates_)
    # alpha=0: the arrows are the raw coefficients, times gamma
    assert np.allclose(d0.variable_coordinates_, d0.gamma_ * est.components_[:2].T)
    assert d1.ax_.get_xlabel().endswith("/ d")
    assert d0.ax_.get_xlabel() == f"DP PC1 ({100 * est.explained_variance_ratio_[0]:.1f}%)"
    assert "alpha=1" in d1.ax_.get_title()
    assert [t.get_text() for t in d1.texts_] == [f"feat_{j}" for j in range(5)]
    assert d1.ax_.get_aspect() == 1.0
    save_png(d1.figure_)


def test_values_and_ax():
    rng = np.random.default_rng(0)
    V = np.linalg.qr(rng.normal(size=(4, 3)))[0].T
    lam = np.array([4.0, 2.0, 1.0])
    S = rng.normal(size=(50, 2)) * [2, 1] + [5, -3]
    fig, ax = plt.subplots()
    disp = BiplotDisplay(V, lam, S, [5.0, -3.0], 100, axes=(0, 2), alpha=0.5).plot(ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    G, gamma, arrows, origin = _expected(V, lam, S, [5, -3], 100, 0, 2, 0.5, True)
    assert disp.gamma_ == pytest.approx(gamma)
    assert np.allclose(disp.scatter_.get_offsets(), G)
    assert np.allclose(disp.variable_coordinates_, arrows)
    assert disp.variables_ == ["x0", "x1", "x2", "x3"]


def test_gamma_zero_when_points_coincide():
    V = np.eye(3)[:2]
    disp = BiplotDisplay(V, [1.0, 1.0], np.ones((10, 2)), [1.0, 1.0], 20).plot()
    assert disp.gamma_ == 0.0
    assert np.allclose(disp.variable_coordinates_, 0)


def test_zero_variance():
    V = np.eye(3)[:2]
    S = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="alpha"):
        BiplotDisplay(V, [1.0, 0.0], S, [0.0, 0.0], 20, alpha=0.5).plot()
    disp = BiplotDisplay(V, [1.0, 0.0], S, [0.0, 0.0], 20, alpha=0.0).plot()
    assert np.isfinite(disp.gamma_)


def test_nonprivate_overlay(make_fake):
    est = make_fake("dppca", p=5, k=3, nonprivate=True)
    disp = BiplotDisplay.from_estimator(est)
    ref = est.nonprivate_
    _, gamma, arrows, _ = _expected(ref.components, ref.explained_variance,
                                    ref.scores[:, :2], np.zeros(2), est.n_samples_, 0, 1,
                                    1.0, True)
    assert disp.nonprivate_gamma_ == pytest.approx(gamma)
    assert np.allclose([a.xy for a in disp.nonprivate_arrows_], arrows)
    assert all(a.arrow_patch.get_linestyle() == "--" for a in disp.nonprivate_arrows_)
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert legend[-1] == "non-private reference"
    assert BiplotDisplay.from_estimator(est, show_nonprivate=False).nonprivate_arrows_ == []


@pytest.mark.parametrize("alpha, error", [
    (-0.1, ValueError), (1.5, ValueError), (np.nan, ValueError),
    ("1", TypeError), (True, TypeError), (None, TypeError),
])
def test_bad_alpha(alpha, error, make_fake):
    est = make_fake("dppca")
    with pytest.raises(error, match="^alpha must be a finite number in"):
        BiplotDisplay.from_estimator(est, alpha=alpha)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"axes": (0, 0)}, ValueError, "axes"),
        ({"axes": (0, 2)}, ValueError, "axes"),  # the synthetic scores exist for axes_ only
        ({"axes": (0, 1.0)}, TypeError, "axes"),
        ({"center": "no"}, TypeError, "center"),
        ({"variables": ["nope"]}, ValueError, "variables"),
        ({"variables": [0.5]}, TypeError, "variables"),
        ({"arrow_kw": "red"}, TypeError, "arrow_kw"),
    ],
)
def test_bad_arguments(kwargs, error, match, make_fake):
    est = make_fake("dppca", k=3)
    with pytest.raises(error, match=f"^{match}"):
        BiplotDisplay.from_estimator(est, **kwargs)


def test_bad_values():
    V = np.eye(3)[:2]
    S = np.zeros((5, 2))
    with pytest.raises(ValueError, match="^n_samples"):
        BiplotDisplay(V, [1.0, 1.0], S, [0, 0], 1).plot()
    with pytest.raises(TypeError, match="^n_samples"):
        BiplotDisplay(V, [1.0, 1.0], S, [0, 0], 10.0).plot()
    with pytest.raises(ValueError, match="synthetic_scores"):
        BiplotDisplay(V, [1.0, 1.0], np.zeros((5, 3)), [0, 0], 10).plot()
    with pytest.raises(ValueError, match="frame_center"):
        BiplotDisplay(V, [1.0, 1.0], S, [0, 0, 0], 10).plot()
    with pytest.raises(ValueError, match="explained_variance"):
        BiplotDisplay(V, [1.0, -1.0], S, [0, 0], 10).plot()
    with pytest.raises(ValueError, match="synthetic_groups"):
        BiplotDisplay(V, [1.0, 1.0], S, [0, 0], 10, synthetic_groups=["a"]).plot()


def test_unsupported_estimators(make_fake, not_fitted):
    for kind in ("scree", "directions"):
        with pytest.raises(TypeError, match="BiplotDisplay needs a fitted DPPCA"):
            BiplotDisplay.from_estimator(make_fake(kind))
    with pytest.raises(NotFittedError):
        BiplotDisplay.from_estimator(not_fitted)


def test_real_estimators(real_estimators, save_png):
    real = real_estimators
    for key in ("dppca", "dppca_plain"):
        est = real[key]
        for alpha, center in ((1.0, True), (0.0, False)):
            if alpha > 0 and np.any(est.explained_variance_[:2] == 0):
                continue
            disp = BiplotDisplay.from_estimator(est, alpha=alpha, center=center)
            G, gamma, arrows, origin = _expected(
                est.components_, est.explained_variance_, est.synthetic_scores_,
                est.frame_.center, est.n_samples_, 0, 1, alpha, center,
            )
            assert disp.gamma_ == pytest.approx(gamma)
            assert np.allclose(disp.variable_coordinates_, arrows)
            save_png(disp.figure_, f"{key}_{alpha}.png")
            plt.close("all")
    for key in ("scree", "directions"):
        with pytest.raises(TypeError, match="BiplotDisplay needs a fitted DPPCA"):
            BiplotDisplay.from_estimator(real[key])


def test_no_synthetic_points():
    """A release can hold no synthetic point (every noisy cell thresholded away)."""
    V = np.eye(3)[:2]
    disp = BiplotDisplay(V, [2.0, 1.0], np.empty((0, 2)), [0.0, 0.0], 50).plot()
    assert disp.gamma_ == 0.0
    assert disp.observation_coordinates_.shape == (0, 2)


@pytest.mark.parametrize("alpha, divisor", [(1.0, "/ d"), (0.5, "/ d^0.5"), (0.0, None)])
def test_the_panel_says_what_its_axes_are_divided_by(real_estimators, alpha, divisor):
    disp = BiplotDisplay.from_estimator(real_estimators["dppca"], alpha=alpha)
    if divisor is None:       # alpha 0: the axes are the scores themselves
        assert disp.scaling_text_ is None and "/ d" not in disp.ax_.get_xlabel()
        return
    assert disp.ax_.get_xlabel().endswith(divisor)
    note = disp.scaling_text_.get_text()
    assert note.startswith(f"{divisor}: scores divided by d") and "private variance" in note
    # the note sits between the axes and the title, overlapping neither
    disp.figure_.canvas.draw()
    renderer = disp.figure_.canvas.get_renderer()
    box = disp.scaling_text_.get_window_extent(renderer)
    assert box.y0 >= disp.ax_.get_window_extent(renderer).y1 - 0.5
    assert box.y1 <= disp.ax_.title.get_window_extent(renderer).y0 + 0.5
