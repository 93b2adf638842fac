"""The layers of the DP score plot, each drawn by one function: the histogram
cells (overall, or the groups' stripes), the non-private reference, and the notes
(the synthetic points, shared with the biplot, are drawn by ``_drawing``). Each
returns what it drew; the display keeps it."""

import numpy as np

from ._labels import component_label, plain_text
from ._style import (
    NONPRIVATE_COLOR,
    NONPRIVATE_LABEL,
    NONPRIVATE_LINESTYLE,
    NONPRIVATE_MARKER_KW,
    merge_style,
)

#: The non-private regions holding these shares of the reference histogram.
_HDR_MASSES = (0.5, 0.9)
#: Colour of the noise-cell note when at least one noise-only cell is expected.
_NOISE_WARNING_COLOR = "C3"
_TITLES = {
    "histogram": "DP scores (private histogram)",
    "points": "DP scores (synthetic, from private histogram)",
    "both": "DP scores (private histogram + synthetic)",
}


def title(kind):
    """The title of a score plot of ``kind``."""
    return _TITLES[kind]


def point_size(n_points):
    """Marker area of ``n_points`` synthetic points: smaller when there are many."""
    return float(np.clip(12000.0 / max(n_points, 1), 2.0, 14.0))


def _hdr_levels(hist, masses=(0.5, 0.9)):
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
    idx = np.random.default_rng(seed).permutation(len(points))[:max_points]
    return points[np.sort(idx)]


def mesh_style(defaults, hist_kw):
    """The histogram mesh's style: ``defaults`` overridden by ``hist_kw``."""
    from matplotlib.collections import QuadMesh

    return merge_style(defaults, hist_kw, QuadMesh)


def draw_histogram(ax, edges, H, hist_kw, grey, cmap=None):
    """The private histogram as a mesh (grey under points), with its colour bar;
    ``cmap`` (None: Blues, Greys under points) is the user's colormap."""
    kw = {"cmap": cmap or ("Greys" if grey else "Blues"), "vmin": 0.0,
          "vmax": float(H.max()) if H.max() > 0 else 1.0, "shading": "flat",
          "zorder": 1}
    if grey:
        kw["alpha"] = 0.8
    mesh = ax.pcolormesh(edges[0], edges[1], H.T, **mesh_style(kw, hist_kw))
    colorbar = ax.figure.colorbar(mesh, ax=ax, fraction=0.046, pad=0.03)
    colorbar.set_label("share of rows per cell (private)")
    return mesh, colorbar


def draw_group_layers(ax, labels, colors, edges, group_hists, hist_kw):
    """The groups' cells side by side: a cell that several groups reach is split
    into equal vertical stripes, one per group present there (in ``labels``
    order), so that no group hides another. A stripe's opacity is the group's
    private share of the cell relative to the group's largest cell (each group
    on its own scale, so that a group concentrated in one cell does not wash
    out the others; the facets compare groups on one scale).

    Returns the list of PolyCollection (one per group), the colour bar and the
    legend handles.
    """
    from matplotlib.cm import ScalarMappable
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import LinearSegmentedColormap, Normalize, to_rgb
    from matplotlib.patches import Patch

    xe, ye = edges
    drawn = [label for label in labels if label in group_hists]
    present = np.array([group_hists[label] > 0 for label in drawn])
    sharing = present.sum(axis=0)                  # groups present in each cell
    position = np.cumsum(present, axis=0) - 1      # a group's stripe in its cell
    # (the limits of each group's own scale are set below, after the norm)
    options = {key: value for key, value in hist_kw.items()
               if key not in ("shading", "vmin", "vmax")}
    meshes, handles = [], []
    for g, label in enumerate(drawn):
        values = group_hists[label]
        rgb = to_rgb(colors[label])
        cmap = LinearSegmentedColormap.from_list(
            f"dp_group_{label}", [(*rgb, 0.0), (*rgb, 0.85)]
        )
        peak = float(values.max())
        ix, iy = np.nonzero(present[g])
        parts = sharing[ix, iy]
        width = (xe[ix + 1] - xe[ix]) / parts
        x0 = xe[ix] + width * position[g, ix, iy]
        x1 = np.where(position[g, ix, iy] == parts - 1, xe[ix + 1], x0 + width)
        y0, y1 = ye[iy], ye[iy + 1]
        verts = np.stack([np.column_stack(corner) for corner in
                          ((x0, y0), (x1, y0), (x1, y1), (x0, y1))], axis=1)
        kw = merge_style({"cmap": cmap, "norm": Normalize(0.0, peak if peak > 0 else 1.0),
                          "edgecolors": "none", "linewidths": 0, "zorder": 2},
                         options, PolyCollection)
        mesh = PolyCollection(verts.reshape(-1, 4, 2), array=values[ix, iy], **kw)
        if "norm" not in hist_kw and ("vmin" in hist_kw or "vmax" in hist_kw):
            mesh.set_clim(hist_kw.get("vmin"), hist_kw.get("vmax"))
        ax.add_collection(mesh, autolim=False)
        meshes.append(mesh)
        empty = "" if peak > 0 else " (no cell passed)"
        handles.append(Patch(facecolor=colors[label], alpha=0.85,
                             label=plain_text(label) + empty))
    opacity = LinearSegmentedColormap.from_list(
        "dp_opacity", [(0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.85)]
    )
    mappable = ScalarMappable(norm=hist_kw.get("norm", Normalize(0.0, 1.0)),
                              cmap=opacity)
    colorbar = ax.figure.colorbar(mappable, ax=ax, fraction=0.046, pad=0.03)
    colorbar.set_label("share / group's largest cell (private)\n"
                       "shared cells: one stripe per group")
    return meshes, colorbar, handles


