import numpy as np
import pytest

from sklearn_dppca.datasets import (
    load_adult,
    load_breast_cancer_frame,
    load_wine_frame,
    make_gaussian_clusters,
)

LABELS = ["G1", "G2", "G3", "G4", "G5"]


def test_gau_defaults_shape_and_labels():
    X, groups = make_gaussian_clusters(return_groups=True, random_state=0)
    assert X.shape == (5000, 20)
    assert X.dtype == np.float64
    assert groups.shape == (5000,)
    assert list(dict.fromkeys(groups.tolist())) == LABELS
    for label in LABELS:
        assert np.sum(groups == label) == 1000
    # rows come in group blocks, G1 first (as the R package binds them)
    assert list(groups[:1000]) == ["G1"] * 1000
    assert list(groups[-1000:]) == ["G5"] * 1000


def test_gau_recipe_means_and_scales():
    X, groups = make_gaussian_clusters(4000, return_groups=True, random_state=1)
    expected_mean = np.zeros((5, 20))
    expected_mean[1, 0:5] = 5
    expected_mean[2, 0:5] = -3
    expected_mean[3, 5:10] = -1
    expected_mean[4, 5:10] = 3
    expected_var = np.array([1, 1, 5, 5, 8])
    for g, label in enumerate(LABELS):
        rows = X[groups == label]
        se = np.sqrt(expected_var[g] / len(rows))
        assert np.all(np.abs(rows.mean(axis=0) - expected_mean[g]) < 5 * se)
        assert np.allclose(rows.var(axis=0, ddof=1), expected_var[g], rtol=0.1)
        # spherical: no correlation between columns
        corr = np.corrcoef(rows, rowvar=False)
        assert np.max(np.abs(corr - np.eye(20))) < 0.1


def test_return_x_only_and_more_features():
    X = make_gaussian_clusters(10, n_features=12, random_state=0)
    assert isinstance(X, np.ndarray) and X.shape == (50, 12)


def test_reproducible_and_generator_accepted():
    a = make_gaussian_clusters(20, random_state=3)
    b = make_gaussian_clusters(20, random_state=3)
    c = make_gaussian_clusters(20, random_state=np.random.default_rng(3))
    assert np.array_equal(a, b)
    assert np.array_equal(a, c)
    assert not np.array_equal(a, make_gaussian_clusters(20, random_state=4))


def test_as_frame():
    pd = pytest.importorskip("pandas")
    X, y = make_gaussian_clusters(7, as_frame=True, return_groups=True, random_state=0)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert list(X.columns) == [f"V{j}" for j in range(1, 21)]
    assert y.name == "group"
    assert sorted(y.unique()) == LABELS
    X_only = make_gaussian_clusters(7, as_frame=True, random_state=0)
    assert isinstance(X_only, pd.DataFrame)
    assert np.array_equal(X_only.to_numpy(), X.to_numpy())


def test_custom_means_scales_and_counts():
    means = [[0.0, 0.0], [10.0, -10.0]]
    X, y = make_gaussian_clusters(
        [300, 100], n_features=2, means=means, scales=[[1.0, 0.1], [2.0, 2.0]],
        return_groups=True, random_state=0,
    )
    assert X.shape == (400, 2)
    assert list(dict.fromkeys(y.tolist())) == ["G1", "G2"]
    assert np.sum(y == "G1") == 300
    assert X[y == "G1"][:, 1].std() < 0.2
    assert np.allclose(X[y == "G2"].mean(axis=0), [10, -10], atol=0.7)
    # user means and no scales: unit variance
    Z = make_gaussian_clusters(2000, n_features=2, means=[[0, 0]], random_state=0)
    assert np.allclose(Z.std(axis=0), 1, atol=0.06)
    # a scalar scale
    Z = make_gaussian_clusters(2000, n_features=2, means=[[0, 0]], scales=0.0,
                               random_state=0)
    assert np.all(Z == 0)


def test_shuffle_keeps_labels_with_rows():
    X, y = make_gaussian_clusters(200, return_groups=True, shuffle=True, random_state=0)
    assert list(y[:5]) != ["G1"] * 5 or list(y[5:10]) != ["G1"] * 5
    assert X[y == "G2"][:, :5].mean() == pytest.approx(5, abs=0.2)
    assert X[y == "G5"][:, 5:10].mean() == pytest.approx(3, abs=0.3)


