"""The one validation system: parameter constraints, data checks, random state.

A leaf module: it imports NumPy and scikit-learn's public API and nothing of this
package, so the kernel, the privacy toolkit, the algorithms, the estimators, the
release reader, the displays and the command line all check their inputs here.

Error policy (the same everywhere):

* a value of the wrong type (a string for a number, a float for a count, a bool
  for a number, a number for a choice) raises :class:`TypeError`;
* a value of the right type outside its range or set raises :class:`ValueError`.

Both name the argument. Messages show the argument as given, which is a public
setting, never data: data arrays are checked by :func:`validate_features` and
:func:`check_max_abs`, whose messages state the rule only.

Estimators declare ``_parameter_constraints`` (name -> list of constraints, in the
manner of scikit-learn's own estimators) and call :func:`validate_params` at the
start of ``fit``; functions call :func:`check_param` for each argument.
"""

import math
import numbers
import warnings

import numpy as np
from sklearn.utils.validation import validate_data

FLOAT_DTYPES = (np.float64, np.float32)

# The public data domain of the estimators that release variances (DPScree, DPPCA)
# and of the non-private reference: ``max |X| <= 2**500`` (about 3.3e150). Their
# statistics are squares of the data's scale (a pair difference of such rows
# projected on a unit vector, squared, stays below ``p 2**1002``), so no float
# overflows; beyond it the variances themselves may not be representable. The
# directions (DPKendallDirections) are scale invariant and have no such limit.
MAX_ABS_VALUE = 2.0 ** 500


# --------------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------------


class _Constraint:
    """A rule for one argument: a type test, then a value test."""

    def has_type(self, value):
        raise NotImplementedError

    def has_value(self, value):
        return True

    def convert(self, value):
        return value

    def __str__(self):
        raise NotImplementedError


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


class Interval(_Constraint):
    """A number (``kind`` "real" or "int"; bools excluded) between ``low`` and
    ``high`` (None: unbounded); ``closed`` is "both", "left", "right" or
    "neither". Real intervals hold finite numbers only."""

    def __init__(self, kind, low=None, high=None, closed="both"):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def has_type(self, value):
        return _is_int(value) if self.kind == "int" else _is_real(value)

    def has_value(self, value):
        if self.kind == "real" and not math.isfinite(value):
            return False
        low_closed = self.closed in ("both", "left")
        high_closed = self.closed in ("both", "right")
        if self.low is not None and (value < self.low or (value == self.low and not low_closed)):
            return False
        return self.high is None or value < self.high or (value == self.high and high_closed)

    def convert(self, value):
        return int(value) if self.kind == "int" else float(value)

    def __str__(self):
        what = "an int" if self.kind == "int" else "a finite number"
        if self.low is None and self.high is None:
            return what
        if self.high is None:
            return f"{what} {'>=' if self.closed in ('both', 'left') else '>'} {self.low}"
        if self.low is None:
            return f"{what} {'<=' if self.closed in ('both', 'right') else '<'} {self.high}"
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        return f"{what} in {left}{self.low}, {self.high}{right}"


class Options(_Constraint):
    """One of the strings ``options``."""

    def __init__(self, *options):
        self.options = tuple(options)

    def has_type(self, value):
        return isinstance(value, str)

    def has_value(self, value):
        return value in self.options

    def __str__(self):
        return " or ".join(repr(option) for option in self.options)


class Boolean(_Constraint):
    """True or False (NumPy's bool too)."""

    def has_type(self, value):
        return isinstance(value, (bool, np.bool_))

    def convert(self, value):
        return bool(value)

    def __str__(self):
        return "True or False"


class Instance(_Constraint):
    """An instance of ``cls`` (a class or a tuple of classes), described as ``what``."""

    def __init__(self, cls, what=None):
        self.cls = cls
        self.what = what or f"a {getattr(cls, '__name__', cls)}"

    def has_type(self, value):
        return isinstance(value, self.cls)

    def __str__(self):
        return self.what


class Pair(_Constraint):
    """A pair (a length-2 sequence, not a string) of values meeting ``inner``."""

    def __init__(self, inner):
        self.inner = inner

    def has_type(self, value):
        try:
            items = tuple(value)
        except TypeError:
            return False
        return not isinstance(value, str) and all(self.inner.has_type(v) for v in items)

    def has_value(self, value):
        items = tuple(value)
        return len(items) == 2 and all(self.inner.has_value(v) for v in items)

    def convert(self, value):
        return tuple(self.inner.convert(v) for v in value)

    def __str__(self):
        return f"a pair of {str(self.inner).replace('a ', '', 1).replace('an ', '', 1)}s"


class _NoneConstraint(_Constraint):
    def has_type(self, value):
        return value is None

    def __str__(self):
        return "None"


def _as_constraint(rule):
    if rule is None:
        return _NoneConstraint()
    if isinstance(rule, str):
        return Options(rule)
    if isinstance(rule, type):
        return Instance(rule, f"a {rule.__name__}")
    return rule


