"""Private variances along directions: the mechanisms of the DP scree.

Data in, released values and ledger entries out; the estimators
(:class:`~sklearn_dppca.DPScree`, :class:`~sklearn_dppca.DPPCA`) compose them.
What a scree will do, decided from public inputs before any data are read (its
method's parameters, clip bounds, levels, budget tree), is in
:mod:`~sklearn_dppca._algorithms._scree_settings`.
"""

import math

import numpy as np

from ._scree_settings import (
    TOTAL_PARAMS,
    box_component_bounds,
    box_norm_bound,
    check_public_clip,
)
from .._data._statistics import (
    KENDALL_MATRIX,
    SCREE_BOUND,
    SCREE_COMPONENT_SCATTER,
    SCREE_COMPONENT_BOUNDS,
    SCREE_SCATTER,
    SCREE_VALUES,
    TOTAL_BOUND,
    TOTAL_SCATTER,
)
from .._pair_design import design_pairs
from .._bunch import Bunch
from .._validation import (
    warn_user,
)
from ..privacy import PrivacyUtilityWarning, gaussian_mechanism
from ..privacy._means import huber_mean, monotone_scree, pmwm_mean
from ..privacy._quantiles import (
    _SCALE_FREE_GRID,
    _positive_from_counts,
    warn_if_far,
)



def _norm_clipped_scatter(X, bound, pairs, name):
    """``M = mean over pairs of (d d^T / 2) min(1, 2 bound / ||d||^2)``, ``d = x_i - x_j``.

    Each pair difference is shrunk to norm at most ``sqrt(2 bound)``, so
    ``v.M v`` is the mean of ``(v.d_clipped)^2 / 2``: the clipped variance along
    ``v``. Pairs: all of them, or an ``m``-partner design seeded by ``name``.
    """
    # (d d^T / 2) min(1, 2 bound / ||d||^2) = bound d d^T / max(||d||^2, 2 bound): the
    # kernel's floored pair scatter, exact to about 1e-15 (sklearn_dppca._kendall).
    return bound * X.pair_mean(2 * bound, pairs, name)


def _norm_clip_bound(Y, params, budget, rng, ledger, name, box_bound=None):
    """The clip bound on ``||y_a - y_b||^2 / 2``: public (given), or a private
    quantile over the matching ``name``, capped at ``box_bound`` from declared
    bounds when there is one (post-processing of the release: no term can
    exceed it, so a search that ran past it only added noise)."""
    if not isinstance(params["C"], str):
        return float(check_public_clip(params["C"], 1)[0])
    bound = Y.matching_quantile(name, 0.5, params["quantile_level"],
                                budget["clip bound"], rng, ledger)
    return bound if box_bound is None else min(bound, box_bound)


def _norm_clipped_variances(X, components, params, budget, noise, rng, ledger,
                            evidence=None):
    """Variances from the projected pair differences clipped in norm to ``sqrt(2 C)``.

    The clipping happens in the space of the released directions: ``y = V d``
    (the ``k`` coordinates of a pair difference along the rows ``v_l`` of
    ``components``), shrunk to norm ``sqrt(2 C)``. The k-vector of terms
    ``t_l = y_l^2 / 2`` is non-negative with ``sum_l t_l <= C``, so replacing it
    moves it by at most ``sqrt(2) C`` in L2. One row touches ``n - 1`` of the
    ``C(n, 2)`` terms (``m`` of the ``n m / 2`` with a design), so the released
    vector has L2 sensitivity ``2 sqrt(2) C / n``, whatever ``k``: one private
    quantile (of ``||V (x_a - x_b)||^2 / 2`` over a random matching) gives ``C``.
    Columns in large units that the directions hardly load on no longer set the
    bound (they did when the full p-dimensional difference was clipped).
    ``evidence``: see :func:`private_variances`.
    """
    projected = X.projected(components)
    bound = float(variances_clip_bounds(X, components, params, budget, rng, ledger)[0])
    scatter = _norm_clipped_scatter(projected, bound, params["pairs"], SCREE_SCATTER)
    widths = X.widths()
    tail = tail_shares(projected, "norm", np.array([bound]),
                       None if widths is None else [box_norm_bound(widths, components)])
    proven = []
    noisy, noise_scale = _release_with_tail(
        np.diag(scatter).copy(), 2 * math.sqrt(2) * bound / X.shape[0], tail,
        budget["statistic"], noise, rng, ledger,
        _component_labels(components.shape[0]), "variance", proven=proven)
    _add_evidence(evidence, proven[0], bound, tail.losses)
    return noisy, noise_scale, np.array([bound])


