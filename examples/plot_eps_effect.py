"""
How the privacy budget changes each picture
===========================================

The same data, three budgets: ``eps`` = 0.2, 1 and 5 (``delta = 1e-5``). Smaller
``eps`` means more noise in every released quantity, and every picture shows it
in its own way: flatter or disordered screes with longer error bars (+-2 noise
standard deviations), loadings that wander from the true directions (grey,
dashed: the non-private reference), score histograms where few cells survive the
noise threshold (at ``eps = 0.2`` some groups keep no cell at all, the panel says
so, and the fit warns that it draws no synthetic point for them).

The data are the Gaussian clusters of
:func:`~sklearn_dppca.datasets.make_gaussian_clusters` (the R package's ``gau``
recipe), 1000 rows per group.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_dppca import DPPCA
from sklearn_dppca.datasets import make_gaussian_clusters
from sklearn_dppca.display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
)

X, groups = make_gaussian_clusters(return_groups=True, as_frame=True,
                                   random_state=0)
labels = ["G1", "G2", "G3", "G4", "G5"]
budgets = (0.2, 1.0, 5.0)
fits = {
    eps: DPPCA(n_components=3, eps=eps, groups=labels, compute_nonprivate=True,
               random_state=0).fit(X, groups)
    for eps in budgets
}


def row(title):
    fig, axs = plt.subplots(1, len(budgets), figsize=(16, 5), layout="constrained")
    fig.suptitle(title)
    return fig, axs


# %%
# Scree
# -----
fig, axs = row("DP scree at three budgets")
for ax, eps in zip(axs, budgets):
    ScreeDisplay.from_estimator(fits[eps], ax=ax)
    ax.set_title(f"eps = {eps:g}")

# %%
# Loadings
# --------
fig, axs = row("DP loadings at three budgets (grey dashed: non-private)")
for ax, eps in zip(axs, budgets):
    LoadingDisplay.from_estimator(fits[eps], ax=ax)
    ax.set_title(f"eps = {eps:g}")

# %%
# Scores
# ------
fig, axs = row("DP score histograms at three budgets")
for ax, eps in zip(axs, budgets):
    ScoreDisplay.from_estimator(fits[eps], ax=ax, kind="histogram")
    ax.set_title(f"eps = {eps:g}")

# %%
# Variable circle
# ---------------
fig, axs = row("DP variable circles at three budgets")
for ax, eps in zip(axs, budgets):
    VariableDisplay.from_estimator(fits[eps], ax=ax)
    ax.set_title(f"eps = {eps:g}")

# %%
# Biplot
# ------
# ``alpha=1`` divides by the private singular values; when a private variance of
# the shown components is 0 (it can happen at small budgets), only ``alpha=0`` is
# defined.
fig, axs = row("DP biplots at three budgets")
for ax, eps in zip(axs, budgets):
    est = fits[eps]
    alpha = 1.0 if np.all(est.explained_variance_[list(est.axes_)] > 0) else 0.0
    BiplotDisplay.from_estimator(est, ax=ax, alpha=alpha)
    ax.set_title(f"eps = {eps:g}, alpha = {alpha:g}")

plt.show()
