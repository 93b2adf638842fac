"""Write the released quantities of a fit to JSON, and read them back.

A *release* is what a data custodian may publish after a private fit: the noisy
directions, variances, score frame, histograms and synthetic points, the public
facts (``n``, ``p``, column names, declared group labels, parameters) and the
privacy ledger. :func:`export_release` writes exactly those, never the data or
anything computed from it without noise; :func:`load_release` reads them into a
:class:`ReleasedPCA`, which every display of :mod:`sklearn_dppca.display` accepts in
place of a fitted estimator.
"""

import json
import math
import numbers
import os

import numpy as np
from sklearn.utils import Bunch

from ._validation import check_count

__all__ = ["ReleasedPCA", "export_release", "load_release"]

#: Name and version of the JSON layout written by :func:`export_release`.
FORMAT = "sklearn-dppca-release/1"
_FORMAT_PREFIX = "sklearn-dppca-release/"

#: The only key under which non-private values may ever appear.
NONPRIVATE_KEY = "nonprivate_reference_NOT_PRIVATE"

#: Estimator parameters that are never written: a seed lets anyone who knows it
#: regenerate the noise and subtract it from the release.
#: Not written: a seed lets anyone regenerate the noise; an accountant is a live
#: budget of the data set, not a setting of this release.
_WITHHELD_PARAMS = ("random_state", "accountant")

# Released arrays: JSON key -> (attribute, number of dimensions)
_ARRAYS = {
    "components": ("components_", 2),
    "explained_variance": ("explained_variance_", 1),
    "explained_variance_raw": ("explained_variance_raw_", 1),
    "explained_variance_ratio": ("explained_variance_ratio_", 1),
    "noise_scale": ("noise_scale_", None),
    "clip_bounds": ("clip_bounds_", 1),
    "kendall_matrix": ("kendall_matrix_", 2),
    "kendall_eigenvalues": ("kendall_eigenvalues_", 1),
    "score_histogram": ("score_histogram_", 2),
    "synthetic_scores": ("synthetic_scores_", 2),
    "scale": ("scale_", 1),
    "feature_variance": ("feature_variance_", 1),
    "feature_variance_noise_scale": ("feature_variance_noise_scale_", 1),
    "total_variance": ("total_variance_", 0),
    "total_variance_noise_scale": ("total_variance_noise_scale_", 0),
}

# Released with the score summary only (null without one): the count threshold of
# the additive histogram and the expected number of pure-noise cells that pass it.
_SCORE_SCALARS = {
    "histogram_threshold": "histogram_threshold_",
    "expected_noise_cells": "expected_noise_cells_",
}

# Released together with the private variances of a scree (all, or all null).
_SCREE_KEYS = ("explained_variance", "explained_variance_raw", "explained_variance_ratio",
               "feature_variance", "feature_variance_noise_scale", "total_variance",
               "total_variance_noise_scale")

_NONPRIVATE_ARRAYS = {
    "components": 2,
    "explained_variance": 1,
    "explained_variance_ratio": 1,
    "scores": 2,
    "score_histogram": 2,
    "feature_variance": 1,
    "total_variance": 0,
}

_RESERVED = frozenset(
    list(_ARRAYS) + list(_SCORE_SCALARS)
    + [
        "format", "software", "estimator", "n_samples", "n_features", "feature_names",
        "n_components", "axes", "frame", "bin_edges", "groups", "score_histograms",
        "synthetic_groups", "budget", "privacy_spent", "privacy_ledger", NONPRIVATE_KEY,
    ]
)


# --------------------------------------------------------------------------------------
# conversion helpers
# --------------------------------------------------------------------------------------
def _finite_array(value, name, ndim=None):
    """A float ndarray of ``value``; NaN or inf is an error (a release is finite)."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"Release field {name!r} is not numeric.") from None
    if ndim is not None and array.ndim != ndim:
        raise ValueError(
            f"Release field {name!r} must have {ndim} dimension(s), got shape {array.shape}."
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(
            f"Release field {name!r} contains NaN or inf; a release must be finite, "
            "so nothing is written."
        )
    return array


def _finite_float(value, name):
    return float(_finite_array(value, name, ndim=0))


def _label(value, name="group label"):
    """A group label as a JSON scalar (str, int, finite float or bool)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (str, bool)) or value is None:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        if not math.isfinite(value):
            raise ValueError(f"A {name} is NaN or inf: {value!r}.")
        return float(value)
    raise TypeError(
        f"A {name} must be a str, int, float or bool to be written to JSON, got "
        f"{type(value).__name__} {value!r}."
    )


def _metadata(value):
    """Public metadata (parameters, ledger) as plain JSON values.

    Non-finite floats become the strings ``"inf"``, ``"-inf"`` or ``"nan"`` (JSON
    has no such numbers); arrays become lists; a fitted estimator passed as a
    parameter becomes its class name.
    """
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(key): _metadata(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return [_metadata(item) for item in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_metadata(item) for item in value]
    if hasattr(value, "get_params") and hasattr(value, "fit"):
        return {"estimator": type(value).__name__}
    if isinstance(value, np.random.Generator):
        return "numpy.random.Generator"
    return repr(value)


def _json_metadata(value):
    """Inverse of :func:`_metadata` for numbers written as strings."""
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, dict):
        return {key: _json_metadata(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_metadata(item) for item in value]
    return value


def _get(estimator, attribute):
    return getattr(estimator, attribute, None)


def _feature_names(estimator):
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(name) for name in names]
    return [f"x{j}" for j in range(int(estimator.n_features_in_))]


