"""The explorer's page and server on Shiny for Python.

The page has three panels: the data (a source, an uploaded CSV with its declared
variables, group column and labels), the next fit (what it spends and how), and
the view of an earlier fit (free: only how released values are drawn). The
explorers, one per budget file, are shared by every browser session of the
process, so two tabs on one data set charge one budget.
"""

import os
import tempfile
import time

from .._data_sources import UserError
from ..privacy import BudgetExceededError
from ._session import (
    DISPLAYS,
    FIGURE_FORMATS,
    REFERENCE_MARK,
    SCORE_KINDS,
    SOURCES,
    Explorer,
    budget_file_for,
    data_key,
    describe_error,
    fit_defaults,
    load_source,
    split_defaults,
    warm_up,
)

try:
    from shiny import App, reactive, render, ui
except ImportError:    # the optional extra; create_app says how to install it
    App = reactive = render = ui = None

#: The value of ``data_source`` for the data the app was started with.
START = "start"
_FIGURE_DPI = 80


class _AppState:
    """What every session of one app shares: the explorers by data key.

    ``start`` is the explorer of the data the app was started with, the choice
    ``start_source`` of ``data_source`` (``"builtin"`` when started without data).
    """

    def __init__(self, start, budget, budget_dir, start_source):
        self.budget = budget
        self.budget_dir = budget_dir
        self.explorers = {start.key: start}
        self.start = start
        self.start_source = start_source

    def explorer_for(self, data):
        """The explorer of ``data``'s key (one per data set), now holding ``data``:
        the same table uploaded under another name, or picked as the page's own,
        finds the same explorer and budget file."""
        key = data_key(data, self.budget_dir)
        explorer = self.explorers.get(key)
        if explorer is None:
            explorer = Explorer(data, self.budget, budget_file_for(key, self.budget_dir),
                                key=key)
            self.explorers[key] = explorer
        else:
            # the same data set declared again (other variables): same budget
            explorer.data = data
        return explorer


# --------------------------------------------------------------------------------------
# the page
# --------------------------------------------------------------------------------------
def _data_panel(start_label):
    choices = {START: f"as started: {start_label}"} if start_label else {}
    choices.update(SOURCES)
    return ui.accordion_panel(
        "Data",
        ui.input_select("data_source", "Data source", choices,
                        selected=START if start_label else "builtin"),
        ui.input_file("upload", "CSV file (header row)", accept=[".csv", "text/csv"]),
        ui.input_text("columns", "Variables (comma-separated; empty: all but the group)",
                      ""),
        ui.input_text("group_column", "Group column", ""),
        ui.input_text("group_labels", "Group labels (comma-separated, declared)", ""),
        ui.input_action_button("load_data", "Load data"),
    )


def _fit_panel():
    # every input starts at DPPCA's default (read off the estimator)
    default = fit_defaults()
    return ui.accordion_panel(
        "Next fit (spends budget)",
        ui.input_numeric("n_components", "Components k", default["n_components"],
                         min=1, step=1),
        ui.input_text("score_axes", "Score summary axes (released for these only)",
                      default["score_axes"]),
        ui.input_numeric("eps", "eps of this fit", default["eps"], min=0, step=0.1),
        ui.input_numeric("delta", "delta of this fit", default["delta"], min=0, step=1e-6),
        ui.tags.b("Budget split (shares, normalised to sum 1)"),
        ui.input_numeric("split_loading", "loading", default["split_loading"], min=0,
                         step=0.05),
        ui.input_numeric("split_scree", "scree", default["split_scree"], min=0, step=0.05),
        ui.input_numeric("split_score", "score", default["split_score"], min=0, step=0.05),
        ui.input_numeric("split_scale", "scale (with 'scale' only)", default["split_scale"],
                         min=0, step=0.05),
        ui.input_checkbox("scale", "scale (private column spreads)", default["scale"]),
        ui.input_select("radial", "Directions", ["spherical", "clipped"],
                        selected=default["radial"]),
        ui.input_select("accounting", "Accounting", ["gdp", "basic"],
                        selected=default["accounting"]),
        ui.input_select("scree_method", "Scree method", ["clipped", "huber", "pmwm"],
                        selected=default["scree_method"]),
        ui.input_select("histogram", "Score histogram", ["additive", "sparse"],
                        selected=default["histogram"]),
        ui.input_numeric("bins", "Bins per axis (0 = auto)", default["bins"], min=0, step=1),
        ui.input_checkbox("nonprivate",
                          "store the NON-PRIVATE reference (never publish)",
                          default["nonprivate"]),
        ui.tags.b("What this fit would buy (its plan: no data read, nothing spent)"),
        ui.output_text_verbatim("plan"),
        ui.input_action_button("fit", "Fit (spends)", class_="btn-primary"),
    )


