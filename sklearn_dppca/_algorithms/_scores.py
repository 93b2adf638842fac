"""The private score summary: frame, 2-D histogram(s) and synthetic points."""

import math
import warnings

import numpy as np
from scipy.special import ndtr, ndtri
from .._bunch import Bunch

from .._validation import warn_user
from ..privacy import PrivacyUtilityWarning
from ..privacy._exact import standard_normal, unit_uniform, weighted_indices
from ..privacy._histograms import (
    _sparse_threshold,
    additive_histogram,
    additive_histogram_noise_scale,
    histogram_counts,
    sparse_histogram,
)

HISTOGRAM_METHODS = ("additive", "sparse")
_FRAME_SHARE = 0.35      # of the score eps, pure DP (delta 0), as in the R package dppca
_RADIUS_LEVEL = 0.97     # level of the private radial quantile (at most, see below)
#: A radius search's target ``q n`` stays at least this many means of its threshold
#: noise (``2 / eps`` counts) below ``n`` (:func:`_radius_level`) ...
_TAIL_MEANS = 6.0
#: ... but its level never falls below this (there ``n eps`` is too small for any
#: frame: :func:`~sklearn_dppca.privacy._quantiles.warn_if_far` warns).
_MIN_RADIUS_LEVEL = 0.5
_RADIUS_BETA = 1.01      # the radius's grid: 1% resolution, in units of the scores' scale
_RADIUS_STEPS = 5000     # ... reaching 1.01^5000 (4e21) of those units
_FRAME_MARGIN = 1.2      # the frame is centre +- 1.2 radius
#: A radius this many score units (``sqrt(lambda_a + lambda_b)``, released) wide
#: says its search overshot: the 0.97 radial quantile of a cloud is a few units,
#: tens for heavy tails, never a thousand.
_FRAME_OVERSHOOT = 1000.0
# Expected noise-only cells passing the "auto" threshold: 0.25 keeps the average over
# 20 fits below 0.5 (at 0.5 exactly, measured 20-fit averages were 0.50 and 0.55).
_NOISE_CELLS_TARGET = 0.25


#: Shares of the frame's eps (all pure DP): coarse centre (each axis), coarse
#: radius, fine centre (each axis), radius. The coarse stage only has to land within
#: the fine stage's range, so the fine centre and the radius, which the picture
#: shows, get more.
_FRAME_STEPS = {"coarse centre axis 1": 0.15, "coarse centre axis 2": 0.15,
               "coarse radius": 0.1, "centre axis 1": 0.15, "centre axis 2": 0.15,
               "radius": 0.3}


def score_parts(histogram, bounded=False):
    """The budget tree of the score summary: the frame's searches, the histogram.

    The additive histogram is a discrete Gaussian mechanism, composed with the
    Gaussian parts (as a ``mu``-GDP part under GDP accounting); the sparse one an
    ``(eps, delta)`` stability histogram (basic composition). With declared
    ``bounds`` (``bounded``) the frame is the box's projection
    (:func:`_box_frame`), free: the histogram takes the whole part.
    """
    kind = "gaussian" if histogram == "additive" else "basic"
    if bounded:
        return {"histogram": (1.0, kind)}
    frame = {name: (share, "pure") for name, share in _FRAME_STEPS.items()}
    return {"frame": (_FRAME_SHARE, frame), "histogram": (1.0 - _FRAME_SHARE, kind)}


#: Points of the fine centre's even grid over [-2 r1, 2 r1] when the scores' scale
#: is unknown.
_FINE_POINTS = 400_001
#: With a known scale ``unit`` of the scores: the fine grid's spacing is
#: ``unit / _FINE_PER_UNIT`` (at most ``_MAX_FINE_POINTS`` points).
_FINE_PER_UNIT = 200
_MAX_FINE_POINTS = 4_000_001


