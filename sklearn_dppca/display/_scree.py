"""DP scree plot: private proportions of variance and private variances."""

import math

import numpy as np

from .._validation import check_bool, check_choice
from ._check import as_floats, as_vector, check_style
from ._drawing import add_legend
from ._estimator_access import (
    check_estimator_for,
    nonprivate_get,
    nonprivate_ratio,
    nonprivate_reference,
)
from ._limits import new_axes
from ._style import NONPRIVATE_COLOR, NONPRIVATE_LABEL, NONPRIVATE_LINESTYLE, merge_style

_KINDS = ("both", "pve", "variance")
#: Error bars span this many noise standard deviations either side.
_SDS = 2
_ERROR_COLOR = "0.15"
_LONGEST_PVE_ERROR = 1e4
_WEAK_LABEL = f"within {_SDS} noise sd of 0 (could be noise alone)"
_ERROR_LABEL = f"\u00b1{_SDS} sd of each private variance (noise and clipping)"
_PVE_ERROR_LABEL = f"\u00b1{_SDS} sd of each private PVE (noise and clipping)"
#: With ``kind="both"`` and the shares' own sds, the PVE's error bars and the
#: variances' sit this far (in components) either side of the component.
_SIDE_BY_SIDE = 0.12

#: Largest PVE axis (in %) kept aligned with the variance axis (see plot).
_MAX_ALIGNED_PVE = 1e6