def _add_evidence(evidence, shares, bounds, losses):
    """Append to ``evidence`` (a list, or None) what a clipped release's tail
    count proved (public): per value, the share of the pairs whose term is at
    least ``threshold`` (its lower bound), where the count looked
    (``losses > 0``); see :func:`total_clip_evidence`."""
    if evidence is None:
        return
    losses = np.asarray(losses, dtype=float)
    looked = losses > 0
    evidence.append(Bunch(share=np.where(looked, shares, 0.0),
                          threshold=np.where(looked, bounds + losses, 0.0)))


def total_clip_evidence(evidence, total_bound):
    """A lower bound on how much clipping at ``total_bound`` lowered the total
    variance, from the variances' tail counts (post-processing of released
    values).

    A pair's total term ``||d||^2 / 2`` is at least its term along a unit
    direction, ``(v . d)^2 / 2``, and at least ``||V d||^2 / 2`` for orthonormal
    rows ``V``. A share ``s`` of the pairs whose variance term is at least a
    threshold ``t`` therefore has total terms of at least ``t``, each of which
    the total's clipping at ``C_T`` lowered by at least ``t - C_T``: the
    clipped total is at least ``s (t - C_T)`` below the unclipped one. Returns
    the largest such bound over ``evidence`` (:func:`_add_evidence`), 0 when
    none."""
    floors = [float(np.max(np.where(item.share > 0, item.share * np.maximum(
        item.threshold - total_bound, 0.0), 0.0), initial=0.0)) for item in evidence]
    return max(floors, default=0.0)


def _component_labels(n_components):
    return [f"PC{l + 1}" for l in range(n_components)]


#: A pair term above this many clip bounds lost at least ``(_TAIL - 1) C`` to
#: the clipping: the tail count's threshold.
_TAIL = 4.0
#: The tail counts' share of the sensitivity of the release they ride on. On
#: the variances: their coordinates cost the statistic ``sqrt(1 + 1/4)``, 12%
#: more noise, and see a heavy tail twice as well as at a quarter (3% more
#: noise): adult's capital gain at eps 0.5, clipped to 0.14 of its variance and
#: printed in 11 fits of 40 over the boxes, is flagged in all of them (off
#: variances over six tables and eps 0.5 to 4: 6 of 693, was 17 of 714). On
#: the total, whose sd a PVE reads, a quarter: at a half iris lost 4 of 10
#: PVEs at eps 4.
_TAIL_WEIGHT = 0.5
_TOTAL_TAIL_WEIGHT = 0.25


def tail_shares(projected, clip, bounds, box_bounds=None):
    """The tail counts of the clipped scree's variances along released
    directions: the share of the matched pair terms at or above a threshold
    past each clip bound, from the matchings the bounds' searches read (exact,
    before noise).

    ``projected``: the rows projected on the directions; ``clip``: ``"norm"``
    (one share, of ``||V d||^2 / 2`` against the one bound) or
    ``"component"`` (one per direction, of ``(v_l . d)^2 / 2`` against its
    own). The threshold is ``_TAIL`` bounds, or, where a declared box bounds
    every term by ``box_bounds`` (:func:`box_component_bounds`,
    :func:`box_norm_bound`; public), halfway from the bound to the box's when
    that is nearer: a top-coded column puts its tail at the box's edge, and at
    four bounds past it no term is counted (adult at eps 4: a capital-gain
    bound of 1.8e9 against the box's 5e9 kept 42% of the variance, unseen).
    Each term past the threshold lost at least the threshold less the bound to
    the clipping: ``losses``, per direction (a norm share charged to each
    direction: it bounds their sum; 0 where the box's bound is the clip
    bound's or less, as nothing is clipped). One row is in one matched pair, so
    the shares move by at most ``sensitivity`` in L2 (``sqrt(len(shares)) /
    m``, ``m`` pairs). Returns a Bunch with ``shares``, ``sensitivity`` and
    ``losses``."""
    bounds = np.asarray(bounds, dtype=float)
    n_directions = projected.shape[1]
    if clip == "component":
        counts, n_values = projected.column_matching_counts(SCREE_COMPONENT_BOUNDS)
    else:
        counts, n_values = projected.matching_counts(SCREE_BOUND, 0.5)
        counts = [counts]
    thresholds = _TAIL * bounds
    if box_bounds is not None:
        box_bounds = np.asarray(box_bounds, dtype=float)
        thresholds = np.where(box_bounds > bounds,
                              np.minimum(thresholds, (bounds + box_bounds) / 2), np.inf)
    shares = np.array([_share_at_or_above(column, n_values, threshold)
                       for column, threshold in zip(counts, thresholds)])
    losses = np.where(np.isfinite(thresholds), thresholds - bounds, 0.0)
    return Bunch(shares=shares, sensitivity=math.sqrt(shares.size) / max(n_values, 1),
                 bounded=box_bounds is not None,
                 losses=np.broadcast_to(losses, (n_directions,)).copy())


