"""Checks of the displays' arguments, on top of :mod:`sklearn_dppca._validation`
(the package's one validation system and its error policy: a wrong type is a
TypeError, a wrong value a ValueError, both naming the argument)."""

import numpy as np

from .._names import default_feature_names
from .._validation import (
    Instance,
    Interval,
    InvalidParameterError,
    check_component_pair,
    check_param,
)

#: The heatmap shows at most this many components unless asked for more.
_MAX_DEFAULT_COMPONENTS = 10


def check_style(kw, name):
    """A copy of the style dict ``kw`` ({} for None)."""
    kw = check_param(kw, [None, Instance(dict, "a dict")], name)
    return {} if kw is None else dict(kw)


def check_axes(axes, n_components, name="axes"):
    """Two distinct 0-based component indices below ``n_components`` (which must be
    at least 2: a two-component picture)."""
    if n_components < 2:
        raise ValueError(
            f"{name}: a two-component picture needs at least 2 components; there "
            f"is {n_components}."
        )
    return check_component_pair(axes, n_components, name)


def check_component_indices(components, n_components, name="components"):
    """A list of 0-based component indices: an int, a list of ints, or None (the
    first ``min(n_components, 10)``)."""
    if components is None:
        return list(range(min(n_components, _MAX_DEFAULT_COMPONENTS)))
    index = Interval("int", 0, n_components - 1)
    if index.has_type(components):
        components = [components]
    if isinstance(components, str) or not np.iterable(components):
        raise InvalidParameterError(f"{name} must be an int or a list of ints, got "
                                    f"{components!r}.")
    indices = [check_param(c, [index], name) for c in components]
    if not indices:
        raise ValueError(f"{name} must not be empty.")
    return indices


def as_floats(values, name):
    """``values`` as a float array, or a ValueError naming ``name`` (never its
    values) where they are not numbers."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers.") from None


def as_components(components, name="components"):
    """A finite, non-empty 2-D float array (directions, one per row)."""
    components = as_floats(components, name)
    if components.ndim != 2 or components.size == 0:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_components, n_features), got "
            f"shape {components.shape}."
        )
    if not np.all(np.isfinite(components)):
        raise ValueError(f"{name} must be finite.")
    return components


def as_components_noise(noise, components, name="components_noise_scale"):
    """The noise sd of each loading, of the shape of ``components`` (None stays
    None); NaN (unknown) is kept, negative or infinite entries are refused."""
    if noise is None:
        return None
    noise = as_floats(noise, name)
    if noise.shape != components.shape:
        raise ValueError(f"{name} has shape {noise.shape}; components has shape "
                         f"{components.shape}.")
    known = noise[~np.isnan(noise)]
    if not np.all(np.isfinite(known)) or np.any(known < 0):
        raise ValueError(f"{name} must hold non-negative finite numbers or NaN.")
    return noise


def as_reference_components(reference, components):
    """The non-private directions, of the shape of the private ``components``."""
    reference = as_components(reference, "nonprivate_components")
    if reference.shape != components.shape:
        raise ValueError(
            f"nonprivate_components has shape {reference.shape}; components has "
            f"shape {components.shape}."
        )
    return reference


def as_ratio(ratio, n_components):
    """The private PVE ``explained_variance_ratio`` as a vector (None stays None);
    NaN entries (not estimable) are kept."""
    if ratio is None:
        return None
    return as_vector(ratio, "explained_variance_ratio", n_components, allow_nan=True)


def as_vector(values, name, length=None, nonnegative=False, allow_nan=False):
    """A finite 1-D float array (of ``length`` entries, non-negative, if asked).

    With ``allow_nan``, NaN entries (a quantity the fit could not estimate) are
    kept; infinity is refused either way.
    """
    values = as_floats(values, name)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}.")
    if length is not None and values.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {values.shape[0]}.")
    checked = values[~np.isnan(values)] if allow_nan else values
    if not np.all(np.isfinite(checked)):
        raise ValueError(f"{name} must be finite" + (" or NaN (not estimable)."
                                                     if allow_nan else "."))
    if nonnegative and np.any(checked < 0):
        raise ValueError(f"{name} must be non-negative.")
    return values


def check_feature_names(feature_names, n_features):
    """Return a list of ``n_features`` names (``x0, x1, ...`` for None)."""
    if feature_names is None:
        return default_feature_names(n_features)
    names = [str(f) for f in feature_names]
    if len(names) != n_features:
        raise ValueError(
            f"feature_names has {len(names)} names but there are {n_features} features."
        )
    return names


def select_variables(variables, feature_names, weights, max_default=30):
    """Indices of the variables to draw.

    ``variables`` is None (all when there are at most ``max_default``, else the
    ``max_default`` with the largest ``weights``), ``"all"``, a name, or a list of
    names or 0-based indices. Names that are no feature and indices out of range
    are ValueErrors; items of another type TypeErrors.
    """
    n_features = len(feature_names)
    if variables is None:
        if n_features <= max_default:
            return np.arange(n_features)
        order = np.argsort(-np.asarray(weights), kind="stable")[:max_default]
        return np.sort(order)
    if isinstance(variables, str):
        if variables == "all":
            return np.arange(n_features)
        variables = [variables]
    if not np.iterable(variables):
        raise InvalidParameterError(
            "variables must be None, 'all', or a list of feature names or 0-based "
            f"indices, got {variables!r}."
        )
    requested = list(variables)
    if not requested:
        raise ValueError("variables must not be empty.")
    lookup = {name: j for j, name in enumerate(feature_names)}
    index = Interval("int", 0, n_features - 1)
    indices = []
    for v in requested:
        if isinstance(v, str):
            if v not in lookup:
                raise ValueError(f"variables: unknown feature name {v!r}.")
            indices.append(lookup[v])
        else:
            indices.append(check_param(v, [index], "variables"))
    return np.asarray(list(dict.fromkeys(indices)), dtype=int)
