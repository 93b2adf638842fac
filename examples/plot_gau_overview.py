"""
The five DP PCA pictures on Gaussian clusters (``gau``)
=======================================================

This example fits :class:`~sklearn_dppca.DPPCA` to the Gaussian-cluster data of the
R package ``dppca`` (five groups in 20 dimensions, see
:func:`~sklearn_dppca.datasets.make_gaussian_clusters`) and draws the five
differentially private PCA pictures: scree, loadings, scores, variable circle and
biplot. With its defaults, ``make_gaussian_clusters`` draws exactly the R
package's ``gau`` (1000 rows per group), used here. More rows mean less noise at
the same budget.

Everything drawn is a released (private) quantity or post-processing of one:
the private directions, the private variances along them, the private frame and
score histogram, and synthetic points sampled from that histogram. The group labels
are public by declaration (``groups=[...]``); each group gets its own private
histogram on the common frame.
"""

# %%
# Fit the private PCA
# -------------------
# The whole fit spends ``eps = 1`` and ``delta = 1e-5``. The ledger lists every
# mechanism call and what it spent. ``random_state`` makes the example
# reproducible; releases you publish should use ``random_state=None``.
import matplotlib.pyplot as plt

from sklearn_dppca import DPPCA
from sklearn_dppca.datasets import make_gaussian_clusters
from sklearn_dppca.display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
    plot_overview,
)

X, groups = make_gaussian_clusters(return_groups=True, as_frame=True,
                                   random_state=0)
labels = ["G1", "G2", "G3", "G4", "G5"]
dppca = DPPCA(n_components=4, eps=1.0, delta=1e-5, groups=labels, random_state=0)
dppca.fit(X, groups)

for entry in dppca.privacy_ledger_:
    print(f"{entry['step']:<48} eps={entry['eps']:.4f} delta={entry['delta']:.1e}")
print("total spent:", dppca.privacy_spent_)

# %%
# All five pictures and the ledger in one figure
# ----------------------------------------------
# :func:`~sklearn_dppca.display.plot_overview` is the figure to put in a report.
fig = plot_overview(dppca)

# %%
# Scree plot
# ----------
# Bars: the private share of the total variance that each retained component
# explains (as in scikit-learn, the four bars sum below 100%: 16 components are
# not kept); line: the private variances (right axis); red: the cumulative share.
# The error bars span +-2 standard deviations of the noise added to each variance:
# differences smaller than that are not resolved by this release.
ScreeDisplay.from_estimator(dppca, cumulative=True)

# %%
# Loadings
# --------
# The coefficients of the private directions. PC1 separates the groups that move
# columns V1-V5, PC2 those that move V6-V10. The heatmap shows all four
# components at once.
LoadingDisplay.from_estimator(dppca, kind="vector")
LoadingDisplay.from_estimator(dppca, kind="heatmap")

# %%
# Scores
# ------
# The private histogram of the scores on the private frame, one panel per group
# (a common colour scale), then the synthetic points coloured by group. Noisy
# counts below a threshold are set to 0, so that the Gaussian noise protecting
# the rows does not paint the whole frame; the note in the corner gives the
# expected number of cells that are pure noise and still passed (over all groups).
ScoreDisplay.from_estimator(dppca, kind="histogram", groups="facets")
ScoreDisplay.from_estimator(dppca, kind="points", center=True)

# %%
# Variable circle and biplot
# --------------------------
# The variable circle shows the correlation of each variable with the two
# components, from the private variances of the components and the private
# variance of each variable: an arrow of length 1 means that the two components
# carry all of that variable's variance. Noise can push a correlation beyond 1;
# such arrows are drawn on the circle, in red, and the legend counts them. The
# biplot puts the variables over the synthetic points.
VariableDisplay.from_estimator(dppca)
BiplotDisplay.from_estimator(dppca, alpha=1.0)

plt.show()
