"""Tests of the spherical Kendall kernel against a slow direct pair loop."""

import numpy as np
import pytest

from sklearn_dppca._kendall import _pair_design, spherical_kendall

from ._kendall_support import pair_scatter as _pair_scatter

from ._kendall_support import (
    DATASETS,
    TOL,
    adversarial_neighbours,
    assert_close,
    direct_kendall,
    gram_trick_kendall,
    random_dyadic,
)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_matches_direct_loop(name):
    X = DATASETS[name]
    assert_close(spherical_kendall(X), direct_kendall(X))


def test_near_duplicates_defeat_the_plain_gram_trick():
    # Guards the test above: on this input the Gram formulation alone is far off,
    # so agreement there needs the exact path.
    X = DATASETS["near_duplicates"]
    assert np.max(np.abs(gram_trick_kendall(X) - direct_kendall(X))) > 1e-6


def test_blocks_and_tasks_cover_larger_inputs():
    # n above one block (256 rows) and a partial last block; far from the origin.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((700, 3)) * [1.0, 10.0, 0.1] + 1e5
    X[::50] = X[1::50] + 1e-7  # some near-duplicate pairs across blocks
    assert_close(spherical_kendall(X), direct_kendall(X))


@pytest.mark.parametrize("block_size, run_length, max_tasks",
                         [(32, 3, 5), (50, 1, 1000), (700, 16, 128), (7, 4, 64)])
def test_block_layout_does_not_change_the_result(monkeypatch, block_size, run_length,
                                                 max_tasks):
    # Small blocks and runs exercise partial blocks, runs split over several tasks
    # and many tasks, at a size the direct loop checks quickly.
    from sklearn_dppca import _kendall

    monkeypatch.setattr(_kendall, "_BLOCK_SIZE", block_size)
    monkeypatch.setattr(_kendall, "_RUN_LENGTH", run_length)
    monkeypatch.setattr(_kendall, "_MAX_TASKS", max_tasks)
    X = DATASETS["near_duplicates"][:, :3] * [1.0, 1e-2, 1e2]
    expected = direct_kendall(X)
    assert_close(spherical_kendall(X), expected)
    assert_close(spherical_kendall(X, n_jobs=2), expected)


def test_input_is_not_modified_and_read_only_input_works():
    X = np.random.default_rng(4).standard_normal((120, 3))
    X.setflags(write=False)
    before = X.copy()
    K = spherical_kendall(X)
    assert_close(K, direct_kendall(X))
    np.testing.assert_array_equal(X, before)


def test_read_only_memmap_input(tmp_path):
    X = np.random.default_rng(41).standard_normal((200, 3)).astype(np.float32)
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    assert not mapped.flags.writeable
    assert_close(spherical_kendall(mapped), direct_kendall(X))
    assert_close(spherical_kendall(mapped, pairs=6, random_state=0),
                 spherical_kendall(X, pairs=6, random_state=0))


def test_fortran_ordered_and_list_input():
    X = np.asfortranarray(np.random.default_rng(5).standard_normal((60, 4)))
    expected = direct_kendall(X)
    assert_close(spherical_kendall(X), expected)
    assert_close(spherical_kendall(X.tolist()), expected)


# ------------------------------------------------------------------------ invariances
def test_scale_and_translation_invariance():
    X = random_dyadic(np.random.default_rng(6), 300, 5)
    K = spherical_kendall(X)
    scale = np.linalg.norm(K)
    for transformed in (X * 2.0**40, X * 2.0**-40, X + 1e6, (X + 1e6) * 2.0**-30):
        assert np.max(np.abs(spherical_kendall(transformed) - K)) <= TOL * scale


def test_properties_symmetric_psd_trace_one():
    X = np.random.default_rng(7).standard_normal((400, 6)) * [5, 3, 1, 1, 0.5, 0.1]
    K = spherical_kendall(X)
    np.testing.assert_array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() >= -1e-12
    assert abs(np.trace(K) - 1.0) <= 1e-12


# ------------------------------------------------------------------------ duplicates
def test_all_rows_identical():
    X = np.full((40, 3), 2.5)
    np.testing.assert_array_equal(spherical_kendall(X), np.zeros((3, 3)))
    np.testing.assert_array_equal(spherical_kendall(X, pairs=4, random_state=0),
                                  np.zeros((3, 3)))


def test_exact_duplicates_give_zero_terms():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, 3))
    X[10] = X[3]
    X[40] = X[3]
    X[20] = X[7]
    n_pairs = 50 * 49 // 2
    n_coincident = 3 + 1  # {3, 10, 40} gives three pairs, {7, 20} one
    K = spherical_kendall(X)
    assert_close(K, direct_kendall(X))
    assert abs(np.trace(K) - (n_pairs - n_coincident) / n_pairs) <= 1e-12


def test_signed_zero_rows_coincide():
    X = np.array([[0.0, 1.0], [-0.0, 1.0], [1.0, 0.0]])
    assert abs(np.trace(spherical_kendall(X)) - 2 / 3) <= 1e-12


