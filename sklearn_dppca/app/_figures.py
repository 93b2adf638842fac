"""Drawing a kept release: the five pictures and the overview, free (released
values only; the non-private reference only when the fit stored it and the
caller asks)."""

import io

from ..display import (
    BiplotDisplay,
    EpsPreviewDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
    plot_overview,
)
from .._requests import SCREE_KINDS, scree_panel
from ..privacy import BudgetExceededError

#: The pictures of a fit.
DISPLAYS = ("scree", "loading", "variable", "score", "biplot", "overview")
SCORE_KINDS = ("histogram", "points", "both")

FIGURE_FORMATS = ("png", "pdf", "svg")

#: The mark the page and the figures carry when the reference is drawn.
REFERENCE_MARK = "NON-PRIVATE reference shown: never publish this"

_SINGLE_FIGSIZE = (8.0, 6.0)
_OVERVIEW_FIGSIZE = (17.0, 11.0)


# --------------------------------------------------------------------------------------
# drawing a release (free)
# --------------------------------------------------------------------------------------
def _pc_pair(pair):
    return f"PC{pair[0] + 1} x PC{pair[1] + 1}"


def view_axes(fit, axes):
    """The 0-based pair ``axes`` checked against ``fit``'s components (None: the
    fit's score axes; None too when it released fewer than 2)."""
    k = int(fit.release.n_components_)
    if axes is None or k < 2:
        own = fit.release.axes_ if fit.release.axes_ is not None else (0, 1)
        return tuple(int(a) for a in own) if k >= 2 else None
    a, b = (int(axis) for axis in axes)
    if a == b or min(a, b) < 0 or max(a, b) >= k:
        raise ValueError(f"the axes must be two different components in 1..{k} "
                         f"(the fit released {k}), got {a + 1} and {b + 1}.")
    return a, b


def _score_pair(fit, display, pair):
    """The score summary's own axes, when ``pair`` (the view's) is them; else a
    ValueError saying which pair was released: the score picture and the biplot
    are never drawn on other axes than the view asks for."""
    if fit.release.axes_ is None:
        return pair
    released = tuple(int(a) for a in fit.release.axes_)
    if pair is not None and tuple(pair) != released:
        raise ValueError(
            f"the {display} picture of this fit exists for {_pc_pair(released)} only "
            f"(its score summary was released for those axes), not for "
            f"{_pc_pair(pair)}: set the axes to {released[0] + 1}, {released[1] + 1}, "
            f"or fit again with score axes {pair[0] + 1},{pair[1] + 1} (spends).")
    return released


def draw_figure(fit, display="overview", *, axes=None, score_kind="histogram",
                scree_kind="auto", biplot_alpha=1.0, show_reference=False, figsize=None):
    """Draw one picture of ``fit`` (a :class:`_Fit`) from released values (free).

    ``axes`` (0-based) applies to every two-axis picture; the score picture and
    the biplot exist only for the fit's own score axes, so other ``axes`` are a
    ValueError saying which were released (the overview draws its score and
    biplot panels on the fit's axes, labelled). The non-private reference is
    drawn only with ``show_reference`` and when the fit stored it; the figure then
    carries :data:`REFERENCE_MARK`. ``scree_kind`` (one of
    :data:`~sklearn_dppca._requests.SCREE_KINDS`) is what the scree shows: the
    PVE, the variances (a fit whose total was not bought has no PVE but may have
    variances), both, or ``"auto"``: the PVE where one is estimable, else the
    variances (:func:`~sklearn_dppca._requests.scree_panel`). ``figsize``
    (inches) sizes the figure to the page. Returns ``(figure, display_object)``: a matplotlib Figure (not
    registered with pyplot) and the display drawn (None for the overview).
    """
    if display not in DISPLAYS:
        raise ValueError(f"display must be one of {', '.join(DISPLAYS)}, got {display!r}.")
    if scree_kind not in SCREE_KINDS:
        raise ValueError(f"scree_kind must be one of {', '.join(SCREE_KINDS)}, got "
                         f"{scree_kind!r}.")
    if score_kind not in SCORE_KINDS:
        raise ValueError(f"score_kind must be one of {', '.join(SCORE_KINDS)}, got "
                         f"{score_kind!r}.")
    alpha = float(biplot_alpha)
    if not 0 <= alpha <= 1:
        raise ValueError(f"biplot_alpha must be in [0, 1], got {biplot_alpha!r}.")
    source, with_reference = fit.drawn(show_reference)
    pair = view_axes(fit, axes)
    _use_agg()
    shown = None
    if display == "overview":
        import matplotlib.pyplot as plt

        figure = plot_overview(source, axes=pair, figsize=figsize or _OVERVIEW_FIGSIZE,
                               score_kw={"kind": score_kind},
                               scree_kw=scree_panel(scree_kind, source),
                               biplot_kw={"alpha": alpha})
        plt.close(figure)     # served as an image: pyplot must not keep it
    else:
        if display in ("score", "biplot") and pair is not None:
            pair = _score_pair(fit, display, None if axes is None else pair)
        figure, shown = _single(source, display, pair, score_kind, alpha,
                                figsize or _SINGLE_FIGSIZE, scree_kind)
    if with_reference:
        figure.text(0.5, 0.002, REFERENCE_MARK, ha="center", va="bottom",
                    color="red", fontsize=11, fontweight="bold")
    return figure, shown


