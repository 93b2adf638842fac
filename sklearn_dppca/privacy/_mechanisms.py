"""The basic additive mechanisms: Gaussian (vectors and symmetric matrices), Laplace.

Every function draws only from the ``numpy.random.Generator`` it is given, through
the exact integer samplers of ``_exact.py`` (the statistic on a public grid plus
discrete noise), and, when handed a :class:`~sklearn_dppca.privacy.PrivacyLedger`,
records what it spent.
"""

import math

import numpy as np

from .._validation import as_real_numbers
from ._calibration import (
    check_delta,
    check_eps,
    check_sensitivity,
    gaussian_noise_scale,
    laplace_noise_scale,
)
from ._exact import gaussian_release, laplace_release, standard_normal


def gaussian_mechanism(value, sensitivity, eps, delta, rng, *, noise="analytic",
                       ledger=None, step="gaussian", mu=None):
    """Release ``value + N(0, sigma^2 I)``, ``sigma`` calibrated to L2 ``sensitivity``.

    Parameters
    ----------
    value : float or array-like
        The exact statistic. Its L2 sensitivity (largest change of the whole
        vector between neighbouring data sets) must be at most ``sensitivity``.
    sensitivity, eps, delta : float
        Calibration inputs, see :func:`gaussian_noise_scale`.
    rng : numpy.random.Generator
        The only source of the noise.
    noise : {"analytic", "classical"}, default="analytic"
        Calibration of ``sigma`` (see :func:`gaussian_noise_scale`).
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="gaussian"
        Name of this call in the ledger.
    mu : float, optional
        Spend this call as a ``mu``-GDP part of a block composed by the caller
        (:class:`~sklearn_dppca.privacy.BudgetTree`): the noise sd is
        ``sensitivity / mu``, ``eps``, ``delta`` and ``noise`` are not used, and
        the ledger entry charges no ``(eps, delta)`` of its own (the block entry
        of :meth:`PrivacyLedger.close_gaussian_block` does).

    Returns
    -------
    noisy : ndarray or float
        The released value, of the shape of ``value`` (a float for a scalar).
    noise_scale : float
        The standard deviation ``sigma`` of the noise added to each coordinate.

    See Also
    --------
    laplace_mechanism : The pure-``eps`` counterpart, for L1 sensitivities.
    symmetric_matrix_gaussian : The same for a symmetric matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import PrivacyLedger, gaussian_mechanism
    >>> ledger = PrivacyLedger()
    >>> noisy, sigma = gaussian_mechanism([1.0, 2.0], 1.0, 1.0, 1e-5,
    ...                                   np.random.default_rng(0), ledger=ledger)
    >>> noisy.shape, ledger.spent()
    ((2,), (1.0, 1e-05))
    """
    target_scale = _gaussian_scale(sensitivity, eps, delta, noise, mu)
    value = np.asarray(as_real_numbers(value, "value"), dtype=float)
    noisy, facts = gaussian_release(value, sensitivity, sensitivity / target_scale, rng)
    _record_gaussian(ledger, step, "gaussian", noise, eps, delta, mu, sensitivity, "L2",
                     facts)
    return (float(noisy) if noisy.ndim == 0 else noisy), facts["noise_scale"]


def laplace_mechanism(value, sensitivity, eps, rng, *, ledger=None, step="laplace"):
    """Release ``value + Lap(sensitivity / eps)`` per coordinate (L1 ``sensitivity``).

    Pure ``eps``-DP when the L1 sensitivity of the whole vector is at most
    ``sensitivity``.

    Parameters
    ----------
    value : float or array-like
        The exact statistic.
    sensitivity : float
        L1 sensitivity of the whole vector under the adjacency in force, > 0.
    eps : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        The only source of the noise.
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="laplace"
        Name of this call in the ledger.

    Returns
    -------
    noisy : ndarray or float
        The released value, of the shape of ``value`` (a float for a scalar).
    noise_scale : float
        The Laplace scale ``b = sensitivity / eps``.

    See Also
    --------
    gaussian_mechanism : The ``(eps, delta)`` counterpart, for L2 sensitivities.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import laplace_mechanism
    >>> noisy, scale = laplace_mechanism(10.0, 1.0, 0.5, np.random.default_rng(0))
    >>> round(scale, 4)      # 1 / eps, and a hair for the rounding to the grid
    2.0
    """
    laplace_noise_scale(sensitivity, eps)       # checks both
    value = np.asarray(as_real_numbers(value, "value"), dtype=float)
    noisy, noise_scale, grid = laplace_release(value, sensitivity, eps, rng)
    if ledger is not None:
        ledger.record(step=step, mechanism="laplace", eps=eps, delta=0.0,
                      sensitivity=sensitivity, sensitivity_norm="L1",
                      noise_scale=noise_scale, grid=grid)
    return (float(noisy) if noisy.ndim == 0 else noisy), noise_scale


