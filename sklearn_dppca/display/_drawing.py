"""Artists several displays draw: arrows from an origin, the non-private reference
arrows, synthetic points, zero lines, legend handles and the legend."""

import numpy as np

from .._validation import above_noise

from ._labels import plain_text
from ._limits import data_per_point
from ._style import (
    NONPRIVATE_COLOR,
    NONPRIVATE_LABEL,
    NONPRIVATE_LINESTYLE,
    PRIVATE_COLOR,
    legend_color,
    merge_style,
)

_ARROW_STYLE = {"arrowstyle": "-|>", "shrinkA": 0, "shrinkB": 0, "linewidth": 1.2}


def draw_arrows(ax, ends, origin=(0.0, 0.0), arrow_kw=None, **defaults):
    """One arrow (an Annotation) per row of ``ends``, from ``origin``.

    The arrow properties are the common arrow style, then the caller's
    ``defaults``, then ``arrow_kw`` (the user's), merged by
    :func:`~sklearn_dppca.display._style.merge_style`. ``annotation.xy`` is the
    arrow end and ``annotation.xyann`` its start. Heads shrink on short arrows so
    that they do not pile up at the origin (call after the limits are set).
    """
    from matplotlib.patches import FancyArrowPatch

    props = merge_style(_ARROW_STYLE, defaults, FancyArrowPatch)
    props = merge_style(props, arrow_kw, FancyArrowPatch)
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


def draw_reference_arrows(ax, ends, origin=(0.0, 0.0)):
    """The non-private reference arrows (grey, dashed) and their legend handle."""
    from matplotlib.lines import Line2D

    arrows = draw_arrows(ax, ends, origin=origin, color=NONPRIVATE_COLOR,
                         linestyle=NONPRIVATE_LINESTYLE, linewidth=1.0)
    handle = Line2D([], [], color=NONPRIVATE_COLOR, linestyle=NONPRIVATE_LINESTYLE,
                    label=NONPRIVATE_LABEL)
    return arrows, handle