def _frame_value(frame, key):
    try:
        return frame[key]
    except (KeyError, TypeError, IndexError):
        return getattr(frame, key)


# --------------------------------------------------------------------------------------
# export
# --------------------------------------------------------------------------------------
def export_release(estimator, path=None, *, include_nonprivate=False, extra=None):
    """Collect the released quantities of a fitted estimator as JSON.

    The result holds exactly what the fit released (noisy directions, private
    variances, score frame, histograms and synthetic points, clip bounds), the public
    facts (``n_samples``, ``n_features``, column names, the declared group labels,
    the estimator's class and parameters) and the privacy ledger with the total
    spend. The data, the exact statistics and the seed are never written:
    ``random_state`` is withheld (anyone who knows a seed can regenerate the noise;
    ``estimator.seeded`` only says whether one was set).

    Parameters
    ----------
    estimator : DPPCA, DPScree, DPKendallDirections or ReleasedPCA
        A fitted estimator of this package (or a loaded release).
    path : str or path-like, default=None
        Where to write the JSON (UTF-8, indented). None writes nothing.
    include_nonprivate : bool, default=False
        Also write the estimator's non-private reference (``nonprivate_``, stored
        with ``compute_nonprivate=True``) under the single key
        ``"nonprivate_reference_NOT_PRIVATE"``. Those values are computed from the
        raw data without noise: never publish such a file.
    extra : dict, default=None
        Additional public metadata written at the top level (JSON-able values; a
        key of the release itself is an error).

    Returns
    -------
    release : dict
        The JSON content, as written.

    Raises
    ------
    ValueError
        If a released value is NaN or infinite (nothing is written), if
        ``include_nonprivate=True`` but no reference is stored, or if ``extra``
        reuses a key of the release.
    TypeError
        If ``estimator`` is not a fitted private estimator of this package.

    See Also
    --------
    load_release : Read the release back as a :class:`ReleasedPCA`.
    DPPCA : The estimator whose releases hold every picture.

    Notes
    -----
    Layout (format ``"sklearn-dppca-release/1"``): ``axes`` are 0-based component
    indices; ``scale`` is null or one private spread per column;
    ``feature_variance``, ``feature_variance_noise_scale``, ``total_variance`` and
    ``total_variance_noise_scale`` come with the variances of a scree (null
    otherwise), ``histogram_threshold`` and ``expected_noise_cells`` with the
    score summary; ``frame`` has ``center``, ``radius``, ``half_width`` and
    ``extent`` ``[x_min, x_max, y_min, y_max]``; ``score_histogram`` is indexed
    ``[ix][iy]``;
    ``score_histograms`` is a list aligned with ``groups``; ``privacy_spent`` is
    ``{"eps": ..., "delta": ...}``; non-finite numbers in metadata (a parameter
    set to infinity) are written as the strings ``"inf"``, ``"-inf"``, ``"nan"``.

    Examples
    --------
    >>> from sklearn_dppca import DPPCA, export_release, load_release
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> X = make_gaussian_clusters(100, random_state=0)
    >>> pca = DPPCA(random_state=0).fit(X)
    >>> release = export_release(pca)
    >>> release["privacy_spent"]["eps"] <= 1.0
    True
    >>> load_release(release).components_.shape
    (2, 20)
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    for attribute in ("components_", "privacy_ledger_", "privacy_spent_", "n_features_in_"):
        if getattr(estimator, attribute, None) is None:
            raise TypeError(
                f"export_release needs a fitted DPKendallDirections, DPScree or DPPCA "
                f"(or a ReleasedPCA); {type(estimator).__name__} has no {attribute}."
            )
    if not isinstance(include_nonprivate, (bool, np.bool_)):
        raise TypeError(f"include_nonprivate must be a bool, got {include_nonprivate!r}.")

    components = _finite_array(estimator.components_, "components", ndim=2)
    n_components, n_features = components.shape
    eps, delta = estimator.privacy_spent_
    release = {
        "format": FORMAT,
        "software": _software(),
        "estimator": _estimator_block(estimator),
        "n_samples": int(estimator.n_samples_),
        "n_features": int(n_features),
        "feature_names": _feature_names(estimator),
        "n_components": int(n_components),
        "privacy_spent": {"eps": _finite_float(eps, "privacy_spent"),
                          "delta": _finite_float(delta, "privacy_spent")},
        "privacy_ledger": _metadata(list(estimator.privacy_ledger_)),
    }
    budget = _get(estimator, "budget_")
    if budget is not None:
        release["budget"] = {
            str(part): [_finite_float(value, f"budget[{part!r}]") for value in pair]
            for part, pair in budget.items()
        }
    for key, (attribute, ndim) in _ARRAYS.items():
        value = _get(estimator, attribute)
        if value is None:
            release[key] = None
            continue
        array = _finite_array(value, key, ndim)
        release[key] = array.tolist()
    if np.ndim(_get(estimator, "noise_scale_")) not in (0, 1):
        raise ValueError("Release field 'noise_scale' must be a number or a vector.")
    release.update(_score_block(estimator))
    if include_nonprivate:
        reference = _get(estimator, "nonprivate_")
        if reference is None:
            raise ValueError(
                "include_nonprivate=True but the estimator stores no non-private "
                "reference; fit it with compute_nonprivate=True."
            )
        release[NONPRIVATE_KEY] = _nonprivate_block(reference)
    if isinstance(estimator, ReleasedPCA) and estimator.release_:
        # keep the metadata a loaded release came with (``extra`` may override it)
        extra = {**estimator.release_, **(extra or {})}
    if extra is not None:
        if not isinstance(extra, dict):
            raise TypeError(f"extra must be a dict or None, got {type(extra).__name__}.")
        clash = sorted(set(map(str, extra)) & _RESERVED)
        if clash:
            raise ValueError(f"extra must not reuse keys of the release: {clash}.")
        release.update({str(key): _metadata(value) for key, value in extra.items()})

    text = json.dumps(release, indent=1, allow_nan=False)   # a last guard against NaN
    if path is not None:
        with open(os.fspath(path), "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.write("\n")
    return release


def _software():
    from ._version import __version__

    return {"name": "sklearn-dppca", "version": __version__}


def _estimator_block(estimator):
    if isinstance(estimator, ReleasedPCA):
        return {
            "class": estimator.estimator_class_,
            "params": _metadata(estimator.estimator_params_),
            "seeded": bool(estimator.seeded_),
        }
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    seeded = params.get("random_state") is not None
    public = {key: value for key, value in params.items() if key not in _WITHHELD_PARAMS}
    return {"class": type(estimator).__name__, "params": _metadata(public),
            "seeded": bool(seeded)}


def _score_block(estimator):
    """Axes, frame, bin edges, group histograms and synthetic points (or nulls)."""
    block = {"axes": None, "frame": None, "bin_edges": None, "groups": None,
             "score_histograms": None, "synthetic_groups": None}
    axes = _get(estimator, "axes_")
    if axes is not None:
        block["axes"] = [int(a) for a in axes]
    groups = _get(estimator, "groups_")
    if groups is not None:
        block["groups"] = [_label(label) for label in groups]
    frame = _get(estimator, "frame_")
    if frame is not None:
        block["frame"] = {
            "center": _finite_array(_frame_value(frame, "center"), "frame.center",
                                    1).tolist(),
            "radius": _finite_float(_frame_value(frame, "radius"), "frame.radius"),
            "half_width": _finite_float(_frame_value(frame, "half_width"),
                                        "frame.half_width"),
            "extent": _finite_array(_frame_value(frame, "extent"), "frame.extent",
                                    1).tolist(),
        }
    edges = _get(estimator, "bin_edges_")
    if edges is not None:
        block["bin_edges"] = [
            _finite_array(edge, f"bin_edges[{axis}]", 1).tolist()
            for axis, edge in enumerate(edges)
        ]
    histograms = _get(estimator, "score_histograms_")
    if histograms is not None:
        order = list(groups) if groups is not None else list(histograms)
        block["score_histograms"] = [
            _finite_array(histograms[label], f"score_histograms[{label!r}]", 2).tolist()
            for label in order
        ]
        if groups is None:
            block["groups"] = [_label(label) for label in order]
    synthetic_groups = _get(estimator, "synthetic_groups_")
    if synthetic_groups is not None:
        block["synthetic_groups"] = [_label(label) for label in synthetic_groups]
    for key, attribute in _SCORE_SCALARS.items():
        value = _get(estimator, attribute) if frame is not None else None
        block[key] = None if value is None else _finite_float(value, key)
    return block


def _nonprivate_block(reference):
    block = {
        "WARNING": (
            "NOT PRIVATE: these values are computed from the raw data without noise. "
            "They are for judging the private release only; never publish them."
        )
    }
    for key, ndim in _NONPRIVATE_ARRAYS.items():
        try:
            value = reference[key]
        except (KeyError, TypeError):
            value = getattr(reference, key, None)
        block[key] = None if value is None else _finite_array(
            value, f"{NONPRIVATE_KEY}.{key}", ndim).tolist()
    return block


# --------------------------------------------------------------------------------------
# reading: every entry is checked against the layout export_release writes, so a file
# edited by hand fails here with the entry's name, not later in a display
# --------------------------------------------------------------------------------------
def _count(value, name, minimum):
    """A JSON integer ``>= minimum`` (a bool or ``2.5`` is not a count)."""
    return check_count(value, f"Release field {name!r}", minimum)


def _typed(value, kind, name, optional=True):
    """``value`` if it is a ``kind`` (a JSON object or list), or None if allowed."""
    if value is None and optional:
        return None
    if not isinstance(value, kind):
        expected = {dict: "an object", list: "a list"}[kind]
        raise ValueError(
            f"Release field {name!r} must be {expected}"
            + (" or null" if optional else "") + f", got {type(value).__name__}."
        )
    return value


def _released_array(value, name, shape):
    """A finite, read-only array of the given shape (None in ``shape``: any size)."""
    if isinstance(value, bool):
        raise ValueError(f"Release field {name!r} must be numeric, got {value!r}.")
    array = _finite_array(value, name, len(shape))
    if any(want is not None and got != want for got, want in zip(array.shape, shape)):
        expected = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(
            f"Release field {name!r} has shape {array.shape}, expected {expected}."
        )
    return _frozen(array)


def _optional_array(release, key, shape):
    value = release.get(key)
    return None if value is None else _released_array(value, key, shape)


def _non_negative(array, name):
    if array is not None and np.any(array < 0):
        raise ValueError(f"Release field {name!r} must be >= 0.")
    return array


def _read_shape(release):
    components = _released_array(release["components"], "components", (None, None))
    n_components, n_features = components.shape
    if n_components < 1 or n_features < 1:
        raise ValueError(f"components has an empty shape {components.shape}.")
    if (_count(release["n_features"], "n_features", 1) != n_features
            or _count(release["n_components"], "n_components", 1) != n_components):
        raise ValueError(
            f"components has shape {components.shape}, but n_components="
            f"{release['n_components']} and n_features={release['n_features']}."
        )
    names = _typed(release["feature_names"], list, "feature_names", optional=False)
    if len(names) != n_features or not all(isinstance(name, str) for name in names):
        raise ValueError(f"feature_names must be {n_features} strings, got {names!r:.200}.")
    return dict(
        n_samples_=_count(release["n_samples"], "n_samples", 2),
        n_features_in_=n_features,
        feature_names_in_=np.array(names, dtype=object),
        n_components_=n_components,
        components_=components,
    )


def _optional_number(release, key):
    """A finite number >= 0, or None for a missing or null entry."""
    value = release.get(key)
    if value is None:
        return None
    return float(_non_negative(_released_array(value, key, ()), key))


def _read_arrays(release, n_components, n_features):
    values = {
        f"explained_variance{suffix}_": _optional_array(
            release, "explained_variance" + suffix, (n_components,))
        for suffix in ("", "_raw", "_ratio")
    }
    for key in ("feature_variance", "feature_variance_noise_scale"):
        values[key + "_"] = _non_negative(_optional_array(release, key, (n_features,)),
                                          key)
    for key in ("total_variance", "total_variance_noise_scale"):
        values[key + "_"] = _optional_number(release, key)
    released = {key: values[key + "_"] is not None for key in _SCREE_KEYS}
    if any(released.values()) and not all(released.values()):
        missing = [key for key, present in released.items() if not present]
        raise ValueError(
            f"Release field {missing[0]!r} is null, but a scree is released: "
            f"{', '.join(_SCREE_KEYS)} are released together (or are all null)."
        )
    ratio = values["explained_variance_ratio_"]
    if ratio is not None and (np.any(ratio < 0) or np.any(ratio > 1)
                              or math.fsum(ratio) > 1 + 1e-9):
        raise ValueError("Release field 'explained_variance_ratio' must hold shares of "
                         "the total variance: each in [0, 1], summing to at most 1.")
    variance = values["explained_variance_"]
    if variance is not None:
        _non_negative(variance, "explained_variance")
        total = values["total_variance_"]
        top = max(float(np.max(variance)), total)
        # the total variance bounds the sum of the retained ones (compared in units of
        # the largest value, so that sums of values near the float limit stay finite)
        if top > 0 and math.fsum(variance / top) > (total / top) * (1 + 1e-9) + 1e-12:
            raise ValueError(
                f"Release field 'total_variance' ({total:.6g}) is below the sum of "
                f"explained_variance ({math.fsum(variance / top) * top:.6g}); the total "
                "variance includes every component."
            )
    scale = _optional_array(release, "scale", (n_features,))
    if scale is not None and not np.all(scale > 0):
        raise ValueError("Release field 'scale' must be null or hold n_features positive "
                         "spreads.")
    values["scale_"] = scale
    noise = release.get("noise_scale")
    if noise is not None:    # one scale (directions) or one per component (scree)
        noise = _released_array(noise, "noise_scale",
                                () if np.ndim(noise) == 0 else (n_components,))
    values["noise_scale_"] = _non_negative(noise, "noise_scale")
    bounds = _optional_array(release, "clip_bounds", (None,))
    if bounds is not None and (len(bounds) not in (1, n_components) or np.any(bounds <= 0)):
        raise ValueError(f"clip_bounds must be 1 or {n_components} positive numbers.")
    values["clip_bounds_"] = bounds
    values["kendall_matrix_"] = _optional_array(release, "kendall_matrix",
                                                (n_features, n_features))
    values["kendall_eigenvalues_"] = _optional_array(release, "kendall_eigenvalues",
                                                     (n_features,))
    return values


def _read_axes(value, n_components):
    axes = _typed(value, list, "axes")
    if axes is None:
        return None
    if (len(axes) != 2 or axes[0] == axes[1]
            or not all(_count(a, "axes", 0) < n_components for a in axes)):
        raise ValueError(
            f"axes must be two different component indices below {n_components}, "
            f"got {axes!r}."
        )
    return tuple(int(a) for a in axes)


def _read_frame(value):
    frame = _typed(value, dict, "frame")
    if frame is None:
        return None
    center = _released_array(frame["center"], "frame.center", (2,))
    radius = float(_non_negative(_released_array(frame["radius"], "frame.radius", ()),
                                 "frame.radius"))
    half_width = float(_released_array(frame["half_width"], "frame.half_width", ()))
    extent = _released_array(frame["extent"], "frame.extent", (4,))
    if not (half_width > 0 and extent[0] < extent[1] and extent[2] < extent[3]):
        raise ValueError("frame must have half_width > 0 and an extent "
                         "[x_min, x_max, y_min, y_max] with min < max.")
    return Bunch(center=center, radius=radius, half_width=half_width,
                 extent=tuple(float(v) for v in extent))


def _read_edges(value):
    edges = _typed(value, list, "bin_edges")
    if edges is None:
        return None
    if len(edges) != 2:
        raise ValueError(f"bin_edges must hold two lists of edges, got {len(edges)}.")
    arrays = tuple(_released_array(edge, f"bin_edges[{axis}]", (None,))
                   for axis, edge in enumerate(edges))
    if not all(len(edge) >= 2 and np.all(np.diff(edge) > 0) for edge in arrays):
        raise ValueError("bin_edges must be two increasing lists of at least 2 edges.")
    return arrays


def _read_labels(value, name):
    labels = _typed(value, list, name)
    return None if labels is None else [_label(label) for label in labels]


def _read_scores(release, n_components):
    """Axes, frame, edges, histograms, groups and synthetic points, cross-checked."""
    axes = _read_axes(release.get("axes"), n_components)
    frame = _read_frame(release.get("frame"))
    edges = _read_edges(release.get("bin_edges"))
    cells = None if edges is None else (len(edges[0]) - 1, len(edges[1]) - 1)
    histogram = _optional_array(release, "score_histogram", cells or (None, None))
    present = [part is not None for part in (frame, edges, histogram)]
    if any(present) and not all(present):
        raise ValueError("frame, bin_edges and score_histogram are released together "
                         "(or are all null).")
    if all(present) and axes is None:
        raise ValueError("A score summary (frame, histogram) needs its axes.")
    groups = _read_labels(release.get("groups"), "groups")
    if groups is not None and (not groups or len(set(map(repr, groups))) != len(groups)):
        raise ValueError(f"groups must be distinct labels, got {groups!r:.200}.")
    histograms = _typed(release.get("score_histograms"), list, "score_histograms")
    if histograms is not None:
        if groups is None or len(groups) != len(histograms) or histogram is None:
            raise ValueError("score_histograms must be a list aligned with groups, "
                             "beside a score_histogram.")
        histograms = {
            label: _released_array(hist, f"score_histograms[{label!r}]", histogram.shape)
            for label, hist in zip(groups, histograms)
        }
    value = release.get("synthetic_scores")
    if isinstance(value, (list, np.ndarray)) and len(value) == 0:
        value = np.empty((0, 2))          # no synthetic points: JSON writes []
    synthetic = None if value is None else _released_array(value, "synthetic_scores",
                                                           (None, 2))
    threshold = _optional_number(release, "histogram_threshold")
    noise_cells = _optional_number(release, "expected_noise_cells")
    if histogram is None and threshold is not None:
        raise ValueError("Release field 'histogram_threshold' must be null without a "
                         "score histogram.")
    if histogram is None and noise_cells is not None:
        raise ValueError("Release field 'expected_noise_cells' must be null without a "
                         "score histogram.")
    if histogram is not None and noise_cells is None:
        raise ValueError("Release field 'expected_noise_cells' is missing: a score "
                         "histogram is released with the expected number of its cells "
                         "that are pure noise (0 for the sparse histogram).")
    return dict(axes_=axes, frame_=frame, bin_edges_=edges, score_histogram_=histogram,
                groups_=groups, score_histograms_=histograms, synthetic_scores_=synthetic,
                synthetic_groups_=_read_synthetic_groups(release, synthetic, groups),
                histogram_threshold_=threshold, expected_noise_cells_=noise_cells)


def _read_synthetic_groups(release, synthetic, groups):
    labels = _read_labels(release.get("synthetic_groups"), "synthetic_groups")
    if labels is None:
        return None
    if synthetic is None or len(labels) != len(synthetic):
        raise ValueError("synthetic_groups must hold one label per synthetic point.")
    if groups is not None and not set(map(repr, labels)) <= set(map(repr, groups)):
        raise ValueError("synthetic_groups holds a label that is not in groups.")
    array = np.empty(len(labels), dtype=object)
    array[:] = labels
    array.setflags(write=False)
    return array


def _eps_delta(pair, name):
    if len(pair) != 2:
        raise ValueError(f"{name} must be a pair [eps, delta], got {pair!r}.")
    eps, delta = (float(_released_array(v, name, ())) for v in pair)
    if eps < 0 or not 0 <= delta < 1:
        raise ValueError(f"{name} must have eps >= 0 and 0 <= delta < 1.")
    return eps, delta


def _read_privacy(release):
    """Spent budget, its split and the ledger; the ledger must not exceed the total."""
    spent = _typed(release["privacy_spent"], dict, "privacy_spent", optional=False)
    eps, delta = _eps_delta((spent["eps"], spent["delta"]), "privacy_spent")
    budget = _typed(release.get("budget"), dict, "budget")
    if budget is not None:
        budget = {str(part): _eps_delta(_typed(pair, list, f"budget.{part}",
                                               optional=False), f"budget.{part}")
                  for part, pair in budget.items()}
    ledger = _json_metadata(_typed(release["privacy_ledger"], list, "privacy_ledger",
                                   optional=False))
    if not all(isinstance(entry, dict) for entry in ledger):
        raise ValueError("privacy_ledger must be a list of objects, one per mechanism "
                         "call.")
    charged = [_eps_delta((entry.get("eps", 0.0), entry.get("delta", 0.0)),
                          "privacy_ledger entry") for entry in ledger]
    ledger_eps = math.fsum(e for e, _ in charged)
    ledger_delta = math.fsum(d for _, d in charged)
    if ledger_eps > eps * (1 + 1e-9) or ledger_delta > delta * (1 + 1e-9) + 1e-300:
        raise ValueError(
            f"The privacy ledger spends eps={ledger_eps:g}, delta={ledger_delta:g}: more "
            f"than the release's privacy_spent ({eps:g}, {delta:g})."
        )
    if eps > 0 and not ledger:
        raise ValueError("privacy_ledger is empty but privacy_spent is not.")
    return dict(privacy_spent_=(eps, delta), budget_=budget, privacy_ledger_=ledger)


def _read_estimator(release, has_scree):
    _typed(release.get("software"), dict, "software")
    estimator = _typed(release.get("estimator"), dict, "estimator") or {}
    params = _json_metadata(_typed(estimator.get("params"), dict, "estimator.params") or {})
    seeded = estimator.get("seeded", False)
    if not isinstance(seeded, bool):
        raise ValueError(f"estimator.seeded must be true or false, got {seeded!r}.")
    method = params.get("scree_method", params.get("method"))
    return dict(estimator_class_=str(estimator.get("class", "unknown")),
                estimator_params_=params, seeded_=seeded,
                method_label_=method if has_scree else None)


def _read_nonprivate(value, n_features):
    reference = _typed(value, dict, NONPRIVATE_KEY)
    if reference is None:
        return None
    arrays = {}
    for key, ndim in _NONPRIVATE_ARRAYS.items():
        shape = {"components": (None, n_features),
                 "feature_variance": (n_features,)}.get(key, (None,) * ndim)
        value = reference.get(key)
        arrays[key] = None if value is None else _released_array(
            value, f"{NONPRIVATE_KEY}.{key}", shape)
    return Bunch(**arrays)


# --------------------------------------------------------------------------------------
# load
# --------------------------------------------------------------------------------------
def load_release(path_or_dict):
    """Read a release written by :func:`export_release`.

    Nothing is recomputed: the object returned holds the released values as the
    file has them, checked for type, shape and finiteness, and cannot be refitted.

    Parameters
    ----------
    path_or_dict : str, path-like or dict
        A JSON file, or the dict :func:`export_release` returned.

    Returns
    -------
    release : ReleasedPCA
        A read-only object with the fitted attributes of the estimator that made
        the release; pass it to any display's ``from_estimator`` or to
        :func:`~sklearn_dppca.display.plot_overview`.

    Raises
    ------
    ValueError
        If the content is not a release of a known format, has an entry of the
        wrong type, is inconsistent (shapes) or holds a NaN or infinite value.

    See Also
    --------
    export_release : Write the release of a fitted estimator.
    ReleasedPCA : The object returned.

    Examples
    --------
    >>> from sklearn_dppca import DPPCA, export_release, load_release
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> X = make_gaussian_clusters(100, random_state=0)
    >>> pca = DPPCA(bins=(20, 20), random_state=0).fit(X)
    >>> released = load_release(export_release(pca))
    >>> released.score_histogram_.shape
    (20, 20)
    >>> bool(released.total_variance_ >= released.explained_variance_.sum())
    True
    """
    if isinstance(path_or_dict, dict):
        content = path_or_dict
    else:
        with open(os.fspath(path_or_dict), encoding="utf-8") as handle:
            try:
                content = json.load(handle, parse_constant=_reject_constant)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path_or_dict}: not valid JSON ({error}).") from None
    return ReleasedPCA(content)


def _reject_constant(name):
    raise ValueError(f"A release must not contain {name}.")


def _frozen(array):
    array = np.array(array, dtype=np.float64)
    array.setflags(write=False)
    return array


class ReleasedPCA:
    """A loaded release: the fitted attributes of a private PCA, read-only.

    Built by :func:`load_release` from the JSON of :func:`export_release`. It
    carries the attributes the displays read (``components_``,
    ``explained_variance_``, ``explained_variance_ratio_``, ``frame_``,
    ``bin_edges_``, ``score_histogram_``, ``score_histograms_``,
    ``synthetic_scores_``, ``synthetic_groups_``, ``groups_``, ``axes_``,
    ``privacy_spent_``, ``privacy_ledger_``, ...), counts as fitted for
    scikit-learn, and cannot be refitted: it holds no data. An attribute the
    release does not contain (for example the score summary of a
    :class:`~sklearn_dppca.DPScree`) is None.

    Parameters
    ----------
    release : dict
        The content of a release (see :func:`export_release`).

    Attributes
    ----------
    n_samples_ : int
        Number of rows of the fit (public).
    n_features_in_ : int
        Number of variables (public).
    feature_names_in_ : ndarray of str
        Column names (public); ``x0, x1, ...`` for a fit on an array.
    n_components_ : int
        Number of components released.
    components_ : ndarray of shape (n_components, n_features)
        Private directions, one per row.
    explained_variance_ : ndarray of shape (n_components,) or None
        Private variances (post-processed).
    explained_variance_raw_ : ndarray of shape (n_components,) or None
        Private variances as released.
    explained_variance_ratio_ : ndarray of shape (n_components,) or None
        Private PVE: ``explained_variance_ / total_variance_``, a share of the
        total variance (summing below 1 when fewer components than variables are
        kept).
    noise_scale_ : float, ndarray or None
        Standard deviation(s) of the Gaussian noise of the release (of each raw
        private variance for a scree).
    scale_ : ndarray of shape (n_features,) or None
        Private spread of each column when the fit scaled the columns
        (``scale=True``, correlation PCA); ``transform`` divides by it.
    feature_variance_ : ndarray of shape (n_features,) or None
        Private variance of each column in the units the components act on (all
        ones for a scaled fit).
    feature_variance_noise_scale_ : ndarray of shape (n_features,) or None
        Noise standard deviation of each (for a scaled fit: the relative noise of
        the released spread).
    total_variance_ : float or None
        Private total variance (at least the sum of ``explained_variance_``).
    total_variance_noise_scale_ : float or None
        Its noise standard deviation.
    histogram_threshold_ : float or None
        Count threshold applied to the additive score histogram (None for the
        sparse histogram or without a score summary).
    expected_noise_cells_ : float or None
        Expected number of cells of the score grid (all groups together) that are
        pure noise yet pass the threshold (0 for the sparse histogram); None
        without a score summary.
    clip_bounds_ : ndarray or None
        Private clip bound(s) of the scree.
    kendall_matrix_ : ndarray of shape (n_features, n_features) or None
        The released noisy Kendall matrix.
    kendall_eigenvalues_ : ndarray or None
        Its eigenvalues (a DPKendallDirections release).
    axes_ : tuple of int or None
        The two components (0-based) of the score summary.
    frame_ : Bunch or None
        ``center``, ``radius``, ``half_width``, ``extent``.
    bin_edges_ : tuple of two ndarrays or None
        Cell edges of the score histogram along each axis.
    score_histogram_ : ndarray or None
        Normalised private score histogram, indexed ``[ix, iy]``.
    groups_ : list or None
        The declared public group labels.
    score_histograms_ : dict or None
        Label -> normalised private histogram of that group.
    synthetic_scores_ : ndarray of shape (n_synthetic, 2) or None
        Score points drawn from the private histograms (post-processing).
    synthetic_groups_ : ndarray of object or None
        The group of each synthetic point.
    budget_ : dict or None
        Each part's nominal share of the grant, ``(share * eps, share * delta)``.
    privacy_spent_ : tuple (eps, delta)
        Total privacy spent by the fit.
    privacy_ledger_ : list of dict
        One entry per mechanism call of the fit.
    nonprivate_ : Bunch or None
        Only when the file holds the ``"nonprivate_reference_NOT_PRIVATE"`` key.
        NOT private.
    estimator_class_ : str
        Name of the estimator class that made the release.
    estimator_params_ : dict
        Public parameters of the estimator (``random_state`` is never written).
    seeded_ : bool
        Whether the fit used a fixed ``random_state``.
    method_label_ : str or None
        The scree method.
    release_ : dict
        The extra top-level metadata of the file (for example what the command
        line adds).

    See Also
    --------
    load_release : Build one from a file or dict.
    export_release : Write the release of a fitted estimator.

    Examples
    --------
    >>> from sklearn_dppca import DPKendallDirections, ReleasedPCA, export_release
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> X = make_gaussian_clusters(50, random_state=0)
    >>> est = DPKendallDirections(n_components=2, random_state=0).fit(X)
    >>> released = ReleasedPCA(export_release(est))
    >>> released.estimator_class_, released.transform(X).shape
    ('DPKendallDirections', (250, 2))
    >>> released.score_histogram_ is None
    True
    """

    def __init__(self, release):
        if not isinstance(release, dict):
            raise TypeError(f"A release is a dict, got {type(release).__name__}.")
        fmt = release.get("format")
        if not isinstance(fmt, str) or not fmt.startswith(_FORMAT_PREFIX):
            raise ValueError(
                f"Not a sklearn-dppca release (format {fmt!r}; expected {FORMAT!r})."
            )
        if fmt != FORMAT:
            raise ValueError(
                f"Release format {fmt!r} is not supported by this version (reads {FORMAT!r})."
            )
        values = {}
        try:
            self._read(release, values)
        except KeyError as error:
            raise ValueError(f"The release has no {error.args[0]!r} entry.") from None
        except (TypeError, AttributeError, IndexError) as error:
            # an entry of the wrong type (a number where a list belongs, ...)
            raise ValueError(f"The release has a malformed entry: {error}") from None
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @staticmethod
    def _read(release, values):
        values.update(_read_shape(release))
        n_components, n_features = values["components_"].shape
        values.update(_read_arrays(release, n_components, n_features))
        values.update(_read_scores(release, n_components))
        values.update(_read_privacy(release))
        values.update(_read_estimator(release, values["explained_variance_"] is not None))
        values["nonprivate_"] = _read_nonprivate(release.get(NONPRIVATE_KEY), n_features)
        values["release_"] = {key: value for key, value in release.items()
                              if key not in _RESERVED}

    def __setattr__(self, name, value):
        raise AttributeError(f"ReleasedPCA is read-only: cannot set {name!r}.")

    def __delattr__(self, name):
        raise AttributeError(f"ReleasedPCA is read-only: cannot delete {name!r}.")

    def __sklearn_is_fitted__(self):
        return True

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags())

    def __repr__(self):
        eps, delta = self.privacy_spent_
        return (
            f"ReleasedPCA({self.estimator_class_}, n_samples={self.n_samples_}, "
            f"n_features={self.n_features_in_}, n_components={self.n_components_}, "
            f"eps={eps:g}, delta={delta:g})"
        )

    def fit(self, X=None, y=None):
        """Not available: a release holds no data to fit on.

        Parameters
        ----------
        X : None
            Ignored.
        y : None
            Ignored.

        Raises
        ------
        TypeError
            Always.
        """
        raise TypeError(
            "A ReleasedPCA is a loaded release and holds no data; fit a DPPCA instead."
        )

    def transform(self, X):
        """Project ``X`` on the released directions: ``X @ components_.T``.

        With a released ``scale_`` (a fit with ``scale=True``) each column is first
        divided by its private spread: ``(X / scale_) @ components_.T``. Not
        centred, as the estimators' ``transform`` (subtract ``frame_.center`` for
        the score axes if you need a centre). The projection of rows you pass is
        not a private release.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to project; a DataFrame's columns are matched by name.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            The projections on the released directions.
        """
        if hasattr(X, "columns"):
            missing = [name for name in self.feature_names_in_ if name not in X.columns]
            if missing:
                raise ValueError(f"X lacks the released columns {missing}.")
            X = X[list(self.feature_names_in_)]
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features_in_}), got {X.shape}."
            )
        if self.scale_ is not None:
            X = X / self.scale_
        return X @ self.components_.T

    def summary(self):
        """Summarise the release (nothing is recomputed).

        Returns
        -------
        FitSummary
            ``str()`` of it is the plain-text summary; it renders as HTML in
            Jupyter.
        """
        from ._summary import FitSummary, budget_line, directions_table, reference_line

        sections = [(None, [
            f"Estimator: {self.estimator_class_}",
            f"Data: {self.n_samples_} observations x {self.n_features_in_} variables",
            f"Components: {self.n_components_}",
        ])]
        if self.budget_:
            sections.append(("Privacy budget by part:", [
                f"  {part:<8} eps = {eps:<10.4g} delta = {delta:.3g}"
                for part, (eps, delta) in self.budget_.items()
            ]))
        if self.explained_variance_ is not None:
            lines = [f"Scree method: {self.method_label_}"]
            if self.scale_ is not None:
                lines.append("Columns divided by private spreads (correlation PCA)")
            lines.append(f"Total variance: {self.total_variance_:.4g} "
                         f"(noise sd {self.total_variance_noise_scale_:.3g})")
            for l, (variance, ratio) in enumerate(
                zip(self.explained_variance_, self.explained_variance_ratio_)
            ):
                lines.append(f"  PC{l + 1}: variance {variance:.4g}  PVE {100 * ratio:.1f}% "
                             "of the total")
            sections.append(("Private variances (post-processed):", lines))
        if self.frame_ is not None:
            center, half = self.frame_.center, self.frame_.half_width
            groups = "none" if self.groups_ is None else ", ".join(map(str, self.groups_))
            n_synthetic = 0 if self.synthetic_scores_ is None else len(self.synthetic_scores_)
            threshold = ("none" if self.histogram_threshold_ is None
                         else f"{self.histogram_threshold_:.4g} noisy counts")
            sections.append(("Score summary:", [
                f"  axes: PC{self.axes_[0] + 1} x PC{self.axes_[1] + 1}",
                f"  frame: centre ({center[0]:.4g}, {center[1]:.4g}), half width {half:.4g}",
                f"  histogram: {self.estimator_params_.get('histogram', '?')}, "
                f"bins {self.score_histogram_.shape}",
                f"  cell threshold: {threshold}; pure-noise cells expected to pass: "
                f"{self.expected_noise_cells_:.2g}",
                f"  groups: {groups}",
                f"  synthetic points: {n_synthetic}",
            ]))
        heading, table = directions_table(self.components_, list(self.feature_names_in_))
        sections.append((heading, table))
        sections.append((None, [budget_line(*self.privacy_spent_),
                                reference_line(self.nonprivate_ is not None)]))
        return FitSummary("DP PCA Release Summary", sections)
