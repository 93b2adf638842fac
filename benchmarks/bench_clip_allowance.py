"""The clipping allowance: printed variances and totals against the table's, in
their stated sds, with and without it.

Data
    Gaussian tables (seed 0) of 20,000 x 10, 2,000 x 5 and 500 x 4 with column
    sds from 4 down to 0.5; scikit-learn's iris, wine, diabetes (raw) and breast
    cancer; the numeric Adult columns (32,561 x 5).

Fits
    ``DPPCA(n_components=3, eps=eps, random_state=seed)``, no bounds, seeds
    0..9, eps 1 and 4. "with": as shipped. "without": the same fits with the
    allowance set to 0 (the same releases and ledger: it is post-processing,
    so only the sds differ).

Printed
    Per table and eps: how many printed top-3 variances and totals there were,
    the mean of ``z = (printed - table's) / stated sd`` (the variance along the
    released direction; the total against the trace), and the share with
    ``|z| > 2`` and ``|z| > 4``; then the ratio of the ``|z| > 2`` counts,
    with over without, over all tables.

Run: ``python benchmarks/bench_clip_allowance.py`` (about a minute on one core).
"""

import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine

from sklearn_dppca import DPPCA
from sklearn_dppca._algorithms import _scree
from sklearn_dppca.datasets import load_adult

SEEDS = range(10)
EPS = (1.0, 4.0)


def tables():
    rng = np.random.default_rng(0)
    found = {}
    for n, p in ((20_000, 10), (2_000, 5), (500, 4)):
        found[f"gauss {n}x{p}"] = rng.standard_normal((n, p)) * np.geomspace(4, 0.5, p)
    found["iris"] = load_iris().data
    found["wine"] = load_wine().data
    found["diabetes"] = load_diabetes(scaled=False).data
    found["breast_cancer"] = load_breast_cancer().data
    found["adult"] = np.asarray(load_adult().data, dtype=float)
    return found


def z_scores(X, eps):
    """The printed variances' and totals' z against the table's."""
    covariance = np.cov(X.T)
    trace = float(np.trace(covariance))
    variances, totals = [], []
    for seed in SEEDS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = DPPCA(n_components=3, eps=eps, random_state=seed).fit(X)
        truth = np.einsum("ij,jk,ik->i", fitted.components_, covariance, fitted.components_)
        printed = np.isfinite(fitted.explained_variance_)
        variances.extend((fitted.explained_variance_[printed] - truth[printed])
                         / fitted.noise_scale_[printed])
        if np.isfinite(fitted.total_variance_):
            totals.append((fitted.total_variance_ - trace)
                          / fitted.total_variance_noise_scale_)
    return np.array(variances), np.array(totals)


def describe(z):
    if z.size == 0:
        return f"{'0':>4} {'-':>6} {'-':>5} {'-':>5}"
    return (f"{z.size:4d} {z.mean():+6.2f} {np.mean(np.abs(z) > 2):5.2f} "
            f"{np.mean(np.abs(z) > 4):5.2f}")


def without_allowance():
    """Patch the allowance to 0 (a context: restores it)."""
    saved = _scree.clip_allowance_share, _scree.total_allowance_share

    class Patch:
        def __enter__(self):
            _scree.clip_allowance_share = lambda raw, *a, **k: np.zeros(np.shape(raw))
            _scree.total_allowance_share = lambda *a, **k: 0.0

        def __exit__(self, *exc):
            _scree.clip_allowance_share, _scree.total_allowance_share = saved

    return Patch()


def main():
    start = time.time()
    print(f"{'table':15s} {'eps':>4s} | {'variances: n  mean z |z|>2 |z|>4':>34s} | "
          f"{'totals: n  mean z |z|>2 |z|>4':>31s}")
    far = {"with": [0, 0], "without": [0, 0]}
    for name, X in tables().items():
        for eps in EPS:
            for label in ("without", "with"):
                if label == "without":
                    with without_allowance():
                        variances, totals = z_scores(X, eps)
                else:
                    variances, totals = z_scores(X, eps)
                far[label][0] += int(np.sum(np.abs(variances) > 2))
                far[label][1] += int(np.sum(np.abs(totals) > 2))
                print(f"{name:15s} {eps:4g} | {label:>8s} {describe(variances)} | "
                      f"{describe(totals)}")
    for part, index in (("variances", 0), ("totals", 1)):
        print(f"{part} more than 2 stated sds from the table's: with/without = "
              f"{far['with'][index]}/{far['without'][index]} = "
              f"{far['with'][index] / max(far['without'][index], 1):.2f}")
    print(f"Elapsed: {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
