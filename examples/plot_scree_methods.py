"""
Several scree methods on one budget
===================================

Three private scree methods fitted to the same data, the Gaussian clusters of
:func:`~sklearn_dppca.datasets.make_gaussian_clusters` (the R package's ``gau``
recipe), and drawn together with
:meth:`~sklearn_dppca.display.ScreeDisplay.from_estimators`. The three fits
are charged to ONE :class:`~sklearn_dppca.privacy.PrivacyAccountant`: their
budgets compose, and the accountant refuses a fit that would take the total
past ``eps = 1.5``. Each fit spends ``eps = 0.5`` (the legend says so).

Each method's private variances sit side by side at every component, with
their +-2 noise standard deviation error bars in the method's colour; a hollow
point is within 2 noise sd of 0 and could be noise alone. Where the error bars
of two methods overlap, the picture does not tell them apart.
"""

# %%
import matplotlib.pyplot as plt

from sklearn_dppca import DPScree
from sklearn_dppca.datasets import make_gaussian_clusters
from sklearn_dppca.display import ScreeDisplay
from sklearn_dppca.privacy import PrivacyAccountant

X = make_gaussian_clusters(random_state=0)
accountant = PrivacyAccountant(eps=1.5, delta=3e-5)
fits = [
    DPScree(n_components=5, eps=0.5, scree_method=method, accountant=accountant,
            random_state=0).fit(X)
    for method in ("clipped", "pmwm", "kendall")
]
print("spent:", accountant.spent())

fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
displays = ScreeDisplay.from_estimators(fits, ax=ax)
plt.show()
