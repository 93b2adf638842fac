"""The one validation system: parameter constraints, data checks, random state.

A leaf module: it imports NumPy and scikit-learn's public API (the latter only
inside the functions that need it, as importing it costs about a second) and
nothing of this package, so the kernel, the privacy toolkit, the algorithms, the estimators, the
release reader, the displays and the command line all check their inputs here.

Error policy (the same everywhere):

* an argument that breaks its declared constraint, whether of the wrong type (a
  string for a number, a float for a count, a bool for a number, a number for a
  choice) or of the right type outside its range or set, raises
  :class:`InvalidParameterError`, which is both a :class:`ValueError` and a
  :class:`TypeError` (as scikit-learn's own parameter errors are), so either
  ``except`` clause catches it;
* an argument that meets its constraint but does not fit the data (more
  components than columns, bounds for another number of columns) raises
  :class:`ValueError`, and so does bad data.

All name the argument. Messages show the argument as given, which is a public
setting, never data: data arrays are checked by :func:`as_real_numbers` (which
every conversion of data goes through, since NumPy's and scikit-learn's own
messages quote cells or print the array), :func:`validate_features`,
:func:`label_codes` and :func:`check_max_abs`, whose messages state the rule only.

Estimators declare ``_parameter_constraints`` (name -> list of constraints, in the
manner of scikit-learn's own estimators) and call :func:`validate_params` at the
start of ``fit``; functions call :func:`check_param` for each argument.
"""

import math
import numbers
import sys
import warnings

import numpy as np

_FLOAT_DTYPES = (np.float64, np.float32)

# The public data domain of the estimators that release variances (DPScree, DPPCA)
# and of the non-private reference: ``max |X| <= 2**500`` (about 3.3e150). Their
# statistics are squares of the data's scale (a pair difference of such rows
# projected on a unit vector, squared, stays below ``p 2**1002``), so no float
# overflows; beyond it the variances themselves may not be representable. The
# directions (DPKendallDirections) are scale invariant and have no such limit.
MAX_ABS_VALUE = 2.0 ** 500


class InvalidParameterError(ValueError, TypeError):
    """A hyperparameter or argument that breaks its constraint.

    Raised by every estimator's ``fit`` (and every public function) for an
    argument of the wrong type or outside its range or set. It is both a
    :class:`ValueError` and a :class:`TypeError`, as scikit-learn's parameter
    errors are, so code written for scikit-learn (``except ValueError``) and
    code that tells types apart (``except TypeError``) both catch it. The
    message names the argument and the values it may take; it never shows data.
    Bad data (``X``, ``y``) raises a plain :class:`ValueError` or
    :class:`TypeError` instead.

    See Also
    --------
    BudgetExceededError : The error of a fit its accountant cannot pay for.

    Examples
    --------
    >>> from sklearn_dppca import DPPCA, InvalidParameterError
    >>> try:
    ...     DPPCA(eps="1").fit([[0.0, 1.0], [1.0, 0.0]])
    ... except ValueError as error:
    ...     print(type(error).__name__, isinstance(error, TypeError))
    InvalidParameterError True
    """