def describe(constraints):
    """The constraints as words: ``"'auto' or an int >= 1"``."""
    return " or ".join(str(_as_constraint(rule)) for rule in constraints)


def check_param(value, constraints, name):
    """Return ``value`` (converted: an int, a float, a bool, a tuple) if it meets
    one of ``constraints`` (constraint objects, None for None, a string for that
    string, a class for its instances); else raise TypeError (no constraint takes its type) or ValueError
    (one does, but not this value), naming ``name``."""
    rules = [_as_constraint(rule) for rule in constraints]
    typed = [rule for rule in rules if rule.has_type(value)]
    for rule in typed:
        if rule.has_value(value):
            return rule.convert(value)
    error = ValueError if typed else TypeError
    raise error(f"{name} must be {describe(constraints)}, got {value!r}.")


def validate_params(estimator):
    """Check every hyperparameter of ``estimator`` against its class's
    ``_parameter_constraints``; return a dict of the converted values.

    A parameter whose constraint is ``"no_validation"`` is returned as it is (its
    estimator checks it against the data, e.g. DPScree's ``directions``).
    """
    constraints = type(estimator)._parameter_constraints
    params = estimator.get_params(deep=False)
    return {name: (params[name] if rules == "no_validation"
                   else check_param(params[name], rules, name))
            for name, rules in constraints.items()}


# Shared constraints, one definition each.
POSITIVE = Interval("real", 0, None, closed="neither")
NON_NEGATIVE = Interval("real", 0, None)
UNIT_OPEN = Interval("real", 0, 1, closed="neither")
N_JOBS = [None, Interval("int", None, -1), Interval("int", 1, None)]
PAIRS = ["all", Interval("int", 1, None)]
RANDOM_STATE = [None, Interval("int", 0, None),
                Instance((np.random.Generator, np.random.RandomState),
                         "a numpy.random.Generator or RandomState")]


def check_count(value, name, minimum):
    """An int ``>= minimum`` (a bool or ``2.5`` is not one)."""
    return check_param(value, [Interval("int", minimum, None)], name)


def check_choice(value, choices, name):
    """``value`` must be one of ``choices`` (a tuple of strings)."""
    return check_param(value, [Options(*choices)], name)


def check_bool(value, name):
    """``True`` or ``False`` (NumPy's bool too)."""
    return check_param(value, [Boolean()], name)


def check_share(value, name):
    """A share of a budget, strictly between 0 and 1."""
    return check_param(value, [UNIT_OPEN], name)


def check_n_jobs(n_jobs):
    """None or a non-zero int (-1: every core)."""
    return check_param(n_jobs, N_JOBS, "n_jobs")


def check_pairs(pairs):
    """``"all"`` or ``m`` partners per row (an int >= 1)."""
    return check_param(pairs, PAIRS, "pairs")


def check_n_components(n_components, n_available, name="n_components"):
    """``None`` means all ``n_available``; otherwise an int in [1, n_available]."""
    if n_components is None:
        return n_available
    return check_param(n_components, [Interval("int", 1, n_available)], name)


def check_component_pair(axes, n_components, name="axes"):
    """Two distinct 0-based component indices below ``n_components``."""
    pair = check_param(axes, [Pair(Interval("int", 0, n_components - 1))], name)
    if pair[0] == pair[1]:
        raise ValueError(f"{name} must name two different components, got {axes!r}.")
    return pair


def check_generator(random_state):
    """Return the :class:`numpy.random.Generator` every draw of a fit comes from.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` seeds a fresh generator from operating-system entropy (what a
        published release should use); an int seeds a reproducible generator; a
        ``Generator`` is used as it is; a legacy ``RandomState`` (scikit-learn's
        convention) is advanced once to draw a seed, so repeated calls differ.

    Returns
    -------
    numpy.random.Generator
        NumPy's generators are not cryptographic sources. Reproducible seeds are
        for tests and experiments; publish releases made with
        ``random_state=None``.
    """
    random_state = check_param(random_state, RANDOM_STATE, "random_state")
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    return np.random.default_rng(random_state)


# --------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------


def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _non_numeric_columns(X):
    """Names of the DataFrame columns that are not numeric (bool counts as numeric)."""
    from pandas.api.types import is_numeric_dtype

    return [column for column, dtype in zip(X.columns, X.dtypes) if not is_numeric_dtype(dtype)]


def validate_features(estimator, X, *, reset):
    """Validate ``X`` for ``fit`` (``reset=True``) or ``transform``.

    DataFrame columns that are not numeric are dropped with a ``UserWarning``
    naming them at ``fit`` (column names are public), and the same columns are
    dropped again at ``transform``. The result is a 2-D float64 or float32 array
    (float32 is kept), finite, with at least 2 rows at ``fit``. Sets
    ``n_features_in_`` and ``feature_names_in_`` at ``fit`` through
    scikit-learn's ``validate_data``.
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
