"""The printed summary of a fit or a release, and the text of its privacy ledger.

:func:`summarize` renders the ``summary()`` of every estimator and of
:class:`~sklearn_dppca.ReleasedPCA` (as the R package dppca's ``summary()``), from
the released attributes alone: a loaded release prints what its estimator printed.
:func:`ledger_table` is the ledger as the command line prints it; its cells
(:func:`ledger_row`, :func:`format_value`) also fill the overview figure's table.
"""

import html

import numpy as np

from ._names import feature_names
from ._algorithms._projection import scale_origins
from ._validation import above_noise


def composition_label(entries):
    """How a ledger's total was composed, in words (for tables and summaries)."""
    if any(entry.get("composition") == "gdp" for entry in entries):
        return "Gaussian parts composed in mu-GDP"
    return "basic composition"

_MAX_ROWS = 6
_MAX_COLUMNS = 4


class FitSummary:
    """Summary of a fitted estimator: titled sections of text lines and tables.

    ``str()`` gives the plain-text report; Jupyter renders ``_repr_html_``.
    Building it computes nothing new and spends no privacy budget.

    Every ``summary()`` of the estimators and of
    :class:`~sklearn_dppca.ReleasedPCA` returns one; you rarely build it yourself.

    Parameters
    ----------
    title : str
        The title of the report.
    sections : list of (heading, content)
        ``heading`` is a string (empty: no heading); ``content`` is a list of
        strings (lines) or a table given as ``(row_names, column_names, values)``.
    status : str, default=None
        The first line of the report, above the title: which parts of the fit
        were released and which were not estimable. None: no such line.

    Attributes
    ----------
    title : str
        The title of the report.
    sections : list of (heading, content)
        The sections, as given.
    status : str or None
        The line above the title.

    See Also
    --------
    DPPCA.summary : The summary of a fitted DPPCA.
    ReleasedPCA.summary : The summary of a loaded release.

    Examples
    --------
    >>> from sklearn_dppca import FitSummary
    >>> report = FitSummary("Budget", [("Spent", ["eps = 1"])])
    >>> print(report)
    Budget
    <BLANKLINE>
    Spent
    eps = 1
    """

    def __init__(self, title, sections, status=None):
        self.title = title
        self.sections = sections
        self.status = status

    def __str__(self):
        lines = ([] if self.status is None else [self.status]) + [self.title]
        for heading, content in self.sections:
            lines.append("")
            if heading:
                lines.append(heading)
            if isinstance(content, tuple):
                lines.extend(_format_table(*content))
            else:
                lines.extend(content)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        parts = ([] if self.status is None else
                 [f"<p><b>{html.escape(self.status)}</b></p>"])
        parts.append(f"<h4>{html.escape(self.title)}</h4>")
        for heading, content in self.sections:
            if heading:
                parts.append(f"<p><b>{html.escape(heading)}</b></p>")
            if isinstance(content, tuple):
                parts.append(_html_table(*content))
            else:
                parts.append("<br>".join(html.escape(line) for line in content))
        return "\n".join(parts)


def _cell(value):
    """A table cell: the number, or "not estimable" (never "nan")."""
    return f"{value:.3f}" if np.isfinite(value) else NOT_ESTIMABLE


def _format_table(row_names, column_names, values):
    cells = [[_cell(value) for value in row] for row in np.asarray(values, dtype=float)]
    name_width = max([len(str(name)) for name in row_names] + [1])
    widths = [
        max(len(str(column)), *(len(row[j]) for row in cells)) if cells else len(str(column))
        for j, column in enumerate(column_names)
    ]
    header = " " * name_width + "".join(
        f" {str(c):>{w}}" for c, w in zip(column_names, widths)
    )
    body = [
        f"{str(name):<{name_width}}" + "".join(f" {cell:>{w}}" for cell, w in zip(row, widths))
        for name, row in zip(row_names, cells)
    ]
    return [header] + body


