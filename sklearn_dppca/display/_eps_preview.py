"""What a fit would buy across eps, before anything is spent: each part's predicted
noise and the membership risk of the fit's spend."""

import numpy as np

from .._validation import Instance, Interval, check_param
from ._check import as_vector, check_style
from ._drawing import add_legend
from ._limits import new_axes
from ._style import merge_style

__all__ = ["EpsPreviewDisplay"]

#: Colour of the risk line (on its own axis): not a part of the fit.
_RISK_COLOR = "0.3"


class EpsPreviewDisplay:
    """The plan of a fit across eps: predicted noise of each part, and the risk.

    A picture of public inputs only (the estimator's settings, the number of rows
    and of variables): no data are read and nothing is spent. For each part of the
    fit (the loadings, the scree, the score summary...) it draws the largest
    predicted noise sd of its steps, relative to each step's public scale, at each
    eps where the plan buys the part (log axes; no point where it is not bought,
    and the legend says from which eps it is bought). On a second axis, the best
    membership test the fit's spend allows: the largest advantage (true minus
    false positive rate) over every test that one person was in the data.

    It is recommended to use :meth:`from_estimator` to create a display; all
    parameters are stored as attributes.

    Parameters
    ----------
    eps : array-like of shape (n_eps,)
        The eps previewed, positive and increasing.
    parts : list of str
        The fit's parts.
    noise_sd : array-like of shape (n_parts, n_eps)
        Each part's predicted relative noise sd; NaN where it is not bought or
        states none.
    bought : array-like of bool, shape (n_parts, n_eps)
        Whether the plan buys the part at each eps.
    advantage : array-like of shape (n_eps,)
        The membership advantage of the fit's spend at each eps, in [0, 1].
    fit_eps : float, default=None
        The eps of the fit being planned, marked by a vertical line.

    Attributes
    ----------
    lines_ : dict of str to matplotlib Line2D
        Each part's noise line (parts bought with no stated sd have none).
    risk_line_ : matplotlib Line2D
        The membership advantage, on ``risk_ax_``.
    risk_ax_ : matplotlib Axes
        The second y axis, sharing ``ax_``'s x axis.
    fit_line_ : matplotlib Line2D or None
        The vertical line at ``fit_eps``.
    ax_ : matplotlib Axes
        Axes with the noise lines.
    figure_ : matplotlib Figure
        Figure containing the plot.

    See Also
    --------
    DPPCA.plan : The plan at one eps, one row per step.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_dppca import DPPCA
    >>> from sklearn_dppca.display import EpsPreviewDisplay
    >>> display = EpsPreviewDisplay.from_estimator(DPPCA(eps=1.0), 500, 6)
    >>> sorted(display.lines_) == sorted(
    ...     part for part, sd in zip(display.parts, display.noise_sd) if (sd == sd).any())
    True
    """

    def __init__(self, eps, parts, noise_sd, bought, advantage, *, fit_eps=None):
        self.eps = as_vector(eps, "eps", nonnegative=True)
        self.parts = [str(part) for part in check_param(parts, [list], "parts")]
        shape = (len(self.parts), self.eps.size)
        self.noise_sd = _as_table(noise_sd, shape, "noise_sd", float)
        self.bought = _as_table(bought, shape, "bought", bool)
        self.advantage = as_vector(advantage, "advantage", length=self.eps.size,
                                   nonnegative=True)
        self.fit_eps = check_param(fit_eps, [None, Interval("real", 0, None,
                                                            closed="neither")], "fit_eps")

    @classmethod
    def from_estimator(cls, estimator, n_samples, n_features, *, eps_range=None,
                       ax=None, line_kw=None, risk_kw=None, **kwargs):
        """Preview the plan of an estimator's fit across eps, and draw it.

        Parameters
        ----------
        estimator : DPPCA, DPScree or DPKendallDirections
            Its settings (fitted or not: nothing of a fit is read).
        n_samples, n_features : int
            The shape of the data the fit would read (public).
        eps_range : tuple of float, default=None
            ``(low, high)``; default a quarter to four times the estimator's eps.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        line_kw, risk_kw : dict, default=None
            See :meth:`plot`.
        **kwargs : dict
            Added to ``line_kw``.

        Returns
        -------
        display : EpsPreviewDisplay
            The display, drawn.
        """
        from .._plan_preview import preview_across_eps

        eps = estimator.get_params()["eps"]
        eps_range = _check_range(eps_range, eps)
        preview = preview_across_eps(estimator, n_samples, n_features, eps_range,
                                     estimator.get_params()["delta"])
        display = cls(preview.eps, preview.parts, preview.noise_sd, preview.bought,
                      preview.advantage, fit_eps=eps)
        return display.plot(ax=ax, line_kw=line_kw, risk_kw=risk_kw, **kwargs)

    def plot(self, ax=None, *, line_kw=None, risk_kw=None, **kwargs):
        """Draw the preview.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created when None.
        line_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.plot` for every part's line
            (matplotlib's aliases honoured; a colour here colours them all).
        risk_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.plot` for the advantage line.
        **kwargs : dict
            Added to ``line_kw``.

        Returns
        -------
        display : EpsPreviewDisplay
            The display itself, with the drawn artists stored as attributes.
        """
        from matplotlib.lines import Line2D

        line_kw = {**check_style(line_kw, "line_kw"), **kwargs}
        risk_kw = check_style(risk_kw, "risk_kw")
        ax, figure = new_axes(ax)
        self.lines_ = {}
        for index, part in enumerate(self.parts):
            sd = np.where(self.bought[index], self.noise_sd[index], np.nan)
            label = f"{part}: {_bought_words(self.eps, self.bought[index])}"
            if np.isfinite(sd).any():
                style = merge_style({"marker": "o", "color": f"C{index}", "lw": 1.6},
                                    line_kw, Line2D)
                (self.lines_[part],) = ax.plot(self.eps, sd, label=label, **style)
            else:
                # bought with no stated sd (a histogram), or never bought: a legend
                # entry only, so the reader still learns when the part is bought
                ax.plot([], [], ls="none", marker="s", color=f"C{index}", label=label)
        ax.set_xscale("log")
        if self.lines_:
            ax.set_yscale("log")
        _plain_log_ticks(ax)
        ax.set_xlabel("eps of the fit")
        ax.set_ylabel("predicted noise sd (relative to each step's scale)")
        self.fit_line_ = (ax.axvline(self.fit_eps, color="0.5", ls=":", lw=1,
                                     label=f"this fit (eps {self.fit_eps:.3g})")
                          if self.fit_eps is not None else None)
        self.risk_ax_ = ax.twinx()
        style = merge_style({"color": _RISK_COLOR, "ls": "--", "lw": 1.2}, risk_kw,
                            Line2D)
        (self.risk_line_,) = self.risk_ax_.plot(
            self.eps, self.advantage, label="membership advantage (right axis)", **style)
        self.risk_ax_.set_ylim(0, 1)
        self.risk_ax_.set_ylabel("membership advantage: true - false positive rate")
        handles = ax.get_legend_handles_labels()[0] + [self.risk_line_]
        add_legend(ax, handles, where="below")
        ax.set_title("What a fit would buy across eps (public inputs, nothing spent)",
                     fontsize="medium")
        self.ax_, self.figure_ = ax, figure
        return self


