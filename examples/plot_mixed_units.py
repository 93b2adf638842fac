"""
Columns in mixed units: private spreads (``scale=True``)
========================================================

Real tables mix units: ages in years, incomes in dollars (mostly zeros, with a
long tail), heights in metres. An ordinary PCA of such a table is a PCA of its
largest unit; standardising by the sample standard deviation first would fix
that but is a non-private step (the standard deviations are read off the data).

``scale=True`` divides each column by a *private* estimate of its spread: a
clipped second moment of the column's pairwise differences, with the clip bound
from a private quantile on a grid that works in any unit. The spreads are
released as ``scale_`` (like :class:`~sklearn.preprocessing.StandardScaler`'s)
and paid for by their own part of the budget (``budget_split["scale"]``).

This example builds a table of 20,000 rows in which two groups of columns are
correlated, with columns in units 1e-3 to 1e4 apart and a heavy-tailed,
zero-inflated "income", and compares the private PCA with and without
``scale=True`` to the ordinary PCA of the correlation matrix (not private: shown
only to judge the private result).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_dppca import DPPCA
from sklearn_dppca.display import ScreeDisplay, VariableDisplay

rng = np.random.default_rng(0)
n = 20_000
# two blocks of correlated columns (correlation 0.6 within a block)
R = np.kron(np.eye(2), np.full((3, 3), 0.6)) + 0.4 * np.eye(6)
Z = rng.multivariate_normal(np.zeros(6), R, size=n)
Z /= np.sqrt(rng.chisquare(5, size=(n, 1)) / 5)   # heavy tails (multivariate t)
units = np.array([1e-3, 1.0, 30.0, 1e2, 1e3, 1e4])
X = Z * units + 50 * units
# a zero-inflated column in dollars, for the worst case of real tables
income = np.where(rng.random(n) < 0.85, 0.0, np.exp(rng.normal(8, 1.5, n)))
X = np.column_stack([X, income])

# %%
# Without and with private spreads
# --------------------------------
raw = DPPCA(n_components=3, eps=1.0, random_state=0).fit(X)
scaled = DPPCA(n_components=3, eps=1.0, scale=True, random_state=0).fit(X)
print("private spreads:", np.round(scaled.scale_, 3))
print("sample sd (NOT private):", np.round(X.std(axis=0), 3))

correlation = np.corrcoef(X, rowvar=False)
values, vectors = np.linalg.eigh(correlation)
print("correlation PCA, PVE (NOT private):", np.round(values[::-1][:3] / 7, 3))
print("private PVE with scale=True:", np.round(scaled.explained_variance_ratio_, 3))
print("private PVE without scaling:", np.round(raw.explained_variance_ratio_, 3))

# %%
# The pictures
# ------------
# Without scaling, the first component is a single column in the largest unit and
# the variable circle has one arrow. With ``scale=True`` the two correlated blocks
# appear as two bundles of arrows, as in the correlation PCA.
fig, axs = plt.subplots(2, 2, figsize=(11, 10), layout="constrained")
for row, (title, estimator) in enumerate([("raw units", raw), ("scale=True", scaled)]):
    ScreeDisplay.from_estimator(estimator, ax=axs[row, 0])
    VariableDisplay.from_estimator(estimator, ax=axs[row, 1])
    axs[row, 0].set_title(f"Scree, {title}")
    axs[row, 1].set_title(f"Variables, {title}")
fig.suptitle("Mixed units: private PCA without and with private spreads (eps = 1)")
plt.show()
