"""What a fit can buy, decided from public inputs only: the plan of a fit.

Each leaf of a fit's budget is one mechanism step. A public rule (``n``, ``p``,
the leaf's budget and the settings; never the data) predicts whether the step's
release would be informative:

* a **quantile search** over the whole float range (the scale-free grid of the
  clip bounds, the radius and the spreads) must reach the data and stop above the
  median (:func:`~sklearn_dppca.privacy._quantiles.search_informative`); a
  search of the score frame, whose grids are tied to released scales, must
  typically stop within a quarter of its rows (its rank slack);
* a **Gaussian statistic** must have a noise sd, relative to the statistic's
  public scale (its clip bound, or the Kendall matrix's trace 1), of at most a
  rule's limit (:data:`_RELATIVE_NOISE`);
* the **score histogram** must let an average cell of the cloud, on the coarsest
  grid (4 x 4 cells per group), reach twice its release threshold.

A part of the fit whose steps are not all informative is not run; its budget goes
to the parts that are (:func:`bought_parts`). For every step the plan also gives
``eps_needed``: the total ``eps`` at which the step would become informative
(bisection over the grant, the split kept).
"""

import functools
import math
from dataclasses import replace

import numpy as np

# (a prediction, never the noise of a release: the mechanisms calibrate that, and
# the audits patch it there)
from ..privacy import _calibration
from ._directions import _RADIUS_SHARE, _auto_radius_level
from ._spread import spread_level
from ._scree_settings import BASE_LEVEL, BOX_MEAN_SHARE
from ..privacy._quantiles import rank_slack, search_informative
from .._budget_split import split_text
from .._bunch import Bunch
from .._validation import check_bounds
from .._data._statistics import KENDALL_MATRIX, RADIUS, SPREAD_BOUNDS, TOTAL_BOUND, TWO_SIDED

#: The largest noise sd, relative to the statistic's public scale, of an
#: informative Gaussian release: the Kendall matrix (operator norm of the noise,
#: against its trace 1), a clipped variance or total (against its clip bound), a
#: spread's clipped variance (against its bound: a 0.99 bound is about 7 times a
#: Gaussian column's variance, and the spread should be within a factor 1.5).
#: With declared bounds: a moment about the box's mean against its bound (a
#: spread's: a tenth of the box's limit of a searched one, as a column fills
#: about a third of its box), the box's mean per column against its width
#: (its noise enters a variance squared: at 0.13 of the width, ``sqrt(2) (2 x
#: 0.13)^2``, a tenth of the variance's bound along one column), and the
#: spreads' clipped and tied shares (against the share 1).
_RELATIVE_NOISE = {"kendall": 0.5, "variances": 0.1, "total": 0.1, "spreads": 0.02,
                   "box spreads": 0.05, "mean": 0.13, "clipped share": 0.05}
#: The lowest level of the spreads' searches the plan buys: their clipped
#: shares then stay under the limit of a released spread.
_SPREAD_LEVEL_MIN = 0.85
#: A frame search may stop this share of its rows early (its rank slack).
_FRAME_SLACK = 0.25
#: Parts a fit can leave out; the directions are always released.
OPTIONAL_PARTS = ("scale", "scree", "score")


def unit_sd(leaf, noise):
    """The Gaussian noise sd per unit of sensitivity a leaf buys (the analytic
    calibration's: the classical one, defined only up to eps of about 7, gives
    as much or more)."""
    if leaf.mu is not None:
        return 1.0 / leaf.mu
    return _calibration.gaussian_noise_scale(1.0, leaf.eps, leaf.delta, "analytic",
                                             warn=False)


