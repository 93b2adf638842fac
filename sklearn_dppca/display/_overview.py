"""One figure with the five DP PCA pictures and the privacy ledger."""

import contextlib
import math
import re
import textwrap

import numpy as np

from .._summary import (
    composition_label,
    format_value,
    ledger_row,
    released_line,
    scaling_words,
    spent_cells,
)
from .._validation import check_param
from ._biplot import ALPHA, BiplotDisplay, BiplotRangeError
from ._check import check_axes, check_style
from ._estimator_access import (
    SEEDED_MARK,
    check_fitted,
    default_axes,
    estimator_name,
    is_seeded,
    unsupported_reason,
)
from ._labels import plain_text, text_width
from ._loading import LoadingDisplay
from ._score import ScoreDisplay
from ._scree import ScreeDisplay
from ._variable import VariableDisplay

_MAX_LEDGER_ROWS = 14
_LEDGER_COLUMNS = ("step", "mechanism", "eps", "delta", "noise scale")
_LEDGER_FONTSIZE = 7.5
_LEDGER_MIN_FONTSIZE = 7.0
_SUMMARY_FONTSIZE = 9.0
_SUMMARY_MIN_FONTSIZE = 6.0


def _skip(ax, title, reason):
    ax.set_axis_off()
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.set_title(title, color="0.4")
    ax.text(0.5, 0.5, textwrap.fill(reason, 42), ha="center", va="center",
            transform=ax.transAxes, fontsize=9, color="0.3",
            bbox={"boxstyle": "round,pad=0.6", "facecolor": "0.95", "edgecolor": "0.7"})


def _noise_range(values):
    numbers = []
    for value in values:
        try:
            numbers.append(float(value))
        except (TypeError, ValueError):
            return "-"
    if not numbers:
        return "-"
    low, high = min(numbers), max(numbers)
    return format_value(low, ".4g") if low == high else f"{low:.3g}-{high:.3g}"


def _ledger_rows(ledger):
    """One row per mechanism call; when there are too many, consecutive calls of
    one mechanism under one parent step (``score/frame/...``) share a row that
    says how many calls it merges (their eps and delta summed)."""
    def row(entry):
        return ledger_row(entry, _LEDGER_COLUMNS)

    if len(ledger) <= _MAX_LEDGER_ROWS - 1:
        return [row(entry) for entry in ledger], False
    runs = []
    for entry in ledger:
        step = str(entry.get("step", ""))
        key = (step.rsplit("/", 1)[0] if "/" in step else step,
               str(entry.get("mechanism", "")))
        if runs and runs[-1][0] == key:
            runs[-1][1].append(entry)
        else:
            runs.append((key, [entry]))
    rows = []
    for (parent, mechanism), entries in runs:
        if len(entries) == 1:
            rows.append(row(entries[0]))
            continue
        eps = [entry.get("eps", 0.0) for entry in entries]
        delta = [entry.get("delta", 0.0) for entry in entries]
        try:
            eps_text, delta_text = spent_cells((math.fsum(float(e) for e in eps),
                                                math.fsum(float(d) for d in delta)))
        except (TypeError, ValueError):
            eps_text = delta_text = "-"
        rows.append([f"{parent}/* ({len(entries)} calls)", mechanism, eps_text,
                     delta_text, _noise_range(e.get("noise_scale") for e in entries)])
    return rows, True


#: Points between a ledger row's text and its cell's edges (in font sizes), and
#: the share of a cell's width left blank on each side of its text (matplotlib's
#: default, 0.1, would take a fifth of the narrow panel).
_ROW_PAD = 0.6
_CELL_PAD = 0.04


def _line_height(fontsize):
    return 1.2 * fontsize


#: A word of a ledger cell: a step's path breaks after each ``/``.
_WORD = re.compile(r"[^ /]*/|[^ /]+")
_WORD_OR_SPACES = re.compile(_WORD.pattern + "| +")


