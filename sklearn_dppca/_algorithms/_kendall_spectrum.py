"""Covariance eigenvalues from the released Kendall matrix, under an elliptical model.

For an elliptical law with scatter eigenvalues ``lambda_1, ..., lambda_p`` (a
Gaussian, a multivariate t, ...), the spherical Kendall matrix shares the
eigenvectors and has eigenvalues

    ``k_j = E[lambda_j z_j^2 / sum_l lambda_l z_l^2]
         = int_0^inf lambda_j / (1 + 2 lambda_j t) prod_l (1 + 2 lambda_l t)^(-1/2) dt``

(``z`` standard normal: the spatial sign of an elliptical vector has the law it has
for the Gaussian of the same shape). The map from the ratios ``lambda / sum
lambda`` to ``k`` is one to one, so the released Kendall eigenvalues, which every
fit pays for anyway, give the eigenvalue ratios as free post-processing; one private
scale (the private total variance, the trace of the covariance) fixes their level.

It is a model, not a guarantee: for data that are not elliptical (mixtures of
clusters, skewed or zero-inflated columns) the ratios are biased, whatever the
budget. The model-free scree methods make no such assumption.
"""

import math

import numpy as np

from .._bunch import Bunch
from ..privacy._exact import standard_normal
from ..privacy._mechanisms import _unpack

#: The fixed-point iteration stops when no ratio moves by more than this (relative).
_TOLERANCE = 1e-9
_MAX_ITERATIONS = 500
#: The fixed point's step ``r <- r (k / K(r))^w``, over-relaxed: the Kendall map
#: compresses the ratios' spread, so the plain step (``w = 1``) falls short and
#: ``w = 1.2`` reaches the tolerance in about a quarter fewer steps (12 for 17 on
#: ten Gaussian scales from 3 to 0.5, 18 for 24 over two decades, 13 for 14 on
#: 64 over three, 24 for 30 with two ratios); ``1.5`` overshoots and is slower.
_RELAXATION = 1.2
#: Noisy Kendall eigenvalues are floored at this share of their sum (a noise-only
#: eigenvalue may be released negative; the map needs positive ones).
_FLOOR = 1e-6
#: Step of the trapezoid rule in ``log t`` and the range it covers, from
#: ``HEAD / max ratio`` to ``TAIL / min ratio``. The rule converges fast on this
#: smooth integrand (analytic in a strip of half width pi about the real axis
#: in ``log t``: its error falls like ``exp(-2 pi^2 / step)``): over 200 random
#: spectra (2 to 40 ratios over 5 decades) a step of 0.2 agrees with one of 0.05
#: to 6e-9, the error of the range's ends, and one of 0.4 with one of 0.05 to
#: 2e-9; it costs an eighth of 0.05 (the scree's bootstrap runs it hundreds of
#: times a fit).
_LOG_STEP = 0.4
HEAD, TAIL = 1e-8, 1e12
#: Parametric bootstrap draws of the released noise for the noise sds, and their
#: tolerance (two digits of a noise sd need far less than the estimate: at 1e-4
#: the sds of 24 draws move by 0.3% from 1e-6's, and the fixed points stop a
#: third sooner, 2 ms of a 23 ms fit at 20,000 x 10).
_BOOTSTRAP_DRAWS = 24
_BOOTSTRAP_TOLERANCE = 1e-4


def _kendall_eigenvalues(ratios):
    """The spherical Kendall matrix's eigenvalues for scatter eigenvalues ``ratios``
    (shape (p,), or (draws, p): each row alone).

    Scale free: any positive multiple of ``ratios`` gives the same values, which
    sum to 1.
    """
    ratios = np.asarray(ratios, dtype=float)
    if ratios.ndim == 1:
        return _kendall_eigenvalues(ratios[None, :])[0]
    ratios = ratios / ratios.sum(axis=1, keepdims=True)
    # In v = log t the integrand is smooth and falls off exponentially at both
    # ends, so the trapezoid rule converges fast, and ratios spread over many
    # decades are all resolved (it agrees with adaptive quadrature to 1e-8). Each
    # row has its own nodes, from HEAD / max to TAIL / min; a row's unused nodes
    # weigh 0.
    start = np.log(HEAD / ratios.max(axis=1))
    n_nodes = np.ceil((np.log(TAIL / ratios.min(axis=1)) - start) / _LOG_STEP).astype(int)
    nodes = np.arange(n_nodes.max())
    t = np.exp(start[:, None] + _LOG_STEP * nodes)
    grown = ratios[:, None, :] * (2.0 * t)[:, :, None]
    grown += 1.0
    # t prod_l (1 + 2 r_l t)^(-1/2), a product of factors <= 1 (it may underflow
    # to 0 where the integrand is negligible, never overflow)
    weight = t * np.prod(np.reciprocal(np.sqrt(grown)), axis=2)
    weight[nodes >= n_nodes[:, None]] = 0.0
    np.reciprocal(grown, out=grown)
    # below the first node the integrand is ratios to first order
    return ratios * (np.einsum("dnp,dn->dp", grown, weight) * _LOG_STEP + t[:, :1])


