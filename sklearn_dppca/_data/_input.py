"""The inputs of every fit: arrays, Dask arrays and DataFrames, read as rows in
public blocks (:mod:`~sklearn_dppca._data._rows`); what a fit in more than one block
supports, checked before any spending.

Dask is imported only when the input is a Dask collection: it stays optional.
"""

import numpy as np

from ._rows import BLOCK_ROWS, Rows, block_sizes, check_design
from .._validation import (
    Instance,
    check_projections,
    Interval,
    drop_non_numeric,
    label_codes,
    validate_features,
)

#: The hyperparameter ``row_blocks``: None, rows per block, or the block sizes.
ROW_BLOCKS = [None, Interval("int", 2, None),
              Instance((list, tuple), "a list of block sizes")]


def _is_dask_collection(X):
    """True for a Dask array or DataFrame (without importing Dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "dask")


def fit_input(estimator, X, row_blocks, rng, *, n_jobs=None, progress=None):
    """``X`` as every fit reads it: :class:`~sklearn_dppca._data._rows.Rows` in the public
    blocks of :func:`~sklearn_dppca._data._rows.block_sizes` (from ``n`` alone, or
    ``row_blocks``).

    An in-memory array is validated here; a Dask collection is rechunked to the
    public blocks (its own partitions are never used: a data source may size them
    from the data's bytes). The fit's root seed is drawn from ``rng`` here. Sets
    ``n_features_in_`` and, for string column names, ``feature_names_in_``.
    Every value is checked finite in the first pass over the blocks, which the
    fit runs (with the statistics it can compute ahead) before any spending.
    """
    if _is_dask_collection(X):
        data = _dask_array(estimator, X)
        sizes = block_sizes(int(data.shape[0]), row_blocks)
        data = data.rechunk((sizes, -1))
    else:
        data = validate_features(estimator, X, reset=True)
        sizes = block_sizes(data.shape[0], row_blocks)
    root = int(rng.integers(0, 2**63 - 1))
    return Rows(data, sizes, root, n_jobs=n_jobs, progress=progress)


def _dask_array(estimator, X):
    """A 2-D floating Dask array of the numeric columns of ``X``; sets the
    estimator's ``n_features_in_`` and ``feature_names_in_`` (column names only:
    no row is read, beyond the partition lengths of a DataFrame)."""
    names = None
    if hasattr(X, "columns"):
        X = drop_non_numeric(estimator, X, reset=True)
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


def transformed(estimator, X, function, components, *scales):
    """``function(X, components, *scales)`` row by row (the shared projection of
    ``transform``): an array out, or for a Dask collection a Dask array, block by
    block (DataFrame columns checked against ``feature_names_in_``)."""
    if not _is_dask_collection(X):
        return function(validate_features(estimator, X, reset=False), components,
                        *scales)
    if hasattr(X, "columns"):
        X = drop_non_numeric(estimator, X, reset=False)
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
    X = X.rechunk({1: -1})
    return X.map_blocks(function, components, *scales, dtype=X.dtype,
                        chunks=(X.chunks[0], (components.shape[0],)))


def back_transformed(estimator, X, function, components, *scales):
    """``function(X, components, *scales)`` on projections (the back-projection of
    ``inverse_transform``): an array out, or a Dask array block by block."""
    n_components = components.shape[0]
    if not _is_dask_collection(X):
        return function(check_projections(X, n_components), components, *scales)
    X = X.rechunk({1: -1})
    if X.ndim != 2 or X.shape[1] != n_components:
        raise ValueError(f"X must have shape (n_samples, {n_components}) "
                         f"(the projections); got {X.shape}.")
    return X.map_blocks(function, components, *scales, dtype=X.dtype,
                        chunks=(X.chunks[0], (components.shape[1],)))


def check_blockwise_fit(sizes, *, pairs, compute_nonprivate=False, scree_method=None,
                        scree_params=None):
    """Refuse, before any spending, what a fit in more than one row block cannot
    compute blockwise (one ValueError naming the option); returns the scree's
    params, with ``clip="auto"`` resolved to ``"norm"`` in more than one block.
    ``pairs`` and the scree's are designs already (``"auto"`` resolved by the
    fit sequence).

    One block holds all rows: everything is available. In more blocks every
    statistic must be a sum over blocks: pairs within blocks (an int ``pairs``),
    norm clipping, no non-private reference (it needs all rows at once). The
    number of blocks is public (:func:`~sklearn_dppca._data._rows.block_sizes`).
    """
    if pairs != "all":
        check_design(sizes, pairs)
    scree_pairs = (scree_params or {}).get("pairs", "all")
    if scree_method == "clipped" and scree_pairs != "all":
        check_design(sizes, scree_pairs)
    if len(sizes) == 1:
        return scree_params
    _refuse(pairs == "all", "pairs='all' pairs every row with every other, across "
            "blocks; fits in row blocks need pairs=m (m partners per row, within its "
            "block)")
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
    _refuse(scree_pairs == "all", "the clipped scree's pairs='all' pairs rows across "
            "blocks; set its pairs to an int")
    # (the scaled clipping is a norm clipping too: pair designs within blocks)
    return dict(scree_params, clip="scaled" if scree_params["clip"] == "scaled" else "norm")


def _refuse(condition, reason):
    if condition:
        raise ValueError(f"Fits in more than one row block (row_blocks, or more than "
                         f"{BLOCK_ROWS:,} rows) compute every statistic block by "
                         f"block: {reason}.")


def group_codes(y, labels, rows):
    """Each row's position in the public list ``labels``: an array (``y`` in
    memory), or a lazy Dask array in the rows' blocks (``y`` a Dask array or
    Series, checked in one pass over ``y`` before any spending).

    ``y`` is data: the messages state the rule, never a label.
    """
    if not _is_dask_collection(y):
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
