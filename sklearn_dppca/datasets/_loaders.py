"""Real data sets, as pandas objects (no network access): thin wrappers around
scikit-learn's bundled sets, and the numeric columns of the Adult data shipped here."""


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


#: The numeric columns of the Adult data, in the file's order.
_ADULT_COLUMNS = ["age", "education_num", "capital_gain", "capital_loss",
                  "hours_per_week"]

_ADULT_DESCR = """\
.. _adult_dataset:

Adult (census income) data, numeric columns
-------------------------------------------

**Data Set Characteristics:**

:Number of Instances: 32,561 (the training part of the UCI data)
:Number of Attributes: 5 numeric, integer-valued; no target column
:Attribute Information:
    - age: age in years (17 to 90)
    - education_num: years of education, coded 1 to 16
    - capital_gain: capital gains in dollars (0 to 99,999; 99,999 is a top code)
    - capital_loss: capital losses in dollars (0 to 4,356)
    - hours_per_week: hours worked per week (1 to 99)
:Missing Attribute Values: None
:Source: Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning
    Repository. https://doi.org/10.24432/C5XW20
:License: Creative Commons Attribution 4.0 International (CC BY 4.0)

The five numeric columns of the UCI Adult data (extracted by Barry Becker
from the 1994 US Census database); the categorical columns and the income
class are left out. The
rows are the file's, in its order; nothing is imputed or removed.

Properties that matter for a private PCA:

- Mixed units: years, a coded level, dollars and hours. Without scaling, the
  dollar columns (standard deviations of about 7,400 and 400 against about 14
  for age) decide every direction; fit with ``scale=True``.
- Zero inflation: capital_gain is 0 in 91.7% of the rows and capital_loss in
  95.3%, so their spreads are small next to their ranges, and their rank
  (Kendall) correlations with the other columns are dominated by ties.
- Duplicate rows: 21,454 rows repeat an earlier row (only 11,107 rows are
  distinct), because the columns are integers on short ranges. The privacy
  unit is still one row (one person), duplicate or not.
- n = 32,561 is above the size at which the command line and the explorer use
  the incomplete U-statistic (64 partners per row at eps 1).

Reference: Kohavi, R. (1996). Scaling up the accuracy of naive-Bayes
classifiers: a decision-tree hybrid. Proceedings of the Second International
Conference on Knowledge Discovery and Data Mining, 202-207.
"""


def _adult_table():
    """The shipped file read into a DataFrame of int64 columns."""
    from importlib import resources

    import pandas as pd

    source = resources.files(__package__).joinpath("data", "adult.csv.gz")
    with source.open("rb") as handle:
        frame = pd.read_csv(handle, compression="gzip", dtype="int64")
    return frame[_ADULT_COLUMNS]


def load_adult(*, as_frame=True, return_X_y=False):
    """Load the five numeric columns of the UCI Adult (census income) data.

    32,561 people, 5 integer columns (``age``, ``education_num``,
    ``capital_gain``, ``capital_loss``, ``hours_per_week``), shipped with this
    package (no download). The columns come in mixed units, the two capital
    columns are mostly zeros, and many rows repeat; fit with ``scale=True``
    (the description, ``DESCR``, gives the numbers). There is no target: the
    income class of the original data is not included.

    Source: Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning
    Repository. https://doi.org/10.24432/C5XW20, under the Creative Commons
    Attribution 4.0 International license (CC BY 4.0).

    Parameters
    ----------
    as_frame : bool, default=True
        If True, ``data`` is a pandas DataFrame (and ``frame`` is the same
        table); if False, ``data`` is a NumPy array and ``frame`` is None.
    return_X_y : bool, default=False
        If True, return ``(data, None)`` instead of a Bunch: there is no
        target, and the pair keeps the ``X, y = load_...(return_X_y=True)``
        idiom working (``DPPCA().fit(X, y)`` fits without groups).

    Returns
    -------
    data : Bunch
        A dictionary whose keys are also attributes, with the keys:

        data : {ndarray, DataFrame} of shape (32561, 5)
            The values, int64.
        feature_names : list of str
            The names of the five columns.
        frame : DataFrame of shape (32561, 5) or None
            The data as a DataFrame when ``as_frame=True``, else None.
        DESCR : str
            The description of the data, its source and its license.
    (data, target) : tuple if ``return_X_y`` is True
        The data and None (there is no target).

    Examples
    --------
    >>> from sklearn_dppca.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.data.shape
    (32561, 5)
    >>> adult.feature_names[:2]
    ['age', 'education_num']
    >>> X, y = load_adult(as_frame=False, return_X_y=True)
    >>> X.dtype, y is None
    (dtype('int64'), True)
    """
    from .._bunch import Bunch
    from .._validation import check_bool

    as_frame = check_bool(as_frame, "as_frame")
    return_X_y = check_bool(return_X_y, "return_X_y")
    frame = _adult_table()
    data = frame if as_frame else frame.to_numpy()
    if return_X_y:
        return data, None
    return Bunch(data=data, feature_names=list(_ADULT_COLUMNS),
                 frame=frame if as_frame else None, DESCR=_ADULT_DESCR)
