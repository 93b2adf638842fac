"""What the spherical Kendall directions estimate on real tables, without any noise.

For each table the exact spherical Kendall matrix (all pairs, no privacy noise) and
the sample covariance matrix are computed, on the raw columns and on the columns
divided by their sample standard deviation (the correlation PCA). The script prints
how far the leading Kendall eigenvectors lie from the leading covariance
eigenvectors:

``sin1``
    sine of the angle between the top-1 directions;
``sin2``
    sine of the largest principal angle between the top-2 subspaces;
``sinF2``
    ``||sin Theta||_F`` between the top-2 subspaces;
``|cos|``
    ``|v_l . w_l|`` for the first and the second direction separately (a second
    direction can swap with the third while the top-2 subspace stays put);
``PVE``
    the shares of the first three covariance eigenvalues in the trace: when they
    are close, the covariance directions themselves are poorly determined, and any
    other estimator of them can turn within the near-tie;
``lead``
    the column with the largest absolute loading in the first covariance direction
    and in the first Kendall direction.

A Gaussian control (elliptical, columns on very different scales) shows the size of
the sampling gap alone: there both matrices share their eigenvectors.

Tables: the UCI Adult extract (five numeric columns: the package's own
:func:`sklearn_dppca.datasets.load_adult`, or a CSV given as ``--adult PATH``), and scikit-learn's bundled digits (constant pixels kept as they are:
they add nothing to either matrix, and are left undivided in the scaled version,
as :class:`sklearn.preprocessing.StandardScaler` does), wine and breast cancer.

Usage: ``python benchmarks/bench_kendall_estimand.py [--adult PATH] [--rst]`` with
the package installed (or ``PYTHONPATH=.``). ``--rst`` prints the table as the
reST list-table of ``doc/user_guide.rst``. Takes about half a minute (Adult has
32,561 rows: 530 million pairs).
"""

import argparse
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine

from sklearn_dppca import spherical_kendall

#: No path: the Adult table the package ships (sklearn_dppca.datasets.load_adult).
ADULT = None
ADULT_COLUMNS = ["age", "education_num", "capital_gain", "capital_loss",
                 "hours_per_week"]


def read_adult(path):
    """The five numeric Adult columns as a float array: the packaged table for
    ``path=None``, else the CSV at ``path`` (None if it is absent)."""
    if path is None:
        from sklearn_dppca.datasets import load_adult

        return load_adult().data[ADULT_COLUMNS].to_numpy(dtype=np.float64)
    path = Path(path)
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as handle:
        header = [name.strip().strip('"') for name in handle.readline().split(",")]
    X = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    order = [header.index(name) for name in ADULT_COLUMNS]
    return X[:, order]


def gaussian_control(n=5000, seed=0):
    """Gaussian rows, correlated, on column scales from 1e-2 to 1e3."""
    rng = np.random.default_rng(seed)
    p = 6
    rotation, _ = np.linalg.qr(rng.normal(size=(p, p)))
    spectrum = np.array([6.0, 3.0, 1.5, 1.0, 0.5, 0.25])
    Z = rng.standard_normal((n, p)) * np.sqrt(spectrum) @ rotation.T
    units = np.array([1e-2, 1.0, 10.0, 1.0, 1e3, 0.1])
    return Z * units, [f"x{j}" for j in range(p)]


def tables(adult_path):
    adult = read_adult(adult_path)
    if adult is None:
        print(f"(Adult skipped: {adult_path} not found)")
    else:
        yield "Adult", adult, ADULT_COLUMNS
    X, names = gaussian_control()
    yield "Gaussian control", X, names
    for name, loader in (("digits", load_digits), ("wine", load_wine),
                         ("breast cancer", load_breast_cancer)):
        bunch = loader()
        yield name, np.asarray(bunch.data, dtype=np.float64), list(bunch.feature_names)


def leading_vectors(M, k):
    """The top-k eigenvectors of the symmetric matrix ``M``, as columns."""
    values, vectors = np.linalg.eigh(M)
    return vectors[:, np.argsort(values)[::-1][:k]]


def standardise(X):
    """Columns divided by their sample sd (constant columns left as they are)."""
    sd = X.std(axis=0, ddof=1)
    return X / np.where(sd > 0, sd, 1.0)


def gaps(X, names):
    """The comparison of the top-2 Kendall and covariance eigenvectors of ``X``."""
    C = np.cov(X, rowvar=False)
    V = leading_vectors(C, 2)
    eigenvalues = np.sort(np.linalg.eigvalsh(C))[::-1]
    W = leading_vectors(spherical_kendall(X), 2)
    cosines = np.abs(np.sum(V * W, axis=0))
    outside = W - V @ (V.T @ W)          # the part of span(W) outside span(V)
    singular = np.linalg.svd(outside, compute_uv=False)
    return {
        "sin1": float(np.sqrt(max(0.0, 1.0 - cosines[0] ** 2))),
        "sin2": float(singular.max()),
        "sinF2": float(np.linalg.norm(singular)),
        "cos1": float(cosines[0]),
        "cos2": float(cosines[1]),
        "pve": eigenvalues[:3] / eigenvalues.sum(),
        "lead_cov": names[int(np.argmax(np.abs(V[:, 0])))],
        "lead_kendall": names[int(np.argmax(np.abs(W[:, 0])))],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adult", default=ADULT,
                        help="a CSV of Adult (default: the packaged table)")
    parser.add_argument("--rst", action="store_true", help="print a reST list-table")
    args = parser.parse_args()

    rows = []
    for name, X, names in tables(args.adult):
        for columns, data in (("raw", X), ("scaled", standardise(X))):
            rows.append((name, X.shape, columns, gaps(data, names)))

    header = (f"{'data':<16} {'n x p':>10} {'columns':<7} {'PVE (cov)':<16} "
              f"{'sin1':>7} {'sin2':>7} "
              f"{'sinF2':>7} {'|cos1|':>7} {'|cos2|':>7}  lead (cov / Kendall)")
    print(header)
    print("-" * len(header))
    for name, shape, columns, g in rows:
        pve = " ".join(f"{share:.2f}" for share in g["pve"])
        print(f"{name:<16} {shape[0]:>5} x {shape[1]:<2} {columns:<7} {pve:<16} "
              f"{g['sin1']:7.3f} "
              f"{g['sin2']:7.3f} {g['sinF2']:7.3f} {g['cos1']:7.3f} {g['cos2']:7.3f}  "
              f"{g['lead_cov']} / {g['lead_kendall']}")

    if args.rst:
        print("\n.. list-table::\n   :header-rows: 1\n")
        for cell in ("data", "columns", "covariance PVE 1-3", "sin, top 1", "sin, top 2",
                     "sinF, top 2", "abs cos, 1st", "abs cos, 2nd"):
            print(f"   {'*' if cell == 'data' else ' '} - {cell}")
        for name, shape, columns, g in rows:
            print(f"   * - {name} ({shape[0]} x {shape[1]})")
            print(f"     - {columns}")
            print("     - " + ", ".join(f"{share:.2f}" for share in g["pve"]))
            for key in ("sin1", "sin2", "sinF2", "cos1", "cos2"):
                print(f"     - {g[key]:.2f}")


if __name__ == "__main__":
    main()