def _html_table(row_names, column_names, values):
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in column_names)
    rows = "".join(
        f"<tr><th>{html.escape(str(name))}</th>"
        + "".join(f"<td>{_cell(value)}</td>" for value in row)
        + "</tr>"
        for name, row in zip(row_names, np.asarray(values, dtype=float))
    )
    return f"<table><tr><th></th>{head}</tr>{rows}</table>"


def _directions_table(components, names):
    """The first 6 variables x first 4 PCs of the directions, as the R package dppca prints them."""
    n_rows = min(_MAX_ROWS, components.shape[1])
    n_columns = min(_MAX_COLUMNS, components.shape[0])
    heading = (
        f"Private PC directions  (first {n_rows} variables x first {n_columns} PCs):"
    )
    table = (
        list(names[:n_rows]),
        [f"PC{l + 1}" for l in range(n_columns)],
        components[:n_columns, :n_rows].T,
    )
    return heading, table


# --------------------------------------------------------------------------------------
# the summary of a fit or a release
# --------------------------------------------------------------------------------------
_TITLES = {
    "DPKendallDirections": "DP PC Directions Summary",
    "DPScree": "DP Scree Summary",
    "DPPCA": "DP PCA Summary",
}
_RELEASE_TITLE = "DP PCA Release Summary"


def summarize(fitted):
    """The :class:`FitSummary` of a fitted estimator or a loaded release.

    Sections appear for what was released: the budget by part (DPPCA), the
    private variances (DPScree, DPPCA), the score summary (DPPCA); then the
    directions and the total spend. Nothing is recomputed and no budget is spent.

    Parameters
    ----------
    fitted : DPKendallDirections, DPScree, DPPCA or ReleasedPCA
        Fitted.

    Returns
    -------
    FitSummary
    """
    facts = [f"Data: {fitted.n_samples_} observations x {fitted.n_features_in_} variables",
             f"Components: {fitted.n_components_} PC directions"]
    released_from = getattr(fitted, "estimator_class_", None)    # a ReleasedPCA
    if released_from is not None:
        title = _RELEASE_TITLE
        facts.insert(0, f"Estimator: {released_from}")
    else:
        title = _TITLES.get(type(fitted).__name__, _RELEASE_TITLE)
    sections = [(None, facts)]
    if getattr(fitted, "budget_", None):
        sections.append(("Privacy budget by part:", _budget_lines(fitted.budget_)))
    if getattr(fitted, "explained_variance_", None) is not None:
        sections.append(("Private variances (post-processed):", _scree_lines(fitted)))
    if getattr(fitted, "frame_", None) is not None:
        sections.append(("Score summary:", _score_lines(fitted)))
    elif _score_ran(fitted):
        sections.append(("Score summary:", [f"  {NOT_ESTIMABLE}: the private frame of "
                                            "the scores was not found"]))
    sections.append(_directions_table(fitted.components_, feature_names(fitted)))
    noisy = _loadings_in_noise(fitted)
    if noisy:
        sections.append((None, [noisy]))
    sections.append((None, [
        _budget_line(*fitted.privacy_spent_),
        _reference_line(getattr(fitted, "nonprivate_", None) is not None),
        "The full direction matrix is available in components_.",
    ]))
    return FitSummary(title, sections, status=released_line(fitted))


#: What the summary and the displays write in place of a quantity the fit could
#: not estimate (a NaN attribute): never "nan".
NOT_ESTIMABLE = "not estimable"

#: The parts of a fit, the ledger (or plan) steps that buy each, by prefix.
_PART_STEPS = {
    # ("directions": DPScree's name of the part in releases before 0.1)
    "directions": ("loading", "directions"),
    "variances": ("scree/variances", "scree/statistic", "scree"),
    "PVE": ("scree",),
    "score summary": ("score",),
}


def _steps(fitted):
    ledger = getattr(fitted, "privacy_ledger_", None) or ()
    return [str(item.get("step", "")) for item in ledger if hasattr(item, "get")]


