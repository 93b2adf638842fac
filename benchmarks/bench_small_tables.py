"""Small tables told the truth: what DPPCA releases on scikit-learn's small real
tables, and how far its numbers are from the data's.

For iris, wine, diabetes and breast cancer (raw: diabetes with
``scaled=False``), over 10 seeds at each ``eps``, DPPCA with its defaults:

* ``scree``: how many fits released the scree (the plan bought it), and how many
  of those released a finite PC1 PVE;
* ``min var/total``: the smallest finite released variance over the table's total
  variance (a collapsed search would leave 1e-200 and less);
* ``|PVE1 - share|``: the largest error of a finite PC1 PVE against the share of
  the total variance along the *released* PC1, ``v^T S v / tr(S)``;
* ``predicted``: whether every part a fit did not run was predicted by
  ``DPPCA.plan(n, p)`` before any data were read (the fit's plan_ equals it);
* with ``scale=True``: how many fits released ``scale_``, and the largest ratio
  of a released spread to its column's standard deviation (either way round).

A "-" says there was nothing finite to measure (no finite variance, PVE or
spread): not estimable, not an error of 0.

Usage::

    python benchmarks/bench_small_tables.py            # eps 1 and 4, 10 seeds
    python benchmarks/bench_small_tables.py --seeds 3
"""

import argparse
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine

from sklearn_dppca import DPPCA

TABLES = {"iris": load_iris, "wine": load_wine,
          # raw: the measurements in their own units (scikit-learn's default
          # centres and scales them)
          "diabetes": lambda: load_diabetes(scaled=False),
          "breast cancer": load_breast_cancer}


def _share(X, direction):
    covariance = np.cov(X, rowvar=False)
    return float(direction @ covariance @ direction / np.trace(covariance))


def scree_row(name, X, eps, seeds):
    total = np.trace(np.cov(X, rowvar=False))
    released = finite = 0
    smallest, worst, predicted = np.inf, np.nan, True
    plan = DPPCA(eps=eps).plan(*X.shape)
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = DPPCA(eps=eps, random_state=seed).fit(X)
        predicted &= fit.plan_.equals(plan)
        if fit.plan_.loc[fit.plan_.step.str.startswith("scree"), "released"].any():
            released += 1
        variances = fit.explained_variance_[np.isfinite(fit.explained_variance_)]
        if variances.size:
            smallest = min(smallest, float(variances.min()) / total)
        if np.isfinite(fit.explained_variance_ratio_[0]):
            finite += 1
            worst = np.fmax(worst, abs(fit.explained_variance_ratio_[0]
                                       - _share(X, fit.components_[0])))
    # "-": nothing finite to measure (not an error of 0)
    return (f"{name:14s} eps={eps:<4g} scree {released:2d}/{len(seeds)}  finite PVE1 "
            f"{finite:2d}  min var/total {_shown(smallest, '9.2e'):>9}  |PVE1 - share| "
            f"{_shown(worst, '.3f'):>5}  predicted {predicted}")


def _shown(value, spec):
    return format(value, spec) if np.isfinite(value) else "-"


def scale_row(name, X, eps, seeds):
    sd = X.std(axis=0, ddof=1)
    released, worst = 0, np.nan
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = DPPCA(eps=eps, scale=True, random_state=seed).fit(X)
        finite = np.isfinite(fit.scale_)
        if finite.all():
            released += 1
        if finite.any():
            ratio = fit.scale_[finite] / sd[finite]
            worst = np.fmax(worst, float(np.max(np.maximum(ratio, 1 / ratio))))
    return (f"{name:14s} eps={eps:<4g} scale=True: scale_ released {released:2d}/"
            f"{len(seeds)}  worst spread/sd factor {_shown(worst, '.2f')}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    seeds = range(args.seeds)
    for eps in (1.0, 4.0):
        for name, load in TABLES.items():
            print(scree_row(name, load().data, eps, seeds))
    for name, load in TABLES.items():
        print(scale_row(name, load().data, 4.0, seeds))


if __name__ == "__main__":
    main()
