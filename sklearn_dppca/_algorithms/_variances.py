"""Private variances along directions: the algorithms of the DP scree.

Data in, released values and ledger entries out; the estimators
(:class:`~sklearn_dppca.DPScree`, :class:`~sklearn_dppca.DPPCA`) compose them.
"""

import math

import numpy as np

from .._statistics import (
    SCREE_BOUND,
    SCREE_COMPONENT_BOUNDS,
    SCREE_SCATTER,
    SCREE_VALUES,
    TOTAL_BOUND,
    TOTAL_SCATTER,
)
from .._validation import (
    EXTENDED_REAL,
    PAIRS,
    POSITIVE,
    UNIT_OPEN,
    Boolean,
    Instance,
    Interval,
    InvalidParameterError,
    Options,
    check_param,
    warn_user,
)
from ..privacy import PrivacyUtilityWarning, gaussian_mechanism
from ..privacy._means import huber_mean, monotone_scree, pmwm_mean
from ..privacy._quantiles import (
    _SCALE_FREE_GRID,
    _positive_from_counts,
    rank_slack,
    search_informative,
    warn_if_far,
)

SCREE_METHODS = ("clipped", "huber", "pmwm", "kendall", "matrix")
#: Share of the scree budget (eps and delta) spent on the private total variance.
TOTAL_SHARE = 0.25

# The documented tuning values of each method; ``method_params`` may override them.
_SCREE_DEFAULTS = {
    "clipped": {
        # "norm", "component", "scaled", or "auto" (chosen from n, k, eps and
        # whether the directions' released matrix gives the components' scales)
        "clip": "auto",
        "C": "auto",             # "auto", "box" (declared bounds) or a public bound
        "quantile_share": 0.25,  # share of the scree eps spent on the clip bound(s)
        # level of the private upper quantile: "auto" (from n, k and eps, see
        # _choose_level) or a number in (0, 1)
        "quantile_level": "auto",
        "pairs": "all",          # pairs of the U-statistic ("norm" only): "all" or m
        # the norm bound: its own search ("own"), the total variance's released
        # bound ("total"), or "auto" (the first the fit's plan can buy, see
        # scree_variants)
        "bound": "auto",
        # "auto": also read the variances off the released Kendall matrix (an
        # elliptical model, free) and combine both where they agree within
        # their noise (see _scree._combine_elliptical); "off": the clipped alone
        "elliptical": "auto",
    },
    "huber": {"m2_frac": 0.25, "k_min": -40, "k_max": 40, "block_size": 16},
    "pmwm": {"beta": 1.01, "trim_const": 10.0, "eta": 0.01, "a": 0.0, "b": math.inf,
             "split": True},
    # ratios from the released Kendall eigenvalues (elliptical model), level from
    # the private total variance: nothing to tune
    "kendall": {},
    # read off the released clipped Kendall matrix (radial="clipped"): no release
    "matrix": {},
}


#: What each tuning value of a method may be; checked in ``fit`` before any spending.
#: (``C`` may also hold one bound per component: checked against their number by
#: :func:`_check_public_clip`.)
_METHOD_PARAM_CONSTRAINTS = {
    "clip": [Options("auto", "norm", "component", "scaled")],
    "C": ["auto", "box", POSITIVE,
          Instance((list, tuple, np.ndarray), "a list of bounds")],
    "quantile_share": [UNIT_OPEN],
    "quantile_level": ["auto", UNIT_OPEN],
    "pairs": PAIRS,
    "m2_frac": [UNIT_OPEN],
    "k_min": [Interval("int")],
    "k_max": [Interval("int")],
    "block_size": [None, Interval("int", 1, None)],
    "beta": [Interval("real", 1, None, closed="neither")],
    "trim_const": [POSITIVE],
    "eta": [Interval("real", 0, 0.5, closed="neither")],
    "a": [EXTENDED_REAL],
    "b": [EXTENDED_REAL],
    "split": [Boolean()],
    "bound": [Options("auto", "own", "total")],
    "elliptical": [Options("auto", "off")],
}


