"""DP loading plot: the coefficients of the private directions."""

import numpy as np

from .._validation import above_noise, check_bool, check_choice
from ._check import (
    as_components,
    as_components_noise,
    as_ratio,
    as_reference_components,
    check_axes,
    check_component_indices,
    check_feature_names,
    check_style,
    select_variables,
)
from ._drawing import (
    add_legend,
    draw_arrows,
    draw_reference_arrows,
    draw_uncertain,
    draw_zero_lines,
    fade_uncertain_arrows,
    legend_line,
    uncertain_handle,
    uncertain_interval_points,
    uncertain_mask,
)
from ._estimator_access import (
    check_estimator_for,
    default_axes,
    estimator_feature_names,
    nonprivate_get,
    nonprivate_reference,
)
from ._labels import component_label, draw_labels, label_fontsize, plain_text
from ._limits import new_axes, set_equal_limits, settle_layout
from ._style import (
    NONPRIVATE_COLOR,
    NONPRIVATE_LABEL,
    NONPRIVATE_MARKER_KW,
    PRIVATE_COLOR,
    check_colormap,
    legend_color,
    merge_style,
)

_KINDS = ("vector", "point", "heatmap")


#: The most loadings within their noise (on both axes) whose labels a picture
#: writes: past it their names pile up near 0 (breast cancer's 30 at eps 4:
#: 28 of them).
_CROWD = 10


def _lost_on_both_axes(coords, sds):
    """Per loading, whether it is within two noise sds of 0 on each axis (a NaN
    sd: no information, within): where it sits is noise in both directions. A
    loading clear of its noise on one axis keeps its label, even when the other
    axis's noise makes the arrow as a whole uncertain."""
    if sds is None:
        return np.zeros(len(coords), dtype=bool)
    with np.errstate(invalid="ignore"):
        clear = above_noise(np.abs(coords), sds)
    return ~clear.any(axis=1)


def _hide_crowd(ax, texts, lost, fontsize):
    """Hide the labels of the loadings within their noise on both axes and say
    so in the axes (their points or arrows and their noise bars stay); returns
    the note."""
    for text, hidden in zip(texts, lost):
        if hidden:
            text.set_visible(False)
    note = (f"{int(lost.sum())} of {len(lost)} loadings within their noise on both "
            "axes: not labelled (kind='heatmap' names them all)")
    return ax.text(0.01, 0.01, note, transform=ax.transAxes, ha="left", va="bottom",
                   fontsize=fontsize, color="0.3", zorder=6,
                   bbox={"boxstyle": "round,pad=0.2", "facecolor": "white",
                         "edgecolor": "none", "alpha": 0.8})


def _artist_of(kind):
    """The matplotlib class ``arrow_kw`` styles for ``kind``."""
    from matplotlib.collections import PathCollection
    from matplotlib.image import AxesImage
    from matplotlib.patches import FancyArrowPatch

    return {"vector": FancyArrowPatch, "point": PathCollection,
            "heatmap": AxesImage}[kind]


