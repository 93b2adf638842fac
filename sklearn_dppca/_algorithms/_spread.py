"""Private per-column spreads for ``scale=True`` (correlation PCA).

Each column's spread is a clipped second moment of its pairwise differences,
``s_j^2 = mean_{a<b} min((x_aj - x_bj)^2 / 2, C_j)``, with ``C_j`` a private
quantile of ``(x_aj - x_bj)^2 / 2`` on a scale-free grid. It needs no centre (it is
translation invariant), it is defined for columns in any unit, and a column that
is mostly zeros still gets a positive spread as long as fewer than ``level`` of
its pairs are ties (capital gains: 92% zeros, 84% tied pairs). For data whose
columns share one elliptical law up to scale (Gaussian, multivariate t), ``s_j`` is
the standard deviation times one factor common to every column, so dividing by it
gives the eigenvectors and PVE of the correlation matrix.

With declared ``bounds``, a column whose private spread is not estimable (or a
fit whose plan could not buy the spreads) is divided by its box's public unit,
``w_j / sqrt(12)`` (the sd of a value spread evenly over the column's range):
free, never read off the data, and the columns stay free of their units
(:func:`scale_columns`). Without bounds such a column keeps its own unit.
"""

import math

import numpy as np
from .._bunch import Bunch

from .._names import default_feature_names
from .._data._statistics import SPREAD_BOUNDS
from .._validation import above_noise, warn_user
from ..privacy import PrivacyUtilityWarning, gaussian_mechanism
from ..privacy._quantiles import (
    _SCALE_FREE_GRID,
    _positive_from_counts,
    reaches_the_data,
    warn_if_far,
)
from ._box_moments import release_box_mean, release_box_variances
from ._projection import column_divisors
from ._scree_settings import component_clip_parts
from ._variances import clipped_to_the_bound

#: Clipping of the spreads: one private quantile per column, so a larger quantile
#: share than the scree's (the Gaussian part is cheap: its noise is relative to each
#: column's own bound), and a level as high as the budget allows (see
#: :func:`spread_level`).
_SPREAD_PARAMS = {"clip": "component", "C": "auto", "quantile_share": 0.6}
#: The highest level of the spreads' clip bounds. The search starts at the bottom,
#: where a column of mostly zeros leaves only ``(level - tied share) m`` counts of
#: margin against an early stop (capital losses: 91% of the pairs tied).
_SPREAD_LEVEL = 0.99
#: Counts kept above the level, in noise means: the target ``level m + Exp`` must
#: stay below the ``m`` values, or the search runs past them and returns a bound far
#: above the data (at 3 means, 5% of the searches).
_TAIL_MEANS = 3.0


def spread_level(n_pairs, eps):
    """The level of the spreads' clip bounds for ``n_pairs`` values and ``eps`` each.

    ``min(0.99, 1 - 3 (2 / eps) / m)``: public (``n`` and ``eps`` only). At
    20,000 rows, 8 columns and eps = 1 (0.0125 a search) it is 0.952; on the adult
    table (32,561 rows, 5 columns) 0.982.
    """
    return min(_SPREAD_LEVEL, 1.0 - _TAIL_MEANS * (2.0 / eps) / n_pairs)


def _spread_labels(feature_names):
    """The columns' names in the ledger: their own with any ``/`` written ``_``
    (a ``/`` separates the parts of a budget path: wine's
    ``od280/od315_of_diluted_wines`` would nest a step), or ``x0, x1, ...`` if
    that repeats a name."""
    names = [str(name).replace("/", "_") for name in feature_names]
    return names if len(set(names)) == len(names) else default_feature_names(len(names))


#: Share of the spreads' part that releases each column's clipped share (how
#: many of its matched pairs its clip bound clips), taken from the statistic's.
_CLIPPED_SHARE = 0.1
#: With declared bounds: the share of the spreads' part spent on the private mean
#: the columns' moments are taken about (:mod:`._box_moments`).
_BOX_MEAN_SHARE = 0.3


def spread_parts(feature_names, bounded=False):
    """The budget tree of the spreads: a quantile per column, each column's
    clipped share and one statistic; with declared ``bounds`` (``bounded``) the
    box's private mean and the moments about it."""
    if bounded:
        return {"mean": (_BOX_MEAN_SHARE, "gaussian"),
                "statistic": (1.0 - _BOX_MEAN_SHARE, "gaussian")}
    parts = component_clip_parts(_spread_labels(feature_names), _SPREAD_PARAMS)
    statistic_share, _ = parts.pop("statistic")
    return {**parts, "clipped share": (_CLIPPED_SHARE, "gaussian"),
            "statistic": (statistic_share - _CLIPPED_SHARE, "gaussian")}


