"""Synthetic data sets."""

import numpy as np

from .._validation import (
    Instance,
    Interval,
    check_bool,
    check_count,
    check_generator,
    check_param,
)

_GAU_N_GROUPS = 5
_GAU_MIN_FEATURES = 10


def _gau_means(n_features):
    """Group means of the R package's ``gau`` recipe, padded with zeros."""
    means = np.zeros((_GAU_N_GROUPS, n_features))
    means[1, 0:5] = 5.0  # group 2: +5 on columns 1-5
    means[2, 0:5] = -3.0  # group 3: -3 on columns 1-5
    means[3, 5:10] = -1.0  # group 4: -1 on columns 6-10
    means[4, 5:10] = 3.0  # group 5: +3 on columns 6-10
    return means


def _gau_scales():
    """Per-group standard deviations: covariances I, I, 5I, 5I, 8I."""
    return np.sqrt(np.array([1.0, 1.0, 5.0, 5.0, 8.0]))


def make_gaussian_clusters(
    n_samples_per_group=1000,
    n_features=20,
    *,
    means=None,
    scales=None,
    return_groups=False,
    as_frame=False,
    shuffle=False,
    random_state=None,
):
    """Generate Gaussian clusters; the defaults are the R package's ``gau`` data.

    With the defaults, 5 groups of 1000 rows and 20 columns are drawn from
    ``N(mu_g, s_g^2 I)``:

    ====== ===================================== ==============
    group  mean (columns are 1-based)            covariance
    ====== ===================================== ==============
    G1     0 everywhere                          I
    G2     +5 on columns 1-5, 0 elsewhere        I
    G3     -3 on columns 1-5, 0 elsewhere        5 I
    G4     -1 on columns 6-10, 0 elsewhere       5 I
    G5     +3 on columns 6-10, 0 elsewhere       8 I
    ====== ===================================== ==============

    Parameters
    ----------
    n_samples_per_group : int or array-like of int, default=1000
        Rows per group; an array gives one count per group.
    n_features : int, default=20
        Number of columns. The default means occupy columns 1-10 (the others are
        0), so with ``means=None`` it must be at least 10.
    means : array-like of shape (n_groups, n_features), default=None
        Group means. ``None`` uses the ``gau`` means above.
    scales : float or array-like of shape (n_groups,) or (n_groups, n_features), \
            default=None
        Standard deviations: one per group (covariance ``scale**2 * I``) or one
        per group and column (diagonal covariance). ``None`` uses the ``gau``
        values ``(1, 1, sqrt(5), sqrt(5), sqrt(8))`` with the default means and
        1 for user-given means.
    return_groups : bool, default=False
        Also return the group label of every row.
    as_frame : bool, default=False
        Return a :class:`pandas.DataFrame` with columns ``"V1", ..., "Vp"`` (and
        the groups as a :class:`pandas.Series` named ``"group"``).
    shuffle : bool, default=False
        Shuffle the rows. By default the rows come in group blocks (G1 first), as
        the R package binds them.
    random_state : None, int or numpy.random.Generator, default=None
        Source of randomness: None (fresh entropy), an int seed or a Generator.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features) or DataFrame
        The data, ``n_samples = sum(n_samples_per_group)``.
    groups : ndarray of str of shape (n_samples,) or Series
        Only when ``return_groups=True``: the label of each row, the strings
        ``"G1", "G2", ...`` (group ``g`` is row ``g - 1`` of ``means``).

    Examples
    --------
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> X, groups = make_gaussian_clusters(100, return_groups=True, random_state=0)
    >>> X.shape
    (500, 20)
    >>> sorted(set(groups.tolist()))
    ['G1', 'G2', 'G3', 'G4', 'G5']
    """
    n_features = check_count(n_features, "n_features", 1)
    return_groups = check_bool(return_groups, "return_groups")
    as_frame = check_bool(as_frame, "as_frame")
    shuffle = check_bool(shuffle, "shuffle")

    default_means = means is None
    if default_means:
        if n_features < _GAU_MIN_FEATURES:
            raise ValueError(
                f"n_features must be >= {_GAU_MIN_FEATURES} with the default means "
                f"(they occupy columns 1-10), got {n_features}; pass means to "
                "choose fewer columns."
            )
        means = _gau_means(n_features)
    else:
        means = np.asarray(means, dtype=float)
        if means.ndim != 2 or means.shape[1] != n_features or means.shape[0] < 1:
            raise ValueError(
                "means must have shape (n_groups, n_features) = (n_groups, "
                f"{n_features}), got shape {means.shape}."
            )
        if not np.all(np.isfinite(means)):
            raise ValueError("means must be finite.")
    n_groups = means.shape[0]

    if scales is None:
        scales = _gau_scales() if default_means else np.ones(n_groups)
    scales = np.asarray(scales, dtype=float)
    if scales.ndim == 0:
        scales = np.full(n_groups, float(scales))
    if scales.shape not in ((n_groups,), (n_groups, n_features)):
        raise ValueError(
            f"scales must be a float or have shape ({n_groups},) or ({n_groups}, "
            f"{n_features}) to match means, got shape {scales.shape}."
        )
    if not np.all(np.isfinite(scales)) or np.any(scales < 0):
        raise ValueError("scales must be finite and non-negative.")
    if scales.ndim == 1:
        scales = np.repeat(scales[:, None], n_features, axis=1)

    check_param(n_samples_per_group,
                [Interval("int", 1, None),
                 Instance((list, tuple, np.ndarray), "one int >= 0 per group")],
                "n_samples_per_group")
    if not hasattr(n_samples_per_group, "__len__"):
        counts = [int(n_samples_per_group)] * n_groups
    else:
        counts = list(n_samples_per_group)
        if len(counts) != n_groups:
            raise ValueError(
                f"n_samples_per_group has {len(counts)} entries but there are "
                f"{n_groups} groups."
            )
        counts = [check_count(c, "n_samples_per_group", 0) for c in counts]
        if sum(counts) < 1:
            raise ValueError("n_samples_per_group must give at least one row.")

    rng = check_generator(random_state)
    blocks = [
        means[g] + scales[g] * rng.standard_normal((counts[g], n_features))
        for g in range(n_groups)
    ]
    X = np.vstack(blocks)
    labels = np.array([f"G{g + 1}" for g in range(n_groups)])
    groups = np.repeat(labels, counts)
    if shuffle:
        order = rng.permutation(X.shape[0])
        X, groups = X[order], groups[order]

    if as_frame:
        import pandas as pd

        X = pd.DataFrame(X, columns=[f"V{j + 1}" for j in range(n_features)])
        groups = pd.Series(groups, name="group")
    if return_groups:
        return X, groups
    return X
