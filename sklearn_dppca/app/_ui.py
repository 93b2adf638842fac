"""The explorer's page and server on Shiny for Python.

The sidebar holds what spends: on top, always in sight, the budget meter, what the
next fit would buy and the Fit button; under them the data (a source, an uploaded
CSV with its declared variables, group column and labels), the next fit's
settings, and the releases (kept ones, and a release JSON opened to look at). The
main area is free: the view settings (which release, which axes) and one tab per
picture, each drawn at the size of the page, then the ledger, the summary and the
plan. The explorers, one per budget file, are shared by every browser session of
the process, so two tabs on one data set charge one budget; every session watches
the budget file, so its meter and list of releases follow fits made elsewhere.
"""

import io
import os
import tempfile
import time

from .._base import RADIAL_FUNCTIONS
from .._data_sources import UserError
from ..privacy import BudgetExceededError
from ._hover import hover_text, hover_targets
from ._figures import (
    DISPLAYS,
    FIGURE_FORMATS,
    REFERENCE_MARK,
    SCORE_KINDS,
    describe_error,
    draw_figure,
    figure_bytes,
    view_axes,
    warm_up,
)
from ._inputs import fit_defaults, split_defaults
from ._session import Explorer, open_release
from ._access import TokenGate, local_access
from ._sources import (
    SOURCES,
    UPLOAD,
    budget_file_for,
    data_key,
    data_preview_text,
    load_source,
    source_columns,
)

try:
    from shiny import App, reactive, render, ui
except ImportError:    # the optional extra; create_app says how to install it
    App = reactive = render = ui = None

#: The value of ``data_source`` for the data the app was started with.
START = "start"
#: Pixels per inch of the pictures on the page: one figure pixel per CSS pixel.
_FIGURE_DPI = 100
#: The titles of the pictures' tabs, one per display (in the order of DISPLAYS).
_TAB_TITLES = {"scree": "Scree", "loading": "Loadings", "variable": "Variables",
               "score": "Scores", "biplot": "Biplot", "overview": "Overview"}
#: The choices of "Scree shows" (SCREE_KINDS): the variances too, for a fit
#: whose total (so its PVE) was not bought or is not estimable; "auto" picks them
#: then, the PVE otherwise.
_SCREE_CHOICES = {"auto": "PVE, else variances", "pve": "PVE", "variance": "variances",
                  "both": "both"}
#: The prefix of the ``fit_choice`` values of releases opened from a file.
_OPENED = "opened-"
#: Seconds between two looks at the budget file (its meter and releases).
_WATCH_SECONDS = 1.0
#: A picture's height on the page: the window's less the room of what is above
#: it, at least 360 CSS pixels; at 1366 x 768 the whole picture is in the window.
_PICTURE_HEIGHT = "max(360px, calc(100vh - 320px))"
#: The overview's least width in CSS pixels: its six panels are readable from
#: there (a narrower page scrolls it sideways), and its height per width.
_OVERVIEW_WIDTH, _OVERVIEW_ASPECT = 1280, 0.66
_STYLE = """
/* the page's scrollbar always has its place: a picture is drawn at the width it
   is shown, whether or not what is above it makes the page scroll */
html, .bslib-sidebar-layout > .main { scrollbar-gutter: stable; }
.dppca-fitbar { position: sticky; top: 0; z-index: 10; padding: 0.25rem 0 0.6rem;
  background: #fff; box-shadow: -1.5rem 0 0 #fff, 1.5rem 0 0 #fff;
  border-bottom: 1px solid #d0d4d9; margin-bottom: 0.5rem; }
.dppca-meter { position: relative; height: 22px; border-radius: 4px;
  background: #e9ecef; overflow: hidden; border: 1px solid #b8bfc6; }
.dppca-meter-fill { height: 100%; }
.dppca-meter-label { font-size: 0.85rem; line-height: 1.25; margin-top: 0.2rem; }
.dppca-verdict { font-size: 0.8rem; line-height: 1.25; margin: 0.35rem 0; }
/* never hidden when empty: a hidden output is not updated, and a line that
   comes and goes would move the picture under the pointer */
.dppca-hover { height: 1.4em; overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; font-size: 0.9rem; color: #333; }
.dppca-note { color: #8a3a00; font-weight: 600; }
.dppca-refusal { color: #b00020; font-weight: 600; font-size: 0.85rem; }
/* two lines, always: the picture under it does not move when a message comes */
#message { font-size: 0.85rem; height: 2.6em; overflow-y: auto; }
.dppca-view .form-group { margin-bottom: 0.3rem; }
.dppca-overview { overflow-x: auto; }
/* the summary's first line (what was released, what would buy the rest)
   wraps at the tab's width: read at a glance, not scrolled sideways */
#summary { white-space: pre-wrap; }
.dppca-reference-off { font-size: 0.8rem; color: #6c757d; padding-top: 1.9rem; }
"""


