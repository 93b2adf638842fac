"""Write the released quantities of a fit to JSON, and read them back.

A *release* is what a data custodian may publish after a private fit: the noisy
directions, variances, score frame, histograms and synthetic points, the public
facts (``n``, ``p``, column names, declared group labels, parameters) and the
privacy ledger. :func:`export_release` writes exactly those, never the data or
anything computed from it without noise; :func:`load_release` reads them into a
:class:`ReleasedPCA`, which every display of :mod:`sklearn_dppca.display` accepts in
place of a fitted estimator.

Both walk the one declaration of the layout,
:data:`~sklearn_dppca._release_layout.LAYOUT`: each key is written by the writer of
its kind and read back by the reader of the same kind.
"""

import json
import math
import numbers
import os

import numpy as np
from ._bunch import Bunch

from ._algorithms._projection import back_project, project, whitening_scale
from ._names import feature_names
from ._release_layout import (
    Entry,
    DIMENSION_KEYS,
    FORMAT,
    FORMAT_PREFIX,
    FRAME_LAYOUT,
    LAYOUT,
    NONPRIVATE_KEY,
    NONPRIVATE_LAYOUT,
    RESERVED,
    WITHHELD_PARAMS,
    together,
)
from ._validation import (
    Boolean,
    Instance,
    Interval,
    Pair,
    as_real_numbers,
    check_bool,
    check_component_pair,
    check_field,
    check_param,
    check_projections,
)

__all__ = ["ReleasedPCA", "export_release", "load_release"]


