"""DPPCA end to end: scale (time, memory, slopes), pairs=64 against all pairs, and
the tables of ``doc/benchmarks.rst``.

Sections (``--sections``, default all):

``scale``
    n = 1e6, p = 20, ``pairs=64``: wall and CPU seconds of ``DPPCA().fit`` and its
    peak memory, each in a fresh subprocess: tracemalloc's peak (NumPy buffers
    included) and the peak RSS (``ru_maxrss``, and ``VmHWM`` of the process image),
    against the same process without the fit (the data alone). Targets: < 60 s,
    < 2 GiB.
``slopes``
    The fitted slope of log(CPU seconds) on log(n) of the fit with ``pairs="all"``
    and with ``pairs=64`` (p = 10, one job).
``pairs``
    ``pairs=64`` against all pairs at n = 1e5, p = 10, Gaussian with covariance
    diag(10, 5, 1, ..., 1), eps = 1, 20 seeds: the top-2 subspace error
    ``||sin Theta||_F`` (mean and its Monte Carlo standard error) and the speed
    ratio of the fits and of the Kendall kernels alone (target >= 50x).
``table``
    Stage times (directions, scree, score summary; at DPPCA's ``verbose`` stages) of
    ``DPPCA(n_components=2)`` for the run-time table: 5000 x 20 and 20000 x 20
    with all pairs, 100000 x 20 and Adult (32561 x 5, the packaged table or ``--adult``)
    with ``pairs=64``.
``gau``
    Accuracy on the built-in ``gau`` data (5000 x 20): median over 20 noise seeds
    of the largest principal angle between the private and the ordinary top-2
    subspaces, and of the worst relative error of the top-3 private variances
    against the ordinary PCA eigenvalues, for several eps / noise / sensitivity.
``cli``
    Wall time of ``python -m sklearn_dppca`` (figure and JSON written to a
    temporary folder) on ``gau`` and on Adult.

Usage: ``python benchmarks/bench_dppca.py [--quick] [--sections scale,table]
[--n-jobs J] [--adult PATH]`` with the package installed (or ``PYTHONPATH=.``).
``--quick`` shrinks every size and seed count. Other processes on the machine add
noise to wall times; CPU seconds of one-job fits are steadier.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np

from bench_kendall_estimand import read_adult  # the same Adult columns
from sklearn_dppca import DPPCA
from sklearn_dppca._kendall import spherical_kendall
from sklearn_dppca.datasets import make_gaussian_clusters

#: No path: the Adult table the package ships (sklearn_dppca.datasets.load_adult).
ADULT = None


# ------------------------------------------------------------------------ helpers
def gaussian(n, p, seed, spectrum=(10.0, 5.0)):
    """Gaussian rows with covariance diag(spectrum, 1, ..., 1)."""
    scales = np.ones(p)
    scales[:len(spectrum)] = np.sqrt(spectrum)
    return np.random.default_rng(seed).standard_normal((n, p)) * scales


def timed_fit(X, repeat=1, **params):
    """(best CPU seconds, best wall seconds, fitted estimator) of DPPCA(**params)."""
    cpu, wall = np.inf, np.inf
    for _ in range(repeat):
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            estimator = DPPCA(**params).fit(X)
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start_wall)
    return cpu, wall, estimator


def sin_theta(components, k=2):
    """``||sin Theta||_F`` between the top-k rows of ``components`` and e_1..e_k."""
    V = np.asarray(components)[:k].T
    return float(np.linalg.norm(V[k:]))


def fitted_slope(sizes, seconds):
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


# -------------------------------------------------------------------------- scale
MEMORY_SCRIPT = textwrap.dedent("""
    import resource, sys, time, tracemalloc, warnings
    import numpy as np
    from sklearn_dppca import DPPCA

    def vm_hwm():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0

    n, p, pairs, mode, n_jobs = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                 sys.argv[4], None if sys.argv[5] == "None" else
                                 int(sys.argv[5]))
    scales = np.ones(p)
    scales[:2] = np.sqrt([10.0, 5.0])
    X = np.random.default_rng(0).standard_normal((n, p)) * scales
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        DPPCA(pairs=pairs, random_state=1).fit(X[:2000])  # imports, caches
        if mode == "trace":
            tracemalloc.start()
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        if mode != "idle":
            DPPCA(pairs=pairs, random_state=0, n_jobs=n_jobs).fit(X)
        cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
    traced = tracemalloc.get_traced_memory()[1] if mode == "trace" else 0
    print(wall, cpu, traced, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
          vm_hwm())