def draw_reference_regions(ax, edges, ref_hist, H):
    """Dashed grey contours of the non-private regions holding 50% and 90% of the
    reference histogram; returns the ContourSet and its legend handle, or
    ``(None, None)`` when the reference has no such regions to draw."""
    from matplotlib.lines import Line2D

    levels = _hdr_levels(ref_hist, _HDR_MASSES)
    if not (len(levels) and ref_hist.min() < ref_hist.max() and min(H.shape) > 1):
        return None, None
    xe, ye = edges
    xc = (xe[:-1] + xe[1:]) / 2
    yc = (ye[:-1] + ye[1:]) / 2
    contour = ax.contour(
        xc, yc, ref_hist.T, levels=levels, colors=[NONPRIVATE_COLOR],
        linestyles=NONPRIVATE_LINESTYLE, linewidths=1.2, zorder=4,
    )
    handle = Line2D([], [], color=NONPRIVATE_COLOR, linestyle=NONPRIVATE_LINESTYLE,
                    label=f"{NONPRIVATE_LABEL} (50%/90% regions)")
    return contour, handle


def draw_reference_points(ax, points):
    """Hollow grey markers of the non-private scores."""
    return ax.scatter(points[:, 0], points[:, 1], s=8, label=NONPRIVATE_LABEL,
                      zorder=2, alpha=0.6, **NONPRIVATE_MARKER_KW)


def empty_note(ax, text):
    """Say in the middle of an empty panel why it is empty."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center",
            fontsize="small", color="0.3", zorder=6,
            bbox={"boxstyle": "round,pad=0.4", "facecolor": "0.96",
                  "edgecolor": "0.75"})


def noise_note(ax, expected_noise_cells, by_group):
    """Write the expected number of noise-only cells in the lower right corner
    (None when it is not known)."""
    if expected_noise_cells is None:
        return None
    count = float(expected_noise_cells)
    where = " (all groups)" if by_group else ""
    if count == 0:
        text = f"0 noise-only cells expected{where}"
    else:
        text = f"\u2248{count:.2g} noise-only cells expected{where}"
    return ax.text(
        0.98, 0.02, text, transform=ax.transAxes, ha="right", va="bottom",
        fontsize="x-small", color=_NOISE_WARNING_COLOR if count >= 1 else "0.15",
        zorder=6, bbox={"boxstyle": "round,pad=0.2", "facecolor": "white",
                        "edgecolor": "none", "alpha": 0.8},
    )


def decorate(ax, extent, axes, ratio, center, *, ylabel=True):
    """The frame's limits on an equal-aspect axes, and the axis labels."""
    a, b = axes
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_aspect("equal", adjustable="box")
    suffix = " - private centre" if center else ""
    ax.set_xlabel(component_label(a, ratio) + suffix)
    if ylabel:
        ax.set_ylabel(component_label(b, ratio) + suffix)


def facet_axes(ax, n):
    """``n`` axes in a row sharing x and y: a new figure (``ax`` None), the area
    of one Axes split (switched off, returned as the bounding axes), or ``n``
    given Axes. Returns ``(axes array, figure, bounding axes or None)``."""
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    if ax is None:
        fig = plt.figure(figsize=(2.6 * n + 1.2, 3.3), layout="constrained")
        axs = fig.subplots(1, n, sharex=True, sharey=True, squeeze=False)[0]
        return np.asarray(axs, dtype=object), fig, None
    if isinstance(ax, Axes):
        return _split_axes(ax, n), ax.figure, ax
    axs = np.asarray(ax, dtype=object).ravel()
    if len(axs) != n or not all(isinstance(x, Axes) for x in axs):
        raise ValueError(
            f"ax must be None, one Axes, or {n} Axes (one per group) with "
            f"groups='facets'; got {len(axs)} object(s)."
        )
    return axs, axs[0].figure, None


def _split_axes(ax, n):
    """``n`` new axes in a row over the area of ``ax`` (which is switched off)."""
    fig = ax.figure
    ax.set_axis_off()
    # None for axes placed by add_axes (which lack the method before
    # matplotlib 3.7)
    spec = getattr(ax, "get_subplotspec", lambda: None)()
    axs = []
    if spec is not None:
        from matplotlib.gridspec import GridSpecFromSubplotSpec

        gs = GridSpecFromSubplotSpec(1, n, subplot_spec=spec, wspace=0.08)
        for i in range(n):
            axs.append(fig.add_subplot(gs[0, i], sharex=axs[0] if axs else None,
                                       sharey=axs[0] if axs else None))
    else:
        x0, y0, w, h = ax.get_position().bounds
        width = w / n
        for i in range(n):
            axs.append(fig.add_axes([x0 + i * width, y0, width * 0.92, h],
                                    sharex=axs[0] if axs else None,
                                    sharey=axs[0] if axs else None))
    return np.asarray(axs, dtype=object)