class _AppState:
    """What every session of one app shares: the explorers by data key.

    ``start`` is the explorer of the data the app was started with, the choice
    ``start_source`` of ``data_source`` (``"builtin"`` when started without data).
    """

    def __init__(self, start, budget, budget_dir, start_source, access):
        self.access = access
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
                                key=key, reference=self.access.reference,
                                custodian=self.start.custodian)
            self.explorers[key] = explorer
        else:
            # the same data set declared again (other variables): same budget
            explorer.data = data
        return explorer


# --------------------------------------------------------------------------------------
# the page
# --------------------------------------------------------------------------------------
def _start_fields(data):
    """The group fields as the app was started (public: the declared group column
    and labels), so that an upload of the same kind of table starts with them.
    (They are read for uploads only; the variables stay empty: they would also
    pick the columns of an example data set.)"""
    if data is None or data.group_column is None:
        return {"group_column": "", "group_labels": ""}
    return {"group_column": data.group_column,
            "group_labels": ",".join(map(str, data.labels or []))}


def _data_panel(start_label, start_data=None, uploads=True):
    """The data sets; with ``uploads`` (a local explorer) also a CSV file's."""
    choices = {START: f"as started: {start_label}"} if start_label else {}
    choices.update({source: label for source, label in SOURCES.items()
                    if uploads or source != UPLOAD})
    fields = _start_fields(start_data)
    upload = [ui.input_file("upload", "CSV file (header row)",
                            accept=[".csv", "text/csv"]),
              # the custodian's name for an uploaded data set keys its budget
              ui.input_text("data_name", "Data set name (keys the upload's budget; "
                            "empty: its contents do)", "")] if uploads else []
    return ui.accordion_panel(
        "Data",
        ui.input_select("data_source", "Data source", choices,
                        selected=START if start_label else "builtin"),
        *upload,
        # the picker lists the source's declared column names (no cell is read)
        ui.input_selectize("columns", "Variables (none picked: all but the group)",
                           [], multiple=True),
        ui.input_text("group_column", "Group column", fields["group_column"]),
        ui.input_text("group_labels", "Group labels (comma-separated, declared)",
                      fields["group_labels"]),
        ui.input_action_button("load_data", "Load data"),
        ui.div(ui.output_text("data_preview"), class_="dppca-note"),
    )


