"""Helpers shared by the displays.

Nothing here imports matplotlib at module level: :mod:`matplotlib.pyplot` is imported
inside the functions that draw, as scikit-learn's displays do, so that importing
:mod:`sklearn_dppca` never imports pyplot.
"""

import numbers

import numpy as np

from .._validation import check_bool  # noqa: F401  (the displays' flags)

#: Legend label of every non-private overlay.
NONPRIVATE_LABEL = "non-private reference"

#: Colour of every non-private overlay (grey, so that it never competes with the
#: private picture).
NONPRIVATE_COLOR = "0.35"

#: Line style of non-private lines and arrows.
NONPRIVATE_LINESTYLE = "--"

#: Style of non-private markers: hollow grey circles.
NONPRIVATE_MARKER_KW = {
    "marker": "o",
    "facecolors": "none",
    "edgecolors": NONPRIVATE_COLOR,
    "linewidths": 0.8,
}

#: Colour of private artists drawn in a single colour.
PRIVATE_COLOR = "C0"


# --------------------------------------------------------------------------------------
# matplotlib
# --------------------------------------------------------------------------------------
def check_matplotlib_support(caller_name):
    """Raise an ImportError naming ``caller_name`` when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"{caller_name} requires matplotlib. You can install matplotlib with "
            "`pip install matplotlib`."
        ) from exc


def get_axes(ax, caller_name):
    """Return ``(ax, figure)``, creating a figure and axes when ``ax`` is None."""
    check_matplotlib_support(caller_name)
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    if ax is None:
        _, ax = plt.subplots(layout="constrained")
    elif not isinstance(ax, Axes):
        raise TypeError(
            f"ax must be a matplotlib Axes or None, got {type(ax).__name__}."
        )
    return ax, ax.figure


def check_kw(kw, name):
    """Return a copy of the styling dict ``kw`` ({} for None)."""
    if kw is None:
        return {}
    if not isinstance(kw, dict):
        raise TypeError(f"{name} must be a dict or None, got {type(kw).__name__}.")
    return dict(kw)


def check_kind(kind, allowed, name="kind"):
    """Validate a string option; ``ValueError`` naming ``name`` otherwise."""
    if not isinstance(kind, str) or kind not in allowed:
        raise ValueError(
            f"{name} must be one of {', '.join(repr(a) for a in allowed)}; got {kind!r}."
        )
    return kind


def check_axes_pair(axes, n_components, name="axes"):
    """Validate a pair of distinct 0-based component indices below ``n_components``."""
    try:
        pair = tuple(axes)
    except TypeError:
        raise ValueError(
            f"{name} must be a pair of distinct 0-based component indices, got {axes!r}."
        ) from None
    if len(pair) != 2 or not all(
        isinstance(a, (numbers.Integral, np.integer)) and not isinstance(a, bool)
        for a in pair
    ):
        raise ValueError(
            f"{name} must be a pair of distinct 0-based component indices, got {axes!r}."
        )
    a, b = int(pair[0]), int(pair[1])
    if a == b:
        raise ValueError(f"{name} must name two different components, got {axes!r}.")
    if n_components < 2:
        raise ValueError(
            f"{name}: a two-component picture needs at least 2 components; there "
            f"is {n_components}."
        )
    for value in (a, b):
        if not 0 <= value < n_components:
            raise ValueError(
                f"{name} must hold 0-based component indices in [0, {n_components - 1}]"
                f", got {axes!r}."
            )
    return a, b


def check_component_indices(components, n_components, name="components"):
    """Validate a list of 0-based component indices (None: all, at most 10)."""
    if components is None:
        return list(range(min(n_components, 10)))
    if isinstance(components, (numbers.Integral, np.integer)) and not isinstance(
        components, bool
    ):
        components = [components]
    try:
        indices = list(components)
    except TypeError:
        raise ValueError(
            f"{name} must be a list of 0-based component indices, got {components!r}."
        ) from None
    if not indices:
        raise ValueError(f"{name} must not be empty.")
    for c in indices:
        if (
            isinstance(c, bool)
            or not isinstance(c, (numbers.Integral, np.integer))
            or not 0 <= c < n_components
        ):
            raise ValueError(
                f"{name} must hold 0-based component indices in [0, {n_components - 1}]"
                f", got {components!r}."
            )
    return [int(c) for c in indices]


# --------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------
def as_components(components, name="components"):
    components = np.asarray(components, dtype=float)
    if components.ndim != 2 or components.size == 0:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_components, n_features), got "
            f"shape {components.shape}."
        )
    if not np.all(np.isfinite(components)):
        raise ValueError(f"{name} must be finite.")
    return components


def as_vector(values, name, length=None, nonnegative=False):
    values = np.asarray(values, dtype=float)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}.")
    if length is not None and values.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {values.shape[0]}.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite.")
    if nonnegative and np.any(values < 0):
        raise ValueError(f"{name} must be non-negative.")
    return values


def check_feature_names(feature_names, n_features):
    """Return a list of ``n_features`` names (``x0, x1, ...`` for None)."""
    if feature_names is None:
        return [f"x{j}" for j in range(n_features)]
    names = [str(f) for f in feature_names]
    if len(names) != n_features:
        raise ValueError(
            f"feature_names has {len(names)} names but there are {n_features} features."
        )
    return names


def select_variables(variables, feature_names, weights, max_default=30):
    """Indices of the variables to draw.

    ``variables`` is None (all when there are at most ``max_default``, else the
    ``max_default`` with the largest ``weights``), ``"all"``, or a list of names or
    0-based indices.
    """
    n_features = len(feature_names)
    if variables is None:
        if n_features <= max_default:
            return np.arange(n_features)
        order = np.argsort(-np.asarray(weights), kind="stable")[:max_default]
        return np.sort(order)
    if isinstance(variables, str):
        if variables == "all":
            return np.arange(n_features)
        variables = [variables]
    try:
        requested = list(variables)
    except TypeError:
        raise ValueError(
            "variables must be None, 'all', or a list of feature names or 0-based "
            f"indices, got {variables!r}."
        ) from None
    if not requested:
        raise ValueError("variables must not be empty.")
    lookup = {name: j for j, name in enumerate(feature_names)}
    indices = []
    for v in requested:
        if isinstance(v, str):
            if v not in lookup:
                raise ValueError(f"variables: unknown feature name {v!r}.")
            indices.append(lookup[v])
        elif isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, bool):
            if not 0 <= v < n_features:
                raise ValueError(
                    f"variables: index {v} is out of range for {n_features} features."
                )
            indices.append(int(v))
        else:
            raise ValueError(
                f"variables must hold feature names or 0-based indices, got {v!r}."
            )
    return np.asarray(list(dict.fromkeys(indices)), dtype=int)


def plain_text(value):
    """``str(value)`` escaped so that matplotlib shows it literally.

    Names and labels are data: a pair of ``$`` in them would start mathtext, and an
    invalid formula (``"price_$_usd_$"``) fails when the figure is drawn.
    """
    return str(value).replace("$", r"\$")


def component_label(index, explained_variance_ratio=None):
    """``"DP PC1 (42.0%)"`` with the private PVE, ``"DP PC1"`` without."""
    label = f"DP PC{index + 1}"
    if explained_variance_ratio is not None:
        label += f" ({100 * float(explained_variance_ratio[index]):.1f}%)"
    return label


def label_fontsize(n_labels, base=9.0, smallest=5.5):
    """Shrink label text as the number of labels grows."""
    if n_labels <= 10:
        return base
    return max(smallest, base - 0.15 * (n_labels - 10))


_SETTLE = {"enabled": True}


class no_settle:
    """Context manager: :func:`settle_layout` does nothing inside (the caller has
    laid the figure out already; running a constrained layout per panel of a big
    figure is slow)."""

    def __enter__(self):
        self._previous = _SETTLE["enabled"]
        _SETTLE["enabled"] = False
        return self

    def __exit__(self, *exc):
        _SETTLE["enabled"] = self._previous
        return False


def settle_layout(ax):
    """Run the figure's layout engine now, so that sizes measured in points (label
    boxes, arrow heads) match the final axes size as closely as possible."""
    if not _SETTLE["enabled"]:
        return
    engine = ax.figure.get_layout_engine()
    if engine is not None:
        try:
            engine.execute(ax.figure)
        except Exception:  # a failed early layout only costs precision
            pass


def data_per_point(ax):
    """Data units per typographic point along x and y (after the aspect is applied)."""
    ax.apply_aspect()
    bbox = ax.get_window_extent()
    points_per_pixel = 72.0 / ax.figure.dpi
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    width = max(bbox.width * points_per_pixel, 1e-9)
    height = max(bbox.height * points_per_pixel, 1e-9)
    return abs(x1 - x0) / width, abs(y1 - y0) / height


def _label_widths(labels, fontsize):
    """Estimated label widths in points (average glyph ~0.68 em, plus padding)."""
    return np.array([0.68 * fontsize * max(len(str(lab)), 1) + 3.0 for lab in labels])


def _label_height(fontsize):
    return 1.35 * fontsize + 1.0


def place_labels(ax, ends, labels, *, origin=(0.0, 0.0), fontsize=9.0, gap=2.0,
                 n_iter=150):
    """Centres for text labels of arrows ending at ``ends``, without pile-ups.

    Each label starts just beyond its arrow end, along the arrow (outward from
    ``origin``); overlapping label boxes (estimated from the font size and the
    current limits of ``ax``) are then pushed apart, mostly vertically.

    Returns an array of shape (n, 2) of label centres in data coordinates.
    """
    ends = np.asarray(ends, dtype=float).reshape(-1, 2)
    n = len(ends)
    if n == 0:
        return ends.copy()
    dx_pt, dy_pt = data_per_point(ax)
    widths = _label_widths(labels, fontsize) * dx_pt
    heights = np.full(n, _label_height(fontsize)) * dy_pt
    vec = ends - np.asarray(origin, dtype=float)
    norms = np.hypot(vec[:, 0], vec[:, 1])
    unit = np.zeros_like(vec)
    nonzero = norms > 0
    unit[nonzero] = vec[nonzero] / norms[nonzero, None]
    unit[~nonzero] = (1.0, 0.0)
    # distance from a box centre to its edge along ``unit``, plus a small gap
    reach = 0.5 * np.minimum(
        np.divide(widths, np.abs(unit[:, 0]), out=np.full(n, np.inf),
                  where=np.abs(unit[:, 0]) > 1e-12),
        np.divide(heights, np.abs(unit[:, 1]), out=np.full(n, np.inf),
                  where=np.abs(unit[:, 1]) > 1e-12),
    )
    reach += gap * np.hypot(unit[:, 0] * dx_pt, unit[:, 1] * dy_pt)
    pos = ends + reach[:, None] * unit
    if n < 2:
        return pos
    half_w = (widths[:, None] + widths[None, :]) / 2
    half_h = (heights[:, None] + heights[None, :]) / 2
    tie = np.subtract.outer(np.arange(n), np.arange(n)).astype(float)
    for _ in range(n_iter):
        dx = pos[:, 0][:, None] - pos[:, 0][None, :]
        dy = pos[:, 1][:, None] - pos[:, 1][None, :]
        over_x = half_w - np.abs(dx)
        over_y = half_h - np.abs(dy)
        clash = (over_x > 0) & (over_y > 0)
        np.fill_diagonal(clash, False)
        if not clash.any():
            break
        sign_y = np.sign(np.where(dy != 0, dy, tie))
        sign_x = np.sign(np.where(dx != 0, dx, tie))
        # push along the direction that needs the smaller relative move
        vertical = over_y / half_h <= over_x / half_w
        move_y = np.where(clash & vertical, sign_y * over_y * 0.5, 0.0).sum(axis=1)
        move_x = np.where(clash & ~vertical, sign_x * over_x * 0.5, 0.0).sum(axis=1)
        pos[:, 0] += 0.6 * move_x
        pos[:, 1] += 0.6 * move_y
    return pos


def label_extent(ax, positions, labels, fontsize):
    """Bounding box (x_min, x_max, y_min, y_max) of labels centred at ``positions``."""
    positions = np.asarray(positions, dtype=float).reshape(-1, 2)
    if len(positions) == 0:
        return None
    dx_pt, dy_pt = data_per_point(ax)
    widths = _label_widths(labels, fontsize) * dx_pt
    heights = _label_height(fontsize) * dy_pt
    return (
        float(np.min(positions[:, 0] - widths / 2)),
        float(np.max(positions[:, 0] + widths / 2)),
        float(np.min(positions[:, 1] - heights / 2)),
        float(np.max(positions[:, 1] + heights / 2)),
    )


def hdr_levels(hist, masses=(0.5, 0.9)):
    """Density thresholds whose super-level sets hold ``masses`` of ``hist``.

    Highest-density-region levels of a normalised histogram (post-processing);
    returned ascending and strictly increasing (duplicates dropped), possibly empty.
    """
    values = np.sort(np.asarray(hist, dtype=float).ravel())[::-1]
    total = values.sum()
    if total <= 0:
        return np.array([])
    cum = np.cumsum(values) / total
    levels = []
    for m in masses:
        idx = min(int(np.searchsorted(cum, m)), len(values) - 1)
        levels.append(values[idx])
    levels = np.unique([lv for lv in levels if lv > 0])
    return levels


def thin_points(points, max_points, seed=0):
    """A deterministic subsample of at most ``max_points`` rows (for overlays)."""
    points = np.asarray(points)
    if max_points is None or len(points) <= max_points:
        return points
    idx = np.random.default_rng(seed).choice(len(points), size=max_points, replace=False)
    return points[np.sort(idx)]


def set_square_limits(ax, points, center=None, pad=0.1, minimum=None):
    """Equal-aspect square limits holding ``points`` (around ``center`` if given)."""
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    points = points[np.all(np.isfinite(points), axis=1)]
    if center is None:
        if len(points):
            center = (points.min(axis=0) + points.max(axis=0)) / 2
        else:
            center = np.zeros(2)
    center = np.asarray(center, dtype=float)
    half = float(np.max(np.abs(points - center))) if len(points) else 0.0
    if minimum is not None:
        half = max(half, minimum)
    if half <= 0:
        half = 1.0
    half *= 1 + pad
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_aspect("equal", adjustable="box")
    return center, half


def set_equal_limits(ax, points, pad=0.08):
    """Limits holding ``points`` with a margin, on an equal-aspect axes.

    Unlike :func:`set_square_limits` the two ranges may differ, so no room is
    wasted on empty half-planes.
    """
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    points = points[np.all(np.isfinite(points), axis=1)]
    if len(points) == 0:
        points = np.zeros((1, 2))
    lo = points.min(axis=0)
    hi = points.max(axis=0)
    span = float(np.max(hi - lo))
    if span <= 0:
        span = 1.0
    margin = pad * span
    ax.set_xlim(lo[0] - margin, hi[0] + margin)
    ax.set_ylim(lo[1] - margin, hi[1] + margin)
    ax.set_aspect("equal", adjustable="box")


def draw_labels(ax, ends, labels, *, origin=(0.0, 0.0), fontsize=9.0, text_kw=None,
                center=None, background=True):
    """Write ``labels`` next to arrow ends, growing the limits if they spill out.

    ``center`` (a point) keeps the limits symmetric about it when they grow;
    otherwise each side grows on its own. Returns the list of matplotlib Text.
    """
    ends = np.asarray(ends, dtype=float).reshape(-1, 2)
    if len(ends) == 0:
        return []
    pos = place_labels(ax, ends, labels, origin=origin, fontsize=fontsize)
    for _ in range(2):
        ext = label_extent(ax, pos, labels, fontsize)
        x0, x1 = ax.get_xlim()
        y0, y1 = ax.get_ylim()
        if center is not None:
            mid = np.asarray(center, dtype=float)
            need = max(mid[0] - ext[0], ext[1] - mid[0], mid[1] - ext[2], ext[3] - mid[1])
            half = max(x1 - x0, y1 - y0) / 2
            if need <= half:
                break
            half = need * 1.03
            ax.set_xlim(mid[0] - half, mid[0] + half)
            ax.set_ylim(mid[1] - half, mid[1] + half)
        else:
            margin = 0.02 * max(x1 - x0, y1 - y0)
            nx0, nx1 = min(x0, ext[0] - margin), max(x1, ext[1] + margin)
            ny0, ny1 = min(y0, ext[2] - margin), max(y1, ext[3] + margin)
            if (nx0, nx1, ny0, ny1) == (x0, x1, y0, y1):
                break
            ax.set_xlim(nx0, nx1)
            ax.set_ylim(ny0, ny1)
        pos = place_labels(ax, ends, labels, origin=origin, fontsize=fontsize)
    kw = {"fontsize": fontsize, "ha": "center", "va": "center", "zorder": 5}
    if background:
        kw["bbox"] = {"boxstyle": "round,pad=0.1", "facecolor": "white",
                      "edgecolor": "none", "alpha": 0.65}
    kw.update(text_kw or {})
    return [ax.text(x, y, plain_text(lab), **kw) for (x, y), lab in zip(pos, labels)]


def draw_arrows(ax, ends, origin=(0.0, 0.0), arrow_kw=None, **defaults):
    """One arrow (an Annotation) per row of ``ends``, from ``origin``.

    ``annotation.xy`` is the arrow end and ``annotation.xyann`` its start. Heads
    shrink on short arrows so that they do not pile up at the origin (call after
    the limits are set).
    """
    props = {"arrowstyle": "-|>", "shrinkA": 0, "shrinkB": 0, "linewidth": 1.2}
    props.update(defaults)
    props.update(arrow_kw or {})
    origin = np.asarray(origin, dtype=float)
    ends = np.asarray(ends, dtype=float).reshape(-1, 2)
    head = props.pop("mutation_scale", None)
    if head is None and len(ends):
        dx_pt, dy_pt = data_per_point(ax)
        length_pt = np.hypot((ends[:, 0] - origin[0]) / dx_pt,
                             (ends[:, 1] - origin[1]) / dy_pt)
        heads = np.clip(0.3 * length_pt, 2.0, 10.0)
    else:
        heads = np.full(len(ends), 10.0 if head is None else float(head))
    arrows = []
    start = (float(origin[0]), float(origin[1]))
    for end, size in zip(ends, heads):
        arrows.append(
            ax.annotate("", xy=(float(end[0]), float(end[1])), xytext=start,
                        arrowprops=dict(props, mutation_scale=float(size)),
                        annotation_clip=False, zorder=3)
        )
    return arrows


def draw_zero_lines(ax):
    kw = {"color": "0.8", "linewidth": 0.8, "zorder": 0}
    ax.axhline(0, **kw)
    ax.axvline(0, **kw)


def group_colors(labels):
    """One colour per group label: tab10, then tab20 for more groups."""
    import matplotlib

    n = len(labels)
    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    return {label: cmap(i % cmap.N) for i, label in enumerate(labels)}


# --------------------------------------------------------------------------------------
# estimators
# --------------------------------------------------------------------------------------
# what each display reads, and how to say what is missing
_NEEDS = {
    "ScreeDisplay": (
        ("explained_variance_", "explained_variance_ratio_"),
        "DPScree or DPPCA",
        "no private variances (explained_variance_)",
    ),
    "LoadingDisplay": (
        ("components_",),
        "DPKendallDirections, DPScree or DPPCA",
        "no private directions (components_)",
    ),
    "VariableDisplay": (
        ("components_", "explained_variance_", "feature_variance_"),
        "DPScree or DPPCA",
        "no private variances (explained_variance_, feature_variance_) to turn the "
        "directions into correlations",
    ),
    "ScoreDisplay": (
        ("frame_", "bin_edges_", "score_histogram_"),
        "DPPCA",
        "no score summary (frame_, bin_edges_, score_histogram_)",
    ),
    "BiplotDisplay": (
        ("components_", "explained_variance_", "synthetic_scores_", "frame_"),
        "DPPCA",
        "no synthetic scores and private frame (synthetic_scores_, frame_)",
    ),
}


def estimator_name(estimator):
    """The estimator's class name; for a loaded release, the class that made it."""
    origin = getattr(estimator, "estimator_class_", None)
    name = type(estimator).__name__
    if isinstance(origin, str) and origin and origin != name:
        return f"{origin} (loaded release)"
    return name