class ScreeDisplay:
    """DP scree plot: PVE bars and private variances, with their noise.

    It is recommended to use :meth:`from_estimator` to create a display; all
    parameters are stored as attributes. Only released quantities are drawn: the
    private variances along the private directions (``explained_variance_``) and
    the proportions of the private total variance they explain
    (``explained_variance_ratio_ = explained_variance_ / total_variance_``, as
    scikit-learn's PCA: they sum below 100% when fewer components than variables
    are kept). Error bars show +-2 standard deviations: of each raw private
    variance on the variances (``noise_scale_``: its noise and, for a clipped
    one, its clipping allowance), and of each share on the PVE bars
    (``explained_variance_ratio_noise_scale_``, which also holds the total's
    noise; without it, the variance's sd divided by the total variance).

    Parameters
    ----------
    explained_variance : array-like of shape (n_components,)
        Private, non-negative variances.
    explained_variance_ratio : array-like of shape (n_components,)
        Private proportions of the total variance.
    noise_scale : float or array-like of shape (n_components,), default=None
        Standard deviation of the noise of each raw private variance; None draws
        no error bars.
    total_variance : float, default=None
        Private total variance; converts ``noise_scale`` to PVE units. Default
        ``sum(explained_variance) / sum(explained_variance_ratio)``.
    ratio_noise_scale : array-like of shape (n_components,), default=None
        Standard deviation of each private share (of 1, not percent; NaN where
        the share is not estimable), for the PVE bars' error bars; None reads
        them off ``noise_scale`` divided by the total variance, which leaves
        out the total's own noise.
    component_names : list of str, default=None
        Tick labels; default ``"DP PC1", "DP PC2", ...``.
    nonprivate_variance : array-like of shape (n_components,), default=None
        Ordinary PCA eigenvalues (NOT private), drawn as a grey dashed reference.
    nonprivate_ratio : array-like of shape (n_components,), default=None
        Ordinary PCA proportions of the total variance (NOT private).

    Attributes
    ----------
    bars_ : matplotlib BarContainer or None
        The PVE bars (``kind`` "both" or "pve").
    bar_labels_ : list of matplotlib Text
        Percentages written on the bars (at most 12 components).
    bar_errorbars_ : matplotlib ErrorbarContainer or None
        +-2 sd on the PVE bars (with ``ratio_noise_scale`` or ``noise_scale``).
    line_ : matplotlib Line2D or None
        The private variances (``kind`` "both" or "variance").
    line_errorbars_ : matplotlib ErrorbarContainer or None
        +-2 sd on the variances (with ``noise_scale``). With ``kind="both"``
        they are drawn only beside the PVE's own (``ratio_noise_scale``), to
        the right of each bar's centre, the PVE's to its left; without it the
        PVE's error bars, the variance's sd over the total, stand for both.
    not_estimable_ : ndarray of bool of shape (n_components,)
        Components whose variance or PVE is NaN (the fit could not estimate
        it): they get no bar and no point, only the text "... not estimable"
        up the axes.
    not_estimable_texts_ : list of matplotlib Text
        Those texts.
    noise_dominated_ : ndarray of bool of shape (n_components,)
        Components whose private variance is within 2 noise sd of 0: their bars
        are hatched and pale (with ``kind="variance"``, their points hollow), and
        the legend says they could be noise alone.
    noise_dominated_markers_ : matplotlib Line2D or None
        The hollow markers of ``kind="variance"``.
    cumulative_line_ : matplotlib Line2D or None
        The cumulative PVE (``cumulative=True``).
    nonprivate_lines_ : list of matplotlib Line2D
        The non-private reference lines.
    ax_ : matplotlib Axes
        The axes holding the PVE (or the variances for ``kind="variance"``).
    variance_ax_ : matplotlib Axes or None
        The twin axes holding the variances when ``kind="both"``.
    figure_ : matplotlib Figure

    See Also
    --------
    sklearn_dppca.DPScree : Private variances along private directions.
    sklearn_dppca.DPPCA : Integrated private PCA.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_dppca.display import ScreeDisplay
    >>> disp = ScreeDisplay([4.0, 2.0, 1.0], [0.4, 0.2, 0.1], noise_scale=0.3,
    ...                     total_variance=10.0,
    ...                     ratio_noise_scale=[0.04, 0.03, 0.03]).plot()
    >>> disp.bar_errorbars_ is not None
    True
    >>> plt.close("all")
    """

    def __init__(
        self,
        explained_variance,
        explained_variance_ratio,
        *,
        noise_scale=None,
        total_variance=None,
        ratio_noise_scale=None,
        component_names=None,
        nonprivate_variance=None,
        nonprivate_ratio=None,
    ):
        self.explained_variance = explained_variance
        self.explained_variance_ratio = explained_variance_ratio
        self.noise_scale = noise_scale
        self.total_variance = total_variance
        self.ratio_noise_scale = ratio_noise_scale
        self.component_names = component_names
        self.nonprivate_variance = nonprivate_variance
        self.nonprivate_ratio = nonprivate_ratio

    def _validate(self):
        variance = as_vector(self.explained_variance, "explained_variance",
                             allow_nan=True)
        k = variance.shape[0]
        if k == 0:
            raise ValueError("explained_variance must not be empty.")
        ratio = as_vector(self.explained_variance_ratio, "explained_variance_ratio", k,
                          allow_nan=True)
        if self.component_names is None:
            names = [f"DP PC{i + 1}" for i in range(k)]
        else:
            names = [str(c) for c in self.component_names]
            if len(names) != k:
                raise ValueError(
                    f"component_names has {len(names)} names but there are {k} "
                    "components."
                )
        noise = None
        if self.noise_scale is not None:
            noise = as_floats(self.noise_scale, "noise_scale")
            if noise.ndim == 0:
                noise = np.full(k, float(noise))
            noise = as_vector(noise, "noise_scale", k, nonnegative=True,
                              allow_nan=True)
        total = None
        if self.total_variance is not None:
            total = float(as_vector(
                np.atleast_1d(as_floats(self.total_variance, "total_variance")),
                "total_variance", 1, nonnegative=True, allow_nan=True)[0])
            if math.isnan(total):      # not estimable: no PVE units
                total = None
        else:
            # the PVE is variance / total: the total follows from any positive share
            with np.errstate(all="ignore"):
                shares = float(np.sum(ratio))    # NaN when a share is not estimable
                inferred = float(np.sum(variance)) / shares if shares > 0 else np.nan
            if math.isfinite(inferred) and inferred > 0:
                total = inferred
        np_var = (
            None
            if self.nonprivate_variance is None
            else as_vector(self.nonprivate_variance, "nonprivate_variance", k)
        )
        np_ratio = (
            None
            if self.nonprivate_ratio is None
            else as_vector(self.nonprivate_ratio, "nonprivate_ratio", k)
        )
        return variance, ratio, noise, total, names, np_var, np_ratio

    def _pve_errors(self, noise, total, k):
        """+-2 sd of each PVE in points: the shares' own sds
        (``ratio_noise_scale``), else the variances' ``noise`` over the
        ``total``; None where neither is given (capped: beyond 100 points they
        run off the axis anyway, and may overflow)."""
        if self.ratio_noise_scale is not None:
            shares = as_vector(self.ratio_noise_scale, "ratio_noise_scale", k,
                               nonnegative=True, allow_nan=True)
            return np.minimum(100 * _SDS * shares, _LONGEST_PVE_ERROR)
        if noise is None or total is None or not total > 0:
            return None
        with np.errstate(all="ignore"):
            return np.minimum(100 * _SDS * noise / total, _LONGEST_PVE_ERROR)

    def plot(
        self,
        ax=None,
        *,
        kind="pve",
        cumulative=False,
        show_nonprivate=True,
        bar_kw=None,
        line_kw=None,
        **kwargs,
    ):
        """Draw the scree plot.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        kind : {"pve", "variance", "both"}, default="pve"
            ``"pve"``: one bar of private PVE per component, on one y axis (with
            its +-2 noise sd); ``"variance"``: a line of the private variances;
            ``"both"``: the bars with the variances on a second (twin) y axis,
            scaled so that the line runs through the bar tops (one set of error
            bars then serves both axes).
        cumulative : bool, default=False
            Add the cumulative private PVE (needs ``kind`` "both" or "pve").
        show_nonprivate : bool, default=True
            Draw the non-private reference when the display has one.
        bar_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.bar`.
        line_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.plot` for the variance line
            (``kind`` "both" or "variance"; an error with ``kind="pve"``).
        **kwargs : dict
            Added to ``bar_kw`` (``kind`` "both" or "pve") or to ``line_kw``
            (``kind="variance"``).

        Returns
        -------
        display : ScreeDisplay
            The display itself, with the drawn artists stored as attributes.
        """
        from matplotlib.lines import Line2D
        from matplotlib.patches import Rectangle

        kind = check_choice(kind, _KINDS, "kind")
        cumulative = check_bool(cumulative, "cumulative")
        show_nonprivate = check_bool(show_nonprivate, "show_nonprivate")
        if cumulative and kind == "variance":
            raise ValueError(
                "cumulative=True draws the cumulative PVE; it needs kind='both' or "
                "kind='pve', got kind='variance'."
            )
        bar_kw = check_style(bar_kw, "bar_kw")
        line_kw = check_style(line_kw, "line_kw")
        if line_kw and kind == "pve":
            # (the default kind draws no line: the style would be lost silently)
            raise ValueError(
                "line_kw styles the variance line; it needs kind='both' or "
                "kind='variance', got kind='pve'."
            )
        # the keywords style the main artist of the kind
        if kind == "variance":
            line_kw = merge_style(line_kw, kwargs, Line2D)
        else:
            bar_kw = merge_style(bar_kw, kwargs, Rectangle)
        variance, ratio, noise, total, names, np_var, np_ratio = self._validate()
        if not show_nonprivate:
            np_var = np_ratio = None
        # +-2 sd, in variance units and in PVE points
        spread = None if noise is None else _SDS * noise
        pve_spread = self._pve_errors(noise, total, len(variance))
        # the shares' own sds differ from the variances': both are drawn, side
        # by side, where the variance line runs through the bar tops
        apart = (_SIDE_BY_SIDE if kind == "both" and self.ratio_noise_scale is not None
                 and spread is not None else 0.0)

        ax, fig = new_axes(ax)
        x = np.arange(len(variance))
        # NaN: not estimable (the fit could not buy it); never drawn as a value
        var_ok = np.isfinite(variance)
        pve_ok = np.isfinite(ratio)
        with np.errstate(invalid="ignore"):
            self.noise_dominated_ = (np.zeros(len(variance), dtype=bool) if spread is None
                                     else var_ok & (variance <= spread))
        self.not_estimable_ = ~(pve_ok if kind == "pve" else
                                var_ok if kind == "variance" else pve_ok & var_ok)
        self.not_estimable_texts_ = []
        self.noise_dominated_markers_ = None
        self.bars_ = None
        self.bar_labels_ = []
        self.bar_errorbars_ = None
        self.line_ = None
        self.line_errorbars_ = None
        self.cumulative_line_ = None
        self.nonprivate_lines_ = []
        self.variance_ax_ = None
        handles = []

        def reference(axis, values, label):
            (line,) = axis.plot(
                x,
                values,
                linestyle=NONPRIVATE_LINESTYLE,
                marker="o",
                markerfacecolor="none",
                color=NONPRIVATE_COLOR,
                linewidth=1.0,
                label=label,
                zorder=4,
            )
            self.nonprivate_lines_.append(line)
            handles.append(line)

        def error_bars(axis, values, errors, label, offset=0.0, color=_ERROR_COLOR):
            keep = np.isfinite(values) & np.isfinite(errors)
            values, errors = values[keep], errors[keep]
            container = axis.errorbar(x[keep] + offset, values, yerr=errors, fmt="none",
                                      ecolor=color, elinewidth=1.1, capsize=3,
                                      zorder=5, label=label)
            if keep.any():
                handles.append(container)
            return container

        if kind in ("both", "pve"):
            # (a bar's ``color`` is its face: the default says so, so that a
            # user's ``facecolor`` replaces it and adds no edge)
            kw = merge_style({"facecolor": "C0", "alpha": 0.85, "label": "private PVE"},
                             bar_kw, Rectangle)
            # one bar per component whose PVE was estimated (none for the others)
            self.bars_ = ax.bar(x[pve_ok], 100 * ratio[pve_ok], **kw)
            if pve_ok.any():
                handles.append(self.bars_)
            if spread is not None and np.any(self.noise_dominated_[pve_ok]):
                # a bar within 2 noise sd of 0 could be noise alone: hatched
                from matplotlib.patches import Patch

                for patch, weak in zip(self.bars_.patches,
                                       self.noise_dominated_[pve_ok]):
                    if weak:
                        patch.set_hatch("////")
                        patch.set_edgecolor("white")
                        patch.set_alpha(0.45)
                handles.append(Patch(facecolor=patch.get_facecolor(), hatch="////",
                                     edgecolor="white", label=_WEAK_LABEL))
            if pve_spread is not None:
                self.bar_errorbars_ = error_bars(
                    ax, 100 * ratio, pve_spread,
                    _PVE_ERROR_LABEL if self.ratio_noise_scale is not None
                    else _ERROR_LABEL, offset=-apart)
            if len(x) <= 12:
                labels = [f"{100 * r:.1f}%" for r in ratio[pve_ok]]
                if kind == "both":
                    # the variance line and the error bars are at the bar tops:
                    # write at the foot of the bars
                    tops = np.zeros(len(x))
                else:
                    # above the bar, or above its error bar
                    with np.errstate(invalid="ignore"):
                        tops = 100 * ratio + (0 if pve_spread is None else
                                              np.nan_to_num(pve_spread))
                self.bar_labels_ = [
                    ax.annotate(label, (i, top), xytext=(0, 2),
                                textcoords="offset points", ha="center",
                                va="bottom", fontsize="x-small", annotation_clip=True)
                    for i, label, top in zip(x[pve_ok], labels, tops[pve_ok])
                ]
            ax.set_ylabel("PVE (% of the total variance)" if pve_ok.any()
                          else "PVE (not estimable)")
            top = 100 * float(ratio[pve_ok].max()) if pve_ok.any() else 100.0
            if pve_spread is not None and np.any(pve_ok & np.isfinite(pve_spread)):
                # the error bars may run off the top, never the axis beyond 100%
                both = pve_ok & np.isfinite(pve_spread)
                top = max(top, min(float(np.max(100 * ratio[both] + pve_spread[both])),
                                   100.0))
            if cumulative:
                kw = {"color": "C3", "marker": "s", "markersize": 4,
                      "label": "cumulative private PVE"}
                # (NaN from the first share that is not estimable on: not drawn)
                cumulated = 100 * np.cumsum(ratio)
                shown = np.isfinite(cumulated)
                (self.cumulative_line_,) = ax.plot(x[shown], cumulated[shown], **kw)
                if shown.any():
                    handles.append(self.cumulative_line_)
                top = 100.0
            if np_ratio is not None:
                reference(ax, 100 * np_ratio, f"{NONPRIVATE_LABEL} (PVE)")
                top = max(top, 100 * float(np_ratio.max()))
            ax.set_ylim(0, max(top, 1e-12) * 1.15)
            if not pve_ok.any():
                ax.set_yticks([])      # no scale for values that are not there

        if kind in ("both", "variance"):
            vax = ax.twinx() if kind == "both" else ax
            kw = merge_style({"color": "C1", "marker": "o", "label": "private variance"},
                             line_kw, Line2D)
            (self.line_,) = vax.plot(x[var_ok], variance[var_ok], **kw)
            if var_ok.any():
                handles.append(self.line_)
            if kind == "variance" and spread is not None and np.any(self.noise_dominated_):
                # points within 2 noise sd of 0: hollow markers
                self.noise_dominated_markers_ = vax.plot(
                    x[self.noise_dominated_], variance[self.noise_dominated_],
                    linestyle="none", marker="o", markersize=9, markerfacecolor="white",
                    markeredgecolor=self.line_.get_color(), zorder=4,
                    label=_WEAK_LABEL)[0]
                handles.append(self.noise_dominated_markers_)
            if spread is not None and (self.bar_errorbars_ is None or apart):
                # with kind="both" and no sds of their own, the PVE error bars
                # are these, in PVE units
                self.line_errorbars_ = error_bars(
                    vax, variance, spread, _ERROR_LABEL, offset=apart,
                    color=self.line_.get_color() if apart else _ERROR_COLOR)
            vax.set_ylabel("private variance" if var_ok.any()
                           else "private variance (not estimable)")
            if np_var is not None:
                reference(vax, np_var, f"{NONPRIVATE_LABEL} (variance)")
            if kind == "both":
                self.variance_ax_ = vax
                # the variance line passes through the bar tops (a total near the
                # float range's end, from a search that stopped far, would
                # overflow: then the variance axis keeps its own scale)
                top = ax.get_ylim()[1] / 100 * total if total is not None else None
                if top is not None and 0 < top < np.inf:
                    vax.set_ylim(0, top)
                    if np_var is not None and np_var.max() > vax.get_ylim()[1]:
                        top = float(np_var.max()) * 1.1
                        vax.set_ylim(0, top)
                        # (a reference far above the private total would put the
                        # PVE axis near infinity, where matplotlib's tick
                        # locator overflows: past 1e6 % the alignment is given up)
                        if top * 100 / total <= _MAX_ALIGNED_PVE:
                            ax.set_ylim(0, top * 100 / total)
                else:
                    vax.set_ylim(bottom=0)
            else:
                upper = float(variance[var_ok].max()) if var_ok.any() else 0.0
                both = var_ok if spread is None else var_ok & np.isfinite(spread)
                if spread is not None and both.any():
                    reach = float(np.max(variance[both] + spread[both]))
                    if total is not None and total > 0:
                        reach = min(reach, total)  # no variance exceeds the total
                    upper = max(upper, reach)
                if np_var is not None:
                    upper = max(upper, float(np_var.max()))
                ax.set_ylim(0, upper * 1.15 if upper > 0 else 1.0)

        if kind in ("both", "variance") and not var_ok.any():
            (self.variance_ax_ or ax).set_yticks([])
        self.not_estimable_texts_ = _mark_not_estimable(
            ax, x[self.not_estimable_],
            ["PVE not estimable" if kind == "pve" or (kind == "both" and var_ok[j])
             else "variance not estimable" for j in x[self.not_estimable_]])
        if self.not_estimable_.any():
            from matplotlib.patches import Patch

            handles.append(Patch(facecolor="none", edgecolor=_ERROR_COLOR,
                                 linestyle=":", label=_NOT_ESTIMABLE_LABEL))
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=45 if len(x) > 8 else 0,
                           ha="right" if len(x) > 8 else "center")
        ax.set_xlim(-0.6, len(x) - 0.4)
        ax.set_xlabel("private component")
        ax.set_title("DP scree (private variances)")
        add_legend(ax, handles, where="below", offset=62 if len(x) > 8 else 36,
                   fontsize="x-small", ncol=2)
        self.ax_ = ax
        self.figure_ = fig
        return self

    @classmethod
    def from_estimator(
        cls,
        estimator,
        *,
        ax=None,
        kind="pve",
        cumulative=False,
        show_nonprivate=True,
        bar_kw=None,
        line_kw=None,
        **kwargs,
    ):
        """Draw the DP scree plot of a fitted estimator.

        The estimator is a fitted :class:`~sklearn_dppca.DPScree`,
        :class:`~sklearn_dppca.DPPCA` or a loaded release. It reads
        ``explained_variance_``, ``explained_variance_ratio_``,
        ``noise_scale_`` and ``total_variance_`` (private) and, when stored, the
        non-private reference in ``nonprivate_``.

        Parameters
        ----------
        estimator : DPScree or DPPCA
            Fitted estimator.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        kind : {"pve", "variance", "both"}, default="pve"
            Bars of the private PVE (one y axis), a line of the private
            variances, or both on two y axes (see :meth:`plot`).
        cumulative : bool, default=False
            Add the cumulative private PVE (needs ``kind`` "both" or "pve").
        show_nonprivate : bool, default=True
            Draw the non-private reference when the estimator stored one.
        bar_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.bar`.
        line_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.plot` for the variance line
            (``kind`` "both" or "variance"; an error with ``kind="pve"``).
        **kwargs : dict
            Added to ``bar_kw`` or ``line_kw`` (see :meth:`plot`).

        Returns
        -------
        display : ScreeDisplay
            The display, drawn.

        Raises
        ------
        TypeError
            When the estimator releases no variances (e.g.
            :class:`~sklearn_dppca.DPKendallDirections`).
        """
        check_estimator_for(estimator, "ScreeDisplay")
        reference = nonprivate_reference(estimator)
        display = cls(
            estimator.explained_variance_,
            estimator.explained_variance_ratio_,
            noise_scale=getattr(estimator, "noise_scale_", None),
            total_variance=getattr(estimator, "total_variance_", None),
            ratio_noise_scale=getattr(estimator, "explained_variance_ratio_noise_scale_",
                                      None),
            nonprivate_variance=nonprivate_get(reference, "explained_variance"),
            nonprivate_ratio=nonprivate_ratio(reference),
        )
        return display.plot(
            ax=ax,
            kind=kind,
            cumulative=cumulative,
            show_nonprivate=show_nonprivate,
            bar_kw=bar_kw,
            line_kw=line_kw,
            **kwargs,
        )

    @classmethod
    def from_estimators(cls, estimators, *, labels=None, ax=None, kind="variance",
                        colors=None, **kwargs):
        """Overlay the scree plots of several fits on one axes.

        Each fit (a fitted :class:`~sklearn_dppca.DPScree`,
        :class:`~sklearn_dppca.DPPCA` or a loaded release) keeps the display it
        would have alone, drawn side by side with the others: the fits sit at
        small offsets around each component, so no marker, bar or error bar
        hides another. Every fit has its own colour, its +-2 noise-sd error
        bars (in its colour) and a legend entry with its label and the eps it
        spent (``privacy_spent_``). Fits charged to one
        :class:`~sklearn_dppca.privacy.PrivacyAccountant` compose: the legend
        then shows how the total was shared.

        scikit-learn has no display of several estimators on one axes; a list
        of displays, one per fit, keeps each fit's artists where
        :meth:`from_estimator` puts them (``line_``, ``bars_``, ...), and the
        shared ``ax_`` and ``figure_`` are those of every display.

        Parameters
        ----------
        estimators : list of fitted estimators
            The fits to compare, at least one.
        labels : list of str, default=None
            One distinct label per fit; default the fit's ``method`` (or its
            class name), numbered when two fits share one.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        kind : {"variance", "pve"}, default="variance"
            Offset markers of the private variances joined by a line, or
            side-by-side bars of the private PVE (each fit's share of its own
            private total variance).
        colors : list or dict, default=None
            One colour per fit (a list in the order of ``estimators`` or a
            dict label -> colour); default the colour-blind-safe Okabe-Ito
            palette.
        **kwargs : dict
            Style of every fit's line (``kind="variance"``) or bars
            (``kind="pve"``), matplotlib's aliases honoured (``lw``,
            ``ls``, ...).

        Returns
        -------
        displays : list of ScreeDisplay
            One drawn display per fit, in the order of ``estimators``.

        Raises
        ------
        TypeError
            When a fit releases no variances.
        ValueError
            When ``estimators`` is empty or ``labels`` do not match it.

        Examples
        --------
        >>> import matplotlib.pyplot as plt
        >>> import numpy as np
        >>> from sklearn_dppca import DPScree
        >>> from sklearn_dppca.display import ScreeDisplay
        >>> from sklearn_dppca.privacy import PrivacyAccountant
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(2000, 3)) * [3.0, 2.0, 1.5]
        >>> accountant = PrivacyAccountant(eps=2.0, delta=1e-5)
        >>> fits = [DPScree(eps=1.0, scree_method=m, accountant=accountant,
        ...                 random_state=0).fit(X) for m in ("clipped", "kendall")]
        >>> displays = ScreeDisplay.from_estimators(fits)
        >>> [len(d.line_.get_xdata()) for d in displays]
        [3, 3]
        >>> plt.close("all")
        """
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch, Rectangle

        from ._style import group_colors

        kind = check_choice(kind, _OVERLAY_KINDS, "kind")
        estimators = list(estimators)
        if not estimators:
            raise ValueError("estimators must hold at least one fitted estimator.")
        for estimator in estimators:
            check_estimator_for(estimator, "ScreeDisplay")
        labels = _overlay_labels(estimators, labels)
        palette = group_colors(labels, colors)
        style = merge_style({}, kwargs, Line2D if kind == "variance" else Rectangle)
        ax, fig = new_axes(ax)
        width = 0.8 / len(estimators)
        displays, handles, reach = [], [], 0.0
        for i, (estimator, label) in enumerate(zip(estimators, labels)):
            display = cls(estimator.explained_variance_,
                          estimator.explained_variance_ratio_,
                          noise_scale=getattr(estimator, "noise_scale_", None),
                          total_variance=getattr(estimator, "total_variance_", None),
                          ratio_noise_scale=getattr(
                              estimator, "explained_variance_ratio_noise_scale_", None))
            offset = (i - (len(estimators) - 1) / 2) * width
            legend = _overlay_legend(label, estimator)
            reach = max(reach, display._draw_member(ax, kind, offset, width,
                                                     palette[label], legend, style))
            handles.append(display.line_ if kind == "variance" else display.bars_)
            display.ax_, display.figure_ = ax, fig
            displays.append(display)
        own_shares = kind == "pve" and any(d.ratio_noise_scale is not None
                                           for d in displays)
        if own_shares or any(d.noise_scale is not None for d in displays):
            handles.append(Line2D([], [], color=_ERROR_COLOR, marker="|",
                                  linestyle="none", markersize=10,
                                  label=_PVE_ERROR_LABEL if own_shares else _ERROR_LABEL))
        if any(np.any(d.noise_dominated_) for d in displays):
            weak = (Line2D([], [], color=_ERROR_COLOR, marker="o", linestyle="none",
                           markerfacecolor="white", label=_WEAK_LABEL)
                    if kind == "variance" else
                    Patch(facecolor="0.7", hatch="////", edgecolor="white",
                          label=_WEAK_LABEL))
            handles.append(weak)
        k = max(len(np.ravel(d.explained_variance)) for d in displays)
        ax.set_xticks(np.arange(k))
        ax.set_xticklabels([f"DP PC{j + 1}" for j in range(k)],
                           rotation=45 if k > 8 else 0, ha="right" if k > 8 else "center")
        ax.set_xlim(-0.6, k - 0.4)
        ax.set_xlabel("private component")
        estimated = any(not np.all(d.not_estimable_) for d in displays)
        ax.set_ylabel(("private variance" if kind == "variance"
                       else "PVE (% of the fit's private total variance)")
                      if estimated else ("private variance" if kind == "variance" else "PVE")
                      + " (not estimable)")
        ax.set_ylim(0, reach * 1.15 if reach > 0 else 1.0)
        ax.set_title("DP scree of several fits (private variances)")
        add_legend(ax, handles, where="below", offset=62 if k > 8 else 36,
                   fontsize="x-small", ncol=2)
        return displays

    def _draw_member(self, ax, kind, offset, width, color, label, style):
        """Draw this fit's part of an overlay at ``offset`` from each component;
        return the height the axes must reach (the values and their error bars,
        an error bar capped at the private total)."""
        from matplotlib.lines import Line2D
        from matplotlib.patches import Rectangle

        variance, ratio, noise, total, _, _, _ = self._validate()
        spread = None if noise is None else _SDS * noise
        values = variance if kind == "variance" else 100 * ratio
        errors = spread if kind == "variance" else self._pve_errors(noise, total,
                                                                     len(variance))
        x = np.arange(len(variance)) + offset
        ok = np.isfinite(values)       # NaN: not estimable, not drawn
        with np.errstate(invalid="ignore"):
            self.noise_dominated_ = (np.zeros(len(variance), dtype=bool) if spread is None
                                     else np.isfinite(variance) & (variance <= spread))
        self.not_estimable_ = ~ok
        self.not_estimable_texts_ = _mark_not_estimable(
            ax, x[~ok], ["not estimable"] * int(np.sum(~ok)))
        self.noise_dominated_markers_ = self.cumulative_line_ = None
        self.bars_ = self.line_ = self.bar_errorbars_ = self.line_errorbars_ = None
        self.bar_labels_, self.nonprivate_lines_, self.variance_ax_ = [], [], None
        if kind == "variance":
            kw = merge_style({"color": color, "marker": "o", "markersize": 5,
                              "label": label}, style, Line2D)
            (self.line_,) = ax.plot(x[ok], values[ok], **kw)
            if np.any(self.noise_dominated_):
                # points within 2 noise sd of 0 could be noise alone: hollow
                weak = self.noise_dominated_
                (self.noise_dominated_markers_,) = ax.plot(
                    x[weak], values[weak], linestyle="none", marker="o",
                    markersize=8, markerfacecolor="white",
                    markeredgecolor=self.line_.get_color(), zorder=4)
        else:
            kw = merge_style({"facecolor": color, "alpha": 0.85, "label": label},
                             style, Rectangle)
            self.bars_ = ax.bar(x[ok], values[ok], width=0.95 * width, **kw)
            for patch, weak in zip(self.bars_.patches, self.noise_dominated_[ok]):
                if weak:
                    patch.set_hatch("////")
                    patch.set_edgecolor("white")
                    patch.set_alpha(0.45)
        reach = float(values[ok].max()) if ok.any() else 0.0
        if errors is not None:
            ok = ok & np.isfinite(errors)
            x, values, errors = x[ok], values[ok], errors[ok]
            container = ax.errorbar(x, values, yerr=errors, fmt="none", ecolor=color,
                                    elinewidth=1.1, capsize=2, zorder=5)
            if kind == "variance":
                self.line_errorbars_ = container
            else:
                self.bar_errorbars_ = container
            cap = (total if kind == "variance" else 100.0) if total is not None else np.inf
            with np.errstate(all="ignore"):
                reach = max(reach, min(float(np.max(values + errors, initial=0.0)),
                                       cap))
        return reach


