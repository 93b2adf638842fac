"""Private eigenvalues and PVE side by side with OpenDP's PCA.

Four synthetic rows (p = 10, eigenvalues in a random orthonormal basis):

* (10, 5, 2, 1 x 7), Gaussian, n = 2000 and n = 20000;
* (10, 5, 1 x 8), Gaussian shifted by +50 in every coordinate, n = 2000;
* (10, 5, 2, 1 x 7), multivariate t with 3 degrees of freedom scaled to that
  covariance (elliptical, heavy tails), n = 20000.

Each fit keeps k = 3 components at ``eps = 1`` (``delta = 1e-5`` for ours):
``DPScree(n_components=3)`` and ``DPPCA(n_components=3)`` at their defaults (no
declared bounds), optionally other scree methods (``--methods``). The errors are
the worst of the top-3 relative errors of ``explained_variance_`` against the
true eigenvalues, ``max_l |lambda_hat_l / lambda_l - 1|``, and PC1's PVE error
``|explained_variance_ratio_[0] - lambda_1 / sum(lambda)|``; the tables print
their median over the seeds (NaN, a quantity a fit could not buy, counts as an
error of 1 for eigenvalues and of the true PVE for the PVE, and the number of
such fits is shown).

OpenDP (``opendp.extras.sklearn.decomposition.PCA``, pure ``eps = 1`` per
replaced row, as ours: its own privacy map charges ``2 epsilon`` for one
replaced row, so it is given ``epsilon = eps / 2``; ``--opendp-nominal`` gives
it ``eps``, twice our guarantee, the reading of runs before 2026-12) is a
benchmark-only tool, NOT a dependency of the package: ``pip install opendp
randomgen``; without it its column is skipped. It is given honest bounds and
the benefit of the doubt: ``row_norm`` is the largest Euclidean norm of a row
about the data's mean (no row is clipped), and it is fed the rows minus the
public shift (+50), because its private mean clamps rows to that norm in L1
and, fed the shifted rows, returns eigenvalues off by a factor of ten or more.

On the synthetic rows a first column, "sample PCA", is scikit-learn's PCA of
the same rows without privacy: the error of the sample itself against the true
eigenvalues, which no private release can be expected to beat.

Real tables (``--tables``): adult (``load_adult``), wine, breast cancer, digits
and diabetes, raw columns, eps = 1 (``--eps``), the same errors against the
non-private eigenvalues and PVE of the table's covariance.

Usage: ``python benchmarks/bench_eigen_vs_opendp.py [--quick] [--tables]
[--methods clipped,scaled,kendall]`` with the package installed (the settings
are :data:`SETTINGS`: "clipped" is the default, "clip-only" the clipped scree
without its elliptical combination, "scaled" with ``clip="scaled"``). ``--quick``: 3 seeds.
"""

import argparse
import time
import warnings

import numpy as np

from sklearn_dppca import DPPCA, DPScree

K = 3
EPS = 1.0
SPECTRUM = np.array([10.0, 5.0, 2.0] + [1.0] * 7)
FLAT = np.array([10.0, 5.0] + [1.0] * 8)
SHIFT = 50.0
ROWS = [
    ("(10, 5, 2, 1 x 7), Gaussian, n = 2000", SPECTRUM, "gaussian", 2000, 0.0),
    ("(10, 5, 2, 1 x 7), Gaussian, n = 20000", SPECTRUM, "gaussian", 20000, 0.0),
    ("(10, 5, 1 x 8), Gaussian + 50, n = 2000", FLAT, "gaussian", 2000, SHIFT),
    ("(10, 5, 2, 1 x 7), t(3), n = 20000", SPECTRUM, "t3", 20000, 0.0),
]


def synthetic(spectrum, law, n, shift, seed):
    """Rows with covariance eigenvalues ``spectrum`` in a random basis, + shift."""
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.normal(size=(spectrum.size, spectrum.size)))
    rows = rng.normal(size=(n, spectrum.size)) * np.sqrt(spectrum)
    if law == "t3":
        # multivariate t(3): covariance 3 / (3 - 2) times the scatter
        rows /= np.sqrt(rng.chisquare(3, size=(n, 1)) / 3) * np.sqrt(3.0)
    return rows @ rotation.T + shift


