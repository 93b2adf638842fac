"""Reading a release: every entry checked against the layout the writer follows.

Each key of :data:`~sklearn_dppca._release_layout.LAYOUT` is read by the reader of
its kind (type, shape, finiteness, bounds), then the rules that tie entries
together are checked (released together, the scree's shares, the groups, the
ledger's total), so that a file edited by hand fails here with the entry's name,
not later in a display. :func:`read_attributes` returns what a
:class:`~sklearn_dppca.ReleasedPCA` holds.
"""

import math

import numpy as np

from ._algorithms._projection import SCALE_ORIGINS
from ._bunch import Bunch
from ._release_layout import (
    DIMENSION_KEYS,
    FRAME_LAYOUT,
    LAYOUT,
    NONPRIVATE_LAYOUT,
    Entry,
    together,
)
from ._release_values import entry_ndims, finite_array, json_label, read_json_metadata
from ._validation import (
    Boolean,
    Instance,
    Interval,
    InvalidParameterError,
    Pair,
    check_component_pair,
    check_field,
)


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
    array = finite_array(value, name, entry_ndims(entry), allow_nan="encoded" if entry.not_estimable else False)
    if not any(len(shape) == array.ndim and all(
            want is None or got == want for got, want in zip(array.shape, shape))
            for shape in shapes):
        raise ValueError(
            f"Release field {name!r} has shape {array.shape}, expected "
            f"{' or '.join(_shape_text(s) for s in shapes)}."
        )
    known = array[~np.isnan(array)]        # (NaN: not estimable)
    if entry.bound == "non_negative" and np.any(known < 0):
        raise ValueError(f"Release field {name!r} must be >= 0.")
    if entry.bound == "positive" and not np.all(known > 0):
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


def _read_origins(value, entry, name, dims):
    origins = _typed(value, list, name)
    if len(origins) != dims["p"] or not all(origin in SCALE_ORIGINS for origin in origins):
        raise ValueError(f"{name} must be {dims['p']} of {list(SCALE_ORIGINS)}, got "
                         f"{origins!r:.200}.")
    return np.array(origins, dtype=object)


def _read_labels(value, entry, name, dims):
    return [json_label(label) for label in _typed(value, list, name)]


def _read_axes(value, entry, name, dims):
    axes = _typed(value, list, name)
    try:
        return check_component_pair(axes, dims["k"], name)
    except InvalidParameterError as error:     # a file holds no arguments: a bad file
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
    ledger = read_json_metadata(_typed(value, list, name, optional=False))
    if not all(isinstance(item, dict) for item in ledger):
        raise ValueError(f"{name} must be a list of objects, one per mechanism call.")
    for item in ledger:
        _eps_delta((item.get("eps", 0.0), item.get("delta", 0.0)), f"{name} entry")
    return ledger


#: What the summary and the displays read of a plan's rows.
_PLAN_KEYS = ("step", "released", "eps_needed")


def _read_plan(value, entry, name, dims):
    """The plan's rows (kept as dicts: ``ReleasedPCA.plan_`` makes its DataFrame
    when asked, so that a redraw does not import pandas), each with the same keys,
    among them those the summary reads, typed."""
    rows = read_json_metadata(_typed(value, list, name))
    if not rows or not all(isinstance(row, dict) and list(row) == list(rows[0])
                           and all(key in row for key in _PLAN_KEYS) for row in rows):
        raise ValueError(f"{name} must be a list of objects, one per step of the plan, "
                         f"each with the same keys, among them {', '.join(_PLAN_KEYS)}.")
    for row in rows:
        if not isinstance(row["step"], str) or not isinstance(row["released"], bool) \
                or not isinstance(row["eps_needed"], (int, float)):
            raise ValueError(f"{name}: each step's 'step' must be a string, its "
                             "'released' a boolean and its 'eps_needed' a number.")
    return tuple(rows)


def _read_estimator(value, entry, name, dims):
    estimator = _typed(value, dict, name) or {}
    params = read_json_metadata(_typed(estimator.get("params"), dict, f"{name}.params")
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
    "origins": _read_origins,
    "axes": _read_axes,
    "spent": _read_spent,
    "ledger": _read_ledger,
    "plan": _read_plan,
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
    _check_scale_origin(values)
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


def _check_scale_origin(values):
    """A column keeps its unit (origin ``"none"``) exactly where its divisor is
    NaN (not estimable)."""
    origin = values["scale_origin"]
    if origin is not None and not np.array_equal(origin == "none",
                                                 np.isnan(values["scale"])):
        raise ValueError("Release field 'scale_origin' must be 'none' exactly where "
                         "'scale' is not estimable.")


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


def read_attributes(release):
    """The fitted attributes of a :class:`~sklearn_dppca.ReleasedPCA`: every entry of
    the release ``release`` (a dict) read and checked.

    Parameters
    ----------
    release : dict
        The content of a release, its format already checked.

    Returns
    -------
    attributes : dict
        Attribute name -> value, one per attribute the layout declares.
    """
    return _attributes(_read_layout(release))


def _frozen(array):
    array = np.array(array, dtype=np.float64)
    array.setflags(write=False)
    return array