def _fine_points(reach, unit):
    """Points of the fine centre's grid over ``[-reach, reach]``.

    A one-sided search stops early by about ``(2 / eps) ln(m)`` counts when ``m``
    grid points lie inside the data before its target. The coarse stage's error
    sets ``reach``: far from the origin it is large, and a fixed number of points
    put few of them inside the cloud, close to it many (10^5 for the gau scores at
    eps = 1: the median 1,300 counts low, against 600 far away). With a
    known scale of the scores the spacing is ``unit / 200`` wherever the cloud
    is (about 600 points inside it), so the centre is equally good everywhere;
    without one, ``_FINE_POINTS`` points. Public: ``reach`` and ``unit`` are
    releases.
    """
    if unit is None:
        return _FINE_POINTS
    spacing = unit / _FINE_PER_UNIT
    return int(min(_MAX_FINE_POINTS, max(3, math.ceil(2 * reach / spacing) + 1)))


def _private_frame(scores, budget, rng, ledger, cells=1, unit=None):
    """A square frame around the score cloud, pure ``eps``-DP.

    Six count-based searches (one changed row changes one value in each), on the
    leaves of ``budget`` (:data:`_FRAME_STEPS`):

    1. a coarse centre ``c1``: the fully unbounded private median of each
       coordinate; its grid is geometric around 0, so far from the origin it is
       off by up to about 1% of its distance to 0;
    2. a coarse radius ``r1``: a private upper quantile of ``||s_i - c1||``
       (it covers the cloud plus the error of ``c1``);
    3. the fine centre ``c``: ``c1`` plus the private median of each coordinate
       of ``s_i - c1`` on an even grid over ``[-2 r1, 2 r1]`` (resolution
       ``r1 / 10^5``), so the centre keeps its resolution wherever the cloud is;
    4. the radius ``r``: the private 0.97 quantile of ``||s_i - c||``; when
       ``n eps`` is too small for that level, a lower quantile
       (:func:`_radius_level`: a level too close to 1 lets the search overshoot
       the cloud many times over) carried to 0.97 as for a Gaussian cloud
       (:func:`_gaussian_stretch`).

    The radii are searched in units of ``unit``, a public or released scale of
    the scores (DPPCA passes the square root of the two released variances; None:
    1 for the radii, and the fine centre's grid is not tied to a scale): on
    the grid ``unit (1.01^i - 1)``, which resolves 1% of the radius from about
    ``unit / 100`` up and has few points below the data, so a small budget does
    not drive the search to the bottom of the float range (as a grid over every
    float would: below ``n eps`` of about 30 its searches stop there).

    The frame is ``c +- 1.2 r`` on both axes: adding a constant to every row moves
    the centre and leaves the radius as it was.
    """
    coarse_leaves = [budget[f"coarse centre axis {axis + 1}"] for axis in range(2)]
    coarse = np.array([
        _median(scores, axis, leaf, rng, ledger) for axis, leaf in enumerate(coarse_leaves)
    ])
    reach = 2 * _radius(scores, coarse, budget["coarse radius"], rng, ledger, unit,
                        warn=False)
    centre_leaves = [budget[f"centre axis {axis + 1}"] for axis in range(2)]
    center = _clamped(coarse + np.array([
        _median_offset(scores, axis, coarse, reach, leaf, rng, ledger, unit)
        for axis, leaf in enumerate(centre_leaves)
    ]))
    radius = _radius(scores, center, budget["radius"], rng, ledger, unit, stretch=True)
    # Post-processing (free): far from the origin a tiny private radius would make
    # the ``cells`` cells of an axis narrower than the float spacing at the centre
    # (equal bin edges); widen the frame to at least 8 spacings per cell.
    half_width = max(_FRAME_MARGIN * radius,
                     8.0 * cells * float(np.max(np.spacing(np.abs(center)))))
    extent = (center[0] - half_width, center[0] + half_width,
              center[1] - half_width, center[1] + half_width)
    return Bunch(center=center, radius=float(radius), half_width=float(half_width),
                 extent=extent)


