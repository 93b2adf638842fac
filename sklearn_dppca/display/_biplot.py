"""DP biplot: synthetic score points and private variable arrows."""

import math

import numpy as np

from .._validation import Interval, check_bool, check_count, check_param
from ._check import (
    as_components,
    as_components_noise,
    as_ratio,
    as_vector,
    check_axes,
    check_feature_names,
    check_style,
    select_variables,
)
from ._drawing import (
    add_legend,
    draw_arrows,
    draw_points,
    draw_reference_arrows,
    draw_uncertain,
    draw_zero_lines,
    fade_uncertain_arrows,
    legend_line,
    not_estimable_panel,
    uncertain_handle,
    uncertain_interval_points,
    uncertain_mask,
)
from ._estimator_access import (
    SCORE_NOT_ESTIMABLE,
    check_estimator_for,
    estimator_axes,
    estimator_feature_names,
    frame_get,
    nonprivate_get,
    nonprivate_reference,
    not_estimable_note,
)
from ._labels import component_label, draw_labels, label_fontsize
from ._limits import new_axes, set_equal_limits, settle_layout
from ._style import group_colors, legend_color, merge_style

_ARROW_COLOR = "0.1"
#: Largest coordinate the biplot draws (limits and margins must stay finite).
_MAX_COORDINATE = 1e306
#: The share of the singular-value scaling given to the variables.
ALPHA = Interval("real", 0, 1)


class BiplotRangeError(ValueError):
    """The biplot coordinates of these values are not representable (alpha > 0)."""