def _has(estimator, attribute):
    return getattr(estimator, attribute, None) is not None


def unsupported_reason(estimator, display_name):
    """None when ``estimator`` can feed ``display_name``; else why it cannot.

    Assumes the estimator is fitted (see :func:`check_estimator_for`).
    """
    attributes, supported, missing = _NEEDS[display_name]
    name = estimator_name(estimator)
    if not _has(estimator, "privacy_ledger_"):
        return (
            f"{display_name} needs a fitted {supported} from sklearn_dppca; {name} "
            "is not a private estimator (no privacy_ledger_)."
        )
    if not all(_has(estimator, a) for a in attributes):
        extra = ""
        if display_name in ("ScoreDisplay", "BiplotDisplay") and "DPPCA" in name:
            extra = " (its score part was skipped, e.g. with fewer than 2 components)"
        return f"{display_name} needs a fitted {supported}; {name} has {missing}{extra}."
    return None


def check_fitted(estimator, caller_name):
    """``check_is_fitted``, with a TypeError for objects that are no estimators.

    An estimator instance has ``__sklearn_tags__`` (scikit-learn >= 1.6). That is
    checked here first: what ``check_is_fitted`` makes of other objects changed
    between scikit-learn releases (NotFittedError in 1.6, AttributeError later).
    """
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    what = (f"the class {estimator.__name__}" if isinstance(estimator, type)
            else type(estimator).__name__)
    message = (f"{caller_name} needs a fitted estimator of sklearn_dppca "
               "(DPKendallDirections, DPScree or DPPCA); got "
               f"{what}, which is not a scikit-learn estimator instance.")
    if isinstance(estimator, type) or not hasattr(estimator, "__sklearn_tags__"):
        raise TypeError(message)
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise
    except (AttributeError, TypeError) as exc:
        raise TypeError(message) from exc