def _score_ran(fitted):
    """Whether the fit spent budget on a score summary (a ``score`` step), or its
    plan had one that it could not buy."""
    plan = getattr(fitted, "plan_", None)
    planned = [] if plan is None else [str(step) for step in plan["step"]]
    # (a release has no plan: a DPPCA's budget shows a score part it did not buy)
    unbought = (getattr(fitted, "budget_", None) or {}).get("score") == (0.0, 0.0)
    return unbought or any(step == "score" or step.startswith("score/")
                           for step in list(_steps(fitted)) + planned)


def _finite(value):
    if value is None:
        return None
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None


def _components_text(mask):
    return ", ".join(f"PC{l + 1}" for l in np.flatnonzero(mask))


def _lost_loadings(fitted):
    """Mask of the loadings within their noise: not two noise sds
    (``components_noise_scale_``) above zero in size, the rule of every release
    (:func:`~sklearn_dppca._validation.above_noise`); None without sds."""
    noise = _finite(getattr(fitted, "components_noise_scale_", None))
    components = _finite(fitted.components_)
    if noise is None or noise.shape != components.shape:
        return None
    with np.errstate(invalid="ignore"):
        return ~above_noise(np.abs(components), noise)


def _loadings_in_noise(fitted):
    """A line counting the loadings within their noise (:func:`_lost_loadings`),
    or None."""
    lost = _lost_loadings(fitted)
    if lost is None or not lost.any():
        return None
    return (f"{int(lost.sum())} of {lost.size} loadings are within their noise "
            "(|loading| within 2 noise sds, components_noise_scale_): read them as "
            "noise.")


def _parts(fitted):
    """``(released, not_estimable)``: lists of the parts of the fit, read from
    its attributes (finite ``components_``, finite ``explained_variance_`` and
    ``explained_variance_ratio_``, a ``frame_``)."""
    released, missing = [], []

    def sort(name, values):
        ok = np.isfinite(values)
        if ok.all():
            released.append(name)
        elif not ok.any():
            missing.append(name)
        else:
            released.append(f"{name} of {_components_text(ok)}")
            missing.append(f"{name} of {_components_text(~ok)}")

    components = _finite(fitted.components_)
    sort("directions", np.all(np.isfinite(components), axis=1))
    lost = _lost_loadings(fitted)
    if lost is not None and lost.all() and "directions" in released:
        released[released.index("directions")] = (
            "directions (every loading within its noise)")
    variances = _finite(getattr(fitted, "explained_variance_", None))
    if variances is not None:
        sort("variances", np.atleast_1d(variances))
        ratio = _finite(getattr(fitted, "explained_variance_ratio_", None))
        if ratio is not None:
            sort("PVE", np.atleast_1d(ratio))
    if getattr(fitted, "frame_", None) is not None:
        released.append("score summary")
    elif _score_ran(fitted):
        missing.append("score summary")
    return released, missing


def _unbought_rows(fitted, part, column):
    """The ``column`` of the ``plan_`` rows of ``part``'s steps that the fit did
    not run (empty without a plan or that column)."""
    plan = getattr(fitted, "plan_", None)
    if plan is None or column not in plan:
        return []
    prefixes = _PART_STEPS.get(part.split(" of ")[0], ())
    return [value for step, was_released, value in zip(
                plan["step"], plan["released"], plan[column])
            if not bool(was_released)
            and any(str(step) == p or str(step).startswith(p + "/") for p in prefixes)]


def _eps_needed(fitted, part):
    """The total eps at which the steps of ``part`` would become informative,
    from ``plan_`` (its ``released`` and ``eps_needed`` columns); None without
    a plan or a finite figure."""
    try:
        needed = [float(eps) for eps in _unbought_rows(fitted, part, "eps_needed")
                  if eps is not None and np.isfinite(float(eps))]
    except (TypeError, ValueError):
        return None
    return max(needed) if needed else None


def _split_needed(fitted, part):
    """The split that would buy ``part`` at the fit's eps (``plan_``'s
    ``split_needed``, as ``--budget-split`` spells it), or None."""
    splits = [str(text) for text in _unbought_rows(fitted, part, "split_needed") if text]
    return splits[0] if splits else None