def _fit_panel(budget, reference=False):
    # every input starts at DPPCA's default (read off the estimator), the eps at
    # most a share of the data set's budget; the non-private reference only where
    # the custodian turned it on (a local explorer: _access)
    default = fit_defaults(budget=budget)
    store = [ui.input_checkbox("nonprivate",
                               "store the NON-PRIVATE reference (never publish)",
                               default["nonprivate"])] if reference else []
    return ui.accordion_panel(
        "Next fit settings (spends budget)",
        ui.input_numeric("n_components", "Components k", default["n_components"],
                         min=1, step=1),
        ui.input_text("score_axes", "Score summary axes (released for these only)",
                      default["score_axes"]),
        ui.input_numeric("eps", "eps of this fit", default["eps"], min=0, step=0.1),
        ui.input_numeric("delta", "delta of this fit", default["delta"], min=0, step=1e-6),
        ui.tags.b("Budget split (fractions of eps, summing to at most 1)"),
        ui.input_numeric("split_loading", "loading", default["split_loading"], min=0,
                         step=0.05),
        ui.input_numeric("split_scree", "scree", default["split_scree"], min=0, step=0.05),
        ui.input_numeric("split_score", "score", default["split_score"], min=0, step=0.05),
        ui.input_numeric("split_scale", "scale (with 'scale' only)", default["split_scale"],
                         min=0, step=0.05),
        ui.input_checkbox("scale", "scale (private column spreads)", default["scale"]),
        ui.input_select("radial", "Directions", list(RADIAL_FUNCTIONS),
                        selected=default["radial"]),
        ui.input_select("accounting", "Accounting", ["gdp", "basic"],
                        selected=default["accounting"]),
        ui.input_select("scree_method", "Scree method", ["clipped", "huber", "pmwm"],
                        selected=default["scree_method"]),
        ui.input_select("histogram", "Score histogram", ["additive", "sparse"],
                        selected=default["histogram"]),
        ui.input_numeric("bins", "Bins per axis (0 = auto)", default["bins"], min=0, step=1),
        ui.input_text("bounds", "Public bounds (a codebook's ranges: 0:10,-5:5 or "
                      "age=17:90,...; empty: none)", default["bounds"]),
        *store,
    )


def _releases_panel():
    return ui.accordion_panel(
        "Releases (free)",
        ui.output_text("kept_releases"),
        ui.input_file("open_release", "Open a release JSON to look at it (free)",
                      accept=[".json", "application/json"]),
    )


def _fit_bar():
    """What spends, always in sight at the top of the sidebar."""
    return ui.div(
        ui.output_ui("budget_meter"),
        ui.div(ui.output_text("plan_verdict"), class_="dppca-verdict"),
        ui.input_action_button("fit", "Fit (spends)", class_="btn-primary w-100"),
        ui.div(ui.output_text("refusal"), class_="dppca-refusal"),
        class_="dppca-fitbar",
    )


def _view_row(reference=False):
    # without the reference, its place says so (and keeps the row's layout)
    shown = ui.input_checkbox("show_reference", "show NON-PRIVATE reference", False) \
        if reference else ui.div("reference: off", class_="dppca-reference-off",
                                 title="The NON-PRIVATE reference is local only, "
                                       "turned on by the custodian "
                                       "(--allow-reference).")
    return ui.layout_columns(
        ui.input_select("fit_choice", "Release shown", {}),
        ui.input_numeric("axis_x", "x axis", 1, min=1, step=1),
        ui.input_numeric("axis_y", "y axis", 2, min=1, step=1),
        ui.input_select("score_kind", "Scores as", list(SCORE_KINDS)),
        ui.input_select("scree_kind", "Scree shows", _SCREE_CHOICES),
        ui.input_numeric("biplot_alpha", "Biplot alpha", 1.0, min=0, max=1, step=0.25),
        shown,
        col_widths=(3, 1, 1, 2, 2, 2, 1),
        class_="dppca-view mb-0",
    )


def _image_file(data, alt, **attributes):
    """A rendered image for Shiny: the PNG ``data`` in a temporary file (deleted
    once sent) and its HTML attributes."""
    handle, path = tempfile.mkstemp(suffix=".png")
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
    return {"src": path, "alt": alt, **attributes}


def _picture_tab(display, title):
    overview = display == "overview"
    image = ui.output_image(f"{display}_picture", width="100%",
                            height="auto" if overview else _PICTURE_HEIGHT,
                            hover=ui.hover_opts(delay=120, delay_type="throttle"))
    return ui.nav_panel(
        title,
        ui.div(ui.output_text(f"{display}_note"), class_="dppca-note"),
        ui.div(ui.output_text(f"{display}_hover"), class_="dppca-hover"),
        ui.div(image, class_="dppca-overview") if overview else image,
        value=display,
    )


