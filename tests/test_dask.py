"""Fits in row blocks: Dask arrays and DataFrames on a LocalCluster, and in-memory
arrays with the same ``n`` (and the same ``row_blocks``, if any), release the same
values: the blocks are public, never a Dask collection's own partitions."""

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


def _fit(estimator, X, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


def _assert_same(a, b, names):
    for name in names:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-12, atol=0,
                                       err_msg=name)
    assert a.privacy_ledger_ == b.privacy_ledger_


COMMON = ["components_", "kendall_matrix_"]
SCREE = ["explained_variance_", "explained_variance_raw_", "explained_variance_ratio_",
         "total_variance_", "noise_scale_", "clip_bounds_"]


@pytest.mark.parametrize("radial", ["spherical", "clipped", "covariance"])
def test_directions_dask_equals_in_memory(client, cancer, radial):
    # (the covariance about the box's private mean: the mean's pass, then the
    # scatter's; the box is a setting of the test)
    box = list(zip(cancer.min(axis=0), cancer.max(axis=0))) if radial == "covariance" \
        else None
    params = dict(eps=1.0, pairs=8, radial=radial, random_state=3, bounds=box)
    memory = _fit(DPKendallDirections(row_blocks=BLOCK, **params), cancer)
    dask_fit = _fit(DPKendallDirections(row_blocks=BLOCK, **params),
                    da.from_array(cancer, chunks=BLOCK))
    _assert_same(memory, dask_fit, COMMON + ["kendall_eigenvalues_"])
    if radial != "spherical":
        assert memory.radius_ == dask_fit.radius_


def test_scree_dask_equals_in_memory(client, cancer):
    params = dict(eps=2.0, scree_params={"pairs": 6}, random_state=1)
    memory = _fit(DPScree(row_blocks=BLOCK, **params), cancer)
    dask_fit = _fit(DPScree(row_blocks=BLOCK, **params), da.from_array(cancer, chunks=BLOCK))
    _assert_same(memory, dask_fit, COMMON + SCREE)


@pytest.mark.parametrize("scree_method", ["clipped", "kendall"])
def test_dppca_dask_equals_in_memory(client, cancer, scree_method):
    params = dict(eps=4.0, pairs=8, scree_method=scree_method, random_state=0)
    memory = _fit(DPPCA(row_blocks=BLOCK, **params), cancer)
    dask_fit = _fit(DPPCA(row_blocks=BLOCK, **params), da.from_array(cancer, chunks=BLOCK))
    _assert_same(memory, dask_fit, COMMON + SCREE[:-1] + ["score_histogram_",
                                                          "synthetic_scores_"])
    assert (dask_fit.frame_ is None) == (memory.frame_ is None)
    if memory.frame_ is not None:
        np.testing.assert_allclose(dask_fit.frame_.center, memory.frame_.center,
                                   rtol=1e-12)
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
    dask_fit = _fit(DPPCA(row_blocks=80, **params), frame)
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
    _fit(DPPCA(eps=4.0, pairs=8, random_state=0, verbose=1, row_blocks=BLOCK),
         da.from_array(cancer, chunks=BLOCK))
    out = capsys.readouterr().out
    assert "4 of 4 blocks (100%)" in out and "pass 2" in out


@pytest.mark.parametrize("params, match", [
    (dict(pairs="all"), "pairs='all'"),
    (dict(pairs=200), "at least pairs \\+ 1"),
    (dict(pairs=8, scree_method="huber"), "huber"),
    (dict(pairs=8, scree_params={"clip": "component"}), "clip='component'"),
    (dict(pairs=8, compute_nonprivate=True), "compute_nonprivate.*all rows in memory"),
])
def test_refused_before_spending(cancer, params, match):
    from sklearn_dppca import PrivacyAccountant

    accountant = PrivacyAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match=match):
        DPPCA(accountant=accountant, row_blocks=BLOCK, **params).fit(
            da.from_array(cancer, chunks=BLOCK))
    assert accountant.spent() == (0.0, 0.0)


