"""Which PCA: spherical against clipped Kendall directions, and at what radius level.

``DPKendallDirections(radial="clipped")`` replaces each unit pair direction of the
spherical Kendall matrix by ``d d^T / max(||d||^2, c^2)``; ``c`` (``radius="auto"``)
is a private ``radius_level`` quantile of the distances between randomly paired
rows. The higher the level, the closer the estimand is to the covariance (the
directions of :class:`sklearn.decomposition.PCA`), and the less signal each pair
term carries. This script measures that trade-off to choose the default level
(issue 15).

Data
    Real tables, each against scikit-learn's PCA top-2 of the table standardised
    with :class:`~sklearn.preprocessing.StandardScaler` (the correlation PCA):
    the UCI Adult extract (the five numeric columns, 32,561 rows; read from
    the package's own :func:`sklearn_dppca.datasets.load_adult` (or ``--adult PATH``),
    skipped when absent), scikit-learn's breast cancer (569 x 30), digits
    (1797 x 61: the three constant pixels dropped first, everywhere) and wine
    (178 x 13).
    Gaussian: ``spectrum_data`` of ``bench_scree.py`` (covariance eigenvalues 10,
    5, 2, 1 x 7, p = 10, random orthonormal basis, +50 shift; data seed = fit
    seed), n = 2000 and n = 20000, against the TRUE top-2 eigenvectors (the first
    two columns of the generator's rotation). Its columns are left raw
    (``scale=False``): the target is the covariance.

Measure
    ``sinF = ||sin Theta||_F = sqrt(max(0, k - ||U^T V||_F^2))`` between the
    top-k (k = 2) subspaces, U and V orthonormal bases; at most sqrt(2) = 1.41.

Part 1, noise-free gap (no privacy at all)
    The exact estimands on the standardised tables (all pairs, Adult included):
    ``spherical_kendall(Z)`` and ``_pair_scatter(Z, floor=c**2)`` with ``c`` the
    NON-private ``level`` quantile of the distances between randomly paired rows
    (pooled over 20 random matchings, i.e. 10 n distances; the estimator uses one
    matching). sinF of their top-2 eigenvectors to PCA's. Gaussian rows: seed 0,
    standardised (against PCA of the standardised rows) and raw (against the true
    eigenvectors, so the figure includes the sampling error). ``PCA PVE 1-3``:
    the shares of the first three covariance eigenvalues of the rows as used;
    near-equal shares make PCA's own top-2 subspace poorly determined.

Part 2, private error
    Median over seeds 0..9 of sinF for ``DPKendallDirections(n_components=2,
    eps=eps, delta=1e-5, radial=..., radius_level=level, random_state=seed)``,
    other parameters default (``radius="auto"``, ``sensitivity="tight"``,
    ``accounting="gdp"``), eps in {1, 4}, at each level and, where the package
    has it, at ``radius_level="auto"`` (its level from public n and eps; the
    median level its radius search used, read from ``privacy_ledger_``, is
    printed as ``auto level``). Adult (n > 20000) uses ``pairs=64``;
    every other fit uses all pairs. Each real table twice: ``raw`` is the raw
    table with ``scale=True`` (the estimator scales privately, spending
    ``scale_share = 0.2`` of the budget on the spreads), ``std`` the
    StandardScaler output with ``scale=False`` (scaling for free, not private).
    Below each table: the ratio of every clipped cell to the spherical cell of its
    column (< 1: clipped is better). Above it: how many columns ``scale=True``
    left in their own units (its private spreads dominated by noise); where that
    is all of them, the ``raw`` column measures the covariance PCA of the raw
    units against the correlation PCA, not the radial function.

    Then the Gaussian n = 2000 column against the issue's prototype, and again
    with ``radius=c``, the non-private quantile passed as a public number (the
    prototype's setting, NOT private): the gap between the two is the price of
    the private radius (its 20% of the directions' eps and its error).

Part 3, diffprivlib's PCA as a peer (``std`` and Gaussian columns only)
    diffprivlib has no private scaling, so it gets the standardised table (the
    Gaussian rows raw). It needs ``data_norm``, a bound on the row norms after
    centring, and with ``centered=False`` per-column ``bounds`` for its private
    mean. No public bound exists for these tables, so ``data_norm`` is the
    largest row norm of the non-privately centred input: read off the data,
    hence GENEROUS to diffprivlib (a public bound would be larger and its noise
    with it). Two configurations, both pure eps-DP (delta = 0, the same ``eps``):

    ``dpl centred``
        ``centered=True``: the input is centred for free (the StandardScaler has
        done it; the Gaussian rows are centred non-privately), all of eps on the
        covariance (Amin et al. 2019, its ``covariance_eig``). The most generous.
    ``dpl own mean``
        ``centered=False``, ``bounds = (-B, B)`` for every column with B the
        largest row norm of the input as given (implied by a row-norm bound: no
        further look at the data): half of eps on a private mean, the rest on
        the covariance. The most faithful honest use of its API.

    Its ``PrivacyLeakWarning`` is silenced (none is expected: every bound is
    given). Its eigenvector sampler (Bingham, by rejection) can take minutes per
    fit where the signal is strong: a fit is stopped after ``DPL_TIME_LIMIT`` s
    and reported, and a cell gives up after ``DPL_MAX_STALLS`` stopped fits.
    diffprivlib 0.6.6 does not import with scikit-learn >= 1.9 (its random forest
    module imports ``sklearn.tree._tree.DOUBLE``); the script then stubs that one
    module (forests are not used) and says so. Without diffprivlib the rows are
    skipped with a note.

Part 4, cost
    CPU seconds (``time.process_time``, one job, best of 5, the two radial
    functions interleaved so that both see the same machine load) of a fit with
    ``radial="clipped"`` (the estimator's default ``radius_level``) against
    ``radial="spherical"``, eps = 1, on ``spectrum_data`` with n = 20000 (all
    pairs) and n = 100000 (``pairs=64``), p = 10; the ratio clipped / spherical.

Besides, for every clipped fit: ``c ratio``, the median of ``radius_`` over the
non-private quantile at the same level of the data the estimator saw (for
``raw``: divided by its private ``scale_``). Below 1: the private search stopped
early, i.e. at a lower level. The package's warnings are silenced during the fits
and counted.

Usage: ``python benchmarks/bench_which_pca.py [--quick] [--adult PATH]
[--levels L ...] [--seeds S]`` with the package installed (or ``PYTHONPATH=.``).
``--quick``: 3 seeds, no n = 20000 Gaussian, cost at n = 20000 only (about 4
minutes). The full run takes about 9 minutes on one core, much of it in
diffprivlib's stopped fits and the n = 20000 Gaussian.
"""