def released_line(fitted):
    """``"Released: directions; not estimable at eps = 1 with n = 150: variances,
    PVE, score summary"``: which parts of a fit were released and which were not
    (from its attributes; with ``plan_``, the eps each missing part needs).

    Parameters
    ----------
    fitted : DPKendallDirections, DPScree, DPPCA or ReleasedPCA
        Fitted.

    Returns
    -------
    str
    """
    released, missing = _parts(fitted)
    line = "Released: " + (", ".join(released) if released else "nothing")
    if missing:
        eps = float(fitted.privacy_spent_[0])
        line += (f"; {NOT_ESTIMABLE} at eps = {eps:g} with n = {fitted.n_samples_}: "
                 + ", ".join(_missing_texts(fitted, missing)))
    return line


def _missing_texts(fitted, missing):
    """``["variances and PVE (needs eps about 1.5, or at this eps the split
    ...)", "score summary"]``: the parts not released, each with what its plan
    says would buy it; neighbours that the same would buy (the variances and
    the PVE of an unbought scree) are named together."""
    texts, needs = [], []
    for part in missing:
        needed = _eps_needed(fitted, part)
        need = None if needed is None else _needs_text(needed, _split_needed(fitted, part))
        if needs and need is not None and need == needs[-1]:
            texts[-1] += f" and {part}"
        else:
            texts.append(part)
            needs.append(need)
    return [text if need is None else f"{text} ({need})" for text, need in zip(texts, needs)]


def _params(fitted):
    """The public parameters of the fit (a release stores them)."""
    params = getattr(fitted, "estimator_params_", None)
    return params if params is not None else fitted.get_params(deep=False)


def _budget_lines(budget):
    return [f"  {part:<8} eps = {eps:<10.4g} delta = {delta:.3g}"
            for part, (eps, delta) in budget.items()]


#: What a variance's or the total's sd holds (``noise_scale_``,
#: ``total_variance_noise_scale_``): the noise, and for a clipped one the
#: clipping allowance (:mod:`~sklearn_dppca._algorithms._clip_bias`).
_SCREE_SD = "sd: noise and clipping"


def _noise_text(noise, what="noise sd"):
    """`` +- sd (what)``; a variance's sd also carries its clipping allowance."""
    if noise is None or not np.isfinite(float(noise)):
        return ""
    return f" +- {float(noise):.3g} ({what})"


def _share_sd_text(sd):
    """`` +- sd%`` of a PVE (its sd in points: noise and clipping, as the
    variance's), or nothing where no finite sd is known."""
    if sd is None or not np.isfinite(float(sd)):
        return ""
    return f" +- {100 * float(sd):.2g}%"


def _number(value, spec):
    """``value`` in ``spec``, or "not estimable" for NaN (never "nan")."""
    return format(float(value), spec) if np.isfinite(float(value)) else NOT_ESTIMABLE


def _box_form_text(fitted):
    """How the scree used the declared box, read off the ledger's steps and the
    clip bounds (None where it read no moments about the box's mean: no mean
    released, or a first part of it that showed the search the quieter, whose
    clip bounds the fit then keeps)."""
    steps = {entry["step"] for entry in getattr(fitted, "privacy_ledger_", None) or []}
    bounds = getattr(fitted, "clip_bounds_", None)
    if "scree/mean" not in steps:
        return None
    if bounds is not None:
        return _mixed_form_text(np.isnan(np.asarray(bounds, dtype=float)))
    searched = any(step.startswith("scree/") and "clip bound" in step for step in steps)
    why = ("chosen over the searched bounds: its noise was the less, counting the "
           "clipping such a search typically leaves and the clipping the tail "
           "counts proved, or those counts showed a heavy tail"
           if searched
           else "no search could be bought")
    return f"Variances and total: moments about the declared box's private mean ({why})"


def _mixed_form_text(from_box):
    """The line of a scree whose variances took both forms (a clip bound NaN
    where the box's moments gave it), or None where none took the box's."""
    if np.ndim(from_box) != 1 or not np.any(from_box):
        return None
    def names(mask):
        return ", ".join(f"PC{index + 1}" for index in np.flatnonzero(mask))

    return (f"Variances of {names(from_box)} and total: moments about the declared "
            "box's private mean (a heavy tail past the searched bound); "
            f"{names(~from_box)}: clipped at their searched bounds")