def _box_frame(scores, cells=1):
    """The frame of declared ``bounds``: the square around the box's projection on
    the two score axes, no search and no spend.

    Its centre is ``M c`` (``c`` the box's centre, ``M`` the two score axes) and
    its half width the larger half extent ``max_l sum_j |m_lj| w_j / 2``
    (:meth:`~sklearn_dppca._data._rows.Rows.box_projection`): every clipped row
    projects inside it, so no row falls off the histogram, and it is public
    (declared bounds and released directions). Why not the six searches: at
    small ``n eps`` (iris, wine at eps = 1) they collapse or overshoot, and
    with bounds the frame needs none. Why not a radius from the released
    variances: it needs a centre, and the box's centre is not the cloud's (a
    codebook's ranges are rarely symmetric about the data, e.g. ``[0, high]``
    for a non-negative column), so such a frame would cut the cloud; a private
    centre would cost the budget the box frees. The price: a box much wider
    than the data puts the cloud in fewer cells.
    """
    center, extent = scores.box_projection()
    center = _clamped(center)
    # a hair wider than the image: the projection of a corner, as computed, may
    # round past the image's edge as computed
    reach = float(np.max(extent)) * (1 + 1e-9) + 64 * len(scores.widths()) * float(
        np.spacing(np.max(np.abs(center)) + np.max(extent)))
    radius = float(np.clip(reach / _FRAME_MARGIN, _TINY, _FRAME_LIMIT))
    half_width = max(_FRAME_MARGIN * radius,
                     8.0 * cells * float(np.max(np.spacing(np.abs(center)))))
    radius = half_width / _FRAME_MARGIN
    half_width = _FRAME_MARGIN * radius
    extent = (center[0] - half_width, center[0] + half_width,
              center[1] - half_width, center[1] + half_width)
    return Bunch(center=center, radius=float(radius), half_width=float(half_width),
                 extent=extent)


def _median(scores, axis, leaf, rng, ledger):
    """The fully unbounded private median of one score axis (no warning: the
    fine centre absorbs its error)."""
    return scores.two_sided_quantile(axis, 0.5, leaf.eps, rng, ledger=ledger,
                                     step=leaf.path, warn=False)


def _median_offset(scores, axis, coarse, reach, leaf, rng, ledger, unit):
    """The private median of ``scores[:, axis] - coarse[axis]`` on an even grid
    over ``[-reach, reach]`` (both axes' counts in one pass over the rows)."""
    grid = dict(low=-reach, high=reach, n_points=_fine_points(reach, unit))
    return scores.interval_quantile(axis, coarse, 0.5, leaf.eps, rng, ledger=ledger,
                                    step=leaf.path, **grid)


def _radius_level(n_samples, eps):
    """The level of a radius search with ``eps`` on ``n_samples`` distances (public).

    ``0.97``, lowered as far as needed (not below 0.5) to keep
    ``n (1 - q) >= 6 * 2 / eps``. The search stops at the first grid point where
    a noisy count reaches ``T = q n + Exp``, the threshold noise having mean
    ``2 / eps``. With probability ``exp(-(1 - q) n eps / 2)`` that noise lifts
    ``T`` above ``n``. No count can reach it then, and only the per-point noise
    stops the search. Past the largest distance, each grid point stops it with
    probability ``exp(-(T - n) eps / 2)``, so the radius runs out into empty space
    by a number of grid points with a tail like ``1 / k``. On the gau scores at
    eps = 1 (radius eps 0.037, a tail of 150 rows, 2.8 noise means) ``T`` passes
    ``n`` in 6% of fits and the search ran past the farthest row in 0.4%: one fit
    in 200 had a radius 8 times the median's (14 times at eps = 0.5, 1,000 times
    on digits at eps = 1). A tail of 6 means makes ``T > n`` a 0.25% event (and
    the search then mostly still stops inside the data); in 200 fits the largest
    radius came out 1.1 (gau, eps = 1), 1.8 (eps = 0.5) and 2.8 (digits) times
    the median. ``n`` and ``eps`` are public.
    """
    tail = _TAIL_MEANS * 2.0 / (eps * n_samples)
    return max(_MIN_RADIUS_LEVEL, min(_RADIUS_LEVEL, 1.0 - tail))