#: How many noise sds a released tail share is read below its value: the
#: share of the pairs past a threshold is at least that (two sds, one-sided:
#: 2.3% of pure-noise shares pass).
_MARGIN = 2.0


def tail_moved(seen, share_noise, losses, sds, margin=_MARGIN):
    """Mask of the clipped values whose clipping the released tail shares show
    moved by more than their noise sds ``sds`` (post-processing): the bias's
    lower bound, ``losses`` times the share less ``margin`` of its noise sds
    (``share_noise``), exceeds the sd. ``seen``: one share for all the values
    (a norm bound) or one each. Two sds mark a released value not estimable;
    a choice between two forms asks for more (:data:`SWITCH_MARGIN`)."""
    floor = _share_floor(seen, share_noise, np.shape(losses), margin)
    return np.asarray(losses, dtype=float) * floor > np.asarray(sds, dtype=float)


def searched_error(seen, share_noise, losses, sds):
    """Per clipped value, a lower bound on its error: its noise sd ``sds`` and
    the bias the released tail shares ``seen`` prove (:func:`tail_moved`'s,
    read :data:`_MARGIN` of their noise sds below), added in squares
    (post-processing of released values)."""
    floor = _share_floor(seen, share_noise, np.shape(losses))
    return np.hypot(np.asarray(sds, dtype=float), np.asarray(losses, dtype=float) * floor)


def _share_floor(seen, share_noise, shape, margin=_MARGIN):
    """The released tail shares ``seen`` read ``margin`` of their noise sds
    below their values, at least 0, in ``shape`` (post-processing): the share
    of the pairs past each threshold is at least that."""
    seen = np.broadcast_to(np.asarray(seen, dtype=float), shape)
    return np.maximum(seen - margin * share_noise, 0.0)


#: The noise sds a tail share must stand above zero for the scree to take the
#: box's moments instead of a clipped variance: breast cancer at eps 4 saw a
#: share of 0 at 2.9 sds in 1 fit of 10 (two sds, one-sided, let 2.3% of the
#: pure-noise shares through, and each switch costs the variance and the total
#: the box's larger noise); three let 0.13% through, and adult's top-coded
#: capital gains (1% of the pairs past four bounds, 4 sds at eps 4) pass in
#: most fits.
SWITCH_MARGIN = 3.0


