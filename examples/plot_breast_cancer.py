"""
Private PCA of the breast cancer data next to ordinary PCA
==========================================================

The Wisconsin breast cancer data (569 tumours, 30 features, bundled with
scikit-learn) with its two public diagnosis labels. :class:`~sklearn_dppca.DPPCA`
releases private directions, variances and a private score histogram per
diagnosis; ``compute_nonprivate=True`` adds the ordinary PCA as a grey, dashed or
hollow reference (it is **not private**: use it to judge, never publish it).

The features live on very different scales and some are 0, so we take
``log1p`` of every feature: a fixed transformation that reads nothing from the
data (standardising by the sample standard deviation would not be private).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_dppca import DPPCA
from sklearn_dppca.datasets import load_breast_cancer_frame
from sklearn_dppca.display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
)

X, y = load_breast_cancer_frame()
X = np.log1p(X)
diagnoses = ["benign", "malignant"]

dppca = DPPCA(n_components=4, eps=2.0, delta=1e-5, groups=diagnoses, bins=(10, 10),
              compute_nonprivate=True, random_state=1)
dppca.fit(X, y)
print("privacy spent:", dppca.privacy_spent_)

# %%
# Scree and loadings
# ------------------
# With 30 variables the labels get smaller; ``variables`` picks a subset by name.
fig, axs = plt.subplots(1, 3, figsize=(17, 5.5), layout="constrained")
ScreeDisplay.from_estimator(dppca, ax=axs[0], cumulative=True)
LoadingDisplay.from_estimator(dppca, ax=axs[1])
LoadingDisplay.from_estimator(
    dppca, ax=axs[2], kind="point",
    variables=["mean radius", "mean texture", "mean smoothness",
               "mean fractal dimension", "worst concavity", "texture error"],
)

# %%
# Scores by diagnosis
# -------------------
# One panel per diagnosis on the common private frame; the dashed grey contours
# in the single panel hold 50% and 90% of the (non-private) true histogram.
ScoreDisplay.from_estimator(dppca, kind="histogram", groups="facets")
ScoreDisplay.from_estimator(dppca, kind="both")

# %%
# Variable circle and biplot
# --------------------------
fig, axs = plt.subplots(1, 2, figsize=(13, 6), layout="constrained")
VariableDisplay.from_estimator(dppca, ax=axs[0])
BiplotDisplay.from_estimator(dppca, ax=axs[1], alpha=1.0)

plt.show()
