"""
Privacy accounting: exact composition and a budget across fits
==============================================================

A :class:`~sklearn_dppca.DPPCA` fit spends its ``(eps, delta)`` on several
mechanisms: quantile searches (pure ``eps``-DP) and four Gaussian mechanisms (the
Kendall matrix of the directions, the variances, the total variance and the score
histogram). How the Gaussian parts are *composed* decides how much noise each one
needs for the same guarantee:

* ``accounting="basic"`` calibrates each Gaussian part alone to its share of
  ``(eps, delta)`` and adds the shares up;
* ``accounting="gdp"`` (the default) composes the Gaussian parts exactly, as one
  ``mu``-GDP block (Gaussian differential privacy, Dong, Roth & Su 2022). The fit
  still spends at most ``(eps, delta)``, with less noise on every Gaussian part.

The second half caps a whole grid search with a
:class:`~sklearn_dppca.PrivacyAccountant`: every fit charges one total budget, and
the fit that would exceed it raises :class:`~sklearn_dppca.BudgetExceededError`
before it touches the data. See the user guide, :ref:`privacy-accounting`.

The data are the Gaussian clusters of
:func:`~sklearn_dppca.datasets.make_gaussian_clusters` (the R package's ``gau``:
5,000 rows, 20 columns, five groups).
"""

# %%
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_dppca import DPPCA, BudgetExceededError, PrivacyAccountant
from sklearn_dppca.datasets import make_gaussian_clusters
from sklearn_dppca.privacy import Spend, gdp_delta

X, groups = make_gaussian_clusters(return_groups=True, random_state=0)

# %%
# The same fit under basic and GDP accounting
# -------------------------------------------
# Both fits spend the same total ``(eps, delta) = (1, 1e-5)`` with the default
# ``budget_split``. The ledger records, for each Gaussian part, its sensitivity,
# the standard deviation of its noise and ``mu = sensitivity / noise sd``.
fits = {accounting: DPPCA(eps=1.0, delta=1e-5, accounting=accounting,
                          random_state=0).fit(X)
        for accounting in ("basic", "gdp")}
for accounting, fit in fits.items():
    print(f"accounting={accounting!r}: privacy_spent_ = "
          f"({fit.privacy_spent_[0]:.4g}, {fit.privacy_spent_[1]:.3g})")


def gaussian_parts(fit):
    """Step -> ledger entry of every Gaussian mechanism, continuous or discrete (not
    the block's entry)."""
    return {entry["step"]: entry for entry in fit.privacy_ledger_
            if "gaussian" in entry["mechanism"] and entry["step"] != "gaussian block"}


parts = {accounting: gaussian_parts(fit) for accounting, fit in fits.items()}
steps = list(parts["gdp"])
print(f"\n{'Gaussian part':32s} {'noise sd / sensitivity':>24s}")
print(f"{'':32s} {'basic':>11s} {'gdp':>11s}")
for step in steps:
    basic, gdp = parts["basic"][step], parts["gdp"][step]
    print(f"{step:32s} {basic['noise_scale'] / basic['sensitivity']:11.2f} "
          f"{gdp['noise_scale'] / gdp['sensitivity']:11.2f}")

block = fits["gdp"].privacy_ledger_[-1]
print(f"\n{block['step']}: {block['mechanism']}, mu = {block['mu']:.4f}, "
      f"charged as eps = {block['eps']:.4g}, delta = {block['delta']:.3g}")

# %%
# The noise of each Gaussian part is drawn in units of its sensitivity: the
# sensitivities of the variances and of the total variance depend on private clip
# bounds, which differ from fit to fit, but the ratio ``noise sd / sensitivity``
# is fixed by the accounting alone (``1 / mu_i`` under GDP). Under basic
# accounting that ratio grows about like ``1 / share``; under GDP like
# ``1 / sqrt(share)``, so the smallest part, the total variance (3.75% of the
# budget), gains the most.
fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
x = np.arange(len(steps))
width = 0.38
colors = {"basic": "0.6", "gdp": "tab:blue"}
for offset, accounting in ((-width / 2, "basic"), (width / 2, "gdp")):
    ratios = [parts[accounting][step]["noise_scale"] / parts[accounting][step]["sensitivity"]
              for step in steps]
    bars = ax.bar(x + offset, ratios, width, color=colors[accounting],
                  label=f'accounting="{accounting}"')
    ax.bar_label(bars, fmt="%.1f", padding=2)
