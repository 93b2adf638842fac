import math
import warnings

import numpy as np
import pytest

from sklearn_dppca import DPKendallDirections, spherical_kendall
from sklearn_dppca._algorithms._directions import _kendall_sensitivity


def gaussian_data(n=400, scales=(3.0, 1.0, 0.5), seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, len(scales))) * np.asarray(scales)


def test_classical_noise_scale_matches_the_classical_formula():
    # The R package's example: n = 50, eps = 0.5, delta = 1e-3, sigma = 4 sqrt(2 ln(1.25/delta)) / (n eps)
    X = gaussian_data(n=50)
    est = DPKendallDirections(eps=0.5, delta=1e-3, noise="classical", accounting="basic",
                              sensitivity="standard", random_state=0).fit(X)
    # (and the exact release's allowance for its rounding, sqrt(6) of its grid's
    # steps on a mu s of about 2**16 steps: +0.03%)
    classical = 4 * math.sqrt(2 * math.log(1250)) / 25
    assert classical == pytest.approx(0.6042367252, rel=1e-9)
    assert classical <= est.noise_scale_ <= classical * 1.0005


def test_noise_law_over_many_seeds():
    X = gaussian_data(n=60)
    exact = spherical_kendall(X)
    draws = []
    for seed in range(400):
        est = DPKendallDirections(eps=1.0, delta=1e-5, random_state=seed).fit(X)
        assert np.array_equal(est.kendall_matrix_, est.kendall_matrix_.T)
        draws.append(est.kendall_matrix_ - exact)
    noise = np.array(draws) / est.noise_scale_
    diagonal = noise[:, np.arange(3), np.arange(3)].ravel()
    off_diagonal = noise[:, [1, 2, 2], [0, 0, 1]].ravel()
    # 1200 draws each: the sd estimate is within ~6% at 3 standard errors.
    assert np.std(diagonal) == pytest.approx(1.0, rel=0.07)
    assert np.std(off_diagonal) == pytest.approx(1 / math.sqrt(2), rel=0.07)
    assert abs(np.mean(diagonal)) < 0.1 and abs(np.mean(off_diagonal)) < 0.1


