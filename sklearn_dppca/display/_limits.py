"""The axes of a display: making them, settling their layout, their limits."""

import numpy as np

from .._validation import Instance, check_param


def new_axes(ax):
    """Return ``(ax, figure)``, creating a figure and axes when ``ax`` is None."""
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    ax = check_param(ax, [None, Instance(Axes, "a matplotlib Axes")], "ax")
    if ax is None:
        _, ax = plt.subplots(layout="constrained")
    return ax, ax.figure


def settle_layout(ax):
    """Run the layout engine of the figure of ``ax`` now, so that sizes measured in
    points (label boxes, arrow heads) match the final axes size as closely as
    possible.

    A figure without a layout engine is left as it is; so is one whose engine was
    set to ``"none"`` by a caller that has laid the figure out already (see
    :func:`~sklearn_dppca.display.plot_overview`).
    """
    engine = ax.figure.get_layout_engine()
    if engine is not None:
        try:
            engine.execute(ax.figure)
        except Exception:  # a failed early layout only costs precision
            pass


def data_per_point(ax):
    """Data units per typographic point along x and y (after the aspect is applied)."""
    ax.apply_aspect()
    bbox = ax.get_window_extent()
    points_per_pixel = 72.0 / ax.figure.dpi
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    width = max(bbox.width * points_per_pixel, 1e-9)
    height = max(bbox.height * points_per_pixel, 1e-9)
    return abs(x1 - x0) / width, abs(y1 - y0) / height


def set_square_limits(ax, points, center=None, pad=0.1, minimum=None):
    """Equal-aspect square limits holding ``points`` (around ``center`` if given)."""
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    points = points[np.all(np.isfinite(points), axis=1)]
    if center is None:
        if len(points):
            center = (points.min(axis=0) + points.max(axis=0)) / 2
        else:
            center = np.zeros(2)
    center = np.asarray(center, dtype=float)
    half = float(np.max(np.abs(points - center))) if len(points) else 0.0
    if minimum is not None:
        half = max(half, minimum)
    if half <= 0:
        half = 1.0
    half *= 1 + pad
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_aspect("equal", adjustable="box")
    return center, half


def set_equal_limits(ax, points, pad=0.08):
    """Limits holding ``points`` with a margin, on an equal-aspect axes.

    Unlike :func:`set_square_limits` the two ranges may differ, so no room is
    wasted on empty half-planes.
    """
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    points = points[np.all(np.isfinite(points), axis=1)]
    if len(points) == 0:
        points = np.zeros((1, 2))
    lo = points.min(axis=0)
    hi = points.max(axis=0)
    span = float(np.max(hi - lo))
    if span <= 0:
        span = 1.0
    margin = pad * span
    ax.set_xlim(lo[0] - margin, hi[0] + margin)
    ax.set_ylim(lo[1] - margin, hi[1] + margin)
    ax.set_aspect("equal", adjustable="box")