def _wrapped(text, width, fontsize, weight):
    """``text`` broken into lines no wider than ``width`` points, after a space
    or a ``/`` (a step's path), never inside a word."""
    lines = [""]
    for token in _WORD_OR_SPACES.findall(text):
        candidate = lines[-1] + token
        if lines[-1].strip() and text_width(candidate.rstrip(), fontsize,
                                            weight) > width:
            lines.append(token.lstrip())
        else:
            lines[-1] = candidate
    return "\n".join(line.rstrip() for line in lines)


def _column_needs(rows, weights, fontsize, words=False):
    """Width (points) each ledger column needs for its longest cell, or with
    ``words`` for its longest word, a cell's side pads included."""
    def need(text, weight):
        return text_width(text, fontsize, weight) / (1 - 2 * _CELL_PAD) + 1.0

    return np.array([
        max(need(part, weight) for row, weight in zip(rows, weights)
            for part in ((_WORD.findall(row[column]) or [""]) if words
                         else [row[column]]))
        for column in range(len(rows[0]))])


def _text_widths(text, smallest, room):
    """Widths of the step and mechanism columns in ``room`` points: what they
    need when it fits (the rest shared out), else shares of it, each at least
    its longest word."""
    if text.sum() <= room:
        return text + (room - text.sum()) * text / text.sum()
    widths = np.maximum(room * text / text.sum(), np.minimum(text, room - smallest[::-1]))
    return widths * room / widths.sum()


def _fit_ledger(ax, rows, bold, fontsize):
    """Cells, column widths (shares of the panel), lines per row and font size of
    the ledger table: the numbers keep their width, and the step and mechanism
    columns share the rest, their text wrapped to it, so that the font stays
    readable (the table used to shrink its font to fit one line per row)."""
    weights = ["bold" if b else "normal" for b in bold]
    available = ax.get_position().width * ax.figure.get_figwidth() * 72.0
    needs = _column_needs(rows, weights, fontsize)
    smallest = _column_needs(rows, weights, fontsize, words=True)[:2]
    if smallest.sum() > available - needs[2:].sum():
        # the longest words do not fit: a smaller font (not below the minimum)
        shrink = max((available - needs[2:].sum()) / smallest.sum(),
                     _LEDGER_MIN_FONTSIZE / fontsize)
        fontsize, needs, smallest = fontsize * shrink, needs * shrink, smallest * shrink
    widths = np.r_[_text_widths(needs[:2], smallest, available - needs[2:].sum()),
                   needs[2:]]
    cells = [[_wrapped(cell, (1 - 2 * _CELL_PAD) * widths[i] - 1.0, fontsize, weight)
              if i < 2 else cell for i, cell in enumerate(row)]
             for row, weight in zip(rows, weights)]
    lines = [max(cell.count("\n") + 1 for cell in row) for row in cells]
    return cells, widths / widths.sum(), lines, fontsize


