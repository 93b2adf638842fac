"""Accuracy of the private column spreads of ``scale=True`` against n.

Data: Gaussian rows, p = 10 correlated columns (a random correlation structure)
multiplied by units from 1e-3 to 1e3, so that the spreads must work in any unit.
Each fit is ``DPKendallDirections(scale=True, eps=1)``, whose spread step gets
``scale_share = 0.2`` of the budget, the same part as the ``"scale"`` share of
``DPPCA(scale=True)``'s default ``budget_split`` (``pairs=16`` keeps the directions
cheap; the spreads do not depend on it).

For every fit and column, ``r_j = scale_j / sd_j`` with ``sd_j`` the sample standard
deviation. The script prints, for each n, the median over fits of

``r``
    the median ratio itself: slightly below 1 even without noise, since the
    clipping removes the top few percent of the squared pair differences (a
    column clipped at the 0.97 quantile of a Gaussian's has a spread of 0.973 sd,
    at the 0.99 quantile 0.990 sd);
``|r - 1|``
    the median over columns of the relative error against the sample sd: the
    privacy noise plus that clipping bias;
``max r / min r - 1``
    the spread of the ratios across the columns of one fit. This is what matters
    for the correlation PCA: a common factor changes neither its directions nor its
    PVE, differences between columns do;
``unscaled``
    the mean number of columns (of 10) that the estimator left in their own unit
    because their spread was dominated by noise (``scale_`` is then 1, and those
    columns are left out of the three figures above).

Usage: ``python benchmarks/bench_scale.py [--quick] [--seeds S]`` with the package
installed (or ``PYTHONPATH=.``).
"""

import argparse
import time
import warnings

import numpy as np

from sklearn_dppca import DPKendallDirections

P = 10


def gaussian_in_units(n, seed):
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(P, P))
    units = np.logspace(-3, 3, P)
    return (rng.standard_normal((n, P)) @ mixing.T) * units


def measure(n, seeds):
    ratios, errors, spreads, unscaled = [], [], [], []
    for seed in seeds:
        X = gaussian_in_units(n, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = DPKendallDirections(n_components=2, eps=1.0, scale=True, pairs=16,
                                         random_state=seed).fit(X)
        ratio = fitted.scale_ / X.std(axis=0, ddof=1)
        kept = fitted.scale_ != 1.0
        unscaled.append(int(np.sum(~kept)))
        if kept.any():
            ratios.append(np.median(ratio[kept]))
            errors.append(np.median(np.abs(ratio[kept] - 1)))
            spreads.append(ratio[kept].max() / ratio[kept].min() - 1)
    middle = (lambda values: float(np.median(values)) if values else float("nan"))
    return middle(ratios), middle(errors), middle(spreads), float(np.mean(unscaled))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 seeds, n up to 3e4")
    parser.add_argument("--seeds", type=int, default=None, help="fits per n")
    args = parser.parse_args()
    sizes = [1000, 3000, 10000, 30000] if args.quick else \
        [1000, 3000, 10000, 30000, 100000]
    seeds = range(args.seeds or (5 if args.quick else 20))

    print(f"p = {P}, eps = 1 (spreads: 0.2), delta = 1e-5, {len(seeds)} fits per n")
    header = (f"{'n':>7}  {'r':>7}  {'|r - 1|':>9}  {'max r/min r - 1':>15}  "
              f"{'unscaled':>8}  {'s/fit':>6}")
    print(header)
    print("-" * len(header))
    for n in sizes:
        start = time.perf_counter()
        ratio, error, spread, unscaled = measure(n, seeds)
        seconds = (time.perf_counter() - start) / len(seeds)
        print(f"{n:7d}  {ratio:7.3g}  {error:9.3g}  {spread:15.3g}  "
              f"{unscaled:8.1f}  {seconds:6.2f}", flush=True)


if __name__ == "__main__":
    main()
