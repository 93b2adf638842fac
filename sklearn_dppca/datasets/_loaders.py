"""Real data sets bundled with scikit-learn, as pandas objects (no network access)."""


def _as_frame(bunch):
    X = bunch.frame[bunch.feature_names].copy()
    y = bunch.frame["target"].map(dict(enumerate(bunch.target_names)))
    y = y.astype(object).rename("class")
    return X, y


def load_wine_frame():
    """Load the wine recognition data as a DataFrame and a Series of class names.

    A thin wrapper around :func:`sklearn.datasets.load_wine` (bundled with
    scikit-learn; no download): 178 wines, 13 chemical measurements, 3 cultivars.

    Returns
    -------
    X : DataFrame of shape (178, 13)
        The measurements, columns named as in scikit-learn.
    y : Series of shape (178,)
        The cultivar of each wine, ``"class_0"``, ``"class_1"`` or ``"class_2"``;
        named ``"class"``.

    Examples
    --------
    >>> from sklearn_dppca.datasets import load_wine_frame
    >>> X, y = load_wine_frame()
    >>> X.shape, sorted(map(str, y.unique()))
    ((178, 13), ['class_0', 'class_1', 'class_2'])
    """
    from sklearn.datasets import load_wine

    return _as_frame(load_wine(as_frame=True))


def load_breast_cancer_frame():
    """Load the Wisconsin breast cancer data as a DataFrame and a Series of class names.

    A thin wrapper around :func:`sklearn.datasets.load_breast_cancer` (bundled
    with scikit-learn; no download): 569 tumours, 30 features.

    Returns
    -------
    X : DataFrame of shape (569, 30)
        The features, columns named as in scikit-learn.
    y : Series of shape (569,)
        The diagnosis, ``"malignant"`` or ``"benign"``; named ``"class"``.

    Examples
    --------
    >>> from sklearn_dppca.datasets import load_breast_cancer_frame
    >>> X, y = load_breast_cancer_frame()
    >>> X.shape, sorted(map(str, y.unique()))
    ((569, 30), ['benign', 'malignant'])
    """
    from sklearn.datasets import load_breast_cancer

    return _as_frame(load_breast_cancer(as_frame=True))
