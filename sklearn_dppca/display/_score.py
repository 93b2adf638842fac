"""DP score plot: the private histogram of the scores and synthetic points."""

import numpy as np
from .._bunch import Bunch

from .._validation import (
    Interval,
    InvalidParameterError,
    Options,
    Pair,
    by_group,
    check_bool,
    check_choice,
    check_param,
)
from ._check import as_vector, check_axes, check_style
from ._drawing import add_legend, draw_points, not_estimable_panel
from ._estimator_access import (
    SCORE_NOT_ESTIMABLE,
    check_estimator_for,
    estimator_axes,
    frame_get,
    nonprivate_get,
    nonprivate_reference,
    not_estimable_note,
)
from ._labels import plain_text
from ._limits import new_axes
from ._score_layers import (
    decorate,
    draw_group_layers,
    draw_histogram,
    draw_reference_points,
    draw_reference_regions,
    empty_note,
    facet_axes,
    mesh_style,
    noise_note,
    point_size,
    thin_points,
    title,
)
from ._style import check_colormap, group_colors, merge_style

_KINDS = ("histogram", "points", "both")
_GROUP_MODES = [None, Options("colors", "facets")]
_MAX_REFERENCE_POINTS = 600


class ScoreDisplay:
    """DP score plot: private histogram of the scores and synthetic points.

    It is recommended to use :meth:`from_estimator` to create a display. Only the
    released score summary is drawn: the private frame (its centre and extent),
    the private normalised histogram on the frame's grid (one per group when the
    estimator released group-wise histograms), and synthetic points sampled from
    it. No individual score is ever shown.

    Parameters
    ----------
    frame : Bunch, dict or None
        The private frame, with ``center`` (2,) and ``extent``
        ``(x_min, x_max, y_min, y_max)`` (``frame_`` of
        :class:`~sklearn_dppca.DPPCA`). None: the fit found no frame (the score
        summary is not estimable); the display then draws no axes, only a panel
        saying "score summary not estimable".
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
    not_estimable_text_ : matplotlib Text or None
        The text of the panel drawn instead of the scores when ``frame`` is None.
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

    def _plot_not_estimable(self, ax):
        """An empty panel that says the score summary is not estimable."""
        ax, fig = new_axes(ax)
        self._reset_artists()
        self.groups_ = None
        self.ax_, self.figure_ = ax, fig
        ax.set_axis_off()
        ax.set_title("DP scores", color="0.4")
        note = getattr(self, "_not_estimable_note", None) or (
            f"{SCORE_NOT_ESTIMABLE}: the private frame of the scores was not found, "
            "so nothing is drawn.")
        self.not_estimable_text_ = not_estimable_panel(ax, note)
        return self

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
        if self.expected_noise_cells is not None:
            as_vector([self.expected_noise_cells], "expected_noise_cells",
                      nonnegative=True)
        ratio = self.explained_variance_ratio
        if ratio is not None:
            ratio = as_vector(ratio, "explained_variance_ratio", allow_nan=True)
            axes = check_axes(self.axes, len(ratio))
        else:
            # (without the PVE the number of components is unknown)
            axes = check_param(self.axes, [Pair(Interval("int", 0, None))], "axes")
        return Bunch(edges=(xe, ye), histogram=H, group_histograms=groups,
                     points=S, point_groups=S_groups, center=center, extent=extent,
                     axes=axes, ratio=ratio)

    # ------------------------------------------------------------------ plotting
    def plot(
        self,
        ax=None,
        *,
        kind="histogram",
        groups="colors",
        center=False,
        show_nonprivate=True,
        colors=None,
        cmap=None,
        titles=None,
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
        colors : list or dict, default=None
            The groups' colours: a list in the order of the groups (as in
            ``groups_``) or a dict label -> colour. None takes the colour-blind
            safe palette of Okabe & Ito (2008) for up to 8 groups.
        cmap : str or matplotlib Colormap, default=None
            Colormap of the histogram cells drawn without group colours (one
            histogram, or each facet). None: "Blues", and "Greys" under points.
            A ``cmap`` in ``hist_kw`` takes precedence.
        titles : list or dict, default=None
            The facets' titles (``groups="facets"`` only): a list of strings in
            the order of the groups or a dict label -> title with every label.
            None titles each facet with its group label.
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
        options = _check_options(kind, groups, center, show_nonprivate, hist_kw,
                                 scatter_kw, kwargs)
        options.cmap = check_colormap(cmap)
        if self.frame is None:
            # the fit found no frame: no picture (its axes would be noise)
            return self._plot_not_estimable(ax)
        values = self._validate()
        labels = _resolve_groups(options.kind, options.groups, values)
        self.groups_ = labels
        options.titles = _facet_titles(titles, labels, options.groups)
        options.colors = group_colors(labels, colors) if labels is not None else None
        frame = _shifted_frame(values, options.center)
        ref_hist, ref_points = self._reference(options, values, frame.shift)
        self._reset_artists()
        # lighter points over a histogram, so that its cells stay visible
        scatter_defaults = {"s": point_size(len(values.points)
                                            if values.points is not None else 1),
                            "alpha": 0.35 if options.kind == "both" else 0.55,
                            "linewidths": 0, "zorder": 3}
        if options.groups == "facets":
            self._plot_facets(ax, options, labels, values, frame, scatter_defaults)
            self.noise_text_ = noise_note(self.ax_[-1], self.expected_noise_cells,
                                          values.group_histograms is not None)
            return self

        ax, fig = new_axes(ax)
        self.ax_ = ax
        self.figure_ = fig
        colors = options.colors
        handles = self._draw_cells(ax, options, labels, colors, values, frame)
        if ref_hist is not None:
            self.nonprivate_contour_, handle = draw_reference_regions(
                ax, frame.edges, ref_hist, values.histogram)
            handles += [handle] if handle is not None else []
        if options.kind in ("points", "both"):
            grouped = labels is not None and values.point_groups is not None
            self.scatter_, point_handles = draw_points(
                ax, values.points, frame.shift, scatter_defaults, options.scatter_kw,
                groups=values.point_groups if grouped else None,
                labels=labels if grouped else None, colors=colors)
            handles += point_handles
        if ref_points is not None:
            self.nonprivate_scatter_ = draw_reference_points(ax, ref_points)
            handles.append(self.nonprivate_scatter_)

        decorate(ax, frame.extent, values.axes, values.ratio, options.center)
        ax.set_title(title(options.kind))
        self.noise_text_ = noise_note(ax, self.expected_noise_cells,
                                      values.group_histograms is not None)
        _explain_empty(ax, options.kind, labels, values)
        if handles:
            add_legend(ax, handles, where="below", markerscale=1.5)
        return self

    def _reset_artists(self):
        self.mesh_ = None
        self.scatter_ = None
        self.colorbar_ = None
        self.nonprivate_contour_ = None
        self.nonprivate_scatter_ = None
        self.noise_text_ = None
        self.bounding_ax_ = None
        self.not_estimable_text_ = None

    def _reference(self, options, values, shift):
        """The non-private overlay to draw: ``(histogram, points)``, either or both
        None (none with facets, or with ``show_nonprivate=False``)."""
        if not options.show_nonprivate or options.groups == "facets":
            return None, None
        H = values.histogram
        if self.nonprivate_histogram is not None:
            ref_hist = np.asarray(self.nonprivate_histogram, dtype=float)
            if ref_hist.shape != H.shape:
                raise ValueError(
                    f"nonprivate_histogram must have shape {H.shape}, got "
                    f"{ref_hist.shape}."
                )
            return ref_hist, None
        if self.nonprivate_scores is None or options.kind not in ("points", "both"):
            return None, None
        a, b = values.axes
        scores = np.asarray(self.nonprivate_scores, dtype=float)
        if scores.ndim != 2 or scores.shape[1] <= max(a, b):
            raise ValueError(
                "nonprivate_scores must have shape (n_samples, n_components) "
                f"with more than {max(a, b)} columns, got {scores.shape}."
            )
        # mean-centred: put them around the private centre when not centring
        points = thin_points(scores[:, [a, b]], _MAX_REFERENCE_POINTS)
        return None, points + (values.center - shift)

    def _draw_cells(self, ax, options, labels, colors, values, frame):
        """The histogram layer: the groups' stripes (``kind="histogram"`` with
        groups) or the overall histogram (grey under the points with
        ``kind="both"``); returns the legend handles."""
        if options.kind == "histogram" and labels is not None:
            self.mesh_, self.colorbar_, handles = draw_group_layers(
                ax, labels, colors, frame.edges, values.group_histograms,
                options.hist_kw)
            return handles
        if options.kind in ("histogram", "both"):
            self.mesh_, self.colorbar_ = draw_histogram(
                ax, frame.edges, values.histogram, options.hist_kw,
                grey=options.kind == "both", cmap=options.cmap)
        return []

    def _plot_facets(self, ax, options, labels, values, frame, scatter_defaults):
        """One small panel per group, sharing x, y and the colour scale."""
        axs, fig, bounding = facet_axes(ax, len(labels))
        self.ax_ = axs
        self.figure_ = fig
        self.bounding_ax_ = bounding
        colors = options.colors
        kind = options.kind
        hists = values.group_histograms
        mesh_kw = None
        if kind in ("histogram", "both"):
            vmax = max(float(h.max()) for h in hists.values()) or 1.0
            default_cmap = "Greys" if kind == "both" else "Blues"
            mesh_kw = mesh_style({"cmap": options.cmap or default_cmap,
                                  "vmin": 0.0, "vmax": vmax, "shading": "flat",
                                  "zorder": 1}, options.hist_kw)
        meshes, scatters = [], []
        for i, (label, sub) in enumerate(zip(labels, axs)):
            mesh, scatter = _draw_facet(sub, label, colors[label], kind, values, frame,
                                        mesh_kw, options.scatter_kw, scatter_defaults)
            sub.set_title(options.titles[label], color=sub.title.get_color())
            meshes += [mesh] if mesh is not None else []
            scatters += [scatter] if scatter is not None else []
            decorate(sub, frame.extent, values.axes, values.ratio, options.center,
                     ylabel=(i == 0))
            if i > 0:
                sub.tick_params(labelleft=False)
        self.mesh_ = np.asarray(meshes, dtype=object) if meshes else None
        self.scatter_ = scatters if scatters else None
        if meshes:
            self.colorbar_ = fig.colorbar(meshes[-1], ax=list(axs), fraction=0.025,
                                          pad=0.02, shrink=0.9)
            self.colorbar_.set_label("share of the group's rows per cell (private)")
        facets_title = title(kind) + " by group"
        if bounding is not None:
            bounding.set_title(facets_title, pad=18)
        elif ax is None:
            fig.suptitle(facets_title)

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
        colors=None,
        cmap=None,
        titles=None,
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
        colors : list or dict, default=None
            The groups' colours, in the order of ``groups_`` or by label (see
            :meth:`plot`).
        cmap : str or matplotlib Colormap, default=None
            Colormap of the histogram cells drawn without group colours (see
            :meth:`plot`).
        titles : list or dict, default=None
            The facets' titles, in the order of ``groups_`` or by label (see
            :meth:`plot`).
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
        if estimator.frame_ is None:
            display._not_estimable_note = not_estimable_note(estimator)
        return display.plot(
            ax=ax,
            kind=kind,
            groups=groups,
            center=center,
            show_nonprivate=show_nonprivate,
            colors=colors,
            cmap=cmap,
            titles=titles,
            hist_kw=hist_kw,
            scatter_kw=scatter_kw,
            **kwargs,
        )


def _check_options(kind, groups, center, show_nonprivate, hist_kw, scatter_kw, kwargs):
    """The plot's arguments, checked; ``kwargs`` join the style of the main
    artist of ``kind`` (the points for "points", else the histogram)."""
    from matplotlib.collections import PathCollection, QuadMesh

    kind = check_choice(kind, _KINDS, "kind")
    groups = check_param(groups, _GROUP_MODES, "groups")
    center = check_bool(center, "center")
    show_nonprivate = check_bool(show_nonprivate, "show_nonprivate")
    hist_kw = check_style(hist_kw, "hist_kw")
    scatter_kw = check_style(scatter_kw, "scatter_kw")
    points = kind == "points"
    return Bunch(
        kind=kind, groups=groups, center=center, show_nonprivate=show_nonprivate,
        hist_kw=merge_style(hist_kw, {} if points else kwargs, QuadMesh),
        scatter_kw=merge_style(scatter_kw, kwargs if points else {}, PathCollection),
    )


def _facet_titles(titles, labels, mode):
    """One title per facet, label -> str: the user's (a list in the groups'
    order or a dict by label) or the group labels. Messages give counts, never
    the labels."""
    if titles is None:
        if labels is None:
            return None
        return {label: plain_text(label) for label in labels}
    if mode != "facets":
        raise ValueError("titles names the facets; it needs groups='facets'.")
    chosen = by_group(titles, labels, "titles", "title", exact=True)
    if not all(isinstance(text, str) for text in chosen.values()):
        raise InvalidParameterError("titles must hold strings.")
    return chosen


def _resolve_groups(kind, groups, values):
    """The group labels to draw (None: no groups), in the histograms' order then
    the points'; an error when the mode needs what the display lacks."""
    if kind in ("points", "both") and values.points is None:
        raise ValueError(f"kind={kind!r} needs synthetic_scores.")
    if groups is None:
        return None
    hists = values.group_histograms
    hist_groups = list(hists) if hists is not None else None
    point_groups = (list(dict.fromkeys(values.point_groups.tolist()))
                    if values.point_groups is not None else None)
    if point_groups is not None and hist_groups is not None:
        point_groups = hist_groups + [g for g in point_groups if g not in hist_groups]
    if groups == "colors":
        return hist_groups if kind == "histogram" else point_groups
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
    return point_groups if point_groups is not None else hist_groups


