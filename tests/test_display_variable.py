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

from sklearn_dppca.display import VariableDisplay  # noqa: E402


def _expected(V, lam, a, b):
    """The DP correlation coordinates, written out loop by loop."""
    k, p = V.shape
    coords, kept = [], []
    for j in range(p):
        sigma2 = sum(lam[m] * V[m, j] ** 2 for m in range(k))
        if sigma2 == 0:
            continue
        kept.append(j)
        coords.append((np.sqrt(lam[a]) * V[a, j] / np.sqrt(sigma2),
                       np.sqrt(lam[b]) * V[b, j] / np.sqrt(sigma2)))
    return np.array(coords), kept


def test_coordinates_match_the_formula(tmp_path):
    est = make_fake("dppca", p=7, k=4, feature_names=True)
    fig, ax = plt.subplots()
    disp = VariableDisplay.from_estimator(est, ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    expected, kept = _expected(est.components_, est.explained_variance_, 0, 1)
    assert disp.coordinates_.shape == (7, 2)
    assert np.allclose(disp.coordinates_, expected)
    assert disp.variables_ == [f"feat_{j}" for j in kept]
    # drawn where computed, inside the unit disc
    ends = np.array([arrow.xy for arrow in disp.arrows_])
    assert np.allclose(ends, expected)
    assert np.all(np.hypot(ends[:, 0], ends[:, 1]) <= 1 + 1e-12)
    assert disp.circle_.get_radius() == 1.0
    assert ax.get_aspect() == 1.0
    assert ax.get_xlabel().startswith("DP PC1 (")
    assert "private" in ax.get_title()
    save_png(fig, tmp_path)


def test_other_axes_and_unit_circle_when_all_components_shown():
    rng = np.random.default_rng(0)
    V = np.linalg.qr(rng.normal(size=(5, 2)))[0].T
    lam = np.array([3.0, 1.0])
    disp = VariableDisplay(V, lam, axes=(1, 0)).plot()
    expected, _ = _expected(V, lam, 1, 0)
    assert np.allclose(disp.coordinates_, expected)
    # with every retained component on screen, each variable sits on the circle
    assert np.allclose(np.hypot(*disp.coordinates_.T), 1.0)
    assert disp.ax_.get_xlabel() == "DP PC2"


def test_zero_implied_variance_is_omitted():
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    lam = np.array([2.0, 1.0, 0.0])  # variable x2 only loads on a zero-variance PC
    disp = VariableDisplay(V, lam, feature_names=["a", "b", "c"]).plot()
    assert disp.variables_ == ["a", "b"]
    assert disp.omitted_ == ["c"]
    assert disp.coordinates_.shape == (2, 2)
    assert np.allclose(disp.coordinates_, [[1, 0], [0, 1]])
    assert "omitted" in disp.ax_.get_title()


def test_nonprivate_overlay():
    est = make_fake("dppca", p=6, k=3, nonprivate=True)
    disp = VariableDisplay.from_estimator(est)
    ref = est.nonprivate_
    expected, _ = _expected(ref.components, ref.explained_variance, 0, 1)
    assert np.allclose(disp.nonprivate_coordinates_, expected)
    assert np.allclose([a.xy for a in disp.nonprivate_arrows_], expected)
    assert all(a.arrow_patch.get_linestyle() == "--" for a in disp.nonprivate_arrows_)
    texts = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert "non-private reference" in texts
    assert VariableDisplay.from_estimator(est, show_nonprivate=False).nonprivate_arrows_ == []


def test_variables_selection():
    est = make_fake("dppca", p=6, k=3, feature_names=True)
    disp = VariableDisplay.from_estimator(est, variables=["feat_4", 1])
    assert disp.variables_ == ["feat_4", "feat_1"]
    expected, _ = _expected(est.components_, est.explained_variance_, 0, 1)
    assert np.allclose(disp.coordinates_, expected[[4, 1]])


@pytest.mark.parametrize(
    "init, plot, match",
    [
        ({"axes": (1, 1)}, {}, "axes"),
        ({"axes": (0, 3)}, {}, "axes"),
        ({"explained_variance": [1.0, -1.0, 0.5]}, {}, "explained_variance"),
        ({"explained_variance": [1.0, 0.5]}, {}, "explained_variance"),
        ({}, {"variables": ["zz"]}, "variables"),
        ({}, {"arrow_kw": 3}, "arrow_kw"),
    ],
)
def test_bad_arguments(init, plot, match):
    V = np.linalg.qr(np.random.default_rng(1).normal(size=(4, 3)))[0].T
    kwargs = {"explained_variance": [3.0, 2.0, 1.0]}
    kwargs.update(init)
    lam = kwargs.pop("explained_variance")
    with pytest.raises((ValueError, TypeError), match=match):
        VariableDisplay(V, lam, **kwargs).plot(**plot)


def test_unsupported_estimators():
    with pytest.raises(TypeError, match="VariableDisplay needs a fitted DPScree or DPPCA"):
        VariableDisplay.from_estimator(make_fake("directions"))
    with pytest.raises(NotFittedError):
        VariableDisplay.from_estimator(NotFitted())


def test_real_estimators(tmp_path):
    real = real_estimators()
    for key in ("scree", "dppca", "dppca_plain"):
        est = real[key]
        disp = VariableDisplay.from_estimator(est)
        expected, kept = _expected(est.components_, est.explained_variance_, 0, 1)
        assert np.allclose(disp.coordinates_, expected)
        assert np.all(np.hypot(*disp.coordinates_.T) <= 1 + 1e-9)
        save_png(disp.figure_, tmp_path, f"{key}.png")
        plt.close("all")
    with pytest.raises(TypeError, match="DPKendallDirections"):
        VariableDisplay.from_estimator(real["directions"])