def legend_line(style, fallback, label, **props):
    """A legend handle in the colour ``style`` shows (``fallback`` when it sets none)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], color=legend_color(style, fallback), label=label, **props)


def draw_points(ax, S, shift, defaults, scatter_kw, *, groups=None, labels=None,
                colors=None):
    """The synthetic points ``S - shift`` (one colour per group when ``labels`` are
    given); returns the PathCollection (a list of them with groups) and legend
    handles."""
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D

    if labels is None:
        kw = merge_style(dict(defaults, color=PRIVATE_COLOR, label="synthetic points"),
                         scatter_kw, PathCollection)
        scatter = ax.scatter(S[:, 0] - shift[0], S[:, 1] - shift[1], **kw)
        return scatter, [legend_line(kw, PRIVATE_COLOR, "synthetic points", marker="o",
                                     linestyle="")]
    scatters, handles = [], []
    for label in labels:
        mask = groups == label
        kw = merge_style(dict(defaults, color=colors[label], label=plain_text(label)),
                         scatter_kw, PathCollection)
        scatters.append(ax.scatter(S[mask, 0] - shift[0], S[mask, 1] - shift[1], **kw))
        handles.append(Line2D([], [], color=colors[label], marker="o", linestyle="",
                              label=plain_text(label)))
    return scatters, handles


def draw_zero_lines(ax, origin=(0.0, 0.0)):
    """Light grey lines through ``origin``, under everything else."""
    kw = {"color": "0.8", "linewidth": 0.8, "zorder": 0}
    ax.axhline(origin[1], **kw)
    ax.axvline(origin[0], **kw)


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


#: How a loading lost in its noise is drawn: faded and dashed, with its interval.
_UNCERTAIN_SDS = 2
_UNCERTAIN_ALPHA = 0.45
_UNCERTAIN_LINESTYLE = (0, (3, 2))
_UNCERTAIN_LABEL = (f"within noise (size < {_UNCERTAIN_SDS} sd): dashed, with "
                    f"\u00b1{_UNCERTAIN_SDS} noise sd")


def uncertain_mask(coords, noise):
    """Which arrows are lost in their noise: their size ``hypot(v_a, v_b)`` is
    not two noise sds of the end, ``hypot(sd_a, sd_b)``, above zero (the rule
    of every release, :func:`~sklearn_dppca._validation.above_noise`).
    ``noise`` (the sds of the two coordinates, shape of ``coords``) None: none
    is."""
    coords = np.asarray(coords, dtype=float).reshape(-1, 2)
    if noise is None:
        return np.zeros(len(coords), dtype=bool)
    noise = np.asarray(noise, dtype=float).reshape(-1, 2)
    sd = np.hypot(noise[:, 0], noise[:, 1])
    size = np.hypot(coords[:, 0], coords[:, 1])
    # (a NaN sd is no information either: uncertain)
    with np.errstate(invalid="ignore"):
        return ~above_noise(size, sd)


def uncertain_interval_points(coords, noise, mask, bound=None):
    """The corners of the +-2 sd intervals of the ``mask``-ed ends (for the
    limits), each clipped to ``[-bound, bound]`` when ``bound`` is given."""
    if noise is None or not np.any(mask):
        return np.zeros((0, 2))
    coords = np.asarray(coords, dtype=float).reshape(-1, 2)[mask]
    spread = _UNCERTAIN_SDS * np.nan_to_num(np.asarray(noise, dtype=float)
                                           .reshape(-1, 2)[mask], nan=0.0)
    corners = np.vstack([coords - spread, coords + spread])
    return corners if bound is None else np.clip(corners, -bound, bound)


def draw_uncertain(ax, coords, noise, mask, color, bound=None):
    """Draw the +-2 sd intervals (a cross of dashed error bars) of the
    ``mask``-ed ends, clipped to ``[-bound, bound]``; returns the
    ErrorbarContainer (None when no end is uncertain)."""
    if noise is None or not np.any(mask):
        return None
    coords = np.asarray(coords, dtype=float).reshape(-1, 2)[mask]
    spread = _UNCERTAIN_SDS * np.asarray(noise, dtype=float).reshape(-1, 2)[mask]
    spread = np.nan_to_num(spread, nan=0.0)
    low, high = coords - spread, coords + spread
    if bound is not None:
        low, high = np.clip(low, -bound, bound), np.clip(high, -bound, bound)
    xerr = np.vstack([coords[:, 0] - low[:, 0], high[:, 0] - coords[:, 0]])
    yerr = np.vstack([coords[:, 1] - low[:, 1], high[:, 1] - coords[:, 1]])
    container = ax.errorbar(coords[:, 0], coords[:, 1], xerr=xerr, yerr=yerr,
                            fmt="none", ecolor=color, elinewidth=0.8, capsize=2,
                            alpha=_UNCERTAIN_ALPHA + 0.1, zorder=2)
    for line in container.lines[2]:
        line.set_linestyle(_UNCERTAIN_LINESTYLE)
    return container


def fade_uncertain_arrows(arrows, mask):
    """Draw the ``mask``-ed arrows faded and dashed (the uncertain style)."""
    for arrow, weak in zip(arrows, mask):
        if weak:
            patch = arrow.arrow_patch
            patch.set_linestyle(_UNCERTAIN_LINESTYLE)
            patch.set_alpha(_UNCERTAIN_ALPHA)


def uncertain_handle(color):
    """The legend entry of the uncertain style."""
    from matplotlib.lines import Line2D

    return Line2D([], [], color=color, alpha=_UNCERTAIN_ALPHA + 0.1,
                  linestyle=_UNCERTAIN_LINESTYLE, marker="+", markersize=8,
                  label=_UNCERTAIN_LABEL)


def not_estimable_panel(ax, text):
    """Write ``text`` (why nothing is drawn) in the middle of the empty ``ax``;
    returns the Text."""
    import textwrap

    ax.set_xlabel("")
    ax.set_ylabel("")
    return ax.text(0.5, 0.5, textwrap.fill(text, 42), ha="center", va="center",
                   transform=ax.transAxes, fontsize=9, color="0.3",
                   bbox={"boxstyle": "round,pad=0.6", "facecolor": "0.95",
                         "edgecolor": "0.7", "linestyle": ":"})