def _scree_lines(fitted):
    """The scree method, each variance with its noise sd and PVE, the total."""
    variances = fitted.explained_variance_
    noise = getattr(fitted, "noise_scale_", None)
    noise = [None] * len(variances) if noise is None else np.broadcast_to(
        noise, variances.shape)
    lines = [f"Scree method: {fitted.method_label_}; PVE is the share of the private "
             "total variance"]
    form = _box_form_text(fitted)
    if form is not None:
        lines.append(f"  {form}")
    ratio_noise = getattr(fitted, "explained_variance_ratio_noise_scale_", None)
    ratio_noise = [None] * len(variances) if ratio_noise is None else ratio_noise
    for l, (variance, sd, ratio, ratio_sd) in enumerate(
            zip(variances, noise, fitted.explained_variance_ratio_, ratio_noise)):
        pve = (f"{100 * ratio:.1f}%{_share_sd_text(ratio_sd)}" if np.isfinite(ratio)
               else NOT_ESTIMABLE)
        lines.append(f"  PC{l + 1}: variance {_number(variance, '.4g')}"
                     f"{_noise_text(sd, _SCREE_SD) if np.isfinite(variance) else ''}"
                     f"  PVE {pve}")
    total = fitted.total_variance_
    total_sd = _noise_text(fitted.total_variance_noise_scale_, _SCREE_SD) \
        if np.isfinite(total) else ""
    lines.append(f"  Total variance {_number(total, '.4g')}{total_sd}")
    scaling = _scaling_text(getattr(fitted, "scale_", None),
                            getattr(fitted, "scale_origin_", None), feature_names(fitted))
    if scaling is not None:
        lines.append(f"  {scaling}")
    return lines


def _score_lines(fitted):
    """Axes, frame, histogram and its threshold, groups, synthetic points."""
    center, half = fitted.frame_.center, fitted.frame_.half_width
    threshold = fitted.histogram_threshold_
    groups = fitted.groups_
    synthetic = fitted.synthetic_scores_
    return [
        f"  axes: PC{fitted.axes_[0] + 1} x PC{fitted.axes_[1] + 1}",
        f"  frame: centre ({center[0]:.4g}, {center[1]:.4g}), half width {half:.4g}",
        f"  histogram: {_params(fitted).get('histogram', '?')}, "
        f"bins {np.shape(fitted.score_histogram_)}",
        "  cell threshold: "
        + ("none" if threshold is None else f"{threshold:.4g} noisy counts")
        + "; pure-noise cells expected to pass (whole grid): "
        f"{fitted.expected_noise_cells_:.2g}",
        f"  groups: {'none' if groups is None else ', '.join(map(str, groups))}",
        f"  synthetic points: {0 if synthetic is None else len(synthetic)}",
    ]


def _budget_line(eps, delta):
    return f"Total privacy budget: eps = {eps:g} ; delta = {delta:g}"


def _reference_line(nonprivate):
    return "Non-private reference: " + ("stored (not private)" if nonprivate else "not stored")


# --------------------------------------------------------------------------------------
# the privacy ledger as text
# --------------------------------------------------------------------------------------
#: The columns a ledger row may have: heading -> (key of the entry, number format).
_LEDGER_COLUMNS = {
    "step": ("step", None),
    "mechanism": ("mechanism", None),
    "eps": ("eps", ".4g"),
    "delta": ("delta", ".3g"),
    "sensitivity": ("sensitivity", ".4g"),
    "noise scale": ("noise_scale", ".4g"),
    "mu": ("mu", ".4g"),
}


def format_value(value, spec):
    """``value`` formatted as a number with ``spec``, as text if it is not one, or
    ``"-"`` for None."""
    try:
        return format(float(value), spec)
    except (TypeError, ValueError):
        return "-" if value is None else str(value)