@pytest.mark.parametrize(
    "kwargs, name, error",
    [
        ({"n_features": 5}, "n_features", ValueError),
        ({"n_features": 0}, "n_features", ValueError),
        ({"n_features": 2.5}, "n_features", TypeError),
        ({"n_samples_per_group": 0}, "n_samples_per_group", ValueError),
        ({"n_samples_per_group": 1.5}, "n_samples_per_group", TypeError),
        ({"n_samples_per_group": True}, "n_samples_per_group", TypeError),
        ({"n_samples_per_group": "many"}, "n_samples_per_group", TypeError),
        ({"n_samples_per_group": [1, 2]}, "n_samples_per_group", ValueError),
        ({"n_samples_per_group": [0, 0, 0, 0, 0]}, "n_samples_per_group", ValueError),
        ({"n_samples_per_group": [1, 2, -1, 1, 1]}, "n_samples_per_group", ValueError),
        ({"n_samples_per_group": [1, 2, 1.5, 1, 1]}, "n_samples_per_group", TypeError),
        ({"means": np.zeros((3, 4))}, "means", ValueError),
        ({"means": [[np.nan] * 20]}, "means", ValueError),
        ({"scales": [1.0, 2.0]}, "scales", ValueError),
        ({"scales": [1, 1, 1, 1, -1]}, "scales", ValueError),
        ({"return_groups": "yes"}, "return_groups", TypeError),
        ({"as_frame": 1}, "as_frame", TypeError),
        ({"shuffle": None}, "shuffle", TypeError),
    ],
)
def test_invalid_arguments(kwargs, name, error):
    # wrong type: TypeError; right type, wrong value: ValueError
    with pytest.raises(error, match=name):
        make_gaussian_clusters(**kwargs)


def test_invalid_random_state():
    with pytest.raises(TypeError, match="random_state"):
        make_gaussian_clusters(5, random_state="seed")
    with pytest.raises(ValueError, match="random_state"):
        make_gaussian_clusters(5, random_state=-1)


def test_load_wine_frame():
    pd = pytest.importorskip("pandas")
    X, y = load_wine_frame()
    assert isinstance(X, pd.DataFrame) and X.shape == (178, 13)
    assert "alcohol" in X.columns and "target" not in X.columns
    assert y.name == "class" and len(y) == 178
    assert y.value_counts().to_dict() == {"class_1": 71, "class_0": 59, "class_2": 48}
    assert not X.isna().any().any()


def test_load_breast_cancer_frame():
    pd = pytest.importorskip("pandas")
    X, y = load_breast_cancer_frame()
    assert isinstance(X, pd.DataFrame) and X.shape == (569, 30)
    assert y.value_counts().to_dict() == {"benign": 357, "malignant": 212}
    assert np.all(X.dtypes == np.float64)


ADULT_COLUMNS = ["age", "education_num", "capital_gain", "capital_loss",
                 "hours_per_week"]


def test_adult_shape_columns_and_dtypes():
    adult = load_adult()
    assert adult.data.shape == (32561, 5)
    assert adult.feature_names == ADULT_COLUMNS
    assert list(adult.data.columns) == ADULT_COLUMNS
    assert (adult.data.dtypes == np.int64).all()
    assert adult.frame is adult.data
    # the file's first row and its ranges (a wrong column order would change them)
    assert adult.data.iloc[0].tolist() == [39, 13, 2174, 0, 40]
    assert adult.data.min().tolist() == [17, 1, 0, 0, 1]
    assert adult.data.max().tolist() == [90, 16, 99999, 4356, 99]


def test_adult_descr_cites_the_source_license_and_duplicates():
    descr = load_adult().DESCR
    assert "Becker" in descr and "Kohavi" in descr
    assert "https://doi.org/10.24432/C5XW20" in descr and "CC BY 4.0" in descr
    assert "scale=True" in descr
    duplicates = int(load_adult().data.duplicated().sum())
    assert f"{duplicates:,} rows repeat an earlier row" in descr
    assert "https://doi.org/10.24432/C5XW20" in load_adult.__doc__


def test_adult_as_array_and_return_X_y():
    adult = load_adult(as_frame=False)
    assert isinstance(adult.data, np.ndarray) and adult.data.dtype == np.int64
    assert adult.frame is None and adult.data.shape == (32561, 5)
    X, y = load_adult(return_X_y=True)
    assert y is None and list(X.columns) == ADULT_COLUMNS
    X, y = load_adult(as_frame=False, return_X_y=True)
    assert y is None and np.array_equal(X, adult.data)


@pytest.mark.parametrize("name", ["as_frame", "return_X_y"])
def test_adult_flags_must_be_booleans(name):
    with pytest.raises(TypeError, match=name):
        load_adult(**{name: "yes"})


def test_adult_file_is_package_data():
    from importlib import resources

    shipped = resources.files("sklearn_dppca.datasets").joinpath("data", "adult.csv.gz")
    assert shipped.is_file()
    with shipped.open("rb") as handle:
        assert handle.read(2) == b"\x1f\x8b"          # gzip, as pyproject ships it


def test_dppca_scaled_fits_adult():
    from sklearn_dppca import DPPCA

    X = load_adult().data
    pca = DPPCA(eps=1.0, scale=True, pairs=64, random_state=0).fit(X)
    assert pca.components_.shape[1] == 5
    assert list(pca.feature_names_in_) == ADULT_COLUMNS
    # a scree is printed only in the scaled units: every column divided by its
    # spread (capital_loss, 95% zeros, may keep its own units: then none)
    scaled = np.all(np.isfinite(pca.scale_))
    assert np.all(np.isfinite(pca.explained_variance_)) == scaled