def test_bad_inputs(cancer):
    from sklearn_dppca import PrivacyAccountant

    bad = cancer.copy()
    bad[300, 2] = np.nan
    accountant = PrivacyAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match="NaN or infinity"):
        DPPCA(pairs=8, accountant=accountant).fit(da.from_array(bad, chunks=BLOCK))
    # checked in the first pass, which runs before the budget is charged
    assert accountant.spent() == (0.0, 0.0)
    with pytest.raises(ValueError, match="beyond 2\\*\\*500"):
        DPPCA(pairs=8, accountant=accountant).fit(
            da.from_array(cancer * 1e160, chunks=BLOCK))
    assert accountant.spent() == (0.0, 0.0)
    with pytest.raises(ValueError, match="row_blocks"):
        DPPCA(pairs=8, row_blocks=[100, 100]).fit(cancer)
    with pytest.raises(TypeError, match="row_blocks"):
        DPPCA(pairs=8, row_blocks="rows").fit(cancer)
    with pytest.raises(ValueError, match="2-D"):
        DPPCA(pairs=8).fit(da.from_array(cancer[:, 0], chunks=BLOCK))


def test_scale_dask_equals_in_memory(client, cancer):
    # census-like mixed units: per-column spreads released blockwise
    params = dict(eps=4.0, pairs=8, scale=True, random_state=5)
    memory = _fit(DPPCA(row_blocks=BLOCK, **params), cancer)
    dask_fit = _fit(DPPCA(row_blocks=BLOCK, **params), da.from_array(cancer, chunks=BLOCK))
    _assert_same(memory, dask_fit, ["scale_"] + COMMON + SCREE[:-1]
                 + ["score_histogram_"])
    for estimator in (DPKendallDirections, DPScree):
        extra = {"scree_params": {"pairs": 8}} if estimator is DPScree else {"pairs": 8}
        kw = dict(eps=4.0, scale=True, random_state=5, **extra)
        memory = _fit(estimator(row_blocks=BLOCK, **kw), cancer)
        dask_fit = _fit(estimator(row_blocks=BLOCK, **kw),
                        da.from_array(cancer, chunks=BLOCK))
        _assert_same(memory, dask_fit, ["scale_"] + COMMON)


def test_blockwise_spreads_track_the_columns_sd(cancer):
    # the spreads estimate each column's sd up to one common factor (Gaussian-ish
    # columns: close to it); units range over 4 orders of magnitude here
    fit = _fit(DPKendallDirections(eps=50.0, pairs=8, scale=True, row_blocks=BLOCK,
                                   random_state=0), cancer)
    ratio = fit.scale_ / cancer.std(axis=0)
    assert np.all(ratio > 0.3) and np.all(ratio < 1.5)
    assert np.ptp(np.log10(fit.scale_)) > 3


def test_within_block_spread_sensitivity_holds_for_an_adversarial_neighbour():
    from sklearn_dppca._data._rows import Rows
    from sklearn_dppca._data._statistics import _within_block_sensitivity

    rng = np.random.default_rng(0)
    X = rng.normal(size=(230, 3))
    bounds = np.array([0.5, 1.0, 2.0])
    sizes = (100, 100, 30)
    rows = Rows(X, sizes, root=0)
    sums, n_pairs = rows.clipped_pair_sums(bounds)
    worst = 0.0
    for row in (0, 150, 229):             # one row of each block, moved far away
        neighbour = X.copy()
        neighbour[row] = 1e6
        other, _ = Rows(neighbour, sizes, root=0).clipped_pair_sums(bounds)
        worst = max(worst, np.max(np.abs(other - sums) / bounds / n_pairs))
    stated = _within_block_sensitivity(sizes)
    assert worst <= stated * (1 + 1e-12)
    assert worst > 0.5 * stated            # tight: a far row moves most of its terms
    # equal blocks: 2 / n, as over all pairs of the rows
    assert _within_block_sensitivity((100, 100)) == 2 / 200


