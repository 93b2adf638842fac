"""DP variable plot (correlation circle) from private directions and variances."""

import numpy as np

from ._common import (
    NONPRIVATE_COLOR,
    NONPRIVATE_LABEL,
    NONPRIVATE_LINESTYLE,
    PRIVATE_COLOR,
    add_legend,
    as_components,
    as_vector,
    check_axes_pair,
    check_bool,
    check_estimator_for,
    check_feature_names,
    check_kw,
    check_matplotlib_support,
    component_label,
    draw_arrows,
    draw_labels,
    draw_zero_lines,
    estimator_feature_names,
    get_axes,
    label_fontsize,
    nonprivate_get,
    nonprivate_reference,
    select_variables,
    set_square_limits,
    settle_layout,
)


def correlation_coordinates(components, explained_variance, axes):
    """DP correlation-circle coordinates (seed 001, section 3.1).

    ``sigma2_j = sum_l lambda_l v_jl^2`` over the retained components and
    ``r_jl = sqrt(lambda_l) v_jl / sqrt(sigma2_j)``; variables with
    ``sigma2_j == 0`` have no coordinates.

    Returns
    -------
    coordinates : ndarray of shape (n_features, 2)
        ``(r_ja, r_jb)``; rows of omitted variables are NaN.
    kept : ndarray of bool of shape (n_features,)
        Variables with a positive implied variance.
    """
    V = np.asarray(components, dtype=float)
    lam = np.asarray(explained_variance, dtype=float)
    if lam.size and lam.max() > 0:
        # r is invariant to a common scale of lambda: dividing by the largest keeps
        # tiny (subnormal) variances precise, which would put points outside the disc
        lam = lam / lam.max()
    sigma2 = np.sum(lam[:, None] * V**2, axis=0)
    kept = sigma2 > 0
    a, b = axes
    coords = np.full((V.shape[1], 2), np.nan)
    sigma = np.sqrt(sigma2[kept])
    coords[kept, 0] = np.sqrt(lam[a]) * V[a, kept] / sigma
    coords[kept, 1] = np.sqrt(lam[b]) * V[b, kept] / sigma
    return coords, kept