ax.set_xticks(x, [step.replace("/", "/\n") for step in steps])
ax.set_ylabel("noise sd / sensitivity")
ax.set_title("Noise of each Gaussian part of DPPCA at eps = 1, delta = 1e-5\n"
             "(same total guarantee; lower is less noise)")
ax.legend(loc="upper left")
ax.margins(y=0.15)

# %%
# A budget for a whole grid search
# --------------------------------
# Cross-validation and grid searches fit clones of the estimator on the same rows,
# and every fit spends its ``(eps, delta)`` again. Give the estimator an accountant
# holding the total budget of the data set: every clone shares it (cloning returns
# the same accountant), each fit charges its planned spend before it touches the
# data, and the charges are composed exactly, ``mu``'s in squares. Run the search
# in one process (``n_jobs=None`` or 1): a copy of the accountant in another
# process refuses to charge. With ``error_score="raise"`` a refused fit stops the
# search (the default, ``np.nan``, would record it as a failed fit and go on).
#
# ``random_state=0`` makes this page reproducible; publish releases made with
# ``random_state=None``.
accountant = PrivacyAccountant(eps=4.0, delta=1e-5)
pipeline = make_pipeline(DPPCA(eps=1.0, delta=1e-5, accountant=accountant,
                               random_state=0),
                         LogisticRegression())
search = GridSearchCV(pipeline, {"dppca__n_components": [2, 4]}, cv=3,
                      error_score="raise")
search.fit(X, groups)
print("best:", search.best_params_,
      f"accuracy {search.best_score_:.3f} (predicting the group from the scores)")
print(f"{len(accountant.charges)} fits charged (2 candidates x 3 folds + the refit)")
print("spent:", accountant.spent(), "of", (accountant.eps, accountant.delta))

# %%
# Seven fits of ``(1, 1e-5)`` each fit in a total of ``(4, 1e-5)``: added up
# they would need ``(7, 7e-5)``. An eighth is refused, and nothing is computed:
try:
    DPPCA(eps=1.0, delta=1e-5, accountant=accountant).fit(X)
except BudgetExceededError as error:
    print("refused:", error)

# %%
# The accountant outlives the session as a JSON file (written atomically). Load it
# in the one process that fits next; it refuses the same fit.
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "gau-budget.json")
    accountant.save(path)
    restored = PrivacyAccountant.load(path)
print(restored, f"with {len(restored.charges)} charges")
try:
    DPPCA(eps=1.0, delta=1e-5, accountant=restored).fit(X)
except BudgetExceededError:
    print("the restored accountant refuses it too")

# %%
# What the charges cost: the smallest total ``eps`` at which they are
# ``(eps, 1e-5)``-DP after each fit, composed exactly as the accountant does
# (pure ``eps`` added, ``mu``'s in squares), against the fits' own pairs added up
# (``eps = 1`` per fit, and ``delta = 1e-5`` per fit, so that added up even two
# fits exceed the total ``delta``). The red cross is the refused eighth fit.


def eps_needed(spend, delta):
    """The smallest spend.eps + eps_G with spend.delta + gdp_delta(spend.mu, eps_G)
    <= delta: the total eps these charges need at this delta."""
    if spend.mu == 0:
        return spend.eps
    left = delta - spend.delta
    return spend.eps + brentq(lambda e: gdp_delta(spend.mu, e) - left, 1e-9, 100.0)


charges = [Spend(charge["eps"], charge["delta"], charge["mu"])
           for charge in accountant.charges]
# the refused eighth fit asked for what each of the seven was charged (see the
# refusal message above)
charges.append(charges[-1])
totals = [sum(charges[:k], Spend()) for k in range(1, len(charges) + 1)]
needed = [eps_needed(total, accountant.delta) for total in totals]
counts = np.arange(1, len(totals) + 1)

fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
ax.axhline(accountant.eps, color="k", lw=1, ls="--", label="total eps of the accountant")
ax.plot(counts, counts * 1.0, "s-", color="0.6",
        label="the fits' pairs added up: eps = k, delta = k x 1e-5")
ax.plot(counts[:-1], needed[:-1], "o-", color="tab:blue",
        label="composed exactly (the accountant): eps at delta = 1e-5")
ax.plot(counts[-1:], needed[-1:], "x", color="tab:red", ms=10, mew=2,
        label="eighth fit: refused")
ax.set_xticks(counts)
ax.set_xlabel("fits of DPPCA(eps=1, delta=1e-5) charged")
ax.set_ylabel("eps spent")
ax.set_title("One budget (eps = 4, delta = 1e-5) for a grid search on gau")
ax.legend(loc="upper left")

plt.show()
