"""DP variable plot (correlation circle) from private directions and variances."""

import numpy as np

from .._validation import check_bool
from ._check import (
    as_components,
    as_components_noise,
    as_ratio,
    as_reference_components,
    as_vector,
    check_axes,
    check_feature_names,
    check_style,
    select_variables,
)
from ._drawing import (
    add_legend,
    draw_arrows,
    draw_reference_arrows,
    draw_zero_lines,
    legend_line,
    uncertain_mask,
)
from ._estimator_access import (
    check_estimator_for,
    default_axes,
    estimator_feature_names,
    nonprivate_get,
    nonprivate_reference,
)
from ._labels import component_label, draw_labels, label_fontsize
from ._limits import new_axes, set_square_limits, settle_layout
from ._style import PRIVATE_COLOR, merge_style

#: Colour of the variables whose private variance is below its own noise sd: their
#: correlations are unknown, whatever the length of their arrow.
_UNCERTAIN_COLOR = "0.65"
#: Arrows shorter than this carry no label.
_LABEL_RADIUS = 0.05
#: Colour of the variables whose private correlations lie beyond the unit circle.
_BEYOND_COLOR = "C3"


def _correlation_coordinates(components, explained_variance, feature_variance, axes):
    """Correlations of each variable with two private components.

    ``r_jl = sqrt(lambda_l) v_jl / sqrt(sigma2_j)`` with ``lambda_l`` the private
    variance along direction ``v_l`` and ``sigma2_j`` the private variance of
    variable ``j`` (``feature_variance_``). With exact values (eigenvalues and
    eigenvectors of a covariance matrix and its diagonal) this is the correlation
    of variable ``j`` with the scores on component ``l``. With private values it
    is post-processing of released ones, and noise can put it beyond the unit
    circle. Variables with ``sigma2_j == 0`` have no coordinates.

    Parameters
    ----------
    components : array-like of shape (n_components, n_features)
    explained_variance : array-like of shape (n_components,)
    feature_variance : array-like of shape (n_features,)
    axes : tuple of 2 int

    Returns
    -------
    coordinates : ndarray of shape (n_features, 2)
        ``(r_ja, r_jb)``; rows of omitted variables are NaN. An entry may be
        infinite when a variance ratio overflows.
    kept : ndarray of bool of shape (n_features,)
        Variables with a positive private variance.
    """
    V = np.asarray(components, dtype=float)
    lam = np.asarray(explained_variance, dtype=float)
    sigma2 = np.asarray(feature_variance, dtype=float)
    kept = sigma2 > 0
    a, b = axes
    coords = np.full((V.shape[1], 2), np.nan)
    sigma = np.sqrt(sigma2[kept])
    with np.errstate(over="ignore"):
        coords[kept, 0] = (np.sqrt(lam[a]) * V[a, kept]) / sigma
        coords[kept, 1] = (np.sqrt(lam[b]) * V[b, kept]) / sigma
    return coords, kept


def _on_disc(coords):
    """Coordinates to draw: inside the unit disc as they are; beyond it (|r| > 1,
    which only noise can cause), scaled back onto the circle along their direction.

    Returns the drawn coordinates and the mask of those beyond the circle.
    """
    coords = np.asarray(coords, dtype=float).reshape(-1, 2)
    with np.errstate(all="ignore"):
        radius = np.hypot(coords[:, 0], coords[:, 1])
    beyond = ~(radius <= 1.0)
    drawn = coords.copy()
    if np.any(beyond):
        outside = coords[beyond]
        # the direction, also of overflowed (infinite) entries: divide by the
        # largest entry first, or keep the signs of the infinite ones
        infinite = np.isinf(outside)
        largest = np.max(np.where(infinite, 1.0, np.abs(outside)), axis=1, keepdims=True)
        unit = np.where(infinite.any(axis=1, keepdims=True),
                        np.where(infinite, np.sign(outside), 0.0), outside / largest)
        unit /= np.hypot(unit[:, 0], unit[:, 1])[:, None]
        drawn[beyond] = unit
    return drawn, beyond


