"""The ordinary (non-private) PCA reference, stored only on request."""

import numpy as np
from .._bunch import Bunch

from .._validation import MAX_ABS_VALUE


def nonprivate_reference(X, private_components):
    """Ordinary PCA of ``X`` aligned to the private directions, for comparison only.

    NOT PRIVATE: every value here is computed from the raw data without noise.

    Returns a Bunch with ``components`` (k, p) covariance eigenvectors ordered by
    decreasing eigenvalue, each sign-flipped so that ``v_hat . v_tilde >= 0``;
    ``explained_variance`` (k,) the covariance eigenvalues; ``explained_variance_ratio``
    their shares of the total variance (the trace, as the private PVE);
    ``total_variance``; ``feature_variance`` (p,) the columns' variances;
    ``scores`` (n, k) mean-centred. ``X`` is in the units the
    private fit worked in (divided by the private ``scale_`` with ``scale=True``).
    """
    X = np.asarray(X, dtype=np.float64)
    largest = float(np.max(np.abs(X)))
    if largest > MAX_ABS_VALUE:   # the squares of the covariance must not overflow
        raise ValueError(
            "compute_nonprivate=True: X has values beyond 2**500, too large for "
            "the covariance matrix (it needs max |X| <= 2**500). Divide X by a "
            "constant or set compute_nonprivate=False."
        )
    n_components = private_components.shape[0]
    mean = X.mean(axis=0)
    covariance = np.atleast_2d(np.cov(X, rowvar=False))
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)
    order = np.argsort(eigenvalues)[::-1][:n_components]
    components = eigenvectors[:, order].T
    signs = np.where(np.sum(components * private_components, axis=1) < 0, -1.0, 1.0)
    components *= signs[:, None]
    variance = np.clip(eigenvalues[order], 0, None)
    total = float(np.trace(covariance))
    return Bunch(
        components=components,
        explained_variance=variance,
        explained_variance_ratio=variance / total if total > 0 else np.zeros_like(variance),
        total_variance=total,
        feature_variance=np.diag(covariance).copy(),
        scores=(X - mean) @ components.T,
    )
