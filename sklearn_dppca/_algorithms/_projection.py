"""The projection on released directions and the way back, shared by the
estimators and :class:`~sklearn_dppca.ReleasedPCA` (post-processing of the
release)."""

import numpy as np


def whitening_scale(explained_variance):
    """Per-component divisor of a whitened projection: the square root of each
    private variance (a zero or not estimable, NaN, variance whitens to 0 instead
    of dividing by 0)."""
    positive = explained_variance > 0
    return np.where(positive, np.sqrt(np.where(positive, explained_variance, 1.0)),
                    np.inf)


#: ``scale_origin_``: what divided each column of a ``scale=True`` fit (its
#: private spread, its declared box's public unit, nothing).
SCALE_ORIGINS = ("private", "box", "none")


def scale_origins(scale, origin):
    """Where each divisor of ``scale_`` came from (``scale_origin_``), or for a
    release written before the origins were: a finite spread was a private one,
    NaN kept its unit. None without ``scale``."""
    if scale is None:
        return None
    if origin is not None:
        return np.asarray(origin, dtype=object)
    return np.where(np.isfinite(np.asarray(scale, dtype=float)), "private",
                    "none").astype(object)


def column_divisors(spreads):
    """The divisors of the columns: the released spreads, 1 where a spread is NaN
    (not estimable: that column stays in its own unit, as the fit read it)."""
    spreads = np.asarray(spreads, dtype=np.float64)
    return np.where(np.isfinite(spreads), spreads, 1.0)


def project(X, components, spreads=None, whitening=None):
    """``((X / spreads) @ components.T) / whitening``, in the dtype of ``X``.

    ``spreads`` (the private column spreads of ``scale=True``, NaN where not
    estimable: :func:`column_divisors`) and ``whitening`` (:func:`whitening_scale`;
    a variance that is NaN or 0 whitens to 0) may be None. Divisors stay float64: a spread or a
    whitening sd below float32's range must not round to 0; an overflow raises a
    ValueError instead of returning infinities.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if spreads is not None:
            X = (X / column_divisors(spreads)).astype(X.dtype, copy=False)
        projection = X @ components.T.astype(X.dtype, copy=False)
        if whitening is not None:
            projection = (projection / whitening).astype(X.dtype, copy=False)
    if not np.all(np.isfinite(projection)):
        raise ValueError(
            f"The projection of X overflows {X.dtype}: X is too large to project "
            "(or to whiten by a tiny variance). Divide X by a constant, or pass "
            "float64 data."
        )
    return projection


def back_project(X_new, components, spreads=None, whitening=None):
    """``((X_new * whitening) @ components) * spreads``, in the dtype of ``X_new``.

    The inverse of :func:`project` on the span of ``components`` (orthonormal
    rows): a point of the span comes back unchanged, any other row comes back as
    its orthogonal projection on the span. No mean is added: none is released.
    A whitening divisor of ``inf`` (a zero variance, whose projection
    :func:`project` sends to 0) multiplies by 0.
    """
    dtype = X_new.dtype
    with np.errstate(over="ignore", invalid="ignore"):
        if whitening is not None:
            factor = np.where(np.isfinite(whitening), whitening, 0.0)
            X_new = (X_new * factor).astype(dtype, copy=False)
        X = X_new @ components.astype(dtype, copy=False)
        if spreads is not None:
            X = (X * column_divisors(spreads)).astype(dtype, copy=False)
    if not np.all(np.isfinite(X)):
        raise ValueError(
            f"The back-projection of X_new overflows {dtype}: X_new is too large. "
            "Divide it by a constant, or pass float64 data."
        )
    return X
