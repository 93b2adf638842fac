import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_dppca.display import VariableDisplay
from sklearn_dppca.display._variable import _correlation_coordinates


def _expected(V, lam, sigma2, a, b):
    """The DP correlation coordinates, written out loop by loop."""
    k, p = V.shape
    coords, kept = [], []
    for j in range(p):
        if sigma2[j] == 0:
            continue
        kept.append(j)
        coords.append((np.sqrt(lam[a]) * V[a, j] / np.sqrt(sigma2[j]),
                       np.sqrt(lam[b]) * V[b, j] / np.sqrt(sigma2[j])))
    return np.array(coords), kept


def test_correlation_coordinates_are_the_correlations_with_the_scores():
    """Exact values (eigen-decomposition of a sample covariance, its diagonal) give
    the sample correlations of each variable with the component scores."""
    rng = np.random.default_rng(3)
    mixing = rng.normal(size=(5, 5)) * [3.0, 2.0, 1.0, 0.5, 0.2]
    X = rng.normal(size=(400, 5)) @ mixing + 10.0
    covariance = np.cov(X, rowvar=False)
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)
    order = np.argsort(eigenvalues)[::-1][:3]       # k = 3 of p = 5
    V, lam = eigenvectors[:, order].T, eigenvalues[order]
    scores = X @ V.T
    truth = np.array([[np.corrcoef(X[:, j], scores[:, l])[0, 1] for l in (0, 2)]
                      for j in range(5)])
    coords, kept = _correlation_coordinates(V, lam, np.diag(covariance), (0, 2))
    assert kept.all()
    assert np.allclose(coords, truth, atol=1e-12)
    # with only k < p components, variables do not reach the circle
    assert np.all(np.hypot(*coords.T) < 1)
    # the drawn display shows exactly these
    disp = VariableDisplay(V, lam, np.diag(covariance), axes=(0, 2)).plot()
    assert np.allclose(disp.coordinates_, truth, atol=1e-12)
    assert not disp.beyond_.any()


def test_coordinates_match_the_formula(make_fake, save_png):
    est = make_fake("dppca", p=7, k=4, feature_names=True)
    fig, ax = plt.subplots()
    disp = VariableDisplay.from_estimator(est, ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    expected, kept = _expected(est.components_, est.explained_variance_,
                               est.feature_variance_, 0, 1)
    assert disp.correlations_.shape == (7, 2)
    assert np.allclose(disp.correlations_, expected)
    assert disp.variables_ == [f"feat_{j}" for j in kept]
    # drawn where computed (inside the unit disc) or on the circle (beyond it)
    radius = np.hypot(*expected.T)
    assert np.array_equal(disp.beyond_, radius > 1)
    drawn = np.where((radius > 1)[:, None], expected / radius[:, None], expected)
    assert np.allclose(disp.coordinates_, drawn)
    ends = np.array([arrow.xy for arrow in disp.arrows_])
    assert np.allclose(ends, drawn)
    assert np.all(np.hypot(ends[:, 0], ends[:, 1]) <= 1 + 1e-12)
    assert disp.circle_.get_radius() == 1.0
    assert ax.get_aspect() == 1.0
    assert ax.get_xlabel().startswith("DP PC1 (")
    assert "private" in ax.get_title()
    save_png(fig)


def test_two_of_two_components_do_not_put_every_variable_on_the_circle():
    # the circle of the variables' own variances: with k = 2 the arrows are as
    # long as the share of each variable's variance the two components carry
    V = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.6, 0.8, 0.0]])
    lam = np.array([4.0, 1.0])
    sigma2 = np.array([4.0, 1.0, 1.0, 2.0])
    disp = VariableDisplay(V, lam, sigma2, axes=(1, 0)).plot()
    assert np.allclose(disp.coordinates_, [[0, 1], [0.6, 0], [0.8, 0], [0, 0]])
    assert disp.ax_.get_xlabel() == "DP PC2"
    assert not disp.beyond_.any()
    assert disp.ax_.get_legend() is None          # nothing beyond, no reference


