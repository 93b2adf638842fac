"""Accuracy and time cost of snapping (on by default): DPPCA with and without it on
the same seeds (wine, breast cancer, adult; doc/floating_point.rst). Usage:
``python benchmarks/bench_snapping.py [n_seeds]``."""
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_wine, load_breast_cancer
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler
from sklearn_dppca import DPPCA
from sklearn_dppca.datasets import load_adult
from sklearn_dppca.privacy import snapping

def sinf(U, V):
    k = U.shape[0]
    return float(np.sqrt(max(k - np.sum((U @ V.T) ** 2), 0.0)))

def data():
    yield "wine", load_wine().data
    yield "breast cancer", load_breast_cancer().data
    X, _ = load_adult(return_X_y=True)
    X = np.asarray(X.select_dtypes("number") if hasattr(X, "select_dtypes") else X, float)
    yield "adult", X

warnings.simplefilter("ignore")
n_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
for name, X in data():
    X = StandardScaler().fit_transform(X)
    ref = PCA(2).fit(X)
    rows = {True: [], False: []}
    times = {True: 0.0, False: 0.0}
    for seed in range(n_seeds):
        for on in (False, True):
            t0 = time.perf_counter()
            with snapping(on):
                est = DPPCA(2, eps=1.0, random_state=seed).fit(X)
            times[on] += time.perf_counter() - t0
            scree = np.linalg.norm(est.explained_variance_ - ref.explained_variance_) / \
                np.linalg.norm(ref.explained_variance_)
            rows[on].append((sinf(est.components_, ref.components_), scree))
    off, on = np.array(rows[False]), np.array(rows[True])
    print(f"{name} (n={X.shape[0]}, p={X.shape[1]}): sinF off {off[:,0].mean():.4f} on "
          f"{on[:,0].mean():.4f} ratio {on[:,0].mean()/off[:,0].mean():.4f}; scree rel err "
          f"off {off[:,1].mean():.4f} on {on[:,1].mean():.4f} ratio "
          f"{on[:,1].mean()/off[:,1].mean():.4f}; max |sinF on - off| "
          f"{np.max(np.abs(on[:,0]-off[:,0])):.2e}; time ratio "
          f"{times[True]/times[False]:.3f} ({times[False]/n_seeds:.3f}s/fit off)")