def check_method_params(method, method_params, name="method_params"):
    """Merge ``method_params`` into the defaults of ``method``; reject unknown names
    and check every value given (:data:`_METHOD_PARAM_CONSTRAINTS`)."""
    params = dict(_SCREE_DEFAULTS[method])
    method_params = check_param(method_params, [None, dict], name)
    if method_params is None:
        return params
    unknown = sorted(map(str, set(method_params) - set(params)))
    if unknown:
        raise InvalidParameterError(
            f"{name} has unknown names {unknown} for method={method!r}; "
            f"valid names: {sorted(params)}."
        )
    for key, value in method_params.items():
        params[key] = check_param(value, _METHOD_PARAM_CONSTRAINTS[key], f"{name}[{key!r}]")
    # pairs of values that only together are invalid: checked here, before any
    # charge (huber_mean and pmwm_mean would refuse them after it)
    if method == "huber" and params["k_min"] > params["k_max"]:
        raise ValueError(f"{name}['k_min'] must be <= {name}['k_max'], got "
                         f"{params['k_min']} > {params['k_max']}.")
    if method == "pmwm" and not params["a"] < params["b"]:
        raise ValueError(f"{name}['a'] must be < {name}['b'], got a={params['a']!r}, "
                         f"b={params['b']!r}.")
    return params


def check_scree_before_charge(method, params, n_samples, n_components,
                              name="method_params", bounded=False):
    """Refuse, before the charge, what the scree would refuse after it (public).

    ``params`` has its ``clip`` resolved. The huber scree and the split pmwm one
    pair the rows (at least 4 rows); public clip bounds ``C`` must match the
    bounds clipping uses (one for "norm", one per component for "component").
    (A pair design, ``pairs`` an int, is checked against the rows' blocks:
    :func:`~sklearn_dppca._dask_input.check_blockwise_fit`.)
    """
    if method == "huber" or (method == "pmwm" and params["split"]):
        if n_samples < 4:
            label = "huber" if method == "huber" else "pmwm (split=True)"
            raise ValueError(f"The {label} scree pairs the rows and needs at least 4 "
                             f"rows (2 pairs); X has n_samples={n_samples}.")
    if method == "clipped" and params["C"] == "box" and not bounded:
        raise ValueError(f"{name}['C']='box' takes the variances' bounds from the "
                         "declared box: it needs bounds (one public (low, high) range "
                         "per column).")
    if method == "clipped" and params["clip"] == "scaled" and not isinstance(params["C"], str):
        raise ValueError(f"{name}['C'] must be 'auto' or 'box' with clip='scaled': its "
                         "bound is on coordinates scaled by released values, which no "
                         "public number can bound.")
    if method == "clipped" and not isinstance(params["C"], str):
        _check_public_clip(params["C"], n_components if params["clip"] == "component"
                           else 1, f"{name}['C']")