def test_pair_design_zeroes_only_its_own_coincident_pairs():
    # With pairs=m only the coincident pairs of the design lose their term.
    X = np.random.default_rng(9).standard_normal((30, 2))
    X[5] = X[6]
    designs = {seed: _pair_design(30, 4, np.random.default_rng(seed))
               for seed in range(40)}
    in_design = {seed: (5, 6) in {tuple(pair) for pair in design.pairs()}
                 for seed, design in designs.items()}
    seed_with = next(seed for seed, found in in_design.items() if found)
    seed_without = next(seed for seed, found in in_design.items() if not found)
    K = spherical_kendall(X, pairs=4, random_state=seed_with)
    assert abs(np.trace(K) - (1 - 1 / 60)) <= 1e-12     # n m / 2 = 60 design pairs
    K = spherical_kendall(X, pairs=4, random_state=seed_without)
    assert abs(np.trace(K) - 1.0) <= 1e-12
    K = spherical_kendall(X, pairs=29)                  # m >= n - 1: all pairs
    assert abs(np.trace(K) - (1 - 1 / 435)) <= 1e-12


# ---------------------------------------------------------------------- sensitivity
def _neighbour_gap(X, X_prime, **kwargs):
    n = X.shape[0]
    return n * np.linalg.norm(spherical_kendall(X, **kwargs)
                              - spherical_kendall(X_prime, **kwargs))


@pytest.mark.parametrize("kwargs", [{}, {"pairs": 8, "random_state": 3},
                                    {"pairs": 7, "random_state": 4}])
def test_sensitivity_random_neighbours(kwargs):
    rng = np.random.default_rng(11)
    for _ in range(10):
        X = rng.standard_cauchy((60, 4))
        X_prime = X.copy()
        X_prime[rng.integers(60)] = 10 * rng.standard_cauchy(4)
        gap = _neighbour_gap(X, X_prime, **kwargs)
        assert gap <= 4.0
        assert gap <= 2 * np.sqrt(2) + 1e-9


@pytest.mark.parametrize("kwargs", [{}, {"pairs": 8, "random_state": 3},
                                    {"pairs": 5, "random_state": 4}])
def test_sensitivity_adversarial_pair_nearly_attains_the_bound(kwargs):
    X, X_prime = adversarial_neighbours()
    gap = _neighbour_gap(X, X_prime, **kwargs)
    assert 2.8 < gap <= 2 * np.sqrt(2) + 1e-9


# ------------------------------------------------------------------------ pair design
@pytest.mark.parametrize("n, m", [(10, 1), (10, 2), (10, 3), (11, 4), (50, 7),
                                  (64, 64), (9, 8), (10, 9), (200, 20)])
