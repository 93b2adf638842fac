"""What the pointer is on in a picture of the explorer: a variable's name and its
released values, with their noise sd where the picture shows one.

A picture is served as a PNG; :func:`hover_targets` notes, once it is drawn, where
its named things are in the image's pixels and what to say about each, and
:func:`hover_text` answers a pointer position (Shiny's hover input on the image)
with the nearest one. Every value said is a released one (the release, never the
non-private reference) and so is free to show.
"""

import numpy as np

#: How far (CSS pixels) the pointer may be from a point and still be on it.
_NEAR_PIXELS = 24


def _pixels(ax, points, height):
    """Data coordinates of ``ax`` -> image pixels (origin at the top left)."""
    shown = ax.transData.transform(np.asarray(points, dtype=float).reshape(-1, 2))
    return np.column_stack([shown[:, 0], height - shown[:, 1]])


def _sd(value, what="noise sd"):
    """`` (what value)``, or nothing where there is no sd; a variance's is
    :data:`_VARIANCE_SD` (its clipping allowance rides in it)."""
    return "" if value is None or not np.isfinite(value) else f" ({what} {value:.2g})"


#: What a scree's sd holds, as the summary says it
#: (:func:`~sklearn_dppca._summary._noise_text`).
_VARIANCE_SD = "sd of noise and clipping"


def _loading_words(release, j, pair):
    """``PC1 +0.52 (noise sd 0.03), PC2 -0.12 (noise sd 0.03)`` of variable ``j``."""
    V, noise = release.components_, release.components_noise_scale_
    return ", ".join(
        f"PC{c + 1} loading {V[c, j]:+.3f}" + _sd(None if noise is None else noise[c, j])
        for c in pair)


def _scree(release, shown, height):
    ratio = np.asarray(release.explained_variance_ratio_, dtype=float)
    variance = np.asarray(release.explained_variance_, dtype=float)
    noise = release.noise_scale_
    noise = np.broadcast_to(np.nan if noise is None else np.asarray(noise, float),
                            variance.shape)
    total = release.total_variance_
    texts = []
    for i in range(len(ratio)):
        if not np.isfinite(ratio[i]):
            # a variance may be released where its share is not (the total not
            # bought): the scree's "variances" view draws it
            texts.append(f"PC{i + 1}: PVE not estimable (the fit could not buy it)"
                         + (f"; variance {variance[i]:.3g}{_sd(noise[i], _VARIANCE_SD)}"
                            if np.isfinite(variance[i]) else ""))
            continue
        # the picture's error bars: 2 sd of the share (in PVE points), or,
        # for a release written without it, of the variance over the total
        pve_sd = _share_points(release, i, noise[i], total)
        pve = f"PVE {100 * ratio[i]:.1f}%" + (
            "" if pve_sd is None else f" ({_VARIANCE_SD} {pve_sd:.2g} points)")
        texts.append(f"PC{i + 1}: {pve}, cumulative {100 * np.nansum(ratio[:i + 1]):.1f}%;"
                     f" variance {variance[i]:.3g}{_sd(noise[i], _VARIANCE_SD)}")
    heights = np.nan_to_num(100 * ratio)
    xy = _pixels(shown.ax_, np.column_stack([np.arange(len(ratio)), heights]), height)
    return {"kind": "columns", "x": xy[:, 0].tolist(), "texts": texts}


def _share_points(release, i, variance_sd, total):
    """The sd of PC ``i``'s PVE in points (None where none is known)."""
    shares = getattr(release, "explained_variance_ratio_noise_scale_", None)
    if shares is not None:
        return 100 * float(shares[i]) if np.isfinite(shares[i]) else None
    return 100 * variance_sd / total if total and np.isfinite(variance_sd) else None


def _named_points(ax, points, texts, height):
    xy = _pixels(ax, points, height)
    return {"kind": "points", "x": xy[:, 0].tolist(), "y": xy[:, 1].tolist(),
            "texts": texts}


def _variables(release, display, shown, pair, height):
    names = [str(name) for name in release.feature_names_in_]
    index = [names.index(str(name)) for name in shown.variables_]
    if display == "loading":
        V = release.components_
        points = [(V[pair[0], j], V[pair[1], j]) for j in index]
        texts = [f"{names[j]}: {_loading_words(release, j, pair)}" for j in index]
    elif display == "variable":
        points = shown.coordinates_
        texts = []
        for i, j in enumerate(index):
            r = shown.correlations_[i]
            text = (f"{names[j]}: correlation with PC{pair[0] + 1} {r[0]:+.2f}, with "
                    f"PC{pair[1] + 1} {r[1]:+.2f} (private)")
            if shown.beyond_[i]:
                text += "; beyond the circle (noise), drawn on it"
            if shown.uncertain_[i]:
                text += "; its variance is within its noise (grey)"
            texts.append(text)
    else:                                               # the biplot's arrows
        points = np.asarray(shown.arrow_origin_) + np.asarray(
            shown.variable_coordinates_)[index]
        texts = [f"{names[j]}: {_loading_words(release, j, pair)}" for j in index]
    return _named_points(shown.ax_, points, texts, height)


