"""DP score plot: the private histogram of the scores and synthetic points."""

import numpy as np

from ._common import (
    NONPRIVATE_COLOR,
    NONPRIVATE_LABEL,
    NONPRIVATE_LINESTYLE,
    NONPRIVATE_MARKER_KW,
    PRIVATE_COLOR,
    add_legend,
    as_vector,
    check_bool,
    check_estimator_for,
    check_kind,
    check_kw,
    check_matplotlib_support,
    component_label,
    estimator_axes,
    frame_get,
    get_axes,
    group_colors,
    hdr_levels,
    nonprivate_get,
    nonprivate_reference,
    plain_text,
    thin_points,
)

_KINDS = ("histogram", "points", "both")
_GROUP_MODES = ("colors", "facets")
_HDR_MASSES = (0.5, 0.9)
_MAX_REFERENCE_POINTS = 600
#: Colour of the noise-cell note when at least one noise-only cell is expected.
_NOISE_WARNING_COLOR = "C3"


def _point_size(n_points):
    return float(np.clip(12000.0 / max(n_points, 1), 2.0, 14.0))


def _check_pair(pair, name):
    try:
        a, b = (int(v) for v in pair)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair of 0-based component indices, "
                         f"got {pair!r}.") from None
    return a, b


class ScoreDisplay:
    """DP score plot: private histogram of the scores and synthetic points.

    It is recommended to use :meth:`from_estimator` to create a display. Only the
    released score summary is drawn: the private frame (its centre and extent),
    the private normalised histogram on the frame's grid (one per group when the
    estimator released group-wise histograms), and synthetic points sampled from
    it. No individual score is ever shown.

    Parameters
    ----------
    frame : Bunch or dict
        The private frame, with ``center`` (2,) and ``extent``
        ``(x_min, x_max, y_min, y_max)`` (``frame_`` of
        :class:`~sklearn_dppca.DPPCA`).
    bin_edges : tuple of 2 arrays
        Cell edges along the two axes, lengths ``bins[0] + 1`` and
        ``bins[1] + 1``.
    histogram : array-like of shape bins
        Private normalised histogram, indexed ``[ix, iy]``.
    synthetic_scores : array-like of shape (n_synthetic, 2), default=None
        Synthetic points sampled from the private histogram.
    group_histograms : dict, default=None
        Group label -> private normalised histogram of shape ``bins``.
    synthetic_groups : array-like of shape (n_synthetic,), default=None
        Group label of each synthetic point.
    axes : tuple of 2 int, default=(0, 1)
        0-based indices of the components the scores are on (axis labels).
    explained_variance_ratio : array-like, default=None
        Private PVE for the axis labels.
    nonprivate_scores : array-like of shape (n_samples, n_components), default=None
        Mean-centred ordinary PCA scores (NOT private), drawn as hollow grey
        markers (a subsample of at most 600) with ``kind`` "points" or "both"
        when there is no ``nonprivate_histogram``. They are mean-centred, so
        with ``center=False`` they are drawn around the private frame centre.
    nonprivate_histogram : array-like of shape bins, default=None
        The true normalised histogram on the same grid (NOT private): grey dashed
        contours holding 50% and 90% of its mass (every ``kind``).
    expected_noise_cells : float, default=None
        Expected number of cells (over the whole grid, all groups together) that
        are pure noise yet passed the histogram's threshold
        (``expected_noise_cells_``); written in a corner of the plot (in red from
        1 on) so that isolated cells are not read as structure.

    Attributes
    ----------
    mesh_ : matplotlib QuadMesh, list of PolyCollection, ndarray of QuadMesh, or None
        The histogram cells: one QuadMesh (``pcolormesh``; its array is the
        released histogram transposed, rows are y); with ``kind="histogram",
        groups="colors"`` a list with one PolyCollection per group (in
        ``groups_`` order) of the group's non-empty cells (in ``numpy.nonzero``
        order, their values as its array), each cell narrowed to the group's
        stripe when several groups reach it; with ``groups="facets"`` an array
        with one QuadMesh per facet.
    scatter_ : matplotlib PathCollection, list of PathCollection, or None
        The synthetic points; one collection per group with groups.
    colorbar_ : matplotlib Colorbar or None
    nonprivate_contour_ : matplotlib ContourSet or None
    nonprivate_scatter_ : matplotlib PathCollection or None
    noise_text_ : matplotlib Text or None
        The note on the expected number of noise-only cells.
    groups_ : list or None
        Group labels drawn.
    ax_ : matplotlib Axes or ndarray of Axes
        One Axes, or one per group with ``groups="facets"``.
    bounding_ax_ : matplotlib Axes or None
        With ``groups="facets"`` and a single (or no) ``ax``: the axes whose area
        the facets share (switched off).
    figure_ : matplotlib Figure

    See Also
    --------
    BiplotDisplay : The synthetic points with the variables' arrows.
    sklearn_dppca.DPPCA : The estimator that releases the score summary.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt
    >>> from sklearn_dppca.display import ScoreDisplay
    >>> edges = (np.linspace(-2, 2, 5), np.linspace(-1, 1, 5))
    >>> histogram = np.full((4, 4), 1 / 16)
    >>> frame = {"center": [0.0, 0.0], "extent": (-2.0, 2.0, -1.0, 1.0)}
    >>> disp = ScoreDisplay(frame, edges, histogram).plot()
    >>> disp.groups_ is None
    True
    >>> plt.close("all")
    """

    def __init__(
        self,
        frame,
        bin_edges,
        histogram,
        *,
        synthetic_scores=None,
        group_histograms=None,
        synthetic_groups=None,
        axes=(0, 1),
        explained_variance_ratio=None,
        nonprivate_scores=None,
        nonprivate_histogram=None,
        expected_noise_cells=None,
    ):
        self.frame = frame
        self.bin_edges = bin_edges
        self.histogram = histogram
        self.synthetic_scores = synthetic_scores
        self.group_histograms = group_histograms
        self.synthetic_groups = synthetic_groups
        self.axes = axes
        self.explained_variance_ratio = explained_variance_ratio
        self.nonprivate_scores = nonprivate_scores
        self.nonprivate_histogram = nonprivate_histogram
        self.expected_noise_cells = expected_noise_cells

    # ------------------------------------------------------------------ validation
    def _validate(self):
        xe = as_vector(self.bin_edges[0], "bin_edges[0]")
        ye = as_vector(self.bin_edges[1], "bin_edges[1]")
        if len(xe) < 2 or len(ye) < 2 or np.any(np.diff(xe) <= 0) or np.any(
            np.diff(ye) <= 0
        ):
            raise ValueError("bin_edges must be two increasing arrays of length >= 2.")
        shape = (len(xe) - 1, len(ye) - 1)

        def hist(values, name):
            values = np.asarray(values, dtype=float)
            if values.shape != shape:
                raise ValueError(
                    f"{name} must have shape {shape} to match bin_edges, got "
                    f"{values.shape}."
                )
            if not np.all(np.isfinite(values)) or np.any(values < 0):
                raise ValueError(f"{name} must be finite and non-negative.")
            return values

        H = hist(self.histogram, "histogram")
        groups = None
        if self.group_histograms is not None:
            groups = {g: hist(h, f"group_histograms[{g!r}]")
                      for g, h in dict(self.group_histograms).items()}
        S = None
        if self.synthetic_scores is not None:
            S = np.asarray(self.synthetic_scores, dtype=float)
            if S.ndim != 2 or S.shape[1] != 2:
                raise ValueError(
                    f"synthetic_scores must have shape (n_synthetic, 2), got {S.shape}."
                )
        S_groups = None
        if self.synthetic_groups is not None:
            S_groups = np.asarray(self.synthetic_groups, dtype=object)
            if S is None or S_groups.shape != (S.shape[0],):
                raise ValueError(
                    "synthetic_groups must have one label per synthetic score point."
                )
        center = as_vector(frame_get(self.frame, "center"), "frame['center']", 2)
        extent = as_vector(frame_get(self.frame, "extent"), "frame['extent']", 4)
        a, b = _check_pair(self.axes, "axes")
        if self.expected_noise_cells is not None:
            as_vector([self.expected_noise_cells], "expected_noise_cells",
                      nonnegative=True)
        ratio = self.explained_variance_ratio
        if ratio is not None:
            ratio = as_vector(ratio, "explained_variance_ratio")
            if max(a, b) >= len(ratio):
                raise ValueError(
                    f"axes={self.axes!r} is out of range for {len(ratio)} components."
                )
        return xe, ye, H, groups, S, S_groups, center, extent, (a, b), ratio

    # ------------------------------------------------------------------ plotting
    def plot(
        self,
        ax=None,
        *,
        kind="histogram",
        groups="colors",
        center=False,
        show_nonprivate=True,
        hist_kw=None,
        scatter_kw=None,
        **kwargs,
    ):
        """Draw the DP score plot.

        Parameters
        ----------
        ax : matplotlib Axes, list of Axes or None, default=None
            Axes to draw on; a new figure is created when None. With
            ``groups="facets"``: a list/array with one Axes per group, or a
            single Axes whose area is split into a row of facets.
        kind : {"histogram", "points", "both"}, default="histogram"
            The private histogram as cells on the private frame, the synthetic
            points, or both.
        groups : {"colors", "facets"} or None, default="colors"
            How to show groups, when the display has them: ``"colors"`` draws one
            colour per group on one axes (synthetic points coloured by group;
            for ``kind="histogram"``, each group's cells in its colour with an
            opacity that is the private share of each cell relative to the
            group's largest cell, a cell several groups reach split into one
            stripe per group; for
            ``kind="both"``, the coloured points over the overall histogram in
            grey);
            ``"facets"`` draws a row of small multiples sharing x, y and the colour
            scale; None ignores the groups.
        center : bool, default=False
            Subtract the private frame centre from everything drawn.
        show_nonprivate : bool, default=True
            Draw the non-private reference when the display has one (not with
            facets).
        hist_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.pcolormesh`.
        scatter_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.scatter`.
        **kwargs : dict
            Added to ``hist_kw`` (``kind`` "histogram" or "both") or
            ``scatter_kw`` (``kind="points"``).

        Returns
        -------
        display : ScoreDisplay
            The display itself, with the drawn artists stored as attributes.
        """
        check_matplotlib_support("ScoreDisplay.plot")
        kind = check_kind(kind, _KINDS)
        if groups is not None:
            groups = check_kind(groups, _GROUP_MODES, "groups")
        center = check_bool(center, "center")
        show_nonprivate = check_bool(show_nonprivate, "show_nonprivate")
        hist_kw = check_kw(hist_kw, "hist_kw")
        scatter_kw = check_kw(scatter_kw, "scatter_kw")
        (scatter_kw if kind == "points" else hist_kw).update(kwargs)
        xe, ye, H, group_hists, S, S_groups, c, extent, (a, b), ratio = self._validate()

        if kind in ("points", "both") and S is None:
            raise ValueError(f"kind={kind!r} needs synthetic_scores.")
        labels = None
        if groups is not None:
            hist_groups = list(group_hists) if group_hists is not None else None
            point_groups = (
                list(dict.fromkeys(S_groups.tolist())) if S_groups is not None else None
            )
            if point_groups is not None and hist_groups is not None:
                point_groups = hist_groups + [
                    g for g in point_groups if g not in hist_groups
                ]
            if groups == "facets":
                if kind in ("histogram", "both") and hist_groups is None:
                    raise ValueError(
                        f"groups='facets' with kind={kind!r} needs group_histograms; "
                        "fit DPPCA with groups=[...] to release them."
                    )
                if kind in ("points", "both") and point_groups is None:
                    raise ValueError(
                        f"groups='facets' with kind={kind!r} needs synthetic_groups; "
                        "fit DPPCA with groups=[...] to release them."
                    )
                labels = point_groups if point_groups is not None else hist_groups
            elif kind == "histogram":
                labels = hist_groups
            else:
                labels = point_groups
        self.groups_ = labels
        shift = c if center else np.zeros(2)
        xe_s, ye_s = xe - shift[0], ye - shift[1]
        ext = (extent[0] - shift[0], extent[1] - shift[0],
               extent[2] - shift[1], extent[3] - shift[1])

        ref_points = ref_hist = None
        if show_nonprivate and groups != "facets":
            if self.nonprivate_histogram is not None:
                ref_hist = np.asarray(self.nonprivate_histogram, dtype=float)
                if ref_hist.shape != H.shape:
                    raise ValueError(
                        f"nonprivate_histogram must have shape {H.shape}, got "
                        f"{ref_hist.shape}."
                    )
            elif self.nonprivate_scores is not None and kind in ("points", "both"):
                scores = np.asarray(self.nonprivate_scores, dtype=float)
                if scores.ndim != 2 or scores.shape[1] <= max(a, b):
                    raise ValueError(
                        "nonprivate_scores must have shape (n_samples, n_components) "
                        f"with more than {max(a, b)} columns, got {scores.shape}."
                    )
                # mean-centred: put them around the private centre when not centring
                ref_points = thin_points(scores[:, [a, b]], _MAX_REFERENCE_POINTS)
                ref_points = ref_points + (c - shift)

        self.mesh_ = None
        self.scatter_ = None
        self.colorbar_ = None
        self.nonprivate_contour_ = None
        self.nonprivate_scatter_ = None
        self.noise_text_ = None
        self.bounding_ax_ = None
        # lighter points over a histogram, so that its cells stay visible
        scatter_defaults = {"s": _point_size(len(S) if S is not None else 1),
                            "alpha": 0.35 if kind == "both" else 0.55,
                            "linewidths": 0, "zorder": 3}

        if groups == "facets":
            self._plot_facets(ax, kind, labels, xe_s, ye_s, group_hists, S, S_groups,
                              shift, ext, (a, b), ratio, center, hist_kw, scatter_kw,
                              scatter_defaults)
            self._noise_note(self.ax_[-1], group_hists is not None)
            return self

        ax, fig = get_axes(ax, "ScoreDisplay.plot")
        self.ax_ = ax
        self.figure_ = fig
        handles = []
        colors = group_colors(labels) if labels is not None else None
        from matplotlib.lines import Line2D

        if kind == "histogram" and labels is not None:
            self._plot_group_layers(ax, fig, labels, colors, xe_s, ye_s, group_hists,
                                    hist_kw, handles)
        elif kind in ("histogram", "both"):
            grey = kind == "both"
            kw = {"cmap": "Greys" if grey else "Blues", "vmin": 0.0,
                  "vmax": float(H.max()) if H.max() > 0 else 1.0, "shading": "flat",
                  "zorder": 1}
            if grey:
                kw["alpha"] = 0.8
            kw.update(hist_kw)
            if "norm" in hist_kw:  # a norm carries its own limits
                kw.pop("vmin", None)
                kw.pop("vmax", None)
            self.mesh_ = ax.pcolormesh(xe_s, ye_s, H.T, **kw)
            self.colorbar_ = fig.colorbar(self.mesh_, ax=ax, fraction=0.046, pad=0.03)
            self.colorbar_.set_label("share of rows per cell (private)")
        if ref_hist is not None:
            levels = hdr_levels(ref_hist, _HDR_MASSES)
            if len(levels) and ref_hist.min() < ref_hist.max() and min(H.shape) > 1:
                xc = (xe_s[:-1] + xe_s[1:]) / 2
                yc = (ye_s[:-1] + ye_s[1:]) / 2
                self.nonprivate_contour_ = ax.contour(
                    xc, yc, ref_hist.T, levels=levels, colors=[NONPRIVATE_COLOR],
                    linestyles=NONPRIVATE_LINESTYLE, linewidths=1.2, zorder=4,
                )
                handles.append(Line2D([], [], color=NONPRIVATE_COLOR,
                                      linestyle=NONPRIVATE_LINESTYLE,
                                      label=f"{NONPRIVATE_LABEL} (50%/90% regions)"))

        if kind in ("points", "both"):
            if labels is not None and S_groups is not None:
                self.scatter_ = []
                for label in labels:
                    mask = S_groups == label
                    kw = dict(scatter_defaults, color=colors[label],
                              label=plain_text(label))
                    kw.update(scatter_kw)
                    self.scatter_.append(
                        ax.scatter(S[mask, 0] - shift[0], S[mask, 1] - shift[1], **kw)
                    )
                    handles.append(Line2D([], [], color=colors[label], marker="o",
                                          linestyle="", label=plain_text(label)))
            else:
                kw = dict(scatter_defaults, color=PRIVATE_COLOR,
                          label="synthetic points")
                kw.update(scatter_kw)
                self.scatter_ = ax.scatter(S[:, 0] - shift[0], S[:, 1] - shift[1], **kw)
                handles.append(Line2D([], [], color=kw.get("color", PRIVATE_COLOR),
                                      marker="o", linestyle="", label="synthetic points"))
        if ref_points is not None:
            self.nonprivate_scatter_ = ax.scatter(
                ref_points[:, 0], ref_points[:, 1], s=8, label=NONPRIVATE_LABEL,
                zorder=2, alpha=0.6, **NONPRIVATE_MARKER_KW,
            )
            handles.append(self.nonprivate_scatter_)

        self._decorate(ax, ext, (a, b), ratio, center, xlabel=True, ylabel=True)
        ax.set_title(self._title(kind))
        self._noise_note(ax, group_hists is not None)
        shows_cells = kind == "both" or (kind == "histogram" and labels is None)
        if shows_cells and not H.sum() > 0:
            self._empty_note(ax, "no cell passed the noise threshold")
        elif kind == "points" and (S is None or len(S) == 0):
            self._empty_note(ax, "no synthetic points: no cell passed the noise "
                                 "threshold")
        elif kind == "histogram" and labels is not None and not any(
                group_hists[label].sum() > 0 for label in labels if label in group_hists):
            self._empty_note(ax, "no cell of any group passed the noise threshold")
        if handles:
            add_legend(ax, handles, where="below", markerscale=1.5)
        return self

    def _plot_group_layers(self, ax, fig, labels, colors, xe_s, ye_s, group_hists,
                           hist_kw, handles):
        """The groups' cells side by side: a cell that several groups reach is split
        into equal vertical stripes, one per group present there (in ``labels``
        order), so that no group hides another. A stripe's opacity is the group's
        private share of the cell relative to the group's largest cell (each group
        on its own scale, so that a group concentrated in one cell does not wash
        out the others; the facets compare groups on one scale)."""
        from matplotlib.cm import ScalarMappable
        from matplotlib.collections import PolyCollection
        from matplotlib.colors import LinearSegmentedColormap, Normalize, to_rgb
        from matplotlib.patches import Patch

        drawn = [label for label in labels if label in group_hists]
        present = np.array([group_hists[label] > 0 for label in drawn])
        sharing = present.sum(axis=0)                  # groups present in each cell
        position = np.cumsum(present, axis=0) - 1      # a group's stripe in its cell
        options = {key: value for key, value in hist_kw.items()
                   if key not in ("shading", "vmin", "vmax")}
        meshes = []
        for g, label in enumerate(drawn):
            values = group_hists[label]
            rgb = to_rgb(colors[label])
            cmap = LinearSegmentedColormap.from_list(
                f"dp_group_{label}", [(*rgb, 0.0), (*rgb, 0.85)]
            )
            peak = float(values.max())
            ix, iy = np.nonzero(present[g])
            parts = sharing[ix, iy]
            width = (xe_s[ix + 1] - xe_s[ix]) / parts
            x0 = xe_s[ix] + width * position[g, ix, iy]
            x1 = np.where(position[g, ix, iy] == parts - 1, xe_s[ix + 1], x0 + width)
            y0, y1 = ye_s[iy], ye_s[iy + 1]
            verts = np.stack([np.column_stack(corner) for corner in
                              ((x0, y0), (x1, y0), (x1, y1), (x0, y1))], axis=1)
            kw = {"cmap": cmap, "norm": Normalize(0.0, peak if peak > 0 else 1.0),
                  "edgecolors": "none", "linewidths": 0, "zorder": 2}
            kw.update(options)
            mesh = PolyCollection(verts.reshape(-1, 4, 2), array=values[ix, iy], **kw)
            if "norm" not in hist_kw and ("vmin" in hist_kw or "vmax" in hist_kw):
                mesh.set_clim(hist_kw.get("vmin"), hist_kw.get("vmax"))
            ax.add_collection(mesh, autolim=False)
            meshes.append(mesh)
            empty = "" if peak > 0 else " (no cell passed)"
            handles.append(Patch(facecolor=colors[label], alpha=0.85,
                                 label=plain_text(label) + empty))
        self.mesh_ = meshes
        opacity = LinearSegmentedColormap.from_list(
            "dp_opacity", [(0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.85)]
        )
        mappable = ScalarMappable(norm=hist_kw.get("norm", Normalize(0.0, 1.0)),
                                  cmap=opacity)
        self.colorbar_ = fig.colorbar(mappable, ax=ax, fraction=0.046, pad=0.03)
        self.colorbar_.set_label("share / group's largest cell (private)\n"
                                 "shared cells: one stripe per group")

    @staticmethod
    def _empty_note(ax, text):
        """Say in the middle of an empty panel why it is empty."""
        ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center",
                fontsize="small", color="0.3", zorder=6,
                bbox={"boxstyle": "round,pad=0.4", "facecolor": "0.96",
                      "edgecolor": "0.75"})

    def _noise_note(self, ax, by_group):
        """Write the expected number of noise-only cells in the lower right corner."""
        if self.expected_noise_cells is None:
            return
        count = float(self.expected_noise_cells)
        where = " (all groups)" if by_group else ""
        if count == 0:
            text = f"0 noise-only cells expected{where}"
        else:
            text = f"\u2248{count:.2g} noise-only cells expected{where}"
        self.noise_text_ = ax.text(
            0.98, 0.02, text, transform=ax.transAxes, ha="right", va="bottom",
            fontsize="x-small", color=_NOISE_WARNING_COLOR if count >= 1 else "0.15",
            zorder=6, bbox={"boxstyle": "round,pad=0.2", "facecolor": "white",
                            "edgecolor": "none", "alpha": 0.8},
        )

    def _title(self, kind):
        return {
            "histogram": "DP scores (private histogram)",
            "points": "DP scores (synthetic, from private histogram)",
            "both": "DP scores (private histogram + synthetic)",
        }[kind]

    @staticmethod
    def _decorate(ax, ext, axes, ratio, center, xlabel, ylabel):
        a, b = axes
        ax.set_xlim(ext[0], ext[1])
        ax.set_ylim(ext[2], ext[3])
        ax.set_aspect("equal", adjustable="box")
        suffix = " - private centre" if center else ""
        if xlabel:
            ax.set_xlabel(component_label(a, ratio) + suffix)
        if ylabel:
            ax.set_ylabel(component_label(b, ratio) + suffix)

    def _facet_axes(self, ax, n):
        import matplotlib.pyplot as plt
        from matplotlib.axes import Axes

        if ax is None:
            fig = plt.figure(figsize=(2.6 * n + 1.2, 3.3), layout="constrained")
            axs = fig.subplots(1, n, sharex=True, sharey=True, squeeze=False)[0]
            return np.asarray(axs, dtype=object), fig, None
        if isinstance(ax, Axes):
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
            return np.asarray(axs, dtype=object), fig, ax
        axs = np.asarray(ax, dtype=object).ravel()
        if len(axs) != n or not all(isinstance(x, Axes) for x in axs):
            raise ValueError(
                f"ax must be None, one Axes, or {n} Axes (one per group) with "
                f"groups='facets'; got {len(axs)} object(s)."
            )
        return axs, axs[0].figure, None

    def _plot_facets(self, ax, kind, labels, xe_s, ye_s, group_hists, S, S_groups,
                     shift, ext, axes, ratio, center, hist_kw, scatter_kw,
                     scatter_defaults):
        axs, fig, bounding = self._facet_axes(ax, len(labels))
        self.ax_ = axs
        self.figure_ = fig
        self.bounding_ax_ = bounding
        colors = group_colors(labels)
        meshes, scatters = [], []
        vmax = 1.0
        if kind in ("histogram", "both"):
            vmax = max(float(h.max()) for h in group_hists.values()) or 1.0
        for i, (label, sub) in enumerate(zip(labels, axs)):
            if kind in ("histogram", "both"):
                kw = {"cmap": "Greys" if kind == "both" else "Blues", "vmin": 0.0,
                      "vmax": vmax, "shading": "flat", "zorder": 1}
                kw.update(hist_kw)
                if "norm" in hist_kw:  # a norm carries its own limits
                    kw.pop("vmin", None)
                    kw.pop("vmax", None)
                if label in group_hists:
                    meshes.append(sub.pcolormesh(xe_s, ye_s, group_hists[label].T, **kw))
            if kind in ("points", "both"):
                mask = S_groups == label
                kw = dict(scatter_defaults, color=colors[label])
                kw["s"] = _point_size(max(int(mask.sum()), 1))
                kw.update(scatter_kw)
                scatters.append(
                    sub.scatter(S[mask, 0] - shift[0], S[mask, 1] - shift[1], **kw)
                )
            self._decorate(sub, ext, axes, ratio, center, xlabel=True, ylabel=(i == 0))
            group_hist = group_hists.get(label) if group_hists is not None else None
            if (kind in ("histogram", "both") and group_hist is not None
                    and not group_hist.sum() > 0):
                self._empty_note(sub, "no cell passed\nthe noise threshold")
            elif kind == "points" and not np.any(S_groups == label):
                self._empty_note(sub, "no synthetic points")
            sub.set_title(plain_text(label), color=colors[label] if kind != "histogram"
                          else "black")
            if i > 0:
                sub.tick_params(labelleft=False)
        self.mesh_ = np.asarray(meshes, dtype=object) if meshes else None
        self.scatter_ = scatters if scatters else None
        if meshes:
            self.colorbar_ = fig.colorbar(meshes[-1], ax=list(axs), fraction=0.025,
                                          pad=0.02, shrink=0.9)
            self.colorbar_.set_label("share of the group's rows per cell (private)")
        title = self._title(kind) + " by group"
        if bounding is not None:
            bounding.set_title(title, pad=18)
        elif ax is None:
            fig.suptitle(title)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        *,
        ax=None,
        kind="histogram",
        groups="colors",
        center=False,
        axes=None,
        show_nonprivate=True,
        hist_kw=None,
        scatter_kw=None,
        **kwargs,
    ):
        """Draw the DP score plot of a fitted :class:`~sklearn_dppca.DPPCA`.

        Reads ``frame_``, ``bin_edges_``, ``score_histogram_``,
        ``score_histograms_``, ``synthetic_scores_``, ``synthetic_groups_``,
        ``groups_``, ``axes_``, ``expected_noise_cells_``, the private PVE and the
        non-private reference (when stored).

        Parameters
        ----------
        estimator : DPPCA
            Fitted estimator.
        ax : matplotlib Axes, list of Axes or None, default=None
            Axes to draw on; a new figure is created when None (see
            :meth:`plot` for facets).
        kind : {"histogram", "points", "both"}, default="histogram"
            The private histogram, the synthetic points, or both.
        groups : {"colors", "facets"} or None, default="colors"
            How to show the released groups (see :meth:`plot`).
        center : bool, default=False
            Subtract the private frame centre from everything drawn.
        axes : tuple of 2 int, default=None
            Must be None or the estimator's ``axes_``: the score summary exists
            only for the axes it was released on.
        show_nonprivate : bool, default=True
            Draw the non-private reference when the estimator stored one.
        hist_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.pcolormesh`.
        scatter_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.scatter`.
        **kwargs : dict
            Added to ``hist_kw`` or ``scatter_kw`` (see :meth:`plot`).

        Returns
        -------
        display : ScoreDisplay
            The display, drawn.

        Raises
        ------
        TypeError
            For estimators without a score summary (DPKendallDirections, DPScree).
        """
        check_matplotlib_support("ScoreDisplay.from_estimator")
        check_estimator_for(estimator, "ScoreDisplay")
        axes = estimator_axes(estimator, axes, "ScoreDisplay")
        reference = nonprivate_reference(estimator)
        group_hists = getattr(estimator, "score_histograms_", None)
        order = getattr(estimator, "groups_", None)
        if group_hists is not None and order is not None:
            group_hists = {g: group_hists[g] for g in order if g in group_hists}
        display = cls(
            estimator.frame_,
            estimator.bin_edges_,
            estimator.score_histogram_,
            synthetic_scores=getattr(estimator, "synthetic_scores_", None),
            group_histograms=group_hists,
            synthetic_groups=getattr(estimator, "synthetic_groups_", None),
            axes=axes,
            explained_variance_ratio=getattr(estimator, "explained_variance_ratio_", None),
            nonprivate_scores=nonprivate_get(reference, "scores"),
            nonprivate_histogram=nonprivate_get(reference, "score_histogram"),
            expected_noise_cells=getattr(estimator, "expected_noise_cells_", None),
        )
        return display.plot(
            ax=ax,
            kind=kind,
            groups=groups,
            center=center,
            show_nonprivate=show_nonprivate,
            hist_kw=hist_kw,
            scatter_kw=scatter_kw,
            **kwargs,
        )