def _gaussian_stretch(level):
    """``r_0.97 / r_level`` for the distances of a 2-D Gaussian cloud from its centre
    (Rayleigh: ``r_q`` proportional to ``sqrt(-ln(1 - q))``); 1 at 0.97."""
    return math.sqrt(math.log1p(-_RADIUS_LEVEL) / math.log1p(-level))


def _radius(scores, center, leaf, rng, ledger, unit, warn=True, stretch=False):
    """Private :func:`_radius_level` quantile of the distances to ``center``, in
    units of ``unit``; with ``stretch``, carried to the 0.97 level as for a
    Gaussian cloud (:func:`_gaussian_stretch`, post-processing)."""
    # After the charge nothing may raise on the data: a centre or radius that
    # overflowed is clamped to finite values, and the frame is then simply
    # useless (:func:`_frame_failure` skips the histogram), not an error.
    center = _clamped(center)
    unit = 1.0 if unit is None else unit
    level = _radius_level(scores.shape[0], leaf.eps)
    with warnings.catch_warnings():
        if not warn:
            warnings.simplefilter("ignore", PrivacyUtilityWarning)
        radius = unit * scores.distance_quantile(
            center, unit, level, leaf.eps, rng, beta=_RADIUS_BETA,
            max_steps=_RADIUS_STEPS, ledger=ledger, step=leaf.path)
    if stretch:
        radius *= _gaussian_stretch(level)
    return float(np.clip(radius, _TINY, _FRAME_LIMIT))


#: The largest centre coordinate and radius of a frame: the extent
#: ``centre +- 1.2 radius`` (with the widening of :func:`_private_frame`) and the
#: fine grid over ``[-2 r1, 2 r1]`` stay finite.
_LARGEST = float(np.finfo(float).max)
_FRAME_LIMIT = _LARGEST / 16
_TINY = float(np.finfo(float).tiny)


def _clamped(values):
    """``values`` clamped into ``[-_FRAME_LIMIT, _FRAME_LIMIT]`` (NaN to 0):
    post-processing of released search results, so the frame stays finite."""
    return np.clip(np.nan_to_num(np.asarray(values, dtype=float), nan=0.0),
                   -_FRAME_LIMIT, _FRAME_LIMIT)


def _frame_edges(frame, bins):
    """Equal-width bin edges over the frame: one array per axis."""
    x_min, x_max, y_min, y_max = frame.extent
    return np.linspace(x_min, x_max, bins[0] + 1), np.linspace(y_min, y_max, bins[1] + 1)


def _additive_threshold(n_cells, threshold="auto"):
    """The additive histogram's threshold, in noise sds, and what it lets through.

    ``"auto"`` picks the threshold ``t`` at which the expected number of cells
    that hold only noise yet pass, ``n_cells * P(N(0, 1) >= t)``, is
    :data:`_NOISE_CELLS_TARGET` (0.25) over the whole grid, every group's cells
    included: about 3.2 sd for 400 cells, 3.7 sd for 2,000. A number is taken as
    it is (0: plain clamping at 0, where half of the empty cells stay positive).
    Public: it depends on the grid's size only. Returns ``(t, expected)``.
    """
    sds = float(-ndtri(_NOISE_CELLS_TARGET / n_cells)) if threshold == "auto" \
        else float(threshold)
    return sds, float(n_cells * ndtr(-sds))


#: Cells per axis of ``bins="auto"``: at least, at most.
_AUTO_BINS = (4, 20)
#: Share of the frame a single elliptical cloud covers: a disc of the frame's
#: radius in the square of half width 1.2 radius (pi / 5.76).
_CLOUD_COVER = 0.55
#: An average cell of the cloud should hold this many thresholds.
_CELL_MARGIN = 2.0