def _score_grid(shown, height):
    ax = shown.ax_
    if isinstance(ax, (list, tuple, np.ndarray)):     # facets: no single grid
        return None
    corners = _pixels(ax, [ax.get_xlim()[0], ax.get_ylim()[0],
                           ax.get_xlim()[1], ax.get_ylim()[1]], height)
    histograms = {"all rows": shown.histogram}
    histograms.update(shown.group_histograms or {})
    return {"kind": "grid", "corners": corners.tolist(),
            "limits": [list(ax.get_xlim()), list(ax.get_ylim())],
            "edges": [np.asarray(e, float).tolist() for e in shown.bin_edges],
            "axes": [int(a) for a in shown.axes],
            "histograms": {str(label): None if h is None else np.asarray(h).tolist()
                           for label, h in histograms.items()}}


def hover_targets(figure, display, shown, release, pair):
    """Where the named things of a drawn picture are, in its image's pixels.

    Parameters
    ----------
    figure : matplotlib Figure
        The picture, already saved (its layout done) at its own dpi.
    display : str
        Which picture (a key of ``DISPLAYS``).
    shown : display object or None
        The display drawn (None: the overview, which has no hover).
    release : ReleasedPCA
        The release drawn: every value said is read off it.
    pair : tuple of 2 int or None
        The components (0-based) on the picture's axes.

    Returns
    -------
    dict or None
        ``kind`` "points" (``x``, ``y``, ``texts``), "columns" (``x``, ``texts``:
        a column of the picture per item) or "grid" (the score histogram's
        cells); None when the picture has nothing to point at.
    """
    if shown is None or getattr(shown, "ax_", None) is None:
        return None
    height = figure.bbox.height
    if display == "scree":
        if release.explained_variance_ratio_ is None:
            return None
        return _scree(release, shown, height)
    if display == "score":
        return _score_grid(shown, height)
    if getattr(shown, "variables_", None) is None or not len(shown.variables_) \
            or pair is None:
        return None
    return _variables(release, display, shown, tuple(int(a) for a in pair), height)


def _cell_text(targets, px, py):
    (x0, y0), (x1, y1) = targets["corners"]
    if not (min(x0, x1) <= px <= max(x0, x1) and min(y0, y1) <= py <= max(y0, y1)):
        return ""
    (lx0, lx1), (ly0, ly1) = targets["limits"]
    x = lx0 + (px - x0) / (x1 - x0) * (lx1 - lx0)
    y = ly0 + (py - y0) / (y1 - y0) * (ly1 - ly0)
    (ex, ey), (a, b) = targets["edges"], targets["axes"]
    ix, iy = np.searchsorted(ex, x) - 1, np.searchsorted(ey, y) - 1
    if not (0 <= ix < len(ex) - 1 and 0 <= iy < len(ey) - 1):
        return f"PC{a + 1} {x:.3g}, PC{b + 1} {y:.3g}: outside the released grid"
    shares = [f"{label} {np.asarray(h)[ix, iy]:.3g}"
              for label, h in targets["histograms"].items() if h is not None]
    return (f"cell PC{a + 1} {ex[ix]:.3g} to {ex[ix + 1]:.3g}, PC{b + 1} "
            f"{ey[iy]:.3g} to {ey[iy + 1]:.3g}: private histogram (share of the "
            "rows) " + ", ".join(shares))


def hover_text(targets, hover):
    """What the pointer at ``hover`` (Shiny's hover input: ``coords_img`` or
    ``x``, ``y`` in image pixels) is on, or "" when it is on nothing."""
    if not targets or not hover:
        return ""
    place = hover.get("coords_img") or hover
    try:
        px, py = float(place["x"]), float(place["y"])
    except (KeyError, TypeError, ValueError):
        return ""
    if targets["kind"] == "grid":
        return _cell_text(targets, px, py)
    x = np.asarray(targets["x"], dtype=float)
    if not len(x):
        return ""
    near = _NEAR_PIXELS
    if targets["kind"] == "columns":
        distance = np.abs(x - px)
        if len(x) > 1:       # anywhere over its column: half the way to the next
            near = max(near, 0.5 * float(np.min(np.abs(np.diff(np.sort(x))))))
    else:
        distance = np.hypot(x - px, np.asarray(targets["y"], dtype=float) - py)
    nearest = int(np.argmin(distance))
    return targets["texts"][nearest] if distance[nearest] <= near else ""
