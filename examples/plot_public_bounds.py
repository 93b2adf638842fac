"""
What a codebook buys: declared bounds on Adult
==============================================

A data custodian often knows each column's range without looking at the data:
a survey's codebook, an instrument's scale, a census top code. Declared as
``bounds``, those public ranges replace private searches for clip bounds and
give the scree moments about the box's private mean, whose noise the box sets
before any row is read.

The five numeric columns of the UCI Adult data (bundled:
:func:`~sklearn_dppca.datasets.load_adult`) document their ranges: age 17 to
90, education coded 1 to 16, capital gain 0 to 99,999 dollars (a top code),
capital loss 0 to 4,356 dollars, hours 1 to 99. Capital gain is 0 in 92% of
the rows and holds nearly all of the variance (the columns keep their units
here: a covariance PCA). Without bounds its tail and its ties defeat the
searches at ``eps = 1``; with the codebook the same budget prints PC1's
variance and PVE. The ranges come from the data's description, never from
the rows.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_dppca import DPPCA
from sklearn_dppca.datasets import load_adult
from sklearn_dppca.display import ScreeDisplay

adult = load_adult()
X = adult.data                      # a DataFrame: its column names name the columns
names = list(X.columns)
codebook = [(17, 90), (1, 16), (0, 99_999), (0, 4_356), (1, 99)]

# %%
# The plan sees the box before any row is read
# --------------------------------------------
# ``plan(n, p)`` reads only public inputs. With declared bounds its
# ``data_noise_sd`` column gives the scree's noise sd in the data's units
# (squared, for a variance): a narrower box would show less.
n_samples, n_features = X.shape
plan = DPPCA(n_components=3, eps=1.0, bounds=codebook).plan(n_samples, n_features)
print(plan.dropna(subset=["data_noise_sd"])[["step", "mu", "data_noise_sd"]])

# %%
# A smaller study of the same columns, 300 rows at ``eps = 0.5``, would buy no
# scree: the plan names the eps that would, and, with ``splits=True``, the
# ``budget_split`` that would at this eps (the directions then get less).
small = DPPCA(n_components=3, eps=0.5, bounds=codebook).plan(300, n_features,
                                                              splits=True)
scree = small[small.step.str.startswith("scree")]
print(scree[["step", "released", "eps_needed", "split_needed"]])

# %%
# The same budget, without and with the codebook
# ----------------------------------------------
fits = {
    "no bounds": DPPCA(n_components=3, eps=1.0, random_state=0).fit(X),
    "codebook ranges": DPPCA(n_components=3, eps=1.0, bounds=codebook,
                             random_state=0).fit(X),
}
for label, fit in fits.items():
    variance, sd = fit.explained_variance_[0], fit.noise_scale_[0]
    share, share_sd = (fit.explained_variance_ratio_[0],
                       fit.explained_variance_ratio_noise_scale_[0])
    top = names[int(np.argmax(np.abs(fit.components_[0])))]
    said = (f"variance {variance:.3g} +- {sd:.2g}, PVE {100 * share:.1f}% "
            f"+- {100 * share_sd:.1f}%" if np.isfinite(variance) and np.isfinite(share)
            else "variance and PVE not estimable")
    print(f"{label:16s} PC1 (mostly {top}): {said}")

# %%
# For comparison only, the ordinary PCA of the same rows (NOT private: never
# publish it): capital gain carries 99.7% of the variance.
eigenvalues = np.linalg.eigvalsh(np.cov(X.to_numpy(dtype=float).T))[::-1]
print(f"non-private PC1: variance {eigenvalues[0]:.3g}, "
      f"PVE {100 * eigenvalues[0] / eigenvalues.sum():.1f}%")

# %%
# The two screes
# --------------
# Each bar is a private PVE with +-2 of its own sd; a share the budget could not
# buy is said "not estimable" and drawn as no bar.
fig, axs = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
for ax, (label, fit) in zip(axs, fits.items()):
    ScreeDisplay.from_estimator(fit, ax=ax)
    ax.set_title(f"Adult, eps = 1: {label}")
plt.show()