_OVERLAY_KINDS = ("variance", "pve")
_NOT_ESTIMABLE_LABEL = "not estimable at this eps and n (nothing drawn)"


def _mark_not_estimable(ax, positions, texts):
    """Write ``texts`` up the axes at each x of ``positions`` (components whose
    value the fit could not estimate: they get no bar and no point), in a dotted
    empty frame; returns the Text artists."""
    from matplotlib.transforms import blended_transform_factory

    where = blended_transform_factory(ax.transData, ax.transAxes)
    return [ax.text(float(x), 0.03, text, transform=where, rotation=90, ha="center",
                    va="bottom", fontsize="x-small", color=_ERROR_COLOR, zorder=6,
                    bbox={"boxstyle": "square,pad=0.3", "facecolor": "none",
                          "edgecolor": _ERROR_COLOR, "linestyle": ":"})
            for x, text in zip(positions, texts)]


def _overlay_labels(estimators, labels):
    """One distinct label per fit: the user's, checked, or each fit's method
    (its class name without one), numbered when two fits share one."""
    if labels is not None:
        labels = [str(label) for label in labels]
        if len(labels) != len(estimators):
            raise ValueError(f"labels has {len(labels)} entries but there are "
                             f"{len(estimators)} estimators.")
        if len(set(labels)) != len(labels):
            raise ValueError("labels must be distinct.")
        return labels
    names = [str(getattr(est, "method_label_", None) or type(est).__name__)
             for est in estimators]
    if len(set(names)) == len(names):
        return names
    return [f"{name} ({i + 1})" for i, name in enumerate(names)]


def _overlay_legend(label, estimator):
    """The legend text of one fit: its label and the eps it spent."""
    spent = getattr(estimator, "privacy_spent_", None)
    if spent is None:
        return label
    return f"{label} (eps {float(spent[0]):.3g})"