class LoadingDisplay:
    """DP loading plot: coefficients of the private directions.

    It is recommended to use :meth:`from_estimator` to create a display. For two
    components ``a`` and ``b``, variable ``j`` sits at ``(v_ja, v_jb)``, the
    coefficients of the private directions (``components_[a, j]``,
    ``components_[b, j]``): an arrow from the origin (``kind="vector"``) or a point
    (``kind="point"``). ``kind="heatmap"`` shows the signed coefficients of several
    components at once. The signs of a direction are arbitrary (``v`` and ``-v``
    are the same axis).

    Parameters
    ----------
    components : array-like of shape (n_components, n_features)
        Private directions, one per row (``components_``).
    feature_names : list of str, default=None
        Variable names; default ``"x0", "x1", ...``.
    explained_variance_ratio : array-like of shape (n_components,), default=None
        Private PVE, used in the axis labels when given.
    nonprivate_components : array-like of shape (n_components, n_features), \
            default=None
        Ordinary PCA directions sign-aligned to the private ones (NOT private),
        drawn as a grey reference.
    components_noise_scale : array-like of shape (n_components, n_features), \
            default=None
        Noise sd of each loading (``components_noise_scale_``). A variable whose
        loading's size (``hypot`` of the two shown coordinates; in the heatmap,
        per cell) is within two noise sds of zero is drawn as uncertain: a faded,
        dashed arrow (a hollow point) with its +-2 sd interval, a hatched cell
        reading "noise". None draws every loading plainly.

    Attributes
    ----------
    arrows_ : list of matplotlib Annotation
        ``kind="vector"``: one arrow per variable; ``arrows_[i].xy`` is its end.
    scatter_ : matplotlib PathCollection or None
        ``kind="point"``: the points.
    texts_ : list of matplotlib Text
        Variable labels, one per variable drawn. ``kind`` "vector" and "point":
        when more than :data:`_CROWD` loadings are within their noise, their
        within two noise sds of 0 on both axes, their labels are hidden (their
        positions are noise, and a pile of their names would read as
        structure) and :attr:`unlabelled_note_` says so.
    unlabelled_note_ : matplotlib Text or None
        The note of the hidden labels ("28 of 30 loadings within their noise on
        both axes: not labelled"), or None.
    image_ : matplotlib AxesImage or None
        ``kind="heatmap"``: the signed loadings, rows are variables.
    colorbar_ : matplotlib Colorbar or None
        ``kind="heatmap"``: its colour bar.
    cell_texts_ : list of matplotlib Text
        ``kind="heatmap"``: values written in the cells (small heatmaps without
        a reference).
    nonprivate_arrows_ : list of matplotlib Annotation
        Reference arrows (``kind="vector"``).
    nonprivate_scatter_ : matplotlib PathCollection or None
        Reference markers (``kind="point"``: hollow circles).
    nonprivate_cells_ : matplotlib PatchCollection or None
        ``kind="heatmap"``: inner rectangles in every cell, coloured by the
        reference loading on the same colour scale.
    variables_ : list of str
        Names of the variables drawn, in drawing order.
    uncertain_ : ndarray of bool
        ``kind`` "vector" and "point": per variable drawn, whether its loading is
        lost in its noise (drawn in the uncertain style); ``kind="heatmap"``: per
        cell (variables x components).
    uncertain_errorbars_ : matplotlib ErrorbarContainer or None
        The +-2 noise sd intervals of the uncertain loadings (dashed crosses).
    uncertain_cells_ : list of matplotlib Rectangle
        ``kind="heatmap"``: the hatches over the uncertain cells.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    VariableDisplay : The correlation circle of the variables.
    BiplotDisplay : Scores and variables in one picture.
    sklearn_dppca.DPKendallDirections : The private directions it draws.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt
    >>> from sklearn_dppca.display import LoadingDisplay
    >>> V = np.linalg.qr(np.random.default_rng(0).normal(size=(5, 3)))[0].T
    >>> disp = LoadingDisplay(V, feature_names=list("abcde")).plot(kind="point")
    >>> plt.close("all")
    """

    def __init__(
        self,
        components,
        *,
        feature_names=None,
        explained_variance_ratio=None,
        nonprivate_components=None,
        components_noise_scale=None,
    ):
        self.components = components
        self.feature_names = feature_names
        self.explained_variance_ratio = explained_variance_ratio
        self.nonprivate_components = nonprivate_components
        self.components_noise_scale = components_noise_scale

    def plot(
        self,
        ax=None,
        *,
        kind="vector",
        axes=(0, 1),
        variables=None,
        components=None,
        show_nonprivate=True,
        arrow_kw=None,
        text_kw=None,
        cmap="RdBu_r",
        **kwargs,
    ):
        """Draw the loading plot.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        kind : {"vector", "point", "heatmap"}, default="vector"
            Arrows from the origin, points, or a heatmap of signed loadings.
        axes : tuple of 2 int, default=(0, 1)
            0-based indices of the two components (``kind`` "vector" and "point").
        variables : None, "all", or list of str or int, default=None
            Variables to draw, by name or 0-based index. None draws all of them
            when there are at most 30, else the 30 with the largest loadings on
            the shown components.
        components : list of int, default=None
            ``kind="heatmap"``: 0-based indices of the components shown; default
            the first ``min(n_components, 10)``.
        show_nonprivate : bool, default=True
            Draw the non-private reference when the display has one.
        arrow_kw : dict, default=None
            ``kind="vector"``: arrow properties (``arrowprops`` of
            :meth:`matplotlib.axes.Axes.annotate`); ``kind="point"``: passed to
            :meth:`~matplotlib.axes.Axes.scatter`; ``kind="heatmap"``: passed to
            :meth:`~matplotlib.axes.Axes.imshow`.
        text_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.text` for the variable labels.
        cmap : str or Colormap, default="RdBu_r"
            Diverging colour map of the heatmap, centred at 0.
        **kwargs : dict
            Added to ``arrow_kw``.

        Returns
        -------
        display : LoadingDisplay
            The display itself, with the drawn artists stored as attributes.
        """
        kind = check_choice(kind, _KINDS, "kind")
        show_nonprivate = check_bool(show_nonprivate, "show_nonprivate")
        artist = _artist_of(kind)
        arrow_kw = merge_style(check_style(arrow_kw, "arrow_kw"), kwargs, artist)
        text_kw = check_style(text_kw, "text_kw")
        cmap = check_colormap(cmap)
        V = as_components(self.components)
        k, p = V.shape
        names = check_feature_names(self.feature_names, p)
        ratio = as_ratio(self.explained_variance_ratio, k)
        noise = as_components_noise(self.components_noise_scale, V)
        V_ref = None
        if self.nonprivate_components is not None and show_nonprivate:
            V_ref = as_reference_components(self.nonprivate_components, V)

        if kind == "heatmap":
            comps = check_component_indices(components, k)
            weights = np.sqrt(np.sum(V[comps] ** 2, axis=0))
        else:
            if components is not None:
                raise ValueError(
                    "components selects the heatmap's components; for kind="
                    f"{kind!r} use axes."
                )
            a, b = check_axes(axes, k)
            weights = np.hypot(V[a], V[b])
        idx = select_variables(variables, names, weights)

        ax, fig = new_axes(ax)
        self.arrows_ = []
        self.scatter_ = None
        self.texts_ = []
        self.unlabelled_note_ = None
        self.image_ = None
        self.colorbar_ = None
        self.cell_texts_ = []
        self.nonprivate_arrows_ = []
        self.nonprivate_scatter_ = None
        self.nonprivate_cells_ = None
        self.variables_ = [names[j] for j in idx]
        self.uncertain_errorbars_ = None
        self.uncertain_cells_ = []
        self.ax_ = ax
        self.figure_ = fig

        if kind == "heatmap":
            self._plot_heatmap(ax, V, V_ref, idx, comps, ratio, arrow_kw, text_kw, cmap,
                               noise)
            return self

        coords = np.column_stack([V[a, idx], V[b, idx]])
        sds = None if noise is None else np.column_stack([noise[a, idx], noise[b, idx]])
        self.uncertain_ = uncertain_mask(coords, sds)
        ref = None if V_ref is None else np.column_stack([V_ref[a, idx], V_ref[b, idx]])
        limit_points = [coords, np.zeros((1, 2)),
                        uncertain_interval_points(coords, sds, self.uncertain_, 1.0)]
        limit_points += [] if ref is None else [ref]
        set_equal_limits(ax, np.vstack(limit_points), pad=0.08)
        draw_zero_lines(ax)
        ax.set_xlabel(component_label(a, ratio))
        ax.set_ylabel(component_label(b, ratio))
        ax.set_title("DP loadings (private directions)")
        settle_layout(ax)
        fontsize = label_fontsize(len(idx))
        handles = []
        if ref is not None:
            if kind == "vector":
                self.nonprivate_arrows_, handle = draw_reference_arrows(ax, ref)
                handles.append(handle)
            else:
                self.nonprivate_scatter_ = ax.scatter(
                    ref[:, 0], ref[:, 1], s=36, label=NONPRIVATE_LABEL, zorder=2,
                    **NONPRIVATE_MARKER_KW,
                )
                handles.append(self.nonprivate_scatter_)

        weak = self.uncertain_
        if kind == "vector":
            kw = merge_style({"color": PRIVATE_COLOR}, arrow_kw, artist)
            self.arrows_ = draw_arrows(ax, coords, arrow_kw=kw)
            fade_uncertain_arrows(self.arrows_, weak)
            color = legend_color(kw, PRIVATE_COLOR)
            handles.insert(0, legend_line(kw, PRIVATE_COLOR, "private loadings"))
        else:
            kw = merge_style({"color": PRIVATE_COLOR, "s": 30, "label": "private loadings",
                              "zorder": 3}, arrow_kw, artist)
            self.scatter_ = ax.scatter(coords[:, 0], coords[:, 1], **kw)
            color = legend_color(kw, PRIVATE_COLOR)
            if weak.any():
                # uncertain points: hollow
                faces = np.array(self.scatter_.get_facecolors())
                if len(faces) == 1:
                    faces = np.repeat(faces, len(coords), axis=0)
                edges = faces.copy()
                faces[weak] = (1.0, 1.0, 1.0, 0.0)
                self.scatter_.set_facecolors(faces)
                self.scatter_.set_edgecolors(edges)
            handles.insert(0, self.scatter_)
        if weak.any():
            self.uncertain_errorbars_ = draw_uncertain(ax, coords, sds, weak, color,
                                                       bound=1.0)
            handles.insert(1, uncertain_handle(color))

        self.texts_ = draw_labels(ax, coords, self.variables_, fontsize=fontsize,
                                  text_kw=text_kw)
        for text, unsure in zip(self.texts_, weak):
            if unsure:
                text.set_alpha(0.6)
        lost = _lost_on_both_axes(coords, sds)
        if lost.sum() > _CROWD:
            self.unlabelled_note_ = _hide_crowd(ax, self.texts_, lost, fontsize)
        if ref is not None or weak.any():
            add_legend(ax, handles, where="below")
        return self

    def _plot_heatmap(self, ax, V, V_ref, idx, comps, ratio, image_kw, text_kw, cmap,
                      noise=None):
        M = V[np.ix_(comps, idx)].T  # rows: variables, columns: components
        M_ref = None if V_ref is None else V_ref[np.ix_(comps, idx)].T
        # a cell within two noise sds of zero (NaN sd: unknown, uncertain too)
        with np.errstate(invalid="ignore"):
            self.uncertain_ = (np.zeros(M.shape, dtype=bool) if noise is None
                               else ~above_noise(np.abs(M),
                                                 noise[np.ix_(comps, idx)].T))
        vmax = float(np.max(np.abs(M)))
        if M_ref is not None:
            vmax = max(vmax, float(np.max(np.abs(M_ref))))
        if vmax <= 0:
            vmax = 1.0
        from matplotlib.image import AxesImage
        from matplotlib.text import Text

        kw = merge_style({"cmap": cmap, "vmin": -vmax, "vmax": vmax, "aspect": "auto",
                          "interpolation": "nearest"}, image_kw, AxesImage)
        self.image_ = ax.imshow(M, **kw)
        self.colorbar_ = ax.figure.colorbar(self.image_, ax=ax, fraction=0.05, pad=0.03)
        self.colorbar_.set_label("private loading")
        n_vars, n_comp = M.shape
        fontsize = label_fontsize(n_vars)
        ax.set_yticks(np.arange(n_vars))
        tkw = merge_style({"fontsize": fontsize}, text_kw, Text)
        self.texts_ = ax.set_yticklabels([plain_text(v) for v in self.variables_], **tkw)
        ax.set_xticks(np.arange(n_comp))
        ax.set_xticklabels([component_label(c, ratio).replace(" (", "\n(") for c in comps],
                           fontsize=label_fontsize(n_comp, base=8.5))
        ax.tick_params(length=0)
        if M_ref is not None:
            import matplotlib
            from matplotlib.collections import PatchCollection
            from matplotlib.lines import Line2D
            from matplotlib.patches import Rectangle

            cm = matplotlib.colormaps[cmap] if isinstance(cmap, str) else cmap
            inner = [Rectangle((col - 0.22, row - 0.27), 0.44, 0.54)
                     for row in range(n_vars) for col in range(n_comp)]
            self.nonprivate_cells_ = PatchCollection(
                inner, cmap=cm, edgecolors=NONPRIVATE_COLOR, linewidths=0.8, zorder=2,
            )
            self.nonprivate_cells_.set_array(M_ref.ravel())
            self.nonprivate_cells_.set_clim(-vmax, vmax)
            ax.add_collection(self.nonprivate_cells_)
            ax.set_xlim(-0.5, n_comp - 0.5)
            ax.set_ylim(n_vars - 0.5, -0.5)
            proxy = Line2D([], [], marker="s", linestyle="", markerfacecolor="white",
                           markeredgecolor=NONPRIVATE_COLOR, markersize=8,
                           label=f"{NONPRIVATE_LABEL} (inner boxes, same colour scale)")
            add_legend(ax, [proxy], where="below", offset=34 if ratio is not None else 22,
                       frameon=False)
        elif n_vars * n_comp <= 150:
            for (row, col), value in np.ndenumerate(M):
                unsure = self.uncertain_[row, col]
                self.cell_texts_.append(
                    # no number that is only noise
                    ax.text(col, row, "noise" if unsure else f"{value:.2f}",
                            ha="center", va="center", fontsize=min(fontsize, 7.5),
                            color="white" if abs(value) > 0.6 * vmax and not unsure
                            else "black")
                )
        if self.uncertain_.any():
            from matplotlib.patches import Patch, Rectangle

            for row, col in zip(*np.nonzero(self.uncertain_)):
                cell = Rectangle((col - 0.5, row - 0.5), 1.0, 1.0, facecolor="white",
                                 alpha=0.55, hatch="///", edgecolor="0.55",
                                 linewidth=0, zorder=3)
                ax.add_patch(cell)
                self.uncertain_cells_.append(cell)
            ax.set_xlim(-0.5, n_comp - 0.5)
            ax.set_ylim(n_vars - 0.5, -0.5)
            if M_ref is None:
                add_legend(ax, [Patch(facecolor="white", hatch="///", edgecolor="0.55",
                                      label="within noise (|loading| within 2 noise sd)")],
                           where="below", offset=34 if ratio is not None else 22,
                           frameon=False)
        ax.set_title("DP loadings heatmap (private directions)")

    @classmethod
    def from_estimator(
        cls,
        estimator,
        *,
        ax=None,
        kind="vector",
        axes=None,
        variables=None,
        components=None,
        show_nonprivate=True,
        arrow_kw=None,
        text_kw=None,
        cmap="RdBu_r",
        **kwargs,
    ):
        """Draw the DP loading plot of a fitted estimator.

        Works with :class:`~sklearn_dppca.DPKendallDirections`,
        :class:`~sklearn_dppca.DPScree` and :class:`~sklearn_dppca.DPPCA`; reads
        ``components_``, the noise sd of each loading
        (``components_noise_scale_``, when there is one: loadings lost in their
        noise are drawn as uncertain), the private PVE (when there is one) and
        the non-private reference (when stored).

        Parameters
        ----------
        estimator : DPKendallDirections, DPScree or DPPCA
            Fitted estimator.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        kind : {"vector", "point", "heatmap"}, default="vector"
            Arrows from the origin, points, or a heatmap of signed loadings.
        axes : tuple of 2 int, default=None
            0-based component indices; default the estimator's ``axes_`` when it
            has them, else ``(0, 1)``.
        variables : None, "all", or list of str or int, default=None
            Variables to draw (see :meth:`plot`).
        components : list of int, default=None
            ``kind="heatmap"``: 0-based indices of the components shown (see
            :meth:`plot`).
        show_nonprivate : bool, default=True
            Draw the non-private reference when the estimator stored one.
        arrow_kw : dict, default=None
            Properties of the arrows, points or heatmap (see :meth:`plot`).
        text_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.text` for the variable labels.
        cmap : str or Colormap, default="RdBu_r"
            Diverging colour map of the heatmap, centred at 0.
        **kwargs : dict
            Added to ``arrow_kw``.

        Returns
        -------
        display : LoadingDisplay
            The display, drawn.
        """
        check_estimator_for(estimator, "LoadingDisplay")
        if axes is None:
            axes = default_axes(estimator)
        display = cls(
            estimator.components_,
            feature_names=estimator_feature_names(estimator),
            explained_variance_ratio=getattr(estimator, "explained_variance_ratio_", None),
            nonprivate_components=nonprivate_get(
                nonprivate_reference(estimator), "components"
            ),
            components_noise_scale=getattr(estimator, "components_noise_scale_", None),
        )
        return display.plot(
            ax=ax,
            kind=kind,
            axes=axes,
            variables=variables,
            components=components,
            show_nonprivate=show_nonprivate,
            arrow_kw=arrow_kw,
            text_kw=text_kw,
            cmap=cmap,
            **kwargs,
        )
