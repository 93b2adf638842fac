"""
Additive and sparse score histograms side by side
=================================================

:class:`~sklearn_dppca.DPPCA` releases the score picture as a private
histogram, ``histogram="additive"`` (Gaussian noise in every cell, then cells
below a noise threshold set to 0) or ``histogram="sparse"`` (the stability
histogram: Laplace noise in the non-empty cells only, and a cell kept only past
a threshold, so that which cells were empty stays private). The ``"auto"``
bins follow each method's noise, so the two grids differ. Two fits of the Gaussian clusters of
:func:`~sklearn_dppca.datasets.make_gaussian_clusters` are drawn side by side
with :meth:`~sklearn_dppca.display.ScoreDisplay.from_estimator`, one on each
axes, each panel titled with its method.

The two fits are two releases of the same rows: they are charged to one
:class:`~sklearn_dppca.privacy.PrivacyAccountant`, which composes them (eps
0.5 each, 1 in all).
"""

# %%
import matplotlib.pyplot as plt

from sklearn_dppca import DPPCA
from sklearn_dppca.datasets import make_gaussian_clusters
from sklearn_dppca.display import ScoreDisplay
from sklearn_dppca.privacy import PrivacyAccountant

X = make_gaussian_clusters(random_state=0)
accountant = PrivacyAccountant(eps=1.0, delta=2e-5)
fig, axs = plt.subplots(1, 2, figsize=(10, 4.8), layout="constrained")
for ax, method in zip(axs, ("additive", "sparse")):
    fit = DPPCA(n_components=2, eps=0.5, histogram=method, accountant=accountant,
                random_state=0).fit(X)
    ScoreDisplay.from_estimator(fit, ax=ax, groups=None)
    ax.set_title(f"{method} histogram (eps {fit.privacy_spent_[0]:g})")
print("spent:", accountant.spent())
plt.show()