import argparse
import signal
import sys
import time
import types
import warnings
from collections import Counter, defaultdict

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from bench_kendall_estimand import ADULT, read_adult  # the same Adult columns
from bench_scree import SPECTRUM, spectrum_data  # the same data as the scree benchmark
from sklearn_dppca import DPKendallDirections, spherical_kendall
from sklearn_dppca._kendall import _pair_scatter

LEVELS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
EPSILONS = (1.0, 4.0)
DELTA = 1e-5
K = 2
LARGE_N = 20000          # above it: pairs=64
MATCHINGS = 20           # random matchings pooled for the non-private radius
DPL_TIME_LIMIT = 10.0    # seconds before a diffprivlib fit counts as stalled
DPL_MAX_STALLS = 2       # stalled fits after which a cell's other seeds are skipped
#: The issue's prototype (non-private radius): Gaussian n = 2000, eps = 1.
PROTOTYPE = {"spherical": 0.080, 0.5: 0.087, 0.9: 0.136, 0.97: 0.187}


# ---------------------------------------------------------------- data


def real_tables(adult_path):
    """(name, raw table) with constant columns dropped."""
    adult = read_adult(adult_path)
    if adult is None:
        print(f"(Adult skipped: {adult_path} not found)")
    else:
        yield "adult", adult
    for name, loader in (("breast", load_breast_cancer), ("digits", load_digits),
                         ("wine", load_wine)):
        X = np.asarray(loader().data, dtype=np.float64)
        yield name, X[:, X.std(axis=0) > 0]


def true_directions(seed, p=SPECTRUM.size):
    """The top-2 covariance eigenvectors of ``spectrum_data(n, seed)`` (columns)."""
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.normal(size=(p, p)))
    return rotation[:, :K]