def _biplot_coordinates(components, explained_variance, scores, frame_center, n_samples,
                       axes, alpha, center):
    """DP biplot coordinates.

    ``d_l = sqrt((n - 1) lambda_l)``; ``G = (s* - c) / d^alpha``;
    ``H_j = v_j d^alpha``; ``gamma = r_G / r_H`` with ``r_G`` the 0.9 quantile of
    the distances of the ``G_i`` from their mean and ``r_H = max_j ||H_j||``
    (``gamma = 0`` when either is 0). With ``center=True``, ``c`` is the private
    frame centre and the arrows start at 0; with ``center=False``, ``c = 0`` and
    the arrows start at ``(c_a / d_a^alpha, c_b / d_b^alpha)``.

    Returns
    -------
    G : ndarray of shape (n_synthetic, 2)
    arrows : ndarray of shape (n_features, 2)
        ``gamma * H``.
    origin : ndarray of shape (2,)
    gamma : float

    Raises
    ------
    ValueError
        With ``alpha > 0``, when a variance of the shown components is 0; a
        :class:`BiplotRangeError` when ``gamma`` is not finite or a drawn
        coordinate is not a float of magnitude at most 1e306.
    """
    a, b = axes
    lam = np.asarray(explained_variance, dtype=float)[[a, b]]
    if alpha > 0 and np.any(lam == 0):
        raise ValueError(
            f"alpha={alpha:g} divides by the private singular values d_l = "
            "sqrt((n - 1) lambda_l), and a private variance of the shown components "
            f"is 0 (explained_variance[{a}], [{b}] = {lam[0]:g}, {lam[1]:g}); use "
            "alpha=0."
        )
    # sqrt(n - 1) * sqrt(lambda): the product (n - 1) * lambda may overflow
    d_alpha = (np.sqrt(n_samples - 1) * np.sqrt(lam)) ** alpha
    c = np.asarray(frame_center, dtype=float)
    scores = np.asarray(scores, dtype=float)
    V = np.asarray(components, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        G = (scores - (c if center else 0.0)) / d_alpha
        H = V[[a, b]].T * d_alpha
        if len(G):
            r_G = float(np.quantile(np.hypot(*(G - G.mean(axis=0)).T), 0.9))
        else:
            r_G = 0.0
        r_H = float(np.max(np.hypot(H[:, 0], H[:, 1]))) if len(H) else 0.0
        gamma = r_G / r_H if r_G > 0 and r_H > 0 else 0.0
        origin = np.zeros(2) if center else c / d_alpha
        arrows = gamma * H
    drawn = np.concatenate([G.ravel(), arrows.ravel(), origin])
    # (NaN fails the comparison; the margin leaves room for the limits)
    if not (math.isfinite(gamma) and np.all(np.abs(drawn) <= _MAX_COORDINATE)):
        raise BiplotRangeError(
            f"alpha={alpha:g}: the biplot coordinates leave the floating-point range "
            "(the synthetic scores, of size up to "
            f"{float(np.max(np.abs(scores), initial=0.0)):.3g}, are divided by d_l^alpha "
            f"and the directions multiplied by it, with d_l = sqrt((n - 1) lambda_l) and "
            f"explained_variance[{a}], [{b}] = {lam[0]:.3g}, {lam[1]:.3g}); use alpha=0."
        )
    return G, arrows, origin, gamma


def _scaling_note(ax, divisor):
    """Say under the title what the axes are divided by (``"/ d"`` or
    ``"/ d^0.5"``): nothing with alpha 0."""
    if not divisor:
        return None
    power = divisor[len("/ d"):]
    return ax.text(
        0.5, 1.0, f"{divisor}: scores divided by d{power}, d = \u221a((n \u2212 1) "
        "\u00d7 private variance)", transform=ax.transAxes, ha="center",
        va="bottom", fontsize=7.5, color="0.25")


class BiplotDisplay:
    """DP biplot: synthetic observations and private variable arrows.

    It is recommended to use :meth:`from_estimator` to create a display. With
    ``d_l = sqrt((n - 1) lambda_l)`` built from the private variances, the
    synthetic score points ``s*`` (sampled from the private histogram) are drawn at
    ``G = (s* - c) / d^alpha`` and variable ``j`` as an arrow ``gamma * H_j``,
    ``H_j = v_j d^alpha``; ``gamma`` rescales the arrows so that the longest one
    matches the 0.9 quantile of the points' distances from their mean. Everything
    is post-processing of released values.

    Parameters
    ----------
    components : array-like of shape (n_components, n_features)
        Private directions.
    explained_variance : array-like of shape (n_components,)
        Private non-negative variances.
    synthetic_scores : array-like of shape (n_synthetic, 2) or None
        Synthetic score points on the components ``axes``; None when the score
        summary is not estimable (nothing is drawn).
    frame_center : array-like of shape (2,) or None
        Private frame centre; None when the fit found no frame.
    n_samples : int
        Number of rows (public).
    feature_names : list of str, default=None
        Variable names for the arrow labels; default ``"x0", "x1", ...``.
    axes : tuple of 2 int, default=(0, 1)
        0-based indices of the components the synthetic scores are on.
    alpha : float in [0, 1], default=1.0
        Share of the singular-value scaling given to the variables: 0 keeps the
        score scale and draws the raw direction coefficients; 1 divides the
        scores by ``d`` and multiplies the directions by ``d``.
    center : bool, default=True
        Subtract the private frame centre from the points (arrows start at 0);
        with False the arrows start at the centre in the scaled coordinates.
    explained_variance_ratio : array-like, default=None
        Private PVE for the axis labels.
    synthetic_groups : array-like of shape (n_synthetic,), default=None
        Group labels of the synthetic points (coloured, with a legend).
    nonprivate_components, nonprivate_variance, nonprivate_scores : \
            array-like, default=None
        Ordinary PCA (NOT private). When given, the ordinary biplot arrows
        (scaled by their own ``gamma``) are drawn grey and dashed from the same
        origin.

    components_noise_scale : array-like of shape (n_components, n_features), \
            default=None
        Noise sd of each loading (``components_noise_scale_``); an arrow whose
        noise sd (scaled as the arrow) exceeds its length is drawn as uncertain:
        faded and dashed, with its +-2 sd cross. A display whose
        ``synthetic_scores`` or ``frame_center`` is None (the fit found no score
        frame), or whose shown variances are NaN, draws no axes: its panel says
        what is not estimable.

    Attributes
    ----------
    uncertain_ : ndarray of bool
        Per variable drawn, whether its arrow is lost in its noise.
    uncertain_errorbars_ : matplotlib ErrorbarContainer or None
        The +-2 noise sd crosses of the uncertain arrows.
    not_estimable_text_ : matplotlib Text or None
        The panel's text when nothing could be drawn.
    scaling_text_ : matplotlib Text or None
        The line under the title that says what the axes' ``/ d`` means (None
        with ``alpha=0``, whose axes are the scores themselves).
    gamma_ : float
        The arrow scaling factor.
    observation_coordinates_ : ndarray of shape (n_synthetic, 2)
        ``G``, the drawn points.
    variable_coordinates_ : ndarray of shape (n_features, 2)
        ``gamma * H`` for every variable; the arrow of variable ``j`` runs from
        ``arrow_origin_`` to ``arrow_origin_ + variable_coordinates_[j]``.
    arrow_origin_ : ndarray of shape (2,)
    variables_ : list of str
        Variables drawn (``arrows_[i]`` is ``variables_[i]``).
    arrows_ : list of matplotlib Annotation
    texts_ : list of matplotlib Text
    scatter_ : matplotlib PathCollection or list of PathCollection
        The points; one collection per group with ``synthetic_groups``.
    nonprivate_arrows_ : list of matplotlib Annotation
    nonprivate_gamma_ : float or None
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    ScoreDisplay : The private score summary alone.
    VariableDisplay : The correlation circle of the variables.
    sklearn_dppca.DPPCA : The estimator whose release it draws.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt
    >>> from sklearn_dppca.display import BiplotDisplay
    >>> V = np.array([[0.8, 0.6, 0.0], [0.0, 0.0, 1.0]])
    >>> scores = np.random.default_rng(0).normal(size=(200, 2)) * [2.0, 1.0]
    >>> disp = BiplotDisplay(V, [4.0, 1.0], scores, [0.0, 0.0], n_samples=200,
    ...                      feature_names=["a", "b", "c"]).plot()
    >>> disp.variables_
    ['a', 'b', 'c']
    >>> plt.close("all")
    """

    def __init__(
        self,
        components,
        explained_variance,
        synthetic_scores,
        frame_center,
        n_samples,
        *,
        feature_names=None,
        axes=(0, 1),
        alpha=1.0,
        center=True,
        explained_variance_ratio=None,
        synthetic_groups=None,
        nonprivate_components=None,
        nonprivate_variance=None,
        nonprivate_scores=None,
        components_noise_scale=None,
    ):
        self.components = components
        self.explained_variance = explained_variance
        self.synthetic_scores = synthetic_scores
        self.frame_center = frame_center
        self.n_samples = n_samples
        self.feature_names = feature_names
        self.axes = axes
        self.alpha = alpha
        self.center = center
        self.explained_variance_ratio = explained_variance_ratio
        self.synthetic_groups = synthetic_groups
        self.nonprivate_components = nonprivate_components
        self.nonprivate_variance = nonprivate_variance
        self.nonprivate_scores = nonprivate_scores
        self.components_noise_scale = components_noise_scale

    def plot(
        self,
        ax=None,
        *,
        variables=None,
        show_nonprivate=True,
        colors=None,
        arrow_kw=None,
        text_kw=None,
        scatter_kw=None,
        **kwargs,
    ):
        """Draw the DP biplot.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        variables : None, "all", or list of str or int, default=None
            Arrows to draw; None draws all variables when there are at most 30,
            else the 30 longest arrows.
        show_nonprivate : bool, default=True
            Draw the non-private reference arrows when the display has them.
        colors : list or dict, default=None
            The groups' colours when the display has ``synthetic_groups``: a
            list in the order the groups first appear there, or a dict label ->
            colour. None takes the colour-blind safe palette of Okabe & Ito
            (2008) for up to 8 groups.
        arrow_kw : dict, default=None
            Arrow properties (``arrowprops`` of
            :meth:`matplotlib.axes.Axes.annotate`).
        text_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.text` for the variable labels.
        scatter_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.scatter` for the points.
        **kwargs : dict
            Added to ``arrow_kw``.

        Returns
        -------
        display : BiplotDisplay
            The display itself, with the drawn artists stored as attributes.
        """
        from matplotlib.patches import FancyArrowPatch

        show_nonprivate = check_bool(show_nonprivate, "show_nonprivate")
        arrow_kw = merge_style(check_style(arrow_kw, "arrow_kw"), kwargs, FancyArrowPatch)
        text_kw = check_style(text_kw, "text_kw")
        scatter_kw = check_style(scatter_kw, "scatter_kw")
        alpha = check_param(self.alpha, [ALPHA], "alpha")
        center = check_bool(self.center, "center")
        V = as_components(self.components)
        k, p = V.shape
        lam = as_vector(self.explained_variance, "explained_variance", k, nonnegative=True,
                        allow_nan=True)
        a, b = check_axes(self.axes, k)
        if self.synthetic_scores is None or self.frame_center is None:
            return self._plot_not_estimable(ax, getattr(
                self, "_not_estimable_note", None) or (
                f"{SCORE_NOT_ESTIMABLE}: the private frame of the scores was not "
                "found, so nothing is drawn."))
        if not np.all(np.isfinite(lam[[a, b]])):
            return self._plot_not_estimable(
                ax, "biplot not estimable: the private variances of the shown "
                "components are not estimable at this eps and n, so nothing is drawn.")
        names = check_feature_names(self.feature_names, p)
        S = np.asarray(self.synthetic_scores, dtype=float)
        if S.ndim != 2 or S.shape[1] != 2 or not np.all(np.isfinite(S)):
            raise ValueError(
                "synthetic_scores must be a finite array of shape (n_synthetic, 2), "
                f"got shape {S.shape}."
            )
        c = as_vector(self.frame_center, "frame_center", 2)
        n = check_count(self.n_samples, "n_samples", 2)
        ratio = as_ratio(self.explained_variance_ratio, k)
        groups = None
        if self.synthetic_groups is not None:
            groups = np.asarray(self.synthetic_groups, dtype=object)
            if groups.shape != (S.shape[0],):
                raise ValueError(
                    "synthetic_groups must have one label per synthetic score point."
                )

        G, arrows, origin, gamma = _biplot_coordinates(
            V, lam, S, c, int(n), (a, b), alpha, center
        )
        idx = select_variables(variables, names, np.hypot(arrows[:, 0], arrows[:, 1]))
        labels = None if groups is None else list(dict.fromkeys(groups.tolist()))
        colors = None if labels is None else group_colors(labels, colors)

        ref_arrows = None
        self.nonprivate_gamma_ = None
        if (
            show_nonprivate
            and self.nonprivate_components is not None
            and self.nonprivate_variance is not None
            and self.nonprivate_scores is not None
        ):
            V_ref = as_components(self.nonprivate_components, "nonprivate_components")
            lam_ref = as_vector(self.nonprivate_variance, "nonprivate_variance",
                                nonnegative=True)
            S_ref = np.asarray(self.nonprivate_scores, dtype=float)
            if (
                V_ref.shape == V.shape
                and lam_ref.shape == lam.shape
                and S_ref.ndim == 2
                and S_ref.shape[1] > max(a, b)
                and not (alpha > 0 and np.any(lam_ref[[a, b]] == 0))
            ):
                try:
                    _, ref_all, _, gamma_ref = _biplot_coordinates(
                        V_ref, lam_ref, S_ref[:, [a, b]], np.zeros(2), int(n), (a, b),
                        alpha, True,
                    )
                except BiplotRangeError:   # no reference rather than no biplot
                    ref_all = None
                if ref_all is not None:
                    ref_arrows = origin + ref_all[idx]
                    self.nonprivate_gamma_ = gamma_ref

        ax, fig = new_axes(ax)
        self.not_estimable_text_ = None
        self.gamma_ = gamma
        self.observation_coordinates_ = G
        self.variable_coordinates_ = arrows
        self.arrow_origin_ = origin
        self.variables_ = [names[j] for j in idx]
        self.nonprivate_arrows_ = []
        self.ax_ = ax
        self.figure_ = fig

        ends = origin + arrows[idx]
        sds = None
        noise = as_components_noise(self.components_noise_scale, V)
        if noise is not None:
            # the arrows are the directions scaled per axis (V unit rows)
            scale = np.array([np.linalg.norm(arrows[:, 0]), np.linalg.norm(arrows[:, 1])])
            sds = np.column_stack([noise[a, idx], noise[b, idx]])
            if np.all(np.isfinite(scale) & (scale > 0)):
                sds = sds * scale
                self.uncertain_ = uncertain_mask(arrows[idx], sds)
            else:      # (arrows of length 0: judge the directions themselves)
                self.uncertain_ = uncertain_mask(V[[a, b]][:, idx].T, sds)
                sds = None
        else:
            self.uncertain_ = uncertain_mask(arrows[idx], None)
        self.uncertain_errorbars_ = None
        limit_points = [G, ends, origin[None, :],
                        uncertain_interval_points(ends, sds, self.uncertain_)]
        if ref_arrows is not None:
            limit_points.append(ref_arrows)
        set_equal_limits(ax, np.vstack(limit_points), pad=0.04)
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        if (x1 - x0) < 0.75 * (y1 - y0):  # a narrow box: fewer x ticks
            ax.locator_params(axis="x", nbins=4)
        elif (y1 - y0) < 0.75 * (x1 - x0):
            ax.locator_params(axis="y", nbins=4)
        draw_zero_lines(ax, origin)

        suffix = "" if alpha == 0 else (
            " / d" if alpha == 1 else f" / d^{alpha:g}"
        )
        ax.set_xlabel(component_label(a, ratio) + suffix)
        ax.set_ylabel(component_label(b, ratio) + suffix)
        self.scaling_text_ = _scaling_note(ax, suffix.strip())
        ax.set_title(f"DP biplot (synthetic points, alpha={alpha:g})",
                     pad=6.0 if self.scaling_text_ is None else 18.0)
        settle_layout(ax)
        size = float(np.clip(6000.0 / max(len(G), 1), 1.5, 14.0))
        defaults = {"s": size, "alpha": 0.5, "linewidths": 0, "zorder": 1}
        self.scatter_, handles = draw_points(
            ax, G, (0.0, 0.0), defaults, scatter_kw, groups=groups, labels=labels,
            colors=colors)
        if ref_arrows is not None:
            self.nonprivate_arrows_, handle = draw_reference_arrows(ax, ref_arrows, origin)
            handles.append(handle)
        kw = merge_style({"color": _ARROW_COLOR}, arrow_kw, FancyArrowPatch)
        self.arrows_ = draw_arrows(ax, ends, origin=origin, arrow_kw=kw)
        handles.insert(0, legend_line(kw, _ARROW_COLOR, "private variables"))
        if self.uncertain_.any():
            fade_uncertain_arrows(self.arrows_, self.uncertain_)
            color = legend_color(kw, _ARROW_COLOR)
            self.uncertain_errorbars_ = draw_uncertain(ax, ends, sds, self.uncertain_,
                                                       color)   # (None without sds)
            handles.insert(1, uncertain_handle(color))
        self.texts_ = draw_labels(ax, ends, self.variables_, origin=origin,
                                  fontsize=label_fontsize(len(idx)), text_kw=text_kw)
        add_legend(ax, handles, where="below", markerscale=1.5,
                   **({"ncol": 2} if self.uncertain_.any() else {}))
        return self

    def _plot_not_estimable(self, ax, note):
        """An empty panel that says why nothing is drawn."""
        ax, fig = new_axes(ax)
        self.gamma_ = self.nonprivate_gamma_ = None
        self.observation_coordinates_ = self.variable_coordinates_ = None
        self.arrow_origin_ = self.scatter_ = self.uncertain_errorbars_ = None
        self.variables_, self.arrows_, self.texts_, self.nonprivate_arrows_ = [], [], [], []
        self.uncertain_ = np.zeros(0, dtype=bool)
        self.ax_, self.figure_ = ax, fig
        self.scaling_text_ = None
        ax.set_axis_off()
        ax.set_title("DP biplot", color="0.4")
        self.not_estimable_text_ = not_estimable_panel(ax, note)
        return self

    @classmethod
    def from_estimator(
        cls,
        estimator,
        *,
        ax=None,
        alpha=1.0,
        center=True,
        axes=None,
        variables=None,
        show_nonprivate=True,
        colors=None,
        arrow_kw=None,
        text_kw=None,
        scatter_kw=None,
        **kwargs,
    ):
        """Draw the DP biplot of a fitted :class:`~sklearn_dppca.DPPCA`.

        Reads ``components_``, ``explained_variance_``, ``synthetic_scores_``,
        ``synthetic_groups_``, ``frame_``, ``n_samples_``, ``axes_``, the private
        PVE and the non-private reference (when stored).

        Parameters
        ----------
        estimator : DPPCA
            Fitted estimator.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        alpha : float in [0, 1], default=1.0
            Share of the singular-value scaling given to the variables (see the
            class docstring).
        center : bool, default=True
            Subtract the private frame centre from the points (arrows start at 0).
        axes : tuple of 2 int, default=None
            Must be None or the estimator's ``axes_``.
        variables : None, "all", or list of str or int, default=None
            Arrows to draw (see :meth:`plot`).
        show_nonprivate : bool, default=True
            Draw the non-private reference arrows when the estimator stored them.
        colors : list or dict, default=None
            The groups' colours (see :meth:`plot`).
        arrow_kw : dict, default=None
            Arrow properties (``arrowprops`` of
            :meth:`matplotlib.axes.Axes.annotate`).
        text_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.text` for the variable labels.
        scatter_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.scatter` for the points.
        **kwargs : dict
            Added to ``arrow_kw``.

        Returns
        -------
        display : BiplotDisplay
            The display, drawn.
        """
        check_estimator_for(estimator, "BiplotDisplay")
        axes = estimator_axes(estimator, axes, "BiplotDisplay")
        reference = nonprivate_reference(estimator)
        display = cls(
            estimator.components_,
            estimator.explained_variance_,
            estimator.synthetic_scores_,
            None if estimator.frame_ is None else frame_get(estimator.frame_, "center"),
            estimator.n_samples_,
            feature_names=estimator_feature_names(estimator),
            axes=axes,
            alpha=alpha,
            center=center,
            explained_variance_ratio=getattr(estimator, "explained_variance_ratio_", None),
            synthetic_groups=getattr(estimator, "synthetic_groups_", None),
            nonprivate_components=nonprivate_get(reference, "components"),
            nonprivate_variance=nonprivate_get(reference, "explained_variance"),
            nonprivate_scores=nonprivate_get(reference, "scores"),
            components_noise_scale=getattr(estimator, "components_noise_scale_", None),
        )
        if estimator.frame_ is None:
            display._not_estimable_note = not_estimable_note(estimator)
        return display.plot(
            ax=ax,
            variables=variables,
            show_nonprivate=show_nonprivate,
            colors=colors,
            arrow_kw=arrow_kw,
            text_kw=text_kw,
            scatter_kw=scatter_kw,
            **kwargs,
        )
