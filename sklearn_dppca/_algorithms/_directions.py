"""The directions' release: the noisy spherical or clipped Kendall matrix and its
eigenvectors (g-DPPCA, Kim & Jung 2025; the clipped radial of Raymaekers &
Rousseeuw 2019)."""

import math

import numpy as np
from .._bunch import Bunch

from .._data._statistics import KENDALL_MATRIX, RADIUS
from .._validation import warn_user
from ..privacy import PrivacyUtilityWarning, symmetric_matrix_gaussian
from ._box_moments import box_diagonal, release_box_covariance, release_box_mean

#: Share of the loading part spent on the private radius (``radial="clipped"``).
_RADIUS_SHARE = 0.2
#: Share (of ``mu^2``) of the loading part spent on the box's mean
#: (``radial="covariance"``): its noise enters the scatter about it, squared,
#: and the bound on every row's distance from it. Between 0.1 and 0.4 the top-2
#: directions' median error moves by a few percent on iris, wine, diabetes,
#: breast cancer and digits at eps 0.5 to 4 (observed and widened boxes),
#: least near 0.15.
_COVARIANCE_MEAN_SHARE = 0.15
#: ``radius_level="auto"``: ``clip(1 - 22 / sqrt(n eps), 0.5, 0.99)`` (see
#: :func:`_auto_radius_level`).
_AUTO_LEVEL = (22.0, 0.5, 0.99)


def _auto_radius_level(n_samples, eps):
    """The radius level for ``radius_level="auto"``, from public ``n`` and the
    directions' ``eps``: ``clip(1 - 22 / sqrt(n eps), 0.5, 0.99)``.

    A higher level brings the estimand closer to the covariance and costs signal,
    so the level rises with ``n eps``: 0.5 up to n eps = 2,000, 0.75 at 8,000. The
    measurements behind the rule are in the user guide, "Which PCA?" (section
    ``which-pca``).
    """
    scale, low, high = _AUTO_LEVEL
    return float(np.clip(1.0 - scale / math.sqrt(n_samples * eps), low, high))


def _kendall_sensitivity(n_samples, rule):
    """Frobenius sensitivity of the (complete or incomplete) spherical Kendall matrix.

    One row of ``n`` touches ``n - 1`` of the ``n (n - 1) / 2`` pair terms (``m`` of
    the ``n m / 2`` terms with ``pairs=m``); each term ``u u^T`` has unit Frobenius
    norm, so it moves by at most 2 (``"standard"``, Kim & Jung's bound, giving
    ``4 / n``) and in fact by at most ``sqrt(2)`` because
    ``||u u^T - v v^T||_F^2 = 2 - 2 (u . v)^2`` (``"tight"``, giving
    ``2 sqrt(2) / n``).
    """
    per_term = 2.0 if rule == "standard" else math.sqrt(2.0)
    return 2.0 * per_term / n_samples


def loading_parts(radial, radius):
    """The budget tree of the directions: one Gaussian leaf; with
    ``radial="clipped"`` and a private radius, the radius search and the matrix;
    with ``radial="covariance"``, the box's mean and the scatter about it."""
    if radial == "covariance":
        return {"mean": (_COVARIANCE_MEAN_SHARE, "gaussian"),
                "statistic": (1.0 - _COVARIANCE_MEAN_SHARE, "gaussian")}
    if radial == "spherical" or not isinstance(radius, str):
        return "gaussian"
    return {"radius": (_RADIUS_SHARE, "pure"), "statistic": (1.0 - _RADIUS_SHARE, "gaussian")}


def _private_radius(X, level, leaf, rng, ledger):
    """The clip radius ``c``: a private ``level`` quantile of ``||x_a - x_b||``
    over a random matching (one changed row changes one distance), on the
    scale-free grid of :func:`~sklearn_dppca.privacy.positive_quantile`."""
    return math.sqrt(X.matching_quantile(RADIUS, 1.0, level, leaf, rng, ledger))