def _release_with_tail(statistic, sensitivity, tail, leaf, noise, rng, ledger, names,
                       what, weight=None, proven=None):
    """Release a clipped statistic with its tail counts, and widen the noise sd
    of a value the clipping moved by more than it.

    ``tail``: a :func:`tail_shares` Bunch (its ``losses`` in the statistic's
    units). The shares are appended to the statistic, scaled so that their
    sensitivity is ``weight`` (default :data:`_TAIL_WEIGHT`) of the statistic's,
    and released by the same
    Gaussian mechanism (L2 sensitivity ``sqrt(1 + weight^2)`` times the
    statistic's). Where the bias's lower bound exceeds a value's noise sd
    (:func:`tail_moved`), the value's sd is raised to at least the value (it is
    then not estimable) and a PrivacyUtilityWarning names it: a heavy tail
    beyond the bound carries an unknown share of the variance (adult at eps 1:
    the capital-gain direction, clipped at the searched bound, kept 17 to 22%
    of its variance in two seeds of three, and the count flagged both). Light
    tails leave the shares near 0 (a Gaussian term is above four times its
    0.97 quantile with chance 1.5e-5). The counts see a tail that holds more
    than about ``17 / (n mu)`` of the pairs (``mu`` the statistic's); a thinner
    one goes unseen: declare bounds. ``proven``: a list, or None; given, the
    shares' lower bounds (each released share less :data:`_MARGIN` of its noise
    sds, at least 0: the share of the pairs past each threshold, at two sds)
    are appended to it, one per value (public). Returns ``(values, noise
    sds)``.
    """
    statistic = np.atleast_1d(np.asarray(statistic, dtype=float))
    weight = _TAIL_WEIGHT if weight is None else weight
    scale = weight * sensitivity / tail.sensitivity
    noisy, noise_scale = gaussian_mechanism(
        np.concatenate([statistic, tail.shares * scale]),
        sensitivity * math.hypot(1.0, weight), rng=rng, noise=noise,
        ledger=ledger, **leaf.mechanism_budget())
    values, seen = noisy[:statistic.size], noisy[statistic.size:] / scale
    sds = np.full(values.shape, noise_scale)
    moved = tail_moved(seen, noise_scale / scale, tail.losses, sds)
    if proven is not None:
        proven.append(_share_floor(seen, noise_scale / scale, np.shape(tail.losses)))
    if np.any(moved):
        listed = ", ".join(str(label) for label, flag in zip(names, moved) if flag)
        warn_user(
            f"The private {what} of {listed} is clipped at a bound with a heavy tail "
            "beyond it: the clipping moved it by more than its noise (the pairs "
            f"past {_TAIL:g} bounds, or halfway to a declared box's, each lost that "
            "less one bound), so it is not estimable. " + heavy_tail_advice(tail.bounded),
            PrivacyUtilityWarning,
        )
    return values, np.where(moved, np.maximum(sds, np.abs(values)), sds)


def heavy_tail_advice(bounded):
    """What buys a value its tail count made not estimable (public: whether
    bounds were declared). With a box, the fit had weighed its moments against
    the clipped form before this count, from public noise sds and a noisier
    first count, and kept the clipped one: repeating "declare bounds" would
    send the user to what they did."""
    if bounded:
        return ("The declared box's moments were not taken for it (their noise "
                "looked the larger before this count): a larger eps or a tighter "
                "box lets them take it, or transform the column.")
    return "Declare bounds (the box's moments clip nothing), or transform the column."


def _share_at_or_above(counts, n_values, threshold):
    """The share of the values at or above the first point of the scale-free grid
    at or above ``threshold`` (``counts``: below each point), 0 past the grid."""
    index = int(np.searchsorted(_SCALE_FREE_GRID, threshold))
    if index >= len(counts) or n_values <= 0:
        return 0.0
    return float(n_values - counts[index]) / n_values


def private_total_variance(X, budget, noise, rng, ledger, *, pairs="all",
                           quantile_level=None, bound=None):
    """The private total variance ``E ||x_a - x_b||^2 / 2`` (the trace of the covariance).

    The pair differences are clipped in norm to ``sqrt(2 C)`` with ``C`` a private
    quantile at the scree's level (as :func:`_norm_clipped_variances` does in the
    space of the directions), so the total and the variances along the directions
    are the same kind of clipped second moment and their ratio (the PVE) is not
    biased by clipping one more than the other. The U-statistic
    ``mean min(||d||^2 / 2, C)`` moves by at most ``2 C / n`` when one row is
    replaced. With declared ``bounds`` (a clipped view of the rows, widths
    ``w``) every ``||d||^2 / 2`` is at most ``sum_j w_j^2 / 2``
    (:func:`box_norm_bound`), which caps the searched ``C``. ``budget``:
    the part of :data:`TOTAL_PARAMS`'s tree. ``bound``: ``C`` as
    :func:`total_clip_bound` released it earlier (the search is then not run
    again). Returns ``(total, noise_scale, bound)``; ``total`` may be negative.
    """
    if bound is None:
        bound = total_clip_bound(X, budget, rng, ledger, pairs=pairs,
                                 quantile_level=quantile_level)
    total, noise_scale = total_at_bound(X, bound, budget["statistic"], noise, rng, ledger,
                                        pairs=pairs)
    return total, noise_scale, bound