# --------------------------------------------------------------------------------------
# conversion helpers
# --------------------------------------------------------------------------------------
def _finite_array(value, name, ndims=None):
    """A float ndarray of ``value`` with one of ``ndims`` dimensions (None: any);
    NaN or inf is an error (a release is finite)."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"Release field {name!r} is not numeric.") from None
    if ndims is not None and array.ndim not in ndims:
        raise ValueError(
            f"Release field {name!r} must have {' or '.join(map(str, ndims))} "
            f"dimension(s), got shape {array.shape}."
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(
            f"Release field {name!r} contains NaN or inf; a release must be finite, "
            "so nothing is written."
        )
    return array


def _finite_float(value, name):
    return float(_finite_array(value, name, (0,)))


def _ndims(entry):
    return tuple(sorted({len(shape) for shape in entry.shapes}))


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


# --------------------------------------------------------------------------------------
# writing: one writer per kind of entry (see _release_layout.Entry)
# --------------------------------------------------------------------------------------
def _value(container, key):
    """``container[key]`` or ``container.key`` (a Bunch, a dict or an object); None
    when it has neither."""
    try:
        return container[key]
    except (KeyError, TypeError, IndexError):
        return getattr(container, key, None)


def _write_array(value, entry, name=None):
    name = entry.key if name is None else name
    return _finite_array(value, name, _ndims(entry)).tolist()


def _write_number(value, entry, name=None):
    return _finite_float(value, entry.key if name is None else name)


def _write_labels(labels, entry):
    return [_label(label) for label in labels]


def _write_spent(spent, entry):
    eps, delta = spent
    return {"eps": _finite_float(eps, entry.key), "delta": _finite_float(delta, entry.key)}


def _write_budget(budget, entry):
    return {str(part): [_finite_float(value, f"budget[{part!r}]") for value in pair]
            for part, pair in budget.items()}


def _write_frame(frame, entry):
    return {part.key: _WRITERS[part.kind](_value(frame, part.key), part,
                                          f"frame.{part.key}")
            for part in FRAME_LAYOUT}


def _write_edges(edges, entry):
    return [_finite_array(edge, f"bin_edges[{axis}]", (1,)).tolist()
            for axis, edge in enumerate(edges)]


def _write_histograms(histograms, entry, groups):
    """The group histograms as a list in the order of ``groups``."""
    order = list(histograms) if groups is None else groups
    return [_write_array(histograms[label], entry, f"score_histograms[{label!r}]")
            for label in order]


def _write_nonprivate(reference, entry):
    block = {
        "WARNING": (
            "NOT PRIVATE: these values are computed from the raw data without noise. "
            "They are for judging the private release only; never publish them."
        )
    }
    for part in NONPRIVATE_LAYOUT:
        value = _value(reference, part.key)
        block[part.key] = None if value is None else _write_array(
            value, part, f"{NONPRIVATE_KEY}.{part.key}")
    return block


_WRITERS = {
    "array": _write_array,
    "number": _write_number,
    "count": lambda value, entry: int(value),
    "labels": _write_labels,
    "point_labels": _write_labels,
    "axes": lambda axes, entry: [int(a) for a in axes],
    "spent": _write_spent,
    "ledger": lambda ledger, entry: _metadata(list(ledger)),
    "budget": _write_budget,
    "frame": _write_frame,
    "edges": _write_edges,
    "nonprivate": _write_nonprivate,
}


def _written_value(estimator, entry):
    """The JSON value of ``entry`` for ``estimator`` (None: null)."""
    if entry.kind == "format":
        return FORMAT
    if entry.kind == "software":
        return _software()
    if entry.kind == "estimator":
        return _estimator_block(estimator)
    if entry.kind == "names":
        return feature_names(estimator)
    value = getattr(estimator, entry.attribute, None)
    if value is None:
        return None
    if entry.kind == "histograms":
        return _write_histograms(value, entry, getattr(estimator, "groups_", None))
    return _WRITERS[entry.kind](value, entry)


def _write_layout(estimator, include_nonprivate):
    """The release of ``estimator``: every entry of the layout, in its order."""
    release = {}
    for entry in LAYOUT:
        if entry.kind == "nonprivate" and not include_nonprivate:
            continue
        value = _written_value(estimator, entry)
        if value is None and entry.omit_null:
            continue
        release[entry.key] = value
    # an entry is released only with the entries it needs (the threshold of the
    # score histogram with that histogram, ...)
    for entry in LAYOUT:
        if entry.key in release and any(release[need] is None for need in entry.needs):
            release[entry.key] = None
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
    public = {key: value for key, value in params.items() if key not in WITHHELD_PARAMS}
    return {"class": type(estimator).__name__, "params": _metadata(public),
            "seeded": bool(seeded)}


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
    check_bool(include_nonprivate, "include_nonprivate")
    if include_nonprivate and getattr(estimator, "nonprivate_", None) is None:
        raise ValueError(
            "include_nonprivate=True but the estimator stores no non-private "
            "reference; fit it with compute_nonprivate=True."
        )
    release = _write_layout(estimator, include_nonprivate)
    if isinstance(estimator, ReleasedPCA) and estimator.release_:
        # keep the metadata a loaded release came with (``extra`` may override it)
        extra = {**estimator.release_, **(extra or {})}
    if extra is not None:
        check_param(extra, [dict], "extra")
        clash = sorted(set(map(str, extra)) & RESERVED)
        if clash:
            raise ValueError(f"extra must not reuse keys of the release: {clash}.")
        release.update({str(key): _metadata(value) for key, value in extra.items()})

    text = json.dumps(release, indent=1, allow_nan=False)   # a last guard against NaN
    if path is not None:
        with open(os.fspath(path), "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.write("\n")
    return release


# --------------------------------------------------------------------------------------
# reading: every entry is checked against the layout export_release writes, so a file
# edited by hand fails here with the entry's name, not later in a display
# --------------------------------------------------------------------------------------
def _typed(value, kind, name, optional=True):
    """``value`` if it is a ``kind`` (a JSON object or list), or None if allowed."""
    expected = Instance(kind, {dict: "an object", list: "a list"}[kind])
    return check_field(value, [None, expected] if optional else [expected],
                       f"Release field {name!r}")


def _shape_text(shape):
    """``(3, *)``: a shape with ``*`` for any length."""
    text = ", ".join("*" if s is None else str(s) for s in shape)
    return f"({text},)" if len(shape) == 1 else f"({text})"


def _read_array(value, entry, name, dims):
    """A finite, read-only array of one of ``entry.shapes`` (dimension names looked
    up in ``dims``), within ``entry.bound``."""
    if isinstance(value, bool):
        raise ValueError(f"Release field {name!r} must be numeric, got {value!r}.")
    shapes = [tuple(dims.get(s) if isinstance(s, str) else s for s in shape)
              for shape in entry.shapes]
    if isinstance(value, (list, np.ndarray)) and len(value) == 0:
        # no rows: JSON writes [] whatever the width
        value = np.empty((0,) + next((s[1:] for s in shapes if len(s) > 1
                                      and None not in s[1:]), ()))
    array = _finite_array(value, name, _ndims(entry))
    if not any(len(shape) == array.ndim and all(
            want is None or got == want for got, want in zip(array.shape, shape))
            for shape in shapes):
        raise ValueError(
            f"Release field {name!r} has shape {array.shape}, expected "
            f"{' or '.join(_shape_text(s) for s in shapes)}."
        )
    if entry.bound == "non_negative" and np.any(array < 0):
        raise ValueError(f"Release field {name!r} must be >= 0.")
    if entry.bound == "positive" and not np.all(array > 0):
        raise ValueError(f"Release field {name!r} must be > 0.")
    return _frozen(array)


def _read_number(value, entry, name, dims):
    return float(_read_array(value, entry, name, dims))


def _read_count(value, entry, name, dims):
    """A JSON integer ``>= entry.minimum`` (a bool or ``2.5`` is not a count)."""
    return check_field(value, [Interval("int", entry.minimum, None)],
                       f"Release field {name!r}")


def _read_names(value, entry, name, dims):
    names = _typed(value, list, name, optional=False)
    if len(names) != dims["p"] or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{name} must be {dims['p']} strings, got {names!r:.200}.")
    return np.array(names, dtype=object)


def _read_labels(value, entry, name, dims):
    return [_label(label) for label in _typed(value, list, name)]


def _read_axes(value, entry, name, dims):
    axes = _typed(value, list, name)
    try:
        return check_component_pair(axes, dims["k"], name)
    except TypeError as error:     # a file holds no argument types: a bad file
        raise ValueError(str(error)) from None


def _read_frame(value, entry, name, dims):
    frame = _typed(value, dict, name)
    parts = {part.key: _read_entry(frame, part, dims, prefix=f"{name}.")
             for part in FRAME_LAYOUT}
    extent = parts["extent"]
    if not (extent[0] < extent[1] and extent[2] < extent[3]):
        raise ValueError(f"{name} must have an extent [x_min, x_max, y_min, y_max] "
                         "with min < max.")
    return Bunch(**{**parts, "extent": tuple(float(v) for v in extent)})


def _read_edges(value, entry, name, dims):
    edges = _typed(value, list, name)
    if len(edges) != 2:
        raise ValueError(f"{name} must hold two lists of edges, got {len(edges)}.")
    arrays = tuple(_read_array(edge, _AXIS_EDGES, f"{name}[{axis}]", dims)
                   for axis, edge in enumerate(edges))
    if not all(len(edge) >= 2 and np.all(np.diff(edge) > 0) for edge in arrays):
        raise ValueError(f"{name} must be two increasing lists of at least 2 edges.")
    return arrays


def _read_histograms(value, entry, name, dims, groups):
    histograms = _typed(value, list, name)
    if groups is None or len(groups) != len(histograms):
        raise ValueError(f"{name} must be a list aligned with groups.")
    return {label: _read_array(histogram, entry, f"{name}[{label!r}]", dims)
            for label, histogram in zip(groups, histograms)}


def _read_synthetic_groups(value, entry, name, dims, synthetic, groups):
    labels = _read_labels(value, entry, name, dims)
    if synthetic is None or len(labels) != len(synthetic):
        raise ValueError(f"{name} must hold one label per synthetic point.")
    if groups is not None and not set(map(repr, labels)) <= set(map(repr, groups)):
        raise ValueError(f"{name} holds a label that is not in groups.")
    array = np.empty(len(labels), dtype=object)
    array[:] = labels
    array.setflags(write=False)
    return array


def _eps_delta(pair, name):
    eps, delta = check_field(pair, [Pair(Interval("real", 0, None))], f"{name} [eps, delta]")
    return eps, check_field(delta, [Interval("real", 0, 1, closed="left")], f"{name} delta")


def _read_spent(value, entry, name, dims):
    spent = _typed(value, dict, name, optional=False)
    return _eps_delta((spent["eps"], spent["delta"]), name)


def _read_budget(value, entry, name, dims):
    return {str(part): _eps_delta(_typed(pair, list, f"{name}.{part}", optional=False),
                                  f"{name}.{part}")
            for part, pair in _typed(value, dict, name).items()}


def _read_ledger(value, entry, name, dims):
    ledger = _json_metadata(_typed(value, list, name, optional=False))
    if not all(isinstance(item, dict) for item in ledger):
        raise ValueError(f"{name} must be a list of objects, one per mechanism call.")
    for item in ledger:
        _eps_delta((item.get("eps", 0.0), item.get("delta", 0.0)), f"{name} entry")
    return ledger


def _read_estimator(value, entry, name, dims):
    estimator = _typed(value, dict, name) or {}
    params = _json_metadata(_typed(estimator.get("params"), dict, f"{name}.params")
                            or {})
    seeded = check_field(estimator.get("seeded", False), [Boolean()], f"{name}.seeded")
    return str(estimator.get("class", "unknown")), params, seeded


def _read_nonprivate(value, entry, name, dims):
    reference = _typed(value, dict, name)
    return Bunch(**{part.key: _read_entry(reference, part, dims, prefix=f"{name}.")
                    for part in NONPRIVATE_LAYOUT})


_READERS = {
    "array": _read_array,
    "number": _read_number,
    "count": _read_count,
    "names": _read_names,
    "labels": _read_labels,
    "axes": _read_axes,
    "spent": _read_spent,
    "ledger": _read_ledger,
    "budget": _read_budget,
    "frame": _read_frame,
    "edges": _read_edges,
    "estimator": _read_estimator,
    "nonprivate": _read_nonprivate,
    "software": lambda value, entry, name, dims: _typed(value, dict, name),
    "format": lambda value, entry, name, dims: value,   # checked first, by ReleasedPCA
}
# the entry inside another entry: one axis of bin edges
_AXIS_EDGES = Entry("bin_edges", None, "array", shapes=((None,),))


def _read_entry(container, entry, dims, prefix="", values=None):
    """Read ``entry`` out of ``container`` (the release or an object in it)."""
    name = prefix + entry.key
    if entry.key not in container and not entry.optional:
        raise ValueError(f"The release has no {name!r} entry.")
    value = container.get(entry.key)
    if value is None and entry.kind != "estimator":    # (no estimator block: unknown)
        if not entry.optional:
            raise ValueError(f"Release field {name!r} must not be null.")
        return None
    if entry.kind == "histograms":
        return _read_histograms(value, entry, name, dims, values["groups"])
    if entry.kind == "point_labels":
        return _read_synthetic_groups(value, entry, name, dims,
                                      values[entry.needs[0]], values["groups"])
    return _READERS[entry.kind](value, entry, name, dims)


def _dimensions(key, value, dims):
    """Record the dimensions ``components`` or ``bin_edges`` set."""
    if key == "components":
        dims["k"], dims["p"] = value.shape
        if 0 in value.shape:
            raise ValueError(f"components has an empty shape {value.shape}.")
    elif key == "bin_edges" and value is not None:
        dims["bx"], dims["by"] = (len(edge) - 1 for edge in value)


def _read_layout(release):
    """Every entry of the layout, by key: dimension-setting ones first, the others
    checked against them; then the rules that tie entries together."""
    dims, values = {}, {}
    order = sorted(LAYOUT, key=lambda entry: entry.key not in DIMENSION_KEYS)
    for entry in order:
        values[entry.key] = _read_entry(release, entry, dims, values=values)
        _dimensions(entry.key, values[entry.key], dims)
        if entry.equals is not None and values[entry.key] != dims[entry.equals]:
            raise ValueError(
                f"Release field {entry.key!r} is {values[entry.key]}, but components "
                f"has shape {values['components'].shape}."
            )
    _check_presence(values)
    _check_scree(values)
    _check_groups(values)
    _check_ledger(values)
    return values


def _check_presence(values):
    """Entries released together are all present or all null; an entry needs the
    entries it is released with."""
    for tag in dict.fromkeys(entry.together for entry in LAYOUT if entry.together):
        keys = together(tag)
        present = [key for key in keys if values[key] is not None]
        if present and len(present) < len(keys):
            missing = next(key for key in keys if values[key] is None)
            raise ValueError(
                f"Release field {missing!r} is null, but {present[0]!r} is released: "
                f"{', '.join(keys)} are released together (or are all null)."
            )
    for entry in LAYOUT:
        for need in entry.needs:
            if values[entry.key] is not None and values[need] is None:
                raise ValueError(
                    f"Release field {entry.key!r} must be null when {need!r} is null."
                )


def _check_scree(values):
    """Ratios are shares of the total variance, which bounds the retained ones."""
    ratio = values["explained_variance_ratio"]
    if ratio is not None and (np.any(ratio < 0) or np.any(ratio > 1)
                              or math.fsum(ratio) > 1 + 1e-9):
        raise ValueError("Release field 'explained_variance_ratio' must hold shares of "
                         "the total variance: each in [0, 1], summing to at most 1.")
    variance, total = values["explained_variance"], values["total_variance"]
    if variance is None:
        return
    top = max(float(np.max(variance)), total)
    # the total variance bounds the sum of the retained ones (compared in units of
    # the largest value, so that sums of values near the float limit stay finite)
    if top > 0 and math.fsum(variance / top) > (total / top) * (1 + 1e-9) + 1e-12:
        raise ValueError(
            f"Release field 'total_variance' ({total:.6g}) is below the sum of "
            f"explained_variance ({math.fsum(variance / top) * top:.6g}); the total "
            "variance includes every component."
        )


def _check_groups(values):
    groups = values["groups"]
    if groups is not None and (not groups or len(set(map(repr, groups))) != len(groups)):
        raise ValueError(f"groups must be distinct labels, got {groups!r:.200}.")


def _check_ledger(values):
    """The ledger must not spend more than the release's total."""
    eps, delta = values["privacy_spent"]
    ledger = values["privacy_ledger"]
    ledger_eps = math.fsum(float(item.get("eps", 0.0)) for item in ledger)
    ledger_delta = math.fsum(float(item.get("delta", 0.0)) for item in ledger)
    if ledger_eps > eps * (1 + 1e-9) or ledger_delta > delta * (1 + 1e-9) + 1e-300:
        raise ValueError(
            f"The privacy ledger spends eps={ledger_eps:g}, delta={ledger_delta:g}: more "
            f"than the release's privacy_spent ({eps:g}, {delta:g})."
        )
    if eps > 0 and not ledger:
        raise ValueError("privacy_ledger is empty but privacy_spent is not.")


