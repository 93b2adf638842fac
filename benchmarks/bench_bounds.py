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
    Three fits per seed 0..9 at eps = 1 (delta 1e-5, other parameters default):
    without bounds ("none"), with them ("box": the plan keeps a search it can buy
    and takes the box where it cannot), and with them and
    ``scree_params={"C": "box"}`` ("box only": every scree bound from the box, no
    search). For each: how many fits released a finite PC1 PVE and the median of
    ``|PVE1 - PVE1_PCA|`` over them ("-" when none did: not estimable is not an
    error of 0), the median PC1 direction error ``sin angle(v1, v1_PCA)`` against
    scikit-learn's PCA of the same rows (the bounds hold every row, so clipping
    changes none), how many of the 10 x 2 variances were estimable (finite), and
    the median number of private searches in the ledger (its quantile entries).

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


FITS = {"none": {}, "box": {"bounds": True},
        "box only": {"bounds": True, "scree_params": {"C": "box"}}}


def part_one():
    print(f"Part 1: DPPCA at eps = {EPS:g}, with {_kind()} bounds against without "
          f"({len(SEEDS)} seeds; {' / '.join(FITS)})")
    print(f"{'table':<14}{'PVE1 finite':>14}{'PVE1 err':>26}{'dir err':>26}"
          f"{'variances':>16}{'searches':>12}")
    for name, (X, bounds) in tables().items():
        reference = PCA(n_components=2).fit(_clipped(X, bounds))
        rows = []
        for settings in FITS.values():
            settings = dict(settings, bounds=bounds if settings.get("bounds") else None)
            pve, direction, variances, searches = [], [], 0, []
            for seed in SEEDS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit = DPPCA(eps=EPS, random_state=seed, **settings).fit(X)
                if np.isfinite(fit.explained_variance_ratio_[0]):
                    pve.append(abs(fit.explained_variance_ratio_[0]
                                   - reference.explained_variance_ratio_[0]))
                direction.append(_sin_first(fit.components_[0], reference.components_[0]))
                variances += int(np.isfinite(fit.explained_variance_).sum())
                searches.append(_searches(fit.privacy_ledger_))
            rows.append((str(len(pve)), _median_or_dash(pve), f"{np.median(direction):.4f}",
                         str(variances), f"{np.median(searches):.0f}"))
        columns = [" / ".join(values) for values in zip(*rows)]
        print(f"{name:<14}{columns[0]:>14}{columns[1]:>26}{columns[2]:>26}"
              f"{columns[3]:>16}{columns[4]:>12}")


def _median_or_dash(values):
    return f"{np.median(values):.4f}" if values else "-"


def _kind():
    return "observed-range" if TIGHT else "codebook"


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