def _private_feature_variances(X, *, budget, noise, rng, ledger, feature_names):
    """Release every column's clipped variance with one Gaussian mechanism.

    Privacy (the leaves of :func:`spread_parts`): ``p`` quantile searches with
    ``quantile_share / p`` of the part's eps each (pure DP), then the vector
    ``(s_j^2 / C_j)`` on the Gaussian leaf. Each column's clip bound is a private
    quantile of ``(x_aj - x_bj)^2 / 2`` over a random matching within the blocks
    (a row is in at most one pair: a count moves by at most 1), from counts of
    the scale-free grid summed over the blocks. The statistic is each column's
    clipped pair mean over all pairs within a block (all pairs, in one block),
    ``U_j = sum_b sum_{a<b in block} min(., C_j) / sum_b C(n_b, 2)``: one row is in
    ``n_b - 1`` of those pairs, each term in ``[0, C_j]``, so ``U_j / C_j`` moves by
    at most ``(n_max - 1) / sum_b C(n_b, 2)`` (``2 / n`` in one block), plus the
    rounding allowance of the computation
    (:func:`~sklearn_dppca._data._statistics.clipped_sum_sensitivity`).

    Each column's tied and clipped shares, the shares of its matched pairs whose
    value is zero or at or above its released bound, are released too (the leaf
    ``clipped share``): one changed row is in one matched pair, so each count
    moves by at most 1 and the vector of ``2 p`` shares by ``sqrt(2 p) / m`` in
    L2 (``m`` pairs). A
    bound whose search stopped below most of a column's values (a column of
    mostly zeros: the tied pairs fill the counts of the grid's bottom) clips
    far more than its level's tail, and the share says so
    (:func:`_spreads_from_variances`).

    With declared ``bounds`` (``X`` a clipped view) each column's variance is
    its second moment about the box's private mean, bounded by the box
    (:func:`~._box_moments.release_box_variances`): no search, no term
    clipped (:func:`spread_parts` with ``bounded``).

    Returns a Bunch with ``raw`` (the noisy variances, possibly negative),
    ``noise_scale`` (their noise sd), ``clip_bounds`` and ``clipped_share``
    (None with bounds).
    """
    if X.box() is not None:
        mean = release_box_mean(X, budget["mean"], noise, rng, ledger)
        raw, noise_scale, bounds = release_box_variances(X, mean, budget["statistic"],
                                                         noise, rng, ledger)
        return Bunch(raw=raw, noise_scale=noise_scale, clip_bounds=bounds,
                     clipped_share=None)
    searched = _searched_bounds(X, budget, rng, ledger, feature_names)
    bounds, n_values = searched.bounds, searched.n_values
    counts = np.concatenate([searched.tied, searched.above])
    shares, share_noise = gaussian_mechanism(
        counts / n_values, np.sqrt(counts.size) / n_values, rng=rng, noise=noise,
        ledger=ledger, **budget["clipped share"].mechanism_budget())
    statistic, sensitivity = X.clipped_pair_means(bounds)
    noisy, noise_scale = gaussian_mechanism(
        statistic, sensitivity, rng=rng, noise=noise, ledger=ledger,
        **budget["statistic"].mechanism_budget())
    tied, clipped = np.split(shares, 2)
    return Bunch(raw=noisy * bounds, noise_scale=noise_scale * bounds,
                 clip_bounds=bounds, clipped_share=clipped,
                 separated=_separated_from_zero(tied + 2.0 * share_noise,
                                                searched.level, n_values,
                                                searched.eps))


def _separated_from_zero(tied_share, level, n_values, eps):
    """Per column, whether its search could tell its values from zero: the
    target ``level m`` stands far enough above the tied pairs' counts (``tied
    share`` of the ``m`` values, released, raised by two noise sds) for the
    search to stop below the data only with the plan's small chance
    (:func:`~sklearn_dppca.privacy._quantiles.reaches_the_data`). Public: the
    released shares, ``m``, the level and the search's eps."""
    return np.array([reaches_the_data((level - share) * n_values, eps, "scale-free")
                     for share in tied_share])


def _searched_bounds(X, budget, rng, ledger, feature_names):
    """Each column's private clip bound (a quantile search per column), the
    numbers of its matched values at or above it and tied at zero (exact:
    released only through the ``clipped share`` leaf), the number of matched
    pairs, the searches' level and eps (a Bunch)."""
    labels = _spread_labels(feature_names)
    leaves = [budget[f"clip bound {label}"] for label in labels]
    counts, n_values = X.column_matching_counts(SPREAD_BOUNDS)
    level = max(spread_level(n_values, leaves[0].eps), 0.5)
    bounds = np.array([
        _positive_from_counts(column_counts, n_values, level, leaf.eps, rng, ledger,
                              leaf.path, False)
        for column_counts, leaf in zip(counts, leaves)])
    warn_if_far(n_values, level, leaves[0].eps,
                f"{budget.prefix}/clip bounds (each of {len(labels)})")
    # each bound is a point of the grid the counts are taken below; a value below
    # the grid's first point is a tied pair (zero)
    below = counts[np.arange(len(bounds)), np.searchsorted(_SCALE_FREE_GRID, bounds)]
    return Bunch(bounds=bounds, above=(n_values - below).astype(float),
                 tied=counts[:, 0].astype(float), n_values=n_values, level=level,
                 eps=leaves[0].eps)