def _cell_threshold(method, budget, n_cells):
    """The count a cell must reach to be shown, before any data (public).

    Additive: the ``"auto"`` threshold in noise sds (:func:`_additive_threshold`)
    times the noise sd the histogram's leaf ``budget`` buys; sparse: the
    stability histogram's release threshold.
    """
    if method == "additive":
        sd = additive_histogram_noise_scale(budget.eps, budget.delta, budget.mu)
        return _additive_threshold(n_cells)[0] * sd
    return _sparse_threshold(budget.eps, budget.delta)


def check_histogram_budget(method, budget):
    """Refuse a histogram leaf ``budget`` its mechanism cannot spend (public).

    The sparse histogram's discrete Laplace needs a rate of at least
    ``2**-30`` (:func:`~sklearn_dppca.privacy._discrete.laplace_rate`); the
    additive one's discrete Gaussian must be calibrated. Both depend on the
    leaf's budget alone, so DPPCA calls this before the accountant is charged:
    the same refusal after the charge would come after the spend is booked.
    """
    try:
        _cell_threshold(method, budget, 1)
    except ValueError as error:
        share = f"mu={budget.mu:g}" if budget.mu is not None else f"eps={budget.eps:g}"
        # (a share far above any useful one fails too: the discrete Gaussian's
        # calibration finds no scale once its sd is a few hundredths of a count)
        size = "too large" if budget.mu is not None and budget.mu > 1.0 else "too small"
        raise ValueError(
            f"eps is {size} for histogram={method!r}: the score histogram's share "
            f"of it ({share}) cannot be spent by its mechanism. "
            + ("Lower eps (the histogram is exact long before this) or the score "
               "share of budget_split." if size == "too large" else
               "Raise eps or the score share of budget_split.")
        ) from error


def auto_bins(n_samples, n_groups, method, budget):
    """Cells per axis for ``bins="auto"``, from public numbers only.

    Starts at ``clip(round(sqrt(n / n_groups) / 3), 4, 20)`` (each group's cells
    hold enough rows) and takes one cell less per axis while an average cell of
    the cloud, ``n / (0.55 m^2)`` rows (one elliptical cloud covers about 55% of
    the frame; groups split both rows and area), would hold less than twice
    :func:`_cell_threshold`. Too many cells leave most of the cloud under the
    threshold: at eps = 0.5 on the gau data (5,000 rows, noise sd 23 counts,
    threshold 74) only 16 of 190 occupied cells of a 20 x 20 grid survived.
    """
    low, high = _AUTO_BINS
    side = int(np.clip(round(math.sqrt(n_samples / n_groups) / 3), low, high))
    while side > low and n_samples / (_CLOUD_COVER * side**2) < _CELL_MARGIN * \
            _cell_threshold(method, budget, n_groups * side**2):
        side -= 1
    return side, side


def _private_histograms(scores, edges, *, method, budget, rng, ledger,
                       labels=None, label_list=None):
    """Noisy, clamped cell counts on the grid; per group when labels are given.

    One row moves between two cells (possibly of two groups), so the concatenated
    count vector has L2 sensitivity sqrt(2) and L1 sensitivity 2: the whole
    histogram budget (the leaf ``budget``) covers every group at once. Returns
    the integer counts, of shape ``bins`` or ``(n_groups,) + bins``, and the
    scale of the discrete Gaussian noise on each cell (None for the sparse
    histogram).
    """
    # codes: an array, or a Dask array in the same blocks
    counts = scores.histogram(edges[0], edges[1], codes=labels,
                              n_labels=None if labels is None else len(label_list))
    if method == "additive":
        return additive_histogram(counts, rng=rng, ledger=ledger,
                                  return_noise_scale=True, **budget.mechanism_budget())
    return sparse_histogram(counts, budget.eps, budget.delta, rng, ledger=ledger,
                            step=budget.path), None


