"""A printable, HTML-renderable summary of a fit (as the R package dppca's ``summary()``)."""

import html

import numpy as np

_MAX_ROWS = 6
_MAX_COLUMNS = 4


class FitSummary:
    """Summary of a fitted estimator: titled sections of text lines and tables.

    ``str()`` gives the plain-text report; Jupyter renders ``_repr_html_``.
    Building it computes nothing new and spends no privacy budget.

    Parameters
    ----------
    title : str
    sections : list of (heading, content)
        ``content`` is a list of strings (lines) or a table given as
        ``(row_names, column_names, values)``.
    """

    def __init__(self, title, sections):
        self.title = title
        self.sections = sections

    def __str__(self):
        lines = [self.title]
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
        parts = [f"<h4>{html.escape(self.title)}</h4>"]
        for heading, content in self.sections:
            if heading:
                parts.append(f"<p><b>{html.escape(heading)}</b></p>")
            if isinstance(content, tuple):
                parts.append(_html_table(*content))
            else:
                parts.append("<br>".join(html.escape(line) for line in content))
        return "\n".join(parts)


def _format_table(row_names, column_names, values):
    cells = [[f"{value:.3f}" for value in row] for row in np.asarray(values, dtype=float)]
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
        + "".join(f"<td>{value:.3f}</td>" for value in row)
        + "</tr>"
        for name, row in zip(row_names, np.asarray(values, dtype=float))
    )
    return f"<table><tr><th></th>{head}</tr>{rows}</table>"


def directions_table(components, feature_names):
    """The first 6 variables x first 4 PCs of the directions, as the R package dppca prints them."""
    n_rows = min(_MAX_ROWS, components.shape[1])
    n_columns = min(_MAX_COLUMNS, components.shape[0])
    heading = (
        f"Private PC directions  (first {n_rows} variables x first {n_columns} PCs):"
    )
    table = (
        list(feature_names[:n_rows]),
        [f"PC{l + 1}" for l in range(n_columns)],
        components[:n_columns, :n_rows].T,
    )
    return heading, table


def budget_line(eps, delta):
    return f"Total privacy budget: eps = {eps:g} ; delta = {delta:g}"


def reference_line(nonprivate):
    return "Non-private reference: " + ("stored (not private)" if nonprivate else "not stored")


def scree_lines(method, variances, noise_scales, ratios, total, total_noise, scaled):
    """The scree section: method, each variance with its noise sd and PVE, the total."""
    lines = [f"Scree method: {method}; PVE is the share of the private total variance"]
    for l, (variance, noise, ratio) in enumerate(zip(variances, noise_scales, ratios)):
        lines.append(f"  PC{l + 1}: variance {variance:.4g} +- {noise:.2g} (noise sd)  "
                     f"PVE {100 * ratio:.1f}%")
    lines.append(f"  total variance {total:.4g} +- {total_noise:.2g} (noise sd)")
    if scaled:
        lines.append("  columns divided by their private spreads (scale_)")
    return lines
