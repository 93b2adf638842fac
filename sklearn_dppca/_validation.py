"""Input and parameter validation shared by the estimators.

Only scikit-learn's public API is used (``sklearn.utils.validation``).
"""

import math
import numbers
import warnings

import numpy as np
from sklearn.utils.validation import validate_data

from ._kendall import _check_pairs as _check_partners
from .privacy import check_delta, check_eps
from .privacy._accountant import PrivacyAccountant
from .privacy._accounting import ACCOUNTING_METHODS

FLOAT_DTYPES = (np.float64, np.float32)
#: The pair terms of the directions' matrix (see DPKendallDirections).
RADIAL_FUNCTIONS = ("spherical", "clipped")

# The public data domain of the estimators that release variances (DPScree, DPPCA)
# and of the non-private reference: ``max |X| <= 2**500`` (about 3.3e150). Their
# statistics are squares of the data's scale (a pair difference of such rows
# projected on a unit vector, squared, stays below ``p 2**1002``), so no float
# overflows; beyond it the variances themselves may not be representable. The
# directions (DPKendallDirections) are scale invariant and have no such limit.
MAX_ABS_VALUE = 2.0 ** 500


def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _non_numeric_columns(X):
    """Names of the DataFrame columns that are not numeric (bool counts as numeric)."""
    from pandas.api.types import is_numeric_dtype

    return [column for column, dtype in zip(X.columns, X.dtypes) if not is_numeric_dtype(dtype)]


def validate_features(estimator, X, *, reset):
    """Validate ``X`` for ``fit`` (``reset=True``) or ``transform``.

    DataFrame columns that are not numeric are dropped with a ``UserWarning``
    naming them at ``fit``, and the same columns are dropped again at
    ``transform``. The result is a 2-D float64 or float32 array (float32 is kept),
    finite, with at least 2 rows at ``fit``. Sets ``n_features_in_`` and
    ``feature_names_in_`` at ``fit`` through scikit-learn's ``validate_data``.
    """
    if _is_dataframe(X):
        if reset:
            dropped = _non_numeric_columns(X)
            if dropped and len(dropped) == X.shape[1]:
                raise ValueError(
                    "X has no numeric columns; non-numeric columns: "
                    f"{[str(c) for c in dropped]}."
                )
            if dropped:
                warnings.warn(
                    f"Dropping non-numeric columns of X: {[str(c) for c in dropped]}.",
                    UserWarning,
                    stacklevel=3,
                )
            estimator._dropped_columns_ = dropped
        dropped = [c for c in getattr(estimator, "_dropped_columns_", []) if c in X.columns]
        if dropped:
            X = X.drop(columns=dropped)
    elif reset:
        estimator._dropped_columns_ = []
    # scikit-learn's finiteness check first sums X, which emits a RuntimeWarning
    # (invalid value) when X holds both +inf and -inf; its ValueError follows.
    with np.errstate(invalid="ignore", over="ignore"):
        return validate_data(
            estimator,
            X,
            reset=reset,
            dtype=list(FLOAT_DTYPES),
            ensure_min_samples=2 if reset else 1,
        )


def check_max_abs(X, what):
    """Raise a ValueError naming X when ``max |X|`` exceeds :data:`MAX_ABS_VALUE`.

    The limit is a public rule (the data domain), so the privacy guarantee holds
    for all neighbouring data sets inside it; it is not a private release.
    """
    largest = float(np.max(np.abs(X))) if X.size else 0.0
    if largest > MAX_ABS_VALUE:
        raise ValueError(
            "X has values beyond 2**500 (about 3.3e150) in absolute value: too large "
            f"for {what}, which are squares of the data's scale. Divide X by a "
            "constant (the directions do not change; the variances scale by its "
            "square)."
        )
    return X


def check_count(value, name, minimum):
    """An int ``>= minimum`` (a bool or ``2.5`` is not one); ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def check_n_components(n_components, n_available, name="n_components"):
    """``None`` means all ``n_available``; otherwise an int in [1, n_available]."""
    if n_components is None:
        return n_available
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral):
        raise TypeError(f"{name} must be None or an int, got {n_components!r}.")
    if not 1 <= n_components <= n_available:
        raise ValueError(
            f"{name}={n_components} must lie in [1, {n_available}] "
            f"(n_features={n_available})."
        )
    return int(n_components)


def check_choice(value, choices, name):
    """``value`` must be one of ``choices`` (a tuple of strings)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}.")
    return value


def check_budget_params(eps, delta):
    """Validate the total budget of a fit: eps > 0, delta in (0, 1)."""
    return check_eps(eps, "eps"), check_delta(delta, "delta")


def check_n_jobs(n_jobs):
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0
    ):
        raise ValueError(f"n_jobs must be None or a non-zero int, got {n_jobs!r}.")
    return n_jobs


def check_pairs(pairs):
    """``"all"`` or the kernel's rule for ``m`` partners per row (an int >= 1)."""
    if isinstance(pairs, str) and pairs == "all":
        return pairs
    return _check_partners(pairs)


def check_bool(value, name):
    """``True`` or ``False`` (NumPy's bool too); ValueError otherwise."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def check_share(value, name):
    """A share of a budget, strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}.")
    return float(value)


def check_accounting(accounting, noise):
    """``accounting`` in ("gdp", "basic"); ``noise`` calibrates basic parts only.

    Under ``"gdp"`` every Gaussian part's noise sd is ``sensitivity / mu_i`` from
    the composed block, so a per-part calibration (``noise="classical"``) has
    nothing to calibrate: that pair is an error rather than silently ignored.
    """
    accounting = check_choice(accounting, ACCOUNTING_METHODS, "accounting")
    if accounting == "gdp" and noise == "classical":
        raise ValueError("noise='classical' calibrates each Gaussian part alone; it "
                         "needs accounting='basic' (accounting='gdp' composes them "
                         "exactly).")
    return accounting


def check_accountant(accountant):
    """None or a :class:`~sklearn_dppca.PrivacyAccountant`."""
    if accountant is not None and not isinstance(accountant, PrivacyAccountant):
        raise TypeError(f"accountant must be None or a PrivacyAccountant, got "
                        f"{type(accountant).__name__}.")
    return accountant


def check_radial(radial, radius, radius_level):
    """Validate ``radial``, ``radius`` ("auto" or a public float > 0) and
    ``radius_level`` ("auto" or in (0, 1)); returns them."""
    check_choice(radial, RADIAL_FUNCTIONS, "radial")
    if not (isinstance(radius, str) and radius == "auto"):
        if isinstance(radius, bool) or not isinstance(radius, numbers.Real) or not (
                math.isfinite(radius) and radius > 0):
            raise ValueError(f"radius must be 'auto' or a finite number > 0, got {radius!r}.")
        radius = float(radius)
    if isinstance(radius_level, str) and radius_level == "auto":
        return radial, radius, radius_level
    return radial, radius, check_share(radius_level, "radius_level")