def ledger_row(entry, columns=tuple(_LEDGER_COLUMNS)):
    """The cells of one ledger entry under the headings ``columns`` (the
    sensitivity with its norm)."""
    cells = []
    for column in columns:
        key, spec = _LEDGER_COLUMNS[column]
        value = entry.get(key)
        cell = str(entry.get(key, "")) if spec is None else format_value(value, spec)
        if column == "sensitivity" and entry.get("sensitivity_norm"):
            cell += f" ({entry['sensitivity_norm']})"
        cells.append(cell)
    return cells


def spent_cells(spent):
    """The total ``(eps, delta)`` as the two cells of a ledger's last row."""
    return [format_value(spent[0], ".4g"), format_value(spent[1], ".3g")]


def ledger_table(ledger, spent):
    """The privacy ledger as a small text table (one row per mechanism call).

    Parameters
    ----------
    ledger : list of dict
        The ``privacy_ledger_`` of a fit or a release.
    spent : tuple (eps, delta)
        Its ``privacy_spent_``.

    Returns
    -------
    str
    """
    header = list(_LEDGER_COLUMNS)
    rows = [ledger_row(entry) for entry in ledger]
    rows.append([f"total ({composition_label(ledger)})", "", *spent_cells(spent),
                 "", "", ""])
    widths = [max(len(row[j]) for row in [header] + rows) for j in range(len(header))]

    def line(row):
        return "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join(["Privacy ledger:", line(header), rule]
                     + [line(row) for row in rows[:-1]] + [rule, line(rows[-1])])


#: The parts of a fit in the words of a summary ("directions": DPScree's name of
#: the loading part in releases written before 0.1, still read).
_PART_WORDS = {"loading": "directions", "directions": "directions",
               "scale": "column spreads", "scree": "variances and PVE",
               "score": "score summary"}


def plan_text(plan, eps, n_samples):
    """The plan of a fit (``est.plan(n, p)`` or a fitted ``plan_``) as text: one
    line per step, then which parts are not estimable and the eps each needs."""
    in_units = _data_noise(plan)
    lines = [f"{'step':36s} {'mechanism':22s} {'eps':>8s} {'mu':>8s} "
             f"{'noise sd':>9s}" + (f" {'in units':>9s}" if in_units is not None else "")
             + f" {'released':>8s} {'needs eps':>9s}"]
    for position, row in enumerate(plan.itertuples(index=False)):
        mu = "" if row.mu != row.mu else f"{row.mu:.3g}"
        needed = "" if row.eps_needed != row.eps_needed else f"{row.eps_needed:.3g}"
        units = "" if in_units is None else f" {_number_or_blank(in_units[position]):>9s}"
        lines.append(f"{row.step[:36]:36s} {row.mechanism[:22]:22s} {row.eps:8.3g} "
                     f"{mu:>8s} {_number_or_blank(row.noise_sd):>9s}{units} "
                     f"{('yes' if row.released else 'no'):>8s} {needed:>9s}")
    if in_units is not None:
        lines.append(_IN_UNITS)
    missing = _not_estimable(plan)
    if missing:
        splits = _splits_needed(plan)
        listed = ", ".join(_part_needs(part, needed, splits.get(part))
                           for part, needed in missing.items())
        lines.append(f"Not estimable at eps = {eps:g} with n = {n_samples}: {listed}.")
    else:
        lines.append(f"Every part is bought at eps = {eps:g} with n = {n_samples}.")
    lines.append(_BOUGHT_IS_NO_PROMISE)
    return "\n".join(lines)


def _splits_needed(plan):
    """Per part, the split that would buy it at the plan's eps, as text (the
    ``split_needed`` column of ``plan(n, p, splits=True)``; none without it)."""
    if "split_needed" not in plan:
        return {}
    return {str(step).split("/")[0]: str(text)
            for step, text in zip(plan["step"], plan["split_needed"]) if text}


def _part_needs(part, eps_needed, split=None):
    """``"variances and PVE (needs eps about 1.5, or at this eps the split
    loading=0.29,scree=0.42,score=0.29)"``: what would buy a part of a plan
    (``split``: the top-level split that would at this eps, as text, or
    None)."""
    return f"{_PART_WORDS.get(part, part)} ({_needs_text(eps_needed, split)})"