def _private_clipped_kendall(X, *, budget, radius, radius_level, noise, sensitivity,
                            pairs, rng, ledger, progress=None):
    """The noisy clipped Kendall matrix ``mean d d^T / max(||d||^2, c^2)``.

    The generalized Kendall matrix of Raymaekers & Rousseeuw (2019) with radial
    function ``h(r) = min(r, c)``, divided by ``c^2``. Each term ``a a^T`` with
    ``a = d / max(||d||, c)`` has ``||a|| <= 1``, and
    ``||a a^T - b b^T||_F^2 = ||a||^4 + ||b||^4 - 2 (a . b)^2 <= 2``, so one
    changed row moves the matrix by at most ``2 sqrt(2) / n`` in Frobenius norm
    for every pair design: the tight Kendall bound (:func:`_kendall_sensitivity`).
    ``c^2`` times it, halved, is the pair scatter clipped in norm at ``c``: the
    covariance when ``c`` is large, the spherical Kendall matrix (times ``c^2``)
    when it is small. ``budget``: a Gaussian leaf (public ``radius``) or the view
    of :func:`loading_parts`. Returns the Bunch of
    :func:`_private_kendall_directions` plus ``radius``.
    """
    statistic = budget if not hasattr(budget, "part") else budget["statistic"]
    if isinstance(radius, str):
        leaf = budget["radius"]
        if radius_level == "auto":   # the part's eps: the search has _RADIUS_SHARE of it
            radius_level = _auto_radius_level(X.shape[0], leaf.eps / _RADIUS_SHARE)
        radius = _private_radius(X, radius_level, leaf, rng, ledger)
        widths = X.widths()
        if widths is not None:
            # declared bounds: no pair is farther apart than the box's diagonal, so
            # a larger radius only shrinks every term (post-processing)
            radius = min(radius, box_diagonal(widths))
    matrix = X.pair_mean(squared_radius(radius), pairs, KENDALL_MATRIX, progress)
    released = _released_eigen(matrix, X.shape[0], statistic, noise, sensitivity, rng,
                               ledger)
    released.radius = radius
    _warn_if_radius_collapsed(released)
    return released


def squared_radius(radius):
    """``radius**2`` as the kernel's floor, clamped to the largest float.

    A public radius above ``sqrt(largest float)`` (about 1.3e154) would square to
    ``inf``, which the kernel refuses after the charge; every squared distance is
    at most the largest float, so the clamped floor weighs every pair as ``inf``
    would (``d d^T / floor``, the kernel's large-floor path).
    """
    radius = float(radius)
    return radius * radius if radius <= math.sqrt(_LARGEST) else _LARGEST


_LARGEST = float(np.finfo(float).max)


#: A clipped matrix whose trace (the mean of min(||d||^2 / c^2, 1)) is this high,
#: one noise sd off, has nearly every pair beyond its radius: about 0.7 at the
#: default level 0.5 (lower at higher levels), 1 when the search collapsed.
_COLLAPSED_TRACE = 0.85


def _warn_if_radius_collapsed(released):
    """Warn when the radius sits below nearly all pair distances (post-processing).

    The trace of the clipped matrix is the mean of ``min(||d||^2 / c^2, 1)``:
    about 0.7 at the default level, 1 when the radius search stopped at the
    bottom of its scale-free grid (small ``n eps``). Such a matrix is the
    spherical Kendall matrix, and variances read off it are ``c^2`` small.
    """
    p = released.kendall_matrix.shape[0]
    trace = float(np.trace(released.kendall_matrix))
    if trace - released.noise_scale * math.sqrt(p) >= _COLLAPSED_TRACE:
        warn_user(
            "The private clip radius sits below nearly every pair distance (its "
            "search stopped far too early): the clipped matrix is the spherical "
            "Kendall matrix, and variances read off it (the 'matrix' scree) are "
            "about 0. Give the directions more eps, or use more rows.",
            PrivacyUtilityWarning,
        )