@pytest.mark.parametrize("y_kind", ["dask", "memory"])
def test_groups_dask_equals_in_memory(client, cancer, y_kind):
    labels = np.array(["malignant", "benign"])[load_breast_cancer().target[:4 * BLOCK]]
    params = dict(eps=4.0, pairs=8, groups=["malignant", "benign"], random_state=7)
    memory = _fit(DPPCA(row_blocks=BLOCK, **params), cancer, labels)
    y = da.from_array(labels, chunks=2 * BLOCK) if y_kind == "dask" else labels
    dask_fit = _fit(DPPCA(row_blocks=BLOCK, **params), da.from_array(cancer, chunks=BLOCK), y)
    _assert_same(memory, dask_fit, COMMON + ["score_histogram_", "synthetic_scores_"])
    for group in params["groups"]:
        np.testing.assert_allclose(dask_fit.score_histograms_[group],
                                   memory.score_histograms_[group], rtol=1e-12)
    np.testing.assert_array_equal(dask_fit.synthetic_groups_, memory.synthetic_groups_)


def test_groups_labels_checked_before_spending_without_echo(cancer):
    from sklearn_dppca import PrivacyAccountant

    labels = np.array(["a"] * (4 * BLOCK), dtype=object)
    labels[333] = "secret-label-17"
    accountant = PrivacyAccountant(10.0, 1e-3)
    for y in (da.from_array(labels, chunks=BLOCK), labels):
        with pytest.raises(ValueError, match="outside groups") as raised:
            DPPCA(pairs=8, groups=["a"], accountant=accountant).fit(
                da.from_array(cancer, chunks=BLOCK), y)
        assert "secret" not in str(raised.value)
    with pytest.raises(ValueError, match="one label per row"):
        DPPCA(pairs=8, groups=["a"]).fit(da.from_array(cancer, chunks=BLOCK),
                                         da.from_array(labels[:-1], chunks=BLOCK))
    assert accountant.spent() == (0.0, 0.0)