def test_correlations_beyond_the_circle_are_drawn_on_it_and_marked():
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    lam = np.array([4.0, 1.0])
    sigma2 = np.array([1.0, 4.0, 1.0])     # noise: x0 has less variance than PC1
    disp = VariableDisplay(V, lam, sigma2, feature_names=["a", "b", "c"]).plot()
    assert np.allclose(disp.correlations_, [[2.0, 0.0], [0.0, 0.5], [0.0, 0.0]])
    assert list(disp.beyond_) == [True, False, False]
    assert np.allclose(disp.coordinates_, [[1.0, 0.0], [0.0, 0.5], [0.0, 0.0]])
    assert np.allclose(disp.arrows_[0].xy, (1.0, 0.0))
    colors = [matplotlib.colors.to_hex(a.arrow_patch.get_edgecolor()) for a in disp.arrows_]
    assert colors[0] != colors[1]
    assert matplotlib.colors.to_hex(disp.texts_[0].get_color()) == colors[0]
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert any("|r| > 1" in text and "1 with" in text for text in legend)


def test_overflowing_correlations_keep_their_direction():
    V = np.array([[0.6, 1.0], [-0.8, 0.0]])
    lam = np.array([1e300, 1e300])
    sigma2 = np.array([5e-324, 1.0])
    coords, kept = _correlation_coordinates(V, lam, sigma2, (0, 1))
    assert np.isinf(coords[0]).all()
    disp = VariableDisplay(V, lam, sigma2).plot()
    assert np.all(np.isfinite(disp.coordinates_))
    assert np.allclose(disp.coordinates_[0], [np.sqrt(0.5), -np.sqrt(0.5)])
    assert disp.beyond_.all()


def test_zero_private_variance_is_omitted():
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    lam = np.array([2.0, 1.0])
    disp = VariableDisplay(V, lam, [2.0, 1.0, 0.0], feature_names=["a", "b", "c"]).plot()
    assert disp.variables_ == ["a", "b"]
    assert disp.omitted_ == ["c"]
    assert disp.coordinates_.shape == (2, 2)
    assert np.allclose(disp.coordinates_, [[1, 0], [0, 1]])
    assert "1 variable(s) with zero private variance omitted" in disp.ax_.get_title()


def test_variables_whose_variance_is_not_estimable_are_omitted_and_said():
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    lam = np.array([2.0, 1.0])
    some = VariableDisplay(V, lam, [2.0, np.nan, 1.0], feature_names=["a", "b", "c"]).plot()
    assert some.variables_ == ["a", "c"] and some.not_estimable_variables_ == ["b"]
    assert "1 omitted (private variance not estimable)" in some.ax_.get_title()
    assert some.not_estimable_text_ is None
    # none estimable (a total that is not): the circle says so, not an empty disc
    none = VariableDisplay(V, lam, [np.nan] * 3, feature_names=["a", "b", "c"]).plot()
    assert none.variables_ == [] and none.arrows_ == []
    assert "3 omitted" in none.ax_.get_title()
    text = none.not_estimable_text_.get_text()
    assert "correlations not estimable" in text and "of the variables" in text


def test_nonprivate_overlay(make_fake):
    est = make_fake("dppca", p=6, k=3, nonprivate=True)
    disp = VariableDisplay.from_estimator(est)
    ref = est.nonprivate_
    expected, _ = _expected(ref.components, ref.explained_variance,
                            ref.feature_variance, 0, 1)
    assert np.all(np.hypot(*expected.T) <= 1)
    assert np.allclose(disp.nonprivate_coordinates_, expected)
    assert np.allclose([a.xy for a in disp.nonprivate_arrows_], expected)
    assert all(a.arrow_patch.get_linestyle() == "--" for a in disp.nonprivate_arrows_)
    texts = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert "non-private reference" in texts
    assert VariableDisplay.from_estimator(est, show_nonprivate=False).nonprivate_arrows_ == []