def total_clip_bound(X, budget, rng, ledger, *, pairs="all", quantile_level=None):
    """The total variance's clip bound: a private quantile of ``||d||^2 / 2`` over
    a matching at :data:`TOTAL_PARAMS`'s level (or ``quantile_level``), with
    ``budget["clip bound"]``, capped by a declared box (see
    :func:`private_total_variance`)."""
    params = dict(TOTAL_PARAMS, pairs=pairs)
    if quantile_level is not None:
        params["quantile_level"] = quantile_level
    widths = X.widths()
    return _norm_clip_bound(X, params, budget, rng, ledger, TOTAL_BOUND,
                            None if widths is None else box_norm_bound(widths))


def total_at_bound(X, bound, leaf, noise, rng, ledger, *, pairs="all"):
    """The total variance's U-statistic clipped at the public ``bound``, released
    with its tail count on the Gaussian ``leaf`` (sensitivity ``2 bound / n``).
    Returns ``(total, noise_scale)``.

    Where the bound was released before the directions' pass and the total rode
    on it (:func:`~._scree.release_total_bound`), the U-statistic is read off
    that pass, over the Kendall matrix's design: any ``m``-partner design gives
    the same sensitivity, and the pass computes only the trace. Otherwise it
    takes a pass of its own, over a design of its own.
    """
    total = _clipped_total(X, bound, pairs)
    total, noise_scale = _release_with_tail(
        total, 2 * bound / X.shape[0], total_tail_share(X, bound), leaf, noise, rng,
        ledger, ["the data"], "total variance", _TOTAL_TAIL_WEIGHT)
    return float(total[0]), float(noise_scale[0])


def total_tail_share(X, bound):
    """The total's tail count at its clip ``bound``, exact, before noise: the
    share of the pairs of the bound's own matching whose ``||d||^2 / 2`` is at
    or above :func:`_total_tail_threshold` (a row is in one pair: it moves by
    at most ``sensitivity``) and the least each of them lost to the clipping
    (``losses``), as :func:`tail_shares` gives the variances'."""
    counts, n_values = X.matching_counts(TOTAL_BOUND, 0.5)
    threshold = _total_tail_threshold(bound, X.widths())
    return Bunch(shares=np.array([_share_at_or_above(counts, n_values, threshold)]),
                 sensitivity=1.0 / n_values, losses=np.array([threshold - bound]),
                 bounded=X.widths() is not None)


def _total_tail_threshold(bound, widths=None):
    """The total's tail count's threshold: :data:`_TAIL` bounds, or, with
    declared bounds (``widths``, public), halfway from the bound to the widest
    column's largest term ``max_j w_j^2 / 2`` when that is nearer. A pair
    holding a top-coded value and a typical one has a term about that large,
    often short of four bounds (adult with ``scale=True`` and its ranges:
    capital gain's top-coded pairs near 100 against a bound near 30, 0.85 to
    0.94 of the total kept, unseen)."""
    threshold = _TAIL * bound
    if widths is not None and len(widths):
        widest = float(np.max(np.asarray(widths, dtype=float)**2)) / 2
        if widest > bound:
            threshold = min(threshold, (bound + widest) / 2)
    return threshold


def _clipped_total(X, bound, pairs):
    """``mean min(||x_a - x_b||^2 / 2, bound)`` over the pairs: read off the
    Kendall matrix's pass where it rode on it, else the trace of the pair
    scatter clipped at ``bound`` over a design of its own."""
    ridden = X.ridden_mean(KENDALL_MATRIX, 2.0 * bound) if math.isfinite(2.0 * bound) \
        else None
    if ridden is not None:
        # min(D2 / 2, C) = C min(D2 / (2 C), 1)
        return bound * ridden
    return float(np.trace(_norm_clipped_scatter(X, bound, pairs, TOTAL_SCATTER)))