def _normalised(counts, what="score histogram"):
    """Counts divided by their sum; all-zero stays zero with a warning."""
    total = float(np.sum(counts))
    if total <= 0:
        warn_user(
            f"Every noisy cell of the {what} is 0 after clamping and thresholding; "
            "increase eps, reduce bins, lower histogram_threshold (additive) or use "
            "histogram='additive' (sparse). No synthetic points are drawn from it.",
            PrivacyUtilityWarning,
        )
        return np.zeros_like(counts, dtype=float)
    return counts / total


#: Where a synthetic point is placed in its cell: anywhere (uniformly) or at its centre.
SYNTHETIC_SAMPLING = ("uniform", "center")


def _synthetic_points(histogram, edges, n_points, rng, jitter=0.25, sampling="uniform"):
    """``n_points`` draws: a cell by its mass, a point in it, Gaussian jitter.

    ``sampling="uniform"`` places the point uniformly in its cell, ``"center"``
    at the cell's centre (as the R package can). The jitter has standard
    deviation ``jitter`` cell widths on each axis (0 turns it off). Either way
    it is post-processing of the released histogram: no privacy cost.
    """
    histogram = np.asarray(histogram, dtype=float)
    if n_points == 0 or histogram.sum() <= 0:
        return np.empty((0, 2))
    flat = histogram.ravel(order="F")   # x varies fastest, as the cell index does
    cells = weighted_indices(flat, n_points, rng)
    x_cells, y_cells = cells % histogram.shape[0], cells // histogram.shape[0]
    x_edges, y_edges = edges
    width = np.array([x_edges[1] - x_edges[0], y_edges[1] - y_edges[0]])
    lower = np.column_stack([x_edges[x_cells], y_edges[y_cells]])
    offset = 0.5 if sampling == "center" else unit_uniform((n_points, 2), rng)
    points = lower + offset * width
    if jitter > 0:
        points += jitter * standard_normal((n_points, 2), rng) * width
    return points


def _split_by_noisy_totals(n_points, group_counts, rng):
    """How many synthetic points each group gets, from its noisy total count.

    Exact group sizes are never used: the shares are the groups' sums of noisy,
    clamped counts (post-processing of the release).
    """
    totals = np.array([float(np.sum(counts)) for counts in group_counts])
    if totals.sum() <= 0:
        return np.zeros(len(totals), dtype=int)
    # a multinomial: the counts of n_points draws of a group by its share
    return np.bincount(weighted_indices(totals, n_points, rng), minlength=totals.size)


def score_unit(explained_variance, noise_scale, axes):
    """The scores' scale from the released variances (post-processing), or None.

    None (the frame then searches in the data's own unit) when either variance
    is noise (its noise sd, raised for a release at its clip bound, reaches it):
    a collapsed variance would shrink the radius's grid to nothing.
    """
    axes = list(axes)
    variances = explained_variance[axes]
    if np.any(noise_scale[axes] >= variances):
        return None
    unit = math.sqrt(float(np.sum(variances)))
    return unit if math.isfinite(unit) and unit > 0 else None


def _frame_failure(frame, unit):
    """Why the released frame is unusable, or None (post-processing).

    Collapsed: its radius is below the float resolution at the centre (the
    search stopped at the bottom of its grid). Overshot: its radius is more than
    :data:`_FRAME_OVERSHOOT` score units (the search ran to the top of its grid,
    which an unlucky threshold draw of a small-eps search does).
    """
    if not np.all(np.isfinite(frame.extent)):
        return "is not finite (the scores are too large to frame: rescale X)"
    if frame.half_width > _FRAME_MARGIN * frame.radius:
        return ("collapsed (its radius search stopped far below the data: too "
                "little budget for the rows)")
    if unit is not None and frame.radius > _FRAME_OVERSHOOT * unit:
        return ("is far wider than the released variances allow (its radius search "
                "overshot: too little budget for the rows)")
    return None