def _page(start_label, budget, start_data=None, access=None):
    access = local_access() if access is None else access
    downloads = ui.div(
        ui.download_button("download_release", "Release (JSON)", class_="btn-sm"),
        ui.download_button("download_png", "Picture (PNG)", class_="btn-sm"),
        ui.download_button("download_pdf", "Picture (PDF)", class_="btn-sm"),
        ui.download_button("download_svg", "Picture (SVG)", class_="btn-sm"),
        class_="d-flex gap-2 mt-2",
    )
    tabs = [_picture_tab(display, _TAB_TITLES[display]) for display in DISPLAYS]
    tabs += [ui.nav_panel("Ledger", ui.output_code("ledger"), value="ledger"),
             ui.nav_panel("Summary", ui.output_code("summary"), value="summary"),
             ui.nav_panel("Next fit's plan", ui.output_code("plan"),
                          ui.output_image("plan_preview_picture", width="100%",
                                          height="auto"),
                          value="plan")]
    return ui.page_sidebar(
        ui.sidebar(_fit_bar(),
                   ui.accordion(_data_panel(start_label, start_data, access.uploads),
                                _fit_panel(budget, access.reference),
                                _releases_panel(),
                                open=["Data", "Next fit settings (spends budget)"],
                                multiple=True),
                   width=380, open="always"),
        ui.tags.style(_STYLE),
        ui.div(ui.output_text("message"), ui.output_ui("reference_mark")),
        _view_row(access.reference),
        ui.navset_tab(*tabs, id="tab", selected="scree"),
        downloads,
        title="sklearn-dppca explorer: differentially private PCA on a kept budget",
        fillable=False,
    )


def _meter_bar(meter):
    """The meter as a bar: the share of the budget spent, its words under it."""
    fraction = min(max(float(meter["fraction"]), 0.0), 1.0)
    colour = "#2e7d32" if fraction < 0.5 else "#e0a100" if fraction < 0.85 else "#c62828"
    return ui.div(
        ui.div(ui.div(class_="dppca-meter-fill",
                      style=f"width: {100 * fraction:.1f}%; background: {colour};"),
               class_="dppca-meter", role="progressbar",
               aria_valuemin="0", aria_valuemax="1", aria_valuenow=f"{fraction:.4f}",
               aria_label="share of the data set's budget spent"),
        ui.div(meter["text"], class_="dppca-meter-label"),
        ui.div(meter["risk_short"], class_="dppca-meter-risk",
               style="font-size: 0.75rem; color: #444;"),
        ui.tags.details(
            ui.tags.summary("How the budget is counted", style="font-size: 0.8rem;"),
            ui.tags.p(meter["sentence"], style="font-size: 0.8rem;"),
            ui.tags.pre("\n".join(meter["details"]) or "No fit charged yet.",
                        style="font-size: 0.7rem; white-space: pre-wrap;"),
            ui.tags.p(f"Budget file: {meter['budget_file']}", style="font-size: 0.8rem;")),
    )