def _single(source, display, pair, score_kind, alpha, figsize, scree_kind="auto"):
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, layout="constrained")
    ax = figure.add_subplot()
    if display == "scree":
        shown = ScreeDisplay.from_estimator(
            source, ax=ax, **{"cumulative": True, **scree_panel(scree_kind, source)})
    elif display == "loading":
        if pair is None:
            shown = LoadingDisplay.from_estimator(source, ax=ax, kind="heatmap")
        else:
            shown = LoadingDisplay.from_estimator(source, ax=ax, axes=pair)
    elif pair is None:
        raise ValueError(f"the {display} picture needs at least 2 components.")
    elif display == "variable":
        shown = VariableDisplay.from_estimator(source, ax=ax, axes=pair)
    elif getattr(source, "frame_", None) is None:
        raise ValueError(f"the {display} picture needs the score summary, which this "
                         "fit did not release (a score share of 0, or too little "
                         "budget for these rows: see the fit's warnings).")
    elif display == "score":
        shown = ScoreDisplay.from_estimator(source, ax=ax, kind=score_kind)
    else:
        shown = BiplotDisplay.from_estimator(source, ax=ax, alpha=alpha)
    return figure, shown


def figure_bytes(fit, display="overview", fmt="png", dpi=100, **drawing):
    """The picture of ``fit`` as a PNG, PDF or SVG file's bytes (see
    :func:`draw_figure`)."""
    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FIGURE_FORMATS)}, got {fmt!r}.")
    figure, _ = draw_figure(fit, display, **drawing)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=dpi)
    return buffer.getvalue()


def preview_png(estimator, n_samples, n_features, eps_range, size, dpi):
    """The plan of ``estimator`` across ``eps_range`` drawn as a PNG file's bytes
    (:class:`~sklearn_dppca.display.EpsPreviewDisplay`; public inputs only)."""
    _use_agg()
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, layout="constrained")
    EpsPreviewDisplay.from_estimator(estimator, n_samples, n_features,
                                     eps_range=eps_range, ax=figure.add_subplot())
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def describe_error(error):
    """A plain message for the page (an error's own message names inputs, never data)."""
    text = " ".join(str(error).split())
    if isinstance(error, BudgetExceededError):
        return f"Fit refused. {text}"
    return text


def warm_up():
    """Import the drawing stack and render a blank figure once, at start-up, so that
    the first fit's picture does not wait for them."""
    _use_agg()
    from matplotlib.figure import Figure

    figure = Figure(figsize=(1, 1))
    figure.add_subplot().set_title("warm-up")
    figure.savefig(io.BytesIO(), format="png")


def _use_agg():
    import sys

    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
