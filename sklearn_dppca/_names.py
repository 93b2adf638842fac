"""The names of the variables: the fitted column names, or ``x0, x1, ...``."""


def default_feature_names(n_features):
    """``["x0", "x1", ...]``: the names of ``n_features`` unnamed columns."""
    return [f"x{j}" for j in range(int(n_features))]


def feature_names(fitted):
    """The column names ``fitted`` (an estimator or a release) was fitted with.

    ``feature_names_in_`` as strings when the data had string column names,
    :func:`default_feature_names` otherwise.
    """
    names = getattr(fitted, "feature_names_in_", None)
    if names is not None:
        return [str(name) for name in names]
    return default_feature_names(fitted.n_features_in_)