def _clipped_variances(X, components, params, budget, noise, rng, ledger, scales=None,
                       evidence=None):
    """The clipped U-statistic ``U_l = mean_{i<j} min((v_l.(x_i-x_j))^2/2, C_l)``.

    One row touches ``n - 1`` of the ``C(n, 2)`` terms, each in ``[0, C_l]``, so
    ``U_l`` moves by at most ``2 C_l / n`` and the vector by ``(2/n) ||C||_2`` in L2.
    ``params["clip"]`` is resolved (:func:`resolve_clip`).
    """
    if params["clip"] == "scaled":
        return _scaled_clipped_variances(X, components, scales, params, budget, noise,
                                         rng, ledger)
    if params["clip"] == "norm":
        return _norm_clipped_variances(X, components, params, budget, noise, rng, ledger,
                                       evidence)
    return _component_clipped_variances(X, components, params, budget, noise, rng, ledger,
                                        evidence)


def _scaled_clipped_variances(X, components, scales, params, budget, noise, rng, ledger):
    """Norm clipping in coordinates on each component's own scale.

    ``scales`` (``s_l >= 1``, the smallest 1) are public here: post-processing of
    the released Kendall matrix (:func:`~._kendall_spectrum.component_scales`),
    about each component's standard deviation over the smallest one's. The pair
    difference's coordinates ``y_l = v_l . d / s_l`` are clipped in norm to
    ``sqrt(2 C)`` (``C`` a private quantile of ``||y||^2 / 2`` over a random
    matching, or the box's), exactly as :func:`_norm_clipped_variances` does
    with ``s = 1``: the rows ``v_l / s_l`` are any linear map, so the k-vector of
    clipped means of ``y_l^2 / 2`` has L2 sensitivity ``2 sqrt(2) C / n``, and
    ``s_l^2`` times it is the variance along ``v_l``. Its noise sd is then
    ``s_l^2`` times one sd: on the scale of its own variance, not of the
    largest. Scales that are wrong (a model far from the data, a noisy matrix)
    cost accuracy (more noise, or more clipping of one coordinate), never
    privacy. Returns the released variances, their noise sds and each
    component's clip bound ``s_l^2 C`` (on ``(v_l . d)^2 / 2``).
    """
    # the norm clipping of the scaled rows (the box's norm bound of the scaled
    # matrix holds: ||M d|| <= ||V d|| <= ||d|| as every 1 / s_l <= 1)
    noisy, noise_scale, bound = _norm_clipped_variances(
        X, components / scales[:, None], params, budget, noise, rng, ledger)
    squares = scales**2
    return noisy * squares, noise_scale * squares, bound * squares


def _component_clipped_variances(X, components, params, budget, noise, rng, ledger,
                                 evidence=None):
    """Each component clipped at its own bound ``C_l``; one Gaussian for the vector.

    ``params["C"]`` is ``"auto"`` (one private quantile per component of
    ``(v_l . (x_a - x_b))^2 / 2`` over a random matching within the blocks, the
    leaves ``clip bound PC<l>`` of ``budget``, :func:`component_clip_parts`) or
    public bounds; with declared bounds and ``"auto"``, each searched bound is
    capped at the box's (:func:`box_component_bounds`). The statistic
    is the clipped U-statistic
    ``U_l = mean_{a<b} min((v_l.(x_a-x_b))^2/2, C_l)`` over the pairs within the
    blocks (all pairs in one block), released as ``U_l / C_l``: each coordinate
    moves by at most ``2/n`` (in one block), the vector by ``2 sqrt(k)/n`` in L2,
    plus the computation's rounding allowance
    (:func:`~sklearn_dppca._data._statistics.clipped_sum_sensitivity`). The noise on
    ``U_l`` is then proportional to ``C_l``, so a component on a small scale is
    not drowned by the noise of a large one. ``evidence``: see
    :func:`private_variances`.
    """
    n_components = components.shape[0]
    projected = X.projected(components)
    bounds = variances_clip_bounds(X, components, params, budget, rng, ledger)
    statistic, sensitivity = _component_pair_means(projected, bounds,
                                                   params.get("pairs", "all"))
    widths = X.widths()
    tail = tail_shares(projected, "component", bounds, None if widths is None
                       else box_component_bounds(widths, components))
    # (the statistic is in units of each bound: so is each component's loss)
    in_units = Bunch(tail, losses=tail.losses / np.where(bounds > 0, bounds, 1.0))
    proven = []
    noisy, noise_scale = _release_with_tail(
        statistic, sensitivity, in_units, budget["statistic"], noise, rng, ledger,
        _component_labels(n_components), "variance", proven=proven)
    _add_evidence(evidence, proven[0], bounds, tail.losses)
    return noisy * bounds, noise_scale * bounds, bounds