def _eigenvalue_ratios(kendall_values, start=None, tolerance=_TOLERANCE):
    """The scatter eigenvalue ratios (summing to 1) whose Kendall eigenvalues are
    ``kendall_values`` (floored and normalised first; shape (p,), or (draws, p):
    each row alone, all from the one ``start``).

    Fixed point ``r <- r (k / K(r))^w`` (:data:`_RELAXATION`), renormalised: the
    Kendall map is monotone in each ratio, and the iteration converges in 10 to
    25 steps from ``r = k``.
    The rows iterate together, each until its own convergence.
    """
    target = np.asarray(kendall_values, dtype=float)
    if target.ndim == 1:
        return _eigenvalue_ratios(target[None, :], start, tolerance)[0]
    target = np.maximum(target, 0.0)
    sums = np.maximum(target.sum(axis=1, keepdims=True), np.finfo(float).tiny)
    target = np.maximum(target / sums, _FLOOR)
    target /= target.sum(axis=1, keepdims=True)
    ratios = target.copy() if start is None else \
        np.tile(np.asarray(start, dtype=float), (target.shape[0], 1))
    running = np.ones(target.shape[0], dtype=bool)
    for _ in range(_MAX_ITERATIONS):
        current = ratios[running]
        updated = current * (target[running] / _kendall_eigenvalues(current)) \
            ** _RELAXATION
        updated /= updated.sum(axis=1, keepdims=True)
        converged = np.max(np.abs(updated / current - 1.0), axis=1) < tolerance
        ratios[running] = updated
        running[np.flatnonzero(running)[converged]] = False
        if not running.any():
            break
    return ratios


def elliptical_variances(kendall_matrix, kendall_noise, total, total_noise, n_components,
                         rng, correct_bias=False):
    """Variances along the top ``n_components`` Kendall directions, and their noise sd.

    ``total * ratios`` with the ratios from the released matrix's eigenvalues
    (descending, the order of the directions); the first two items of
    :func:`elliptical_ratios`.
    """
    released = elliptical_ratios(kendall_matrix, kendall_noise, total, total_noise,
                                 n_components, rng, correct_bias)
    return released.variances, released.variance_noise


def elliptical_ratios(kendall_matrix, kendall_noise, total, total_noise, n_components,
                      rng, correct_bias=False):
    """The covariance eigenvalue ratios the released Kendall matrix implies, and
    the variances ``total * ratios``, with their noise sds.

    The noise sds come from a parametric bootstrap of the two releases (the
    Kendall matrix's symmetric Gaussian noise of sd ``kendall_noise`` and the
    total's of sd ``total_noise``): free post-processing of released values and
    public noise scales, drawn from the fit's ``rng``. With ``correct_bias`` the
    ratios are moved by the bootstrap's estimate of their bias, ``ratios - (mean
    of the redrawn ratios - ratios)``: noise spreads near-equal Kendall
    eigenvalues apart, so the top one of a flat tail comes out high, and adding
    the noise once more spreads them about as much again. (The total's redrawn
    noise is left out of that mean: it has no bias to estimate, only noise to add.)

    Returns a Bunch: ``ratios`` and ``ratio_noise`` (the Kendall matrix's noise
    alone), ``variances`` and ``variance_noise`` (both releases' noise).
    """
    eigenvalues = np.linalg.eigvalsh(kendall_matrix)[::-1]
    every_ratio = _eigenvalue_ratios(eigenvalues)
    ratios = every_ratio[:n_components]
    p = kendall_matrix.shape[0]
    # every draw at once (one call of the exact sampler): the matrices' noise,
    # then the totals'
    draws = standard_normal(_BOOTSTRAP_DRAWS * (p * (p + 1) // 2 + 1), rng)
    matrix_draws, total_draws = np.split(draws, [_BOOTSTRAP_DRAWS * (p * (p + 1) // 2)])
    # (the draws' matrices as one stack, one batched eigvalsh)
    redrawn_values = np.linalg.eigvalsh(
        kendall_matrix + _unpack(matrix_draws.reshape(_BOOTSTRAP_DRAWS, -1), p)
        * kendall_noise)[:, ::-1]
    redrawn_totals = total + total_noise * total_draws
    # the draws' fixed points run together (one quadrature call per step for all)
    redrawn_ratios = _eigenvalue_ratios(redrawn_values, every_ratio,
                                        _BOOTSTRAP_TOLERANCE)[:, :n_components]
    draws = np.array(redrawn_totals)[:, None] * redrawn_ratios
    if correct_bias:
        ratios = ratios - (np.mean(redrawn_ratios, axis=0) - ratios)
    return Bunch(ratios=ratios, ratio_noise=np.std(redrawn_ratios, axis=0, ddof=1),
                 variances=total * ratios, variance_noise=np.std(draws, axis=0, ddof=1))


def component_scales(kendall_matrix, kendall_noise, n_components, radius=None):
    """Each of the top ``n_components`` directions' scale, about its standard
    deviation over the smallest one's (so the smallest is 1): free
    post-processing of the released Kendall matrix and its public noise sd.

    The matrix's eigenvalues (descending, the order of its eigenvectors) are
    floored at the operator norm of its noise, about ``sqrt(2 p)`` times the
    diagonal sd (an eigenvalue below it is noise: a floored scale errs towards
    less clipping). A spherical matrix (``radius`` None) gives the covariance
    eigenvalue ratios through the elliptical map (:func:`_eigenvalue_ratios`);
    a clipped one (``radius`` set) is the clipped pair scatter over ``c^2 / 2``,
    whose eigenvalues are those ratios directly. Only the scales' ratios within
    the top ``n_components`` matter (:func:`~._variances._scaled_clipped_variances`
    searches the one bound after them), and a model that does not hold costs
    accuracy, never privacy.
    """
    eigenvalues = np.linalg.eigvalsh(kendall_matrix)[::-1]
    floor = kendall_noise * math.sqrt(2.0 * eigenvalues.size)
    eigenvalues = np.maximum(eigenvalues, max(floor, np.finfo(float).tiny))
    ratios = eigenvalues if radius is not None else _eigenvalue_ratios(eigenvalues)
    top = np.maximum(ratios[:n_components], np.finfo(float).tiny)
    return np.sqrt(top / top.min())
