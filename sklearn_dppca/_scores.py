"""The private score summary: frame, 2-D histogram(s) and synthetic points (seed 001)."""

import warnings

import numpy as np
from sklearn.utils import Bunch

from .privacy._histograms import additive_histogram, histogram_counts, sparse_histogram
from .privacy._quantiles import quantile, upper_quantile

HISTOGRAM_METHODS = ("additive", "sparse")
FRAME_SHARE = 0.35      # of the score eps, pure DP (delta 0), seed 001
RADIUS_LEVEL = 0.99     # level of the private radial quantile
FRAME_MARGIN = 1.2      # the frame is centre +- 1.2 radius


def private_frame(scores, eps, rng, ledger, step="score/frame", cells=1):
    """A square frame around the score cloud, pure ``eps``-DP.

    ``eps`` is split in three: the private median of each coordinate (fully unbounded
    Durfee quantile) gives the centre ``c``; the private one-sided 0.99 quantile of
    ``||s_i - c||`` gives the radius ``r``. Each is a count-based search in which one
    row changes one value. The frame is ``c +- 1.2 r`` on both axes.
    """
    part = eps / 3
    center = np.array([
        quantile(scores[:, axis], 0.5, part, rng, ledger=ledger,
                 step=f"{step}/median axis {axis + 1}")
        for axis in range(2)
    ])
    distances = np.linalg.norm(scores - center, axis=1)
    radius = upper_quantile(distances, RADIUS_LEVEL, part, rng, lower=0.0, ledger=ledger,
                            step=f"{step}/radius")
    if not (np.isfinite(radius) and radius > 0) or not np.all(np.isfinite(center)):
        raise ValueError(
            f"The private score frame is degenerate (centre {center}, radius {radius}); "
            "the scores may be too large to frame. Rescale X."
        )
    # Post-processing (free): far from the origin a tiny private radius would make
    # the ``cells`` cells of an axis narrower than the float spacing at the centre
    # (equal bin edges); widen the frame to at least 8 spacings per cell.
    half_width = max(FRAME_MARGIN * radius,
                     8.0 * cells * float(np.max(np.spacing(np.abs(center)))))
    extent = (center[0] - half_width, center[0] + half_width,
              center[1] - half_width, center[1] + half_width)
    return Bunch(center=center, radius=float(radius), half_width=float(half_width),
                 extent=extent)


def frame_edges(frame, bins):
    """Equal-width bin edges over the frame: one array per axis."""
    x_min, x_max, y_min, y_max = frame.extent
    return np.linspace(x_min, x_max, bins[0] + 1), np.linspace(y_min, y_max, bins[1] + 1)


def private_histograms(scores, edges, *, method, eps, delta, noise, rng, ledger,
                       labels=None, label_list=None, step="score/histogram"):
    """Noisy, clamped cell counts on the grid; per group when labels are given.

    One row moves between two cells (possibly of two groups), so the concatenated
    count vector has L2 sensitivity sqrt(2) and L1 sensitivity 2: the whole
    histogram budget covers every group at once. Returns an array of shape
    ``bins`` or ``(n_groups,) + bins``.
    """
    counts = histogram_counts(scores, edges[0], edges[1], groups=labels, labels=label_list)
    if method == "additive":
        return additive_histogram(counts, eps, delta, rng, noise=noise, ledger=ledger,
                                  step=step)
    return sparse_histogram(counts, eps, delta, rng, ledger=ledger, step=step)


def normalised(counts, what="score histogram"):
    """Counts divided by their sum; all-zero stays zero with a warning."""
    total = float(np.sum(counts))
    if total <= 0:
        warnings.warn(
            f"Every noisy cell of the {what} is 0 after clamping and thresholding; "
            "increase eps, reduce bins, lower histogram_threshold (additive) or use "
            "histogram='additive' (sparse). No synthetic points are drawn from it.",
            UserWarning,
            stacklevel=3,
        )
        return np.zeros_like(counts, dtype=float)
    return counts / total


def synthetic_points(histogram, edges, n_points, rng, jitter=0.25):
    """``n_points`` draws: a cell by its mass, a uniform point in it, Gaussian jitter.

    The jitter has standard deviation ``jitter`` cell widths on each axis (0 turns
    it off). Post-processing of the released histogram: no privacy cost.
    """
    histogram = np.asarray(histogram, dtype=float)
    if n_points == 0 or histogram.sum() <= 0:
        return np.empty((0, 2))
    flat = histogram.ravel(order="F")   # x varies fastest, as the cell index does
    cells = rng.choice(flat.size, size=n_points, p=flat / flat.sum())
    x_cells, y_cells = cells % histogram.shape[0], cells // histogram.shape[0]
    x_edges, y_edges = edges
    width = np.array([x_edges[1] - x_edges[0], y_edges[1] - y_edges[0]])
    lower = np.column_stack([x_edges[x_cells], y_edges[y_cells]])
    points = lower + rng.random((n_points, 2)) * width
    if jitter > 0:
        points += rng.normal(scale=jitter, size=(n_points, 2)) * width
    return points


def split_by_noisy_totals(n_points, group_counts, rng):
    """How many synthetic points each group gets, from its noisy total count.

    Exact group sizes are never used: the shares are the groups' sums of noisy,
    clamped counts (post-processing of the release).
    """
    totals = np.array([float(np.sum(counts)) for counts in group_counts])
    if totals.sum() <= 0:
        return np.zeros(len(totals), dtype=int)
    return rng.multinomial(n_points, totals / totals.sum())
