"""A release's values as JSON and back: the conversions its writer and its reader share.

A released array or number is finite (JSON has no NaN or infinity), except in
the entries a fit may leave not estimable (``Entry.not_estimable``): there a NaN
is written as the string :data:`_NOT_ESTIMABLE_JSON` (``"not estimable"``), in
place of the number or of one element of the list, and read back as NaN.
Infinity is refused everywhere. A group label is a JSON scalar; public metadata
(parameters, the ledger) write their non-finite numbers as strings and read them
back.
"""

import math
import numbers

import numpy as np


#: How a release writes a NaN (a quantity the fit could not estimate) in the
#: entries that may hold one.
_NOT_ESTIMABLE_JSON = "not estimable"


def _decode_not_estimable(value, replacement=math.nan):
    """``value`` (a JSON number, list or the string) with the string replaced by
    ``replacement``, at any depth."""
    if isinstance(value, str) and value == _NOT_ESTIMABLE_JSON:
        return replacement
    if isinstance(value, list):
        return [_decode_not_estimable(item, replacement) for item in value]
    return value


def encode_not_estimable(array):
    """``array.tolist()`` (or a float) with every NaN written as
    :data:`_NOT_ESTIMABLE_JSON`."""
    def encode(item):
        if isinstance(item, list):
            return [encode(i) for i in item]
        return _NOT_ESTIMABLE_JSON if math.isnan(item) else item
    return encode(np.asarray(array, dtype=np.float64).tolist())


def finite_array(value, name, ndims=None, allow_nan=False):
    """A float ndarray of ``value`` with one of ``ndims`` dimensions (None: any);
    NaN or inf is an error (a release is finite), except that with ``allow_nan``
    a NaN is kept (not estimable), and with ``allow_nan="encoded"`` (a file being
    read) only the string :data:`_NOT_ESTIMABLE_JSON` becomes NaN: a bare NaN
    in the file stays an error."""
    if allow_nan == "encoded":
        finite_array(_decode_not_estimable(value, 0.0), name, ndims)
    if allow_nan:
        value = _decode_not_estimable(value)
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"Release field {name!r} is not numeric.") from None
    if ndims is not None and array.ndim not in ndims:
        raise ValueError(
            f"Release field {name!r} must have {' or '.join(map(str, ndims))} "
            f"dimension(s), got shape {array.shape}."
        )
    if allow_nan and not np.any(np.isinf(array)):
        return array
    if not np.all(np.isfinite(array)):
        raise ValueError(
            f"Release field {name!r} contains NaN or inf; a release must be finite, "
            "so nothing is written."
        )
    return array


def entry_ndims(entry):
    return tuple(sorted({len(shape) for shape in entry.shapes}))


def json_label(value, name="group label"):
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


def json_metadata(value):
    """Public metadata (parameters, ledger) as plain JSON values.

    Non-finite floats become the strings ``"inf"``, ``"-inf"`` or ``"nan"`` (JSON
    has no such numbers); arrays become lists; a fitted estimator passed as a
    parameter becomes its class name (a frozen one, that of the estimator it
    freezes, marked ``"frozen": true``).
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
        return {str(key): json_metadata(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return [json_metadata(item) for item in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [json_metadata(item) for item in value]
    if hasattr(value, "get_params") and hasattr(value, "fit"):
        from sklearn.frozen import FrozenEstimator   # (an estimator: sklearn is loaded)

        if isinstance(value, FrozenEstimator):
            return {"estimator": type(value.estimator).__name__, "frozen": True}
        return {"estimator": type(value).__name__}
    if isinstance(value, np.random.Generator):
        return "numpy.random.Generator"
    return repr(value)


def read_json_metadata(value):
    """Inverse of :func:`json_metadata` for numbers written as strings."""
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, dict):
        return {key: read_json_metadata(item) for key, item in value.items()}
    if isinstance(value, list):
        return [read_json_metadata(item) for item in value]
    return value