def _counting_rows(X, log):
    """A Dask array of ``X`` whose every block read appends a line to the file
    ``log`` (a file: the workers may run a copy of this function)."""
    def block(block_info=None):
        start, stop = block_info[None]["array-location"][0]
        with open(log, "a") as file:
            file.write(f"{start}\n")
        return X[start:stop]
    return da.map_blocks(block, chunks=((BLOCK,) * (X.shape[0] // BLOCK), (X.shape[1],)),
                         dtype=X.dtype)


@pytest.mark.parametrize("scree_method, most", [("clipped", 8), ("kendall", 6)])
def test_dppca_passes_over_the_data(client, cancer, tmp_path, scree_method, most):
    # statistics that need no release of each other share a pass (13 and 11 before)
    log = tmp_path / "reads.txt"
    fit = _fit(DPPCA(eps=4.0, pairs=8, scree_method=scree_method, random_state=0),
               _counting_rows(cancer, log))
    assert fit.score_histogram_ is not None
    reads = log.read_text().split()
    assert sorted(set(reads)) == sorted(str(start) for start in range(0, 4 * BLOCK, BLOCK))
    assert len(reads) % 4 == 0 and len(reads) // 4 <= most


def test_dropped_columns_are_named_at_the_users_fit(client):
    # pandas and Dask DataFrames drop their non-numeric columns through one rule,
    # with the same warning, pointing at the user's fit call (this file)
    dd = pytest.importorskip("dask.dataframe")
    wine = load_wine(as_frame=True).frame.drop(columns="target").iloc[:160]
    wine["site"] = "north"
    for X in (wine, dd.from_pandas(wine, npartitions=2)):
        with pytest.warns(UserWarning, match=r"Dropping non-numeric columns of X: \['site'\]") \
                as record:
            fitted = DPPCA(eps=4.0, pairs=6, random_state=2).fit(X)
        dropping = [w for w in record if "Dropping" in str(w.message)]
        assert [w.filename for w in dropping] == [__file__]
        assert fitted.n_features_in_ == wine.shape[1] - 1
        assert fitted.transform(X).shape[1] == fitted.n_components_


def _fits_of_every_kind():
    return [DPKendallDirections(eps=2.0, random_state=3),
            DPKendallDirections(eps=2.0, radial="clipped", scale=True, random_state=3),
            DPScree(eps=2.0, random_state=1),
            DPScree(eps=2.0, scale=True, scree_method="kendall", random_state=1),
            DPPCA(eps=4.0, random_state=0),
            DPPCA(eps=4.0, scale=True, radial="clipped", random_state=0)]


@pytest.mark.parametrize("index", range(6))
def test_dask_equals_in_memory_without_row_blocks(client, cancer, index):
    # no row_blocks: both fits cut the same n rows into the same public blocks
    # (one here), whatever the Dask array's own chunks (uneven on purpose)
    chunks = ((100, 173, 287), (cancer.shape[1],))
    memory = _fit(_fits_of_every_kind()[index], cancer)
    dask_fit = _fit(_fits_of_every_kind()[index], da.from_array(cancer, chunks=chunks))
    names = COMMON + [name for name in SCREE + ["scale_", "radius_", "score_histogram_",
                                                "synthetic_scores_"]
                      if getattr(memory, name, None) is not None]
    _assert_same(memory, dask_fit, names)


def test_block_sizes_are_public():
    from sklearn_dppca._data._rows import BLOCK_ROWS, block_sizes

    assert block_sizes(569) == (569,)
    assert block_sizes(BLOCK_ROWS) == (BLOCK_ROWS,)
    third = (2 * BLOCK_ROWS + 3) // 3
    assert block_sizes(2 * BLOCK_ROWS + 3) == (third + 1, third + 1, third)
    assert block_sizes(10, 4) == (4, 4, 2) and block_sizes(10, [3, 7]) == (3, 7)


def test_csv_partitions_do_not_decide_the_blocks(client, tmp_path):
    # two CSVs one row apart, read with a byte block size: Dask's partitions differ
    # (they follow the bytes of the rows), the fit's blocks and ledger do not
    dd = pytest.importorskip("dask.dataframe")
    from sklearn_dppca._data._input import fit_input

    X = load_breast_cancer().data[:, :6]
    other = X.copy()
    other[200] = X[200] * 1e6 + 0.123456789     # one row replaced, longer in text
    frames = []
    for name, data in (("D", X), ("D_prime", other)):
        path = tmp_path / f"{name}.csv"
        np.savetxt(path, data, delimiter=",", header=",".join(f"c{j}" for j in range(6)),
                   comments="", fmt="%.12g")
        frames.append(dd.read_csv(path, blocksize=8_000))
    lengths = [tuple(frame.map_partitions(len).compute()) for frame in frames]
    assert len(lengths[0]) > 1 and lengths[0] != lengths[1]
    rows = [fit_input(DPPCA(), frame, None, np.random.default_rng(0)) for frame in frames]
    assert rows[0].sizes == rows[1].sizes == (X.shape[0],)
    # the spreads' and the Kendall matrix's sensitivities are public (n, the
    # blocks): the whole ledger agrees
    ledgers = [_fit(DPKendallDirections(eps=4.0, scale=True, random_state=0),
                    frame).privacy_ledger_ for frame in frames]
    assert ledgers[0] == ledgers[1]
    # DPPCA's scree scales its sensitivities by released clip bounds; every spend agrees
    spends = [[(entry["step"], entry["eps"], entry["delta"], entry.get("mu"))
               for entry in _fit(DPPCA(eps=4.0, scale=True, random_state=0),
                                 frame).privacy_ledger_] for frame in frames]
    assert spends[0] == spends[1]
