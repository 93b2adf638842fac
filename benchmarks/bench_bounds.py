"""Public bounds: DPPCA with declared per-column ranges against the bound-free fit,
and which directions method wins with them (issue 27, item 4).

Data
    scikit-learn's iris (150 x 4), wine (178 x 13), diabetes (442 x 10, raw:
    ``scaled=False``) and breast cancer (569 x 30), raw columns, ``scale=False``;
    and the numeric Adult columns (32,561 x 5) in part 2.

Bounds
    What a codebook would declare, simulated from the table: each column's
    observed range widened by half its width on each side, starting at 0 for a
    non-negative column. (The observed range is read HERE only, to simulate a
    codebook; the package never reads bounds off the data.) Adult takes the
    ranges its description documents (age 17-90, education 1-16, capital gain
    0-99,999, capital loss 0-4,356, hours 1-99).

Part 1, DPPCA with bounds against without
    Median over seeds 0..9 at eps = 1 (delta 1e-5, other parameters default):
    the PC1 PVE error ``|PVE1 - PVE1_PCA|`` and the PC1 direction error
    ``sin angle(v1, v1_PCA)`` against scikit-learn's PCA of the same rows
    (the bounds hold every row, so clipping changes none), the number of
    private searches in the ledger (its quantile entries), and the ratios
    (bounds / none; below 1: bounds are better).

Part 2, directions methods with bounds
    Median over seeds 0..9 at eps = 1 of ``sinF = ||sin Theta||_F`` between the
    top-2 directions of ``DPKendallDirections(n_components=2, bounds=box,
    radial=...)`` and scikit-learn's PCA of the same (clipped) rows, for radial
    "spherical", "clipped" and "covariance". Adult uses ``pairs=64``.

Run: ``python benchmarks/bench_bounds.py`` (about two minutes on one core);
``--part 1`` or ``--part 2`` for one part, ``--eps`` for another budget,
``--tight`` for boxes at the observed ranges (a scale that the data fill: the
regime where the box's bounds are tight).
"""

import argparse
import math
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.decomposition import PCA

from sklearn_dppca import DPKendallDirections, DPPCA
from sklearn_dppca.datasets import load_adult

SEEDS = range(10)
EPS = 1.0
ADULT_CODEBOOK = [(17, 90), (1, 16), (0, 99_999), (0, 4_356), (1, 99)]


TIGHT = False


def codebook_bounds(X):
    """Simulated codebook ranges: the observed range widened by half its width on
    each side, from 0 for a non-negative column (benchmark only); with
    ``--tight``, the observed range itself (a scale the data fill)."""
    low, high = X.min(axis=0), X.max(axis=0)
    if TIGHT:
        return list(zip(low, high))
    width = high - low
    return list(zip(np.where(low >= 0, 0.0, low - width / 2), high + width / 2))


def tables(with_adult=False):
    found = {
        "iris": load_iris().data,
        "wine": load_wine().data,
        "diabetes": load_diabetes(scaled=False).data,
        "breast cancer": load_breast_cancer().data,
    }
    result = {name: (X, codebook_bounds(X)) for name, X in found.items()}
    if with_adult:
        result["adult"] = (load_adult().data.to_numpy(dtype=float), ADULT_CODEBOOK)
    return result


def _clipped(X, bounds):
    low, high = np.array(bounds, dtype=float).T
    return np.clip(X, low, high)


def _sin_first(v, u):
    cosine = min(1.0, abs(float(np.dot(v, u))))
    return math.sqrt(1.0 - cosine**2)


def _sin_theta(V, U):
    return math.sqrt(max(0.0, V.shape[0] - float(np.sum((V @ U.T) ** 2))))


def _searches(ledger):
    return sum("quantile" in entry["mechanism"] for entry in ledger)


def part_one():
    print(f"Part 1: DPPCA at eps = {EPS:g}, with {_kind()} bounds against without "
          f"(medians over {len(SEEDS)} seeds)")
    header = (f"{'table':<14}{'PVE err none':>13}{'PVE err box':>12}{'ratio':>7}"
              f"{'dir err none':>13}{'dir err box':>12}{'ratio':>7}"
              f"{'searches none':>14}{'box':>5}")
    print(header)
    for name, (X, bounds) in tables().items():
        reference = PCA(n_components=2).fit(_clipped(X, bounds))
        results = {}
        for label, box in (("none", None), ("box", bounds)):
            pve, direction, searches = [], [], []
            for seed in SEEDS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit = DPPCA(eps=EPS, bounds=box, random_state=seed).fit(X)
                pve.append(abs(fit.explained_variance_ratio_[0]
                               - reference.explained_variance_ratio_[0]))
                direction.append(_sin_first(fit.components_[0], reference.components_[0]))
                searches.append(_searches(fit.privacy_ledger_))
            results[label] = (np.median(pve), np.median(direction), np.median(searches))
        none, box = results["none"], results["box"]
        print(f"{name:<14}{none[0]:>13.4f}{box[0]:>12.4f}{_ratio(box[0], none[0]):>7}"
              f"{none[1]:>13.4f}{box[1]:>12.4f}{_ratio(box[1], none[1]):>7}"
              f"{none[2]:>14.0f}{box[2]:>5.0f}")


def _kind():
    return "observed-range" if TIGHT else "codebook"


def _ratio(new, old):
    return f"{new / old:.2f}" if old > 0 else "-"


def part_two():
    radials = ("spherical", "clipped", "covariance")
    print(f"\nPart 2: top-2 sinF of DPKendallDirections with {_kind()} bounds at eps = {EPS:g} "
          f"(medians over {len(SEEDS)} seeds), against PCA of the clipped rows")
    print(f"{'table':<14}" + "".join(f"{radial:>12}" for radial in radials))
    for name, (X, bounds) in tables(with_adult=True).items():
        reference = PCA(n_components=2).fit(_clipped(X, bounds)).components_
        pairs = 64 if X.shape[0] > 20_000 else "all"
        medians = []
        for radial in radials:
            errors = []
            for seed in SEEDS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit = DPKendallDirections(n_components=2, eps=EPS, bounds=bounds,
                                              radial=radial, pairs=pairs,
                                              random_state=seed).fit(X)
                errors.append(_sin_theta(fit.components_, reference))
            medians.append(np.median(errors))
        print(f"{name:<14}" + "".join(f"{value:>12.3f}" for value in medians))


def main():
    global EPS, TIGHT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", type=int, choices=(1, 2))
    parser.add_argument("--eps", type=float, default=EPS)
    parser.add_argument("--tight", action="store_true",
                        help="boxes at the observed ranges (a scale the data fill)")
    args = parser.parse_args()
    EPS, TIGHT = args.eps, args.tight
    if args.part in (None, 1):
        part_one()
    if args.part in (None, 2):
        part_two()


if __name__ == "__main__":
    main()