def _view_panel():
    return ui.layout_columns(
        ui.input_select("fit_choice", "Fit", {}),
        ui.input_select("display", "Picture", list(DISPLAYS)),
        ui.input_numeric("axis_x", "x axis", 1, min=1, step=1),
        ui.input_numeric("axis_y", "y axis", 2, min=1, step=1),
        ui.input_select("score_kind", "Scores as", list(SCORE_KINDS)),
        ui.input_numeric("biplot_alpha", "Biplot alpha", 1.0, min=0, max=1, step=0.25),
        ui.input_checkbox("show_reference", "show the NON-PRIVATE reference", False),
        # the reference switch on its own row: the numbers keep room for their values
        col_widths=(3, 2, 1, 1, 2, 2, 12),
    )


def _page(start_label):
    downloads = ui.layout_columns(
        ui.download_button("download_release", "Release (JSON)"),
        ui.download_button("download_png", "Figure (PNG)"),
        ui.download_button("download_pdf", "Figure (PDF)"),
        ui.download_button("download_svg", "Figure (SVG)"),
    )
    return ui.page_sidebar(
        ui.sidebar(ui.accordion(_data_panel(start_label), _fit_panel(),
                                open=True, multiple=True), width=360),
        ui.card(ui.output_text("budget_meter"), ui.output_ui("budget_details"),
                ui.output_text("message"), ui.output_ui("reference_mark")),
        ui.card(_view_panel(), ui.output_image("figure", height="auto"), downloads),
        ui.navset_tab(
            ui.nav_panel("Summary", ui.output_code("summary")),
            ui.nav_panel("Ledger", ui.output_code("ledger")),
        ),
        title="sklearn-dppca explorer: differentially private PCA on a kept budget",
    )


# --------------------------------------------------------------------------------------
# the server
# --------------------------------------------------------------------------------------
def _fit_inputs(input):
    ids = ("n_components", "score_axes", "eps", "delta", "split_loading", "split_scree",
           "split_score", "split_scale", "scale", "radial", "accounting", "scree_method",
           "histogram", "bins", "nonprivate")
    return {name: input[name]() for name in ids}


