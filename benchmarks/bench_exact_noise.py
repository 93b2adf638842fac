"""The exact noise against a textbook floating-point version, side by side.

The package draws every release's noise exactly (a statistic rounded to a public
grid plus discrete Gaussian or Laplace noise from the generator's bits; the
quantile searches on integer exponentials). The textbook version written here
adds NumPy's floating-point Gaussian, Laplace and exponential noise to the same
statistics: it is patched in for this benchmark only (the package has no float
sampler). Both run the same fits, interleaved, 40 seeds each, ``eps = 1``,
``n_components = 2``, on Gaussian data (20,000 x 10) and on adult's numeric
columns (standardised by their sample sds before the benchmark: the same table
for both).

Printed per table: the median ``||sin Theta||_F`` of the directions to the
non-private PCA's, the median relative error of the printed variances, how many
fits printed both, and the median CPU time of a fit, with the ratios exact /
float. Run: ``python benchmarks/bench_exact_noise.py [--seeds 200]``.
"""

import contextlib
import time
import warnings

import numpy as np
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from sklearn_dppca import DPPCA
from sklearn_dppca._algorithms import _kendall_spectrum, _scores
from sklearn_dppca.datasets import load_adult
from sklearn_dppca.privacy import _mechanisms, _quantiles

SEEDS = range(40)


def _float_gaussian(values, sensitivity, mu, rng):
    values = np.asarray(values, dtype=float)
    sd = sensitivity / mu
    facts = dict(noise_scale=sd, grid=0.0, values=max(values.size, 1), mu=mu)
    return values + sd * rng.standard_normal(values.shape), facts


def _float_laplace(values, sensitivity, eps, rng):
    values = np.asarray(values, dtype=float)
    return values + rng.laplace(0.0, sensitivity / eps, values.shape), sensitivity / eps, 0.0


def _float_search(counts, n, q, eps, rng):
    target = q * n + rng.exponential(2.0 / eps)
    crossed = np.flatnonzero(counts + rng.exponential(2.0 / eps, counts.size) >= target)
    return int(crossed[0]) if crossed.size else None


@contextlib.contextmanager
def textbook_float_noise():
    """The textbook floating-point samplers in place of the exact ones."""
    saved = [(_mechanisms, "gaussian_release"), (_mechanisms, "laplace_release"),
             (_quantiles, "_count_search"), (_kendall_spectrum, "standard_normal"),
             (_scores, "standard_normal")]
    originals = [getattr(module, name) for module, name in saved]
    _mechanisms.gaussian_release = _float_gaussian
    _mechanisms.laplace_release = _float_laplace
    _quantiles._count_search = _float_search
    normal = lambda size, rng: rng.standard_normal(size)   # noqa: E731
    _kendall_spectrum.standard_normal = normal
    _scores.standard_normal = normal
    try:
        yield
    finally:
        for (module, name), original in zip(saved, originals):
            setattr(module, name, original)


def _tables():
    rng = np.random.default_rng(0)
    gau = rng.standard_normal((20_000, 10)) * np.linspace(3.0, 0.5, 10)
    adult = load_adult(return_X_y=True)[0]
    adult = np.asarray(adult.select_dtypes("number"), dtype=float)
    return {"gau (20000, 10)": gau, "adult (32561, 5)": StandardScaler().fit_transform(adult)}


def _one_fit(X, seed):
    start = time.process_time()
    fitted = DPPCA(n_components=2, eps=1.0, random_state=seed).fit(X)
    return fitted, time.process_time() - start


def _errors(fitted, reference):
    cosines = np.linalg.svd(reference.components_ @ fitted.components_.T, compute_uv=False)
    sin_theta = np.sqrt(max(0.0, 2.0 - np.sum(cosines**2)))
    variance = np.abs(fitted.explained_variance_ / reference.explained_variance_ - 1)
    return sin_theta, float(np.mean(variance))


def main(seeds=SEEDS):
    warnings.simplefilter("ignore")
    print(f"{'table':18} {'noise':6} {'sin theta':>10} {'var err':>8} {'printed':>8} "
          f"{'cpu s':>7}")
    for name, X in _tables().items():
        reference = PCA(2).fit(X)
        results = {"exact": [], "float": []}
        for seed in seeds:                       # interleaved: the same machine load
            results["exact"].append(_one_fit(X, seed))
            with textbook_float_noise():
                results["float"].append(_one_fit(X, seed))
        summary = {}
        for kind, fits in results.items():
            errors = np.array([_errors(f, reference) for f, _ in fits])
            summary[kind] = (np.median(errors[:, 0]), np.nanmedian(errors[:, 1]),
                             int(np.sum(np.isfinite(errors[:, 1]))),
                             np.median([t for _, t in fits]))
            print(f"{name:18} {kind:6} {summary[kind][0]:10.4f} {summary[kind][1]:8.4f} "
                  f"{summary[kind][2]:8d} {summary[kind][3]:7.3f}")
        ratios = [summary["exact"][i] / summary["float"][i] for i in (0, 1, 3)]
        print(f"{name:18} ratio exact/float: sin theta {ratios[0]:.3f}, "
              f"variance error {ratios[1]:.3f}, cpu {ratios[2]:.2f}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=len(SEEDS),
                        help="fits per table and noise (40; 200 resolve 5%% in the "
                             "error ratios)")
    main(range(parser.parse_args().seeds))