def errors(variances, ratio, truth, truth_pve):
    """Worst top-3 relative error and PC1's PVE error (NaN: unbought)."""
    worst = np.max(np.abs(np.asarray(variances[:K]) / truth[:K] - 1))
    pve = abs(ratio[0] - truth_pve)
    return (1.0 if not np.isfinite(worst) else worst,
            truth_pve if not np.isfinite(pve) else pve,
            not (np.isfinite(worst) and np.isfinite(pve)))


#: The scree settings of ours the columns may show: (method, its params).
SETTINGS = {
    "clipped": ("clipped", None),                           # the default
    "clip-only": ("clipped", {"elliptical": "off"}),       # the clipped alone
    "scaled": ("clipped", {"clip": "scaled"}),
    "scaled-only": ("clipped", {"clip": "scaled", "elliptical": "off"}),
    "kendall": ("kendall", None),
}


def ours(kind, setting, X, seed, eps):
    """One fit of ours with one of :data:`SETTINGS`."""
    method, params = SETTINGS[setting]
    if kind == "DPPCA":
        est = DPPCA(n_components=K, eps=eps, scree_method=method, scree_params=params,
                    random_state=seed)
    else:
        est = DPScree(n_components=K, eps=eps, scree_method=method, scree_params=params,
                      random_state=seed)
    est.fit(X)
    return est.explained_variance_, est.explained_variance_ratio_


def opendp_pca():
    """OpenDP's PCA class, or None when it is not installed."""
    try:
        import opendp.prelude as dp
        dp.enable_features("contrib", "idealized-numerics", "honest-but-curious")
        import randomgen  # noqa: F401  (OpenDP's eigenvector sampler needs it)
    except ImportError:
        return None
    return dp.sklearn.decomposition.PCA


def opendp_fit(PCA, X, shift, eps, nominal=False):
    """OpenDP's fit at our replace-one guarantee: its privacy map charges ``2
    epsilon`` for one replaced row (its input has a fixed size), so it gets
    ``eps / 2`` (``nominal``: ``eps``, twice our guarantee); the map is checked."""
    centred = X - shift
    norm = float(np.linalg.norm(X - X.mean(axis=0), axis=1).max())
    pca = PCA(epsilon=eps if nominal else eps / 2, row_norm=norm, n_samples=X.shape[0],
              n_features=X.shape[1], n_components=K)
    replaced = pca.measurement().map(2)
    if not nominal and replaced > eps * (1 + 1e-9):
        raise RuntimeError(f"OpenDP's loss per replaced row {replaced} > {eps}")
    pca.fit(centred)
    return pca.explained_variance_, pca.explained_variance_ratio_


def sample_pca(X):
    """scikit-learn's PCA of the rows, no privacy: the sampling error's floor."""
    from sklearn.decomposition import PCA

    pca = PCA(n_components=K).fit(X)
    return pca.explained_variance_, pca.explained_variance_ratio_


def columns(methods, with_opendp, with_sample=False):
    cols = [("sample PCA", None)] if with_sample else []
    cols += [("OpenDP", None)] if with_opendp else []
    for method in methods:
        cols += [("DPScree", method), ("DPPCA", method)]
    return cols


def label(col):
    kind, method = col
    return kind if method in (None, "clipped") else f"{kind} {method}"