def scree_gaussian_calls(method, params, leaf, n_samples):
    """The ``(eps, delta)`` of each Gaussian calibration the huber or pmwm
    estimate of one component makes on ``leaf`` (none for other methods).

    Public: the fits check ``noise="classical"`` on them before the charge
    (:func:`~sklearn_dppca.privacy._calibration.gaussian_noise_scale` refuses
    a classical calibration past its range). Mirrors the splits of
    :func:`~sklearn_dppca.privacy.huber_mean` (``n_steps`` gradient steps on
    ``(1 - m2_frac)`` of the leaf) and :func:`~sklearn_dppca.privacy.pmwm_mean`
    (the mean takes the whole leaf with ``split``, half of it without).
    """
    if method == "huber":
        m = max(n_samples // 2, 2)
        n_steps = max(1, math.ceil(math.log(m)))
        return [(leaf.eps * (1 - params["m2_frac"]) / n_steps, leaf.delta / n_steps)]
    if method == "pmwm":
        return [(leaf.eps if params["split"] else leaf.eps / 2, leaf.delta)]
    return []


def _check_public_clip(C, n_components, name="method_params['C']"):
    bounds = np.asarray(C, dtype=float)
    if bounds.ndim > 1 or bounds.size not in (1, n_components):
        raise ValueError(f"{name} must be one bound or {n_components} (one per "
                         f"component clipped), got {bounds.size}.")
    bounds = np.broadcast_to(bounds, (n_components,)).copy()
    if not np.all(np.isfinite(bounds) & (bounds > 0)):
        raise ValueError(f"{name} must be 'auto' or finite positive, got {C!r}.")
    return bounds


def resolve_clip(params, n_samples, n_components, eps, scaled=False):
    """``params`` with ``clip="auto"`` resolved by :func:`_choose_clip`,
    ``bound="auto"`` by :func:`_choose_bound` and ``quantile_level="auto"`` by
    :func:`_choose_level` (public: ``n``, ``k`` and the
    variances' ``eps``; ``scaled``: the scree reads a released Kendall matrix,
    which ``clip="scaled"`` needs; it is never chosen by ``"auto"``, see
    :func:`_scaled_clipped_variances`).

    Only the clipped method has a ``clip``; other methods' params are returned as
    they are. With ``C="box"`` (declared bounds) nothing is clipped: the
    variances and the total are moments about the box's private mean
    (:mod:`._box_moments`), and ``clip`` is not read. (Whether declared bounds
    replace ``C="auto"``'s searches is the estimators' choice, from their plan:
    :func:`scree_variants`.)
    """
    if "clip" not in params:
        return params
    level = params["quantile_level"]
    # the clip and bound choices read the base level; the level then follows them
    chosen = _resolve_clip_and_bound(
        dict(params, quantile_level=BASE_LEVEL if level == "auto" else level),
        n_samples, n_components, eps, scaled)
    if level == "auto":
        chosen["quantile_level"] = _choose_level(chosen, n_samples, n_components, eps)
    return chosen


def _resolve_clip_and_bound(params, n_samples, n_components, eps, scaled):
    if params["C"] == "box":
        # moments about the box's mean: nothing to clip, no bound to search
        return dict(params, bound="own")
    if params["clip"] == "scaled" and not scaled:
        raise ValueError("clip='scaled' takes each component's scale from the released "
                         "Kendall matrix: it needs directions released in this fit or "
                         "reused from a fitted estimator, not public ones.")
    params = dict(params, clip=_choose_clip(params, n_samples, n_components, eps))
    return dict(params, bound=_choose_bound(params, n_samples, eps))


#: The clipped scree's quantile level where ``n`` and ``eps`` are small.
BASE_LEVEL = 0.97
#: The fewest values a level chosen by :func:`_choose_level` leaves above it.
_MIN_TAIL = 10


def _choose_level(params, n_samples, n_components, eps):
    """The level of the clipped scree's searches for ``quantile_level="auto"``
    (public: ``n``, ``k``, ``eps`` and the resolved clip; ``params`` resolved).

    Clipping a second moment at its ``q``-quantile biases it down (about 5% for
    a Gaussian coordinate clipped at its 97% level), while the noise of the
    clipped sum grows with the bound. With few rows or little budget the noise
    wins and the level stays at :data:`BASE_LEVEL`. With more, a search stops
    about :func:`~sklearn_dppca.privacy._quantiles.rank_slack` ranks early, so a
    tail of that many values (at least :data:`_MIN_TAIL`) is the highest level it
    still reaches reliably: about twice as many values are then clipped, the
    order of ``1/eps`` that balances the clipping bias against the noise
    (Amin, Kulesza, Munoz Medina and Vassilvitskii 2019). Public bounds (``C``
    a number or ``"box"``) need no search and keep the base level.
    """
    if not isinstance(params["C"], str) or params["C"] == "box":
        return BASE_LEVEL
    search_eps = eps * params["quantile_share"]
    if params["clip"] == "component":
        search_eps /= n_components
    elif params["clip"] == "norm" and params["bound"] == "total":
        search_eps = _shared_search_eps(params, eps)
    n_values = n_samples // 2
    tail = max(rank_slack(search_eps), _MIN_TAIL)
    return max(BASE_LEVEL, 1.0 - tail / max(n_values, 1))


def _total_search_eps(eps):
    """The total variance's own search budget, given the variances' part ``eps``."""
    return eps * TOTAL_SHARE / (1.0 - TOTAL_SHARE) * _TOTAL_PARAMS["quantile_share"]


def _shared_search_eps(params, eps):
    """The norm bound's budget when the total's search finds it (both searches')."""
    return eps * params["quantile_share"] + _total_search_eps(eps)


def scree_variants(method, params, bounded):
    """The scree settings a fit may take, in the order it prefers them (public).

    For the clipped method with ``C="auto"``: the variances' own norm bound
    (``bound="own"``, two searches) before the total variance's released bound
    (``"total"``, one search with both budgets) when ``bound="auto"``, then, with
    declared ``bounds``, the moments about the box's private mean (``C="box"``,
    no search, :mod:`._box_moments`). The estimators take the first whose
    scree their plan, every part's budget settled, would run
    (:func:`~sklearn_dppca._algorithms._plan.bought_parts`); when none, the last
    (the plan then says what its scree would need). A search the plan can buy
    finds a bound near the data, and a codebook's box is much wider (breast
    cancer at eps 1: 3.5 to 33 times the total variance's searched bound over 10
    fits; ``benchmarks/bench_bounds.py``). Other methods and public bounds:
    ``params`` alone.
    """
    if method != "clipped" or params["C"] != "auto":
        return [params]
    bounds = ["own", "total"] if params["bound"] == "auto" else [params["bound"]]
    variants = [dict(params, bound=bound) for bound in bounds]
    return variants + [dict(params, C="box")] if bounded else variants


def _choose_bound(params, n_samples, eps):
    """``"own"`` or ``"total"`` for the norm bound's ``bound="auto"`` (public), by
    a rule on ``eps`` alone: for a direct call of :func:`resolve_clip` (the
    estimators try both through their plan, :func:`scree_variants`).

    The variances' own search (a quantile of ``||V d||^2 / 2`` over ``n / 2``
    matched pairs, with ``quantile_share`` of their eps) when it and the total
    variance's own search would both reach the data
    (:func:`~sklearn_dppca.privacy._quantiles.search_informative`); else the
    total variance's released bound, a quantile of ``||d||^2 / 2 >= ||V d||^2 / 2``
    (looser by the share of the total the k directions leave out), whose one
    search then gets both searches' budget. (Two searches that each fall short
    would leave the scree unbought where one with both budgets is not: the
    plan would then buy the scree at a smaller eps and not at a larger one.)
    """
    if params["clip"] != "norm" or not isinstance(params["C"], str):
        return "own"
    if params["bound"] != "auto":
        return params["bound"]
    reaches = all(search_informative(n_samples // 2, params["quantile_level"], search_eps,
                                     "scale-free")
                  for search_eps in (eps * params["quantile_share"], _total_search_eps(eps)))
    return "own" if reaches else "total"


def component_clip_parts(labels, params, bounded=False):
    """The budget of per-component clipping: a quantile per label, one statistic.

    Public clip bounds (``C`` given, or taken from the declared box:
    ``bounded``) need no search: the whole part buys the statistic."""
    if bounded or not isinstance(params["C"], str):
        return {"statistic": (1.0, "gaussian")}
    share = params["quantile_share"]
    bounds = {f"clip bound {label}": (share / len(labels), "pure") for label in labels}
    return {**bounds, "statistic": (1.0 - share, "gaussian")}


def _variance_parts(method, params, n_components, bounded=False):
    """The budget tree of the variances along ``n_components`` directions.

    ``params`` has its ``clip`` resolved (:func:`resolve_clip`). Shares are of
    the variances' own part; the leaves are the quantile searches (pure), the
    released statistic (Gaussian), or one estimate per component (huber and
    pmwm split their share themselves: basic composition). ``bounded``: the
    clip bounds come from the declared box (:func:`_box_norm_bound`,
    :func:`_box_component_bounds`): no search.
    """
    labels = [f"PC{l + 1}" for l in range(n_components)]
    if method != "clipped":
        return {label: (1.0 / n_components, "basic") for label in labels}
    if params["clip"] == "component":
        return component_clip_parts(labels, params, bounded)
    if bounded or not isinstance(params["C"], str):
        return {"statistic": (1.0, "gaussian")}
    share = params["quantile_share"]
    return {"clip bound": (share, "pure"), "statistic": (1.0 - share, "gaussian")}


#: The total variance's clipping: the scree's norm clipping, half on its bound.
_TOTAL_PARAMS = dict(_SCREE_DEFAULTS["clipped"], clip="norm", quantile_share=0.5,
                     quantile_level=BASE_LEVEL)


def scree_parts(method, params, n_components, bounded=False):
    """The budget tree of a scree: the variances and the private total variance.

    ``"kendall"`` releases the total only (the variances are post-processing of
    it and of the Kendall matrix): the whole part buys it. ``"matrix"`` releases
    nothing of its own (None: its share goes to the directions' matrix).
    ``bounded``: the fit has declared ``bounds``; with the clipped method's
    ``C="box"`` (:func:`_uses_box`) the variances and the total are moments
    about the box's private mean (:mod:`._box_moments`): the tree is that
    mean, the variances' statistic and the total's, no search.
    """
    if method == "matrix":
        return None
    if _uses_box(method, params, bounded):
        # moments about one private mean, bounded by the box (_box_moments)
        return {"mean": (_BOX_SHARES["mean"], "gaussian"),
                "variances": (_BOX_SHARES["variances"], {"statistic": (1.0, "gaussian")}),
                "total variance": (_BOX_SHARES["total variance"],
                                   {"statistic": (1.0, "gaussian")})}
    total = _variance_parts("clipped", _TOTAL_PARAMS, 1)
    if method == "kendall":
        return {"total variance": (1.0, total)}
    if method == "clipped" and params.get("bound") == "total":
        # one search, the total's, with both searches' budget; it comes first:
        # the variances clip at its released bound
        search = (1.0 - TOTAL_SHARE) * params["quantile_share"] \
            + TOTAL_SHARE * _TOTAL_PARAMS["quantile_share"]
        total_share = TOTAL_SHARE + (1.0 - TOTAL_SHARE) * params["quantile_share"]
        return {"total variance": (total_share, {
                    "clip bound": (search / total_share, "pure"),
                    "statistic": (1.0 - search / total_share, "gaussian")}),
                "variances": (1.0 - total_share, {"statistic": (1.0, "gaussian")})}
    return {"variances": (1.0 - TOTAL_SHARE,
                          _variance_parts(method, params, n_components)),
            "total variance": (TOTAL_SHARE, total)}


#: The scree's split with declared bounds (``C="box"``): the private mean the
#: moments are taken about, the variances along the directions, the total. (The
#: mean's noise enters the variances squared: at 150 rows and eps = 1 a smaller
#: share costs more through it than the statistics gain.)
_BOX_SHARES = {"mean": 0.25, "variances": 0.55, "total variance": 0.2}


def _uses_box(method, params, bounded):
    """Whether the scree's clip bounds (and the total's) are the box's: declared
    ``bounds`` and the clipped method with ``C="box"`` (public settings)."""
    return bool(bounded) and method == "clipped" and params.get("C") == "box"


def _box_component_bounds(widths, components):
    """Per component, the clip bound ``C_l = (sum_j |v_jl| w_j)^2 / 2`` a box of
    widths ``w`` gives (public: declared bounds and released directions).

    Sensitivity argument: two rows of the box differ by ``d`` with
    ``|d_j| <= w_j``, so ``|v_l . d| <= sum_j |v_jl| w_j`` and every term
    ``(v_l . d)^2 / 2`` is at most ``C_l`` (attained at opposite corners: the
    tightest bound). No term is clipped; the U-statistic over the pairs moves
    by at most ``2 C_l / n`` when one row moves anywhere in the box.
    """
    reach = np.abs(np.asarray(components, dtype=float)) @ np.asarray(widths, dtype=float)
    return reach**2 / 2


def _box_norm_bound(widths, components=None):
    """The clip bound on ``||V d||^2 / 2`` a box of widths ``w`` gives.

    ``||V d||^2 <= ||d||^2 <= sum_j w_j^2`` for orthonormal rows ``V`` (None:
    the identity, the total variance) and ``||V d||^2 = sum_l (v_l . d)^2 <=
    sum_l (sum_j |v_jl| w_j)^2``; the smaller of the two, halved, bounds every
    term of the norm-clipped scatter, so no pair is clipped and the released
    vector has the L2 sensitivity ``2 sqrt(2) C / n`` of
    :func:`_norm_clipped_variances` (``2 C / n`` for the total).
    """
    widths = np.asarray(widths, dtype=float)
    bound = float(np.sum(widths**2)) / 2
    if components is not None:
        bound = min(bound, float(np.sum(_box_component_bounds(widths, components))))
    return bound


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
        return float(_check_public_clip(params["C"], 1)[0])
    bound = Y.matching_quantile(name, 0.5, params["quantile_level"],
                                budget["clip bound"], rng, ledger)
    return bound if box_bound is None else min(bound, box_bound)


def _norm_clipped_variances(X, components, params, budget, noise, rng, ledger):
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
    """
    widths = X.widths()
    projected = X.projected(components)
    bound = _norm_clip_bound(projected, params, budget, rng, ledger, SCREE_BOUND,
                             None if widths is None else _box_norm_bound(widths, components))
    scatter = _norm_clipped_scatter(projected, bound, params["pairs"], SCREE_SCATTER)
    counts, n_values = projected.matching_counts(SCREE_BOUND, 0.5)
    noisy, noise_scale = _release_with_tail(
        np.diag(scatter).copy(), 2 * math.sqrt(2) * bound / X.shape[0],
        _share_at_or_above(counts, n_values, _TAIL * bound), 1.0 / n_values,
        (_TAIL - 1.0) * bound, budget["statistic"], noise, rng, ledger,
        _component_labels(components.shape[0]), "variance")
    return noisy, noise_scale, np.array([bound])


def _component_labels(n_components):
    return [f"PC{l + 1}" for l in range(n_components)]


#: A pair term above this many clip bounds lost at least ``(_TAIL - 1) C`` to
#: the clipping: the tail count's threshold.
_TAIL = 4.0
#: The tail count's share of the sensitivity of the release it rides on: its
#: coordinate costs the statistic ``sqrt(1 + 1/16)``, 3% more noise.
_TAIL_WEIGHT = 0.25


def _release_with_tail(statistic, sensitivity, shares, share_sensitivity, loss, leaf,
                       noise, rng, ledger, names, what):
    """Release a clipped statistic with its tail counts, and widen the noise sd
    of a value the clipping moved by more than it.

    ``shares``: the share of the matched pair terms at or above ``_TAIL`` clip
    bounds (one for all the values of a vector clipped in norm, or one each),
    exact, of L2 sensitivity ``share_sensitivity`` (one row is in one matched
    pair: ``sqrt(len(shares)) / m``). Each such term lost at least ``(_TAIL -
    1)`` bounds to the clipping: ``loss * share`` (``loss``, per value, that
    many bounds in the value's units) is a lower bound on the clipping's bias of
    the value (of their sum, for a vector clipped in norm: it is charged to
    each). The shares are appended to the statistic, scaled so that their
    sensitivity is ``_TAIL_WEIGHT`` of the statistic's, and released by the same
    Gaussian mechanism (L2 sensitivity ``sqrt(1 + _TAIL_WEIGHT^2)`` times the
    statistic's). Where the bias's lower bound, the share less two of its noise
    sds, exceeds a value's noise sd, the value's sd is raised to at least the
    value (it is then not estimable) and a PrivacyUtilityWarning names it: a
    heavy tail beyond the bound carries an unknown share of the variance (adult
    at eps 1: the capital-gain direction, clipped at the searched bound, kept 17
    to 22% of its variance in two seeds of three, and the count flagged both).
    Light tails leave the shares near 0 (a Gaussian term is above four times its
    0.97 quantile with chance 1.5e-5). The counts see a tail that holds more
    than about ``17 / (n mu)`` of the pairs (``mu`` the statistic's); a thinner
    one goes unseen: declare bounds. Returns ``(values, noise sds)``.
    """
    statistic = np.atleast_1d(np.asarray(statistic, dtype=float))
    shares = np.atleast_1d(np.asarray(shares, dtype=float))
    scale = _TAIL_WEIGHT * sensitivity / share_sensitivity
    noisy, noise_scale = gaussian_mechanism(
        np.concatenate([statistic, shares * scale]),
        sensitivity * math.hypot(1.0, _TAIL_WEIGHT), rng=rng, noise=noise,
        ledger=ledger, **leaf.mechanism_budget())
    values, seen = noisy[:statistic.size], noisy[statistic.size:] / scale
    lost = loss * np.maximum(seen - 2.0 * noise_scale / scale, 0.0)
    sds = np.full(values.shape, noise_scale)
    moved = lost > sds
    if np.any(moved):
        listed = ", ".join(str(label) for label, flag in zip(names, moved) if flag)
        warn_user(
            f"The private {what} of {listed} is clipped at a bound with a heavy tail "
            "beyond it: the clipping moved it by more than its noise (at least "
            f"{_TAIL - 1:g} bounds for each of the pairs past {_TAIL:g}), so it is "
            "not estimable. Declare bounds (the box's moments clip nothing), or "
            "transform the column.",
            PrivacyUtilityWarning,
        )
    return values, np.where(moved, np.maximum(sds, np.abs(values)), sds)


def _share_at_or_above(counts, n_values, threshold):
    """The share of the values at or above the first point of the scale-free grid
    at or above ``threshold`` (``counts``: below each point), 0 past the grid."""
    index = int(np.searchsorted(_SCALE_FREE_GRID, threshold))
    if index >= len(counts) or n_values <= 0:
        return 0.0
    return float(n_values - counts[index]) / n_values


def private_total_variance(X, budget, noise, rng, ledger, *, pairs="all",
                           quantile_level=None):
    """The private total variance ``E ||x_a - x_b||^2 / 2`` (the trace of the covariance).

    The pair differences are clipped in norm to ``sqrt(2 C)`` with ``C`` a private
    quantile at the scree's level (as :func:`_norm_clipped_variances` does in the
    space of the directions), so the total and the variances along the directions
    are the same kind of clipped second moment and their ratio (the PVE) is not
    biased by clipping one more than the other. The U-statistic
    ``mean min(||d||^2 / 2, C)`` moves by at most ``2 C / n`` when one row is
    replaced. With declared ``bounds`` (a clipped view of the rows, widths
    ``w``) every ``||d||^2 / 2`` is at most ``sum_j w_j^2 / 2``
    (:func:`_box_norm_bound`), which caps the searched ``C``. ``budget``:
    the part of :data:`_TOTAL_PARAMS`'s tree. Returns ``(total, noise_scale,
    bound)``; ``total`` may be negative.
    """
    params = dict(_TOTAL_PARAMS, pairs=pairs)
    if quantile_level is not None:
        params["quantile_level"] = quantile_level
    widths = X.widths()
    bound = _norm_clip_bound(X, params, budget, rng, ledger, TOTAL_BOUND,
                             None if widths is None else _box_norm_bound(widths))
    scatter = _norm_clipped_scatter(X, bound, pairs, TOTAL_SCATTER)
    counts, n_values = X.matching_counts(TOTAL_BOUND, 0.5)
    total, noise_scale = _release_with_tail(
        float(np.trace(scatter)), 2 * bound / X.shape[0],
        _share_at_or_above(counts, n_values, _TAIL * bound), 1.0 / n_values,
        (_TAIL - 1.0) * bound, budget["statistic"], noise, rng, ledger, ["the data"],
        "total variance")
    return float(total[0]), float(noise_scale[0]), bound


def _clipped_variances(X, components, params, budget, noise, rng, ledger, scales=None):
    """The clipped U-statistic ``U_l = mean_{i<j} min((v_l.(x_i-x_j))^2/2, C_l)``.

    One row touches ``n - 1`` of the ``C(n, 2)`` terms, each in ``[0, C_l]``, so
    ``U_l`` moves by at most ``2 C_l / n`` and the vector by ``(2/n) ||C||_2`` in L2.
    ``params["clip"]`` is resolved (:func:`resolve_clip`).
    """
    if params["clip"] == "scaled":
        return _scaled_clipped_variances(X, components, scales, params, budget, noise,
                                         rng, ledger)
    if params["clip"] == "norm":
        return _norm_clipped_variances(X, components, params, budget, noise, rng, ledger)
    return _component_clipped_variances(X, components, params, budget, noise, rng, ledger)


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


def _component_clipped_variances(X, components, params, budget, noise, rng, ledger):
    """Each component clipped at its own bound ``C_l``; one Gaussian for the vector.

    ``params["C"]`` is ``"auto"`` (one private quantile per component of
    ``(v_l . (x_a - x_b))^2 / 2`` over a random matching within the blocks, the
    leaves ``clip bound PC<l>`` of ``budget``, :func:`component_clip_parts`) or
    public bounds; with declared bounds and ``"auto"``, each searched bound is
    capped at the box's (:func:`_box_component_bounds`). The statistic
    is the clipped U-statistic
    ``U_l = mean_{a<b} min((v_l.(x_a-x_b))^2/2, C_l)`` over the pairs within the
    blocks (all pairs in one block), released as ``U_l / C_l``: each coordinate
    moves by at most ``2/n`` (in one block), the vector by ``2 sqrt(k)/n`` in L2,
    plus the computation's rounding allowance
    (:func:`~sklearn_dppca._statistics.clipped_sum_sensitivity`). The noise on
    ``U_l`` is then proportional to ``C_l``, so a component on a small scale is
    not drowned by the noise of a large one.
    """
    n_components = components.shape[0]
    widths = X.widths()
    projected = X.projected(components)
    if isinstance(params["C"], str):
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
            bounds = np.minimum(bounds, _box_component_bounds(widths, components))
    else:
        bounds = _check_public_clip(params["C"], n_components)
    statistic, sensitivity = projected.clipped_pair_means(bounds)
    # each component's tail count, from the matching its search read (relative to
    # its bound: a term past _TAIL bounds lost _TAIL - 1 of them)
    counts, n_values = projected.column_matching_counts(SCREE_COMPONENT_BOUNDS)
    shares = [_share_at_or_above(column, n_values, _TAIL * bound)
              for column, bound in zip(counts, bounds)]
    noisy, noise_scale = _release_with_tail(
        statistic, sensitivity, shares, math.sqrt(n_components) / n_values, _TAIL - 1.0,
        budget["statistic"], noise, rng, ledger, _component_labels(n_components),
        "variance")
    return noisy * bounds, noise_scale * bounds, bounds


def _choose_clip(params, n_samples, n_components, eps):
    """``"norm"`` or ``"component"`` for ``clip="auto"``, from public n, k and eps.

    Per-component clipping needs k private quantiles, each with ``eps_q / k``. A
    search stops early by about ``(2 k / eps_q) ln(steps)`` counts; when that slack
    exceeds the ``(1 - level)`` tail of the ``n / 2`` paired values, the bounds land
    far below the intended level and bias every variance down, so one norm bound
    (one quantile) is used instead. With enough counts, per-component bounds adapt
    to components on very different scales, which a single norm bound cannot.
    """
    if params["clip"] != "auto":
        return params["clip"]
    if not isinstance(params["C"], str):
        return "component" if np.ndim(params["C"]) else "norm"
    quantile_eps = eps * params["quantile_share"] / n_components
    tail_count = (n_samples // 2) * (1 - params["quantile_level"])
    return "component" if tail_count >= 2 * rank_slack(quantile_eps) else "norm"


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
                      scales=None):
    """Release the variances of ``X`` along the rows of ``components``.

    ``budget`` is the part of :func:`_variance_parts`'s tree; ``params`` has its
    ``clip`` resolved. Returns ``(raw, noise_scale, clip_bounds)``: the noisy
    variances before post-processing, the standard deviation of the Gaussian
    noise on each, and the released clip bounds (``None`` unless
    ``method="clipped"``). ``scales``: each component's public scale, for
    ``clip="scaled"`` (:func:`_scaled_clipped_variances`).
    """
    if method == "clipped":
        return _clipped_variances(X, components, params, budget, noise, rng, ledger,
                                  scales)
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
    pooled with two variances of noise alone came out at 0.38 of its value)."""
    clipped = np.clip(raw, 0, None)
    if not monotone:
        return clipped
    printed = np.ones(len(raw), dtype=bool) if printed is None else np.asarray(printed)
    if np.any(printed):
        clipped[printed] = monotone_scree(np.asarray(raw)[printed])
    return clipped