class VariableDisplay:
    """DP variable plot: the correlation circle from private quantities.

    It is recommended to use :meth:`from_estimator` to create a display. Variable
    ``j`` is drawn at ``(r_ja, r_jb)`` with ``r_jl = sqrt(lambda_l) v_jl /
    sqrt(sigma2_j)``: ``lambda_l`` the private variance along the private
    direction ``v_l`` (``explained_variance_``) and ``sigma2_j`` the private
    variance of variable ``j`` (``feature_variance_``). Without noise these
    are the correlations of each variable with the component scores, and an arrow
    of length 1 means that the two components carry all of the variable's
    variance. Everything is post-processing of released values; noise can push a
    correlation beyond 1: such variables are drawn at the circle, in another
    colour, and the legend says so (they are never rescaled silently). Variables
    with zero private variance are omitted (the title says how many).

    Parameters
    ----------
    components : array-like of shape (n_components, n_features)
        Private directions (``components_``).
    explained_variance : array-like of shape (n_components,)
        Private non-negative variances (``explained_variance_``).
    feature_variance : array-like of shape (n_features,)
        Private non-negative variance of each variable (``feature_variance_``).
    feature_names : list of str, default=None
        Variable names; default ``"x0", "x1", ...``.
    axes : tuple of 2 int, default=(0, 1)
        0-based indices of the two components shown.
    explained_variance_ratio : array-like of shape (n_components,), default=None
        Private PVE for the axis labels.
    nonprivate_components, nonprivate_variance, nonprivate_feature_variance : \
            array-like, default=None
        Ordinary PCA directions, eigenvalues and the sample variance of each
        variable (NOT private): the exact correlation circle, drawn with grey
        dashed arrows (when all three are given).
    feature_variance_noise_scale : array-like of shape (n_features,), default=None
        Noise sd of each ``feature_variance`` (``feature_variance_noise_scale_``):
        a variable whose variance does not exceed it is drawn in light grey as
        unknown (its arrow length says nothing).
    components_noise_scale : array-like of shape (n_components, n_features), \
            default=None
        Noise sd of each loading (``components_noise_scale_``): a variable whose
        loading noise on the two components exceeds the loading's size is drawn
        in light grey as unknown too (its direction says nothing).

    Attributes
    ----------
    not_estimable_ : bool
        Whether the private variance of a shown component is NaN (not
        estimable): then no correlation exists, no arrow is drawn and the
        circle says so.
    not_estimable_text_ : matplotlib Text or None
        That text; also where no variable's private variance is estimable
        (the total variance is not).
    not_estimable_variables_ : list of str
        Variables whose private variance is NaN (not drawn).
    correlations_ : ndarray of shape (n_drawn, 2)
        The private correlations ``(r_ja, r_jb)`` of the drawn variables, as
        computed (possibly beyond the unit circle, or infinite).
    coordinates_ : ndarray of shape (n_drawn, 2)
        Where they are drawn: ``correlations_``, except that variables beyond the
        circle are put on it along their direction.
    beyond_ : ndarray of bool of shape (n_drawn,)
        Variables whose private correlations lie beyond the unit circle.
    uncertain_ : ndarray of bool of shape (n_drawn,)
        Variables whose private variance is below its noise sd (drawn in grey).
    variables_ : list of str
        Their names.
    omitted_ : list of str
        Variables without coordinates (zero private variance).
    arrows_ : list of matplotlib Annotation
        One arrow per drawn variable; ``arrows_[i].xy == coordinates_[i]``.
    texts_ : list of matplotlib Text
    circle_ : matplotlib Circle
        The unit circle.
    nonprivate_coordinates_ : ndarray of shape (n_drawn, 2) or None
    nonprivate_arrows_ : list of matplotlib Annotation
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    LoadingDisplay : The loadings of each variable on each component.
    BiplotDisplay : Scores and variables in one picture.
    sklearn_dppca.DPPCA : The estimator whose release it draws.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt
    >>> from sklearn_dppca.display import VariableDisplay
    >>> V = np.array([[0.8, 0.6, 0.0], [0.0, 0.0, 1.0]])
    >>> disp = VariableDisplay(V, [2.0, 1.0], [1.5, 0.8, 1.2]).plot()
    >>> disp.variables_
    ['x0', 'x1', 'x2']
    >>> plt.close("all")
    """

    def __init__(
        self,
        components,
        explained_variance,
        feature_variance,
        *,
        feature_names=None,
        axes=(0, 1),
        explained_variance_ratio=None,
        nonprivate_components=None,
        nonprivate_variance=None,
        nonprivate_feature_variance=None,
        feature_variance_noise_scale=None,
        components_noise_scale=None,
    ):
        self.components_noise_scale = components_noise_scale
        self.components = components
        self.explained_variance = explained_variance
        self.feature_variance = feature_variance
        self.feature_variance_noise_scale = feature_variance_noise_scale
        self.feature_names = feature_names
        self.axes = axes
        self.explained_variance_ratio = explained_variance_ratio
        self.nonprivate_components = nonprivate_components
        self.nonprivate_variance = nonprivate_variance
        self.nonprivate_feature_variance = nonprivate_feature_variance

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
            The display itself, with the drawn artists stored as attributes.
        """
        from matplotlib.patches import FancyArrowPatch
        from matplotlib.text import Text

        show_nonprivate = check_bool(show_nonprivate, "show_nonprivate")
        arrow_kw = merge_style(check_style(arrow_kw, "arrow_kw"), kwargs, FancyArrowPatch)
        text_kw = merge_style({}, check_style(text_kw, "text_kw"), Text)
        V = as_components(self.components)
        k, p = V.shape
        lam = as_vector(self.explained_variance, "explained_variance", k, nonnegative=True,
                        allow_nan=True)
        sigma2 = as_vector(self.feature_variance, "feature_variance", p, nonnegative=True,
                           allow_nan=True)
        names = check_feature_names(self.feature_names, p)
        a, b = check_axes(self.axes, k)
        # NaN: not estimable; without both variances there is no correlation
        not_estimable = not (np.isfinite(lam[a]) and np.isfinite(lam[b]))
        ratio = as_ratio(self.explained_variance_ratio, k)
        coords, kept = _correlation_coordinates(V, lam, sigma2, (a, b))
        with np.errstate(all="ignore"):
            radius = np.where(kept, np.hypot(coords[:, 0], coords[:, 1]), -1.0)
        selected = select_variables(variables, names, np.nan_to_num(radius, posinf=1e300))
        idx = np.asarray([j for j in selected if kept[j] and not not_estimable],
                         dtype=int)

        ref = None
        if (
            show_nonprivate
            and self.nonprivate_components is not None
            and self.nonprivate_variance is not None
            and self.nonprivate_feature_variance is not None
        ):
            V_ref = as_reference_components(self.nonprivate_components, V)
            lam_ref = as_vector(self.nonprivate_variance, "nonprivate_variance", k,
                                nonnegative=True)
            sigma2_ref = as_vector(self.nonprivate_feature_variance,
                                   "nonprivate_feature_variance", p, nonnegative=True)
            ref_all, _ = _correlation_coordinates(V_ref, lam_ref, sigma2_ref, (a, b))
            # exact correlations lie in the disc up to rounding
            ref = _on_disc(ref_all[idx])[0]
            ref[~np.all(np.isfinite(ref_all[idx]), axis=1)] = np.nan

        ax, fig = new_axes(ax)
        from matplotlib.lines import Line2D
        from matplotlib.patches import Circle

        self.correlations_ = coords[idx]
        self.coordinates_, self.beyond_ = _on_disc(self.correlations_)
        self.uncertain_ = np.zeros(len(idx), dtype=bool)
        if self.feature_variance_noise_scale is not None:
            noise = as_vector(self.feature_variance_noise_scale,
                              "feature_variance_noise_scale", p, nonnegative=True,
                              allow_nan=True)
            self.uncertain_ = ~(noise[idx] < sigma2[idx])    # NaN noise: unknown
        loading_noise = as_components_noise(self.components_noise_scale, V)
        if loading_noise is not None and len(idx):
            # a loading lost in its noise: the direction is unknown too
            self.uncertain_ |= uncertain_mask(
                np.column_stack([V[a, idx], V[b, idx]]),
                np.column_stack([loading_noise[a, idx], loading_noise[b, idx]]))
        self.variables_ = [names[j] for j in idx]
        unknown = np.isnan(sigma2)
        self.omitted_ = [names[j] for j in np.flatnonzero(~kept & ~unknown)]
        self.not_estimable_ = not_estimable
        self.not_estimable_variables_ = [names[j] for j in np.flatnonzero(unknown)]
        self.not_estimable_text_ = None
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
            title += (f"\n{len(self.omitted_)} variable(s) with zero private variance "
                      "omitted")
        none_estimable = not not_estimable and len(self.not_estimable_variables_) == p
        if self.not_estimable_variables_ and not not_estimable:
            # (short: the panel's width; the overview's third column)
            title += (f"\n{len(self.not_estimable_variables_)} omitted (private "
                      "variance not estimable)")
        ax.set_title(title)
        settle_layout(ax)
        self.circle_ = Circle((0.0, 0.0), 1.0, fill=False, edgecolor="0.45",
                              linewidth=1.0, zorder=1)
        ax.add_patch(self.circle_)
        if not_estimable or none_estimable:
            # (every variable's variance unknown: the total is not estimable)
            why = ("private variances of the components" if not_estimable
                   else "private variances of the variables")
            self.not_estimable_text_ = ax.text(
                0.0, 0.0, f"correlations not estimable\n({why}\nnot estimable at "
                "this eps and n)", ha="center", va="center", fontsize="small",
                color="0.25", zorder=6)
        handles = []
        if ref is not None:
            ok = np.all(np.isfinite(ref), axis=1)
            self.nonprivate_arrows_, handle = draw_reference_arrows(ax, ref[ok])
            handles.append(handle)
        kw = merge_style({"color": PRIVATE_COLOR}, arrow_kw, FancyArrowPatch)
        # the marked arrows keep the user's style but not its colours
        beyond_kw = merge_style(kw, {"color": _BEYOND_COLOR}, FancyArrowPatch)
        uncertain_kw = merge_style(kw, {"color": _UNCERTAIN_COLOR}, FancyArrowPatch)
        self.arrows_ = [None] * len(idx)
        marked_beyond = self.beyond_ & ~self.uncertain_   # grey wins: unknown anyway
        plain = ~self.beyond_ & ~self.uncertain_
        for mask, style in ((plain, kw), (marked_beyond, beyond_kw),
                            (self.uncertain_, uncertain_kw)):
            drawn = draw_arrows(ax, self.coordinates_[mask], arrow_kw=style)
            for i, arrow in zip(np.flatnonzero(mask), drawn):
                self.arrows_[i] = arrow
        handles.insert(0, legend_line(kw, PRIVATE_COLOR, "private correlations"))
        n_beyond = int(np.sum(marked_beyond))
        if n_beyond:
            handles.insert(1, Line2D(
                [], [], color=_BEYOND_COLOR,
                label=f"{n_beyond} with |r| > 1 (noise): drawn on the circle"))
        n_uncertain = int(np.sum(self.uncertain_))
        if n_uncertain:
            handles.insert(1, Line2D(
                [], [], color=_UNCERTAIN_COLOR,
                label=f"{n_uncertain} whose private variance or loading is below "
                      "its noise: correlation unknown"))
        # Labels of arrows that barely leave the origin would be pushed far out
        # and spread the axes (and look like structure): they stay empty.
        near_origin = np.hypot(*self.coordinates_.T) < _LABEL_RADIUS if len(idx) else []
        labels = ["" if near else name for name, near in zip(self.variables_, near_origin)]
        self.texts_ = draw_labels(ax, self.coordinates_, labels,
                                  fontsize=label_fontsize(len(idx)), text_kw=text_kw,
                                  center=np.zeros(2))
        if np.any(near_origin):
            ax.set_title(f"{ax.get_title()}\n{int(np.sum(near_origin))} variable(s) "
                         f"within {_LABEL_RADIUS} of the origin unlabelled")
        for text, beyond, uncertain in zip(self.texts_, marked_beyond, self.uncertain_):
            if "color" not in text_kw and (beyond or uncertain):
                text.set_color(_BEYOND_COLOR if beyond else _UNCERTAIN_COLOR)
        if ref is not None or n_beyond or n_uncertain:
            add_legend(ax, handles, where="below", ncol=1)
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
        """Draw the DP variable plot of a fitted estimator.

        The estimator is a fitted :class:`~sklearn_dppca.DPScree`,
        :class:`~sklearn_dppca.DPPCA` or a loaded release. It reads ``components_``, ``explained_variance_``, ``feature_variance_``,
        ``explained_variance_ratio_`` and the non-private reference when stored.

        Parameters
        ----------
        estimator : DPScree or DPPCA
            Fitted estimator.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        axes : tuple of 2 int, default=None
            0-based component indices; default the estimator's ``axes_`` when it
            has them, else ``(0, 1)``.
        variables : None, "all", or list of str or int, default=None
            Variables to draw (see :meth:`plot`).
        show_nonprivate : bool, default=True
            Draw the non-private reference when the estimator stored one.
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
            The display, drawn.
        """
        check_estimator_for(estimator, "VariableDisplay")
        if axes is None:
            axes = default_axes(estimator)
        reference = nonprivate_reference(estimator)
        display = cls(
            estimator.components_,
            estimator.explained_variance_,
            estimator.feature_variance_,
            feature_names=estimator_feature_names(estimator),
            axes=axes,
            explained_variance_ratio=getattr(estimator, "explained_variance_ratio_", None),
            nonprivate_components=nonprivate_get(reference, "components"),
            nonprivate_variance=nonprivate_get(reference, "explained_variance"),
            nonprivate_feature_variance=nonprivate_get(reference, "feature_variance"),
            feature_variance_noise_scale=getattr(estimator, "feature_variance_noise_scale_",
                                                 None),
            components_noise_scale=getattr(estimator, "components_noise_scale_", None),
        )
        return display.plot(
            ax=ax,
            variables=variables,
            show_nonprivate=show_nonprivate,
            arrow_kw=arrow_kw,
            text_kw=text_kw,
            **kwargs,
        )