def measure(cols, datasets, seeds, eps, PCA, nominal=False):
    """Median errors per (dataset, column): {(name, col): (eig, pve, n_nan, s)}."""
    out = {}
    for name, make, truth, truth_pve, shift in datasets:
        cells = {col: [] for col in cols}
        for seed in seeds:
            X = make(seed)
            for col in cols:
                start = time.perf_counter()
                if col[0] == "sample PCA":
                    values = sample_pca(X)
                elif col[0] == "OpenDP":
                    values = opendp_fit(PCA, X, shift, eps, nominal)
                else:
                    values = ours(col[0], col[1], X, seed, eps)
                cells[col].append(errors(*values, truth(X), truth_pve(X))
                                  + (time.perf_counter() - start,))
        for col in cols:
            eig, pve, nan, seconds = np.array(cells[col], dtype=float).T
            out[name, col] = (np.median(eig), np.median(pve), int(nan.sum()),
                              np.median(seconds))
        print_row(name, cols, out)
    return out


def print_header(title, cols):
    print(title)
    print(f"{'data':42s} " + " ".join(f"{label(c):>16s}" for c in cols))


def print_row(name, cols, out):
    eig = " ".join(f"{out[name, c][0]:9.3f}" + (f" ({out[name, c][2]} NaN)"
                                               if out[name, c][2] else " " * 7)
                   for c in cols)
    pve = " ".join(f"{out[name, c][1]:9.4f}" + " " * 7 for c in cols)
    print(f"{name:42s} {eig}\n{'   PC1 PVE error':42s} {pve}", flush=True)


def synthetic_sets():
    sets = []
    for name, spectrum, law, n, shift in ROWS:
        sets.append((name,
                     lambda seed, s=spectrum, l=law, n=n, sh=shift: synthetic(s, l, n, sh, seed),
                     lambda X, s=spectrum: s, lambda X, s=spectrum: s[0] / s.sum(), shift))
    return sets


def table_sets():
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine
    from sklearn_dppca.datasets import load_adult

    tables = {"adult": np.asarray(load_adult().data, dtype=float),
              "wine": load_wine().data, "breast cancer": load_breast_cancer().data,
              "digits": load_digits().data, "diabetes": load_diabetes().data}
    sets = []
    for name, X in tables.items():
        eigenvalues = np.linalg.eigvalsh(np.cov(X.T))[::-1]
        sets.append((f"{name} ({X.shape[0]} x {X.shape[1]})", lambda seed, X=X: X,
                     lambda X, e=eigenvalues: e, lambda X, e=eigenvalues: e[0] / e.sum(),
                     0.0))
    return sets


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds")
    parser.add_argument("--seeds", type=int, default=10,
                        help="seeds (10; OpenDP draws from its own generator, so "
                             "more seeds steady its median)")
    parser.add_argument("--tables", action="store_true", help="the real tables only")
    parser.add_argument("--methods", default="clipped",
                        help="settings of ours (SETTINGS), comma separated, or none "
                             "(default clipped)")
    parser.add_argument("--eps", type=float, default=EPS)
    parser.add_argument("--no-opendp", action="store_true")
    parser.add_argument("--opendp-nominal", action="store_true",
                        help="give OpenDP epsilon = eps (twice our guarantee)")
    parser.add_argument("--rows", default=None,
                        help="synthetic rows to run, comma separated (0-3; default all)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    seeds = range(3 if args.quick else args.seeds)
    PCA = None if args.no_opendp else opendp_pca()
    if PCA is None and not args.no_opendp:
        print("OpenDP is not installed (pip install opendp randomgen): its column "
              "is skipped.")
    methods = [] if args.methods == "none" else args.methods.split(",")
    # on the synthetic rows, scikit-learn's PCA of the same rows (no privacy)
    # shows the sampling error every private method inherits
    cols = columns(methods, PCA is not None, with_sample=not args.tables)
    title = (f"eps = {args.eps:g}, k = {K}, {len(seeds)} seeds: median worst top-3 "
             "relative eigenvalue error, then PC1's PVE error")
    print_header(title, cols)
    sets = table_sets() if args.tables else synthetic_sets()
    if args.rows is not None and not args.tables:
        sets = [sets[int(row)] for row in args.rows.split(",")]
    measure(cols, sets, seeds, args.eps, PCA, args.opendp_nominal)


if __name__ == "__main__":
    main()