# ---------------------------------------------------------------- measures
def sin_f(U, V):
    """||sin Theta||_F between the spans of the orthonormal columns of U and V."""
    return float(np.sqrt(max(0.0, U.shape[1] - np.linalg.norm(U.T @ V) ** 2)))


def top_vectors(M, k=K):
    values, vectors = np.linalg.eigh(M)
    return vectors[:, np.argsort(values)[::-1][:k]]


def pca_top(X):
    return PCA(n_components=K, svd_solver="full").fit(X).components_.T


def matched_differences(X, matchings=MATCHINGS, seed=12345):
    """Differences of randomly paired rows, pooled over ``matchings`` matchings."""
    rng = np.random.default_rng(seed)
    half = X.shape[0] // 2
    parts = []
    for _ in range(matchings):
        order = rng.permutation(X.shape[0])
        parts.append(X[order[:half]] - X[order[half:2 * half]])
    return np.concatenate(parts)


def radius_at(differences, level, scale=None):
    """Non-private ``level`` quantile of the paired distances (after ``/ scale``)."""
    D = differences if scale is None else differences / scale
    return float(np.sqrt(np.quantile(np.einsum("ij,ij->i", D, D), level)))


# ---------------------------------------------------------------- diffprivlib
def load_diffprivlib():
    """diffprivlib's PCA class and a note, or (None, reason)."""
    try:
        from diffprivlib.models import PCA as DPLPCA
        import diffprivlib
        return DPLPCA, f"diffprivlib {diffprivlib.__version__}"
    except ImportError as error:
        if "sklearn.tree" not in str(error):
            return None, f"diffprivlib not importable ({error})"
        reason = str(error)
    # Its forest module breaks with newer scikit-learn; PCA does not need it.
    for name in [name for name in sys.modules if name.startswith("diffprivlib")]:
        del sys.modules[name]
    stub = types.ModuleType("diffprivlib.models.forest")
    stub.RandomForestClassifier = stub.DecisionTreeClassifier = None
    sys.modules["diffprivlib.models.forest"] = stub
    try:
        from diffprivlib.models import PCA as DPLPCA
        import diffprivlib
    except ImportError as error:
        return None, f"diffprivlib not importable ({error})"
    return DPLPCA, (f"diffprivlib {diffprivlib.__version__} (its forest module "
                    f"stubbed: {reason.split(' (')[0]})")


def diffprivlib_error(DPLPCA, X, reference, eps, seed, config):
    """sinF of diffprivlib's PCA on ``X`` (``config``: centred / own mean)."""
    centred = X - X.mean(axis=0)
    data_norm = float(np.linalg.norm(centred, axis=1).max())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if config == "centred":
            model = DPLPCA(n_components=K, epsilon=eps, data_norm=data_norm,
                           centered=True, random_state=seed).fit(centred.copy())
        else:
            bound = float(np.linalg.norm(X, axis=1).max())
            p = X.shape[1]
            model = DPLPCA(n_components=K, epsilon=eps, data_norm=data_norm,
                           centered=False,
                           bounds=(np.full(p, -bound), np.full(p, bound)),
                           random_state=seed).fit(X.copy())
    return sin_f(model.components_.T, reference)


class _Stalled(Exception):
    pass


def _alarm(signum, frame):
    raise _Stalled


def diffprivlib_cell(DPLPCA, peer, eps, seeds, config):
    """Median sinF of diffprivlib over ``seeds`` and a note on stalled fits.

    A fit stopped after ``DPL_TIME_LIMIT`` s counts as stalled (its sampler is a
    Python loop, so the alarm interrupts it); after ``DPL_MAX_STALLS`` stalls the
    remaining seeds are skipped. Returns (median of the finished fits, or None
    when fewer than half of the seeds finished; note or "").
    """
    errors, stalled, skipped = [], 0, 0
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for seed in seeds:
            if stalled >= DPL_MAX_STALLS:
                skipped += 1
                continue
            X, reference = peer(seed)[:2]
            signal.setitimer(signal.ITIMER_REAL, DPL_TIME_LIMIT)
            try:
                errors.append(diffprivlib_error(DPLPCA, X, reference, eps, seed,
                                                config))
            except _Stalled:
                stalled += 1
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    note = ""
    if stalled:
        note = (f"{len(errors)} finished, {stalled} stopped"
                + (f", {skipped} not tried" if skipped else ""))
    if 2 * len(errors) < len(seeds):
        return None, note
    return float(np.median(errors)), note