def _server_for(state):
    def server(input, output, session):
        current = reactive.value(state.start)
        revision = reactive.value(0)     # bumped when fits or the budget change
        note = reactive.value("")

        def show_fits(explorer, selected=None):
            labels = explorer.labels()
            choices = {str(i): label for i, label in enumerate(labels)}
            if selected is None and labels:
                selected = str(len(labels) - 1)
            ui.update_select("fit_choice", choices=choices, selected=selected)

        @reactive.effect
        @reactive.event(input.load_data)
        def _load():
            source = input.data_source()
            try:
                if source == START:
                    explorer = state.start
                else:
                    upload = (input.upload() or [None])[0]
                    data = load_source(
                        source, path=upload and upload["datapath"],
                        file_name=upload and upload["name"], columns=input.columns(),
                        group_column=input.group_column(),
                        group_labels=input.group_labels())
                    explorer = state.explorer_for(data)
            except (UserError, ValueError, TypeError) as error:
                note.set(f"Data not loaded: {describe_error(error)} (the data shown "
                            "before is kept.)")
                return
            current.set(explorer)
            show_fits(explorer)
            revision.set(revision() + 1)
            n, p = explorer.data.X.shape
            note.set(f"Loaded {explorer.data.source}: n = {n}, p = {p}"
                        + (f", groups {', '.join(explorer.data.labels)}"
                           if explorer.data.labels else "") + ".")

        @reactive.effect
        @reactive.event(input.scale, ignore_init=True)
        def _split_follows_scale():
            # DPPCA's default split depends on scale (the spreads take a part of
            # their own): the shares shown become its default for the new setting,
            # so that the page shows what a fit at the defaults spends
            for name, share in split_defaults(input.scale()).items():
                ui.update_numeric(name, value=share)

        @reactive.effect
        @reactive.event(input.fit)
        def _fit():
            explorer = current()
            start = time.perf_counter()
            try:
                index = explorer.fit(_fit_inputs(input))
            except BudgetExceededError as error:
                note.set(describe_error(error))
                revision.set(revision() + 1)
                return
            except (UserError, ValueError, TypeError) as error:
                note.set(f"Fit not made: {describe_error(error)}")
                revision.set(revision() + 1)
                return
            fit = explorer.fits[index]
            show_fits(explorer, str(index))
            revision.set(revision() + 1)
            notes = " ".join(fit.notes + [f"Warning: {text}" for text in fit.warnings[:2]])
            if len(fit.warnings) > 2:
                notes += f" ({len(fit.warnings) - 2} more warnings of this kind.)"
            note.set(f"{fit.label} released in {time.perf_counter() - start:.2f} s."
                        + (f" {notes}" if notes else ""))

        @render.text
        def plan():
            try:
                return current().plan(_fit_inputs(input))
            except (UserError, ValueError, TypeError) as error:
                return f"No plan: {describe_error(error)}"

        @reactive.calc
        def chosen():
            """(explorer, fit index) of the view, or (explorer, None) before a fit."""
            revision()
            explorer = current()
            choice = input.fit_choice()
            if not explorer.fits or choice in (None, ""):
                return explorer, None
            index = int(choice)
            return explorer, index if index < len(explorer.fits) else None

        def drawing():
            explorer, index = chosen()
            x, y = input.axis_x(), input.axis_y()
            axes = None if x is None or y is None else (int(x) - 1, int(y) - 1)
            alpha = input.biplot_alpha()
            return dict(axes=axes, score_kind=input.score_kind(),
                        biplot_alpha=1.0 if alpha is None else alpha,
                        show_reference=bool(input.show_reference()))

        def reference_shown():
            explorer, index = chosen()
            return (index is not None and input.show_reference()
                    and explorer.fits[index].has_reference)

        @render.text
        def budget_meter():
            revision()
            return current().meter()["text"]

        @render.ui
        def budget_details():
            revision()
            meter = current().meter()
            return ui.tags.details(
                ui.tags.summary("How the budget is counted"),
                ui.tags.p(meter["sentence"]),
                ui.tags.pre("\n".join(meter["details"]) or "No fit charged yet."),
                ui.tags.p(f"Budget file: {meter['budget_file']}"))

        @render.text
        def message():
            return note()

        @render.ui
        def reference_mark():
            if not reference_shown():
                return None
            return ui.tags.p(REFERENCE_MARK, style="color: #b00; font-weight: bold;")

        @render.image(delete_file=True)
        def figure():
            explorer, index = chosen()
            if index is None:
                return None
            try:
                data = explorer.figure_bytes(index, input.display(), "png",
                                             dpi=_FIGURE_DPI, **drawing())
            except (ValueError, TypeError) as error:
                note.set(f"Cannot draw this: {describe_error(error)}")
                return None
            handle, path = tempfile.mkstemp(suffix=".png")
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            # one picture at most 760 px wide: the whole of it fits the window
            return {"src": path, "width": "100%", "alt": f"{input.display()} picture",
                    "style": ("" if input.display() == "overview"
                              else "max-width: 760px; display: block; margin: auto;")}

        @render.code
        def summary():
            explorer, index = chosen()
            if index is None:
                return "No fit yet: set the next fit and press Fit."
            return explorer.summary(index, show_reference=bool(input.show_reference()))

        @render.code
        def ledger():
            explorer, index = chosen()
            if index is None:
                return "No fit yet."
            return explorer.ledger(index)

        def suffix():
            return "-NONPRIVATE" if reference_shown() else ""

        @render.download_button(filename=lambda: f"dppca-release-fit{chosen()[1] + 1}"
                                          f"{suffix()}.json",
                         media_type="application/json")
        def download_release():
            explorer, index = chosen()
            yield explorer.release_json(index, include_nonprivate=reference_shown())

        def figure_download(fmt):
            def content():
                explorer, index = chosen()
                yield explorer.figure_bytes(index, input.display(), fmt, **drawing())
            content.__name__ = f"download_{fmt}"
            name = (lambda: f"dppca-{input.display()}-fit{chosen()[1] + 1}{suffix()}"
                            f".{fmt}")
            return render.download_button(content, filename=name)

        for fmt in FIGURE_FORMATS:
            figure_download(fmt)      # registered under its function's name

        @reactive.effect
        def _first_view():
            # fits made by other sessions on the start data are listed at once
            show_fits(state.start)

    return server


def build_app(start, budget, budget_dir, start_source=START):
    """The Shiny App of the explorer ``start`` (the data the app starts with).

    ``start_source``: ``"builtin"`` when the app starts on the built-in data,
    else :data:`START` (the data given to the app, listed first).
    """
    warm_up()
    state = _AppState(start, budget, budget_dir, start_source)
    label = None if start_source != START else start.data.source
    return App(_page(label), _server_for(state))
