"""The scree's release: private variances along given directions and the total.

:func:`release_scree` releases the raw variances and the total variance for one
scree method; :func:`feature_variances` derives each column's variance from them
(post-processing). The estimators store the results (``DPScree``, ``DPPCA``).
"""

import math

from dataclasses import replace
from fractions import Fraction

import numpy as np
from scipy.optimize import least_squares

from .._bunch import Bunch
from .._data._statistics import KENDALL_MATRIX

from ..privacy import PrivacyUtilityWarning
from .._validation import warn_user, printable
from ..privacy._warnings import warn_imprecise, warn_noise_dominated
from ._box_moments import _TAIL_WEIGHT as _MEAN_TAIL_WEIGHT
from ._box_moments import box_scree_sds, combine_means, complement_basis, \
    project_mean, release_box_mean, release_box_scree, release_box_total, \
    release_box_variances
from ._clip_bias import clip_allowance_share, heavier_than_modelled, reached_level, \
    total_allowance_share, typical_search_bias
from ._directions import squared_radius
from ._kendall_spectrum import component_scales, elliptical_ratios, elliptical_variances
from ._plan import unit_sd
from ._scree_settings import box_component_bounds, box_is_quieter, box_norm_bound, \
    box_variances_are_quieter, searched_total_sd, searched_variance_sds
from ._spread import spread_level
from ._variances import (
    clipped_to_the_bound,
    explained_variance_ratio,
    implied_feature_variances,
    post_process_variances,
    private_total_variance,
    private_variances,
    SWITCH_MARGIN,
    heavy_tail_advice,
    searched_error,
    tail_moved,
    total_clip_evidence,
    total_tail_share,
    tail_shares,
    total_at_bound,
    total_clip_bound,
    variances_clip_bounds,
)


def check_matrix_scree(method, radial):
    """The ``"matrix"`` scree reads a clipped matrix: ``radial`` (of the directions
    released or reused; None for public ones) must be ``"clipped"``. Checked
    before any computation.

    Not ``"covariance"``: each variance read off the noisy covariance along
    its own top eigenvectors is an eigenvalue of that matrix, biased up by its
    noise (262 of 318 PC1 variances off by more than 2x, the third 6 to 17
    times the table's on Gaussian data); the clipped scree with the same
    bounds reads moments about the box's private mean instead, with noise the
    directions did not choose."""
    if method == "matrix" and radial == "covariance":
        raise ValueError("The 'matrix' scree cannot read radial='covariance' "
                         "directions: the noisy covariance's eigenvalues are biased "
                         "up by its noise. Use the default scree method ('clipped'), "
                         "which reads moments about the declared box's private mean.")
    if method == "matrix" and radial != "clipped":
        given = "public (an array)" if radial is None else radial
        raise ValueError("The 'matrix' scree reads the variances off the clipped Kendall "
                         "matrix: it needs radial='clipped' directions (released in "
                         f"this fit or reused), got {given} directions.")


def total_bound_first(method, params, plan, partner_design):
    """Whether a fit's scree searches the total variance's clip bound before the
    directions' pass (:func:`release_total_bound`), from public inputs only:
    ``pairs="auto"`` would take an ``m``-partner design at the fit's row blocks
    (``partner_design``), the plan buys the bound's search, and the scree
    ``method`` (with its ``params``) may search it: not the box's moments
    (``C="box"``) nor ``"matrix"``. The auto rule's design decides, not the
    ``pairs`` given: a fit releases in the same order whatever its design, so
    ``pairs`` moves the design's sampling and never the draws (the total rides
    on the directions' pass where their design is one of partners, and takes
    a pass of its own over all pairs or where it is released later: on
    20,000 x 10 at eps 1 the default's variance error was 1.14 times all
    pairs' over 20 seeds while the two drew in different orders, 1.01 in
    one). (``bound="box-own"`` searches it first as ``"own"`` does,
    so that a box the search beats leaves the fit as it is without bounds,
    draw for draw: where the box wins, that bound goes unused.) Not
    ``"kendall"`` either: its scree reads nothing else of the rows, and its
    total's own pass is shared with the score frame's first counts (which
    wait for the directions), so riding would add a pass over the data, not
    save one (a Dask fit's cost)."""
    if not partner_design or "loading" not in plan \
            or "scree/total variance/clip bound" not in plan:
        return False
    if method in ("matrix", "kendall"):
        return False
    return not (method == "clipped" and params.get("C") == "box")


def release_total_bound(X, *, method, params, budget, pairs, rng, ledger):
    """Release the total variance's clip bound ``C`` now, before the directions'
    pass, and let the total ride on that pass.

    The scree reads the total as ``mean min(||x_a - x_b||^2 / 2, C)`` over an
    ``m``-partner design: the Kendall matrix's pass reads every pair's squared
    distance anyway, so with ``C`` released first it sums these terms too
    (:meth:`~sklearn_dppca._data._rows.Rows.ride_on_pair_sum`), and the total
    needs no pass of its own. Same search, level and budget as the scree's own
    (:func:`_total_level`), only earlier: the ledger lists it before the
    directions. ``budget``: the scree's part. Returns ``C`` (for
    :func:`release_scree`'s ``total_bound``).
    """
    bound = total_clip_bound(X, budget.part("total variance"), rng, ledger, pairs=pairs,
                             quantile_level=_total_level(method, params, budget,
                                                         X.shape[0]))
    if math.isfinite(2.0 * bound) and bound > 0:
        X.ride_on_pair_sum(KENDALL_MATRIX, 2.0 * bound)
    return bound