# ---------------------------------------------------------------- private fits
def kendall_fits(data, eps, seeds, radial, level, scale, pairs, warned):
    """Median sinF over seeds, the median radius ratio (clipped, else None), the
    mean number of columns ``scale=True`` left in their own units (else None) and
    the median level of the radius search (clipped, else None).

    ``data(seed)`` gives ``(X, reference, differences)``.
    """
    errors, ratios, unscaled, used = [], [], [], []
    for seed in seeds:
        X, reference, differences = data(seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fitted = DPKendallDirections(
                n_components=K, eps=eps, delta=DELTA, radial=radial,
                radius_level=level, scale=scale, pairs=pairs, random_state=seed,
            ).fit(X)
        for warning in caught:
            warned[warning.category.__name__] += 1
        errors.append(sin_f(fitted.components_.T, reference))
        if fitted.scale_ is not None:
            unscaled.append(int(np.sum(fitted.scale_ == 1.0)))
        if radial == "clipped":
            searched = level_searched(fitted)
            used.append(searched)
            ratios.append(fitted.radius_
                          / radius_at(differences, searched, fitted.scale_))
    middle = (lambda values: float(np.median(values)) if values else None)
    return (float(np.median(errors)), middle(ratios),
            float(np.mean(unscaled)) if unscaled else None, middle(used))


def level_searched(fitted):
    """The level of the fit's private radius search (from its ledger)."""
    return next(entry["level"] for entry in fitted.privacy_ledger_
                if entry["step"].endswith("radius"))


def has_auto_level():
    """Whether this version of the package takes ``radius_level="auto"``."""
    try:
        DPKendallDirections(radial="clipped", radius_level="auto")._budget_parts()
    except (TypeError, ValueError):
        return False
    return True


def methods(levels):
    rows = [("spherical", None)] + [("clipped", level) for level in levels]
    return rows + ([("clipped", "auto")] if has_auto_level() else [])


def method_name(radial, level):
    if radial == "spherical":
        return "spherical"
    return f"clipped {level}" if isinstance(level, str) else f"clipped {level:g}"


# ---------------------------------------------------------------- parts
def part_noise_free(tables, levels):
    print("\n== 1. Noise-free gap: sinF(top-2 of the estimand, top-2 of PCA) ==")
    print("(exact matrices, all pairs; c = non-private level quantile of paired "
          "distances)")
    header = f"{'data':<18}{'n x p':>11} {'PCA PVE 1-3':>15}  {'spher':>6}" + "".join(
        f"{f'c {level:g}':>7}" for level in levels)
    print(header)
    print("-" * len(header))
    rows = [(name, StandardScaler().fit_transform(X), None) for name, X in tables]
    gaussian = spectrum_data(2000, 0)
    rows.append(("gaussian std", StandardScaler().fit_transform(gaussian), None))
    rows.append(("gaussian raw/true", gaussian, true_directions(0)))
    for name, Z, truth in rows:
        reference = pca_top(Z) if truth is None else truth
        differences = matched_differences(Z)
        cells = [sin_f(top_vectors(spherical_kendall(Z)), reference)]
        for level in levels:
            c = radius_at(differences, level)
            cells.append(sin_f(top_vectors(_pair_scatter(Z, floor=c * c)), reference))
        shares = np.sort(np.linalg.eigvalsh(np.cov(Z, rowvar=False)))[::-1]
        pve = " ".join(f"{share:.2f}" for share in shares[:3] / shares.sum())
        print(f"{name:<18}{Z.shape[0]:>6} x {Z.shape[1]:<3} {pve:>15} " + "".join(
            f"{cell:7.3f}" for cell in cells), flush=True)


def part_private(tables, levels, seeds, gaussian_sizes, DPLPCA):
    """Tables of median sinF per eps; returns {(eps, column, method): error}."""
    print("\n== 2./3. Private error: median sinF over "
          f"{len(seeds)} seeds (delta = {DELTA:g}; diffprivlib: delta = 0) ==")
    print("raw = raw table + scale=True; std = StandardScaler input, scale=False; "
          "reference: PCA of the standardised table")
    print("gauss N = spectrum_data(N), scale=False, reference: true eigenvectors. "
          f"pairs=64 where n > {LARGE_N} (adult), all pairs elsewhere")
    columns = []       # (label, data(seed), scale, pairs, peer data(seed) or None)
    for name, X in tables:
        Z = StandardScaler().fit_transform(X)
        reference = pca_top(Z)
        pairs = 64 if X.shape[0] > LARGE_N else "all"
        raw = (X, reference, matched_differences(X))
        std = (Z, reference, matched_differences(Z))
        columns.append((f"{name} raw", lambda seed, raw=raw: raw, True, pairs, None))
        columns.append((f"{name} std", lambda seed, std=std: std, False, pairs,
                        lambda seed, std=std: std))
    for n in gaussian_sizes:
        def gaussian(seed, n=n):
            X = spectrum_data(n, seed)
            return X, true_directions(seed), matched_differences(X)
        columns.append((f"gauss {n}", gaussian, False, 64 if n > LARGE_N else "all",
                        gaussian))
    results, radius_ratios, warned, stalls = {}, {}, Counter(), []
    unscaled, auto_levels = defaultdict(list), {}
    rows = methods(levels)
    if DPLPCA is not None:
        rows += [("dpl centred", None), ("dpl own mean", None)]
    for eps in EPSILONS:
        start = time.perf_counter()
        for label, data, scale, pairs, peer in columns:
            for radial, level in methods(levels):
                error, ratio, left, searched = kendall_fits(
                    data, eps, seeds, radial, 0.5 if level is None else level, scale,
                    pairs, warned)
                results[eps, label, method_name(radial, level)] = error
                radius_ratios[eps, label, method_name(radial, level)] = ratio
                if level == "auto":
                    auto_levels[eps, label] = searched
                if left is not None:
                    unscaled[label, data(0)[0].shape[1]].append(left)
            if DPLPCA is not None and peer is not None:
                for config in ("centred", "own mean"):
                    error, stalled = diffprivlib_cell(DPLPCA, peer, eps, seeds, config)
                    results[eps, label, f"dpl {config}"] = error
                    if stalled:
                        stalls.append(f"eps {eps:g} {label} dpl {config}: "
                                      f"{stalled}")
        labels = [column[0] for column in columns]
        print(f"\n-- eps = {eps:g} ({time.perf_counter() - start:.0f} s) --")
        print("scale=True left in own units (mean columns per fit): " + ", ".join(
            f"{label} {np.mean(counts):.1f}/{p}"
            for (label, p), counts in unscaled.items()))
        unscaled.clear()
        print_table(labels, [method_name(r, lv) if r in ("spherical", "clipped") else r
                             for r, lv in rows], lambda m, c: results.get((eps, c, m)))
        print(f"\nratio to spherical (eps = {eps:g}):")
        print_table(labels, [method_name(r, lv) for r, lv in rows if r == "clipped"]
                    + [r for r, _ in rows if r.startswith("dpl")],
                    lambda m, c: _ratio(results.get((eps, c, m)),
                                        results.get((eps, c, "spherical"))))
        print(f"\nc ratio = median radius_ / non-private quantile (eps = {eps:g}):")
        print_table(labels, [method_name(r, lv) for r, lv in rows if r == "clipped"],
                    lambda m, c: radius_ratios.get((eps, c, m)))
        if auto_levels:
            print_table(labels, ["auto level"],
                        lambda m, c: auto_levels.get((eps, c)))
    if stalls:
        print(f"\ndiffprivlib fits stopped after {DPL_TIME_LIMIT:g} s (its Bingham "
              "rejection sampler does not accept); a cell with a stopped fit is the "
              "median of the finished ones, and '-' when fewer than half finished:")
        for line in stalls:
            print("  " + line)
    if warned:
        print("\nwarnings during the fits: " + ", ".join(
            f"{name} x {count}" for name, count in warned.most_common()))
    return results


def _ratio(a, b):
    return None if a is None or b is None else a / b


def print_table(labels, row_names, cell):
    width = max(9, max(len(label) for label in labels) + 1)
    header = f"{'':<14}" + "".join(f"{label:>{width}}" for label in labels)
    print(header)
    print("-" * len(header))
    for row in row_names:
        values = [cell(row, label) for label in labels]
        print(f"{row:<14}" + "".join(
            f"{'-':>{width}}" if value is None else f"{value:{width}.3f}"
            for value in values), flush=True)


def part_prototype(results, levels):
    print("\n-- Gaussian n = 2000, eps = 1 against the issue's prototype "
          "(non-private radius) --")
    for key, reference in PROTOTYPE.items():
        name = "spherical" if key == "spherical" else f"clipped {key:g}"
        ours = results.get((1.0, "gauss 2000", name))
        ours_text = "   (not run)" if ours is None else f"{ours:12.3f}"
        print(f"{name:<14} prototype {reference:.3f}  here{ours_text}")


def part_public_radius(results, levels, seeds, n=2000):
    """The Gaussian column again with the radius given as a public number."""
    print(f"\n-- Gaussian n = {n}: private radius (above) against the NON-private "
          "quantile passed as radius=c (the prototype's setting; all of the "
          "directions' budget on the matrix, so NOT private) --")
    header = f"{'':<14}" + "".join(
        f"{f'eps {eps:g} private':>16}{f'eps {eps:g} given c':>16}" for eps in EPSILONS)
    print(header)
    print("-" * len(header))
    data = [(spectrum_data(n, seed), true_directions(seed)) for seed in seeds]
    cells = {}
    for eps in EPSILONS:
        for level in levels:
            errors = []
            for seed, (X, reference) in zip(seeds, data):
                c = radius_at(matched_differences(X), level)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted = DPKendallDirections(
                        n_components=K, eps=eps, delta=DELTA, radial="clipped",
                        radius=c, random_state=seed).fit(X)
                errors.append(sin_f(fitted.components_.T, reference))
            cells[eps, level] = float(np.median(errors))
    for level in [None] + list(levels):
        name = "spherical" if level is None else f"clipped {level:g}"
        line = f"{name:<14}"
        for eps in EPSILONS:
            private = results.get((eps, f"gauss {n}", name))
            given = private if level is None else cells[eps, level]
            line += "".join("{:>16}".format("-" if v is None else f"{v:.3f}")
                            for v in (private, given))
        print(line, flush=True)


def part_cost(sizes, level, repeats=5):
    print(f"\n== 4. Cost: CPU s of one fit (best of {repeats}, the two interleaved), "
          f"p = 10, eps = 1, clipped at radius_level={level!r} ==")
    header = f"{'n':>7} {'pairs':>6} {'spherical':>10} {'clipped':>10} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for n in sizes:
        X = spectrum_data(n, 0)
        pairs = 64 if n > LARGE_N else "all"
        seconds = {"spherical": np.inf, "clipped": np.inf}
        for repeat in range(repeats):
            for radial in seconds:
                start = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    DPKendallDirections(n_components=K, radial=radial,
                                        radius_level=level, pairs=pairs,
                                        random_state=repeat).fit(X)
                seconds[radial] = min(seconds[radial], time.process_time() - start)
        print(f"{n:7d} {str(pairs):>6} {seconds['spherical']:10.3f} "
              f"{seconds['clipped']:10.3f} "
              f"{seconds['clipped'] / seconds['spherical']:7.2f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 seeds, no n = 20000 Gaussian, cost at n = 20000")
    parser.add_argument("--adult", default=ADULT,
                        help="a CSV of Adult (default: the packaged table)")
    parser.add_argument("--levels", type=float, nargs="+", default=list(LEVELS))
    parser.add_argument("--seeds", type=int, default=None, help="fits per cell")
    args = parser.parse_args()
    seeds = range(args.seeds or (3 if args.quick else 10))
    levels = tuple(args.levels)
    wall = time.perf_counter()

    DPLPCA, note = load_diffprivlib()
    print(f"peer: {note}")
    tables = list(real_tables(args.adult))
    part_noise_free(tables, levels)
    results = part_private(tables, levels, seeds,
                           (2000,) if args.quick else (2000, 20000), DPLPCA)
    part_prototype(results, levels)
    part_public_radius(results, levels, seeds)
    part_cost((20000,) if args.quick else (20000, 100000),
              DPKendallDirections().radius_level)
    print(f"\nwall time {time.perf_counter() - wall:.0f} s")


if __name__ == "__main__":
    main()
