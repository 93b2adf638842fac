"""Time and accuracy of the DP scree methods (``DPScree(method=...)``).

Data: Gaussian rows with covariance eigenvalues (10, 5, 2, 1, ..., 1), p = 10, in a
random orthonormal basis, shifted by +50 in every coordinate (the scree must not
need a centre). Every method runs with its defaults, ``eps = 1``, ``delta = 1e-5``
(40% of it on the private directions, ``directions_share = 0.4``), ``n`` in
{2000, 20000}, 20 seeds.

Accuracy: for each fit, the worst relative error of the top three private
variances against the true eigenvalues (10, 5, 2),
``max_l |explained_variance_[l] / lambda_l - 1|``, l = 1..3; the table gives its
median over the random seeds of the fits (and the 25% and 75% quantiles). Time: the median CPU seconds
of one ``fit`` (directions included; one job).

Usage: ``python benchmarks/bench_scree.py [--quick]`` with the package installed
(or ``PYTHONPATH=.``). ``--quick``: 5 seeds, n in {2000, 5000}.
"""

import argparse
import time

import numpy as np

from sklearn_dppca import DPScree

SPECTRUM = np.array([10.0, 5.0, 2.0] + [1.0] * 7)
METHODS = ("clipped", "huber", "pmwm")
SHIFT = 50.0


def spectrum_data(n, seed, shift=SHIFT, spectrum=SPECTRUM):
    """Gaussian rows, covariance eigenvalues ``spectrum`` in a random basis, + shift.

    The same generator as ``tests/test_scree.py``, so the numbers compare.
    """
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.normal(size=(spectrum.size, spectrum.size)))
    return rng.normal(size=(n, spectrum.size)) * np.sqrt(spectrum) @ rotation.T + shift


def run(method, n, seeds):
    """Worst top-3 relative errors and CPU seconds of one fit, per seed."""
    errors, seconds = [], []
    for seed in seeds:
        X = spectrum_data(n, seed)
        start = time.process_time()
        scree = DPScree(method=method, eps=1.0, delta=1e-5, random_state=seed).fit(X)
        seconds.append(time.process_time() - start)
        errors.append(np.max(np.abs(scree.explained_variance_[:3] / SPECTRUM[:3] - 1)))
    return np.array(errors), np.array(seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 seeds, smaller n")
    args = parser.parse_args()
    sizes = (2000, 5000) if args.quick else (2000, 20000)
    seeds = range(5 if args.quick else 20)

    print(f"p = {SPECTRUM.size}, eigenvalues {SPECTRUM[:4].tolist()} + 1s, shift "
          f"+{SHIFT:g}, eps = 1, delta = 1e-5, defaults, {len(seeds)} seeds")
    header = (f"{'method':8s} {'n':>6s}  {'median worst top-3 rel. error':>29s}  "
              f"{'(25% - 75%)':>21s}  {'CPU s / fit':>11s}")
    print(header)
    print("-" * len(header))
    for n in sizes:
        for method in METHODS:
            errors, seconds = run(method, n, seeds)
            low, high = np.quantile(errors, [0.25, 0.75])
            print(f"{method:8s} {n:6d}  {np.median(errors):29.3g}  "
                  f"{f'({low:.3g} - {high:.3g})':>21s}  {np.median(seconds):11.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