#: The largest clipped share of a column whose spread is released. A search at
#: its level clips the ``1 - level`` tail and about as much again where it stops
#: early (its rank slack), at most 0.3 where the plan buys the spreads
#: (:data:`~._plan._SPREAD_LEVEL_MIN`); one that stopped below a column's
#: non-tied values clips them all (a column of 68% zeros: about half its pairs).
_CLIPPED_SHARE_LIMIT = 0.4

# A clip bound this small comes from a search that stopped at the bottom of the
# float range (its first counts' noise bridged the gap to the level): no real
# column's squared differences live there.
_UNRELIABLE_BOUND = 1e-200


def _unreliable_spreads(released):
    """Per column, whether its released variance cannot give a spread.

    A spread is unreliable when its variance is not two noise sds above zero
    (:func:`~sklearn_dppca._validation.above_noise`), when almost every pair
    was clipped (:func:`clipped_to_the_bound`) or when its clip bound search
    stopped at the bottom of the range (:data:`_UNRELIABLE_BOUND`, zero-inflated
    columns at small budgets): dividing by a noisy or collapsed spread would
    blow the column up. Public: released values and bounds only."""
    unreliable = ~above_noise(released.raw, released.noise_scale)
    if released.clipped_share is not None:
        unreliable |= (
            # at the bound within two noise sds: "all pairs clipped" fits
            clipped_to_the_bound(released.raw + 2 * released.noise_scale,
                                 released.clip_bounds)
            | (released.clip_bounds < _UNRELIABLE_BOUND)
            | (released.clipped_share > _CLIPPED_SHARE_LIMIT)
            | ~released.separated)
    return unreliable


def _box_units(widths):
    """The public unit of each column of a box of ``widths``: ``w / sqrt(12)``,
    the sd of a value spread evenly over the range (NaN for a zero width: a
    declared constant keeps its unit)."""
    widths = np.asarray(widths, dtype=float)
    return np.where(widths > 0, widths / math.sqrt(12.0), np.nan)


def scale_columns(X, budget, *, noise, rng, ledger, feature_names):
    """The spread step of a ``scale=True`` fit: divide each column of ``X`` by
    its private spread (released on ``budget``, the plan's ``scale`` part, or
    None when the plan could not buy it), else by its box's public unit
    (:func:`_box_units`, declared bounds), else by nothing (it keeps its unit).

    Returns a Bunch: ``X`` (a divided view of the rows), ``scale`` (the
    divisors, NaN where a column keeps its unit) and ``origin`` (per column,
    one of :data:`~._projection.SCALE_ORIGINS`). A
    PrivacyUtilityWarning names the columns whose private spread was not
    estimable (column names are public).
    """
    n_features = X.shape[1]
    spreads = np.full(n_features, np.nan)
    if budget is not None:
        released = _private_feature_variances(X, budget=budget, noise=noise, rng=rng,
                                             ledger=ledger, feature_names=feature_names)
        unreliable = _unreliable_spreads(released)
        spreads = np.where(unreliable, np.nan,
                           np.sqrt(np.where(unreliable, 1.0, released.raw)))
        _warn_unreliable(feature_names, unreliable, X.box() is not None)
    widths = X.widths()
    fallback = np.full(n_features, np.nan) if widths is None else _box_units(widths)
    private = np.isfinite(spreads)
    scale = np.where(private, spreads, fallback)
    origin = np.where(private, "private", np.where(np.isfinite(fallback), "box", "none"))
    return Bunch(X=X / column_divisors(scale), scale=scale, origin=origin.astype(object))


def _warn_unreliable(feature_names, unreliable, bounded):
    if not np.any(unreliable):
        return
    listed = ", ".join(str(n) for n, bad in zip(feature_names, unreliable) if bad)
    instead = ("divided by their box's public unit (width / sqrt(12)) instead"
               if bounded else "left in their own units")
    warn_user(
        f"The private spreads of {listed} are dominated by noise (or their clip "
        "bound search stopped below most of their values, as it may for a column "
        f"of mostly zeros): not estimable; these columns are {instead} "
        "(scale_origin_). Give budget_split['scale'] more, or use more rows.",
        PrivacyUtilityWarning,
    )
