"""DP scree plot: private proportions of variance and private variances."""

import math

import numpy as np

from ._common import (
    NONPRIVATE_COLOR,
    NONPRIVATE_LABEL,
    NONPRIVATE_LINESTYLE,
    add_legend,
    as_vector,
    check_bool,
    check_estimator_for,
    check_kind,
    check_kw,
    check_matplotlib_support,
    get_axes,
    nonprivate_get,
    nonprivate_reference,
)

_KINDS = ("both", "pve", "variance")


class ScreeDisplay:
    """DP scree plot: PVE bars and private variances.

    It is recommended to use :meth:`from_estimator` to create a display; all
    parameters are stored as attributes. Only released quantities are drawn: the
    private variances along the private directions (``explained_variance_``) and
    the proportions of variance over the ``k`` retained components that follow
    from them (post-processing).

    Parameters
    ----------
    explained_variance : array-like of shape (n_components,)
        Private, non-negative variances.
    explained_variance_ratio : array-like of shape (n_components,)
        Private proportions of variance over the retained components.
    component_names : list of str, default=None
        Tick labels; default ``"DP PC1", "DP PC2", ...``.
    nonprivate_variance : array-like of shape (n_components,), default=None
        Ordinary PCA eigenvalues (NOT private), drawn as a grey dashed reference.
    nonprivate_ratio : array-like of shape (n_components,), default=None
        Ordinary PCA proportions of variance over the same ``k`` (NOT private).

    Attributes
    ----------
    bars_ : matplotlib BarContainer or None
        The PVE bars (``kind`` "both" or "pve").
    bar_labels_ : list of matplotlib Text
        Percentages written on the bars (at most 12 components).
    line_ : matplotlib Line2D or None
        The private variances (``kind`` "both" or "variance").
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
    >>> disp = ScreeDisplay([4.0, 2.0, 1.0], [4 / 7, 2 / 7, 1 / 7]).plot()
    >>> plt.close("all")
    """

    def __init__(
        self,
        explained_variance,
        explained_variance_ratio,
        *,
        component_names=None,
        nonprivate_variance=None,
        nonprivate_ratio=None,
    ):
        self.explained_variance = explained_variance
        self.explained_variance_ratio = explained_variance_ratio
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
        return variance, ratio, names, np_var, np_ratio

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
            axis, scaled so that the line runs through the bar tops.
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
        """
        check_matplotlib_support("ScreeDisplay.plot")
        kind = check_kind(kind, _KINDS)
        cumulative = check_bool(cumulative, "cumulative")
        show_nonprivate = check_bool(show_nonprivate, "show_nonprivate")
        if cumulative and kind == "variance":
            raise ValueError(
                "cumulative=True draws the cumulative PVE; it needs kind='both' or "
                "kind='pve', got kind='variance'."
            )
        bar_kw = check_kw(bar_kw, "bar_kw")
        line_kw = check_kw(line_kw, "line_kw")
        (bar_kw if kind != "variance" else line_kw).update(kwargs)
        variance, ratio, names, np_var, np_ratio = self._validate()
        if not show_nonprivate:
            np_var = np_ratio = None

        ax, fig = get_axes(ax, "ScreeDisplay.plot")
        x = np.arange(len(variance))
        self.bars_ = None
        self.bar_labels_ = []
        self.line_ = None
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

        if kind in ("both", "pve"):
            kw = {"color": "C0", "alpha": 0.85, "label": "private PVE"}
            kw.update(bar_kw)
            self.bars_ = ax.bar(x, 100 * ratio, **kw)
            handles.append(self.bars_)
            if len(x) <= 12:
                # with kind="both" the variance line runs through the bar tops:
                # write inside the bars there, above them otherwise
                inside = kind == "both"
                self.bar_labels_ = ax.bar_label(
                    self.bars_, labels=[f"{100 * r:.1f}%" for r in ratio],
                    fontsize="x-small", padding=2 if not inside else 0,
                    label_type="center" if inside else "edge",
                    color="white" if inside else "black",
                )
            ax.set_ylabel("PVE (% of the retained components)")
            top = 100 * float(ratio.max()) if ratio.size else 100.0
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
            kw = {"color": "C1", "marker": "o", "label": "private variance"}
            kw.update(line_kw)
            (self.line_,) = vax.plot(x, variance, **kw)
            handles.append(self.line_)
            vax.set_ylabel("private variance")
            if np_var is not None:
                reference(vax, np_var, f"{NONPRIVATE_LABEL} (variance)")
            if kind == "both":
                self.variance_ax_ = vax
                total = float(variance.sum())
                if total > 0:
                    # the variance line passes through the bar tops
                    vax.set_ylim(0, ax.get_ylim()[1] * total / 100)
                    if np_var is not None and np_var.max() > vax.get_ylim()[1]:
                        top = float(np_var.max()) * 1.1
                        vax.set_ylim(0, top)
                        # (a reference ~1e306 times the private total would put the
                        # PVE axis at infinity: the alignment is then given up)
                        if math.isfinite(top * 100 / total):
                            ax.set_ylim(0, top * 100 / total)
                else:
                    vax.set_ylim(bottom=0)
            else:
                upper = float(variance.max())
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
        """Draw the DP scree plot of a fitted :class:`~sklearn_dppca.DPScree` or
        :class:`~sklearn_dppca.DPPCA`.

        Reads ``explained_variance_`` and ``explained_variance_ratio_`` (private)
        and, when stored, the non-private reference in ``nonprivate_``.

        Parameters
        ----------
        estimator : DPScree or DPPCA
            Fitted estimator.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        kind, cumulative, show_nonprivate, bar_kw, line_kw, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : ScreeDisplay

        Raises
        ------
        TypeError
            When the estimator releases no variances (e.g.
            :class:`~sklearn_dppca.DPKendallDirections`).
        """
        check_matplotlib_support("ScreeDisplay.from_estimator")
        check_estimator_for(estimator, "ScreeDisplay")
        reference = nonprivate_reference(estimator)
        display = cls(
            estimator.explained_variance_,
            estimator.explained_variance_ratio_,
            nonprivate_variance=nonprivate_get(reference, "explained_variance"),
            nonprivate_ratio=nonprivate_get(reference, "explained_variance_ratio"),
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