class VariableDisplay:
    """DP variable plot: the correlation circle of the private covariance model.

    It is recommended to use :meth:`from_estimator` to create a display. The
    private directions ``V`` and private variances ``lambda`` of the ``k``
    retained components define ``Sigma_k = V^T diag(lambda) V``; variable ``j``
    is drawn at ``(r_ja, r_jb)`` with ``r_jl = sqrt(lambda_l) v_jl / sigma_j`` and
    ``sigma_j^2 = sum_l lambda_l v_jl^2`` (post-processing of released values).
    The points lie in the unit disc; variables with ``sigma_j = 0`` are omitted.
    They show the correlations implied by the private model, not the sample
    correlations.

    Parameters
    ----------
    components : array-like of shape (n_components, n_features)
        Private directions (``components_``).
    explained_variance : array-like of shape (n_components,)
        Private non-negative variances (``explained_variance_``).
    feature_names : list of str, default=None
        Variable names; default ``"x0", "x1", ...``.
    axes : tuple of 2 int, default=(0, 1)
        0-based indices of the two components shown.
    explained_variance_ratio : array-like of shape (n_components,), default=None
        Private PVE for the axis labels.
    nonprivate_components, nonprivate_variance : array-like, default=None
        Ordinary PCA directions and eigenvalues (NOT private): the reference
        circle, drawn with grey dashed arrows.

    Attributes
    ----------
    coordinates_ : ndarray of shape (n_drawn, 2)
        Coordinates of the drawn variables (all variables with a positive implied
        variance, unless ``variables`` selects fewer).
    variables_ : list of str
        Their names.
    omitted_ : list of str
        Variables without coordinates (zero implied variance).
    arrows_ : list of matplotlib Annotation
        One arrow per drawn variable; ``arrows_[i].xy == coordinates_[i]``.
    texts_ : list of matplotlib Text
    circle_ : matplotlib Circle
        The unit circle.
    nonprivate_coordinates_ : ndarray of shape (n_drawn, 2) or None
    nonprivate_arrows_ : list of matplotlib Annotation
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    """

    def __init__(
        self,
        components,
        explained_variance,
        *,
        feature_names=None,
        axes=(0, 1),
        explained_variance_ratio=None,
        nonprivate_components=None,
        nonprivate_variance=None,
    ):
        self.components = components
        self.explained_variance = explained_variance
        self.feature_names = feature_names
        self.axes = axes
        self.explained_variance_ratio = explained_variance_ratio
        self.nonprivate_components = nonprivate_components
        self.nonprivate_variance = nonprivate_variance

    def plot(
        self,
        ax=None,
        *,
        variables=None,
        show_nonprivate=True,
        arrow_kw=None,
        text_kw=None,
        **kwargs,
    ):
        """Draw the DP correlation circle.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        variables : None, "all", or list of str or int, default=None
            Variables to draw (by name or 0-based index). None draws every
            variable when there are at most 30, else the 30 farthest from the
            origin.
        show_nonprivate : bool, default=True
            Draw the non-private reference when the display has one.
        arrow_kw : dict, default=None
            Arrow properties (``arrowprops`` of
            :meth:`matplotlib.axes.Axes.annotate`).
        text_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.text` for the labels.
        **kwargs : dict
            Added to ``arrow_kw``.

        Returns
        -------
        display : VariableDisplay
        """
        check_matplotlib_support("VariableDisplay.plot")
        show_nonprivate = check_bool(show_nonprivate, "show_nonprivate")
        arrow_kw = check_kw(arrow_kw, "arrow_kw")
        arrow_kw.update(kwargs)
        text_kw = check_kw(text_kw, "text_kw")
        V = as_components(self.components)
        k, p = V.shape
        lam = as_vector(self.explained_variance, "explained_variance", k, nonnegative=True)
        names = check_feature_names(self.feature_names, p)
        a, b = check_axes_pair(self.axes, k)
        ratio = (
            None
            if self.explained_variance_ratio is None
            else as_vector(self.explained_variance_ratio, "explained_variance_ratio", k)
        )
        coords, kept = correlation_coordinates(V, lam, (a, b))
        radius = np.where(kept, np.hypot(coords[:, 0], coords[:, 1]), -1.0)
        selected = select_variables(variables, names, radius)
        idx = np.asarray([j for j in selected if kept[j]], dtype=int)

        ref = None
        if (
            show_nonprivate
            and self.nonprivate_components is not None
            and self.nonprivate_variance is not None
        ):
            V_ref = as_components(self.nonprivate_components, "nonprivate_components")
            if V_ref.shape != V.shape:
                raise ValueError(
                    f"nonprivate_components has shape {V_ref.shape}; components has "
                    f"shape {V.shape}."
                )
            lam_ref = as_vector(self.nonprivate_variance, "nonprivate_variance", k,
                                nonnegative=True)
            ref_all, _ = correlation_coordinates(V_ref, lam_ref, (a, b))
            ref = ref_all[idx]

        ax, fig = get_axes(ax, "VariableDisplay.plot")
        from matplotlib.lines import Line2D
        from matplotlib.patches import Circle

        self.coordinates_ = coords[idx]
        self.variables_ = [names[j] for j in idx]
        self.omitted_ = [names[j] for j in np.flatnonzero(~kept)]
        self.nonprivate_coordinates_ = ref
        self.nonprivate_arrows_ = []
        self.ax_ = ax
        self.figure_ = fig

        set_square_limits(ax, [(-1.0, -1.0), (1.0, 1.0)], center=(0.0, 0.0), pad=0.1)
        draw_zero_lines(ax)
        ax.set_xlabel(component_label(a, ratio))
        ax.set_ylabel(component_label(b, ratio))
        title = "DP variable plot (private correlations)"
        if self.omitted_:
            title += f"\n{len(self.omitted_)} variable(s) with zero implied variance omitted"
        ax.set_title(title)
        settle_layout(ax)
        self.circle_ = Circle((0.0, 0.0), 1.0, fill=False, edgecolor="0.45",
                              linewidth=1.0, zorder=1)
        ax.add_patch(self.circle_)
        handles = []
        if ref is not None:
            ok = np.all(np.isfinite(ref), axis=1)
            self.nonprivate_arrows_ = draw_arrows(
                ax, ref[ok], color=NONPRIVATE_COLOR, linestyle=NONPRIVATE_LINESTYLE,
                linewidth=1.0,
            )
            handles.append(Line2D([], [], color=NONPRIVATE_COLOR,
                                  linestyle=NONPRIVATE_LINESTYLE, label=NONPRIVATE_LABEL))
        kw = {"color": PRIVATE_COLOR}
        kw.update(arrow_kw)
        self.arrows_ = draw_arrows(ax, self.coordinates_, arrow_kw=kw)
        handles.insert(0, Line2D([], [], color=kw.get("color", PRIVATE_COLOR),
                                 label="private correlations"))
        self.texts_ = draw_labels(ax, self.coordinates_, self.variables_,
                                  fontsize=label_fontsize(len(idx)), text_kw=text_kw,
                                  center=np.zeros(2))
        if ref is not None:
            add_legend(ax, handles, where="below")
        return self

    @classmethod
    def from_estimator(
        cls,
        estimator,
        *,
        ax=None,
        axes=None,
        variables=None,
        show_nonprivate=True,
        arrow_kw=None,
        text_kw=None,
        **kwargs,
    ):
        """Draw the DP variable plot of a fitted :class:`~sklearn_dppca.DPScree` or
        :class:`~sklearn_dppca.DPPCA`.

        Reads ``components_``, ``explained_variance_``,
        ``explained_variance_ratio_`` and the non-private reference when stored.

        Parameters
        ----------
        estimator : DPScree or DPPCA
            Fitted estimator.
        ax : matplotlib Axes, default=None
        axes : tuple of 2 int, default=None
            0-based component indices; default the estimator's ``axes_`` when it
            has them, else ``(0, 1)``.
        variables, show_nonprivate, arrow_kw, text_kw, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : VariableDisplay
        """
        check_matplotlib_support("VariableDisplay.from_estimator")
        check_estimator_for(estimator, "VariableDisplay")
        if axes is None:
            fitted = getattr(estimator, "axes_", None)
            axes = (0, 1) if fitted is None else tuple(int(a) for a in fitted)
        reference = nonprivate_reference(estimator)
        display = cls(
            estimator.components_,
            estimator.explained_variance_,
            feature_names=estimator_feature_names(estimator),
            axes=axes,
            explained_variance_ratio=getattr(estimator, "explained_variance_ratio_", None),
            nonprivate_components=nonprivate_get(reference, "components"),
            nonprivate_variance=nonprivate_get(reference, "explained_variance"),
        )
        return display.plot(
            ax=ax,
            variables=variables,
            show_nonprivate=show_nonprivate,
            arrow_kw=arrow_kw,
            text_kw=text_kw,
            **kwargs,
        )