def _needs_text(eps_needed, split=None):
    """``"needs eps about 1.5, or at this eps the split loading=0.29,..."``."""
    # (two significant figures, written out: 190, not 1.9e+02)
    needs = f"needs eps about {float(f'{eps_needed:.2g}'):g}" \
        if eps_needed < float("inf") else "not at any eps up to 1e6"
    return needs + (f", or at this eps the split {split}" if split else "")


def _number_or_blank(value):
    return "" if value != value else f"{value:.3g}"


def _data_noise(plan):
    """The plan's ``data_noise_sd`` column, or None where it has none or no
    finite value (no declared box: a plan of a release written before it)."""
    if "data_noise_sd" not in plan:
        return None
    values = plan["data_noise_sd"].to_numpy(dtype=float)
    return values if np.isfinite(values).any() else None


#: What the "in units" column holds (a declared box sets the data's scale).
_IN_UNITS = (
    "in units: the noise sd in the data's own units (squared for a variance), "
    "from the declared box at its largest (the mean at the box centre): a tighter "
    "box gives less; whether it is small against a variance depends on the data.")

#: What a plan cannot promise: it reads public inputs only.
_BOUGHT_IS_NO_PROMISE = (
    "A bought part is run; a value it releases is still shown \"not estimable\" "
    "where its noise (or its clipping) turns out as large as the value: the plan "
    "cannot see the data (small variances, a mean far from the declared box's "
    "centre, a column of mostly zeros).")


def _not_estimable(plan):
    """The parts of a plan that were not run, or whose steps are not informative,
    each with the largest eps its steps need (public)."""
    parts = {}
    for row in plan.itertuples(index=False):
        if row.released and row.eps_needed != row.eps_needed:
            continue
        part = row.step.split("/")[0]
        parts[part] = max(parts.get(part, 0.0), row.eps_needed)
    return parts


def scaling_words(fitted):
    """How a ``scale=True`` fit divided its columns, in a few words for the
    overview's panel ("" without ``scale``)."""
    origin = scale_origins(getattr(fitted, "scale_", None),
                           getattr(fitted, "scale_origin_", None))
    if origin is None:
        return ""
    counts = {kind: int(np.sum(origin == kind)) for kind in ("private", "box", "none")}
    if counts["private"] == len(origin):
        return ", each divided by a private spread"
    if counts["box"] == len(origin):
        return ", each divided by its box's unit (spreads not estimable)"
    if counts["none"] == len(origin):
        return ", not scaled (spreads not estimable)"
    words = [f"{counts['private']} of {len(origin)} divided by a private spread"]
    if counts["box"]:
        words.append(f"{counts['box']} by the box's unit")
    return ", " + ", ".join(words)


def _scaling_text(scale, origin, names):
    """What ``scale_`` did, in words that never claim a correlation PCA the fit
    did not make: every column divided by its private spread, by its box's
    public unit, by nothing, or a mix (the columns not divided by a private
    spread named); None without ``scale=True``."""
    if scale is None:
        return None
    origin = scale_origins(scale, origin)
    private, box = origin == "private", origin == "box"
    if private.all():
        return "Columns divided by their private spreads (scale_): correlation PCA"
    if box.all():
        return ("Columns divided by their box's public unit, width / sqrt(12) "
                "(scale_): their private spreads were not estimable; the PCA of the "
                "columns in box units, not a correlation PCA")
    if not (private | box).any():
        return ("Columns not scaled: their private spreads were not estimable "
                "(scale_ is NaN): covariance PCA")
    parts = [f"{int(private.sum())} of {origin.size} columns divided by their private "
             "spreads"]
    for kind, words in (("box", "by their box's public unit (width / sqrt(12))"),
                        ("none", "left in their own units (NaN in scale_)")):
        listed = ", ".join(str(name) for name, o in zip(names, origin) if o == kind)
        if listed:
            parts.append(f"{words}: {listed}")
    ending = ("neither a covariance nor a correlation PCA" if (origin == "none").any()
              else "every column free of its unit, but not a correlation PCA")
    return "; ".join(parts + [ending])