def _component_pair_means(projected, bounds, pairs):
    """Per component (column of the rows ``projected`` on the directions), the
    mean of ``min((v_l . d)^2 / 2, C_l) / C_l`` over all
    pairs within the blocks (exact, O(n log n) per component) or over an
    ``m``-partner design (the rule of
    :func:`~sklearn_dppca._pair_design.design_pairs`, public: the blocks'
    sizes; every component in one vectorised pass, at 200,000 rows a quarter of
    the exact sums' time), and the vector's L2 sensitivity as computed."""
    design = design_pairs(pairs, projected.sizes)
    if design == "all":
        return projected.clipped_pair_means(bounds)
    return projected.design_clipped_pair_means(bounds, design, SCREE_COMPONENT_SCATTER)


def variances_clip_bounds(X, components, params, budget, rng, ledger):
    """The clip bounds of the clipped scree's variances along ``components``
    (``params["clip"]`` ``"norm"`` or ``"scaled"``: one, on ``||V d||^2 / 2``
    for the rows ``V`` given; ``"component"``: one per component, on ``(v_l .
    d)^2 / 2``). Public when ``params["C"]`` is;
    else private quantiles over their matchings (the leaves ``clip bound`` or
    ``clip bound PC<l>`` of ``budget``), each capped at the declared box's
    (:func:`box_norm_bound`, :func:`box_component_bounds`): post-processing,
    no term can exceed it. Returns an array (one bound, or one per
    component)."""
    widths = X.widths()
    projected = X.projected(components)
    if params["clip"] != "component":        # one norm bound (scaled: of scaled rows)
        return np.array([_norm_clip_bound(
            projected, params, budget, rng, ledger, SCREE_BOUND,
            None if widths is None else box_norm_bound(widths, components))])
    n_components = components.shape[0]
    if not isinstance(params["C"], str):
        return check_public_clip(params["C"], n_components)
    labels = [f"PC{l + 1}" for l in range(n_components)]
    leaves = [budget[f"clip bound {label}"] for label in labels]
    counts, n_values = projected.column_matching_counts(SCREE_COMPONENT_BOUNDS)
    bounds = np.array([
        _positive_from_counts(column_counts, n_values, params["quantile_level"],
                              leaf.eps, rng, ledger, leaf.path, False)
        for column_counts, leaf in zip(counts, leaves)])
    warn_if_far(n_values, params["quantile_level"], leaves[0].eps,
                f"{budget.prefix}/clip bounds (each of {n_components})")
    if widths is not None:
        bounds = np.minimum(bounds, box_component_bounds(widths, components))
    return bounds


def _per_component_variances(estimator, X, components, params, budget, noise, rng,
                             ledger):
    """One 1-D mean estimate per component, each on its leaf ``PC<l>``."""
    n_components = components.shape[0]
    if X.shape[0] < 4 and (estimator is huber_mean or params.get("split", False)):
        name = "huber" if estimator is huber_mean else "pmwm (split=True)"
        raise ValueError(f"The {name} scree pairs the rows and needs at least 4 rows "
                         f"(2 pairs); X has n_samples={X.shape[0]}.")
    # w_il = (v_l . (x_a - x_b))^2 / 2 over a random matching: its mean estimates
    # the variance along v_l without any centre
    values = X.projected(components).matched_values(SCREE_VALUES)
    leaves = [budget[f"PC{l + 1}"] for l in range(n_components)]
    released = [
        estimator(values[:, l], leaf.eps, leaf.delta, rng, noise=noise, ledger=ledger,
                  step=leaf.path, return_noise_scale=True, **params)
        for l, leaf in enumerate(leaves)
    ]
    estimates, noise_scales = zip(*released)
    return np.array(estimates), np.array(noise_scales), None


