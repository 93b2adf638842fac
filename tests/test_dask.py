"""Fits in row blocks: Dask arrays and DataFrames on a LocalCluster, and in-memory
arrays with the same ``row_blocks``, release the same values."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

BLOCK = 140


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer().data[:4 * BLOCK]


def _fit(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X)


def _assert_same(a, b, names):
    for name in names:
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        np.testing.assert_allclose(y, x, rtol=1e-12, atol=0, err_msg=name)
    assert a.privacy_ledger_ == b.privacy_ledger_


COMMON = ["components_", "kendall_matrix_"]
SCREE = ["explained_variance_", "explained_variance_raw_", "explained_variance_ratio_",
         "total_variance_", "noise_scale_", "clip_bounds_"]


@pytest.mark.parametrize("radial", ["spherical", "clipped"])
def test_directions_dask_equals_in_memory(client, cancer, radial):
    params = dict(eps=1.0, pairs=8, radial=radial, random_state=3)
    memory = _fit(DPKendallDirections(row_blocks=BLOCK, **params), cancer)
    dask_fit = _fit(DPKendallDirections(**params), da.from_array(cancer, chunks=BLOCK))
    _assert_same(memory, dask_fit, COMMON + ["kendall_eigenvalues_"])
    if radial == "clipped":
        assert memory.radius_ == dask_fit.radius_


def test_scree_dask_equals_in_memory(client, cancer):
    params = dict(eps=2.0, method_params={"pairs": 6}, random_state=1)
    memory = _fit(DPScree(row_blocks=BLOCK, **params), cancer)
    dask_fit = _fit(DPScree(**params), da.from_array(cancer, chunks=BLOCK))
    _assert_same(memory, dask_fit, COMMON + SCREE)


@pytest.mark.parametrize("scree_method", ["clipped", "kendall"])
def test_dppca_dask_equals_in_memory(client, cancer, scree_method):
    params = dict(eps=4.0, pairs=8, scree_method=scree_method, random_state=0)
    memory = _fit(DPPCA(row_blocks=BLOCK, **params), cancer)
    dask_fit = _fit(DPPCA(**params), da.from_array(cancer, chunks=BLOCK))
    _assert_same(memory, dask_fit, COMMON + SCREE[:-1] + ["score_histogram_",
                                                          "synthetic_scores_"])
    np.testing.assert_allclose(dask_fit.frame_.center, memory.frame_.center, rtol=1e-12)
    assert dask_fit.frame_.radius == memory.frame_.radius


def test_row_blocks_change_the_design_not_the_estimand(cancer):
    # the blocks design differs from the one-design fit (other draws) ...
    whole = _fit(DPKendallDirections(pairs=8, eps=1e6, random_state=0), cancer)
    blocks = _fit(DPKendallDirections(pairs=8, eps=1e6, row_blocks=BLOCK,
                                      random_state=0), cancer)
    assert not np.array_equal(whole.kendall_matrix_, blocks.kendall_matrix_)
    # ... but estimates the same matrix
    np.testing.assert_allclose(blocks.kendall_matrix_, whole.kendall_matrix_, atol=0.03)


def test_dataframe_feature_names_and_transform(client):
    dd = pytest.importorskip("dask.dataframe")   # (needs pyarrow)
    wine = load_wine(as_frame=True).frame.drop(columns="target").iloc[:160]
    frame = dd.from_pandas(wine, npartitions=2)
    params = dict(eps=4.0, pairs=6, random_state=2)
    dask_fit = _fit(DPPCA(**params), frame)
    memory = _fit(DPPCA(row_blocks=80, **params), wine)
    assert list(dask_fit.feature_names_in_) == list(wine.columns)
    _assert_same(memory, dask_fit, COMMON + SCREE[:-1])
    projected = dask_fit.transform(frame)
    assert isinstance(projected, da.Array)
    np.testing.assert_allclose(projected.compute(), memory.transform(wine), rtol=1e-12)
    back = dask_fit.inverse_transform(projected)
    assert isinstance(back, da.Array) and back.shape == (160, wine.shape[1])
    with pytest.raises(ValueError, match="feature names"):
        dask_fit.transform(frame[list(wine.columns[::-1])])


def test_progress_reports_blocks(client, cancer, capsys):
    _fit(DPPCA(eps=4.0, pairs=8, random_state=0, verbose=1),
         da.from_array(cancer, chunks=BLOCK))
    out = capsys.readouterr().out
    assert "4 of 4 blocks (100%)" in out and "pass 2" in out


@pytest.mark.parametrize("params, match", [
    (dict(pairs="all"), "pairs='all'"),
    (dict(pairs=200), "at least pairs \\+ 1"),
    (dict(pairs=8, scale=True), "scale=True"),
    (dict(pairs=8, scree_method="huber"), "huber"),
    (dict(pairs=8, scree_params={"clip": "component"}), "clip='component'"),
    (dict(pairs=8, compute_nonprivate=True), "compute_nonprivate"),
])
def test_refused_before_spending(cancer, params, match):
    from sklearn_dppca import PrivacyAccountant

    accountant = PrivacyAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match=match):
        DPPCA(accountant=accountant, **params).fit(da.from_array(cancer, chunks=BLOCK))
    assert accountant.spent() == (0.0, 0.0)


def test_bad_inputs(cancer):
    bad = cancer.copy()
    bad[300, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        DPPCA(pairs=8).fit(da.from_array(bad, chunks=BLOCK))
    with pytest.raises(ValueError, match="row_blocks"):
        DPPCA(pairs=8, row_blocks=[100, 100]).fit(cancer)
    with pytest.raises(TypeError, match="row_blocks"):
        DPPCA(pairs=8, row_blocks="rows").fit(cancer)
    with pytest.raises(ValueError, match="2-D"):
        DPPCA(pairs=8).fit(da.from_array(cancer[:, 0], chunks=BLOCK))
