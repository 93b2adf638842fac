"""``pairs="auto"``: one public rule for the pair design of every estimator and
front end (``sklearn_dppca._pair_design.design_pairs``), from the row blocks and
the grant alone."""

import warnings

import numpy as np
import pytest

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree
from sklearn_dppca._data._rows import block_sizes
from sklearn_dppca._pair_design import (AUTO_ALL_ROWS, AUTO_MAX_PARTNERS, AUTO_PARTNERS,
                                        _auto_partners, design_pairs)

ESTIMATORS = (DPPCA, DPScree, DPKendallDirections)


@pytest.mark.parametrize("sizes, expected", [
    ((2,), "all"), ((AUTO_ALL_ROWS,), "all"), ((AUTO_ALL_ROWS + 1,), AUTO_PARTNERS),
    ((10**6,), AUTO_PARTNERS),
    # more than one block always pairs within blocks: a design
    ((500, 500), AUTO_PARTNERS), ((40, 60), 39), ((39, 60), 38), ((41, 60), 40), ((41, 61), 40),
    ((3, 4), 2),
])
def test_the_rule_reads_the_block_sizes(sizes, expected):
    assert design_pairs("auto", sizes) == expected


@pytest.mark.parametrize("pairs", ["all", 1, 7, 64])
def test_a_chosen_design_stands(pairs):
    assert design_pairs(pairs, (10**6,)) == pairs


def test_the_rule_is_monotone_and_never_quadratic_above_the_cut():
    """The pairs a row takes part in never exceed ``max(AUTO_ALL_ROWS, 2 m)``,
    so a fit's pair count grows linearly above the cut, at every budget."""
    for eps in (None, 0.1, 1.0, 4.0, 1e4):
        for n in (2, 100, AUTO_ALL_ROWS, AUTO_ALL_ROWS + 1, 10**5, 3 * 10**6):
            resolved = design_pairs("auto", block_sizes(n), eps)
            per_row = n - 1 if resolved == "all" else resolved
            assert per_row <= max(AUTO_ALL_ROWS, 2 * AUTO_MAX_PARTNERS)


@pytest.mark.parametrize("eps, expected", [
    (None, AUTO_PARTNERS), (0.01, AUTO_PARTNERS), (1.0, AUTO_PARTNERS), (1.5, 144),
    (2.0, 256), (2.5, 400), (4.0, AUTO_MAX_PARTNERS), (1e6, AUTO_MAX_PARTNERS)])
def test_the_partners_grow_with_the_budget(eps, expected):
    # m = 64 eps^2 between 64 and 512 (the design's error held at eps 1's
    # share of the privacy noise), an even number; all pairs stay all pairs
    assert design_pairs("auto", (10**6,), eps) == _auto_partners(eps) == expected
    assert expected % 2 == 0
    assert design_pairs("auto", (AUTO_ALL_ROWS,), eps) == "all"
    assert design_pairs("auto", (40, 60), eps) == min(expected, 39)


def _data(n, p=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, p)) * np.arange(p, 0, -1)


def _fit(cls, X, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(random_state=3, eps=4.0, **params).fit(X)


def _released(model):
    names = ("components_", "explained_variance_", "kendall_matrix_", "scale_")
    return {name: getattr(model, name) for name in names if hasattr(model, name)}


def _assert_same(first, second):
    a, b = _released(first), _released(second)
    assert a.keys() == b.keys() and a
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_auto_is_all_pairs_on_small_tables_bit_for_bit(cls):
    X = _data(300)
    auto, every = _fit(cls, X), _fit(cls, X, **_pairs(cls, "all"))
    assert auto.pairs_ == every.pairs_ == "all"
    _assert_same(auto, every)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_auto_is_the_design_on_large_tables_bit_for_bit(cls):
    X = _data(AUTO_ALL_ROWS + 1)
    # (the fits' eps 4: the design's 512 partners)
    auto, design = _fit(cls, X), _fit(cls, X, **_pairs(cls, _auto_partners(4.0)))
    assert auto.pairs_ == design.pairs_ == _auto_partners(4.0) == AUTO_MAX_PARTNERS
    _assert_same(auto, design)


def _pairs(cls, pairs):
    # DPScree sets its design through its method's params (the clipped scree's)
    return {"scree_params": {"pairs": pairs}} if cls is DPScree else {"pairs": pairs}


def test_dppca_pairs_its_scree_as_its_directions():
    X = _data(AUTO_ALL_ROWS + 1)
    model = _fit(DPPCA, X)
    chosen = _fit(DPPCA, X, scree_params={"pairs": _auto_partners(4.0)})
    assert model.pairs_ == _auto_partners(4.0)
    np.testing.assert_array_equal(model.explained_variance_, chosen.explained_variance_)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_auto_in_row_blocks_pairs_within_blocks(cls):
    """"all" cannot pair across blocks (refused before any spend); "auto" picks
    a design every block can hold."""
    X = _data(100)
    model = _fit(cls, X, row_blocks=[40, 60])
    assert model.pairs_ == 39
    with pytest.raises(ValueError, match="pairs"):
        _fit(cls, X, row_blocks=[40, 60], **_pairs(cls, "all"))


def test_the_plan_reads_the_same_design():
    """A plan exists for the row blocks exactly where the fit runs."""
    DPPCA(row_blocks=[40, 60]).plan(100, 4)
    with pytest.raises(ValueError, match="pairs"):
        DPPCA(row_blocks=[40, 60], pairs="all").plan(100, 4)


def test_auto_is_the_default_everywhere():
    for cls in (DPPCA, DPKendallDirections):
        assert cls().get_params()["pairs"] == "auto"
    assert _fit(DPScree, _data(AUTO_ALL_ROWS + 1)).pairs_ == _auto_partners(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        at_one = DPScree(random_state=3, eps=1.0).fit(_data(AUTO_ALL_ROWS + 1))
    assert at_one.pairs_ == AUTO_PARTNERS