def check_estimator_for(estimator, display_name):
    """Check ``estimator`` is fitted and can feed ``display_name``.

    Raises
    ------
    NotFittedError
        When it is not fitted.
    TypeError
        When it is not one of the estimators the display supports.
    """
    check_fitted(estimator, display_name)
    reason = unsupported_reason(estimator, display_name)
    if reason is not None:
        raise TypeError(reason)


def estimator_feature_names(estimator):
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    return [f"x{j}" for j in range(int(estimator.n_features_in_))]


def nonprivate_reference(estimator):
    """The estimator's ``nonprivate_`` Bunch, or None."""
    return getattr(estimator, "nonprivate_", None)


def nonprivate_get(reference, key):
    if reference is None:
        return None
    try:
        return reference[key]
    except (KeyError, TypeError):
        return getattr(reference, key, None)


def nonprivate_ratio(reference):
    """The reference PVE as a share of the reference's total variance, or None.

    ``explained_variance / total_variance`` when the reference stores its total
    variance. Without it, the stored ratio's base is unknown (a reference that
    divides by the retained components only would look larger than the private
    share of the total), so there is no PVE reference.
    """
    variance = nonprivate_get(reference, "explained_variance")
    total = nonprivate_get(reference, "total_variance")
    if variance is None or total is None:
        return None
    total = float(total)
    variance = np.asarray(variance, dtype=float)
    if not total > 0:
        return np.zeros_like(variance)
    with np.errstate(all="ignore"):
        return np.minimum(variance / total, 1.0)