def release_score_summary(scores, budget, *, bins, method, threshold, unit,
                          labels, group_codes, n_points, jitter, rng, ledger,
                          sampling="uniform"):
    """The private score summary on two score axes: frame, histogram(s), synthetic
    points.

    ``budget``: the score part (:func:`score_parts`; without a frame part, the
    frame of declared bounds, :func:`_box_frame`). ``labels``: the public list
    of group labels and ``group_codes`` each row's position in it (both None
    without groups).
    Returns None when the frame collapsed or overshot (:func:`_frame_failure`:
    a histogram on it would draw noise cells, or the whole cloud in one cell, as
    the data; the histogram's budget is then not spent, with a warning). Else a
    Bunch with ``frame``, ``bin_edges``, ``counts`` (thresholded noisy counts,
    per group first when grouped), ``threshold`` (counts; None for sparse),
    ``expected_noise_cells``, ``histogram`` (normalised, summed over groups),
    ``histograms`` (per group, or None), ``synthetic_scores`` and
    ``synthetic_codes`` (each point's group position, or None). ``jitter`` and
    ``sampling`` shape the synthetic points (:func:`_synthetic_points`).
    """
    if "frame" in budget:
        frame = _private_frame(scores, budget.part("frame"), rng, ledger,
                               cells=max(bins), unit=unit)
    else:   # declared bounds: the box's projection, free
        frame = _box_frame(scores, cells=max(bins))
    # (the box frame holds every row by construction: no overshoot to test)
    failure = _frame_failure(frame, unit if "frame" in budget else None)
    if failure is not None:
        # Post-processing of released values only (the frame and the variances):
        # a histogram on such a frame would draw noise cells, or the whole cloud in
        # one cell, as the data.
        warn_user(
            f"The private score frame {failure}; the score histogram is skipped and "
            "its budget is not spent. Increase eps or the score part of "
            "budget_split.",
            PrivacyUtilityWarning,
        )
        return None
    edges = _frame_edges(frame, bins)
    counts, noise_scale = _private_histograms(
        scores, edges, method=method, budget=budget["histogram"], rng=rng,
        ledger=ledger, labels=group_codes,
        label_list=None if labels is None else np.arange(len(labels)))
    if method == "additive":
        sds, expected = _additive_threshold(counts.size, threshold)
        threshold = sds * noise_scale
    else:   # only non-empty cells get noise: no cell holds noise alone
        threshold, expected = None, 0.0
    counts = np.where(counts >= (threshold or 0.0), counts, 0)
    summary = Bunch(frame=frame, bin_edges=edges, counts=counts, threshold=threshold,
                    expected_noise_cells=expected, histograms=None, synthetic_codes=None)
    if labels is None:
        summary.histogram = _normalised(counts)
        summary.synthetic_scores = _synthetic_points(summary.histogram, edges, n_points,
                                                    rng, jitter, sampling)
        return summary
    summary.histogram = _normalised(counts.sum(axis=0))
    summary.histograms = [_normalised(group, f"histogram of group {_label_text(label)}")
                          for label, group in zip(labels, counts)]
    sizes = _split_by_noisy_totals(n_points, counts, rng)
    points = [_synthetic_points(histogram, edges, size, rng, jitter, sampling)
              for histogram, size in zip(summary.histograms, sizes)]
    summary.synthetic_scores = np.vstack(points)
    summary.synthetic_codes = np.concatenate([np.full(len(group), position, dtype=np.intp)
                                              for position, group in enumerate(points)])
    return summary


def exact_score_histogram(scores, edges):
    """The exact (NOT private) histogram of ``scores`` on ``edges``, normalised:
    the non-private reference of the score picture."""
    exact = histogram_counts(scores, *edges)
    total = exact.sum()
    return exact / total if total > 0 else exact.astype(float)


def _label_text(label):
    """A group label as the user wrote it (numpy 2 shows ``np.str_('a')`` for 'a')."""
    return repr(label.item() if isinstance(label, np.generic) else label)
