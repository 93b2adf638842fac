"""Slow references and data sets shared by the Kendall kernel's test modules."""

import numpy as np

from sklearn_dppca._kendall import _pair_sum
from sklearn_dppca._validation import NON_NEGATIVE, check_param

TOL = 1e-12


def direct_kendall(X, pairs=None):
    """Slow reference: sum of u u^T over pairs, each from its exact difference.

    ``pairs`` is an array of (i, j) rows, or None for all pairs i < j. Each difference
    is divided by its largest coordinate before squaring, so neither 1e300 nor
    1e-300 overflows or underflows; coincident pairs give a zero term.
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    if pairs is None:
        pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    total = np.zeros((p, p))
    for start in range(0, len(pairs), 4096):
        chunk = pairs[start:start + 4096]
        diffs = X[chunk[:, 0]] - X[chunk[:, 1]]
        largest = np.max(np.abs(diffs), axis=1)
        diffs = diffs[largest > 0] / largest[largest > 0, None]
        units = diffs / np.linalg.norm(diffs, axis=1)[:, None]
        total += units.T @ units
    return total / len(pairs)


def gram_trick_kendall(X):
    """The plain Gram formulation (uncentred, no exact path): shows inputs are hard."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    D2 = sq[:, None] + sq[None, :] - 2 * X @ X.T
    np.fill_diagonal(D2, np.inf)
    with np.errstate(divide="ignore"):
        W = 1 / D2  # pairs whose D2 cancels to 0 get an infinite weight...
    W[~np.isfinite(W)] = 0.0  # ...which we drop, as a careless kernel would
    return (X.T @ (W.sum(axis=1)[:, None] * X) - X.T @ W @ X) / (n * (n - 1) / 2)


def near_duplicates(rng, n_base=150, p=5):
    base = rng.standard_normal((n_base, p)) + 1e3
    return np.vstack([base, base + 1e-5 * rng.standard_normal((n_base, p))])


def random_dyadic(rng, n, p):
    """Standard normal values rounded to multiples of 2**-20 (exact after + 1e6)."""
    return np.round(rng.standard_normal((n, p)) * 2.0**20) / 2.0**20


def assert_close(actual, expected, tol=TOL):
    assert actual.shape == expected.shape
    err = np.max(np.abs(actual - expected))
    assert err <= tol, f"max abs error {err:.3e} > {tol:.0e}"


def _datasets():
    """Hard inputs: heavy tails, 1e300 and 1e-300 scales, near duplicates."""
    rng = np.random.default_rng(20240607)
    mixed_rows = np.vstack([
        rng.standard_normal((60, 3)) * 1e300,
        rng.standard_normal((60, 3)) * 1e-300,
        rng.standard_normal((60, 3)),
    ])
    return {
        "gaussian": rng.standard_normal((300, 7)),
        "cauchy": rng.standard_cauchy((300, 5)),
        "student_t1": rng.standard_t(1, size=(250, 4)) + 50.0,
        "mixed_scale_columns": rng.standard_normal((300, 6)) * np.logspace(-3, 2, 6),
        "n_equals_2": rng.standard_normal((2, 4)),
        "p_equals_1": rng.standard_normal((80, 1)),
        "float32": rng.standard_normal((200, 4)).astype(np.float32) * 3 + 10,
        "near_duplicates": near_duplicates(rng),
        "near_1e300": rng.standard_normal((200, 3)) * 1e300,
        "near_1e-300": rng.standard_normal((200, 3)) * 1e-300,
        "rows_1e300_to_1e-300": mixed_rows,
        "clusters_far_apart": np.vstack([
            rng.standard_normal((150, 4)) + 1e4,
            rng.standard_normal((150, 4)) - 1e4,
        ]),
    }


DATASETS = _datasets()


def adversarial_neighbours(n=200, p=3, seed=10):
    rng = np.random.default_rng(seed)
    X = 1e-6 * rng.standard_normal((n, p))
    X_prime = X.copy()
    X[-1] = 1e6 * np.eye(p)[0]
    X_prime[-1] = 1e6 * np.eye(p)[1]
    return X, X_prime


