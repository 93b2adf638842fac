"""Signal per eps: DPPCA on gau and the private eigenvalues, against fixed references.

Each measure is a median over seeds, printed next to a fixed reference value
("today", as quoted in the accounting issue) and the ratio median / reference, so
a change in the accounting shows as a ratio.

Part a, default ``DPPCA`` on ``gau``
    Data: ``make_gaussian_clusters(random_state=0)``, the R package's ``gau``
    (5 groups x 1000 rows, 20 columns), fitted without its groups (the measures
    ignore them). ``DPPCA(eps=0.5, delta=1e-5, compute_nonprivate=True,
    random_state=seed)``, otherwise defaults, seeds 0..19. Per fit:

    ``direction``
        ``||sin Theta||_F`` between the span of ``components_[:2]`` and the top-2
        eigenvectors of the exact (non-private, all pairs) spherical Kendall
        matrix of the same X.
    ``variance``
        ``max_l |explained_variance_[l] / (v_l' S v_l) - 1|``, l = 1, 2, with
        ``v_l`` the released directions and S the sample covariance (ddof = 1):
        the private variances against the exact ones along the same directions.
    ``histogram``
        ``sum |score_histogram_ - nonprivate_.score_histogram|``, the L1 distance
        between the private and the exact normalised score histograms on the
        released grid; fits without a frame (``frame_ is None``) are skipped and
        counted.

Part b, private eigenvalues
    Data: as ``spectrum_data`` of ``bench_scree.py`` (Gaussian, covariance
    eigenvalues 10, 5, 2, 1 x 7, p = 10, random basis, +50 shift), n in
    {2000, 20000}, seeds 0..9 (data seed = fit seed). ``DPScree(n_components=3,
    eps=1)`` and ``DPPCA(n_components=3, eps=1)``, delta = 1e-5, otherwise
    defaults. Per fit the worst relative error of the top three private variances
    against the TRUE eigenvalues, ``max_l |explained_variance_[l] / lambda_l - 1|``;
    the table adds the issue's target and the share of fits that released
    ``lambda_3`` as 0.

Extra estimator parameters: ``--set name=value`` (repeatable; the value is read
with ``ast.literal_eval``, else kept as a string) goes to every estimator built
that has the parameter, e.g. ``--set accounting=basic --set sensitivity=standard``;
a name no estimator here takes is an error. The package's UserWarnings
(PrivacyUtilityWarning included) are silenced during the fits and counted.

Usage: ``python benchmarks/bench_signal_per_eps.py [--quick] [--part a|b|all]
[--set name=value ...]`` with the package installed (or ``PYTHONPATH=.``).
``--quick``: 5 seeds for a, 3 seeds and n = 2000 only for b. The full run takes
minutes: DPPCA with all pairs is O(n^2 p) at n = 20000.
"""

import argparse
import ast
import time
import warnings
from collections import Counter

import numpy as np

from bench_scree import SPECTRUM, spectrum_data  # the same data as the scree benchmark
from sklearn_dppca import DPPCA, DPScree
from sklearn_dppca._kendall import spherical_kendall
from sklearn_dppca.datasets import make_gaussian_clusters

# Medians quoted as "today" in the accounting issue; the ratios are against these.
REFERENCE_A = {"direction": 0.709, "variance": 0.331, "histogram": 1.134}
REFERENCE_B = {("DPScree", 2000): 0.78, ("DPScree", 20000): 0.08,
               ("DPPCA", 2000): 1.00, ("DPPCA", 20000): 0.20}
TARGET_B = {("DPScree", 2000): 0.53, ("DPScree", 20000): 0.05,
            ("DPPCA", 2000): 0.8, ("DPPCA", 20000): 0.10}
ESTIMATORS = {"DPScree": DPScree, "DPPCA": DPPCA}


# ------------------------------------------------------------ parameters, warnings
def parse_settings(items):
    """``["name=value", ...]`` -> dict; values as Python literals when they parse."""
    settings = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"--set expects name=value, got {item!r}")
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            value = text.strip()   # bare words such as basic or gdp
        settings[name.strip()] = value
    return settings


def accepted_settings(settings):
    """Per estimator, the settings it takes (estimators may differ during a refactor).

    A name no estimator takes is most likely a typo, so it stops the run.
    """
    per_estimator = {}
    for label, cls in ESTIMATORS.items():
        known = cls().get_params()
        per_estimator[label] = {k: v for k, v in settings.items() if k in known}
    unused = set(settings) - {k for taken in per_estimator.values() for k in taken}
    if unused:
        raise SystemExit(f"--set: neither {' nor '.join(ESTIMATORS)} takes "
                         f"{', '.join(sorted(unused))}")
    return per_estimator


