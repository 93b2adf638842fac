"""The DP scree's settings, decided from public inputs only (``n``, ``p``, the
budget, the method's parameters; never the data): the methods and their
parameters, the refusals made before any charge, the clip bounds' form and
level, the variants the plan tries and each method's budget tree. The
mechanisms that follow them are in :mod:`~sklearn_dppca._algorithms._variances`.
"""

import math

import numpy as np

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
)
from ..privacy._quantiles import (
    rank_slack,
    search_informative,
)
from .._bunch import Bunch
from ._box_moments import box_diagonal, box_scree_sds, complement_basis


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
        "pairs": "auto",         # pairs of the U-statistic ("norm" only): "auto", "all" or m
        # the norm bound: its own search ("own"), the total variance's released
        # bound ("total"), that bound or the declared box's moments, whichever
        # has the less noise ("box", declared bounds only), the variances' own
        # bound or the box's moments ("box-own", likewise), or "auto" (the first
        # the fit's plan can buy, see scree_variants)
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
#: :func:`check_public_clip`.)
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
    "bound": [Options("auto", "own", "total", "box", "box-own")],
    "elliptical": [Options("auto", "off")],
}


def check_method_params(method, method_params, name="scree_params"):
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
                              name="scree_params", bounded=False):
    """Refuse, before the charge, what the scree would refuse after it (public).

    ``params`` has its ``clip`` resolved. The huber scree and the split pmwm one
    pair the rows (at least 4 rows); public clip bounds ``C`` must match the
    bounds clipping uses (one for "norm", one per component for "component").
    (A pair design, ``pairs`` an int, is checked against the rows' blocks:
    :func:`~sklearn_dppca._data._input.check_blockwise_fit`.)
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
    if method == "clipped" and params["bound"] in _BOX_OR_SEARCH and not bounded:
        raise ValueError(f"{name}['bound']={params['bound']!r} weighs a searched bound "
                         "against the declared box: it needs bounds (one public (low, "
                         "high) range per column).")
    if method == "clipped" and params["bound"] in _BOX_OR_SEARCH and params["C"] != "auto":
        raise ValueError(f"{name}['bound']={params['bound']!r} searches its bound: it "
                         f"needs {name}['C']='auto'.")
    if method == "clipped" and params["clip"] == "scaled" and not isinstance(params["C"], str):
        raise ValueError(f"{name}['C'] must be 'auto' or 'box' with clip='scaled': its "
                         "bound is on coordinates scaled by released values, which no "
                         "public number can bound.")
    if method == "clipped" and not isinstance(params["C"], str):
        check_public_clip(params["C"], n_components if params["clip"] == "component"
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


def check_public_clip(C, n_components, name="scree_params['C']"):
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
    if params["bound"] == "box":
        # the total's bound clips the norm of the projected differences
        return dict(params, clip="norm")
    if params["bound"] == "box-own":
        # the variances' own bounds, clipping as bound="own" would (in norm
        # where the rows' scaled coordinates would need a released matrix)
        clip = "norm" if params["clip"] == "scaled" else _choose_clip(
            params, n_samples, n_components, eps)
        return dict(params, clip=clip)
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
    elif params["clip"] == "norm" and params["bound"] in ("total", "box"):
        search_eps = _shared_search_eps(params, eps)
    n_values = n_samples // 2
    tail = max(rank_slack(search_eps), _MIN_TAIL)
    return max(BASE_LEVEL, 1.0 - tail / max(n_values, 1))


def _total_search_eps(eps):
    """The total variance's own search budget, given the variances' part ``eps``."""
    return eps * TOTAL_SHARE / (1.0 - TOTAL_SHARE) * TOTAL_PARAMS["quantile_share"]


def _shared_search_eps(params, eps):
    """The norm bound's budget when the total's search finds it (both searches')."""
    return eps * params["quantile_share"] + _total_search_eps(eps)


def scree_variants(method, params, bounded):
    """The scree settings a fit may take, in the order it prefers them (public).

    For the clipped method with ``C="auto"``: the variances' own norm bound
    (``bound="own"``, two searches) before the total variance's released bound
    (``"total"``, one search with both budgets) when ``bound="auto"``. With
    declared ``bounds``, ``bound="auto"`` is first each of those weighed against
    the box (``"box-own"``, then ``"box"``: the form with the less noise, see
    :func:`box_is_quieter`; where the search wins, the fit without bounds, draw
    for draw), then as without bounds, then the moments about the box's private
    mean alone (``C="box"``, no search, :mod:`._box_moments`).
    The estimators take the first whose scree their plan, every part's budget
    settled, would run
    (:func:`~sklearn_dppca._algorithms._plan.bought_parts`); when none, the last
    (the plan then says what its scree would need). A search the plan can buy
    finds a bound near the data, and a codebook's box is much wider (breast
    cancer at eps 1: 3.5 to 33 times the total variance's searched bound over 10
    fits; ``benchmarks/bench_bounds.py``). Other methods and public bounds:
    ``params`` alone.
    """
    if method != "clipped" or params["C"] != "auto":
        return [params]
    if params["bound"] != "auto":
        bounds = [params["bound"]]
    else:
        bounds = (["box-own", "box"] if bounded else []) + ["own", "total"]
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
    clip bounds come from the declared box (:func:`box_norm_bound`,
    :func:`box_component_bounds`): no search.
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
TOTAL_PARAMS = dict(_SCREE_DEFAULTS["clipped"], clip="norm", quantile_share=0.5,
                     quantile_level=BASE_LEVEL)


def scree_parts(method, params, n_components, bounded=False):
    """The budget tree of a scree: the variances and the private total variance.

    ``"kendall"`` releases the total only (the variances are post-processing of
    it and of the Kendall matrix): the whole part buys it. ``"matrix"`` releases
    nothing of its own (None: its share goes to the directions' matrix).
    ``bounded``: the fit has declared ``bounds``; with the clipped method's
    ``C="box"`` (:func:`_uses_box`) the variances and the total are moments
    about the box's private mean (:mod:`._box_moments`): the tree is that
    mean, the total's statistic and the variances', no search.
    """
    if method == "matrix":
        return None
    if _uses_box(method, params, bounded):
        # moments about one private mean, bounded by the box (_box_moments)
        return {"mean": (_BOX_SHARES["mean"], "gaussian"),
                "total variance": (_BOX_SHARES["total variance"],
                                   {"statistic": (1.0, "gaussian")}),
                "variances": (_BOX_SHARES["variances"], {"statistic": (1.0, "gaussian")})}
    total = _variance_parts("clipped", TOTAL_PARAMS, 1)
    if method == "kendall":
        return {"total variance": (1.0, total)}
    if method == "clipped" and params.get("bound") == "box":
        return _box_or_search_parts(params)
    if method == "clipped" and params.get("bound") == "box-own":
        return _box_or_own_parts(params, n_components)
    if method == "clipped" and params.get("bound") == "total":
        # one search, the total's, with both searches' budget; it comes first:
        # the variances clip at its released bound
        search = _total_search_share(params)
        total_share = _total_share(params)
        return {"total variance": (total_share, {
                    "clip bound": (search / total_share, "pure"),
                    "statistic": (1.0 - search / total_share, "gaussian")}),
                "variances": (1.0 - total_share, {"statistic": (1.0, "gaussian")})}
    return {"variances": (1.0 - TOTAL_SHARE,
                          _variance_parts(method, params, n_components)),
            "total variance": (TOTAL_SHARE, total)}


def _total_search_share(params):
    """The share of the scree's budget of the total's search when it finds the
    variances' bound too (``bound="total"`` and ``"box"``): both searches'."""
    return (1.0 - TOTAL_SHARE) * params["quantile_share"] \
        + TOTAL_SHARE * TOTAL_PARAMS["quantile_share"]


def _total_share(params):
    """The total's share of the scree's budget when its search finds the
    variances' bound too: its own, and the variances' search's."""
    return TOTAL_SHARE + (1.0 - TOTAL_SHARE) * params["quantile_share"]


def _box_or_search_parts(params):
    """The tree of ``bound="box"``: the budget of ``bound="total"`` (the
    total's search with both searches' budget, the total's statistic, the
    variances'), with the box's private mean carved out of the variances' share
    (:data:`BOX_MEAN_SHARE`). Where the search's bound wins
    (:func:`box_is_quieter`) the mean is not released and its budget goes back
    to the variances: the scree is then the fit without bounds, draw for draw
    (a box that does not help costs nothing). Where the box wins, the mean, the
    total and the variances are the box's moments. Flat, so that the leaves run
    in this order in both forms."""
    search = _total_search_share(params)
    total_share = _total_share(params)
    variances = 1.0 - total_share
    return {"total variance/clip bound": (search, "pure"),
            "mean": (variances * BOX_MEAN_SHARE, "gaussian"),
            "total variance/statistic": (total_share - search, "gaussian"),
            "variances": (variances * (1.0 - BOX_MEAN_SHARE),
                          {"statistic": (1.0, "gaussian")})}


def _box_or_own_parts(params, n_components):
    """The tree of ``bound="box-own"``: the budget of ``bound="own"`` (the
    variances' search(es) and statistic, then the total's), with the box's
    private mean carved out of the variances' statistic
    (:data:`BOX_MEAN_SHARE`). The variances' search decides
    (:func:`box_variances_are_quieter`): where it wins, the mean is not
    released, its budget goes back to the variances, and the scree is the fit
    without bounds, draw for draw; where the box wins, the mean, the variances
    and the total are the box's moments, and the total's bound (searched before
    the directions, as ``"own"`` searches it) goes unused. Flat, in the order
    the leaves run in both forms."""
    variances = _variance_parts("clipped", params, n_components)
    share = 1.0 - TOTAL_SHARE
    statistic = share * variances.pop("statistic")[0]
    parts = {f"variances/{name}": (share * part, kind)
             for name, (part, kind) in variances.items()}
    parts["mean"] = (statistic * BOX_MEAN_SHARE, "gaussian")
    parts["variances/statistic"] = (statistic * (1.0 - BOX_MEAN_SHARE), "gaussian")
    for name, (part, kind) in _variance_parts("clipped", TOTAL_PARAMS, 1).items():
        parts[f"total variance/{name}"] = (TOTAL_SHARE * part, kind)
    return parts


def _centred_guess(half_widths, n_samples, mean_unit):
    """The box's mean as the screens assume it before it is released: at the
    box's centre, with the noise sd of every column of the scree's mean, ``S /
    n`` units of its leaf, ``S = sqrt(sum_j w_j^2)`` (``mean_unit``: its sd per
    unit of sensitivity; :func:`~._box_moments.release_box_mean` with
    ``common_unit``). Public: the box, ``n`` and the budget."""
    half_widths = np.asarray(half_widths, dtype=float)
    zeros = np.zeros(half_widths.size)
    sd = box_diagonal(2.0 * half_widths) / n_samples * mean_unit
    return Bunch(mean=zeros, centre=zeros, half=half_widths,
                 noise_scale=np.full(half_widths.size, sd))


def box_variances_are_quieter(half_widths, components, bounds, unit_sds, n_samples):
    """Whether the box's moments give every variance along the released
    ``components`` less noise than the pair statistics clipped at the
    variances' released ``bounds`` (public: the box, the released directions
    and bounds, the leaves' budgets and ``n``).

    ``bounds``: one norm bound, or one per component. ``unit_sds``: the noise
    sd per unit of sensitivity of the mean's leaf, of the box's statistic (the
    variances' and the total's leaves joined; the variances' alone under basic
    accounting), of the search's (the variances' leaf joined with the mean's)
    and of the box's total's own leaf (None where it is joined). The clipped
    variances' sds are
    :func:`searched_variance_sds`; the box's are
    :func:`~._box_moments.box_scree_sds` with the mean at the box's centre
    (:func:`_centred_guess`). A mean far from the centre makes the box's noise
    larger than this (up to four times, at an edge): the rule favours the box
    there, and the fit looks again once part of the mean is released. Directions
    that are not orthonormal get the search (the total is then not their
    variances' sum plus a rest)."""
    return bool(np.all(_box_quieter_variances(half_widths, components, bounds, unit_sds,
                                             n_samples)))


def _box_quieter_variances(half_widths, components, bounds, unit_sds, n_samples):
    """Per variance along the released ``components``, whether the box's moments
    give it less noise than the pair statistic clipped at the released
    ``bounds``, with the mean at the box's centre (see
    :func:`box_variances_are_quieter`, whose arguments these are); all False
    for directions that are not orthonormal."""
    box = _centred_box_sds(half_widths, components, unit_sds, n_samples)
    if box is None:
        return np.zeros(len(components), dtype=bool)
    return box[0] <= searched_variance_sds(bounds, len(components), n_samples,
                                           unit_sds[2])


def _centred_box_sds(half_widths, components, unit_sds, n_samples):
    """The box's scree's noise sds (the variances', the total's) with its mean
    at the box's centre (:func:`_centred_guess`), or None for directions that
    are not orthonormal. ``unit_sds``: the sds per unit of sensitivity of the
    mean's leaf, of the box's statistic and of the search's, and, where the
    box's total has a leaf of its own (basic accounting), of that leaf (None
    where it is one release with the variances)."""
    components = np.asarray(components, dtype=float)
    rest = complement_basis(components)
    if rest is None:
        return None
    mean_unit, box_unit, _, total_unit = unit_sds
    return box_scree_sds(_centred_guess(half_widths, n_samples, mean_unit), components,
                         rest, n_samples, box_unit, total_unit)


def searched_variance_sds(bounds, n_components, n_samples, unit):
    """The noise sds of the variances' pair statistics clipped at the released
    ``bounds`` (one norm bound, or one per component; before any widening):
    ``2 sqrt(2) C / n`` units of the leaf (``unit``: its sd per unit of
    sensitivity) for a norm bound, ``2 sqrt(k) C_l / n`` per component."""
    bounds = np.asarray(bounds, dtype=float)
    per_bound = 2.0 * (math.sqrt(2.0) if bounds.size == 1 else math.sqrt(n_components))
    return per_bound * bounds / n_samples * unit


def searched_total_sd(bound, n_samples, unit):
    """The noise sd of the total's pair statistic clipped at the released
    ``bound``: ``2 bound / n`` units of its leaf."""
    return 2.0 * bound / n_samples * unit


def box_is_quieter(half_widths, components, bound, unit_sds, n_samples):
    """Whether the box's moments give the total variance less noise than the
    pair statistic clipped at the total's released ``bound`` (public: the
    declared box, the released directions and bound, the leaves' budgets and
    ``n``).

    ``unit_sds``: the noise sd per unit of sensitivity of the mean's leaf, of
    the box's statistic (the variances' and the total's leaves joined; the
    variances' alone under basic accounting), of the total's and of the box's
    total's own leaf (None where it is joined: under basic accounting the box
    releases its total on the total's leaf). The pair form's sd is
    :func:`searched_total_sd`; the box's,
    :func:`~._box_moments.box_scree_sds` with the mean at the box's centre
    (:func:`_centred_guess`). A box about as wide as the data (each column
    spans its own box) wins; a codebook's box several times wider than the
    data loses to the search, which finds the data's own scale.
    """
    box = _centred_box_sds(half_widths, components, unit_sds, n_samples)
    return box is not None and bool(
        box[1] <= searched_total_sd(bound, n_samples, unit_sds[2]))


#: The scree's split with declared bounds (``C="box"``): the private mean the
#: moments are taken about, the variances along the directions, the total. (The
#: mean's noise enters the variances squared: at 150 rows and eps = 1 a smaller
#: share costs more through it than the statistics gain.)
_BOX_SHARES = {"mean": 0.25, "variances": 0.55, "total variance": 0.2}
#: With ``bound="box"`` or ``"box-own"``: the box's mean's share of the
#: variances' statistic (about the share it has of the mean and the variances
#: in :data:`_BOX_SHARES`).
BOX_MEAN_SHARE = 0.3
#: The ``bound`` values that weigh a searched bound against the declared box.
_BOX_OR_SEARCH = ("box", "box-own")


def _uses_box(method, params, bounded):
    """Whether the scree's clip bounds (and the total's) are the box's: declared
    ``bounds`` and the clipped method with ``C="box"`` (public settings)."""
    return bool(bounded) and method == "clipped" and params.get("C") == "box"


def box_component_bounds(widths, components):
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


def box_norm_bound(widths, components=None):
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
        bound = min(bound, float(np.sum(box_component_bounds(widths, components))))
    return bound


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