def frame_get(frame, key):
    """Read ``key`` from a frame given as a Bunch, a dict or an object."""
    try:
        return frame[key]
    except (KeyError, TypeError, IndexError):
        return getattr(frame, key)


def estimator_axes(estimator, axes, display_name):
    """The estimator's score axes; a different requested pair is an error."""
    fitted = tuple(int(a) for a in estimator.axes_)
    if axes is None:
        return fitted
    requested = check_axes_pair(axes, int(estimator.n_components_))
    if requested != fitted:
        raise ValueError(
            f"axes={tuple(axes)!r}: the private score summary of this "
            f"{estimator_name(estimator)} was released for axes={fitted!r} only; "
            f"{display_name} cannot draw other axes without a new fit (which "
            "spends budget)."
        )
    return fitted


def add_legend(ax, handles=None, *, where="inside", offset=None, **kwargs):
    """Legend of the labelled artists, if there are any.

    ``where="inside"`` puts it in the axes (``loc`` from ``kwargs``, default
    "best"); ``"below"`` hangs it ``offset`` points (default 38) under the axes,
    clear of the tick labels and the x label; ``"right"`` puts it ``offset``
    points (default 8) right of the axes. Outside legends are taken into account by
    a constrained layout.
    """
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    else:
        labels = [h.get_label() for h in handles]
    keep = [(h, lab) for h, lab in zip(handles, labels) if lab and not lab.startswith("_")]
    # the non-private reference always comes last
    keep.sort(key=lambda item: item[1].startswith(NONPRIVATE_LABEL))
    if not keep:
        return None
    kwargs.setdefault("fontsize", "small")
    kwargs.setdefault("framealpha", 0.85)
    if where in ("below", "right"):
        from matplotlib.transforms import ScaledTranslation

        if where == "below":
            shift = ScaledTranslation(0, -(38 if offset is None else offset) / 72,
                                      ax.figure.dpi_scale_trans)
            kwargs.setdefault("loc", "upper center")
            kwargs.setdefault("ncol", min(3, len(keep)))
            anchor = (0.5, 0.0)
        else:
            shift = ScaledTranslation((8 if offset is None else offset) / 72, 0,
                                      ax.figure.dpi_scale_trans)
            kwargs.setdefault("loc", "upper left")
            anchor = (1.0, 1.0)
        kwargs.setdefault("bbox_to_anchor", anchor)
        kwargs.setdefault("bbox_transform", ax.transAxes + shift)
        kwargs.setdefault("borderaxespad", 0.0)
    else:
        kwargs.setdefault("loc", "best")
    return ax.legend([h for h, _ in keep], [lab for _, lab in keep], **kwargs)