def test_pair_design_gives_every_row_m_distinct_partners(n, m):
    design = _pair_design(n, m, np.random.default_rng(n * m))
    m_used = min(m, n - 1)
    partners = design.partners()
    assert partners.shape == (n, m_used)
    assert not np.any(partners == np.arange(n)[:, None])  # no self pairs
    assert all(len(set(row)) == m_used for row in partners)  # no repeated partner
    pairs = design.pairs()
    assert pairs.shape == (n * m_used // 2, 2)
    assert np.all(pairs[:, 0] < pairs[:, 1])
    assert len({tuple(pair) for pair in pairs}) == len(pairs)  # distinct pairs
    np.testing.assert_array_equal(np.bincount(pairs.ravel(), minlength=n),
                                  np.full(n, m_used))
    # partners() and pairs() describe the same graph
    from_partners = {(min(i, j), max(i, j)) for i in range(n) for j in partners[i]}
    assert from_partners == {tuple(pair) for pair in pairs}


def test_pair_design_odd_m_needs_even_n():
    with pytest.raises(ValueError, match="even"):
        _pair_design(11, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="pairs=4"):
        spherical_kendall(np.random.default_rng(0).standard_normal((11, 2)), pairs=3)
    # m >= n - 1 is the complete design whatever the parities
    assert len(_pair_design(11, 11, np.random.default_rng(0)).pairs()) == 55


@pytest.mark.parametrize("n, m", [(101, 6), (100, 5), (64, 1), (300, 16)])
def test_pairs_m_matches_direct_loop_over_the_design(n, m):
    rng = np.random.default_rng(n + m)
    X = rng.standard_cauchy((n, 4)) + 1e3
    X[3] = X[4] + 1e-9  # a near-duplicate pair, whichever its design
    K_m = spherical_kendall(X, pairs=m, random_state=12)
    design = _pair_design(n, m, np.random.default_rng(12))
    assert_close(K_m, direct_kendall(X, design.pairs()))
    assert abs(np.trace(K_m) - 1.0) <= 1e-12


def test_pairs_m_extreme_values():
    rng = np.random.default_rng(13)
    X = np.vstack([rng.standard_normal((20, 3)) * 1e300,
                   rng.standard_normal((20, 3)) * 1e-300])
    design = _pair_design(40, 6, np.random.default_rng(1))
    assert_close(spherical_kendall(X, pairs=6, random_state=1),
                 direct_kendall(X, design.pairs()))


def test_pairs_m_at_least_n_minus_1_is_all_pairs():
    X = np.random.default_rng(14).standard_normal((40, 3))
    K = spherical_kendall(X)
    for m in (39, 40, 1000):
        assert_close(spherical_kendall(X, pairs=m, random_state=0), K)


def test_pairs_m_reproducible_and_seed_dependent():
    X = np.random.default_rng(15).standard_normal((200, 4))
    K_a = spherical_kendall(X, pairs=6, random_state=5)
    np.testing.assert_array_equal(K_a, spherical_kendall(X, pairs=6, random_state=5))
    np.testing.assert_array_equal(
        K_a, spherical_kendall(X, pairs=6, random_state=np.random.default_rng(5)))
    assert not np.allclose(K_a, spherical_kendall(X, pairs=6, random_state=6))


# -------------------------------------------------------------------------- parallel
def test_n_jobs_two_equals_serial():
    rng = np.random.default_rng(16)
    X = rng.standard_normal((1300, 5)) + 3.0
    assert_close(spherical_kendall(X, n_jobs=2), spherical_kendall(X, n_jobs=1))
    assert_close(spherical_kendall(X, n_jobs=-1), spherical_kendall(X))
    X_big = rng.standard_normal((5000, 3))
    assert_close(spherical_kendall(X_big, pairs=10, random_state=0, n_jobs=2),
                 spherical_kendall(X_big, pairs=10, random_state=0, n_jobs=1))


def test_joblib_dask_backend_equals_serial():
    # n = 3000 gives 78 tasks of the all-pairs kernel (67 for pairs=m at n = 150000
    # would be slow here; 8000 rows give 3 design tasks); progress is reported from
    # the calling thread while the tasks run on the cluster.
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    rng = np.random.default_rng(17)
    X = rng.standard_normal((3000, 10)) + 5.0
    X[100] = X[2000] + 1e-9  # a near-duplicate pair for the exact path
    X_design = rng.standard_normal((8000, 10))
    serial = spherical_kendall(X)
    serial_m = spherical_kendall(X_design, pairs=12, random_state=1)
    serial_floor = _pair_scatter(X, floor=10.0)
    calls = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            with_dask = spherical_kendall(X, n_jobs=-1,
                                          progress=lambda *args: calls.append(args))
            with_dask_m = spherical_kendall(X_design, pairs=12, random_state=1)
            with_dask_floor = _pair_scatter(X, floor=10.0)
    assert_close(with_dask, serial)
    assert_close(with_dask_m, serial_m)
    assert_close(with_dask_floor, serial_floor)
    assert calls[-1] == (3000 * 2999 // 2,) * 2


# ------------------------------------------------------------------------ validation
@pytest.mark.parametrize("bad, match", [
    (np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0]]), "X.*NaN"),
    (np.array([[0.0, 1.0], [np.inf, 2.0], [1.0, 1.0]]), "X.*infinity"),
    (np.arange(5.0), "2D"),
    (np.ones((1, 3)), "minimum of 2"),
    (np.array([["a", "b"], ["c", "d"]]), "numeric"),
    (np.array([["1", "2"], ["3", "4"]]), "numeric"),
    ([["1.0", "2.0"], ["3.0", "4.0"]], "numeric"),
])
def test_invalid_X(bad, match):
    with pytest.raises(ValueError, match=match):
        spherical_kendall(bad)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"pairs": "some"}, ValueError, "pairs"),
    ({"pairs": 0}, ValueError, "pairs"),
    ({"pairs": -3}, ValueError, "pairs"),
    ({"pairs": 2.5}, TypeError, "pairs"),
    ({"pairs": True}, TypeError, "pairs"),
    ({"n_jobs": 1.5}, TypeError, "n_jobs"),
    ({"n_jobs": "2"}, TypeError, "n_jobs"),
    ({"n_jobs": 0}, ValueError, "n_jobs"),
])
def test_invalid_parameters(kwargs, error, match):
    X = np.random.default_rng(18).standard_normal((10, 2))
    with pytest.raises(error, match=match):
        spherical_kendall(X, **kwargs)


def test_numpy_integer_pairs_and_random_state_types():
    X = np.random.default_rng(19).standard_normal((30, 2))
    K = spherical_kendall(X, pairs=np.int64(4), random_state=np.random.RandomState(0))
    assert K.shape == (2, 2)
    assert abs(np.trace(K) - 1.0) <= 1e-12


def test_dataframe_with_dates_is_a_type_error():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0],
                          "when": pd.to_datetime(["2020-01-01", "2021-01-01", "2022-01-01"])})
    with pytest.raises(TypeError, match="date"):
        spherical_kendall(frame)
    with pytest.raises(TypeError, match="date"):
        spherical_kendall(frame[["when"]])