def _shifted_frame(values, center):
    """The cell edges and the frame's extent, minus the private centre when
    ``center`` (else unchanged)."""
    shift = values.center if center else np.zeros(2)
    xe, ye = values.edges
    extent = values.extent
    return Bunch(shift=shift, edges=(xe - shift[0], ye - shift[1]),
                 extent=(extent[0] - shift[0], extent[1] - shift[0],
                         extent[2] - shift[1], extent[3] - shift[1]))


def _explain_empty(ax, kind, labels, values):
    """Say so on a panel whose histogram or points are all empty."""
    H, S, hists = values.histogram, values.points, values.group_histograms
    shows_cells = kind == "both" or (kind == "histogram" and labels is None)
    if shows_cells and not H.sum() > 0:
        empty_note(ax, "no cell passed the noise threshold")
    elif kind == "points" and (S is None or len(S) == 0):
        empty_note(ax, "no synthetic points: no cell passed the noise threshold")
    elif kind == "histogram" and labels is not None and not any(
            hists[label].sum() > 0 for label in labels if label in hists):
        empty_note(ax, "no cell of any group passed the noise threshold")


def _draw_facet(ax, label, color, kind, values, frame, mesh_kw, scatter_kw,
                scatter_defaults):
    """One group's panel: its histogram (``mesh_kw`` styled) and its points;
    returns ``(mesh or None, scatter or None)``."""
    from matplotlib.collections import PathCollection

    hist = (values.group_histograms.get(label)
            if values.group_histograms is not None else None)
    mesh = scatter = None
    if kind in ("histogram", "both") and hist is not None:
        xe, ye = frame.edges
        mesh = ax.pcolormesh(xe, ye, hist.T, **mesh_kw)
    if kind in ("points", "both"):
        mask = values.point_groups == label
        kw = dict(scatter_defaults, color=color, s=point_size(max(int(mask.sum()), 1)))
        kw = merge_style(kw, scatter_kw, PathCollection)
        S, shift = values.points, frame.shift
        scatter = ax.scatter(S[mask, 0] - shift[0], S[mask, 1] - shift[1], **kw)
    if kind in ("histogram", "both") and hist is not None and not hist.sum() > 0:
        empty_note(ax, "no cell passed\nthe noise threshold")
    elif kind == "points" and not np.any(values.point_groups == label):
        empty_note(ax, "no synthetic points")
    ax.set_title(plain_text(label), color=color if kind != "histogram" else "black")
    return mesh, scatter