def quiet_fit(estimator, X, counts):
    """Fit with the package's UserWarnings silenced, adding them to ``counts``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X)
    for warning in caught:
        if issubclass(warning.category, UserWarning):
            counts[warning.category.__name__] += 1
        else:   # not ours to hide (e.g. numerical RuntimeWarnings)
            warnings.warn_explicit(warning.message, warning.category,
                                   warning.filename, warning.lineno)
    return estimator


# -------------------------------------------------------------------------- part a
def sin_theta_f(U, V):
    """``||sin Theta||_F`` between the spans of the orthonormal columns of U and V."""
    overlap = np.linalg.norm(U.T @ V) ** 2
    return float(np.sqrt(max(U.shape[1] - overlap, 0.0)))   # clip rounding below 0


def gau_measures(fitted, X, kendall_top2, covariance):
    """(direction, variance, histogram or None) errors of one DPPCA fit on X."""
    V = fitted.components_[:2].T
    direction = sin_theta_f(kendall_top2, V)
    exact = np.einsum("ij,ik,kj->j", V, covariance, V)   # v' S v per direction
    variance = float(np.max(np.abs(fitted.explained_variance_[:2] / exact - 1)))
    histogram = None
    if fitted.frame_ is not None:
        histogram = float(np.abs(fitted.score_histogram_
                                 - fitted.nonprivate_.score_histogram).sum())
    return direction, variance, histogram


def part_a(seeds, settings, counts):
    X = make_gaussian_clusters(random_state=0)
    eigenvalues, eigenvectors = np.linalg.eigh(spherical_kendall(X))
    kendall_top2 = eigenvectors[:, np.argsort(eigenvalues)[::-1][:2]]
    covariance = np.cov(X, rowvar=False)
    rows = []
    for seed in seeds:
        fitted = quiet_fit(DPPCA(eps=0.5, delta=1e-5, compute_nonprivate=True,
                                 random_state=seed, **settings), X, counts)
        rows.append(gau_measures(fitted, X, kendall_top2, covariance))
    print(f"\n== a: default DPPCA on gau ({X.shape[0]} x {X.shape[1]}, no groups), "
          f"eps = 0.5, delta = 1e-5, {len(seeds)} seeds")
    print_header(target=False)
    for index, name in enumerate(REFERENCE_A):
        values = np.array([row[index] for row in rows if row[index] is not None])
        print_row(name, values, REFERENCE_A[name])
    skipped = sum(row[2] is None for row in rows)
    print(f"  histogram: {skipped} of {len(rows)} fits skipped (frame_ is None)")


# -------------------------------------------------------------------------- part b
def eigenvalue_errors(label, n, seeds, settings, counts):
    """Worst top-3 relative errors against the true eigenvalues, and lambda_3 == 0."""
    errors, zeros = [], []
    for seed in seeds:
        estimator = ESTIMATORS[label](n_components=3, eps=1.0, delta=1e-5,
                                      random_state=seed, **settings)
        released = quiet_fit(estimator, spectrum_data(n, seed), counts)
        released = released.explained_variance_
        errors.append(np.max(np.abs(released[:3] / SPECTRUM[:3] - 1)))
        zeros.append(released[2] == 0)
    return np.array(errors), float(np.mean(zeros))


def part_b(sizes, seeds, settings, counts):
    print(f"\n== b: worst top-3 relative error vs (10, 5, 2), p = {SPECTRUM.size}, "
          f"shift +50, eps = 1, delta = 1e-5, k = 3, {len(seeds)} seeds")
    print_header(target=True)
    for n in sizes:
        for label in ESTIMATORS:
            start = time.perf_counter()
            errors, zero_share = eigenvalue_errors(label, n, seeds, settings[label],
                                                   counts)
            print_row(f"{label} n={n}", errors, REFERENCE_B[label, n],
                      TARGET_B[label, n],
                      f"{zero_share:9.2f} {time.perf_counter() - start:7.0f}")


# ---------------------------------------------------------------------------- table
def print_header(target):
    extra = f" {'target':>7s} {'lam3 = 0':>9s} {'wall s':>7s}" if target else ""
    header = (f"  {'measure':17s} {'median':>7s} {'(25% - 75%)':>17s} {'today':>7s} "
              f"{'ratio':>6s}{extra}")
    print(header)
    print("  " + "-" * (len(header) - 2))


def print_row(name, values, reference, target=None, tail=""):
    if values.size == 0:
        print(f"  {name:17s} {'n/a':>7s}")
        return
    median = float(np.median(values))
    low, high = np.quantile(values, [0.25, 0.75])
    target_text = "" if target is None else f" {f'<= {target:g}':>7s} {tail}"
    print(f"  {name:17s} {median:7.3f} {f'({low:.3f} - {high:.3f})':>17s} "
          f"{reference:7.3f} {median / reference:6.2f}{target_text}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="5 seeds for a; 3 seeds and n = 2000 only for b")
    parser.add_argument("--part", choices=("a", "b", "all"), default="all")
    parser.add_argument("--set", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="extra estimator parameter")
    args = parser.parse_args()
    settings = accepted_settings(parse_settings(args.settings))
    for label, taken in settings.items():
        print(f"{label} extra parameters: {taken or 'none'}")
    counts = Counter()
    start = time.perf_counter()
    if args.part in ("a", "all"):
        part_a(range(5 if args.quick else 20), settings["DPPCA"], counts)
    if args.part in ("b", "all"):
        part_b((2000,) if args.quick else (2000, 20000), range(3 if args.quick else 10),
               settings, counts)
    print(f"\nwarnings silenced: {dict(counts) or 'none'}")
    print(f"wall time: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