def test_scaled_fit_uses_unit_variances(make_fake):
    est = make_fake("dppca", p=6, k=3, scale=True)
    disp = VariableDisplay.from_estimator(est)
    expected, _ = _expected(est.components_, est.explained_variance_, np.ones(6), 0, 1)
    assert np.allclose(disp.correlations_, expected)


def test_variables_selection(make_fake):
    est = make_fake("dppca", p=6, k=3, feature_names=True)
    disp = VariableDisplay.from_estimator(est, variables=["feat_4", 1])
    assert disp.variables_ == ["feat_4", "feat_1"]
    expected, _ = _expected(est.components_, est.explained_variance_,
                            est.feature_variance_, 0, 1)
    assert np.allclose(disp.correlations_, expected[[4, 1]])


@pytest.mark.parametrize(
    "init, plot, error, match",
    [
        ({"axes": (1, 1)}, {}, ValueError, "axes"),
        ({"axes": (0, 3)}, {}, ValueError, "axes"),
        ({"axes": (0, True)}, {}, TypeError, "axes"),
        ({"explained_variance": [1.0, -1.0, 0.5]}, {}, ValueError, "explained_variance"),
        ({"explained_variance": [1.0, 0.5]}, {}, ValueError, "explained_variance"),
        ({"feature_variance": [1.0, -1.0, 1.0, 1.0]}, {}, ValueError, "feature_variance"),
        ({"feature_variance": [1.0, 1.0]}, {}, ValueError, "feature_variance"),
        ({"feature_variance": [1.0, np.inf, 1.0, 1.0]}, {}, ValueError,
         "feature_variance"),
        ({}, {"variables": ["zz"]}, ValueError, "variables"),
        ({}, {"show_nonprivate": "no"}, TypeError, "show_nonprivate"),
        ({}, {"arrow_kw": 3}, TypeError, "arrow_kw"),
    ],
)
def test_bad_arguments(init, plot, error, match):
    V = np.linalg.qr(np.random.default_rng(1).normal(size=(4, 3)))[0].T
    kwargs = {"explained_variance": [3.0, 2.0, 1.0], "feature_variance": [2.0] * 4}
    kwargs.update(init)
    lam = kwargs.pop("explained_variance")
    sigma2 = kwargs.pop("feature_variance")
    with pytest.raises(error, match=match):
        VariableDisplay(V, lam, sigma2, **kwargs).plot(**plot)


def test_unsupported_estimators(make_fake, not_fitted):
    with pytest.raises(TypeError, match="VariableDisplay needs a fitted DPScree or DPPCA"):
        VariableDisplay.from_estimator(make_fake("directions"))
    with pytest.raises(NotFittedError):
        VariableDisplay.from_estimator(not_fitted)


def test_real_estimators(real_estimators, save_png):
    real = real_estimators
    for key in ("scree", "dppca", "dppca_plain"):
        est = real[key]
        disp = VariableDisplay.from_estimator(est)
        expected, kept = _expected(est.components_, est.explained_variance_,
                                   est.feature_variance_, 0, 1)
        assert np.allclose(disp.correlations_, expected)
        assert np.all(np.hypot(*disp.coordinates_.T) <= 1 + 1e-9)
        save_png(disp.figure_, f"{key}.png")
        plt.close("all")
    with pytest.raises(TypeError, match="DPKendallDirections"):
        VariableDisplay.from_estimator(real["directions"])


def test_variables_with_noise_dominated_variance_are_drawn_as_unknown():
    V = np.array([[0.8, 0.6, 0.0], [0.0, 0.0, 1.0]])
    disp = VariableDisplay(V, [2.0, 1.0], [1.5, 0.8, 1.2],
                           feature_variance_noise_scale=[0.1, 0.9, 0.1]).plot()
    np.testing.assert_array_equal(disp.uncertain_, [False, True, False])
    assert disp.arrows_[1].arrow_patch.get_edgecolor()[:3] == pytest.approx((0.65,) * 3)
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert any("correlation unknown" in text for text in legend)
