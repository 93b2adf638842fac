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
give the spreads of ``scale=True`` and the scree.

The scree takes both in the forms that suit it (the spreads keep the ones
above, the same relative noise on every column):

* its mean is in units of the box's diagonal ``S = sqrt(sum_j w_j^2)``: the
  vector moves by ``1 / n``, every column's noise sd is ``S / (n mu)`` and
  along any unit direction too (in width units, ``sqrt(p)`` times the widest
  column's along it), which the moments, reading it squared along their
  directions and over all of them for the total, want (at a given L2
  sensitivity, ``sum_j s_j^4`` is least for equal ``s_j``);
* its variances along the ``k`` directions and the rest (the moment along
  the ``p - k`` directions orthogonal to them) are one release
  (:func:`release_box_scree`), whose sum is the total: a PVE near 1 is read
  against the other moments' noise only, not a total released on its own. Each
  moment is in units of ``R_l R`` (:func:`_moment_units`), so the largest has
  about ``sqrt(k)`` times less noise than in its own unit, and a row's terms,
  whose sum is at most its squared distance from the mean, bound the move
  jointly.
"""

import math

import numpy as np

from .._bunch import Bunch
from .._data._statistics import centred_moment_sensitivity, centred_scatter_sensitivity
from ..privacy import gaussian_mechanism, symmetric_matrix_gaussian

#: A bound's relative allowance for the roundings of ``h + |c - m|`` and of the
#: rows' shifts: no computed term may exceed its bound.
_REACH_ALLOWANCE = 1.0 + 2.0**-40


def _units(values):
    """Positive divisors: ``values`` where positive, 1 where 0 (a column of zero
    width holds one value: its statistic is exactly 0 whatever the divisor)."""
    return np.where(values > 0, values, 1.0)


def box_diagonal(widths):
    """The length of the box's diagonal, ``sqrt(sum_j w_j^2)`` (public: the
    declared box): no two rows of the box are farther apart. The common unit of
    the scree's mean, and the largest useful radius of ``radial="clipped"``.
    (Widths are at most ``2**501``, twice the data domain: the squares' sum
    stays finite below about four million columns.)"""
    return float(np.sqrt(np.sum(np.asarray(widths, dtype=float)**2)))


#: The tail shares' sensitivity over that of a mean they ride on
#: (:func:`release_box_mean`): the first part of the mean (a quarter of its
#: ``mu^2``, a guess) gets ``sqrt(5)`` times its noise, and a share's noise sd
#: is ``sqrt(5) / 2 sqrt(k) / (m mu)`` (``m`` matched pairs): at weight 1 it
#: was ``sqrt(2)``, and adult's heavy tail was seen at 3.8 sds where it is
#: seen at 4.7.
_TAIL_WEIGHT = 2.0


def release_box_mean(X, leaf, noise, rng, ledger, *, common_unit=False, tail=None):
    """The private mean of each column of the view ``X`` (declared bounds).

    Released about the box centre on the Gaussian ``leaf``, in units of each
    column's width (sensitivity ``sqrt(p) / n``, see the module's docstring:
    the same relative noise on every column, as the spreads want) or, with
    ``common_unit``, in units of the box's diagonal ``S`` (:func:`box_diagonal`):
    a row moves column ``j`` by at most ``w_j / (n S)``, the vector by ``1 /
    n``, so every column's noise sd is ``S / (n mu)``, ``sqrt(p)`` times less
    than the widest column's in width units. Its noise enters a moment squared
    along a direction, and the total through every column
    (``sum_j s_j^4`` is least for equal ``s_j`` at a given sensitivity), so the
    scree takes the common unit. ``tail``: the tail shares of a clipped scree
    (:func:`~._variances.tail_shares`), released with the mean, scaled to
    :data:`_TAIL_WEIGHT` of its sensitivity (one Gaussian: the vector's L2
    sensitivity ``sqrt(1 + w^2)`` times the mean's). Returns a Bunch with
    ``mean`` and ``noise_scale`` (per column, in the view's units), the box's
    ``centre`` and ``half`` widths, and with ``tail`` the released ``shares``
    and their ``share_noise`` sd.
    """
    low, high = X.box()
    centre, widths = low / 2 + high / 2, high - low
    n_samples, n_features = X.shape
    units = np.full(n_features, box_diagonal(widths)) if common_unit else _units(widths)
    exact = 1.0 if common_unit else None
    statistic = X.centred_sums(centre)[0] / n_samples / units
    sensitivity = centred_moment_sensitivity(n_samples, n_features, exact)
    scale = 1.0
    if tail is not None:
        scale = _TAIL_WEIGHT * sensitivity / tail.sensitivity
        statistic = np.concatenate([statistic, tail.shares * scale])
        sensitivity *= math.hypot(1.0, _TAIL_WEIGHT)
    noisy, noise_scale = gaussian_mechanism(
        statistic, sensitivity, rng=rng, noise=noise, ledger=ledger,
        **leaf.mechanism_budget())
    released = Bunch(mean=centre + noisy[:n_features] * units,
                     noise_scale=noise_scale * units, centre=centre, half=widths / 2)
    if tail is not None:
        released.update(shares=noisy[n_features:] / scale,
                        share_noise=noise_scale / scale)
    return released


def combine_means(first, second):
    """One mean from two releases of the same box mean, each column weighted by
    its inverse noise variance (post-processing): for Gaussian noise, the
    release at the two leaves' ``mu`` combined in squares."""
    first_weight, second_weight = first.noise_scale**-2.0, second.noise_scale**-2.0
    weights = first_weight + second_weight
    return Bunch(first, mean=(first.mean * first_weight + second.mean * second_weight)
                 / weights, noise_scale=weights**-0.5)


def project_mean(mean, matrix):
    """The released mean of a view projected on the rows of ``matrix``: its
    value and noise sd along each row (post-processing), and ``joint``, a bound
    on ``sum_l (v_l . (y - m))^2`` for every row ``y`` of the box: ``||M||^2``
    (the largest singular value squared) times the farthest any point of the box
    lies from the mean, squared."""
    matrix = np.asarray(matrix, dtype=float)
    return Bunch(mean=matrix @ mean.mean,
                 noise_scale=np.sqrt((matrix**2) @ mean.noise_scale**2),
                 centre=matrix @ mean.centre, half=np.abs(matrix) @ mean.half,
                 joint=_largest_square(matrix) * _farthest(mean))


def release_box_covariance(X, mean, leaf, noise, rule, rng, ledger):
    """The noisy covariance of ``radial="covariance"``: the one-sample scatter of
    the view ``X`` about its released box ``mean`` (common unit), plus symmetric
    Gaussian noise on the ``leaf``.

    Every row of the box lies within ``R`` of the mean (:func:`_farthest`), so
    the terms ``z z^T`` of ``z = (y - m) / R`` have ``||z|| <= 1`` and the
    matrix ``mean z z^T`` moves by at most ``sqrt(2) / n`` in Frobenius norm
    (:func:`~sklearn_dppca._data._statistics.centred_scatter_sensitivity`,
    ``rule`` the estimator's ``sensitivity``): half the pair form's
    ``2 sqrt(2) / n`` on a scale that, with the mean near the box's centre, is
    a quarter of the pair form's ``D^2`` (Dwork, Talwar, Thakurta & Zhang's
    "Analyze Gauss" about a private mean). The mean's noise ``e`` adds ``e
    e^T`` to the scatter about it; its expectation, the mean's noise variance
    per column over ``R^2``, is taken off the diagonal (post-processing; the
    common unit makes it the same on every column, so the eigenvectors do not
    move). Returns a Bunch: ``matrix`` (released, symmetric, in units of
    ``R^2``), its diagonal ``noise_scale`` and the ``radius`` ``R``.
    """
    n_samples, n_features = X.shape
    radius = math.sqrt(_farthest(mean))
    unit = float(_units(np.asarray(radius)))
    scatter = X.centred_scatter(mean.mean, unit) / n_samples
    noisy, noise_scale = symmetric_matrix_gaussian(
        scatter, centred_scatter_sensitivity(n_samples, n_features, rule), rng=rng,
        noise=noise, ledger=ledger, **leaf.mechanism_budget())
    noisy = noisy - np.diag(mean.noise_scale**2) / unit**2
    return Bunch(matrix=noisy, noise_scale=noise_scale, radius=radius)


def _farthest(mean):
    """The farthest any point of the box lies from the released ``mean``,
    squared (with the bounds' rounding allowance)."""
    return float(np.sum((mean.half + np.abs(mean.mean - mean.centre))**2)) \
        * _REACH_ALLOWANCE


def _largest_square(matrix):
    """``||M||^2``, the largest singular value of ``matrix`` squared (0 when it
    has no rows)."""
    return float(np.linalg.norm(matrix, 2))**2 if matrix.size else 0.0


def _term_bounds(mean):
    """Each column's term bound ``R_j^2`` about the released ``mean``, ``R_j =
    h_j + |c_j - m_j|`` (public: the box and the released mean)."""
    return ((mean.half + np.abs(mean.mean - mean.centre)) * _REACH_ALLOWANCE)**2


def _moments_about_mean(Y, mean):
    """Per column of ``Y``, ``sum_i (y_ij - m_j)^2`` (from the sums about the box
    centre, one pass) and each term's bound ``R_j^2``."""
    first, second = Y.centred_sums(mean.centre)
    offset = mean.mean - mean.centre
    about_mean = np.maximum(second - 2.0 * offset * first
                            + Y.shape[0] * offset**2, 0.0)
    return about_mean, _term_bounds(mean)


def complement_basis(components):
    """Orthonormal rows spanning the directions orthogonal to the rows of
    ``components`` (public: released directions), or None when those rows are
    not orthonormal (to ``1e-9``): the total is then not their variances' sum
    plus the rest's."""
    components = np.asarray(components, dtype=float)
    n_components = components.shape[0]
    if not np.allclose(components @ components.T, np.eye(n_components), rtol=0.0,
                       atol=1e-9):
        return None
    return np.linalg.svd(components, full_matrices=True)[2][n_components:]


def _scree_terms(mean, components, rest):
    """What the box's scree (:func:`release_box_scree`) releases, from public
    values only (the box, the released ``mean``, the directions and the rows
    ``rest`` orthogonal to them): per coordinate (each variance, then the rest
    when there is one) the term bound, the mean's noise variance and the sum of
    the largest terms of the sums it is computed from (the rest adds one per
    direction: the rounding of
    :func:`~sklearn_dppca._data._statistics.centred_moment_sensitivity`); the
    bound on a row's sum of terms; and the mean's noise variance along every
    direction."""
    basis = np.vstack([components, rest])
    along = project_mean(mean, basis)
    terms, noise = _term_bounds(along), along.noise_scale**2
    n_components = components.shape[0]
    bounds, largest, coordinate_noise = terms, terms, noise
    if rest.shape[0]:
        beyond = float(np.sum(terms[n_components:]))
        bounds = np.append(terms[:n_components],
                           min(beyond, _largest_square(rest) * _farthest(mean)))
        largest = np.append(terms[:n_components], beyond)
        coordinate_noise = np.append(noise[:n_components],
                                     float(np.sum(noise[n_components:])))
    return Bunch(bounds=bounds, mean_variance=coordinate_noise, largest=largest,
                 joint=along.joint, direction_noise=noise, along=along, basis=basis)


def _scree_units(terms):
    """The units (:func:`_moment_units`), the move over them and the rounding
    scales of the box's scree's coordinates."""
    units, exact = _moment_units(terms.bounds, terms.joint)
    return units, exact, terms.largest / units


def _scree_sds(terms, spread):
    """The noise sds of the box's scree's coordinates and of the total (their
    sum), for the moments' noise sds ``spread``: the mean's noise squared along
    each direction adds ``sqrt(2)`` times its variance."""
    sds = np.hypot(spread, math.sqrt(2.0) * terms.mean_variance)
    total_sd = math.sqrt(float(np.sum(spread**2))
                         + 2.0 * float(np.sum(terms.direction_noise**2)))
    return sds, total_sd


def box_scree_sds(mean, components, rest, n_samples, unit, total_unit=None):
    """The noise sds the box's scree gives the variances along ``components``
    and the total, computed before the release from public values only (the
    released or an assumed ``mean``, the box, ``n``; to the rounding
    allowance): of :func:`release_box_scree` on a leaf of ``unit`` (its sd per
    unit of sensitivity), or, with ``total_unit`` (separate leaves: basic
    accounting), of :func:`release_box_variances` on ``unit`` and
    :func:`release_box_total` on ``total_unit``. Returns ``(variance sds,
    total sd)``."""
    if total_unit is not None:
        along = project_mean(mean, components)
        units, exact = _variance_units(along)
        variance_sds = _about_mean_sds(
            along, units * centred_moment_sensitivity(n_samples, components.shape[0],
                                                      exact) * unit)
        total_scale = _total_unit(mean)
        total_sd = _about_total_sd(mean, total_scale * centred_moment_sensitivity(
            n_samples, 1) * total_unit)
        return variance_sds, total_sd
    terms = _scree_terms(mean, components, rest)
    units, exact, _ = _scree_units(terms)
    sds, total_sd = _scree_sds(terms, units * exact / n_samples * unit)
    return sds[:components.shape[0]], total_sd


def _variance_units(mean):
    """The units (and exact-norm bound) of :func:`release_box_variances`' moments
    about ``mean``: each column's own bound, or those of :func:`_moment_units`
    for a mean projected on directions (with ``joint``)."""
    bounds = _term_bounds(mean)
    joint = mean.get("joint")
    return (_units(bounds), None) if joint is None else _moment_units(bounds, joint)


def _about_mean_sds(mean, spread):
    """Each moment's noise sd about the released ``mean``: the release's
    ``spread`` (its noise sd in data units) and the mean's noise variance,
    subtracted, whose own sd it adds."""
    return np.sqrt(spread**2 + 2.0 * mean.noise_scale**4)


def _total_unit(mean):
    """The unit of :func:`release_box_total`: the sum of the columns' bounds."""
    return float(_units(np.array([np.sum(_term_bounds(mean))]))[0])


def _about_total_sd(mean, spread):
    """The total's noise sd about the released ``mean`` (see
    :func:`_about_mean_sds`), the columns' mean noise variances summed."""
    return float(np.sqrt(spread**2 + 2.0 * np.sum(mean.noise_scale**4)))


def release_box_scree(X, mean, components, rest, leaf, noise, rng, ledger):
    """The variances along ``components`` and the total variance of the view
    ``X``, one Gaussian mechanism on the moments about the released ``mean``
    along each direction and of the rest (the rows ``rest``, orthonormal and
    orthogonal to them: :func:`complement_basis`), in the units of
    :func:`_moment_units`; the total is their sum. One release, so the total's
    noise holds each variance's: a share ``lambda_l / total`` is read against
    the noise of the total less ``lambda_l`` (``covaried``), and a PVE near 1 is
    not drowned by a total released on its own. The mean's noise variance is
    subtracted along every direction. Returns a Bunch with ``raw``,
    ``noise_scale``, ``total``, ``total_noise`` and ``covaried``."""
    terms = _scree_terms(mean, components, rest)
    units, exact, rounding = _scree_units(terms)
    about_mean, _ = _moments_about_mean(X.projected(terms.basis), terms.along)
    n_samples, n_components = X.shape[0], components.shape[0]
    vector = about_mean[:n_components]
    if rest.shape[0]:
        vector = np.append(vector, math.fsum(about_mean[n_components:]))
    noisy, noise_scale = gaussian_mechanism(
        vector / n_samples / units,
        centred_moment_sensitivity(n_samples, vector.size, exact, rounding),
        rng=rng, noise=noise, ledger=ledger, **leaf.mechanism_budget())
    values = noisy * units - terms.mean_variance
    sds, total_sd = _scree_sds(terms, noise_scale * units)
    return Bunch(raw=values[:n_components], noise_scale=sds[:n_components],
                 total=float(math.fsum(values)), total_noise=total_sd, covaried=True)


def _moment_units(bounds, joint):
    """The units of a vector of moments with term bounds ``R_l^2`` whose
    row-wise sum is at most ``joint``, and the vector's move over them.

    Moment ``l`` is released in units of ``R_l R`` (``R`` the largest ``R_l``):
    its terms, at most ``R_l / R <= 1`` there, move by at most that when a row
    is replaced, the vector by ``sqrt(sum_l R_l^2) / R``; and, the terms being
    non-negative (``|a_l - b_l| <= max(a_l, b_l)``), by at most ``sqrt(2)``
    times the largest norm of a row's terms, ``sqrt(sum_l a_l^2 / R_l^2) <=
    sqrt(sum_l a_l) <= sqrt(joint)``, over ``R``. So moment ``l``'s noise sd is
    ``R_l min(sqrt(sum_j R_j^2), sqrt(2 joint)) / (n mu)``: between its own
    unit's (``sqrt(k) R_l^2``, the same relative noise on every moment) and one
    common unit's (the same noise on every moment), it gives the largest
    moment about the common unit's noise and the small ones (which a PVE near
    1 reads) noise in proportion to their reach. Returns ``(units, exact)``,
    ``exact`` the move in units of ``1 / n`` (for
    :func:`~sklearn_dppca._data._statistics.centred_moment_sensitivity`)."""
    reach = np.sqrt(np.asarray(bounds, dtype=float))
    largest = float(np.max(reach)) if reach.size else 0.0
    if largest <= 0:
        return np.ones(reach.size), 0.0
    each = float(np.sqrt(np.sum(reach**2)))
    norm = each if joint is None else min(each, math.sqrt(2.0 * joint))
    return _units(reach * largest), norm / largest


def release_box_variances(Y, mean, leaf, noise, rng, ledger):
    """The variance of each column of the view ``Y`` (a projection on released
    directions, or the rows: the spreads) about the released ``mean`` of its
    columns (:func:`release_box_mean`, :func:`project_mean`), one Gaussian
    mechanism on the vector of moments. The spreads' moments are each over its
    own bound (sensitivity ``sqrt(k) / n``: the same relative noise on every
    column); the moments along directions (a mean with ``joint``) in the
    units of :func:`_moment_units`, which give the largest variance about
    ``sqrt(k)`` times less noise than its own unit. The mean's noise variance
    is subtracted.

    Returns ``(variances, noise sds, bounds R_j^2)``; a variance may be negative.
    """
    about_mean, bounds = _moments_about_mean(Y, mean)
    n_samples, n_columns = Y.shape
    units, exact = _variance_units(mean)
    noisy, noise_scale = gaussian_mechanism(
        about_mean / n_samples / units,
        centred_moment_sensitivity(n_samples, n_columns, exact),
        rng=rng, noise=noise, ledger=ledger, **leaf.mechanism_budget())
    return noisy * units - mean.noise_scale**2, \
        _about_mean_sds(mean, noise_scale * units), bounds


def release_box_total(X, mean, leaf, noise, rng, ledger):
    """The total variance of the view ``X`` about its released ``mean``: the sum
    of the columns' moments over the sum of their bounds (one coordinate,
    sensitivity ``1 / n``), less the mean's noise variances. Returns ``(total,
    noise sd, bound)``."""
    about_mean, _ = _moments_about_mean(X, mean)
    n_samples = X.shape[0]
    unit = _total_unit(mean)
    noisy, noise_scale = gaussian_mechanism(
        float(np.sum(about_mean)) / n_samples / unit,
        centred_moment_sensitivity(n_samples, 1), rng=rng, noise=noise, ledger=ledger,
        **leaf.mechanism_budget())
    return float(noisy) * unit - float(np.sum(mean.noise_scale**2)), \
        _about_total_sd(mean, noise_scale * unit), unit