def _file_stamp(path):
    """What changes when a file or folder is written: its mtime and size."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


# --------------------------------------------------------------------------------------
# the server
# --------------------------------------------------------------------------------------
def _fit_inputs(input, reference):
    """The page's fit inputs; ``nonprivate`` only where the page offers it
    (``reference``), else False whatever a client sends."""
    ids = ("n_components", "score_axes", "eps", "delta", "split_loading", "split_scree",
           "split_score", "split_scale", "scale", "radial", "accounting", "scree_method",
           "histogram", "bins", "bounds")
    inputs = {name: input[name]() for name in ids}
    inputs["nonprivate"] = bool(input.nonprivate()) if reference else False
    return inputs


def _server_for(state):
    def server(input, output, session):
        current = reactive.value(state.start)
        revision = reactive.value(0)     # bumped when fits or the budget change
        note = reactive.value("")
        opened = reactive.value(())      # releases opened from files (this session)
        stamp = reactive.value(None)     # the budget file and releases folder as seen
        refused = reactive.value("")     # the last Fit's refusal, in short

        def show_fits(explorer, selected=None):
            labels = explorer.labels()
            choices = {str(i): label for i, label in enumerate(labels)}
            choices.update({f"{_OPENED}{i}": fit.label for i, fit in enumerate(opened())})
            if selected is None:
                with reactive.isolate():
                    shown = input.fit_choice() if "fit_choice" in input else None
                selected = shown if shown in choices else \
                    (str(len(labels) - 1) if labels else None)
            ui.update_select("fit_choice", choices=choices, selected=selected)

        def files_now(explorer):
            return (explorer.budget_file, _file_stamp(explorer.budget_file),
                    _file_stamp(explorer.releases_dir))

        @reactive.effect
        def _watch():
            # every session looks at the budget file and the releases folder: a
            # fit by another session or process moves this meter and lists its
            # release within a second
            reactive.invalidate_later(_WATCH_SECONDS)
            explorer = current()
            seen = files_now(explorer)
            with reactive.isolate():
                changed = seen != stamp()
            if changed:
                stamp.set(seen)
                explorer.refresh_releases()
                show_fits(explorer)      # (another session's fits too; keeps the choice)
                with reactive.isolate():
                    revision.set(revision() + 1)

        @reactive.effect
        def _offer_columns():
            # the picker offers the chosen source's column names (a data set's
            # declared names, an uploaded file's header: no cell is read)
            source = input.data_source()
            upload = (input.upload() or [None])[0] if state.access.uploads else None
            try:
                names = source_columns(source, path=upload and upload["datapath"],
                                       file_name=upload and upload["name"])
            except UserError:
                names = []        # (Load data says what is wrong with the file)
            ui.update_selectize("columns", choices=names, selected=[])

        @render.text
        def data_preview():
            # names and types, never a value: what the next fit will read
            revision()
            return data_preview_text(current().data)

        @reactive.effect
        @reactive.event(input.load_data)
        def _load():
            source = input.data_source()
            try:
                if source == START:
                    explorer = state.start
                elif source == UPLOAD and not state.access.uploads:
                    raise UserError("uploads are off in an explorer served beyond this "
                                    "computer: it serves the data sets its custodian "
                                    "started it with.")
                else:
                    upload = (input.upload() or [None])[0]
                    data = load_source(
                        source, path=upload and upload["datapath"],
                        file_name=upload and upload["name"],
                        columns=tuple(input.columns() or ()),
                        group_column=input.group_column(),
                        group_labels=input.group_labels(),
                        data_name=input.data_name() if source == UPLOAD else "")
                    explorer = state.explorer_for(data)
            except (UserError, ValueError, TypeError) as error:
                note.set(f"Data not loaded: {describe_error(error)} (the data shown "
                         "before is kept.)")
                return
            current.set(explorer)
            explorer.refresh_releases()
            show_fits(explorer, str(len(explorer.fits) - 1) if explorer.fits else None)
            stamp.set(files_now(explorer))     # listed: nothing for the watch to do
            refused.set("")
            revision.set(revision() + 1)
            n, p = explorer.data.X.shape
            kept = len(explorer.fits)
            note.set(f"Loaded {explorer.data.source}: n = {n}, p = {p}"
                     + (f", groups {', '.join(explorer.data.labels)}"
                        if explorer.data.labels else "") + "."
                     + (f" {kept} release{'s' * (kept != 1)} of this data set listed."
                        if kept else ""))

        @reactive.effect
        @reactive.event(input.open_release)
        def _open_release():
            upload = (input.open_release() or [None])[0]
            if upload is None:
                return
            try:
                fit = open_release(upload["datapath"], upload["name"])
            except UserError as error:
                note.set(f"Release not opened: {describe_error(error)}")
                return
            opened.set(opened() + (fit,))
            show_fits(current(), f"{_OPENED}{len(opened()) - 1}")
            note.set(f"Opened {upload['name']} to look at it: drawn from the file, "
                     "nothing spent.")

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
                index = explorer.fit(_fit_inputs(input, state.access.reference))
            except BudgetExceededError as error:
                note.set(describe_error(error))
                refused.set("Fit refused: it needs more than is left of the budget. "
                            "Nothing was spent.")
                revision.set(revision() + 1)
                return
            except (UserError, ValueError, TypeError) as error:
                note.set(f"Fit not made: {describe_error(error)}")
                refused.set("")
                revision.set(revision() + 1)
                return
            refused.set("")
            fit = explorer.fits[index]
            show_fits(explorer, str(index))
            # the new fit is shown: the watch must not list the fits again before
            # the page has sent that choice back (it would show the one before)
            stamp.set(files_now(explorer))
            revision.set(revision() + 1)
            notes = " ".join(fit.notes + [f"Warning: {text}" for text in fit.warnings[:2]])
            if len(fit.warnings) > 2:
                notes += f" ({len(fit.warnings) - 2} more warnings of this kind.)"
            note.set(f"{fit.label} released in {time.perf_counter() - start:.2f} s "
                     f"and kept beside the budget file."
                     + (f" {notes}" if notes else ""))

        @reactive.calc
        def planned():
            revision()          # what is left changes with every charge, anywhere
            try:
                return current().plan(_fit_inputs(input, state.access.reference))
            except (UserError, ValueError, TypeError) as error:
                return f"No plan: {describe_error(error)}"

        @render.code
        def plan():
            # the plan, then how it changes with eps (public, free: nothing read)
            text = planned()
            if text.startswith("No plan"):
                return text
            try:
                preview = current().eps_preview(_fit_inputs(input, state.access.reference))
            except (UserError, ValueError, TypeError):
                return text
            return f"{text}\n\n{preview}"

        @render.image(delete_file=True)
        def plan_preview_picture():
            # the preview across eps drawn: public inputs only, nothing spent
            try:
                data = current().eps_preview_picture(
                    _fit_inputs(input, state.access.reference))
            except (UserError, ValueError, TypeError):
                return None
            return _image_file(data, "the next fit's plan across eps",
                               style="display: block; max-width: 820px;", width="100%")

        @render.text
        def plan_verdict():
            # the plan's last lines: what the next fit buys and what it cannot, and
            # whether the budget has room for it
            return " ".join(planned().splitlines()[-2:]) + \
                " (In full: the tab 'Next fit's plan'.)"

        @reactive.calc
        def chosen():
            """The release shown (a fit of the data set, or an opened file), its
            index among the data set's fits (None for an opened file), or
            (None, None) before any."""
            revision()
            explorer = current()
            choice = input.fit_choice()
            if choice and choice.startswith(_OPENED):
                files = opened()
                number = int(choice[len(_OPENED):])
                return (files[number], None) if number < len(files) else (None, None)
            if not explorer.fits or choice in (None, ""):
                return None, None
            index = int(choice)
            return (explorer.fits[index], index) if index < len(explorer.fits) \
                else (None, None)

        def reference_asked():
            # only where the page offers the reference: a client that sends the
            # input anyway is not heard
            return state.access.reference and bool(input.show_reference())

        def drawing():
            x, y = input.axis_x(), input.axis_y()
            axes = None if x is None or y is None else (int(x) - 1, int(y) - 1)
            alpha = input.biplot_alpha()
            return dict(axes=axes, score_kind=input.score_kind(),
                        scree_kind=input.scree_kind(),
                        biplot_alpha=1.0 if alpha is None else alpha,
                        show_reference=reference_asked())

        def reference_shown():
            fit, _ = chosen()
            return fit is not None and reference_asked() and fit.has_reference

        @render.ui
        def budget_meter():
            revision()
            return _meter_bar(current().meter())

        @render.text
        def kept_releases():
            revision()
            explorer = current()
            kept = sum(1 for fit in explorer.fits if fit.path)
            text = (f"{kept} release{'s' * (kept != 1)} of this data set kept in "
                    f"{os.path.basename(explorer.releases_dir)} (beside its budget "
                    "file; listed under 'Release shown').")
            if explorer.unreadable:
                text += (f" Not releases, skipped: "
                         f"{', '.join(sorted(explorer.unreadable)[:5])}.")
            return text

        @render.text
        def message():
            return note()

        @render.text
        def refusal():
            return refused()

        @render.ui
        def reference_mark():
            if not reference_shown():
                return None
            return ui.tags.p(REFERENCE_MARK, style="color: #b00; font-weight: bold;")

        for display in DISPLAYS:
            _picture_outputs(display, session, input, chosen, drawing)

        @render.code
        def summary():
            fit, _ = chosen()
            if fit is None:
                return "No release yet: set the next fit and press Fit."
            source, _ = fit.drawn(reference_asked())
            return str(source.summary())

        @render.code
        def ledger():
            fit, index = chosen()
            if fit is None:
                return "No release yet."
            if index is None:
                return "\n".join(fit.ledger_lines() + [
                    "", "An opened file: looked at, never charged to this data set."])
            return current().ledger(index)

        def suffix():
            return "-NONPRIVATE" if reference_shown() else ""

        def file_stem():
            fit, index = chosen()
            return f"fit{index + 1}" if index is not None else "opened"

        def shown_display():
            tab = input.tab()
            return tab if tab in DISPLAYS else "overview"

        @render.download_button(filename=lambda: f"dppca-release-{file_stem()}"
                                                 f"{suffix()}.json",
                                media_type="application/json")
        def download_release():
            fit, _ = chosen()
            yield fit.release_json(include_nonprivate=reference_shown())

        def figure_download(fmt):
            def content():
                fit, _ = chosen()
                yield figure_bytes(fit, shown_display(), fmt, **drawing())
            content.__name__ = f"download_{fmt}"
            name = (lambda: f"dppca-{shown_display()}-{file_stem()}{suffix()}.{fmt}")
            return render.download_button(content, filename=name)

        for fmt in FIGURE_FORMATS:
            figure_download(fmt)      # registered under its function's name

    return server


def _picture_outputs(display, session, input, chosen, drawing):
    """The outputs of one picture's tab: the picture drawn at the size of its
    place on the page, why it cannot be drawn (empty when it can), and what the
    pointer is on."""
    image_id = f"{display}_picture"

    @reactive.calc
    def drawn():
        """``(PNG bytes or None, hover targets, note)`` for the page as it is."""
        fit, _ = chosen()
        if fit is None:
            return None, None, "No release yet: set the next fit and press Fit (spends)."
        width = session.clientdata.output_width(image_id)
        height = session.clientdata.output_height(image_id)
        if display == "overview" and width:
            # as wide as its place, and never narrower than where it is readable
            width = max(width, _OVERVIEW_WIDTH)
            height = round(_OVERVIEW_ASPECT * width)
        if not width or not height:
            return None, None, ""
        try:
            figure, shown = draw_figure(fit, display, figsize=(
                width / _FIGURE_DPI, height / _FIGURE_DPI), **drawing())
        except (ValueError, TypeError) as error:
            return None, None, f"Cannot draw this: {describe_error(error)}"
        figure.set_dpi(_FIGURE_DPI)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=_FIGURE_DPI)
        pair = view_axes(fit, drawing()["axes"]) if display in ("loading", "variable") \
            else fit.release.axes_
        return buffer.getvalue(), hover_targets(figure, display, shown, fit.release,
                                                pair), ""

    def picture():
        data, _, _ = drawn()
        if data is None:
            return None
        # drawn at the size of its place: one figure pixel per CSS pixel
        return _image_file(data, f"{display} picture", style="display: block;",
                           **({} if display == "overview" else {"width": "100%"}))

    picture.__name__ = image_id
    render.image(delete_file=True)(picture)

    def picture_note():
        return drawn()[2]

    picture_note.__name__ = f"{display}_note"
    render.text(picture_note)

    def pointed():
        hover = input[f"{image_id}_hover"]()
        _, targets, _ = drawn()
        return hover_text(targets, hover)

    pointed.__name__ = f"{display}_hover"
    render.text(pointed)


def build_app(start, budget, budget_dir, start_source=START, access=None):
    """The Shiny App of the explorer ``start`` (the data the app starts with).

    ``start_source``: ``"builtin"`` when the app starts on the built-in data,
    else :data:`START` (the data given to the app, listed first). ``access``
    (:mod:`._access`): local (the default, no reference) or served; a served
    app is returned behind its token's gate.
    """
    warm_up()
    access = local_access() if access is None else access
    state = _AppState(start, budget, budget_dir, start_source, access)
    label, data = (None, None) if start_source != START else (start.data.source,
                                                               start.data)
    app = App(_page(label, budget, data, access), _server_for(state))
    return TokenGate(app, access.token) if access.served else app