def private_variances(X, components, *, method, params, budget, noise, rng, ledger,
                      scales=None, evidence=None):
    """Release the variances of ``X`` along the rows of ``components``.

    ``budget`` is the part of :func:`_variance_parts`'s tree; ``params`` has its
    ``clip`` resolved. Returns ``(raw, noise_scale, clip_bounds)``: the noisy
    variances before post-processing, the standard deviation of the Gaussian
    noise on each, and the released clip bounds (``None`` unless
    ``method="clipped"``). ``scales``: each component's public scale, for
    ``clip="scaled"`` (:func:`_scaled_clipped_variances`). ``evidence``: a list,
    or None; given, the norm or per-component clipped release appends what its
    tail count proved (:func:`total_clip_evidence` reads it).
    """
    if method == "clipped":
        return _clipped_variances(X, components, params, budget, noise, rng, ledger,
                                  scales, evidence)
    estimator = huber_mean if method == "huber" else pmwm_mean
    return _per_component_variances(estimator, X, components, params, budget, noise,
                                    rng, ledger)


# A clipped mean this close to its bound means nearly every term was clipped: the
# bound sits far below the data (its private search stopped early), and the release
# tells only that the statistic is at least about the bound. A bound at the 0.97
# level gives about 0.2 on Gaussian data and below 0.5 for any law with 3% of the
# terms above it (up to 0.9 only for norms of hundreds of nearly independent
# columns, whose squared norms concentrate).
_CLIPPED_SHARE_LIMIT = 0.9


def clipped_to_the_bound(estimates, bounds):
    """Mask of released clipped means that sit at their bound (post-processing)."""
    return np.asarray(estimates, dtype=float) >= _CLIPPED_SHARE_LIMIT * np.asarray(bounds)


def explained_variance_ratio(variances, total_variance):
    """Shares of the total variance, as scikit-learn's PCA (post-processing).

    The private total is first raised to at least the sum of the retained
    variances, so every share lies in [0, 1] and they sum to at most 1 (below 1
    when k < p). Returns ``(ratios, total)``; zeros (with a warning) when
    everything is 0.
    """
    total = max(float(total_variance), float(np.sum(variances)))
    if total <= 0:
        warn_user("All private variances are 0; the PVE is set to 0.",
                  PrivacyUtilityWarning)
        return np.zeros_like(variances), 0.0
    return variances / total, total


def implied_feature_variances(components, variances, total_variance):
    """Each column's variance implied by the released scree (post-processing, free).

    ``s_j^2 = sum_l lambda_l v_jl^2 + R (1 - sum_l v_jl^2) / (p - k)``: the
    retained variances along the rows ``v_l`` of ``components``, plus the rest of
    the private total, ``R = total - sum_l lambda_l``, spread evenly over the
    ``p - k`` directions orthogonal to them. The columns' variances sum to the
    total; the split of ``R`` is exact when the discarded eigenvalues are equal
    (isotropic noise) and a model otherwise. With ``k = p`` it is exact.
    A direct private release of ``p`` variances is far noisier at moderate ``n``
    (its noise grows with ``sqrt(p)`` or with the largest column's bound).
    """
    n_components, n_features = components.shape
    loadings = components**2
    retained = variances @ loadings
    if n_components == n_features:
        return retained
    rest = max(float(total_variance) - float(np.sum(variances)), 0.0)
    return retained + rest * np.clip(1.0 - loadings.sum(axis=0), 0.0, 1.0) / (
        n_features - n_components)


def post_process_variances(raw, monotone, printed=None):
    """Clamp at 0 and, with ``monotone``, the non-increasing isotonic projection
    of the ``printed`` values (a mask; all when None). A value that is not
    printed takes no part: pooled with one that is, its noise would move it
    (adult at eps 1: the capital-gain direction, third in the Kendall order,
    pooled with two variances of noise alone came out at 0.38 of its value).
    Pooling is for noise: an order the directions break by more than that is
    mended first, by putting the components in the variances' order
    (:func:`~._scree.variance_order`)."""
    clipped = np.clip(raw, 0, None)
    if not monotone:
        return clipped
    printed = np.ones(len(raw), dtype=bool) if printed is None else np.asarray(printed)
    if np.any(printed):
        clipped[printed] = monotone_scree(np.asarray(raw)[printed])
    return clipped
