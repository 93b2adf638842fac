"""The noise of each released loading: first-order perturbation theory on the
released Kendall matrix (post-processing of released values only)."""

import math

import numpy as np

#: On few variables the noise alone (the Gaussian orthogonal ensemble) puts its top
#: two eigenvalues further apart than the spectral norm ``2 sqrt(p)``: in 37%, 12%
#: and 3% of draws at p = 2, 3 and 4 (4,000 simulated matrices each), and a
#: direction of pure noise then looked known. Gaps below ``7.3 (p / 2)**-0.25``
#: off-diagonal noise sds count as ties too: above the simulated 99.9% point of
#: that gap (7.24 at p = 2, 6.29 at p = 3, 5.68 at p = 4, 5.07 at p = 6, 4.55 at
#: p = 10) and below ``2 sqrt(p)`` from p = 6 on, where the norm covers it.
_NOISE_GAP = 7.3


def _noise_gap(p):
    """Fewest off-diagonal noise sds between two eigenvalues that the noise alone
    rarely opens (see :data:`_NOISE_GAP`)."""
    return _NOISE_GAP * (p / 2.0) ** -0.25

#: The sd of a loading is capped here: a unit direction's entries lie in [-1, 1],
#: so a larger sd (eigenvalues that nearly tie) says only "anything in [-1, 1]".
_SD_CAP = 1.0


def loading_noise_scale(kendall_matrix, kendall_noise_scale, components):
    """Approximate noise sd of each entry of the released directions.

    The released Kendall matrix is ``K + E`` with ``E`` symmetric Gaussian
    noise: sd ``s = kendall_noise_scale`` on the diagonal and ``s / sqrt(2)``
    off it (:func:`~sklearn_dppca.privacy.symmetric_matrix_gaussian`), the
    Gaussian orthogonal ensemble scaled by ``s / sqrt(2)``. First-order
    perturbation theory moves eigenvector ``k`` by
    ``sum_{l != k} (v_l' E v_k) / (lambda_k - lambda_l) v_l``; under that
    ensemble the ``v_l' E v_k`` (``l != k``) are independent with sd
    ``s / sqrt(2)``, so

    ``sd(v_jk) ~ sqrt(sum_{l != k} (s^2 / 2) v_jl^2 / (lambda_k - lambda_l)^2)``

    with ``lambda, v`` the eigenpairs of the *released* matrix (all ``p`` of
    them) standing in for the exact ones. Assumptions: the noise is small next
    to the gaps ``lambda_k - lambda_l`` (first order), and the released
    eigenpairs are close to the exact ones. Both fail when eigenvalues nearly
    tie, that is when a gap ``|lambda_k - lambda_l|`` is below the spectral
    norm of the noise, about ``2 (s / sqrt(2)) sqrt(p)`` (the edge of the
    semicircle law), or, on few variables, below the gap the noise alone opens
    in one draw of a thousand (:data:`_NOISE_GAP`): the noise can then rotate
    ``v_k`` towards ``v_l`` freely,
    and every entry of ``v_k`` that ``v_l`` touches gets the cap, 1 (an entry
    of a unit vector lies in ``[-1, 1]``, so an sd of 1 says the entry is not
    known at all). Every sd is capped at 1. Nothing but released values is
    read: this is post-processing.

    Parameters
    ----------
    kendall_matrix : array-like of shape (p, p) or None
        The released noisy Kendall matrix.
    kendall_noise_scale : float or None
        The sd of its diagonal noise.
    components : array-like of shape (k, p)
        The released directions, eigenvectors of ``kendall_matrix``.

    Returns
    -------
    noise_scale : ndarray of shape (k, p) or None
        The approximate sd of each entry of ``components`` (in ``[0, 1]``);
        None when the matrix or its noise sd is not available.
    """
    if kendall_matrix is None or kendall_noise_scale is None:
        return None
    matrix = np.asarray(kendall_matrix, dtype=float)
    components = np.asarray(components, dtype=float)
    sigma = float(kendall_noise_scale)
    if (matrix.ndim != 2 or components.ndim != 2
            or matrix.shape != (components.shape[1],) * 2
            or not math.isfinite(sigma) or not np.all(np.isfinite(matrix))):
        return None
    k, p = components.shape
    if not np.all(np.isfinite(components)):
        return np.full((k, p), np.nan)
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    off_sd = sigma / math.sqrt(2.0)
    # the noise's spectral norm, about; on few variables the noise alone spreads
    # its top eigenvalues wider than that (see _NOISE_GAP)
    tie = off_sd * max(2.0 * math.sqrt(p), _noise_gap(p))
    out = np.empty((k, p))
    for row, direction in enumerate(components):
        index = int(np.argmax(np.abs(vectors.T @ direction)))   # its eigenpair
        others = np.arange(p) != index
        gaps = values[index] - values[others]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            weights = np.where(np.abs(gaps) > tie, (off_sd / gaps) ** 2, np.inf)
            var = (vectors[:, others] ** 2) @ weights
            out[row] = np.sqrt(var)
    out[~np.isfinite(out)] = _SD_CAP
    return np.minimum(out, _SD_CAP)


def ledger_kendall_noise_scale(ledger):
    """The diagonal noise sd of the Kendall matrix, read off a privacy ledger (the
    entry of its symmetric Gaussian mechanism); None when it has none."""
    for item in ledger or ():
        mechanism = str(item.get("mechanism", ""))
        if mechanism.startswith("symmetric gaussian"):
            scale = item.get("noise_scale")
            try:
                return float(scale)
            except (TypeError, ValueError):
                return None
    return None