def warn_user(message, category=UserWarning):
    """:func:`warnings.warn`, attributed to the user's call.

    The warning's file and line are those of the innermost frame outside this
    package and scikit-learn, wherever in the package it is raised: a warning
    from deep inside a fit points at the user's ``fit`` (or ``transform``,
    ``plot``, ``clone``, a Pipeline's or a search's ``fit``) line, so the printed
    location and ``warnings.filterwarnings(module=...)`` name the user's code.
    User code that scikit-learn calls back (a scorer, a FunctionTransformer's
    function) is such a frame: the walk stops at it. When every frame is the
    package's or scikit-learn's, the outermost is named.
    """
    warnings.warn(message, category, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The ``stacklevel`` for :func:`warn_user`'s call of :func:`warnings.warn`
    (1 names warn_user itself, 2 its caller, ...)."""
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and _is_library_frame(frame):
        frame, level = frame.f_back, level + 1
    return level


# the packages whose frames stand between a warning and the user's call
_LIBRARIES = (__name__.split(".", 1)[0], "sklearn")


def _is_library_frame(frame):
    module = frame.f_globals.get("__name__", "")
    return module.split(".", 1)[0] in _LIBRARIES


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
    """A number between ``low`` and ``high``.

    ``kind`` is ``"real"`` or ``"int"`` (bools are neither); ``low`` or ``high``
    None leaves that side unbounded; ``closed`` is ``"both"``, ``"left"``,
    ``"right"`` or ``"neither"``. NaN never belongs to an interval, and an
    infinity only as a closed infinite bound: ``Interval("real", 0, math.inf,
    closed="right")`` holds ``inf``, ``Interval("real", 0, None)`` does not.
    """

    def __init__(self, kind, low=None, high=None, closed="both"):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    @property
    def _low_closed(self):
        return self.closed in ("both", "left")

    @property
    def _high_closed(self):
        return self.closed in ("both", "right")

    def has_type(self, value):
        return _is_int(value) if self.kind == "int" else _is_real(value)

    def has_value(self, value):
        if not math.isfinite(value):
            # (NaN equals nothing; an infinity only a closed bound equal to it)
            return ((self._low_closed and value == self.low)
                    or (self._high_closed and value == self.high))
        if self.low is not None and (value < self.low
                                     or (value == self.low and not self._low_closed)):
            return False
        return (self.high is None or value < self.high
                or (value == self.high and self._high_closed))

    def convert(self, value):
        return int(value) if self.kind == "int" else float(value)

    def __str__(self):
        bounds = (self.low, self.high)
        if self.kind == "int":
            what = "an int"
        elif any(b is not None and math.isinf(b) for b in bounds):
            what = "a number (not NaN)"
        else:
            what = "a finite number"
        if self.low is None and self.high is None:
            return what
        if self.high is None:
            return f"{what} {'>=' if self._low_closed else '>'} {self.low}"
        if self.low is None:
            return f"{what} {'<=' if self._high_closed else '<'} {self.high}"
        left = "[" if self._low_closed else "("
        right = "]" if self._high_closed else ")"
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


class Callable(_Constraint):
    """Anything callable (a function, a bound method, an object with ``__call__``)."""

    def has_type(self, value):
        return callable(value)

    def __str__(self):
        return "a callable"


class Pair(_Constraint):
    """A pair (a tuple, list or 1-D array of length 2) of values meeting ``inner``."""

    def __init__(self, inner):
        self.inner = inner

    def has_type(self, value):
        return (isinstance(value, (tuple, list, np.ndarray)) and np.ndim(value) == 1
                and all(self.inner.has_type(v) for v in value))

    def has_value(self, value):
        return len(value) == 2 and all(self.inner.has_value(v) for v in value)

    def convert(self, value):
        return tuple(self.inner.convert(v) for v in value)

    def __str__(self):
        return f"a pair, each {self.inner}"


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


def _describe(constraints):
    """The constraints as words: ``"'auto' or an int >= 1"``."""
    return " or ".join(str(_as_constraint(rule)) for rule in constraints)


def _shown(value):
    """The value as an error message may show it: a setting's repr, else its type.

    Settings are scalars, strings and short tuples; anything else (an array, a
    frame, a dict) may hold data, so only its type is named.
    """
    scalar = (type(None), bool, np.bool_, numbers.Number, str)
    if isinstance(value, scalar) and len(repr(value)) <= 80:
        return repr(value)
    if (isinstance(value, (tuple, list)) and len(value) <= 4
            and all(isinstance(item, scalar) for item in value)
            and len(repr(value)) <= 80):
        return repr(value)
    return f"an object of type {type(value).__name__}"


def check_param(value, constraints, name):
    """Check one argument against its constraints; return it converted.

    Parameters
    ----------
    value : object
        The argument as given.
    constraints : list
        Constraint objects, None (for None), a string (for that string) or a class
        (for its instances). The value must meet one of them.
    name : str
        The argument's name, as the error message shows it.

    Returns
    -------
    object
        ``value``, converted by the constraint it meets (an int, a float, a bool,
        a tuple).

    Raises
    ------
    InvalidParameterError
        If no constraint takes the value's type (a string for a number, a float
        for a count, a bool for a number), or one does but the value is outside
        its range or set. It is both a ValueError and a TypeError.
    """
    rules = [_as_constraint(rule) for rule in constraints]
    for rule in rules:
        if rule.has_type(value) and rule.has_value(value):
            return rule.convert(value)
    raise InvalidParameterError(f"{name} must be {_describe(constraints)}, "
                                f"got {_shown(value)}.")


def check_field(value, constraints, name):
    """:func:`check_param` for a value read from a file: any failure is a ValueError.

    A file holds no argument types; a field of the wrong kind is a bad file.
    """
    try:
        return check_param(value, constraints, name)
    except InvalidParameterError as error:
        raise ValueError(str(error)) from None


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
#: A share of a budget, 0 (the part is skipped) to 1.
SHARE = Interval("real", 0, 1)
#: Any number but NaN, infinities included (a bound that may be open-ended).
EXTENDED_REAL = Interval("real", -math.inf, math.inf)
N_JOBS = [None, Interval("int", None, -1), Interval("int", 1, None)]
PAIRS = ["all", "auto", Interval("int", 1, None)]
RANDOM_STATE = [None, Interval("int", 0, None),
                Instance((np.random.Generator, np.random.RandomState),
                         "a numpy.random.Generator or RandomState")]


#: ``bounds``: None, one (low, high) pair per column or a dict column -> pair
#: (the pairs themselves are checked against the columns by :func:`check_bounds`).
BOUNDS = [None, Instance((list, tuple, np.ndarray, dict),
                         "a list of (low, high) ranges or a dict column -> (low, high)")]


def check_bounds(bounds, n_features, feature_names=None, name="bounds"):
    """The declared per-column ranges as two arrays ``(low, high)``, or None.

    ``bounds`` is public knowledge (a codebook), never read off the data: one
    ``(low, high)`` pair per column, in the columns' order, or a dict column name
    -> pair covering every column (it needs ``feature_names``, the names of a
    DataFrame's columns). Each bound is a finite real number inside the data
    domain (``|bound| <= 2**500``) and ``low < high``. Messages name the column
    (its position or name: public) and the rule, never a bound's value.

    Raises
    ------
    InvalidParameterError
        If ``bounds`` is not a list, tuple, array or dict, or a pair breaks a
        rule above (it is both a ValueError and a TypeError).
    ValueError
        If the pairs do not match the columns.
    """
    bounds = check_param(bounds, BOUNDS, name)
    if bounds is None:
        return None
    if isinstance(bounds, dict):
        if feature_names is None:
            raise ValueError(f"{name} is a dict by column name, which needs X with "
                             "string column names (a DataFrame); give a list of "
                             "(low, high) pairs in the columns' order instead.")
        names = [str(column) for column in feature_names]
        keys = {str(key): key for key in bounds}
        missing = [column for column in names if column not in keys]
        unknown = sorted(key for key in keys if key not in names)
        if missing or unknown:
            raise ValueError(f"{name} must give a (low, high) range for every column "
                             f"of X and no other; missing: {missing}, unknown: "
                             f"{unknown}.")
        pairs = [bounds[keys[column]] for column in names]
        labels = [repr(column) for column in names]
    else:
        pairs = list(bounds)
        if len(pairs) != n_features:
            raise ValueError(f"{name} must hold one (low, high) range per column: X "
                             f"has {n_features} columns, {name} {len(pairs)} ranges.")
        labels = [f"column {position}" for position in range(n_features)]
    low, high = np.empty(n_features), np.empty(n_features)
    for position, (pair, label) in enumerate(zip(pairs, labels)):
        if (isinstance(pair, (str, bytes, dict)) or not hasattr(pair, "__len__")
                or np.ndim(pair) != 1 or not all(_is_real(value) for value in pair)):
            raise InvalidParameterError(f"{name}: the range of {label} must be two "
                                        "real numbers (low, high).")
        if len(pair) != 2:
            raise InvalidParameterError(f"{name}: the range of {label} must be two "
                                        f"numbers (low, high), got {len(pair)}.")
        low[position], high[position] = float(pair[0]), float(pair[1])
    finite = np.isfinite(low) & np.isfinite(high)
    inside = finite & (np.abs(low) <= MAX_ABS_VALUE) & (np.abs(high) <= MAX_ABS_VALUE)
    for position, label in enumerate(labels):
        if not inside[position]:
            raise InvalidParameterError(f"{name}: the range of {label} must be finite, "
                                        "within 2**500 in absolute value (the data "
                                        "domain).")
        if not low[position] < high[position]:
            raise InvalidParameterError(f"{name}: the range of {label} must have "
                                        "low < high.")
    return low, high


def check_count(value, name, minimum):
    """An int ``>= minimum`` (a bool or ``2.5`` is not one)."""
    return check_param(value, [Interval("int", minimum, None)], name)


def check_choice(value, choices, name):
    """``value`` must be one of ``choices`` (a tuple of strings)."""
    return check_param(value, [Options(*choices)], name)


def check_bool(value, name):
    """``True`` or ``False`` (NumPy's bool too)."""
    return check_param(value, [Boolean()], name)


def check_n_jobs(n_jobs):
    """None or a non-zero int (-1: every core)."""
    return check_param(n_jobs, N_JOBS, "n_jobs")


def check_pairs(pairs):
    """``"all"``, ``"auto"`` or ``m`` partners per row (an int >= 1)."""
    return check_param(pairs, PAIRS, "pairs")


def check_n_components(n_components, n_available, name="n_components"):
    """``None`` means all ``n_available``; otherwise an int in [1, n_available]."""
    n_components = check_param(n_components, [None, Interval("int", 1, None)], name)
    if n_components is None:
        return n_available
    if n_components > n_available:
        # (the bound is the public number of features, not a fixed range)
        raise ValueError(f"{name}={n_components} must lie in [1, {n_available}] "
                         f"(n_features={n_available}).")
    return n_components


def check_component_pair(axes, n_components, name="axes"):
    """Two distinct 0-based component indices below ``n_components``."""
    pair = check_param(axes, [Pair(Interval("int", 0, n_components - 1))], name)
    if pair[0] == pair[1]:
        raise InvalidParameterError(f"{name} must name two different components, "
                                    f"got {axes!r}.")
    return pair


def check_labels(labels, name):
    """A public list of distinct labels (any sequence but a string); returns a list."""
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
        raise InvalidParameterError(f"{name} must be a list of labels, got "
                                    f"{_shown(labels)}.")
    labels = list(labels)
    if not labels or len(set(labels)) != len(labels):
        raise InvalidParameterError(f"{name} must be a non-empty list of distinct "
                                    "labels.")
    return labels


def label_codes(values, labels, name, labels_name, n_rows):
    """Each row's position in the public list ``labels`` (an int array).

    ``values`` are data: the messages never quote one, only the rule.
    """
    values = np.asarray(values, dtype=object).ravel()
    if values.shape[0] != n_rows:
        raise ValueError(f"{name} has {values.shape[0]} labels for {n_rows} rows.")
    position = {label: index for index, label in enumerate(labels)}
    try:
        return np.fromiter((position[value] for value in values), dtype=np.intp,
                           count=n_rows)
    except (KeyError, TypeError):
        raise ValueError(f"{name} contains labels outside {labels_name}: every row's "
                         f"label must be one of the declared {labels_name}.") from None


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


# dtype kinds that hold real numbers as they are (bool, signed, unsigned, float)
_REAL_KINDS = frozenset("biuf")


def _dtype_kinds(X):
    """The dtype kinds of ``X`` (one per DataFrame column), or None when NumPy cannot
    make an array of it (ragged rows: left to the array check, whose message gives
    shapes only)."""
    if _is_dataframe(X):
        return {getattr(dtype, "kind", "O") for dtype in X.dtypes}
    dtype = getattr(X, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(X).dtype
        except (ValueError, TypeError):
            return None
    return {getattr(dtype, "kind", "O")}


def as_real_numbers(X, name="X"):
    """``X`` with real numbers only, checked without quoting any of its cells.

    NumPy's conversion error quotes the cell it cannot read, and scikit-learn's
    complex-data error prints the array: both are data. So an array or DataFrame
    of real numeric dtype passes unchanged (the finiteness and shape checks come
    after, with messages of their own); complex data, dates and times raise here;
    anything else (objects, strings) is converted to float64 here, a DataFrame
    keeping its column names, and a cell that is not a number raises an error
    that states the rule.
    """
    kinds = _dtype_kinds(X)
    if kinds is None or kinds <= _REAL_KINDS:
        return X
    if "c" in kinds:
        # (the words scikit-learn's estimator checks expect)
        raise ValueError(f"Complex data not supported: {name} must hold real numbers.")
    if kinds & {"M", "m"}:
        raise TypeError(f"{name} must be numeric; it has date or time columns.")
    values = X if _is_dataframe(X) else np.asarray(X)
    try:
        return values.astype(np.float64)
    except ValueError:
        raise ValueError(f"{name} must be numeric: a cell is not a number (cells "
                         "are not shown: they are data).") from None
    except TypeError:
        # (numpy's own words, which scikit-learn's estimator checks expect)
        raise TypeError(f"{name} must be numeric: a float() argument must be a string "
                        "or a real number, and a cell is neither (cells are not "
                        "shown: they are data).") from None


def drop_non_numeric(estimator, X, *, reset):
    """The DataFrame ``X`` (pandas or Dask) without its non-numeric columns.

    At ``fit`` (``reset=True``) they are found, named in a ``UserWarning``
    (column names are public; the warning points at the user's call) and
    remembered in ``_dropped_columns_``; at ``transform`` the same columns are
    dropped again.
    """
    if reset:
        dropped = _non_numeric_columns(X)
        if dropped and len(dropped) == X.shape[1]:
            raise ValueError("X has no numeric columns; non-numeric columns: "
                             f"{[str(c) for c in dropped]}.")
        if dropped:
            warn_user(f"Dropping non-numeric columns of X: {[str(c) for c in dropped]}.",
                      UserWarning)
        estimator._dropped_columns_ = dropped
    dropped = [c for c in getattr(estimator, "_dropped_columns_", []) if c in X.columns]
    return X.drop(columns=dropped) if dropped else X


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
        X = drop_non_numeric(estimator, X, reset=reset)
    elif reset:
        estimator._dropped_columns_ = []
    X = as_real_numbers(X)
    # scikit-learn's finiteness check first sums X, which emits a RuntimeWarning
    # (invalid value) when X holds both +inf and -inf; its ValueError follows.
    from sklearn.utils.validation import validate_data   # heavy: only when fitting

    with np.errstate(invalid="ignore", over="ignore"):
        return validate_data(
            estimator,
            X,
            reset=reset,
            dtype=list(_FLOAT_DTYPES),
            ensure_min_samples=2 if reset else 1,
        )


def check_rows(X):
    """``X`` as a C-contiguous float64 array of at least 2 finite rows (the kernel's
    input; no copy if it is one already)."""
    from sklearn.utils.validation import check_array   # heavy: only when fitting

    if (_dtype_kinds(X) or set()) & {"U", "S"}:
        raise ValueError("X must be numeric, got an array of strings.")
    X = as_real_numbers(X)
    # check_array's finiteness test sums X first: rows near +-DBL_MAX overflow that
    # sum (a harmless warning, after which it checks every entry).
    with np.errstate(over="ignore", invalid="ignore"):
        X = check_array(X, dtype=list(_FLOAT_DTYPES), ensure_min_samples=2,
                        input_name="X")
    return np.ascontiguousarray(X, dtype=np.float64)


def check_values(x, name="x"):
    """A non-empty 1-D float array of finite real numbers (bools count as 0/1)."""
    x = np.asarray(x)
    if x.dtype.kind not in _REAL_KINDS:
        # (a string dtype's length is the longest cell's: data, so never shown)
        shown = "strings" if x.dtype.kind in "US" else f"dtype {x.dtype}"
        raise TypeError(f"{name} must be an array of real numbers, got {shown}.")
    x = x.astype(float, copy=False)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must contain only finite values.")
    return x


def check_projections(X, n_components):
    """Validate the projections ``X`` given to ``inverse_transform``: a finite 2-D
    float64 or float32 array (float32 is kept) with ``n_components`` columns."""
    from sklearn.utils.validation import check_array   # heavy: only when projecting

    X = check_array(as_real_numbers(X), dtype=list(_FLOAT_DTYPES), input_name="X")
    if X.shape[1] != n_components:
        raise ValueError(f"X must have {n_components} columns (one per component) in "
                         f"inverse_transform, got {X.shape[1]}.")
    return X


def by_group(values, labels, name, item, *, exact):
    """``label -> value`` for the group ``labels``, from a list in their order or a
    dict with every label; ``exact``: the list has one value per group (else
    extra ones are ignored). ``item`` names one value in the messages, which give
    counts, never the labels."""
    if isinstance(values, dict):
        missing = sum(label not in values for label in labels)
        if missing:
            raise ValueError(f"{name} lacks a {item} for {missing} of the "
                             f"{len(labels)} groups.")
        return {label: values[label] for label in labels}
    if isinstance(values, (list, tuple)):
        if len(values) < len(labels) or (exact and len(values) != len(labels)):
            raise ValueError(f"{name} has {len(values)} {item}s for "
                             f"{len(labels)} groups.")
        return dict(zip(labels, values))
    raise InvalidParameterError(f"{name} must be None, a list of {item}s or a dict "
                                f"label -> {item}, got {_shown(values)}.")


def check_colors(colors, labels, is_color, name="colors"):
    """Colours for the group ``labels``: None (the default palette), a list of
    colours in the order of ``labels`` (extra ones are ignored) or a dict
    label -> colour with every label. ``is_color`` tells a colour (the display
    passes matplotlib's ``is_color_like``; this module does not import
    matplotlib). Returns a dict label -> colour, or None. Messages name
    positions and counts, never the labels."""
    if colors is None:
        return None
    chosen = by_group(colors, labels, name, "colour", exact=False)
    bad = [i for i, color in enumerate(chosen.values()) if not is_color(color)]
    if bad:
        raise InvalidParameterError(f"{name}: the colour of group {bad[0] + 1} (in "
                                    "the groups' order) is not a matplotlib colour.")
    return chosen


def check_cmap(cmap, registry, colormap_class, name="cmap"):
    """None (the display's default), a colormap name in ``registry`` (matplotlib's
    ``colormaps``) or a ``colormap_class`` instance; returned as given."""
    if cmap is None or isinstance(cmap, colormap_class):
        return cmap
    if not isinstance(cmap, str):
        raise InvalidParameterError(f"{name} must be None, a colormap name or a "
                                    f"Colormap, got {_shown(cmap)}.")
    if cmap not in registry:
        raise InvalidParameterError(f"{name}={cmap!r} is not a registered matplotlib "
                                    "colormap.")
    return cmap


#: A release counts as an estimate only when it stands this many noise sds above
#: zero: a quantity that is pure noise passes with chance 2.3% (one-sided), where
#: one sd would let 16% through, and those pass as confident numbers (breast
#: cancer at eps = 1: 2 of 10 seeds released a variance 275 times its value).
_NOISE_SDS = 2.0


def above_noise(estimates, noise_scale):
    """Mask of released values that are estimates rather than noise alone: more
    than :data:`_NOISE_SDS` noise sds above zero (post-processing). The one rule of
    "not estimable": every release, loading and picture reads it."""
    return np.asarray(estimates, dtype=float) > _NOISE_SDS * np.asarray(noise_scale,
                                                                       dtype=float)


#: A variance, the total or a share is printed as a number only when it stands
#: this many noise sds above zero: its two-sd interval then lies within half
#: and three halves of it, so a printed value is within a factor of two of the
#: truth but for a noise past two sds. Two sds tell an estimate from noise
#: alone, but a pure noise value passes them with chance 2.3%, and on small
#: tables most variances are noise: over iris, wine, diabetes and breast cancer
#: at eps 0.5 to 4, 9 of 221 printed top-3 variances were outside half to twice
#: the table's (a PC2 of wine at 2.9 sds, 370 times its value). At three sds a
#: variance barely above the noise still passed when its noise was up (14 of
#: 288 printed top-3 variances outside half to twice the table's over those
#: tables, their observed-range and codebook boxes and none, iris's PC1 at 3.8
#: sds 2.3 times its value); at four, 3 of 255 (``bench_bounds_peers.py``).
_PRECISE_SDS = 4.0


def printable(estimates, noise_scale):
    """Mask of released values printed as numbers: more than
    :data:`_PRECISE_SDS` noise sds above zero, so that their two-sd interval
    lies within half and three halves of them (post-processing; implies
    :func:`above_noise`)."""
    return np.asarray(estimates, dtype=float) > _PRECISE_SDS * np.asarray(noise_scale,
                                                                         dtype=float)


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