""")


def fit_in_subprocess(n, p, pairs, mode, n_jobs):
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_SCRIPT, str(n), str(p), str(pairs), mode,
         str(n_jobs)],
        capture_output=True, text=True, check=True, env=dict(os.environ))
    wall, cpu, traced, maxrss, hwm = out.stdout.split()
    return float(wall), float(cpu), int(traced), int(maxrss), int(hwm)


def section_scale(args):
    n_big, p_big, m = (200_000, 20, 64) if args.quick else (1_000_000, 20, 64)
    print(f"\n== DPPCA().fit at n={n_big}, p={p_big}, pairs={m} (fresh subprocesses, "
          f"n_jobs={args.n_jobs})")
    wall, cpu, _, maxrss, hwm = fit_in_subprocess(n_big, p_big, m, "time", args.n_jobs)
    _, _, traced, _, _ = fit_in_subprocess(n_big, p_big, m, "trace", args.n_jobs)
    _, _, _, idle_maxrss, idle_hwm = fit_in_subprocess(n_big, p_big, m, "idle",
                                                       args.n_jobs)
    print(f"  time: {wall:.2f} s wall, {cpu:.2f} s CPU (target < 60 s)")
    print(f"  peak memory: ru_maxrss {maxrss / 2**30:.3f} GiB, VmHWM {hwm / 2**30:.3f} "
          f"GiB (target < 2 GiB); without the fit {idle_maxrss / 2**30:.3f} / "
          f"{idle_hwm / 2**30:.3f} GiB (the data: {n_big * p_big * 8 / 2**30:.3f} "
          f"GiB); tracemalloc peak during the fit {traced / 2**20:.0f} MiB")


def section_slopes(args):
    p, m = 10, 64
    # All pairs: above about n = 28500 (eps = 1, two components) the default scree
    # clips per component (O(n log n)); below it, it clips in norm over all pairs (a
    # second O(n^2) pass, in k dimensions), so a grid across that switch would bend
    # the slope. The private total variance is an O(n^2 p) pass at every n.
    all_sizes = [1000, 2000, 4000, 8000] if args.quick else \
        [40_000, 56_000, 80_000, 113_000]
    design_sizes = [10_000, 30_000, 100_000] if args.quick else \
        [10_000, 30_000, 100_000, 300_000, 1_000_000]
    print(f"\n== time against n, p={p}, n_jobs={args.n_jobs}: DPPCA().fit and the "
          f"Kendall kernel alone (best CPU s of {args.repeat}; 1 above n = 1e5)")
    slopes = {}
    for label, pairs, sizes in (("all", "all", all_sizes), (f"{m}", m, design_sizes)):
        fits, kernels = [], []
        for n in sizes:
            X = gaussian(n, p, seed=n)
            repeat = args.repeat if n <= 100_000 else 1
            cpu, wall, _ = timed_fit(X, repeat, pairs=pairs, random_state=0,
                                     n_jobs=args.n_jobs)
            kernel = min(_cpu(lambda: spherical_kendall(X, pairs=pairs, random_state=0,
                                                        n_jobs=args.n_jobs))
                         for _ in range(repeat))
            fits.append(cpu)
            kernels.append(kernel)
            print(f"  pairs={label:>3s} n={n:8d}: fit {cpu:8.3f} CPU s ({wall:.3f} wall "
                  f"s), kernel {kernel:8.3f} CPU s", flush=True)
        slopes[label] = (fitted_slope(sizes, fits), fitted_slope(sizes, kernels))
    print("  fitted slopes of log t on log n (fit; kernel alone):")
    for label, (fit, kernel) in slopes.items():
        print(f"    pairs={label}: {fit:.2f}; {kernel:.2f}")


def section_pairs(args):
    p, m = 10, 64
    n, n_seeds = (20_000, 5) if args.quick else (100_000, 20)
    print(f"\n== pairs={m} against all pairs: n={n}, p={p}, diag(10, 5, 1, ...), "
          f"eps=1, {n_seeds} seeds, n_jobs={args.n_jobs}")
    errors = {"all": [], m: []}
    seconds = {"all": [], m: []}
    for seed in range(n_seeds):
        X = gaussian(n, p, seed=1000 + seed)
        for pairs in ("all", m):
            cpu, wall, fitted = timed_fit(X, 1, n_components=2, eps=1.0, pairs=pairs,
                                          random_state=seed, n_jobs=args.n_jobs)
            errors[pairs].append(sin_theta(fitted.components_))
            seconds[pairs].append(cpu)
        print(f"  seed {seed:2d}: sin-theta all {errors['all'][-1]:.4f}, "
              f"pairs={m} {errors[m][-1]:.4f}; CPU s {seconds['all'][-1]:.2f} / "
              f"{seconds[m][-1]:.3f}", flush=True)
    for pairs in ("all", m):
        values = np.array(errors[pairs])
        print(f"  pairs={pairs}: ||sin Theta||_F mean {values.mean():.4f} +- "
              f"{values.std(ddof=1) / np.sqrt(len(values)):.4f} (MC s.e.), "
              f"CPU s per fit {np.median(seconds[pairs]):.3f}")
    X = gaussian(n, p, seed=1000)
    kernel_all = _cpu(lambda: spherical_kendall(X, n_jobs=args.n_jobs))
    kernel_m = min(_cpu(lambda: spherical_kendall(X, pairs=m, random_state=0,
                                                  n_jobs=args.n_jobs))
                   for _ in range(3))
    fit_ratio = np.median(seconds["all"]) / np.median(seconds[m])
    print(f"  speed ratio (target >= 50x): DPPCA fit {fit_ratio:.0f}x (median CPU s), "
          f"Kendall kernel alone {kernel_all / kernel_m:.0f}x ({kernel_all:.2f} s / "
          f"{kernel_m:.4f} s)")


def _cpu(function):
    start = time.process_time()
    function()
    return time.process_time() - start


# -------------------------------------------------------------------------- table
class _StageTimedDPPCA(DPPCA):
    """DPPCA that records the time of each ``verbose`` stage line at full precision
    (the printed lines round to 0.1 s)."""

    def _progress(self, message, start):
        self._stage_marks.append((message, time.perf_counter() - start))


def stage_times(X, **params):
    """Wall seconds of the directions, the scree and the score summary, and the total."""
    estimator = _StageTimedDPPCA(**params)
    estimator._stage_marks = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        estimator.fit(X)
    total = time.perf_counter() - start
    marks = dict(estimator._stage_marks)
    directions = marks["directions released"]
    scree = marks["variances released"] - directions
    scores = marks["score summary released"] - marks["variances released"]
    return directions, scree, scores, total


def _has_adult(args):
    return args.adult is None or Path(args.adult).exists()


def section_table(args):
    print(f"\n== run-time table: DPPCA(n_components=2) wall s by stage, "
          f"n_jobs={args.n_jobs} (best total of {args.repeat})")
    rows = [("gaussian", 5000, 20, "all"), ("gaussian", 20000, 20, "all"),
            ("gaussian", 100_000, 20, 64)]
    if args.quick:
        rows = [("gaussian", 2000, 20, "all"), ("gaussian", 20000, 20, 64)]
    if _has_adult(args):
        rows.append(("adult", None, None, 64))
    print(f"  {'data':10s} {'n':>7s} {'p':>3s} {'pairs':>5s} {'directions':>10s} "
          f"{'scree':>7s} {'scores':>7s} {'total':>7s}")
    for name, n, p, pairs in rows:
        X = read_adult(args.adult) if name == "adult" else gaussian(n, p, seed=0)
        best = min((stage_times(X, n_components=2, pairs=pairs, random_state=0,
                                n_jobs=args.n_jobs) for _ in range(args.repeat)),
                   key=lambda times: times[-1])
        print(f"  {name:10s} {X.shape[0]:7d} {X.shape[1]:3d} {pairs!s:>5s} "
              + " ".join(f"{value:{width}.2f}" for value, width in
                         zip(best, (10, 7, 7, 7))), flush=True)


# ---------------------------------------------------------------------------- gau
def largest_angle_degrees(A, B):
    """Largest principal angle between the row spaces of A and B (orthonormal rows)."""
    cosines = np.linalg.svd(A @ B.T, compute_uv=False)
    return float(np.degrees(np.arccos(np.clip(cosines.min(), -1.0, 1.0))))


def section_gau(args):
    X = make_gaussian_clusters(random_state=0)
    covariance = np.cov(X, rowvar=False)
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)
    order = np.argsort(eigenvalues)[::-1]
    eigenvalues, eigenvectors = eigenvalues[order], eigenvectors[:, order]
    ordinary = eigenvectors[:, :2].T
    n_seeds = 5 if args.quick else 20
    print(f"\n== accuracy on gau ({X.shape[0]} x {X.shape[1]}), DPPCA(n_components=3), "
          f"median over {n_seeds} seeds")
    print(f"  {'eps':>4s} {'accounting':>10s} {'noise':>9s} {'sensitivity':>11s} "
          f"{'angle (deg)':>11s} {'variance error':>14s}")
    # the defaults (gdp, tight) and the calibration before exact composition
    for eps, accounting, noise, sensitivity in ((0.5, "gdp", "analytic", "tight"),
                                                (1.0, "gdp", "analytic", "tight"),
                                                (1.0, "basic", "analytic", "standard"),
                                                (1.0, "basic", "classical", "standard"),
                                                (2.0, "gdp", "analytic", "tight")):
        angles, errors = [], []
        for seed in range(n_seeds):
            _, _, fitted = timed_fit(X, 1, n_components=3, eps=eps, noise=noise,
                                     sensitivity=sensitivity, accounting=accounting,
                                     random_state=seed, n_jobs=args.n_jobs)
            angles.append(largest_angle_degrees(fitted.components_[:2], ordinary))
            errors.append(np.max(np.abs(fitted.explained_variance_[:3]
                                        / eigenvalues[:3] - 1)))
        print(f"  {eps:4.1f} {accounting:>10s} {noise:>9s} {sensitivity:>11s} "
              f"{np.median(angles):11.1f} {np.median(errors):14.3f}", flush=True)


# ---------------------------------------------------------------------------- cli
def section_cli(args):
    print("\n== command line, wall s (figure and JSON to a temporary folder)")
    runs = [("gau", [])]
    if _has_adult(args):
        runs.append(("adult", ["--data", "adult"] if args.adult is None
                     else [str(args.adult)]))
    with tempfile.TemporaryDirectory() as folder:
        for name, data in runs:
            command = [sys.executable, "-m", "sklearn_dppca", *data, "--seed", "0",
                       "--out", str(Path(folder) / f"{name}.png"),
                       "--json", str(Path(folder) / f"{name}.json"), "--quiet"]
            seconds = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run(command, check=True, capture_output=True,
                               env=dict(os.environ, MPLBACKEND="Agg"))
                seconds.append(time.perf_counter() - start)
            print(f"  {name:6s} python -m sklearn_dppca {' '.join(data)}: "
                  f"{min(seconds):.2f} s (best of {args.repeat}, interpreter start "
                  f"included)", flush=True)


SECTIONS = {"scale": section_scale, "slopes": section_slopes, "pairs": section_pairs,
            "table": section_table, "gau": section_gau, "cli": section_cli}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer seeds")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated subset of {','.join(SECTIONS)}")
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=None,
                        help="timings per measure (best kept); default 3, quick 1")
    parser.add_argument("--adult", default=ADULT,
                        help="CSV of the Adult data (5 numeric columns; default: the "
                             "packaged table)")
    args = parser.parse_args()
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    print(f"cores: {os.cpu_count()}, numpy {np.__version__}, python "
          f"{sys.version.split()[0]}")
    for name in args.sections.split(","):
        SECTIONS[name.strip()](args)


if __name__ == "__main__":
    main()
