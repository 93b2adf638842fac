"""Inputs of fits in row blocks: Dask arrays and DataFrames, or arrays with
``row_blocks``; what such fits support, checked before any spending.

Dask is imported only when the input is a Dask collection: it stays optional.
"""

import numpy as np

from ._blockwise import RowBlocks
from ._validation import (
    Instance,
    Interval,
    check_max_abs,
    drop_non_numeric,
    label_codes,
    validate_features,
)

#: The hyperparameter ``row_blocks``: None, rows per block, or the block sizes.
ROW_BLOCKS = [None, Interval("int", 2, None),
              Instance((list, tuple), "a list of block sizes")]


def is_dask_collection(X):
    """True for a Dask array or DataFrame (without importing Dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "dask")


def fit_input(estimator, X, row_blocks, progress=None):
    """``X`` as the fit reads it: a validated array, or :class:`RowBlocks`.

    Rows in blocks for a Dask collection (its row chunks, or ``row_blocks``) and
    for an in-memory array with ``row_blocks``. Sets ``n_features_in_`` and, for
    string column names, ``feature_names_in_``.
    """
    if is_dask_collection(X):
        data = _dask_array(estimator, X)
        if row_blocks is not None:
            data = data.rechunk((_block_sizes(data.shape[0], row_blocks), -1))
        else:
            data = data.rechunk({1: -1})
        rows = RowBlocks(data, data.chunks[0], progress)
    else:
        X = validate_features(estimator, X, reset=True)
        if row_blocks is None:
            return X
        rows = RowBlocks(X, _block_sizes(X.shape[0], row_blocks), progress)
    # every value finite: checked in the first pass over the blocks, which the fit
    # runs (with the statistics it can compute ahead) before any spending
    return rows


def checked_max_abs(X, what):
    """:func:`~sklearn_dppca._validation.check_max_abs` for an array or rows in blocks
    (in the first pass over the blocks, which also checks every value is finite)."""
    if isinstance(X, RowBlocks):
        return X.check_max_abs(what)
    return check_max_abs(X, what)


def _block_sizes(n_samples, row_blocks):
    """The block sizes of ``row_blocks``: rows per block (the last block takes the
    rest) or the sizes themselves, which must add up to ``n_samples``."""
    if isinstance(row_blocks, int):
        sizes = [row_blocks] * (n_samples // row_blocks)
        if n_samples % row_blocks:
            sizes.append(n_samples % row_blocks)
        return tuple(sizes)
    sizes = tuple(row_blocks)
    if not all(isinstance(size, (int, np.integer)) and size >= 1 for size in sizes):
        raise ValueError("row_blocks must hold positive integers (the rows of each block).")
    if sum(sizes) != n_samples:
        raise ValueError(f"row_blocks holds {sum(sizes)} rows in all; X has "
                         f"{n_samples} rows.")
    return sizes


def _dask_array(estimator, X):
    """A 2-D floating Dask array of the numeric columns of ``X``; sets the
    estimator's ``n_features_in_`` and ``feature_names_in_`` (column names only:
    no row is read, beyond the partition lengths of a DataFrame)."""
    names = None
    if hasattr(X, "columns"):
        # drop_non_numeric <- here <- fit_input <- fit <- the user
        X = drop_non_numeric(estimator, X, reset=True, stacklevel=5)
        names = list(X.columns)
        X = X.to_dask_array(lengths=True)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got a {X.ndim}-D "
                         "Dask array.")
    if any(np.isnan(size) for size in X.shape):
        raise ValueError("X has unknown chunk sizes; compute them first "
                         "(X.compute_chunk_sizes()).")
    if X.shape[0] < 2:
        raise ValueError(f"X must have at least 2 rows (n_samples={X.shape[0]}).")
    kind = np.dtype(X.dtype).kind
    if kind not in "fiub":
        raise ValueError(f"X must be numeric; got a Dask array of dtype {X.dtype}.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    estimator.n_features_in_ = int(X.shape[1])
    if names is not None and all(isinstance(name, str) for name in names):
        estimator.feature_names_in_ = np.asarray(names, dtype=object)
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    return X


def transform_input(estimator, X):
    """A Dask array for ``transform`` with the columns of the fit (names checked
    against ``feature_names_in_`` for a DataFrame)."""
    if hasattr(X, "columns"):
        X = drop_non_numeric(estimator, X, reset=False, stacklevel=1)
        fitted = getattr(estimator, "feature_names_in_", None)
        if fitted is not None and list(X.columns) != list(fitted):
            raise ValueError("The feature names of X should match those that were "
                             "passed during fit.")
        X = X.to_dask_array(lengths=True)
    if X.ndim != 2 or X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[-1]} features, but {type(estimator).__name__} "
                         f"is expecting {estimator.n_features_in_} features as input.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X.rechunk({1: -1})


def check_blockwise_fit(rows, *, pairs, compute_nonprivate=False, scree_method=None,
                        scree_params=None):
    """Refuse, before any spending, what a fit in row blocks cannot compute
    blockwise (one ValueError naming the option); returns the scree's params with
    ``clip="auto"`` resolved to ``"norm"``.

    Every statistic must be a sum over blocks: pairs within blocks (an int
    ``pairs``), norm clipping (the per-component clipped U-statistic pairs every
    row with every other), no non-private reference (it needs all rows at once).
    """
    if not isinstance(rows, RowBlocks):
        return scree_params
    _refuse(pairs == "all", "pairs='all' pairs every row with every other, across "
            "blocks; fits in row blocks need pairs=m (m partners per row, within its "
            "block)")
    if pairs != "all":
        rows.check_design(pairs)
    _refuse(compute_nonprivate, "compute_nonprivate=True (a non-private reference "
            "for comparison) needs all rows in memory at once; fit a sample of the "
            "rows in memory for it")
    if scree_method is None:
        return scree_params
    _refuse(scree_method in ("huber", "pmwm"),
            f"scree_method={scree_method!r} sorts each component's values; use "
            "'clipped', 'kendall' or 'matrix'")
    if scree_method != "clipped":
        return scree_params
    _refuse(scree_params["clip"] == "component",
            "clip='component' clips each component over all pairs; use clip='norm' "
            "(or 'auto', which means 'norm' in blocks)")
    scree_pairs = scree_params["pairs"]
    _refuse(scree_pairs == "all", "the clipped scree's pairs='all' pairs rows across "
            "blocks; set its pairs to an int")
    rows.check_design(scree_pairs)
    return dict(scree_params, clip="norm")


def _refuse(condition, reason):
    if condition:
        raise ValueError(f"Fits in row blocks (a Dask input or row_blocks) compute "
                         f"every statistic block by block: {reason}.")


def group_codes(y, labels, rows):
    """Each row's position in the public list ``labels``, for rows in blocks: an
    array (``y`` in memory), or a lazy Dask array in the rows' blocks (``y`` a Dask
    array or Series, checked in one pass over ``y`` before any spending).

    ``y`` is data: the messages state the rule, never a label.
    """
    if not is_dask_collection(y):
        return label_codes(y, labels, "y", "groups", rows.shape[0])
    if hasattr(y, "to_dask_array"):
        y = y.to_dask_array(lengths=True)
    if y.ndim != 1 or y.shape[0] != rows.shape[0]:
        raise ValueError(f"y must hold one label per row of X ({rows.shape[0]} rows); "
                         f"got a Dask array of shape {y.shape}.")
    codes = y.rechunk((rows.sizes,)).map_blocks(_block_codes, list(labels),
                                                dtype=np.intp)
    if bool((codes < 0).any().compute()):
        raise ValueError("y contains labels outside groups: every row's label must be "
                         "one of the declared groups.")
    return codes


def _block_codes(labels_block, labels):
    """Positions of a block's labels in ``labels``; -1 for a label outside them."""
    position = {label: index for index, label in enumerate(labels)}
    values = np.asarray(labels_block, dtype=object).ravel()
    codes = np.empty(values.shape[0], dtype=np.intp)
    for index, value in enumerate(values):
        try:
            codes[index] = position.get(value, -1)
        except TypeError:   # unhashable
            codes[index] = -1
    return codes