def _total_level(method, params, budget, n_samples):
    """The level of the total's clip-bound search: the variances' for
    ``"clipped"``; as high as its budget allows for ``"kendall"`` (its clipping
    bias is not cancelled by a ratio, :func:`_elliptical_scree`); the default
    for the one-dimensional estimators."""
    if method == "kendall":
        return max(spread_level(n_samples // 2, budget["total variance/clip bound"].eps),
                   0.5)
    return params["quantile_level"] if method == "clipped" else None


def release_scree(X, components, *, method, params, budget, noise, pairs, rng, ledger,
                  kendall=None, total_bound=None):
    """Variances along the rows of ``components`` and the total variance.

    ``budget``: the scree's part (:func:`~._scree_settings.scree_parts`; None for
    ``"matrix"``), whose ``total variance`` takes ``TOTAL_SHARE`` of it. The total
    is the norm-clipped U-statistic at the level of the clipped scree (the same
    clipped second moment, so the PVE is not biased by clipping).
    ``method="kendall"`` and ``"matrix"`` need ``kendall``, a Bunch with the
    released Kendall ``matrix`` (whose eigenvectors are ``components``), its
    ``noise_scale`` and ``radius``. ``total_bound``: the total's clip bound
    where :func:`release_total_bound` released it before the directions (its
    search is then not run again).

    Returns a Bunch with ``raw`` and ``noise_scale`` (per component), ``bounds``
    (the clip bounds, or None), ``total`` and ``total_noise``, all finite.
    """
    released = _release_scree(X, components, method=method, params=params,
                              budget=budget, noise=noise, pairs=pairs, rng=rng,
                              ledger=ledger, kendall=kendall, total_bound=total_bound)
    # Released values are finite but for an overflow (a clip bound near the top
    # of the float range times a large noise, a radius past sqrt(max float)
    # squared): clamp them (post-processing), so that nothing after the charge
    # raises on them (monotone_scree refuses values that are not finite).
    n_terms = len(released.raw)
    return Bunch(released, raw=_finite(released.raw, n_terms),
                 noise_scale=_finite(released.noise_scale, n_terms),
                 total=float(_finite(released.total, n_terms)),
                 total_noise=float(_finite(released.total_noise, n_terms)))


def _release_scree(X, components, *, method, params, budget, noise, pairs, rng, ledger,
                   kendall=None, total_bound=None):
    """:func:`release_scree` before its values are clamped to finite ones."""
    if method == "kendall":
        return _elliptical_scree(X, components, budget, kendall, noise=noise, pairs=pairs,
                                 rng=rng, ledger=ledger, total_bound=total_bound)
    if method == "matrix":
        return _matrix_scree(components, kendall)
    if method == "clipped" and params.get("C") == "box":
        released = _box_scree(X, components, budget, noise, rng, ledger)
    elif method == "clipped" and params.get("bound") == "box":
        released = _box_or_search_scree(X, components, params, budget, noise, pairs, rng,
                                        ledger, total_bound)
    elif method == "clipped" and params.get("bound") == "box-own":
        released = _box_or_own_scree(X, components, params, budget, noise, pairs, rng,
                                     ledger, total_bound)
    else:
        released = _searched_scree(*_clipped_scree(
            X, components, method, params, budget, noise, pairs, rng, ledger, kendall,
            total_bound))
    clipped = released
    if method == "clipped" and params.get("elliptical") == "auto" \
            and kendall is not None and kendall.radius is None and _combinable(released):
        raw, noise_scale, total, total_noise = _combine_elliptical(
            released.raw, released.noise_scale, released.total, released.total_noise,
            kendall, X.shape[0], rng)
        # (the combined values' noises are no longer the sums of one release's)
        released = Bunch(released, raw=raw, noise_scale=noise_scale, total=total,
                         total_noise=total_noise, covaried=False)
    if method != "clipped":
        return released
    # (after the combination, which weighs the values by their noise alone: the
    # allowances are biases the Kendall ratios and the total share)
    shares, total_share, beyond = _allowance_shares(X, components, params, budget,
                                                    kendall, clipped, released)
    raw, noise_scale, carried = _at_midpoint(released.raw, released.noise_scale, shares)
    total, total_noise, total_carried = _at_midpoint(released.total, released.total_noise,
                                                     total_share)
    total_noise = _total_noise_below_variances(clipped, components, total, total_noise,
                                               bounded=X.widths() is not None)
    return Bunch(released, raw=raw, noise_scale=noise_scale, total=float(total),
                 total_noise=float(total_noise), allowance=carried,
                 total_allowance=float(total_carried), heavier_than_modelled=beyond)


def _combinable(released):
    """Whether the elliptical joint fit (:func:`_combine_elliptical`) may take
    the clipped scree's ``released`` values: not the box's moments, whose
    total holds each variance's noise (``covaried``), where the fit takes the
    three releases' noises as independent (digits with its observed ranges
    at eps 1, its scree the box's: 0.74 of PC1's variance, from the model at
    a quarter of the box's sd, 5.8 sds low)."""
    return not np.any(released.get("covaried", False))


def _allowance_shares(X, components, params, budget, kendall, clipped, released):
    """The clipping allowances (:mod:`._clip_bias`) of the clipped scree's
    variances, as released before any combination (``clipped``), and of its
    total (``released``'s, read with the final variances), as shares of their
    values; 0 for a value its bound clipped nowhere (a searched bound at or
    past the declared box's). A searched bound's Gaussian reading is capped at
    the level its search reaches on average (:func:`_bound_reached`), its
    tail-weighted reading taken at the level the search aimed at, which needs
    the bound to be the level quantile of the very terms it clips: not the
    variances' where they clip at the total's bound. Also, per variance,
    whether its tail-weighted reading or the total's found a tail heavier
    than it models (:func:`~._clip_bias.heavier_than_modelled`; fits without
    declared bounds, whose tail counts send such a tail to the box's
    moments). Public inputs and released values only."""
    n_samples, widths = X.shape[0], X.widths()
    searched = isinstance(params.get("C"), str) and params.get("C") != "box" \
        and clipped.bounds is not None
    total_searched = isinstance(params.get("C"), str) \
        and clipped.get("total_bound") is not None
    own = params.get("bound") not in ("total", "box")
    together = params.get("clip") != "component"
    level = _bound_level(params, budget, n_samples) if searched else None
    shares = clip_allowance_share(
        clipped.raw, clipped.bounds, together=together,
        scales=_scales(params, kendall, components.shape[0]), level=level,
        reached=_bound_reached(params, budget, n_samples) if searched else None,
        tail_weighted=searched and own)
    beyond = heavier_than_modelled(
        clipped.raw, clipped.bounds, together=together,
        level=level if searched and own and widths is None else None)
    total_level = _total_level("clipped", params, budget, n_samples)
    total_share = _total_allowance(X, released.total, clipped.get("total_bound"),
                                   released.raw, total_level,
                                   _total_reached("clipped", params, budget, n_samples)
                                   if total_searched else None)
    if widths is None and total_share > 0:
        beyond = beyond | bool(heavier_than_modelled(
            [released.total], clipped.get("total_bound"), together=True,
            level=total_level)[0])
    if widths is not None:
        shares = np.where(_unclipped_by_box(widths, components, clipped, params), 0.0,
                          shares)
    return shares, total_share, beyond


def _total_allowance(X, total, bound, variances, level, reached=None):
    """The total's clipping allowance as a share of it
    (:func:`~._clip_bias.total_allowance_share`), 0 where its bound reached the
    declared box's bound on every term (public), so that nothing was clipped."""
    widths = X.widths()
    if bound is not None and widths is not None and bound >= box_norm_bound(widths):
        return 0.0
    return total_allowance_share(total, bound, variances, X.shape[1], level=level,
                                 reached=reached)


def _unclipped_by_box(widths, components, clipped, params):
    """Per variance, whether its searched bound reached the declared box's
    bound on its terms (public), so that nothing was clipped."""
    bounds = clipped.bounds
    if bounds is None:
        return np.zeros(components.shape[0], dtype=bool)
    from_box = clipped.get("covaried")
    searched = ~np.asarray(from_box, dtype=bool) if np.ndim(from_box) == 1 \
        else np.ones(components.shape[0], dtype=bool)
    reach = np.full(components.shape[0], np.inf)
    if params.get("clip") == "component":
        reach[searched] = box_component_bounds(widths, components[searched])
    elif params.get("clip") == "norm":
        reach[searched] = box_norm_bound(widths, components[searched])
    return np.broadcast_to(np.asarray(bounds, dtype=float),
                           reach.shape) >= reach * (1 - 1e-12)


def _bound_level(params, budget, n_samples):
    """The level of the search that found the variances' searched clip
    bound(s) (public): the total's where they clip at its bound."""
    if params.get("bound") in ("total", "box"):
        return _total_level("clipped", params, budget, n_samples)
    return params.get("quantile_level")


def _bound_reached(params, budget, n_samples):
    """The level the search of :func:`_bound_level` reaches on average
    (:func:`~._clip_bias.reached_level`; public)."""
    if params.get("bound") in ("total", "box"):
        return _total_reached("clipped", params, budget, n_samples)
    # (one norm bound's leaf, or the first of the per-component ones: they
    # share the search's budget evenly)
    leaf = "clip bound" if params["clip"] != "component" else "clip bound PC1"
    return reached_level(params.get("quantile_level"), budget.part("variances")[leaf].eps,
                         n_samples // 2)


def _total_reached(method, params, budget, n_samples):
    """The level the total's clip-bound search at :func:`_total_level`
    reaches on average (public)."""
    return reached_level(_total_level(method, params, budget, n_samples),
                         budget["total variance/clip bound"].eps, n_samples // 2)


def _at_midpoint(values, sds, share):
    """Clipped ``values`` read at the middle of the losses their clipping allows.

    Clipping only lowers a value: with the allowance ``share`` of each value
    (:mod:`._clip_bias`, the loss its readings give), the unclipped value lies,
    by those readings, between the value and ``(1 + share)`` times it. The
    value is moved to the middle; its sd keeps the whole allowance in
    squares (:func:`_with_allowance`), since the readings are models and a
    search that stopped below the level it reaches on average loses more:
    read at the middle with half the allowance, breast cancer's variances
    without a box printed 4 of 23 values more than 4 sds from the table's
    (none with the whole). Not where the model could not explain the value
    (``share`` at least 1: its loss has no bound) or its sd was raised to it
    (:func:`_raised`). Post-processing of released values. Returns the values,
    their sds and the share of each value its sd carries (``_noise_alone``
    undoes it).
    """
    values, sds = np.asarray(values, dtype=float), np.asarray(sds, dtype=float)
    share = np.broadcast_to(np.asarray(share, dtype=float), values.shape)
    moved = (share > 0) & (share < 1) & (values > 0) & ~_raised(values, sds)
    loss = np.where(moved, share * values, 0.0)
    middle = values + loss / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        carried = np.where(moved, loss / middle, share)
    return middle, _with_allowance(values, sds, share), carried


def _with_allowance(raw, sds, share):
    """The values' sds with the clipping allowance (``share`` of each value,
    :mod:`._clip_bias`) added in squares; not where an sd was raised to its
    value (its warning has said it is not estimable)."""
    raw, sds = np.asarray(raw, dtype=float), np.asarray(sds, dtype=float)
    return np.where(_raised(raw, sds), sds, np.hypot(sds, share * np.abs(raw)))


def _box_scree(X, components, budget, noise, rng, ledger):
    """The clipped scree with declared bounds (``C="box"``): the variances along
    the directions and the total variance as second moments about one private
    mean, each bounded by the box
    (:mod:`~sklearn_dppca._algorithms._box_moments`): no search, no term
    clipped. The mean first, then one release of the variances and the rest
    (:func:`~._box_moments.release_box_scree`) on the variances' and the total's
    leaves joined; under basic accounting or for directions that are not
    orthonormal, the total and then the variances, each on its own leaf.
    Returns the scree's Bunch (bounds None)."""
    mean = release_box_mean(X, budget["mean"], noise, rng, ledger, common_unit=True)
    return _box_moments_scree(X, mean, components, budget, noise, rng, ledger)


def _box_moments_scree(X, mean, components, budget, noise, rng, ledger):
    """The box's variances and total about the released ``mean`` (see
    :func:`_box_scree`): one release on the two leaves joined, or, where they
    cannot be joined (``accounting="basic"``: no ``mu`` to add in squares) or
    the directions are not orthonormal, the total and the variances each on its
    own leaf."""
    rest = complement_basis(components)
    statistic, total_statistic = budget["variances/statistic"], \
        budget["total variance/statistic"]
    if rest is not None and statistic.mu is not None and total_statistic.mu is not None:
        released = release_box_scree(X, mean, components, rest,
                                     _joined(statistic, total_statistic), noise, rng,
                                     ledger)
        return Bunch(released, bounds=None)
    total, total_noise = release_box_total(X, mean, total_statistic, noise, rng,
                                           ledger)[:2]
    raw, noise_scale, _ = release_box_variances(
        X.projected(components), project_mean(mean, components), statistic, noise, rng,
        ledger)
    return Bunch(raw=raw, noise_scale=noise_scale, bounds=None, total=total,
                 total_noise=total_noise)


def _searched_scree(raw, noise_scale, bounds, total, total_noise, total_bound=None):
    """The scree's Bunch of separately released variances and total (clipped
    at ``total_bound``, public)."""
    return Bunch(raw=raw, noise_scale=noise_scale, bounds=bounds, total=total,
                 total_noise=total_noise, total_bound=total_bound)


#: The share (of ``mu^2``) of the box's mean released first, to see how far the
#: mean lies from the box's centre before the box's moments are chosen: a mean
#: near an edge widens every term bound up to four times. Where the search then
#: wins, only this share is lost to it (its noise sd rises by a factor
#: ``1 / sqrt(1 - share x BOX_MEAN_SHARE)``, 4%); where the box wins, the rest is
#: released and the two are combined (:func:`~._box_moments.combine_means`).
_FIRST_MEAN_SHARE = 0.25


def _split_leaf(leaf, share):
    """Two Gaussian leaves named as ``leaf`` that spend together at most what it
    does: ``share`` of its ``mu^2`` and the rest (never an ulp over, as
    :func:`_joined`); None under basic accounting (no ``mu`` to split)."""
    if leaf.mu is None:
        return None
    first, rest = leaf.mu * math.sqrt(share), leaf.mu * math.sqrt(1.0 - share)
    while Fraction(first)**2 + Fraction(rest)**2 > Fraction(leaf.mu)**2:
        rest = math.nextafter(rest, 0.0)
    return replace(leaf, mu=first), replace(leaf, mu=rest)


def _box_mean_in_two(X, leaf, box_for, noise, rng, ledger, tail=None, mixed=False):
    """The box's mean where the box's moments win, with the decision read off a
    first release of part of it (public: the released part and the box).

    ``box_for(guess, unspent)`` tells, from a guess of the released mean (the
    first part's value with the whole mean's noise sd, and with ``tail`` the
    released tail shares), where the box's form wins over the search's with
    ``unspent`` (the leaf of the part not yet released, or None) joined to it:
    a bool, or one per variance. The box is taken where it wins for every
    variance, or, with ``mixed`` (and a ``mu`` to split: not under basic
    accounting), for any. ``tail``: tail shares
    (:func:`~._variances.tail_shares`) released with the first part. Returns
    ``(mean, unspent, verdict)``: the whole mean (both parts combined) and None
    where the box is taken; None and the leaf of the part not released where
    it is not (its budget goes to the search's statistic); ``verdict``,
    ``box_for``'s last answer. Under basic accounting the whole mean is
    released, then decided on."""
    parts = _split_leaf(leaf, _FIRST_MEAN_SHARE)
    if parts is None:
        mean = release_box_mean(X, leaf, noise, rng, ledger, common_unit=True, tail=tail)
        verdict = box_for(mean, None)
        return (mean if np.all(verdict) else None), None, verdict
    first_leaf, rest_leaf = parts
    first = release_box_mean(X, first_leaf, noise, rng, ledger, common_unit=True,
                             tail=tail)
    # the first part's offset from the centre, less one of its noise sds (its
    # noise alone would push every guessed bound out), with the whole's noise sd
    offset = first.mean - first.centre
    guess = Bunch(first, mean=first.centre + np.sign(offset) * np.maximum(
        np.abs(offset) - first.noise_scale, 0.0),
        noise_scale=first.noise_scale * (first_leaf.mu / leaf.mu))
    verdict = box_for(guess, rest_leaf)
    if not (np.any(verdict) if mixed else np.all(verdict)):
        return None, rest_leaf, verdict
    rest = release_box_mean(X, rest_leaf, noise, rng, ledger, common_unit=True)
    return combine_means(first, rest), None, verdict


def _box_or_search_scree(X, components, params, budget, noise, pairs, rng, ledger,
                         total_bound=None):
    """``bound="box"``: the total's clip bound is searched first; then the form
    with the less noise releases the total and the variances: the box's moments
    about its private mean (:func:`_box_moments_scree`), or the pair statistics
    clipped at the released bound. Public values only decide, twice: before the
    mean, with the mean assumed at the box's centre
    (:func:`~._scree_settings.box_is_quieter`); where the search wins there, the
    mean is not released and its budget joins the variances' (the releases,
    budgets and draws of ``bound="total"`` without bounds, in its order). Where
    the box wins, a first part of the mean is released and the total's noise
    about it must still be at most the search's error (:func:`_box_mean_in_two`):
    its noise and, in squares, the clipping bias its search typically leaves
    (:func:`~._clip_bias.typical_search_bias`; the box's moments clip
    nothing); else the search's form runs, the mean's unspent part joining the
    variances'. (The first look weighs the noises alone: where the search wins
    it, the fit is the one without bounds, draw for draw.) Returns the scree's
    Bunch, the bounds None for the box's form."""
    total_part = budget.part("total variance")
    bound = total_bound if total_bound is not None else total_clip_bound(
        X, total_part, rng, ledger, pairs=pairs,
        quantile_level=_total_level("clipped", params, budget, X.shape[0]))
    n_samples = X.shape[0]
    box_leaf = _joined(budget["variances/statistic"], total_part["statistic"])
    units = tuple(unit_sd(leaf, noise) for leaf in (budget["mean"], box_leaf,
                                                    total_part["statistic"])) \
        + (_own_total_unit(budget, noise),)
    unspent = budget["mean"]
    if box_is_quieter(X.widths() / 2, components, bound, units, n_samples):
        rest = complement_basis(components)
        bias = typical_search_bias(bound, _total_reached("clipped", params, budget,
                                                         n_samples))
        mean, unspent, _ = _box_mean_in_two(
            X, budget["mean"],
            lambda guess, _: box_scree_sds(guess, components, rest, n_samples,
                                           units[1], units[3])[1]
            <= math.hypot(searched_total_sd(bound, n_samples, units[2]), bias),
            noise, rng, ledger)
        if mean is not None:
            return _box_moments_scree(X, mean, components, budget, noise, rng, ledger)
    leaf = budget["variances/statistic"] if unspent is None else \
        _joined(budget["variances/statistic"], unspent)
    total, total_noise = total_at_bound(X, bound, total_part["statistic"], noise, rng,
                                        ledger, pairs=pairs)
    evidence = []
    raw, noise_scale, bounds = private_variances(
        X, components, method="clipped", params=dict(params, C=bound),
        budget={"statistic": leaf}, noise=noise, rng=rng, ledger=ledger,
        evidence=evidence)
    return _searched_scree(raw, _widened_variance_noise(raw, noise_scale, bounds), bounds,
                           total, _total_noise_past_tail(
                               total, _widened_total_noise(total, total_noise, bound),
                               bound, evidence, bounded=True), bound)


def _box_or_own_scree(X, components, params, budget, noise, pairs, rng, ledger,
                      total_bound=None):
    """``bound="box-own"``: the variances' clip bound(s) are searched first (one
    in norm or one per component, as ``bound="own"`` clips); then each variance
    takes the form that suits it: the box's moments about its private mean
    (:func:`_box_moments_scree`) or the pair statistic clipped at its released
    bound. Public values only decide, twice, as in
    :func:`_box_or_search_scree`: before the mean, with the mean assumed at the
    box's centre (:func:`~._scree_settings.box_variances_are_quieter`; where
    the search is quieter for every variance, and the tail shares could not
    show a tail (:func:`_tail_may_show`), the mean is not released and its
    budget joins the variances': the releases, budgets and draws of
    ``bound="own"`` without bounds, in its order); then with the noise about a
    first part of the mean, released with the searched bounds' tail shares
    (:func:`_box_mean_in_two`): the box takes a variance where its noise is
    less than the search's error (:func:`_box_verdict`: its noise and the
    clipping bias the search typically leaves), or where the tail shares show
    that the clipping would move the
    search's value by more than its noise (:func:`~._variances.tail_moved`: a
    heavy tail, such as adult's top-coded capital gains, which a box clips
    nowhere). The box for every variance: its moments give the variances and
    the total (the total's bound, released before the directions, goes
    unused: :func:`total_bound_first`). For some
    (:func:`_mixed_scree`): those from the box, the others clipped, the total
    the box's. For none: the pair statistics at the released bounds, the
    mean's unspent part joined, then the total's search and statistic.
    Returns the scree's Bunch, the bounds None for the box's form."""
    part = budget.part("variances")
    bounds = variances_clip_bounds(X, components, params, part, rng, ledger)
    box_leaf = _joined(part["statistic"], budget["total variance/statistic"])
    units = tuple(unit_sd(each, noise) for each in (
        budget["mean"], box_leaf, _joined(part["statistic"], budget["mean"]))) \
        + (_own_total_unit(budget, noise),)
    n_samples, n_components = X.shape[0], components.shape[0]
    unspent = budget["mean"]
    level = params["quantile_level"]
    tail = _with_total_share(
        tail_shares(X.projected(components), params["clip"], bounds,
                    _box_term_bounds(X.widths(), components, params["clip"])),
        X, total_bound, level, budget, noise)
    search_sds = searched_variance_sds(bounds, n_components, n_samples, units[2])
    may_show = _tail_may_show(tail, level, search_sds, budget["mean"], noise)
    if may_show or box_variances_are_quieter(X.widths() / 2, components, bounds, units,
                                             n_samples):
        rest = complement_basis(components)
        bias = typical_search_bias(bounds, _bound_reached(params, budget, n_samples))

        def box_for(guess, unspent):
            box_sds, _ = box_scree_sds(guess, components, rest, n_samples, units[1],
                                       units[3])
            search = part["statistic"] if unspent is None else \
                _joined(part["statistic"], unspent)
            search_sds = searched_variance_sds(bounds, n_components, n_samples,
                                               unit_sd(search, noise))
            if not may_show:
                # (all or none: a split leaf would give the largest variance
                # more noise for a quieter small one)
                return np.full(box_sds.shape,
                               np.all(box_sds <= np.hypot(search_sds, bias)))
            return _box_verdict(box_sds, search_sds, guess, tail, bias)

        # (the tail shares ride on the mean only where they could show a tail:
        # elsewhere the first look is as it was without them)
        mean, unspent, verdict = _box_mean_in_two(X, budget["mean"], box_for, noise,
                                                  rng, ledger, tail if may_show else None,
                                                  mixed=True)
        if mean is not None and np.all(verdict):
            return _box_moments_scree(X, mean, components, budget, noise, rng, ledger)
        if mean is not None:
            return _mixed_scree(X, mean, components, verdict, bounds, params, budget,
                                noise, rng, ledger)
    leaf = part["statistic"] if unspent is None else _joined(part["statistic"], unspent)
    evidence = []
    raw, noise_scale, bounds = _searched_variances(X, components, bounds, params, leaf,
                                                   noise, rng, ledger, evidence)
    total, total_noise, total_bound = _total_variance(
        X, budget, noise, pairs, _total_level("clipped", params, budget, n_samples), rng,
        ledger, total_bound)
    return _searched_scree(raw, noise_scale, bounds, total, _total_noise_past_tail(
        total, total_noise, total_bound, evidence, bounded=True), total_bound)


def _box_term_bounds(widths, components, clip):
    """The box's bound on the searched statistics' terms (public): per
    component, or one in norm."""
    if clip == "component":
        return box_component_bounds(widths, components)
    return [box_norm_bound(widths, components)]


def _box_verdict(box_sds, search_sds, guess, tail, bias=0.0):
    """Per variance, whether the box's moments take it, from the tail shares
    released with the first part of the box's mean (``guess``; public), the
    clipped values' noise sds ``search_sds`` and the box's ``box_sds``.

    The box takes a variance where its noise is at most the clipped value's
    error (:func:`~._variances.searched_error`: the noise and the bias the
    shares prove at two of their sds; and ``bias``, the clipping bias its
    search typically leaves, :func:`~._clip_bias.typical_search_bias`, each
    added in squares), or where the shares show the clipping
    moved the value by more than its noise at
    :data:`~._variances.SWITCH_MARGIN` sds (:func:`tail_moved`: a heavy tail,
    whatever the box's noise). Where the total's share rides with them
    (:func:`_with_total_share`) and shows its clipping at those three sds
    (:func:`_total_moved`), the box gives the total, which it does in any
    split, with the variances it takes, or with every one where it takes
    none. Where no share shows a tail, all or none.

    Why the bias counts: adult with its ranges at eps 1, a norm bound that
    left 0.7% of the pairs past halfway to the box's term bound (2.7 of the
    shares' sds) against a box whose noise was 1.08 times the search's; the
    search's value kept 0.69 of the capital-gain variance and its own tail
    count then made every variance and the total not estimable. The shares
    are read two sds down (as for a value's "not estimable"), not three as for
    :func:`tail_moved`: a pure-noise share through here (2.3% of them) costs at
    most the two noises' difference, which the error bounds, where a switch
    by :func:`tail_moved` takes the box whatever its noise."""
    shares = guess.shares[:len(guess.shares) - ("total_loss" in tail)]
    quieter = box_sds <= np.hypot(searched_error(shares, guess.share_noise, tail.losses,
                                                 search_sds), bias)
    moved = tail_moved(shares, guess.share_noise, tail.losses, search_sds,
                       SWITCH_MARGIN)
    taken = quieter | moved
    if "total_loss" in tail and _total_moved(guess, tail):
        # (the box gives the total in any split: with the variances it suits,
        # or every one)
        return taken if np.any(taken) else np.ones_like(taken)
    if np.any(moved):
        return taken
    return np.full(quieter.shape, np.all(quieter))


def _total_moved(guess, tail):
    """Whether the total's tail share, released with the first part of the
    box's mean (:func:`_with_total_share`), shows that the clipping at the
    total's bound would move it by more than its noise sd, at
    :data:`~._variances.SWITCH_MARGIN` of the share's sds (post-processing)."""
    share = guess.shares[-1:] / tail.total_weight
    return bool(tail_moved(share, guess.share_noise / tail.total_weight,
                           [tail.total_loss], [tail.total_sd], SWITCH_MARGIN)[0])


#: The total's tail share's weight in the shares released with the first part
#: of the box's mean, against the variances' (in sensitivity): it raises their
#: noise by ``sqrt(1 + w^2)`` (12% at a half), and its own noise is theirs over
#: ``w``. At a half, adult's total share (1% of the pairs) stands above its
#: switch's three sds from eps 2, and where it cannot it does not ride.
_TOTAL_SHARE_WEIGHT = 0.5


def _with_total_share(tail, X, total_bound, level, budget, noise):
    """The variances' tail shares ``tail`` (:func:`~._variances.tail_shares`)
    with the total's appended, where its clip bound was released before the
    directions (public ``total_bound``) and its share, released with the first
    part of the box's mean, could show the total's clipping (public: as
    :func:`_tail_may_show` asks of the variances'); else ``tail`` as it is.

    The total's share (:func:`~._variances.total_tail_share`, on the matching
    its bound's search read) is scaled to :data:`_TOTAL_SHARE_WEIGHT` of the
    variances' sensitivity (``total_weight``): a row is in one pair of each
    matching, so the joined shares move by at most ``sqrt(1 + w^2)`` times
    the variances'. With it come the least loss of each pair past its
    threshold (``total_loss``) and the noise sd of the total's statistic at
    its bound (``total_sd``). Where the total's share shows its clipping, the
    box gives the total (:func:`_box_verdict`): adult with its ranges at eps
    4 clipped the total below capital gain's top-coded pairs while every
    variance stayed searched, and its own count then made the total and each
    PVE not estimable."""
    if total_bound is None:
        return tail
    total = total_tail_share(X, total_bound)
    weight = _TOTAL_SHARE_WEIGHT * tail.sensitivity / total.sensitivity
    joint = Bunch(tail, shares=np.append(tail.shares, total.shares * weight),
                  sensitivity=math.hypot(1.0, _TOTAL_SHARE_WEIGHT) * tail.sensitivity,
                  total_weight=weight, total_loss=float(total.losses[0]),
                  total_sd=searched_total_sd(
                      total_bound, X.shape[0],
                      unit_sd(budget["total variance/statistic"], noise)))
    # (its noise in its own units: the joined shares' over its weight)
    share_noise = _first_share_noise(joint.sensitivity, budget["mean"], noise) / weight
    return joint if _could_show(joint.total_loss, share_noise, level, joint.total_sd) \
        else tail


def _tail_may_show(tail, level, search_sds, mean_leaf, noise):
    """Whether the tail shares, released with the first part of the box's mean
    (:func:`_box_mean_in_two`), could show the clipping moving a searched
    variance (or the total, where its share rides with them:
    :func:`_with_total_share`) by more than its noise sd ``search_sds`` (public:
    the released bounds, the search's level, ``n`` and the budget). A search
    stops up to about as far below its level as its tail
    (:func:`~._scree_settings._choose_level`), so up to about ``2 (1 -
    level)`` of the terms lie above its bound, and above
    ``_TAIL`` bounds as many where the tail is heavy (adult's capital gains at
    eps 4: 0.98% at the level 0.995): a share that large, less
    :data:`~._variances.SWITCH_MARGIN` of its noise sds, times
    the loss per term (:func:`~._variances.tail_shares`) must exceed the sd. On
    small tables the shares' noise is larger than any such share and the box
    is not looked at for them (the fit without bounds, draw for draw)."""
    if "total_loss" in tail:
        return True  # (it rides only where it could show: _with_total_share)
    return _could_show(tail.losses, _first_share_noise(tail.sensitivity, mean_leaf, noise),
                       level, search_sds)


def _could_show(losses, share_noise, level, sds):
    """Whether a share a search at ``level`` may leave past its threshold,
    ``2 (1 - level)``, less :data:`~._variances.SWITCH_MARGIN` of its noise
    sds ``share_noise``, times the least loss per term ``losses``, exceeds a
    noise sd in ``sds`` (public)."""
    seen = max(2.0 * (1.0 - level) - SWITCH_MARGIN * share_noise, 0.0)
    return bool(np.any(np.asarray(losses) * seen > np.asarray(sds)))


def _first_share_noise(sensitivity, mean_leaf, noise):
    """The noise sd of a tail share released with the first part of the box's
    mean (:func:`_box_mean_in_two`; public): the shares of L2 ``sensitivity``
    ride at ``_MEAN_TAIL_WEIGHT`` of the mean's."""
    parts = _split_leaf(mean_leaf, _FIRST_MEAN_SHARE)
    first = mean_leaf if parts is None else parts[0]
    return math.hypot(1.0, _MEAN_TAIL_WEIGHT) / _MEAN_TAIL_WEIGHT * sensitivity \
        * unit_sd(first, noise)


def _searched_variances(X, components, bounds, params, leaf, noise, rng, ledger,
                        evidence=None):
    """The variances along ``components`` clipped at their released ``bounds``
    (public now) on the Gaussian ``leaf``, the noise sd of a value at its bound
    raised to it. ``evidence``: see :func:`~._variances.private_variances`.
    Returns ``(raw, noise sds, bounds)``."""
    public = float(bounds[0]) if params["clip"] != "component" else bounds
    raw, noise_scale, bounds = private_variances(
        X, components, method="clipped", params=dict(params, C=public),
        budget={"statistic": leaf}, noise=noise, rng=rng, ledger=ledger,
        evidence=evidence)
    return raw, _widened_variance_noise(raw, noise_scale, bounds), bounds


def _mixed_scree(X, mean, components, from_box, bounds, params, budget, noise, rng,
                 ledger):
    """The scree of :func:`_box_or_own_scree` where a heavy tail beyond the
    searched bounds gives some variances (the mask ``from_box``) to the box's
    moments and the search keeps the others. The variances' statistic leaf is
    split in ``mu^2`` by their counts. The box's moments along its directions
    and the rest (everything orthogonal to them, the searched directions
    included) are one release on its share joined with the total's leaf, whose
    sum is the total (the total's search would clip the same tail): a variance
    from the box shares its noise with the total (``covaried``), a searched
    one does not. The others are clipped at their released bounds (with their
    tail counts) on the other share. ``bounds`` of the result: each searched
    variance's clip bound (the norm bound, for norm clipping, on each), NaN for
    the box's."""
    from_search = ~from_box
    statistic = budget["variances/statistic"]
    search_leaf, box_leaf = _split_leaf(statistic, np.count_nonzero(from_search)
                                        / from_box.size)
    box_components = components[from_box]
    released = release_box_scree(
        X, mean, box_components, complement_basis(box_components),
        _joined(box_leaf, budget["total variance/statistic"]), noise, rng, ledger)
    searched = components[from_search]
    own = bounds if params["clip"] != "component" else bounds[from_search]
    raw_searched, sds_searched, own = _searched_variances(X, searched, own, params,
                                                          search_leaf, noise, rng, ledger)
    raw, sds = np.empty(from_box.size), np.empty(from_box.size)
    clip = np.full(from_box.size, np.nan)
    raw[from_box], sds[from_box] = released.raw, released.noise_scale
    raw[from_search], sds[from_search], clip[from_search] = raw_searched, sds_searched, own
    return Bunch(raw=raw, noise_scale=sds, bounds=clip, total=released.total,
                 total_noise=released.total_noise, covaried=from_box.copy())


def _own_total_unit(budget, noise):
    """The sd per unit of sensitivity of the box's total where it is released on
    its own leaf (basic accounting: :func:`_box_moments_scree`), None where it
    is one release with the variances."""
    statistic, total = budget["variances/statistic"], budget["total variance/statistic"]
    return None if statistic.mu is not None and total.mu is not None else \
        unit_sd(total, noise)


def _joined(leaf, other):
    """One Gaussian leaf spending what ``leaf`` and ``other`` would in the GDP
    block: their ``mu`` in squares, at most the exact composition (never an ulp
    over what the plan allocated); named as ``leaf``. Under basic accounting
    ``leaf`` as it is: ``other`` is left unspent (a joined ``eps`` could leave
    the classical calibration's range after the charge)."""
    if leaf.mu is None or other.mu is None:
        return leaf
    mu = math.hypot(leaf.mu, other.mu)
    while Fraction(mu)**2 > Fraction(leaf.mu)**2 + Fraction(other.mu)**2:
        mu = math.nextafter(mu, 0.0)
    return replace(leaf, mu=mu)


def _clipped_scree(X, components, method, params, budget, noise, pairs, rng, ledger,
                   kendall, total_bound=None):
    """The variances along the directions and the total variance from clipped
    pair statistics (clip bounds searched or given) or the one-dimensional
    estimators; the noise sd of a release at its clip bound raised to it.
    Returns ``(raw, noise_scale, bounds, total, total_noise, total_bound)``."""
    level = _total_level(method, params, budget, X.shape[0])
    if method == "clipped" and params.get("bound") == "total":
        # the total first: the variances clip at its released bound (public now)
        total, total_noise, total_bound = _total_variance(X, budget, noise, pairs,
                                                          level, rng, ledger, total_bound)
        params = dict(params, C=total_bound)
    scales = _scales(params, kendall, components.shape[0])
    evidence = []
    raw, noise_scale, bounds = private_variances(
        X, components, method=method, params=params, budget=budget.part("variances"),
        noise=noise, rng=rng, ledger=ledger, scales=scales, evidence=evidence)
    if not (method == "clipped" and params.get("bound") == "total"):
        total, total_noise, total_bound = _total_variance(X, budget, noise, pairs, level,
                                                          rng, ledger, total_bound)
    return (raw, _widened_variance_noise(raw, noise_scale, bounds, scales), bounds, total,
            _total_noise_past_tail(total, total_noise, total_bound, evidence,
                                   bounded=X.widths() is not None), total_bound)


def _total_noise_past_tail(total, total_noise, total_bound, evidence, bounded):
    """The total's noise sd, raised to the total where the variances' tail
    counts prove that its clipping at ``total_bound`` lowered it by more than
    that sd (:func:`~._variances.total_clip_evidence`; post-processing of
    released values): a heavy tail along a direction is in the total too, which
    its own count, at a quarter of its statistic's sensitivity, may not see
    (adult without bounds at eps 0.5: totals 0.10 to 0.15 of the table's, 85 to
    233 sds below it, printed in 10 fits of 21)."""
    if total_bound is None or not total_clip_evidence(evidence, total_bound) > total_noise:
        return total_noise
    warn_user(
        "The private total variance is clipped below a heavy tail that the tail "
        "counts of the variances saw: its clipping lowered it by more than its "
        "noise, so it (and each PVE) is not estimable. " + heavy_tail_advice(bounded),
        PrivacyUtilityWarning,
    )
    return max(total_noise, abs(total))


#: How many sds of their difference the variances' sum must exceed the total
#: by, beyond the total's own sd, for the total to be not estimable: two, as
#: the tail counts' proof (:data:`~._variances._MARGIN`).
_BELOW_MARGIN = 2.0


def _total_noise_below_variances(clipped, components, total, total_noise, bounded):
    """The printed total's sd, raised to the total where the variances along
    the directions, as released (``clipped``, before any combination), prove
    that its clipping lowered it by more than that sd (post-processing of
    released values).

    The variances along orthonormal directions sum to at most the table's
    total (along rows ``V`` whose Gram matrix is within rounding of the
    identity, public ones, at most ``||V V^T||`` times it: the sum is divided
    by that), and clipping only lowers a value, so the released variances' sum
    is a noisy lower bound on the total: where it exceeds ``total`` (read at the
    middle of its allowance) by more than :data:`_BELOW_MARGIN` sds of their
    difference plus the total's ``total_noise`` (which carries the
    allowance), the total lies further below the table's than its interval
    says (adult without bounds at eps 1: a total of 0.17 of the table's, 25
    of its sds below it, under three variances summing to 0.78 of it, in 1
    fit of 10). Not for the box's one release, whose total is its variances'
    sum plus the rest (``covaried``), nor where an sd was already raised."""
    raw = np.asarray(clipped.raw, dtype=float)
    sds = np.asarray(clipped.noise_scale, dtype=float)
    if np.any(clipped.get("covaried", False)) or _raised(total, total_noise) \
            or not np.all(np.isfinite(raw) & np.isfinite(sds)):
        return total_noise
    # (in units of the largest magnitude: values near the top of the float
    # range must not overflow)
    unit = float(np.max(np.abs(np.concatenate([raw, sds, [total, total_noise]]))))
    if not 0 < unit < math.inf:
        return total_noise
    spread = math.hypot(*(sds / unit), total_noise / unit)
    components = np.asarray(components, dtype=float)
    gram = float(np.linalg.norm(components @ components.T, 2))
    if not math.fsum(raw / unit) / max(gram, 1.0) - total / unit \
            - _BELOW_MARGIN * spread > total_noise / unit:
        return total_noise
    warn_user(
        "The private total variance is below the sum of the private variances "
        "along the directions by more than their noise: its clipping lowered it "
        "by more than its stated uncertainty, so it (and each PVE) is not "
        "estimable. " + heavy_tail_advice(bounded),
        PrivacyUtilityWarning,
    )
    return max(total_noise, abs(total))


#: How many noise sds (of their difference) the clipped and the elliptical
#: variances may differ by, each of them, for the elliptical ones to be used.
_AGREEMENT = 2.0
#: How many sds of that difference every elliptical variance must be above zero
#: for the agreement to mean anything: far below, a clipped release of pure
#: noise agrees with any model value, however far off (breast cancer at eps 1:
#: PC2 and PC3 model values at 0.04 to 0.46 of that sd, 10 to 45 times the
#: table's variances, came out estimable). At 1 sd diabetes lost a third of its
#: estimable variances (model values at 0.3 to 1.4 sds, all within 0.7 of the
#: table's); at half an sd it loses a tenth.
_SEEN = 0.5


def _combine_elliptical(raw, noise_scale, total, total_noise, kendall, n_samples, rng):
    """The clipped variances and the total fitted jointly with the eigenvalue
    ratios the released spherical Kendall matrix implies under an elliptical
    model, where the two agree (free post-processing of released values and
    public noise sds).

    The elliptical ratios (:func:`~._kendall_spectrum.elliptical_ratios`, their
    sds from its bootstrap) need no clipping of their own, so they are far less
    noisy on the small components and carry no noise of the total; but they are
    biased when the data are not elliptical. They are used only when every
    elliptical variance ``total * ratio`` is within ``_AGREEMENT`` sds of the
    difference of the clipped one (a bias of the model is then of the order of
    the clipped noise at most). That sd counts both noises and the two
    estimators' own sampling difference, about ``lambda sqrt(2 / n)`` (a
    Gaussian variance's sampling sd; ``n`` is public): at large ``n eps`` the
    noise alone would reject data that are elliptical. Every elliptical variance
    must also stand ``_SEEN`` such sds above zero: else the clipped release
    cannot see the component, and would agree with any model value. The three
    releases then measure ``k + 1`` unknowns, the total ``T`` and the variances
    ``lambda_l``: the total measures ``T``, each clipped variance ``lambda_l``
    and each ratio ``lambda_l / T``, with independent noises (the total's, the
    variances' and the Kendall matrix's Gaussian draws). :func:`_joint_fit` finds them by
    weighted least squares, with their sds; a share ``lambda_l / T`` then leans
    on the ratio, which the total's noise does not reach. Otherwise, or when the
    fit fails, the release is returned unchanged. The test reads released values
    only, so the choice is free of any privacy cost.

    Returns ``(variances, their noise sds, total, its noise sd)``.
    """
    unchanged = raw, noise_scale, total, total_noise
    if not (np.all(np.isfinite(raw)) and np.all(noise_scale > 0)):
        return unchanged
    # in units of the largest value (released), so that squares of variances near
    # the float range stay finite
    unit = max(float(np.max(np.abs(raw))), float(np.max(noise_scale)), abs(total),
               total_noise, np.finfo(float).tiny)
    combined = _combine_in_units(raw / unit, noise_scale / unit, total / unit,
                                 total_noise / unit, kendall, n_samples, rng)
    if combined is None:                 # refused: the release exactly as it was
        return unchanged
    return tuple(value * unit for value in combined)


def _combine_in_units(raw, noise_scale, total, total_noise, kendall, n_samples, rng):
    """:func:`_combine_elliptical` on values of order at most 1; None where the
    two releases disagree or the joint fit fails."""
    if not total > _MEASURED_SDS * total_noise:
        # a total the release cannot tell (noise, or a clipping its tail count
        # saw, which raised its sd to its value) is not measured by the model's
        # ratios either: a table far from elliptical (adult with scale=True)
        # got a model total 0.3 of the table's at 0.007 of its sd
        return None
    elliptical = elliptical_ratios(kendall.matrix, kendall.noise_scale, total,
                                   total_noise, raw.size, rng, correct_bias=True)
    sampling = np.abs(raw) * math.sqrt(2.0 / n_samples)
    difference = np.sqrt(noise_scale**2 + elliptical.variance_noise**2 + sampling**2)
    agree = np.abs(elliptical.variances - raw) <= _AGREEMENT * difference
    if not np.all(agree & (elliptical.variances >= _SEEN * difference)):
        return None
    # the model sharpens a variance the clipped release measures, never stands
    # in for one it cannot tell (diabetes at eps 1: its PC2 and PC3, below three
    # sds alone, came out 2 to 2.5 times the table's at 4 to 5.5 joint sds)
    measured = raw > _MEASURED_SDS * noise_scale
    if not np.any(measured):
        return None
    fitted = _joint_fit(raw[measured], noise_scale[measured], total, total_noise,
                        elliptical.ratios[measured], elliptical.ratio_noise[measured])
    if fitted is None:
        return None
    values, sds, total, total_noise = fitted
    raw, noise_scale = raw.copy(), noise_scale.copy()
    raw[measured], noise_scale[measured] = values, sds
    return raw, noise_scale, total, total_noise


#: How many noise sds above zero a clipped variance must stand for the model to
#: sharpen it (the printing rule, four sds, then reads the joint sd).
_MEASURED_SDS = 3.0
#: The smallest noise sd a joint fit weighs a value by (values of order 1).
_SD_FLOOR = 1e-12


def _joint_fit(raw, noise_scale, total, total_noise, ratios, ratio_noise):
    """Weighted least squares of ``(T, lambda_1..k)`` on ``total ~ T``, ``raw_l ~
    lambda_l`` and ``ratios_l ~ lambda_l / T``, each residual over its noise sd
    (Gauss-Newton by Levenberg-Marquardt, from ``T`` and ``lambda = raw``).

    Returns ``(lambda, their sds, T, its sd)``, the sds from the inverse of the
    weighted normal matrix at the fit (first order); None when the total or a
    ratio cannot start the fit (not positive), the fit cannot run, or a value it
    returns is not finite or ``T`` not positive.
    """
    if not (total > 0 and np.all(ratios > 0)):
        return None
    sd_total = max(total_noise, _SD_FLOOR)
    sd_raw = np.maximum(noise_scale, _SD_FLOOR)
    sd_ratio = np.maximum(ratio_noise, _SD_FLOOR)

    def residuals(theta):
        return np.concatenate(([(total - theta[0]) / sd_total], (raw - theta[1:]) / sd_raw,
                               (ratios - theta[1:] / theta[0]) / sd_ratio))

    start = np.concatenate(([total], raw))
    # post-processing after the charge: a fit that cannot run leaves the release
    # as it was, it never raises
    try:
        with np.errstate(all="ignore"):
            fit = least_squares(residuals, start, method="lm")
            covariance = np.linalg.pinv(fit.jac.T @ fit.jac)
    except (ValueError, np.linalg.LinAlgError):
        return None
    sds = np.sqrt(np.abs(np.diag(covariance)))
    values = fit.x
    if not (values[0] > 0 and np.all(np.isfinite(values)) and np.all(np.isfinite(sds))):
        return None
    return values[1:], sds[1:], float(values[0]), float(sds[0])


def _component_names(n_components):
    return [f"PC{l + 1}" for l in range(n_components)]


def _total_variance(X, budget, noise, pairs, level, rng, ledger, bound=None):
    """The private total variance, its noise sd (raised if at its bound) and its
    released clip bound (searched here, or ``bound`` if released earlier)."""
    total, total_noise, total_bound = private_total_variance(
        X, budget.part("total variance"), noise, rng, ledger, pairs=pairs,
        quantile_level=level, bound=bound)
    return total, _widened_total_noise(total, total_noise, total_bound), total_bound


def _widened_variance_noise(raw, noise_scale, bounds, scales=None):
    """The variances' noise sds, raised where a variance is near its clip bound."""
    return _widen_if_clipped("variance", _component_names(len(raw)), raw, noise_scale,
                             _clipped_share_inputs(raw, bounds, scales))


def _widened_total_noise(total, total_noise, bound):
    """The total's noise sd, raised if the total is near its clip ``bound``."""
    return float(_widen_if_clipped("total variance", ["the data"], np.array([total]),
                                   np.array([total_noise]),
                                   (np.array([total]), np.array([bound])))[0])


def _elliptical_scree(X, components, budget, kendall, *, noise, pairs, rng, ledger,
                      total_bound=None):
    """``method="kendall"``: the total variance is the only release; the
    variances are ``total * ratios`` with the ratios read off the released
    Kendall eigenvalues under an elliptical model
    (:mod:`~sklearn_dppca._algorithms._kendall_spectrum`). The total's clip level
    is as high as its search's budget allows (:func:`~._spread.spread_level`):
    its clipping bias is not cancelled by a ratio here. The total's sd carries
    its clipping allowance (:func:`~._clip_bias.total_allowance_share`, read
    at that level with no variance released yet), and so does each variance
    through it, as the same share of each value: a PVE, a ratio the total's
    clipping does not move, carries none in its sd (:func:`_share_sd`), but is
    printed only with its variance and total (:func:`scree_values`).
    """
    level = _total_level("kendall", None, budget, X.shape[0])
    total, total_noise, bound = _total_variance(X, budget, noise, pairs, level, rng,
                                                ledger, total_bound)
    share = _total_allowance(X, total, bound, [], level,
                             _total_reached("kendall", None, budget, X.shape[0]))
    total, total_noise, share = (float(value) for value in _at_midpoint(
        total, total_noise, share))
    raw, noise_scale = elliptical_variances(kendall.matrix, kendall.noise_scale, total,
                                            total_noise, components.shape[0], rng)
    return Bunch(raw=raw, noise_scale=noise_scale, bounds=None, total=total,
                 total_noise=total_noise, allowance=np.full(components.shape[0], share),
                 total_allowance=share)


def _matrix_scree(components, kendall):
    """``method="matrix"``: variances and total read off the released clipped
    Kendall matrix ``M`` (``radial="clipped"``, radius ``c``), free.

    ``(c^2 / 2) M`` is the pair scatter clipped in norm at ``c``: ``v^T M v``
    times ``c^2 / 2`` is the clipped variance along ``v`` and its trace the
    clipped total. The noise of ``M`` is symmetric Gaussian with diagonal sd
    ``s``, so ``v^T E v`` has sd ``s`` for a unit ``v`` and the trace ``s
    sqrt(p)``. The clipping is in all ``p`` columns at the directions' radius
    (a median distance by default): variances come out below the covariance's
    when many pairs are clipped, the PVE much less so.
    """
    # (a public radius past sqrt(max float) squares to the largest float, as the
    # kernel's floor did; the products may then overflow: scree_values clamps)
    half_square = squared_radius(kendall.radius) / 2
    matrix = kendall.matrix
    with np.errstate(over="ignore", invalid="ignore"):
        raw = half_square * np.einsum("lj,jk,lk->l", components, matrix, components)
        return Bunch(
            raw=raw, noise_scale=np.full(raw.shape, half_square * kendall.noise_scale),
            bounds=None, total=half_square * float(np.trace(matrix)),
            total_noise=half_square * kendall.noise_scale * math.sqrt(matrix.shape[0]))


def _not_estimable_scree(n_components):
    """The release of a scree the plan could not buy: every value NaN."""
    missing = np.full(n_components, np.nan)
    return Bunch(raw=missing, noise_scale=missing.copy(), bounds=None, total=np.nan,
                 total_noise=np.nan)


def scree_in_scale(released, n_components, own_units, feature_names):
    """The scree a ``scale=True`` fit may print: ``released`` (None where the
    plan did not run it), or every value "not estimable" where a column kept its
    own units (``own_units``, per column; None without ``scale``).

    A scree is in the units of the rows it reads: with a column left in its own
    units (its spread not estimable, no box) the variances, PVE and total are
    in mixed units, not the correlation PCA's that ``scale=True`` asks for (on
    diabetes at eps 1, a covariance PCA's PC1 of 1,412 where a correlation
    PCA's is at most 10). Post-processing of released values (the spreads) and
    of the plan; the warning names columns, never data. Returns the release.
    """
    mixed = own_units is not None and bool(np.any(own_units))
    if released is None:
        if mixed and np.all(own_units):
            warn_user(
                "scale=True: the columns' spreads are not estimable with this budget "
                "and these rows, and no bounds were declared, so the columns keep "
                "their own units (a covariance PCA). Its variances, PVE and total "
                "would not be the correlation PCA's: the scree is not run, and its "
                "budget went to the other parts (plan_ gives the eps that buys "
                "both). Declare bounds (their unit stands in for a spread), or "
                "raise eps.",
                PrivacyUtilityWarning,
            )
        else:
            warn_user(
                "The variances, PVE and total are not estimable with this budget and "
                "these rows: the scree is not run, and its budget went to the other "
                "parts (plan_ and the summary say what would buy it).",
                PrivacyUtilityWarning,
            )
        return _not_estimable_scree(n_components)
    if not mixed:
        return released
    listed = ", ".join(str(name) for name, own in zip(feature_names, own_units) if own)
    warn_user(
        f"scale=True: {listed} kept their own units (spreads not estimable), so the "
        "variances, PVE and total are in mixed units, not a correlation PCA's: not "
        "estimable. Declare bounds (their unit stands in for a spread), or raise "
        "eps.",
        PrivacyUtilityWarning,
    )
    return _not_estimable_scree(n_components)


#: How many sds of their joint noise a later component's released variance may
#: exceed an earlier one's and the order still be noise's (for the isotonic
#: pooling to mend); farther, it is the directions' own.
_ORDER_SDS = 3.0


def variance_order(released, monotone, bounded=False):
    """The order of the components by their private variances, where the
    directions' own order contradicts them beyond noise; None otherwise
    (post-processing of released values).

    The directions come in the order of their Kendall eigenvalues. On a table
    far from elliptical that is not the order of their variances: on raw
    adult, the capital-gain direction, third, holds 1e5 times the variance of
    the first (age), and pooling the printed variances into a non-increasing
    scree printed the first two at 2.5e4 to 1.3e5 times the table's. Pooling
    is for noise: where, with ``monotone``, a later component's released
    variance exceeds an earlier one's by more than :data:`_ORDER_SDS` of
    their joint noise sd, every component is put in the order
    of its released variance (largest first, a stable sort; a value not
    estimable takes its released value's place), as a PCA's are, and a
    PrivacyUtilityWarning says so (suggesting declared bounds unless
    ``bounded``: a public setting). Returns the permutation (an index array)
    or None.
    """
    raw = np.clip(np.asarray(released.raw, dtype=float), 0, None)
    noise_scale = np.asarray(released.noise_scale, dtype=float)
    if not monotone or raw.size < 2 or not np.all(np.isfinite(raw)):
        return None
    excess = raw[None, :] - raw[:, None]            # later (column) less earlier (row)
    joint = np.hypot(noise_scale[:, None], noise_scale[None, :])
    later = np.triu(np.ones(excess.shape, dtype=bool), k=1)
    if not np.any(later & (excess > _ORDER_SDS * joint)):
        return None
    order = np.argsort(-raw, kind="stable")
    warn_user(
        "The private variances are out of the directions' order by more than "
        "their noise (robust directions on a table far from elliptical, such as "
        "heavy-tailed or zero-inflated columns in raw units): the components are "
        f"put in the order of their variances, PC{order[0] + 1} of the "
        "directions' order first. Consider scale=True"
        + ("." if bounded else " or declared bounds."),
        PrivacyUtilityWarning,
    )
    return order


def reordered_scree(released, order):
    """``released`` (a :func:`release_scree` Bunch) with its per-component
    values in ``order`` (the total and a single norm bound unchanged)."""
    bounds = released.bounds
    if bounds is not None and np.ndim(bounds) == 1 and len(bounds) == len(order):
        bounds = np.asarray(bounds)[order]
    reordered = Bunch(released, raw=np.asarray(released.raw)[order],
                      noise_scale=np.asarray(released.noise_scale)[order], bounds=bounds)
    for per_component in ("allowance", "heavier_than_modelled"):
        if np.ndim(released.get(per_component)) == 1:
            reordered[per_component] = np.asarray(released[per_component])[order]
    return reordered


def _raised(values, sds):
    """Where a noise sd was raised to its value (``max(sd, |value|)``: a value
    at its clip bound, or one whose clipping a tail count proved larger than
    its noise), which then is not estimable for that reason, said in its own
    warning."""
    values, sds = np.asarray(values, dtype=float), np.asarray(sds, dtype=float)
    return (values != 0) & (sds == np.abs(values))


def scree_values(released, monotone):
    """Post-process a :func:`release_scree` release (free).

    Warns when a variance or the total is noise-dominated. Returns a Bunch with
    ``explained_variance`` (ordered and non-negative with ``monotone``),
    ``explained_variance_ratio``, its sd ``explained_variance_ratio_noise_scale``
    (:func:`_share_sd`: the share's noise and clipping; NaN where the share is)
    and ``total_variance`` (raised to at least the variances' sum). A variance
    or total whose release is not four sds above
    zero (:func:`~sklearn_dppca._validation.printable`; the clipped ones' sd
    carries their clipping allowance, and is raised to the release when they
    sit at their bound) is not estimable: NaN; so is a share whose variance
    or total is, or whose own sd (:func:`_share_sd`) is too large.
    Every value is NaN for a scree the plan did not buy.
    """
    if not np.all(np.isfinite(released.raw)):
        missing = np.full(len(released.raw), np.nan)
        return Bunch(explained_variance=missing, explained_variance_ratio=missing.copy(),
                     explained_variance_ratio_noise_scale=missing.copy(),
                     total_variance=np.nan)
    # (a value whose sd was raised to it, at its clip bound or past a tail its
    # count saw, has had its warning: it is not "noise alone")
    names = _component_names(len(released.raw))
    own = ~_raised(released.raw, released.noise_scale)
    warn_noise_dominated("variance", [name for name, keep in zip(names, own) if keep],
                         np.asarray(released.raw)[own],
                         np.asarray(released.noise_scale)[own])
    if not _raised(released.total, released.total_noise):
        warn_noise_dominated("total variance", ["the data"], [released.total],
                             [released.total_noise])
    warn_imprecise("variance", _component_names(len(released.raw)), released.raw,
                   released.noise_scale)
    warn_imprecise("total variance", ["the data"], [released.total],
                   [released.total_noise])
    estimable = printable(released.raw, released.noise_scale)
    variances = post_process_variances(released.raw, monotone, estimable)
    # (the total is raised to at least the printed variances' sum, not noise's)
    printed = np.where(estimable, variances, 0.0)
    ratio, total = explained_variance_ratio(printed, released.total)
    total_estimable = bool(printable(released.total, released.total_noise)) and total > 0
    share_sd = _share_sd(released, printed, ratio, total)
    shares = estimable & total_estimable & printable(ratio, share_sd)
    return Bunch(explained_variance=np.where(estimable, variances, np.nan),
                 explained_variance_ratio=np.where(shares, ratio, np.nan),
                 explained_variance_ratio_noise_scale=np.where(shares, share_sd, np.nan),
                 total_variance=total if total_estimable else np.nan)


def _share_sd(released, variances, ratio, total):
    """Each share's sd: the noise of ``variances / total`` (:func:`_share_noise`)
    and the clipping's, added in squares. Both are clipped: the share moves by
    the difference of their allowances (``released.allowance`` and
    ``total_allowance``, shares of the values; :mod:`._clip_bias`), not their
    sum; but where the variance's reading or the total's found a tail past
    the family's heaviest (``heavier_than_modelled``, fits without declared
    bounds: that allowance is a floor), by both in squares: adult's capital
    gain at eps 4
    lost 35% and 48% of its variance in two fits of ten, both readings sat at
    that floor, and PC1's PVE printed 0.54 and 0.46 of 0.996 with an sd of
    0.02."""
    allowance = np.broadcast_to(np.asarray(released.get("allowance", 0.0), dtype=float),
                                np.shape(variances))
    total_allowance = float(released.get("total_allowance", 0.0))
    noise = _share_noise(variances, _noise_alone(released.raw, released.noise_scale,
                                                 allowance),
                         total, float(_noise_alone(released.total, released.total_noise,
                                                   total_allowance)),
                         covaried=released.get("covaried", False))
    beyond = np.broadcast_to(released.get("heavier_than_modelled", False),
                             np.shape(variances))
    clipping = np.where(beyond, np.hypot(allowance, total_allowance),
                        np.abs(allowance - total_allowance))
    return np.hypot(noise, np.abs(ratio) * clipping)


def _noise_alone(values, sds, share):
    """The noise sds of ``values`` whose sds ``sds`` carry the clipping
    allowance ``share`` of each value (:func:`_with_allowance` undone)."""
    values, sds = np.asarray(values, dtype=float), np.asarray(sds, dtype=float)
    carried = np.where(_raised(values, sds), 0.0, np.asarray(share) * np.abs(values))
    # sd sqrt(1 - (carried / sd)^2): no square of a value near the float range
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(sds > 0, carried / sds, 0.0)
    return sds * np.sqrt(np.maximum(1.0 - np.minimum(part, 1.0) ** 2, 0.0))


def _share_noise(variances, noise_scale, total, total_noise, covaried=False):
    """The noise sd of each share ``lambda_l / total`` (first order): with
    independent noises ``share * sqrt((s_l / lambda_l)^2 + (s_T / total)^2)``;
    ``covaried`` (one flag, or one per share: the total the sum of
    ``lambda_l`` and parts of independent noise,
    :func:`~._box_moments.release_box_scree`), ``sqrt((1 - share)^2
    s_l^2 + share^2 (s_T^2 - s_l^2)) / total``: ``lambda_l``'s noise moves the
    share's top and bottom together."""
    total, total_noise = np.float64(total), np.float64(total_noise)
    noise_scale = np.asarray(noise_scale, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        share = variances / total
        rest = np.sqrt(np.maximum(total_noise**2 - noise_scale**2, 0.0))
        spread = np.where(covaried,
                          np.hypot((1.0 - share) * noise_scale, share * rest) / total,
                          share * np.hypot(noise_scale / variances, total_noise / total))
        return np.where(variances > 0, spread, np.inf)


def _finite(values, n_terms):
    """``values`` clamped into ``+-max float / (2 (n_terms + 1))`` (NaN to 0), so that
    sums of the scree's values and the total stay finite."""
    limit = np.finfo(float).max / (2.0 * (n_terms + 1))
    return np.clip(np.nan_to_num(np.asarray(values, dtype=float), nan=0.0),
                   -limit, limit)


def feature_variances(components, explained_variance, noise_scale, total, total_noise,
                      feature_names):
    """Each column's variance implied by the scree and the total, and its noise sd.

    Implied by the scree and the total, scaled or not: the same clipped second
    moment as both, so ``sum_l r_jl^2 <= 1`` in the variable circle (a column's
    own spread, a different clipping, could put an arrow past it). The noise sd
    propagates the retained variances' noise through ``v_jl^2`` and the rest's
    (total minus retained) through its even split (independent parts). A
    component whose variance is not estimable (NaN) counts with the rest: its
    direction shares the rest evenly. Warns for noise-dominated columns (column
    names are public).
    """
    known = np.isfinite(explained_variance)
    components, explained_variance = components[known], explained_variance[known]
    noise_scale = np.asarray(noise_scale)[known]
    values = implied_feature_variances(components, explained_variance, total)
    loadings = components**2
    n_components, n_features = components.shape
    n_rest = max(n_features - n_components, 1)
    rest_share = np.clip(1.0 - loadings.sum(axis=0), 0.0, 1.0) / n_rest
    rest_noise = math.hypot(total_noise, *noise_scale)
    noise = _column_norms(np.vstack([noise_scale[:, None] * loadings,
                                     rest_noise * rest_share]))
    if np.isfinite(total):
        # (without a total every implied variance is unknown, and the scree's own
        # warnings have said why: noise, imprecision or its clipping)
        warn_noise_dominated("implied variance", feature_names, values, noise)
    return values, noise


def _column_norms(terms):
    """L2 norm of each column, without overflow for variances near the float range."""
    largest = np.max(np.abs(terms), axis=0)
    safe = np.where(largest > 0, largest, 1.0)
    return largest * np.sqrt(np.sum((terms / safe) ** 2, axis=0))


def _clipped_share_inputs(raw, bounds, scales=None):
    """What to compare with the clip bounds: the sum under one norm bound (in the
    scaled coordinates with ``scales``, whose bound ``C`` is each component's
    ``bounds_l / s_l^2``), else each."""
    if bounds is None:
        return None
    if scales is not None:
        return np.array([np.sum(raw / bounds)]), np.array([1.0])
    if bounds.size == 1 and raw.size > 1:
        return np.array([raw.sum()]), bounds
    return raw, bounds


def _scales(params, kendall, n_components):
    """The components' scales of ``clip="scaled"`` (post-processing of the
    released Kendall matrix), else None."""
    if params.get("clip") != "scaled":
        return None
    return component_scales(kendall.matrix, kendall.noise_scale, n_components,
                            kendall.radius)


def _widen_if_clipped(what, names, raw, noise_scale, share_inputs):
    """Noise sd of estimates clipped at their bound raised to the estimate (free).

    Such a release says only that the statistic is at least about its bound (the
    bound's search stopped below nearly all the data): reporting its Gaussian sd
    alone would draw a confident value. With the sd raised to the estimate, the
    summary, the error bars and the noise warnings treat it as noise.
    """
    if share_inputs is None:
        return noise_scale
    clipped = clipped_to_the_bound(*share_inputs)
    if not np.any(clipped):
        return noise_scale
    if clipped.size == 1 and raw.size > 1:
        clipped = np.repeat(clipped, raw.size)
    listed = ", ".join(str(name) for name, flag in zip(names, clipped) if flag)
    warn_user(
        f"The private {what} of {listed} sits at its clip bound: its bound's search "
        "stopped below nearly all the data, so the release only says the value is "
        "at least about the bound. Its noise sd is reported as at least the value. "
        "Increase eps, or use more rows.",
        PrivacyUtilityWarning,
    )
    return np.where(clipped, np.maximum(noise_scale, np.abs(raw)), noise_scale)