def _attributes(values):
    """The fitted attributes of a :class:`ReleasedPCA`, from the entries read."""
    attributes = {}
    for entry in LAYOUT:
        if isinstance(entry.attribute, tuple):
            value = values[entry.key] or (None,) * len(entry.attribute)
            attributes.update(zip(entry.attribute, value))
        elif entry.attribute is not None:
            attributes[entry.attribute] = values[entry.key]
    return attributes


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
    radius_ : float or None
        The clip radius of directions fitted with ``radial="clipped"``, else None.
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
        if not isinstance(fmt, str) or not fmt.startswith(FORMAT_PREFIX):
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
        values.update(_attributes(_read_layout(release)))
        scree = values["explained_variance_"] is not None
        params = values["estimator_params_"]
        values["method_label_"] = (params.get("scree_method", params.get("method"))
                                   if scree else None)
        values["release_"] = {key: value for key, value in release.items()
                              if key not in RESERVED}

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
        """Project ``X`` on the released directions, as the estimator's ``transform``.

        ``X @ components_.T``; with a released ``scale_`` (a fit with
        ``scale=True``) each column is first divided by its private spread, and a
        release of a fit with ``whiten=True`` divides each projection by the
        square root of its private variance. Not centred, as the estimators'
        ``transform`` (subtract ``frame_.center`` for the score axes if you need a
        centre). The projection of rows you pass is not a private release.

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
        X = np.asarray(as_real_numbers(X), dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features_in_}), got {X.shape}."
            )
        return project(X, self.components_, self.scale_, self._whitening())

    def inverse_transform(self, X):
        """Map projections back to the feature space, as the estimator does.

        The back-projection onto the span of the released directions: the rows
        of ``transform(X)`` come back as the orthogonal projection of ``X`` on
        that span. No mean is added: none is released.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Projections, as ``transform`` returns them.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X @ components_``, with ``X`` first multiplied by the
            square root of each private variance for a release of a fit with
            ``whiten=True`` and the result multiplied by a released ``scale_``;
            in the dtype of ``X``.
        """
        X = check_projections(X, self.n_components_)
        return back_project(X, self.components_, self.scale_, self._whitening())

    def _whitening(self):
        """The divisors of a whitened projection (None: the fit did not whiten)."""
        if not self.estimator_params_.get("whiten", False):
            return None
        if self.explained_variance_ is None:
            raise ValueError("The release was fitted with whiten=True but holds no "
                             "private variances to whiten with.")
        return whitening_scale(self.explained_variance_)

    def summary(self):
        """Summarise the release (nothing is recomputed).

        Returns
        -------
        FitSummary
            ``str()`` of it is the plain-text summary; it renders as HTML in
            Jupyter.
        """
        from ._summary import summarize

        return summarize(self)