def symmetric_gaussian_noise(n_features, noise_scale, rng):
    """Draw a symmetric ``n_features x n_features`` Gaussian noise matrix.

    Diagonal entries are ``noise_scale`` times a standard normal, off-diagonal ones
    that divided by ``sqrt(2)``; the ``p (p + 1) / 2`` draws, the ``p`` diagonal ones
    first, then the strict lower triangle row by row ((2,1), (3,1), (3,2), ... in
    1-based indices), are standard normals from exact dyadic uniforms
    (``_exact.standard_normal``). For simulations of the released noise (the
    mechanism itself, :func:`symmetric_matrix_gaussian`, rounds the matrix to its
    grid and adds integer noise).

    Why this is the mechanism's noise: the map from a symmetric matrix ``A`` to the
    packed vector ``(A_11, ..., A_pp, sqrt(2) A_21, sqrt(2) A_31, ...)`` preserves
    the Frobenius norm, and this noise is iid with sd ``noise_scale`` on that vector.

    Parameters
    ----------
    n_features : int
        Number of rows (and columns) ``p`` of the matrix.
    noise_scale : float
        Standard deviation of the diagonal entries.
    rng : numpy.random.Generator
        The only source of the draws.

    Returns
    -------
    noise : ndarray of shape (n_features, n_features)
        The symmetric noise matrix.

    See Also
    --------
    symmetric_matrix_gaussian : Add this noise to a matrix and record the spend.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import symmetric_gaussian_noise
    >>> noise = symmetric_gaussian_noise(3, 0.1, np.random.default_rng(0))
    >>> noise.shape, bool(np.array_equal(noise, noise.T))
    ((3, 3), True)
    """
    p = int(n_features)
    return _unpack(standard_normal(p * (p + 1) // 2, rng), p) * noise_scale


def _pack(matrix):
    """``(A_11, ..., A_pp, sqrt(2) A_21, sqrt(2) A_31, sqrt(2) A_32, ...)``: the
    Frobenius norm of ``A`` is the Euclidean norm of this vector."""
    rows, cols = np.tril_indices(matrix.shape[0], k=-1)
    return np.concatenate([np.diag(matrix), math.sqrt(2) * matrix[rows, cols]])


def _unpack(packed, p):
    """The symmetric ``p x p`` matrix whose :func:`_pack` is ``packed`` (a stack
    of them, shape ``(..., p, p)``, for packed vectors along the last axis)."""
    packed = np.asarray(packed, dtype=float)
    matrix = np.zeros(packed.shape[:-1] + (p, p))
    diagonal = np.arange(p)
    matrix[..., diagonal, diagonal] = packed[..., :p]
    rows, cols = np.tril_indices(p, k=-1)
    matrix[..., rows, cols] = packed[..., p:] / math.sqrt(2)
    matrix[..., cols, rows] = matrix[..., rows, cols]
    return matrix


def symmetric_matrix_gaussian(matrix, sensitivity, eps, delta, rng, *, noise="analytic",
                              ledger=None, step="symmetric matrix", mu=None):
    """Release ``matrix + E``, ``E`` of the law of :func:`symmetric_gaussian_noise`.

    The packed matrix is rounded to a public grid and gets exact integer noise.

    Parameters
    ----------
    matrix : array-like of shape (n_features, n_features)
        The exact symmetric statistic.
    sensitivity : float
        Frobenius sensitivity of ``matrix`` under the adjacency in force, > 0.
    eps : float
        Privacy parameter, > 0 (not used with ``mu``).
    delta : float
        Privacy parameter, in (0, 1) (not used with ``mu``).
    rng : numpy.random.Generator
        The only source of the noise.
    noise : {"analytic", "classical"}, default="analytic"
        Calibration of the noise (see :func:`gaussian_noise_scale`).
    ledger : PrivacyLedger, default=None
        Where the spend is recorded; None records nothing.
    step : str, default="symmetric matrix"
        Name of this call in the ledger.
    mu : float, default=None
        Spend this call as a ``mu``-GDP part of a block, as in
        :func:`gaussian_mechanism`.

    Returns
    -------
    noisy_matrix : ndarray of shape (n_features, n_features)
        The released symmetric matrix.
    noise_scale : float
        The standard deviation of the diagonal noise (off-diagonal: divided by
        ``sqrt(2)``).

    See Also
    --------
    gaussian_mechanism : The same for a vector.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import symmetric_matrix_gaussian
    >>> noisy, sigma = symmetric_matrix_gaussian(np.eye(3), 0.01, 1.0, 1e-5,
    ...                                          np.random.default_rng(0))
    >>> bool(np.array_equal(noisy, noisy.T))
    True
    """
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"matrix must be square, got shape {matrix.shape}.")
    target_scale = _gaussian_scale(sensitivity, eps, delta, noise, mu)
    packed, facts = gaussian_release(_pack(matrix), sensitivity,
                                     sensitivity / target_scale, rng)
    _record_gaussian(ledger, step, "symmetric gaussian", noise, eps, delta, mu,
                     sensitivity, "Frobenius", facts)
    return _unpack(packed, matrix.shape[0]), facts["noise_scale"]


def _gaussian_scale(sensitivity, eps, delta, noise, mu):
    """The noise sd: ``sensitivity / mu`` for a GDP part, else calibrated alone."""
    if mu is None:
        return gaussian_noise_scale(sensitivity, eps, delta, noise)
    mu = check_eps(mu, name="mu")
    return check_sensitivity(sensitivity) / mu


def _record_gaussian(ledger, step, name, noise, eps, delta, mu, sensitivity, norm, facts):
    """One ledger entry; a GDP part records its ``mu`` and charges no pair itself.

    The entry's ``mu`` and noise come from the release's own ``facts`` (its grid,
    rounding included), not from the allocation: a calibration that drew too
    little noise would then show in the composed block. (The noise sd is a hair
    above ``sensitivity / mu``: the rounding to the grid is paid in noise.)
    """
    if ledger is None:
        return
    common = dict(step=step, sensitivity=sensitivity, sensitivity_norm=norm, **facts)
    if mu is None:
        ledger.record(mechanism=f"{name} ({noise})", eps=eps, delta=delta, **common)
        return
    ledger.record(mechanism=f"{name} (mu-GDP part)", eps=0.0, delta=0.0,
                  composition="gdp", **common)


__all__ = [
    "gaussian_mechanism",
    "laplace_mechanism",
    "symmetric_gaussian_noise",
    "symmetric_matrix_gaussian",
    "check_eps",
    "check_delta",
]