def one_block(X, root=0):
    """``X`` as every fit reads it up to a million rows: one block of
    :class:`~sklearn_dppca._data._rows.Rows`, whose designs are seeded by ``root``."""
    from sklearn_dppca._data._rows import Rows

    X = np.ascontiguousarray(X, dtype=np.float64)
    return Rows(X, (X.shape[0],), root=root)


def pair_scatter(X, *, floor, pairs="all", random_state=None, n_jobs=None,
                 progress=None):
    """Mean over pairs of rows of the floored scatter ``d d^T / max(||d||^2, floor)``.

    ``S = (1 / #pairs) * sum_pairs d d^T / max(||d||^2, floor)``, ``d = x_i - x_j``,
    over all pairs ``i < j`` or over the pairs of an ``m``-partner design. A pair
    farther apart than ``sqrt(floor)`` contributes its unit direction ``u u^T``
    (Frobenius norm 1), a closer one ``d d^T / floor`` (norm ``||d||^2 / floor < 1``),
    a coincident one 0.

    ``floor = 0`` gives the spherical Kendall matrix
    (bit for bit: :func:`spherical_kendall` is this mean with ``floor = 0``). A
    floor above every squared distance gives the plain pair scatter over ``floor``
    (``2 / floor`` times the sample covariance, normalised by ``n``, for all pairs).
    ``bound * pair_scatter(X, floor=2 * bound)`` is the mean of
    ``(d d^T / 2) min(1, 2 bound / ||d||^2)``: the norm-clipped pair scatter of the
    DP scree.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite numeric data, float64 or float32 (computed in float64), ``n >= 2``.
        Never modified.
    floor : float
        Finite, ``>= 0``, in the squared units of ``X``.
    pairs : "all" or int, default="all"
        As for :func:`spherical_kendall`: all pairs, or a random design pairing every
        row with exactly ``m`` others (``m >= n - 1`` uses all pairs; an odd ``m``
        needs an even ``n``).
    random_state : None, int, numpy.random.Generator or RandomState, default=None
        Draws the pair design (one :func:`_pair_design` call, one permutation) when
        ``pairs`` is an int below ``n - 1``; unused otherwise.
    n_jobs : int, default=None
        Parallel tasks, as for :func:`spherical_kendall`; the result does not depend
        on it.
    progress : callable, default=None
        ``progress(pairs_done, pairs_total)`` after each task, as for
        :func:`spherical_kendall`.

    Returns
    -------
    S : ndarray of shape (n_features, n_features)
        Symmetric positive semi-definite, trace at most 1.

    Raises
    ------
    ValueError
        For a negative, non-finite or non-numeric ``floor``, and as
        :func:`spherical_kendall` for ``X``, ``pairs`` and ``n_jobs``.
    TypeError
        For a ``floor``, ``n_jobs`` or ``pairs`` of the wrong type.

    Notes
    -----
    **Sensitivity.** Every term has Frobenius norm at most 1 and is ``c u u^T`` with
    ``0 <= c <= 1``, so replacing one row moves each of its ``m`` terms (``n - 1``
    for all pairs) by at most ``sqrt(2)`` in Frobenius norm (``||a u u^T - b v v^T||_F^2
    = a^2 + b^2 - 2 a b (u.v)^2 <= a^2 + b^2 <= 2``) and ``S`` by at most
    ``2 sqrt(2) / n``, as for the spherical Kendall matrix.

    **Accuracy and cost.** Those of :func:`spherical_kendall`, for every floor: the
    floor only changes each pair's weight, in the same kernel (module docstring of
    ``sklearn_dppca._kendall``).

    """
    floor = check_param(floor, [NON_NEGATIVE], "floor")
    total, n_terms, *_ = _pair_sum(X, floor, pairs, random_state, n_jobs, progress)
    return total / n_terms