def _plain_log_ticks(ax):
    """Ticks at 1, 2 and 5 times the powers of ten, labelled as plain numbers
    (0.2, 5), on log axes; the other minor ticks unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
        if scale == "log":
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(NullFormatter())


def _as_table(values, shape, name, kind):
    table = np.asarray(values, dtype=kind)
    if table.shape != shape:
        raise ValueError(f"{name} must have shape {shape} (parts x eps), got "
                         f"{table.shape}.")
    return table


def _check_range(eps_range, eps):
    if eps_range is None:
        return eps / 4, eps * 4
    check_param(eps_range, [Instance(tuple, "a tuple (low, high)")], "eps_range")
    if len(eps_range) != 2:
        raise ValueError(f"eps_range must be (low, high), got {len(eps_range)} values.")
    low, high = (check_param(value, [Interval("real", 0, None, closed="neither")],
                             "eps_range") for value in eps_range)
    if not low < high:
        raise ValueError("eps_range must have low < high.")
    return float(low), float(high)


def _bought_words(eps, bought):
    if bought.all():
        return "bought throughout"
    if not bought.any():
        return f"not bought up to eps {eps[-1]:.3g}"
    first = int(np.argmax(bought))
    if bought[first:].all():
        return f"bought from eps {eps[first]:.3g}"
    return "bought at eps " + ", ".join(f"{value:.3g}" for value in eps[bought])