def _relative_noise(kind, leaf, settings):
    """The noise sd of a Gaussian statistic relative to its public scale."""
    n, p, k = settings["n"], settings["p"], settings["k"]
    sd = unit_sd(leaf, settings["noise"])
    if kind == "kendall":
        per_term = 2.0 if settings["sensitivity"] == "standard" else math.sqrt(2.0)
        # a symmetric Gaussian matrix with off-diagonal sd s has operator norm
        # about 2 s sqrt(p); the diagonal sd is sqrt(2) s. A pair sum's row
        # moves n - 1 of its terms, the one-sample covariance's one term
        pairs = 1.0 if settings.get("radial") == "covariance" else 2.0
        return pairs * per_term / n * sd * math.sqrt(2.0 * p)
    if kind == "mean":
        # the box's mean, per column in units of its width (_box_moments)
        return math.sqrt(p) / n * sd
    if kind == "clipped share":
        # the spreads' clipped shares: a count per column over n / 2 matched pairs
        return math.sqrt(p) / (n // 2) * sd
    if settings.get("box"):
        # moments about the box's private mean, against each term's bound
        return {"variances": math.sqrt(k), "total": 1.0,
                "box spreads": math.sqrt(p)}[kind] / n * sd
    if kind == "variances":
        scale = 2.0 * math.sqrt(k) if settings["clip"] == "component" else \
            2.0 * math.sqrt(2.0)
        return scale / n * sd
    if kind == "total":
        return 2.0 / n * sd
    return 2.0 * math.sqrt(p) / n * sd       # spreads, per column


def _histogram_informative(leaf, settings):
    n, groups = settings["n"], settings["n_groups"]
    cells = groups * 16
    if settings["histogram"] == "additive":
        # the continuous Gaussian of the cells' L2 sensitivity sqrt(2): within a
        # few percent of the discrete one the fit calibrates
        threshold = 3.5 * math.sqrt(2.0) * unit_sd(leaf, "analytic")
    else:
        threshold = 1.0 + 2.0 * math.log(1.0 / max(leaf.delta, 1e-300)) / leaf.eps
    return n / (0.55 * cells) >= 2.0 * threshold


def _search_level(detail, eps, settings):
    """The level of a scale-free search, as the fit will set it."""
    n = settings["n"]
    given = settings["levels"].get(detail)
    if detail == "radius":
        return _auto_radius_level(n, eps / _RADIUS_SHARE) if given in (None, "auto") \
            else given
    if given is None:      # the spreads, and the total of the "kendall" scree
        return max(spread_level(n // 2, eps), 0.5)
    return given


def _step_kind(path):
    """What the step at ``path`` is: ``(kind, detail)`` for the rules."""
    parts = path.split("/")
    top, last = parts[0], parts[-1]
    if top == "loading":
        if last == "radius":
            return "search", "radius"
        return "gaussian", "mean" if last == "mean" else "kendall"
    if last in ("mean", "clipped share"):
        return "gaussian", last
    if top == "scale":
        return ("search", "spreads") if last.startswith("clip bound") else \
            ("gaussian", "spreads")
    if top == "scree":
        what = "total" if "total variance" in parts else "variances"
        if last.startswith("clip bound"):
            return "search", what
        return ("gaussian", what) if last == "statistic" else ("basic", what)
    if top == "score":
        return ("histogram", None) if last == "histogram" else ("search", "frame")
    return "other", None


def _informative(leaf, settings):
    """Whether the step of ``leaf`` (an Allocation) would be informative, and its
    predicted noise sd relative to its public scale (NaN where there is none)."""
    kind, detail = _step_kind(leaf.path)
    n = settings["n"]
    if detail == "mean" and _part_of(leaf.path) == "scree" \
            and settings.get("scree_box_or_search"):
        # the box's mean runs only where the box wins, its noise counted there
        # (:func:`~._scree_settings.box_is_quieter`); else its budget joins the
        # variances'
        return True, _relative_noise("mean", leaf, settings)
    if kind == "gaussian" and leaf.path == "scree/variances/statistic" \
            and settings.get("scree_box_or_search") and leaf.mu is not None:
        # judged as it runs where the search wins, the box's mean's budget joined
        # to it: so the box buys the scree exactly where the search alone would
        leaf = replace(leaf, mu=leaf.mu / math.sqrt(1.0 - BOX_MEAN_SHARE))
    if kind == "gaussian":
        if detail == "spreads" and settings["bounded"]:
            detail = "box spreads"
        box = settings["bounded"] and (
            detail == "box spreads" or (detail in ("variances", "total")
                                        and settings["scree_box"]))
        relative = _relative_noise(detail, leaf, dict(settings, box=box))
        return relative <= _RELATIVE_NOISE[detail], relative
    if kind == "histogram":
        return _histogram_informative(leaf, settings), math.nan
    if kind == "search":
        if detail == "frame":
            # the frame's grids are tied to released scales (the coarse centre,
            # the variances' unit), not to the whole float range; a search that
            # stops a quarter of the rows early still frames the cloud, and a
            # frame that does not is caught on its released values
            return rank_slack(leaf.eps) <= _FRAME_SLACK * n, math.nan
        level = _search_level(detail, leaf.eps, settings)
        if detail == "spreads" and level < _SPREAD_LEVEL_MIN:
            # a lower level clips more than a spread's clipped share may
            # (:data:`~._spread._CLIPPED_SHARE_LIMIT`): not estimable
            return False, math.nan
        return search_informative(n // 2, level, leaf.eps, "scale-free"), math.nan
    return True, math.nan        # the 1-D scree estimators: not predicted here


def _part_of(path):
    return path.split("/")[0]


def _shortfalls(plan, settings):
    """For each optional part of ``plan`` with a step that would not be
    informative, how many times its budget falls short: the largest factor by
    which a step's budget must grow (1e6 when no factor up to that will do)."""
    shortfalls = {}
    for path, leaf in plan.allocations.items():
        part = _part_of(path)
        if part not in OPTIONAL_PARTS or _informative(leaf, settings)[0]:
            continue
        factor = _growth_needed(leaf, settings)
        shortfalls[part] = max(shortfalls.get(part, 0.0), factor)
    return shortfalls


def _scaled_leaf(leaf, factor):
    return type(leaf)(leaf.path, leaf.kind, leaf.eps * factor, leaf.delta,
                      None if leaf.mu is None else leaf.mu * factor)


def _growth_needed(leaf, settings, most=1e6):
    """The smallest factor (to 2%) by which the leaf's eps (or mu) must grow for
    its step to be informative (``most`` when even that is not enough)."""
    if not _informative(_scaled_leaf(leaf, most), settings)[0]:
        return most
    low, high = 1.0, most
    while high / low > 1.02:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if _informative(_scaled_leaf(leaf, middle),
                                                 settings)[0] else (middle, high)
    return high


def _without(parts, dropped):
    """The budget tree ``parts`` without the top-level parts ``dropped``, the
    others' shares scaled up to the same total (their budget goes to them)."""
    kept = {name: part for name, part in parts.items() if name not in dropped}
    total = math.fsum(share for share, _ in parts.values())
    kept_total = math.fsum(share for share, _ in kept.values())
    if not kept or kept_total <= 0:
        return kept
    return {name: (share * total / kept_total, tree) for name, (share, tree) in kept.items()}


def bought_parts(parts, allocate, settings):
    """The parts a fit runs: ``parts`` less the optional parts that would not be
    informative. The part whose budget falls shortest is dropped first and its
    share given to the others, which may then become informative; until every
    part left is. Parts in ``settings["held back"]`` are dropped from the start
    (declared bounds buy no part the same fit without them would not buy:
    :meth:`~sklearn_dppca.DPPCA.plan`). With ``settings["scree_needs_scale"]``
    (``scale=True`` and no box), a scree falls before the spreads: its
    variances would otherwise be in the columns' own units. ``allocate(parts)``
    gives the BudgetPlan of a tree. Returns the kept tree and the dropped part
    names (public: no data)."""
    dropped = set(settings.get("held back", {}))
    while True:
        kept = _without(parts, dropped)
        shortfalls = _shortfalls(allocate(kept), settings) if kept else {}
        if not shortfalls:
            return kept, dropped
        worst = max(sorted(shortfalls), key=shortfalls.get)
        if worst == "scale" and settings.get("scree_needs_scale") and "scree" in kept:
            # without the spreads (and without a box's unit) the scree would be
            # in the columns' own units, not the correlation PCA's asked for: it
            # gives its budget to the spreads first, and is not run without them
            worst = "scree"
        dropped.add(worst)


#: The largest share of the grant a part's budget may take in
#: :func:`share_needed`: the directions keep at least the rest.
_LARGEST_SHARE = 0.95
#: The resolution of :func:`share_needed`, in shares of the grant.
_SHARE_STEP = 0.01


def _with_share(split, part, share):
    """The top-level ``split`` with ``part`` at ``share`` and the other parts
    scaled to the rest of the same total, in proportion (public)."""
    total = math.fsum(split.values())
    others = math.fsum(value for name, value in split.items() if name != part)
    return {name: share if name == part else value * (total - share) / others
            for name, value in split.items()}


def _suggested_split(split, part, share):
    """:func:`_with_share` as a user would type it: two decimals, the other
    parts rounded down (the total stays within the grant)."""
    return {name: round(value if name == part else math.floor(
        value / _SHARE_STEP + 1e-9) * _SHARE_STEP, 2)
        for name, value in _with_share(split, part, share).items()}


def share_needed(split, part, buys, keeps=None):
    """The smallest share of the grant, on a grid of :data:`_SHARE_STEP`, at
    which ``part`` would be bought at the same eps, the other parts scaled to
    the rest in proportion and rounded down (:func:`_suggested_split`: the split
    tried is the one a user would type); ``buys(split)`` says whether the plan
    of a fit with that top-level split buys ``part``. Inf where not even
    :data:`_LARGEST_SHARE` of the split's total does, or where the other parts
    have no share to give, or where ``keeps(split)`` (given) says the split
    found loses what the fit buys now: a larger share would give the others
    still less. What a custodian who cannot raise eps can do instead, at the
    other parts' cost (public: the plan's own rules; the search assumes a
    larger share never loses the part)."""
    total = math.fsum(split.values())
    others = total - split.get(part, 0.0)
    low = math.floor(split.get(part, 0.0) / _SHARE_STEP + 1e-9)
    high = math.floor(_LARGEST_SHARE * total / _SHARE_STEP + 1e-9)

    def bought(step):
        return buys(_suggested_split(split, part, step * _SHARE_STEP))

    if others <= 0 or high <= low or not bought(high):
        return math.inf
    while high - low > 1:          # (low does not buy, high does)
        middle = (low + high) // 2
        low, high = (low, middle) if bought(middle) else (middle, high)
    if keeps is not None and not keeps(_suggested_split(split, part,
                                                        high * _SHARE_STEP)):
        return math.inf
    return round(high * _SHARE_STEP, 2)


def directions_informative(plan, settings):
    """Whether every step of the directions in ``plan`` (a BudgetPlan) would
    be informative by the plan's rules (public): a split that starves them
    buys nothing worth naming."""
    return all(_informative(leaf, settings)[0] for path, leaf in plan.allocations.items()
               if _part_of(path) == "loading")


#: The largest growth of a leaf the plan's bisection tries (finite and far
#: beyond any grant that means anything).
_LARGEST_GROWTH = 1e300


def _eps_needed(path, allocate_at, settings, eps, most=1e6):
    """The total eps at which the step ``path`` would become informative, the
    split kept (``allocate_at(eps)`` gives the BudgetPlan of the full tree at that
    grant); NaN when it already is at ``eps``, inf when not even at ``most``.

    A leaf's eps is its share of the grant, so a leaf with an eps (pure, basic,
    Gaussian under basic accounting) needs the grant times its own growth
    (:func:`_growth_needed`); a ``mu`` of the GDP block grows with the grant
    through the composition, so its grant is found by bisection, from there.
    """
    leaf = allocate_at(eps).allocations[path]
    if _informative(leaf, settings)[0]:
        return math.nan
    # (a finite ceiling: at a subnormal eps, most / eps overflows and the
    # bisection would never close)
    ceiling = min(most / eps, _LARGEST_GROWTH)
    growth = _growth_needed(leaf, settings, ceiling)
    if growth >= ceiling:
        return math.inf
    if leaf.mu is None:
        return _about(eps * growth, eps)

    def ok(total):
        return _informative(allocate_at(total).allocations[path], settings)[0]

    low, high = eps, eps * growth
    while not ok(high):            # (mu grows about as fast as the grant)
        low, high = high, min(high * 2.0, most)
        if high >= most and not ok(high):
            return math.inf
    while high / low > 1.05:       # "about": two significant figures
        middle = math.sqrt(low * high)
        low, high = (low, middle) if ok(middle) else (middle, high)
    return _about(high, eps)


def _about(value, above):
    """``value`` to two significant figures, rounded up where rounding to the
    nearest would not exceed ``above`` (the grant that does not buy the
    step): a plan at eps 1 never says a step needs "about 1"."""
    digits = 1 - int(math.floor(math.log10(value)))
    nearest = float(np.round(value, digits))
    return nearest if nearest > above else math.ceil(value * 10.0**digits) / 10.0**digits


_MECHANISMS = {"gaussian": "gaussian", "pure": "quantile search", "basic": "basic"}


def plan_settings(params, n, p, k, *, scree_params=None, scree_method=None,
                  n_groups=1):
    """What the rules read besides a leaf's budget: public numbers and settings
    (``params``: an estimator's validated hyperparameters). ``bounded``: declared
    bounds (the spreads are moments about the box's mean); ``scree_box``: so are
    the scree's statistics (the clipped scree with ``C="box"``);
    ``scree_box_or_search``: they are the box's or the searched bound's,
    whichever has the less noise (``bound="box"``), and the plan judges them
    as the searched form, the one a box can only improve on;
    ``box_widths``: the declared box's widths (:func:`_box_widths`: the
    data-unit noise of :func:`_data_noise_sd`); ``scaled``: ``scale=True``;
    ``scree_needs_scale``: ``scale=True`` without a box, where the scree is run
    only with the spreads (:func:`bought_parts`; not where ``params`` say
    ``scree_waits_for_scale=False``: a bounded fit's unbounded twin, whose
    plan only decides the score summary's)."""
    scree_params = scree_params or {}
    total = scree_params.get("quantile_level") if scree_method == "clipped" else None
    bounded = params.get("bounds") is not None
    return {"n": int(n), "p": int(p), "k": int(k), "noise": params["noise"],
            "radial": params.get("radial"),
            "bounded": bounded, "box_widths": _box_widths(params.get("bounds"), p),
            "scaled": bool(params.get("scale")),
            "scree_needs_scale": bool(params.get("scale")) and not bounded
            and params.get("scree_waits_for_scale", True),
            "scree_box": bounded and scree_method == "clipped"
            and scree_params.get("C") == "box",
            "scree_box_or_search": bounded and scree_method == "clipped"
            and scree_params.get("bound") in ("box", "box-own")
            and scree_params.get("C") == "auto",
            "sensitivity": params["sensitivity"],
            "clip": scree_params.get("clip", "norm"),
            "levels": {"variances": scree_params.get("quantile_level", BASE_LEVEL),
                       "total": total, "spreads": None,
                       "radius": params.get("radius_level", "auto")},
            "histogram": params.get("histogram", "additive"), "n_groups": int(n_groups)}


def _waits_for_spreads(path, full, settings):
    """Whether the step at ``path`` is a scree step that needs spreads the full
    split (``full``, the BudgetPlan of every part) cannot buy: the fit gives
    the spreads the scree's budget, or drops both (:func:`bought_parts`)."""
    return bool(settings.get("scree_needs_scale")) and _part_of(path) == "scree" \
        and any(_part_of(step) == "scale" and not _informative(leaf, settings)[0]
                for step, leaf in full.allocations.items())


def _spreads_needed(full, allocate_at, settings, eps):
    """The total eps at which every spread step of ``full`` is informative, the
    split kept: where the scree that waits for them is bought with them."""
    needed = [_eps_needed(path, allocate_at, settings, eps)
              for path in full.allocations if _part_of(path) == "scale"]
    needed = [value for value in needed if not math.isnan(value)]
    return max(needed) if needed else math.nan


def _box_widths(bounds, n_features):
    """The widths ``high - low`` of declared ``bounds`` (pairs, or a dict of
    them by column name: its names stand in for the columns', as in
    :meth:`~sklearn_dppca.DPPCA.plan`), read by the fit's own check
    (:func:`~sklearn_dppca._validation.check_bounds`, which the plan has run
    before); None without bounds. Public: the declared box."""
    if bounds is None:
        return None
    names = [str(name) for name in bounds] if isinstance(bounds, dict) else None
    low, high = check_bounds(bounds, n_features, names)
    return high - low


def _data_noise_sd(leaf, settings):
    """The predicted noise sd of a box-form statistic in the data's own units
    (squared for a variance or a total), or NaN.

    With declared bounds the box, not the data, sets the scale of the moments
    about the box's mean (:mod:`~._box_moments`): their relative noise sd
    (:func:`_relative_noise`) times the box's bound on the statistic, taken at
    its largest (the mean at the box centre): for the scree's variances and
    total the box's half diagonal squared ``sum_j (w_j / 2)^2`` (the largest
    term along any direction), for a spread's variance the widest column's
    ``(w / 2)^2``, for the spreads' mean (width units) the widest column's
    width and for the scree's (the box diagonal's common unit) every column's.
    So a tighter box shows, before any data are read, how much less noise it
    buys; whether that noise is small against a variance depends on the data's
    spread, which the plan cannot read. With ``radial="covariance"`` the
    directions' steps are box forms too: their mean like the scree's, their
    covariance's noise (its operator norm, :func:`_relative_noise`) times the
    half diagonal squared. NaN without bounds, for a step with no box form,
    and for the scree of ``scale=True`` (its units are the released
    spreads')."""
    widths = settings.get("box_widths")
    kind, detail = _step_kind(leaf.path)
    part = _part_of(leaf.path)
    covariance = part == "loading" and settings.get("radial") == "covariance"
    if widths is None or kind != "gaussian" or not (part in ("scale", "scree")
                                                    or covariance):
        return math.nan
    if part == "scree" and (settings["scaled"] or not (
            settings["scree_box"] or settings["scree_box_or_search"])):
        return math.nan
    if detail == "mean":
        relative = _relative_noise("mean", leaf, settings)
        if part == "scale":
            return relative * float(np.max(widths))
        # (the scree's mean is in units of the box's diagonal: relative
        # times the root-mean-square width)
        return relative * float(np.sqrt(np.mean(widths**2)))
    if part == "scale":
        return _relative_noise("box spreads", leaf, dict(settings, box=True)) \
            * float(np.max(widths / 2.0))**2
    # (the covariance's: its noise's operator norm, in units of R^2)
    return _relative_noise(detail, leaf, dict(settings, box=True)) \
        * float(np.sum((widths / 2.0)**2))


_COLUMNS = ["step", "mechanism", "eps", "delta", "mu", "noise_sd", "data_noise_sd",
            "released", "eps_needed"]
#: The columns :func:`with_splits` adds (a plan with splits, a fit's plan).
_SPLIT_COLUMNS = ["share_needed", "split_needed"]


def plan_frame(rows):
    """The plan's rows (:func:`plan_table`, or :func:`with_splits` of them) as a
    pandas DataFrame (rows without splits: a release written before them)."""
    import pandas as pd    # a dependency, imported when a plan is shown

    split = bool(rows) and _SPLIT_COLUMNS[-1] in rows[0]
    return pd.DataFrame(rows, columns=_COLUMNS + (_SPLIT_COLUMNS if split else []))


def with_splits(rows, split, needed):
    """The plan's rows with ``share_needed`` and ``split_needed``: for each step
    of an optional part the plan does not buy, ``needed[part]`` (the part's
    share at which it would be bought at this eps, :func:`share_needed`; NaN
    where the part is run or was not searched) and the top-level ``split``
    with that share as a user types it (:func:`_suggested_split`; empty where
    the share is not finite)."""
    def part_of(row):
        return None if row["released"] else str(row["step"]).split("/")[0]

    shares = [needed.get(part_of(row), math.nan) for row in rows]
    return [{**row, "share_needed": share,
             "split_needed": split_text(_suggested_split(split, part_of(row), share))
             if math.isfinite(share) else ""}
            for row, share in zip(rows, shares)]


def plan_table(full, kept, allocate_at, settings, eps, part=None):
    """The plan as rows: one per step of the full tree, in its order.

    ``full``: the BudgetPlan of the whole tree; ``kept``: that of the parts run;
    ``part``: only that part's steps (None: every step; each unreleased step
    searches the eps it would need, the table's cost).
    Returns a list of dicts with ``step``, ``mechanism``, ``eps``, ``delta``,
    ``mu``, ``noise_sd`` (relative to the public scale, NaN where none),
    ``data_noise_sd`` (in the data's units where a declared box sets them:
    :func:`_data_noise_sd`), ``released`` and ``eps_needed``.
    """
    allocate_at = functools.lru_cache(maxsize=None)(allocate_at)   # steps share grants
    rows = []
    for path, leaf in full.allocations.items():
        if part is not None and _part_of(path) != part:
            continue
        released = path in kept.allocations
        used = kept.allocations[path] if released else leaf
        ok, relative = _informative(used, settings)
        mechanism = _MECHANISMS.get(leaf.kind, leaf.kind)
        if _step_kind(path)[0] == "histogram":
            mechanism = "histogram (" + settings["histogram"] + ")"
        held = settings.get("held back", {}).get(_part_of(path))
        if held is not None:
            needed = held        # (the eps at which the fit without bounds buys it)
        elif not released and _waits_for_spreads(path, full, settings):
            # bought with the spreads: at the larger of their eps and its own
            needed = np.nanmax([_spreads_needed(full, allocate_at, settings, eps),
                                _eps_needed(path, allocate_at, settings, eps)])
        else:
            needed = math.nan if ok and released else \
                _eps_needed(path, allocate_at, settings, eps)
        rows.append({
            "step": path, "mechanism": mechanism, "eps": used.eps, "delta": used.delta,
            "mu": math.nan if used.mu is None else used.mu, "noise_sd": relative,
            "data_noise_sd": _data_noise_sd(used, settings),
            "released": released, "eps_needed": needed})
    return rows


def in_release_order(rows, total_first=False):
    """The plan's rows in the order a fit releases them: the spreads first (the
    rows are divided by them before anything else is read), then, with
    ``total_first``, the total variance's clip-bound search (released before the
    directions, so that the total rides on the Kendall matrix's pass,
    :func:`~._scree.total_bound_first`), then the rest as the budget tree lists
    them (directions, scree, score summary)."""
    def rank(row):
        step = row["step"]
        if step == "scale" or step.startswith("scale/"):
            return 0
        return 1 if total_first and step == "scree/total variance/clip bound" else 2
    return sorted(rows, key=rank)


def first_pass_requests(plan, radial, total_first=False, divided=False):
    """What the rows compute ahead, before any release: the statistics of
    ``plan`` (a BudgetPlan) that need no release first, by the view they read.

    Declared here, beside the steps' names, so that the rows never read a step's
    name. Returns a Bunch: ``scaled`` (the fit divides its rows, ``divided``:
    by released spreads, or, where the plan bought none, by its box's units or
    by 1; the rows the directions read are then that divided view, and the raw
    rows compute only the spreads' own statistics: else a Kendall sum of the
    raw rows would be computed and thrown away), ``raw`` (what the raw rows of a
    scaled fit compute: the spreads' matching), ``rows`` (what the rows the
    directions read compute: the Kendall
    sum, the radius's and the total variance's matchings) and ``scores`` (what
    the score axes' view computes: the frame's first counts); each a list of
    statistic names of :mod:`~sklearn_dppca._data._statistics`. With
    ``total_first`` (the total's clip bound is released before the directions,
    :func:`~._scree.total_bound_first`) the Kendall sum waits for it: the
    total rides on its pass.
    """
    paths = plan.allocations
    rows = []
    if "loading" in paths and radial == "spherical" and not total_first:
        rows.append(KENDALL_MATRIX)
    if "loading/radius" in paths:
        rows.append(RADIUS)
    if "scree/total variance/clip bound" in paths:
        rows.append(TOTAL_BOUND)
    raw = [SPREAD_BOUNDS] if any(path.startswith("scale/clip bound")
                                 for path in paths) else []
    return Bunch(scaled=bool(divided) or "scale" in plan, raw=raw, rows=rows,
                 scores=[TWO_SIDED] if "score/frame" in plan else [])