def release_directions(X, *, radial, radius, radius_level, budget, noise, sensitivity,
                       pairs, rng, ledger, progress=None):
    """The directions' release for ``radial``: spherical, clipped or covariance.

    ``X``: the fit's :class:`~sklearn_dppca._data._rows.Rows`. ``budget`` is
    ``plan.node("loading")`` (or the directions' node): a leaf, or the view of
    :func:`loading_parts`.

    ``radial="covariance"`` (declared ``bounds``: ``X`` is a clipped view) is the
    one-sample covariance about the box's private mean
    (:func:`_private_box_covariance`).
    """
    if radial == "covariance":
        return _private_box_covariance(X, budget=budget, noise=noise,
                                       sensitivity=sensitivity, rng=rng, ledger=ledger)
    if radial == "clipped":
        return _private_clipped_kendall(
            X, budget=budget, radius=radius, radius_level=radius_level, noise=noise,
            sensitivity=sensitivity, pairs=pairs, rng=rng, ledger=ledger,
            progress=progress)
    return _private_kendall_directions(
        X, budget=budget, noise=noise, sensitivity=sensitivity, pairs=pairs, rng=rng,
        ledger=ledger, progress=progress)


def _private_box_covariance(X, *, budget, noise, sensitivity, rng, ledger):
    """The noisy covariance about the box's private mean and its eigenvectors.

    ``budget``: the view of :func:`loading_parts` (``mean``, ``statistic``).
    The mean is released in the box diagonal's common unit
    (:func:`~._box_moments.release_box_mean`), then the scatter about it in
    units of ``R^2``, ``R`` the farthest any point of the box lies from it
    (:func:`~._box_moments.release_box_covariance`): with the mean near the
    box's centre, a quarter of the noise, in the data's units, of the pair
    scatter at the box's diagonal on the same budget, less the mean's share
    (:data:`_COVARIANCE_MEAN_SHARE`). Returns the Bunch of
    :func:`_private_kendall_directions` with ``radius`` ``R``.
    """
    mean = release_box_mean(X, budget["mean"], noise, rng, ledger, common_unit=True)
    released = release_box_covariance(X, mean, budget["statistic"], noise, sensitivity,
                                      rng, ledger)
    eigen = _eigen(released.matrix, released.noise_scale)
    eigen.radius = released.radius
    return eigen


def _private_kendall_directions(X, *, budget, noise, sensitivity, pairs, rng, ledger,
                                progress=None):
    """Release the noisy Kendall matrix and its eigen-decomposition.

    ``budget`` is the :class:`~sklearn_dppca.privacy.Allocation` of the Gaussian
    leaf that pays for it (its path names the ledger step).

    Returns a Bunch with ``kendall_matrix`` (released, symmetric), ``eigenvalues``
    (descending), ``eigenvectors`` (columns, deterministic signs) and
    ``noise_scale`` (diagonal standard deviation).
    """
    # a coincident pair is a zero term (the sensitivity covers it)
    kendall = X.pair_mean(0.0, pairs, KENDALL_MATRIX, progress)
    released = _released_eigen(kendall, X.shape[0], budget, noise, sensitivity, rng,
                               ledger)
    released.radius = None
    return released


def _released_eigen(matrix, n_samples, leaf, noise, sensitivity, rng, ledger):
    """The matrix plus symmetric Gaussian noise on ``leaf``, and its eigenpairs."""
    noisy, noise_scale = symmetric_matrix_gaussian(
        matrix, _kendall_sensitivity(n_samples, sensitivity), rng=rng, noise=noise,
        ledger=ledger, **leaf.mechanism_budget())
    return _eigen(noisy, noise_scale)


def _eigen(noisy, noise_scale):
    """A released matrix with its eigenvalues (descending), eigenvectors
    (columns, deterministic signs) and noise sd (post-processing)."""
    eigenvalues, eigenvectors = np.linalg.eigh(noisy)
    order = np.argsort(eigenvalues)[::-1]
    return Bunch(
        kendall_matrix=noisy,
        eigenvalues=eigenvalues[order],
        eigenvectors=_orient_components(eigenvectors[:, order]),
        noise_scale=noise_scale,
    )


def _orient_components(eigenvectors):
    """Deterministic signs: each column's largest absolute entry is made positive."""
    rows = np.argmax(np.abs(eigenvectors), axis=0)
    signs = np.sign(eigenvectors[rows, np.arange(eigenvectors.shape[1])])
    signs[signs == 0] = 1.0
    return eigenvectors * signs