def test_components_are_oriented_orthonormal_eigenvectors_of_the_release():
    X = gaussian_data()
    est = DPKendallDirections(n_components=2, random_state=1).fit(X)
    V = est.components_
    assert V.shape == (2, 3)
    np.testing.assert_allclose(V @ V.T, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(est.kendall_matrix_ @ V.T, V.T * est.kendall_eigenvalues_[:2],
                               atol=1e-10)
    assert np.all(np.diff(est.kendall_eigenvalues_) <= 0)
    rows = np.argmax(np.abs(V), axis=1)
    assert np.all(V[np.arange(2), rows] > 0)


def test_recovers_the_leading_direction_with_a_large_budget():
    X = gaussian_data(n=2000, scales=(5.0, 1.0, 1.0))
    est = DPKendallDirections(n_components=1, eps=50.0, random_state=0).fit(X)
    assert abs(est.components_[0, 0]) > 0.99


def test_tight_sensitivity_and_analytic_calibration_give_less_noise():
    X = gaussian_data(n=100)
    base = DPKendallDirections(eps=0.5, noise="classical", accounting="basic",
                               sensitivity="standard", random_state=0).fit(X)
    tight = DPKendallDirections(eps=0.5, noise="classical", accounting="basic",
                                random_state=0).fit(X)
    analytic = DPKendallDirections(eps=0.5, accounting="basic", sensitivity="standard",
                                   random_state=0).fit(X)
    assert tight.noise_scale_ / base.noise_scale_ == pytest.approx(math.sqrt(2) / 2, rel=1e-12)
    assert analytic.noise_scale_ < base.noise_scale_
    # one Gaussian part alone: GDP gives exactly the analytic calibration
    gdp = DPKendallDirections(eps=0.5, sensitivity="standard", random_state=0).fit(X)
    assert gdp.noise_scale_ == pytest.approx(analytic.noise_scale_, rel=1e-9)
    assert _kendall_sensitivity(100, "standard") == pytest.approx(0.04)


def test_classical_warns_at_large_eps_and_analytic_does_not():
    X = gaussian_data(n=50)
    with pytest.warns(UserWarning, match="noise='analytic'"):
        DPKendallDirections(eps=1.0, noise="classical", accounting="basic",
                            random_state=0).fit(X)
    with pytest.raises(ValueError, match="accounting='basic'"):
        DPKendallDirections(noise="classical", random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPKendallDirections(eps=5.0, random_state=0).fit(X)


def test_ledger_and_spend():
    X = gaussian_data(n=80)
    est = DPKendallDirections(eps=0.7, delta=1e-6, accounting="basic",
                              random_state=0).fit(X)
    assert est.privacy_spent_ == (0.7, 1e-6)
    (entry,) = est.privacy_ledger_
    assert entry["eps"] == 0.7 and entry["delta"] == 1e-6
    assert entry["sensitivity"] == pytest.approx(2 * math.sqrt(2) / 80)
    assert entry["noise_scale"] == est.noise_scale_
    for key in ("step", "mechanism", "eps", "delta", "sensitivity", "noise_scale", "mu"):
        assert key in entry
    # GDP: the part records its mu, the block entry charges the pair
    est = DPKendallDirections(eps=0.7, delta=1e-6, random_state=0).fit(X)
    part, block = est.privacy_ledger_
    assert (part["step"], block["step"]) == ("loading", "gaussian block")
    assert part["eps"] == part["delta"] == 0.0
    assert 1 <= part["noise_scale"] / (part["sensitivity"] / part["mu"]) < 1.001
    assert block["mu"] == part["mu"] and block["eps"] == 0.7
    assert block["delta"] == pytest.approx(1e-6, rel=1e-9) and block["delta"] <= 1e-6
    # (the spend as reported: 10 significant digits, the block's delta 1e-06)
    assert est.privacy_spent_ == (block["eps"], 1e-6)


def test_same_seed_same_release_and_input_untouched():
    X = gaussian_data()
    X_copy = X.copy()
    first = DPKendallDirections(random_state=3).fit(X).components_
    second = DPKendallDirections(random_state=3).fit(X).components_
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(X, X_copy)


def test_transform_projects_and_keeps_float32():
    X = gaussian_data().astype(np.float32)
    est = DPKendallDirections(n_components=2, random_state=0).fit(X)
    Z = est.transform(X)
    assert Z.dtype == np.float32
    np.testing.assert_allclose(Z, X.astype(float) @ est.components_.T, rtol=1e-5, atol=1e-5)


def test_nonprivate_reference_is_aligned_covariance_pca():
    X = gaussian_data(n=500)
    est = DPKendallDirections(eps=5.0, compute_nonprivate=True, random_state=0).fit(X)
    reference = est.nonprivate_
    covariance = np.cov(X, rowvar=False)
    np.testing.assert_allclose(covariance @ reference.components.T,
                               reference.components.T * reference.explained_variance,
                               atol=1e-10)
    assert np.all(np.sum(reference.components * est.components_, axis=1) >= 0)
    np.testing.assert_allclose(reference.scores.mean(axis=0), 0, atol=1e-10)
    assert DPKendallDirections(random_state=0).fit(X).nonprivate_ is None


def test_repeated_rows_are_zero_terms_never_an_error():
    X = np.vstack([gaussian_data(n=20), gaussian_data(n=20)[:3]])
    assert "duplicates" not in DPKendallDirections().get_params()
    fitted = DPKendallDirections(random_state=0).fit(X)
    assert np.all(np.isfinite(fitted.kendall_matrix_))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"eps": 0}, "eps"),
        ({"eps": -1.0}, "eps"),
        ({"eps": float("nan")}, "eps"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"noise": "laplace"}, "noise"),
        ({"sensitivity": "loose"}, "sensitivity"),
        ({"pairs": 0}, "pairs"),
        ({"n_components": 4}, "n_components"),
        ({"n_components": 0}, "n_components"),
    ],
)
def test_invalid_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        DPKendallDirections(**params).fit(gaussian_data(n=30))


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]]), "NaN"),
        (np.array([[1.0, np.inf], [2.0, 3.0], [0.0, 1.0]]), "infinity"),
        (np.array([[1.0, 2.0]]), "minimum of 2"),
        (np.array([["a", "b"], ["c", "d"]]), "X must be numeric"),
    ],
)
def test_bad_data_is_a_value_error(X, match):
    with pytest.raises(ValueError, match=match):
        DPKendallDirections().fit(X)


def test_dataframe_non_numeric_columns_are_dropped_with_a_warning():
    pd = pytest.importorskip("pandas")
    X = gaussian_data(n=50)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["city"] = ["x", "y"] * 25
    est = DPKendallDirections(n_components=2, random_state=0)
    with pytest.warns(UserWarning, match="city"):
        est.fit(frame)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_allclose(est.transform(frame), X @ est.components_.T)
    est.set_output(transform="pandas")
    out = est.transform(frame)
    assert list(out.columns) == ["dpkendalldirections0", "dpkendalldirections1"]


def test_summary_prints_the_directions_table():
    X = gaussian_data(n=50)
    est = DPKendallDirections(eps=0.5, delta=1e-3, random_state=0).fit(X)
    text = str(est.summary())
    assert "DP PC Directions Summary" in text
    assert "Data: 50 observations x 3 variables" in text
    assert "Components: 3 PC directions" in text
    assert "first 3 variables x first 3 PCs" in text
    assert "eps = 0.5 ; delta = 0.001" in text
    assert "Non-private reference: not stored" in text
    assert f"{est.components_[0, 0]:.3f}" in text
    assert "<table>" in est.summary()._repr_html_()
