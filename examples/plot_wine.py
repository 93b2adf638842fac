"""
Private PCA of the wine data next to ordinary PCA
=================================================

The wine recognition data (178 wines, 13 chemical measurements, three cultivars,
bundled with scikit-learn) is small: with only 178 rows, the noise that protects
each wine is large. This example fits :class:`~sklearn_dppca.DPPCA` with
``compute_nonprivate=True`` so that every picture also shows the ordinary
(non-private) PCA in grey, dashed or hollow, as a reference.

The reference is **not private**: it is there to judge the private result, never
to be published.

The measurements live on very different scales (proline is in the hundreds,
hue around 1), and standardising by the sample standard deviation would be
non-private preprocessing. We take logarithms instead, a fixed transformation
that reads nothing from the data.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_dppca import DPPCA
from sklearn_dppca.datasets import load_wine_frame
from sklearn_dppca.display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
)

X, y = load_wine_frame()
X = np.log(X)  # all measurements are positive; a data-independent transform
cultivars = ["class_0", "class_1", "class_2"]

# %%
# Small data needs a larger budget
# --------------------------------
# At ``eps = 1`` the private pictures of 178 rows are mostly noise; ``eps = 4``
# shows the structure. The fit spends exactly this budget (see the ledger).
dppca = DPPCA(n_components=3, eps=4.0, delta=1e-5, groups=cultivars, bins=(12, 12),
              compute_nonprivate=True, random_state=0)
dppca.fit(X, y)
print("privacy spent:", dppca.privacy_spent_)

# %%
# Each share with its own uncertainty
# -----------------------------------
# ``explained_variance_ratio_noise_scale_`` is the standard deviation of each
# private PVE: the noise of its variance and of the total, and their clipping.
# The scree's PVE bars draw +-2 of it. A share the fit could not estimate at
# this eps and n is NaN, and is said so.
for l, (share, sd) in enumerate(zip(dppca.explained_variance_ratio_,
                                    dppca.explained_variance_ratio_noise_scale_)):
    said = f"{100 * share:.1f}% +- {100 * sd:.1f}%" if np.isfinite(share) \
        else "not estimable"
    print(f"PC{l + 1}: PVE {said}")

# %%
# Private (colour) next to the non-private reference (grey)
# ----------------------------------------------------------
fig, axs = plt.subplots(2, 3, figsize=(16, 10), layout="constrained")
ScreeDisplay.from_estimator(dppca, ax=axs[0, 0])
LoadingDisplay.from_estimator(dppca, ax=axs[0, 1])
VariableDisplay.from_estimator(dppca, ax=axs[0, 2])
ScoreDisplay.from_estimator(dppca, ax=axs[1, 0], kind="histogram")
ScoreDisplay.from_estimator(dppca, ax=axs[1, 1], kind="points")
BiplotDisplay.from_estimator(dppca, ax=axs[1, 2], alpha=0.5)
fig.suptitle("Wine: private PCA (eps = 4) with the non-private reference")

# %%
# The loadings as a heatmap
# -------------------------
# Inner squares: the non-private loadings on the same colour scale.
LoadingDisplay.from_estimator(dppca, kind="heatmap")

plt.show()