def _ledger_table(ax, estimator):
    ax.set_axis_off()
    ledger = list(getattr(estimator, "privacy_ledger_", None) or [])
    spent = getattr(estimator, "privacy_spent_", None)
    rows, merged = _ledger_rows(ledger)
    # step names carry column names (data): shown literally, never as mathtext
    rows = [[plain_text(row[0])] + list(row[1:]) for row in rows]
    if len(rows) > _MAX_LEDGER_ROWS:
        hidden = len(rows) - (_MAX_LEDGER_ROWS - 1)
        rows = rows[: _MAX_LEDGER_ROWS - 1] + [[f"... {hidden} more rows", "", "", "",
                                                 ""]]
    if spent is not None:
        rows.append(["total spent", composition_label(ledger), *spent_cells(spent), ""])
    if not rows:
        ax.text(0.5, 0.5, "no privacy ledger", ha="center", va="center",
                transform=ax.transAxes)
        return None
    header = list(_LEDGER_COLUMNS)
    bold = [True] + [False] * len(rows)
    if spent is not None:
        bold[-1] = True
    # rows keep a readable height (as many text lines as their tallest cell); a
    # short ledger sits at the top, a long one gets a smaller font (down to
    # _LEDGER_MIN_FONTSIZE)
    height_pt = ax.get_position().height * ax.figure.get_figheight() * 72.0
    fontsize = _LEDGER_FONTSIZE
    while True:
        cells, widths, lines, fontsize = _fit_ledger(ax, [header] + rows, bold,
                                                     fontsize)
        unit = _line_height(fontsize)
        needed = sum(lines) * unit + len(lines) * _ROW_PAD * fontsize
        if needed <= height_pt or fontsize <= _LEDGER_MIN_FONTSIZE:
            break
        fontsize = max(_LEDGER_MIN_FONTSIZE, fontsize - 0.25)
    height = min(1.0, needed / height_pt)
    table = ax.table(
        cellText=cells[1:],
        colLabels=cells[0],
        colWidths=list(widths),
        bbox=[0.0, 1.0 - height, 1.0, height],
        cellLoc="left",
        colLoc="left",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(fontsize)
    for (row, _), cell in table.get_celld().items():
        cell.set_height(lines[row] * unit + _ROW_PAD * fontsize)
        cell.PAD = _CELL_PAD
    # the table lies inside its panel (bbox in axes coordinates): measuring its
    # hundred cells on every layout pass would cost time and change nothing
    table.set_in_layout(False)
    for (row, _), cell in table.get_celld().items():
        cell.set_edgecolor("0.8")
        if row == 0:
            cell.set_text_props(weight="bold")
            cell.set_facecolor("0.92")
        elif spent is not None and row == len(rows):
            cell.set_text_props(weight="bold")
    ax.set_title("Privacy ledger (rows with * merge calls)" if merged
                 else "Privacy ledger (one row per mechanism call)")
    return table


def plot_overview(
    estimator,
    *,
    figsize=None,
    axes=None,
    scree_kw=None,
    loading_kw=None,
    score_kw=None,
    variable_kw=None,
    biplot_kw=None,
    **fig_kw,
):
    """Draw the five DP PCA pictures and the privacy ledger in one figure.

    Panels: scree, loadings, variable circle (first row); scores, biplot, and a
    summary of the release with the privacy ledger as a table (step, mechanism,
    eps, delta, noise scale) (second row). A panel the estimator cannot supply (no variances for a
    :class:`~sklearn_dppca.DPKendallDirections`, no score summary for a
    :class:`~sklearn_dppca.DPScree`) says so instead of a picture.

    Parameters
    ----------
    estimator : DPKendallDirections, DPScree or DPPCA
        Fitted estimator.
    figsize : tuple of 2 float, default=None
        Figure size in inches; default (17, 11).
    axes : tuple of 2 int, default=None
        0-based components of the two-axis pictures; default the estimator's
        ``axes_`` when it has them, else ``(0, 1)``. The score and biplot panels
        exist only for the estimator's ``axes_``.
    scree_kw, loading_kw, score_kw, variable_kw, biplot_kw : dict, default=None
        Keyword arguments of the ``from_estimator`` of each display, e.g.
        ``score_kw={"kind": "histogram"}`` or ``biplot_kw={"alpha": 0.5}``.
    **fig_kw : dict
        Passed to :func:`matplotlib.pyplot.figure`. Without a ``layout`` (or
        ``constrained_layout`` / ``tight_layout``) the drawn figure is laid out
        once by constrained layout and returned without a layout engine, so that
        saving it draws it once; pass ``layout="constrained"`` to keep the engine
        (e.g. to resize the figure or add artists afterwards).

    Returns
    -------
    figure : matplotlib Figure
        The figure; ``figure.displays_`` maps each drawn panel's name
        (``"scree"``, ``"loading"``, ``"score"``, ``"variable"``, ``"biplot"``) to
        its display.

    See Also
    --------
    ScreeDisplay, LoadingDisplay, ScoreDisplay, VariableDisplay, BiplotDisplay :
        The five panels, one at a time.
    sklearn_dppca.DPPCA : The estimator whose release holds every panel.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_dppca import DPPCA
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> from sklearn_dppca.display import plot_overview
    >>> X = make_gaussian_clusters(60, random_state=0)
    >>> fig = plot_overview(DPPCA(n_components=3, random_state=0).fit(X))
    >>> plt.close(fig)
    """
    check_fitted(estimator, "plot_overview")
    reason = unsupported_reason(estimator, "LoadingDisplay")
    if reason is not None:
        raise TypeError(reason.replace("LoadingDisplay", "plot_overview"))
    kws = {
        name: check_style(kw, f"{name}_kw")
        for name, kw in (("scree", scree_kw), ("loading", loading_kw),
                         ("score", score_kw), ("variable", variable_kw),
                         ("biplot", biplot_kw))
    }
    for name, kw in kws.items():
        for key in ("ax", "axes"):
            if key in kw:
                raise ValueError(
                    f"{name}_kw must not set {key!r}: plot_overview places the panels "
                    "(use its axes parameter for the components)."
                )
    k = int(estimator.n_components_)
    fitted_axes = getattr(estimator, "axes_", None)
    if axes is None:
        axes = default_axes(estimator)
    two_axes = k >= 2
    if two_axes:
        axes = check_axes(axes, k)

    import matplotlib.pyplot as plt

    # without a layout of the caller's choosing the figure is laid out once, when
    # drawn, and returned without an engine (see below)
    layout_chosen = any(key in fig_kw for key in ("layout", "constrained_layout",
                                                   "tight_layout"))
    fig_kw.setdefault("layout", "constrained")
    fig = plt.figure(figsize=figsize or (17, 11), **fig_kw)
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    if isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        # twice the default gap between panels: the last tick label of an axis
        # whose limits are set when drawn (after the layout) may hang over its
        # edge into the next panel (wine's biplot did, by a pixel)
        fig.get_layout_engine().set(wspace=0.04)
    grid = fig.add_gridspec(2, 3)
    ax_scree = fig.add_subplot(grid[0, 0])
    ax_loading = fig.add_subplot(grid[0, 1])
    ax_variable = fig.add_subplot(grid[0, 2])
    ax_score = fig.add_subplot(grid[1, 0])
    ax_biplot = fig.add_subplot(grid[1, 1])
    corner = grid[1, 2].subgridspec(2, 1, height_ratios=[0.65, 1.35])
    ax_extra = fig.add_subplot(corner[0])
    ax_ledger = fig.add_subplot(corner[1])
    for ax, title in ((ax_scree, "DP scree"), (ax_loading, "DP loadings"),
                      (ax_variable, "DP variable plot"), (ax_score, "DP scores"),
                      (ax_biplot, "DP biplot")):
        ax.set_title(title)
        ax.set_xlabel("DP PC1 (00.0%)")
        ax.set_ylabel("DP PC2 (00.0%)")
    # Lay the empty panels out once, and keep that layout while the panels are
    # drawn: they measure their final size, and a layout run per panel (what a
    # display does on a figure with a layout engine) would be slow on seven panels.
    engine = fig.get_layout_engine()
    if engine is not None:
        with _two_ticks(fig.axes):
            engine.execute(fig)
        fig.set_layout_engine("none")
    try:
        displays = _draw_panels(estimator, axes, two_axes, fitted_axes, kws, ax_scree,
                                ax_loading, ax_variable, ax_score, ax_biplot)
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
    _fewer_ticks(displays)
    _summary_panel(ax_extra, estimator)
    _ledger_table(ax_ledger, estimator)
    eps, delta = getattr(estimator, "privacy_spent_", (np.nan, np.nan))
    title = (f"{estimator_name(estimator)}: differentially private PCA of "
             f"{estimator.n_samples_} rows x {estimator.n_features_in_} variables "
             f"(privacy spent: eps = {eps:.3g}, delta = {delta:.3g})")
    seeded = is_seeded(estimator)
    # (one line: a second would move every panel down)
    fig.suptitle(title + (f" - {SEEDED_MARK}" if seeded else ""), fontsize=13,
                 color="#b2182b" if seeded else None)
    if engine is not None and not layout_chosen:
        # (the legends and titles drawn since the first layout change the panels'
        # sizes: the variable labels are placed again when drawn, _PlacedLabels)
        _lay_out_for_good(fig, engine)
    fig.displays_ = displays
    return fig


_PANEL_TICKS = 5


def _fewer_ticks(displays):
    """At most about five automatic ticks on the loading, variable and score
    panels (up to eleven by default at this size): tick labels are a good share of
    the text drawn, and text is most of the drawing time. The scree (whose two
    y-axes align their ticks) and the biplot (which sets its own) keep theirs."""
    from matplotlib.ticker import AutoLocator

    for name in ("loading", "variable", "score"):
        if name not in displays:
            continue
        for ax in np.ravel(displays[name].ax_):
            for axis in (ax.xaxis, ax.yaxis):
                locator = axis.get_major_locator()
                if isinstance(locator, AutoLocator):
                    locator.set_params(nbins=_PANEL_TICKS)


@contextlib.contextmanager
def _two_ticks(axes):
    """Give each empty panel two ticks labelled like its default ones (0.0 and 1.0)
    while the layout measures it: the margins come out the same as with the six
    default ticks, for a third of the time. The panels' own locators and
    formatters are given back afterwards."""
    saved = []
    for axis in (axis for ax in axes for axis in (ax.xaxis, ax.yaxis)):
        saved.append((axis, axis.get_major_locator(), axis.get_major_formatter(),
                      axis.isDefault_majloc, axis.isDefault_majfmt))
        axis.set_ticks([0.0, 1.0], labels=["0.0", "1.0"])
    try:
        yield
    finally:
        for axis, locator, formatter, default_locator, default_formatter in saved:
            axis.set_major_locator(locator)
            axis.set_major_formatter(formatter)
            axis.isDefault_majloc = default_locator
            axis.isDefault_majfmt = default_formatter


def _lay_out_for_good(fig, engine):
    """Lay the drawn figure out with ``engine`` and remove the engine: saving the
    figure then draws it once, instead of laying it out and drawing it twice."""
    import matplotlib as mpl

    engine.execute(fig)
    # with these settings on, ``None`` would install a new engine
    with mpl.rc_context({"figure.autolayout": False,
                         "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)


def _draw_panels(estimator, axes, two_axes, fitted_axes, kws, ax_scree, ax_loading,
                 ax_variable, ax_score, ax_biplot):
    displays = {}

    # scree
    reason = unsupported_reason(estimator, "ScreeDisplay")
    if reason is None:
        displays["scree"] = ScreeDisplay.from_estimator(
            estimator, ax=ax_scree, **{"cumulative": True, **kws["scree"]}
        )
    else:
        _skip(ax_scree, "DP scree", reason)

    # loadings
    loading = {"kind": "vector" if two_axes else "heatmap", **kws["loading"]}
    if loading["kind"] != "heatmap":
        loading["axes"] = axes
    displays["loading"] = LoadingDisplay.from_estimator(estimator, ax=ax_loading, **loading)

    # variable circle
    reason = unsupported_reason(estimator, "VariableDisplay")
    if reason is None and not two_axes:
        reason = "The variable plot needs at least 2 components."
    if reason is None:
        displays["variable"] = VariableDisplay.from_estimator(
            estimator, ax=ax_variable, axes=axes, **kws["variable"]
        )
    else:
        _skip(ax_variable, "DP variable plot", reason)

    # scores and biplot need the released score summary on these axes
    score_reason = unsupported_reason(estimator, "ScoreDisplay")
    if score_reason is None and tuple(int(a) for a in fitted_axes) != tuple(axes):
        score_reason = (
            f"The private score summary was released for {_pc_pair(fitted_axes)}, "
            f"not {_pc_pair(axes)}."
        )
    if score_reason is None:
        displays["score"] = ScoreDisplay.from_estimator(
            estimator, ax=ax_score, **{"kind": "histogram", **kws["score"]}
        )
    else:
        _skip(ax_score, "DP scores", score_reason)
    biplot_reason = unsupported_reason(estimator, "BiplotDisplay")
    if biplot_reason is None:
        biplot_reason = score_reason
    if biplot_reason is None:
        biplot = {"alpha": 1.0, **kws["biplot"]}
        lam = np.asarray(estimator.explained_variance_)[list(axes)]
        if check_param(biplot["alpha"], [ALPHA], "alpha") > 0 and np.any(lam == 0):
            biplot_reason = (
                "A private variance of the shown components is 0, so the alpha>0 "
                "biplot is undefined; pass biplot_kw={'alpha': 0}."
            )
    if biplot_reason is None:
        try:
            displays["biplot"] = BiplotDisplay.from_estimator(estimator, ax=ax_biplot,
                                                              **biplot)
        except BiplotRangeError as error:   # raised before anything is drawn
            biplot_reason = str(error)
    if biplot_reason is not None:
        _skip(ax_biplot, "DP biplot", biplot_reason)
    return displays


def _summary_panel(ax, estimator):
    """Plain facts about the release, next to the pictures (the estimator and the
    budget are in the figure's title too)."""
    ax.set_axis_off()
    eps, delta = getattr(estimator, "privacy_spent_", (np.nan, np.nan))
    rows = f"rows n = {estimator.n_samples_}, variables p = {estimator.n_features_in_}"
    rows += scaling_words(estimator)
    lines = [released_line(estimator), rows,
             f"privacy spent: eps = {eps:.4g}, delta = {delta:.3g}"]
    ratio = getattr(estimator, "explained_variance_ratio_", None)
    kept = f"components kept: {estimator.n_components_}"
    if ratio is not None:
        share = float(np.sum(ratio))
        kept += (f", {100 * share:.1f}% of the total variance" if np.isfinite(share)
                 else ", PVE not estimable")
    lines.append(kept)
    if getattr(estimator, "frame_", None) is not None:
        bins = np.shape(estimator.score_histogram_)
        lines.append(f"score histogram: {bins[0]} x {bins[1]} cells")
        noise_cells = getattr(estimator, "expected_noise_cells_", None)
        if noise_cells is not None:
            lines.append("noise-only cells expected: "
                         f"{'0' if noise_cells == 0 else format(noise_cells, '.2g')}")
        synthetic = getattr(estimator, "synthetic_scores_", None)
        if synthetic is not None:
            lines.append(f"synthetic points: {len(synthetic)}")
        groups = getattr(estimator, "groups_", None)
        if groups:
            lines.append(
                f"groups (public labels): {', '.join(map(plain_text, groups))}")
    reference = getattr(estimator, "nonprivate_", None)
    if reference is not None:
        note = ("Grey dashed / hollow marks: the non-private reference. It is NOT "
                "private: do not publish it.")
    else:
        note = "Everything drawn is a released (private) quantity or post-processing of one."
    # wrap to the panel's width and shrink the font to its height (the final
    # layout may take a little of the width the empty panel had)
    width_pt = 0.85 * ax.get_position().width * ax.figure.get_figwidth() * 72.0
    height_pt = ax.get_position().height * ax.figure.get_figheight() * 72.0
    fontsize = _SUMMARY_FONTSIZE
    for _ in range(4):
        columns = max(int(width_pt / (0.62 * fontsize)) - 2, 20)
        wrapped = [part for line in lines for part in textwrap.wrap(
            line, columns, subsequent_indent="  ")]
        wrapped += [""] + textwrap.wrap(note, columns)
        needed = 1.25 * fontsize * len(wrapped)
        if needed <= 0.92 * height_pt or fontsize <= _SUMMARY_MIN_FONTSIZE:
            break
        fontsize = max(_SUMMARY_MIN_FONTSIZE, fontsize * 0.92 * height_pt / needed)
    ax.text(0.02, 0.98, "\n".join(wrapped), ha="left", va="top", transform=ax.transAxes,
            fontsize=fontsize, family="monospace", linespacing=1.15, in_layout=False)
    ax.set_title("Release")


def _pc_pair(axes):
    """``PC1 x PC3 (axes=(0, 2))``: the components as the pictures name them, and the
    0-based ``axes`` argument that selects them."""
    first, second = (int(a) for a in axes)
    return f"PC{first + 1} x PC{second + 1} (axes=({first}, {second}))"
