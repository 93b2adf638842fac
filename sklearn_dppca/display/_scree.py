"""DP scree plot: private proportions of variance and private variances."""

import math

import numpy as np

from .._validation import check_bool, check_choice
from ._check import as_vector, check_style
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
_ERROR_LABEL = f"\u00b1{_SDS} noise sd of each private variance"

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
    are kept). Error bars show +-2 standard deviations of the noise added to each
    raw private variance (``noise_scale_``), on the variances and, divided by the
    total variance, on the PVE bars.

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
        +-2 noise sd on the PVE bars (with ``noise_scale``).
    line_ : matplotlib Line2D or None
        The private variances (``kind`` "both" or "variance").
    line_errorbars_ : matplotlib ErrorbarContainer or None
        +-2 noise sd on the variances (with ``noise_scale``).
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
    ...                     total_variance=10.0).plot()
    >>> plt.close("all")
    """

    def __init__(
        self,
        explained_variance,
        explained_variance_ratio,
        *,
        noise_scale=None,
        total_variance=None,
        component_names=None,
        nonprivate_variance=None,
        nonprivate_ratio=None,
    ):
        self.explained_variance = explained_variance
        self.explained_variance_ratio = explained_variance_ratio
        self.noise_scale = noise_scale
        self.total_variance = total_variance
        self.component_names = component_names
        self.nonprivate_variance = nonprivate_variance
        self.nonprivate_ratio = nonprivate_ratio

    def _validate(self):
        variance = as_vector(self.explained_variance, "explained_variance")
        k = variance.shape[0]
        if k == 0:
            raise ValueError("explained_variance must not be empty.")
        ratio = as_vector(self.explained_variance_ratio, "explained_variance_ratio", k)
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
            noise = np.asarray(self.noise_scale, dtype=float)
            if noise.ndim == 0:
                noise = np.full(k, float(noise))
            noise = as_vector(noise, "noise_scale", k, nonnegative=True)
        total = None
        if self.total_variance is not None:
            total = float(as_vector(
                np.atleast_1d(np.asarray(self.total_variance, dtype=float)),
                "total_variance", 1, nonnegative=True)[0])
        else:
            # the PVE is variance / total: the total follows from any positive share
            with np.errstate(all="ignore"):
                shares = float(np.sum(ratio))
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

    def plot(
        self,
        ax=None,
        *,
        kind="both",
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
        kind : {"both", "pve", "variance"}, default="both"
            ``"pve"``: bars of the private PVE; ``"variance"``: a line of the
            private variances; ``"both"``: the bars with the variances on a twin
            axis, scaled so that the line runs through the bar tops (one set of
            error bars then serves both axes).
        cumulative : bool, default=False
            Add the cumulative private PVE (needs ``kind`` "both" or "pve").
        show_nonprivate : bool, default=True
            Draw the non-private reference when the display has one.
        bar_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.bar`.
        line_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.plot` for the variance line.
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
        # the keywords style the main artist of the kind
        if kind == "variance":
            line_kw = merge_style(line_kw, kwargs, Line2D)
        else:
            bar_kw = merge_style(bar_kw, kwargs, Rectangle)
        variance, ratio, noise, total, names, np_var, np_ratio = self._validate()
        if not show_nonprivate:
            np_var = np_ratio = None
        # +-2 noise sd, in variance units and in PVE points
        spread = None if noise is None else _SDS * noise
        pve_spread = None
        if spread is not None and total is not None and total > 0:
            with np.errstate(all="ignore"):
                # beyond 100 points they run off the axis anyway (and may overflow)
                pve_spread = np.minimum(100 * spread / total, _LONGEST_PVE_ERROR)

        ax, fig = new_axes(ax)
        x = np.arange(len(variance))
        self.noise_dominated_ = (np.zeros(len(variance), dtype=bool) if spread is None
                                 else variance <= spread)
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

        def error_bars(axis, values, errors):
            container = axis.errorbar(x, values, yerr=errors, fmt="none",
                                      ecolor=_ERROR_COLOR, elinewidth=1.1, capsize=3,
                                      zorder=5, label=_ERROR_LABEL)
            handles.append(container)
            return container

        if kind in ("both", "pve"):
            # (a bar's ``color`` is its face: the default says so, so that a
            # user's ``facecolor`` replaces it and adds no edge)
            kw = merge_style({"facecolor": "C0", "alpha": 0.85, "label": "private PVE"},
                             bar_kw, Rectangle)
            self.bars_ = ax.bar(x, 100 * ratio, **kw)
            handles.append(self.bars_)
            if spread is not None and np.any(self.noise_dominated_):
                # a bar within 2 noise sd of 0 could be noise alone: hatched
                from matplotlib.patches import Patch

                for patch, weak in zip(self.bars_.patches, self.noise_dominated_):
                    if weak:
                        patch.set_hatch("////")
                        patch.set_edgecolor("white")
                        patch.set_alpha(0.45)
                handles.append(Patch(facecolor=patch.get_facecolor(), hatch="////",
                                     edgecolor="white", label=_WEAK_LABEL))
            if pve_spread is not None:
                self.bar_errorbars_ = error_bars(ax, 100 * ratio, pve_spread)
            if len(x) <= 12:
                labels = [f"{100 * r:.1f}%" for r in ratio]
                if kind == "both":
                    # the variance line and the error bars are at the bar tops:
                    # write at the foot of the bars
                    tops = np.zeros(len(x))
                else:
                    # above the bar, or above its error bar
                    tops = 100 * ratio + (0 if pve_spread is None else pve_spread)
                self.bar_labels_ = [
                    ax.annotate(label, (i, top), xytext=(0, 2),
                                textcoords="offset points", ha="center",
                                va="bottom", fontsize="x-small", annotation_clip=True)
                    for i, (label, top) in enumerate(zip(labels, tops))
                ]
            ax.set_ylabel("PVE (% of the total variance)")
            top = 100 * float(ratio.max()) if ratio.size else 100.0
            if pve_spread is not None:
                # the error bars may run off the top, never the axis beyond 100%
                top = max(top, min(float(np.max(100 * ratio + pve_spread)), 100.0))
            if cumulative:
                kw = {"color": "C3", "marker": "s", "markersize": 4,
                      "label": "cumulative private PVE"}
                (self.cumulative_line_,) = ax.plot(x, 100 * np.cumsum(ratio), **kw)
                handles.append(self.cumulative_line_)
                top = 100.0
            if np_ratio is not None:
                reference(ax, 100 * np_ratio, f"{NONPRIVATE_LABEL} (PVE)")
                top = max(top, 100 * float(np_ratio.max()))
            ax.set_ylim(0, max(top, 1e-12) * 1.15)

        if kind in ("both", "variance"):
            vax = ax.twinx() if kind == "both" else ax
            kw = merge_style({"color": "C1", "marker": "o", "label": "private variance"},
                             line_kw, Line2D)
            (self.line_,) = vax.plot(x, variance, **kw)
            handles.append(self.line_)
            if kind == "variance" and spread is not None and np.any(self.noise_dominated_):
                # points within 2 noise sd of 0: hollow markers
                self.noise_dominated_markers_ = vax.plot(
                    x[self.noise_dominated_], variance[self.noise_dominated_],
                    linestyle="none", marker="o", markersize=9, markerfacecolor="white",
                    markeredgecolor=self.line_.get_color(), zorder=4,
                    label=_WEAK_LABEL)[0]
                handles.append(self.noise_dominated_markers_)
            if spread is not None and self.bar_errorbars_ is None:
                # with kind="both" the PVE error bars are these, in PVE units
                self.line_errorbars_ = error_bars(vax, variance, spread)
            vax.set_ylabel("private variance")
            if np_var is not None:
                reference(vax, np_var, f"{NONPRIVATE_LABEL} (variance)")
            if kind == "both":
                self.variance_ax_ = vax
                if total is not None and total > 0:
                    # the variance line passes through the bar tops
                    vax.set_ylim(0, ax.get_ylim()[1] * total / 100)
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
                upper = float(variance.max())
                if spread is not None:
                    reach = float(np.max(variance + spread))
                    if total is not None and total > 0:
                        reach = min(reach, total)  # no variance exceeds the total
                    upper = max(upper, reach)
                if np_var is not None:
                    upper = max(upper, float(np_var.max()))
                ax.set_ylim(0, upper * 1.15 if upper > 0 else 1.0)

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
        kind="both",
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
        kind : {"both", "pve", "variance"}, default="both"
            Bars of the private PVE, a line of the private variances, or both
            (see :meth:`plot`).
        cumulative : bool, default=False
            Add the cumulative private PVE (needs ``kind`` "both" or "pve").
        show_nonprivate : bool, default=True
            Draw the non-private reference when the estimator stored one.
        bar_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.bar`.
        line_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.plot` for the variance line.
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
