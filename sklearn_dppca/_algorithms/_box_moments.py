"""Second moments about a private mean, with the sensitivity of a declared box.

With declared ``bounds`` every row of a fit's (clipped) view lies in a public box
of centre ``c`` and half widths ``h``. A one-sample moment then needs no clip
bound of its own, and its terms are bounded by the box, not by pair differences:

* the **mean**, about the box centre and in units of each column's width,
  ``(mean_i (y_ij - c_j)) / w_j``, has terms in ``[-1/2, 1/2]``: replacing one
  row moves each coordinate by at most ``1 / n``, the vector by ``sqrt(p) / n``
  in L2;
* the **second moment about the released mean** ``m`` (public once released),
  ``mean_i (y_ij - m_j)^2``, has terms in ``[0, R_j^2]`` with
  ``R_j = h_j + |c_j - m_j|`` (every ``y_ij`` is in the box): over ``R_j^2`` it
  moves by at most ``1 / n`` per coordinate.

The pair U-statistic with the box's bound (terms ``(y_a - y_b)^2 / 2`` up to
``2 h^2``, sensitivity ``4 h^2 / n``) is the same variance with four times the
sensitivity when the mean sits near the box centre: the moment about the mean
is its local form. The mean's own noise ``e`` adds ``e^2`` to the moment about
``m`` (``mean (y - m)^2 = var + (ybar - m)^2``): its expectation, the mean's
noise variance, is subtracted, and its spread (``sqrt(2)`` times that) is part
of the released noise sd. Each view (divided by spreads, projected on
directions) has its box (:meth:`~sklearn_dppca._data._rows.Rows.box`,
:meth:`~sklearn_dppca._data._rows.Rows.box_projection`), so the same two releases
give the spreads of ``scale=True``, the variances along released directions and
the total variance.
"""

import numpy as np

from .._bunch import Bunch
from .._data._statistics import centred_moment_sensitivity
from ..privacy import gaussian_mechanism

#: A bound's relative allowance for the roundings of ``h + |c - m|`` and of the
#: rows' shifts: no computed term may exceed its bound.
_REACH_ALLOWANCE = 1.0 + 2.0**-40


def _units(values):
    """Positive divisors: ``values`` where positive, 1 where 0 (a column of zero
    width holds one value: its statistic is exactly 0 whatever the divisor)."""
    return np.where(values > 0, values, 1.0)


def release_box_mean(X, leaf, noise, rng, ledger):
    """The private mean of each column of the view ``X`` (declared bounds).

    Released about the box centre in units of each column's width (sensitivity
    ``sqrt(p) / n``, see the module's docstring) on the Gaussian ``leaf``.
    Returns a Bunch with ``mean`` and ``noise_scale`` (per column, in the view's
    units), and the box's ``centre`` and ``half`` widths.
    """
    low, high = X.box()
    centre, widths = low / 2 + high / 2, high - low
    n_samples, n_features = X.shape
    statistic = X.centred_sums(centre)[0] / n_samples / _units(widths)
    noisy, noise_scale = gaussian_mechanism(
        statistic, centred_moment_sensitivity(n_samples, n_features), rng=rng,
        noise=noise, ledger=ledger, **leaf.mechanism_budget())
    return Bunch(mean=centre + noisy * widths, noise_scale=noise_scale * widths,
                 centre=centre, half=widths / 2)


def project_mean(mean, matrix):
    """The released mean of a view projected on the rows of ``matrix``: its
    value and noise sd along each row (post-processing)."""
    matrix = np.asarray(matrix, dtype=float)
    return Bunch(mean=matrix @ mean.mean,
                 noise_scale=np.sqrt((matrix**2) @ mean.noise_scale**2),
                 centre=matrix @ mean.centre, half=np.abs(matrix) @ mean.half)


def _moments_about_mean(Y, mean):
    """Per column of ``Y``, ``sum_i (y_ij - m_j)^2`` (from the sums about the box
    centre, one pass) and each term's bound ``R_j^2``."""
    first, second = Y.centred_sums(mean.centre)
    offset = mean.mean - mean.centre
    about_mean = np.maximum(second - 2.0 * offset * first
                            + Y.shape[0] * offset**2, 0.0)
    reach = (mean.half + np.abs(offset)) * _REACH_ALLOWANCE
    return about_mean, reach**2


def release_box_variances(Y, mean, leaf, noise, rng, ledger):
    """The variance of each column of the view ``Y`` (a projection on released
    directions, or the rows: the spreads) about the released ``mean`` of its
    columns (:func:`release_box_mean`, :func:`project_mean`), one Gaussian
    mechanism on the vector of moments over their bounds (sensitivity
    ``sqrt(k) / n``). The mean's noise variance is subtracted.

    Returns ``(variances, noise sds, bounds R_j^2)``; a variance may be negative.
    """
    about_mean, bounds = _moments_about_mean(Y, mean)
    n_samples, n_columns = Y.shape
    units = _units(bounds)
    noisy, noise_scale = gaussian_mechanism(
        about_mean / n_samples / units, centred_moment_sensitivity(n_samples, n_columns),
        rng=rng, noise=noise, ledger=ledger, **leaf.mechanism_budget())
    mean_variance = mean.noise_scale**2
    sds = np.sqrt((noise_scale * units)**2 + 2.0 * mean_variance**2)
    return noisy * units - mean_variance, sds, bounds


def release_box_total(X, mean, leaf, noise, rng, ledger):
    """The total variance of the view ``X`` about its released ``mean``: the sum
    of the columns' moments over the sum of their bounds (one coordinate,
    sensitivity ``1 / n``), less the mean's noise variances. Returns ``(total,
    noise sd, bound)``."""
    about_mean, bounds = _moments_about_mean(X, mean)
    n_samples = X.shape[0]
    unit = float(_units(np.array([np.sum(bounds)]))[0])
    noisy, noise_scale = gaussian_mechanism(
        float(np.sum(about_mean)) / n_samples / unit,
        centred_moment_sensitivity(n_samples, 1), rng=rng, noise=noise, ledger=ledger,
        **leaf.mechanism_budget())
    mean_variance = mean.noise_scale**2
    sd = float(np.sqrt((noise_scale * unit)**2 + 2.0 * np.sum(mean_variance**2)))
    return float(noisy) * unit - float(np.sum(mean_variance)), sd, unit
