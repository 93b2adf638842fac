"""Fit time and peak memory of the private fits against scikit-learn's PCA, on
one thread, and the utility of DPPCA's default pair design beside all pairs.

What is timed
    ``DPPCA``, ``DPScree`` and ``DPKendallDirections`` with their defaults
    (``n_components=2, eps=1, delta=1e-5, random_state=seed, n_jobs=None``;
    DPPCA's ``pairs="auto"``: all pairs up to 2,000 rows, 64 partners per row
    above, the design used printed from ``pairs_``), and the reference,
    ``sklearn.decomposition.PCA(n_components=2)`` with its defaults. Every
    time is CPU time (``time.process_time``) of one ``fit(X)``, the four
    methods timed in this one process, interleaved (repeat r runs the four in
    turn, starting one further along each repeat), best of 7 repeats at n =
    20,000, of 3 at 200,000 and of 2 at 2,000,000, after an untimed warm-up
    fit of each on 5,000 rows. Times are printed in seconds and as ratios to
    scikit-learn's. Warnings of the private fits (PrivacyUtilityWarning etc.)
    are silenced.

One thread
    OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS are set to "1"
    in ``os.environ`` at the top of this file, before NumPy is imported (so
    before BLAS starts its thread pool), for this process and every child
    process (they inherit the environment); the BLAS thread counts
    ``threadpoolctl`` sees are printed in the header. Ours run with
    ``n_jobs=None``.

Data
    Gaussian rows, ``rng.standard_normal((n, p)) * np.linspace(3, 0.5, p)``
    rotated by a fixed random orthogonal matrix (the Q of the QR factorisation
    of a standard normal p x p matrix, ``default_rng(1000 + p)``, signs fixed),
    data seed 0: a public, non-spherical covariance with mean 0. Grid: n in
    {20,000, 200,000, 2,000,000} x p in {10, 50}.

Peers (benchmark-only tools, not dependencies; a peer that does not import is
named in a notice and its columns are left out)
    OpenDP   ``opendp.extras.sklearn.decomposition.PCA`` (``pip install opendp
             randomgen``), pure eps = 1 (no delta), features "contrib",
             "honest-but-curious" and "idealized-numerics" enabled (it asks
             for all three). It takes one Euclidean ``row_norm``:
             the public bound R = 2 sqrt(trace Sigma) = 2 sqrt(sum of the
             squared sd scales above) (the mean row norm is about
             sqrt(trace Sigma)), and the rows, centred at 0 by design, are
             clipped to norm R before the fit (outside the timed span; the few
             rows beyond R are counted in the header). It spends part of eps
             on a private mean of its own.
    diffprivlib  ``diffprivlib.models.PCA`` (``pip install diffprivlib``),
             ``epsilon=1, data_norm=R, centered=False, bounds=(-R, R)`` (every
             coordinate of a clipped row lies in [-R, R]; it spends part of
             eps on the mean), the same clipped rows.
    Peers' samplers can be slow, so each peer fit runs in a fresh child
    process that builds its own copy of the data, and is stopped after
    ``--peer-timeout`` seconds (60) of wall-clock time counted from the start
    of the fit: "t/o". OpenDP's eigenvector sampler is a rejection sampler fed
    by the OS, so its time varies a lot from fit to fit (3 to over 60 s at
    20,000 x 10 here) and does not fall as n grows: a peer that timed out at
    two sizes for a p is not run at the larger n of that p ("skip"). A peer's
    CPU time is ``time.process_time`` around its one fit in its child.

Peak memory
    Each of ours and scikit-learn's also runs once more in a fresh child
    process (``multiprocessing`` "spawn"; a peer's one fit is measured in its
    own child the same way) that builds the data itself,
    warms the method up on 5,000 rows (not the peers, whose sampler cost does
    not shrink with n), returns freed heap to the OS (glibc ``malloc_trim(0)``,
    best effort), then resets the kernel's peak-RSS mark (``echo 5 >
    /proc/self/clear_refs``) and records the resident set size (VmRSS in
    ``/proc/self/status``) just before the fit. Printed: the peak resident set
    size during the fit (VmHWM after it) minus that, in MB (10^6 bytes), so
    every byte the fit touches, NumPy's, compiled kernels' and BLAS's alike,
    and not X itself (its size is printed beside). Where the mark cannot be
    reset the benchmark falls back to the difference of
    ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` after and before the fit,
    which shows only what rises above the earlier high-water mark (a lower
    bound), and says so.

Targets (the issue "Linear by default: a private fit within 20x of
scikit-learn's PCA"; printed beside the measured values with "met" / "not
met", never asserted)
    DPPCA's fit-time growth from n = 20,000 to 200,000 at most 12x; DPPCA /
    scikit-learn at most 20x at n = 20,000 and at most 15x at n = 200,000 (each
    p); DPPCA under 2 CPU seconds at 2,000,000 x 10.

Utility of the default design beside all pairs
    One table of n = 20,000, p = 10, sd scales ``np.geomspace(4, 0.5, p)`` (so
    the top eigenvalues are well separated: the direction error means
    something; the same rotation and data seed), eps in {1, 4}, delta = 1e-5,
    seeds 0..19 (``--seeds``): ``DPPCA(n_components=2, eps, random_state=seed)``
    with the default ``pairs="auto"`` (64 partners per row here) and with
    ``pairs="all"``. Truth: the eigenvalues and eigenvectors of ``np.cov(X.T)``.
    Direction error: the sine of the angle between ``components_[i]`` and the
    i-th eigenvector; variance error: ``|explained_variance_[i] / lambda_i -
    1|``, i = 1, 2. Each is the mean over the finite (seed, component) values,
    with NaNs (not estimable) counted separately. Printed: both means, the
    ratios auto / all (target: at most 1.1x) and the mean CPU seconds per fit.

Run: ``python benchmarks/bench_fit_time.py`` (about ten minutes on two cores,
most of it the peers and the child processes). ``--quick``: n in {20,000,
200,000}, p = 10, 5 seeds, no peers (under two minutes); ``--no-peers``;
``--seeds N``; ``--peer-timeout S``.
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import importlib  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from importlib import metadata  # noqa: E402

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402

import sklearn_dppca  # noqa: E402
from sklearn_dppca import DPKendallDirections, DPPCA, DPScree  # noqa: E402

K = 2
EPS = 1.0
DELTA = 1e-5
SIZES = (20_000, 200_000, 2_000_000)
QUICK_SIZES = (20_000, 200_000)
FEATURES = (10, 50)
QUICK_FEATURES = (10,)
DATA_SEED = 0
ROTATION_SEED = 1000
FIT_SEED = 0
NORM_FACTOR = 2.0
WARMUP_ROWS = 5_000
READY_TIMEOUT = 900.0

OURS = ("sklearn", "DPPCA", "DPScree", "Kendall")
PEERS = ("OpenDP", "diffprivlib")
PEER_PACKAGES = {"OpenDP": "opendp", "diffprivlib": "diffprivlib"}

UTILITY_N, UTILITY_P = 20_000, 10
UTILITY_EPS = (1.0, 4.0)

GROWTH_TARGET = 12.0
RATIO_TARGETS = {20_000: 20.0, 200_000: 15.0}
ABSOLUTE_SHAPE, ABSOLUTE_TARGET = (2_000_000, 10), 2.0
UTILITY_TARGET = 1.1


def repeats_for(n):
    return 7 if n <= 20_000 else 3 if n <= 200_000 else 2


# ------------------------------------------------------------------- the data


def sd_scales(p, kind="timing"):
    return np.linspace(3.0, 0.5, p) if kind == "timing" else np.geomspace(4.0, 0.5, p)


def rotation(p):
    """A fixed random orthogonal p x p matrix (public)."""
    q, r = np.linalg.qr(np.random.default_rng(ROTATION_SEED + p).standard_normal((p, p)))
    return q * np.sign(np.diag(r))


def make_data(n, p, kind="timing", seed=DATA_SEED):
    """n Gaussian rows, mean 0, covariance Q diag(scales^2) Q^T."""
    X = np.random.default_rng(seed).standard_normal((n, p))
    X *= sd_scales(p, kind)
    return X @ rotation(p).T


def public_row_norm(p):
    """R = 2 sqrt(trace Sigma), from the public design alone."""
    return NORM_FACTOR * math.sqrt(float(np.sum(sd_scales(p) ** 2)))


def clip_rows(X, bound):
    """Scale every row longer than ``bound`` down to it, in place; the count."""
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    beyond = norms > bound
    X[beyond] *= (bound / norms[beyond])[:, None]
    return X, int(beyond.sum())


# ---------------------------------------------------------------- the methods


def make_estimator(method, seed):
    if method == "sklearn":
        return PCA(n_components=K)
    common = dict(n_components=K, eps=EPS, delta=DELTA, random_state=seed, n_jobs=None)
    if method == "DPPCA":
        return DPPCA(**common)
    if method == "DPScree":
        return DPScree(**common)
    if method == "Kendall":
        return DPKendallDirections(**common)
    raise ValueError(method)


def fit_quietly(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X)


def peer_fitter(method, p, seed):
    """Import a peer; a function that fits it on (clipped) rows. Raises when the
    peer does not import."""
    bound = public_row_norm(p)
    if method == "OpenDP":
        import opendp.prelude as dp

        importlib.import_module("randomgen")  # its eigenvector sampler needs it
        dp.enable_features("contrib", "honest-but-curious", "idealized-numerics")
        opendp_pca = dp.sklearn.decomposition.PCA

        def fit(X):
            return opendp_pca(epsilon=EPS, row_norm=bound, n_samples=X.shape[0],
                              n_features=X.shape[1], n_components=K).fit(X)
        return fit
    if method == "diffprivlib":
        from diffprivlib.models import PCA as DiffprivlibPCA

        def fit(X):
            return DiffprivlibPCA(n_components=K, epsilon=EPS, data_norm=bound,
                                  centered=False, bounds=(-bound, bound),
                                  random_state=seed).fit(X)
        return fit
    raise ValueError(method)


def _forget_plans():
    """Empty the package's cache of allocated budget trees, so that each timed
    fit pays for its own accounting, as a first fit does (the cache serves the
    repeated fits of a search; its name is private, so it is looked up)."""
    from sklearn_dppca import _base

    plans = getattr(_base, "_PLANS", None)
    if plans is not None:
        plans.clear()


def time_ours(X, repeats, seed):
    """Best CPU seconds of each of OURS over interleaved repeats; DPPCA's pairs_."""
    best = dict.fromkeys(OURS, math.inf)
    pairs = None
    for repeat in range(repeats):
        shift = repeat % len(OURS)
        for method in OURS[shift:] + OURS[:shift]:
            estimator = make_estimator(method, seed)
            _forget_plans()
            start = time.process_time()
            fit_quietly(estimator, X)
            best[method] = min(best[method], time.process_time() - start)
            if method == "DPPCA":
                pairs = estimator.pairs_
    return best, pairs


# ------------------------------------------------------ child processes, memory


def _status_kb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    raise OSError(f"{field} not in /proc/self/status")


def _release_free_heap():
    """Hand freed heap back to the OS (glibc ``malloc_trim``; best effort), so
    that a fit reusing memory freed earlier still shows in its peak."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class PeakMeter:
    """Peak resident memory of what runs between construction and ``mb()``."""

    def __init__(self):
        _release_free_heap()
        try:
            with open("/proc/self/clear_refs", "w") as refs:
                refs.write("5")  # reset the peak-RSS mark to the current RSS
            self.before = _status_kb("VmRSS:")
            self.exact = True
        except OSError:
            self.before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            self.exact = False

    def mb(self):
        after = (_status_kb("VmHWM:") if self.exact
                 else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        return max(after - self.before, 0) * 1024 / 1e6


def _child(conn, method, n, p, seed):
    """Fit ``method`` once on freshly built data; send (cpu s, peak MB, exact)."""
    warnings.simplefilter("ignore")
    try:
        if method in PEERS:
            fit = peer_fitter(method, p, seed)
        else:
            def fit(X):
                return fit_quietly(make_estimator(method, seed), X)
    except Exception as exc:  # noqa: BLE001  (any failure: the peer is skipped)
        conn.send(("unavailable", f"{type(exc).__name__}: {exc}"))
        return
    if n == 0:  # a probe: the import worked
        conn.send(("ready", metadata.version(PEER_PACKAGES.get(method, "numpy"))))
        return
    X = make_data(n, p)
    try:
        if method in PEERS:
            X, _ = clip_rows(X, public_row_norm(p))
        else:
            fit(X[:WARMUP_ROWS].copy())
    except Exception as exc:  # noqa: BLE001
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", None))
    meter = PeakMeter()
    start = time.process_time()
    try:
        fit(X)
    except Exception as exc:  # noqa: BLE001
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    cpu = time.process_time() - start
    conn.send(("ok", (cpu, meter.mb(), meter.exact)))


def run_child(method, n, p, seed, timeout=None):
    """("ok", (cpu, MB, exact)) / ("t/o", None) / ("error" | "unavailable", text).
    ``timeout`` (wall-clock seconds) counts from the start of the fit."""
    context = multiprocessing.get_context("spawn")
    conn, child_conn = context.Pipe()
    process = context.Process(target=_child, args=(child_conn, method, n, p, seed),
                              daemon=True)
    process.start()
    child_conn.close()
    try:
        if not conn.poll(READY_TIMEOUT):
            return "error", f"not ready within {READY_TIMEOUT:g} s"
        status, detail = conn.recv()
        if status != "ready" or n == 0:
            return status, detail
        if not conn.poll(timeout):
            return "t/o", None
        return conn.recv()
    except EOFError:
        process.join()
        return "error", f"child exited with code {process.exitcode}"
    finally:
        if process.is_alive():
            process.join(5 if timeout is None else 0.5)
        if process.is_alive():
            process.kill()
            process.join()
        conn.close()


# ------------------------------------------------------------ fit time, memory


def run_timing(sizes, features, peers, peer_timeout):
    """{(n, p): {"time": {...}, "mem": {...}, "pairs": ...}} and notes."""
    results, notes = {}, []
    for p in features:
        stopped = {}
        for n in sizes:
            clock = time.perf_counter()
            X = make_data(n, p)
            seconds, pairs = time_ours(X, repeats_for(n), FIT_SEED)
            del X
            cell = {"time": dict(seconds), "mem": {}, "pairs": pairs}
            for method in OURS:
                status, value = run_child(method, n, p, FIT_SEED)
                if status == "ok":
                    cell["mem"][method] = value[1]
                    if not value[2]:
                        notes.append(f"{method} at {n:,} x {p}: peak RSS mark could not "
                                     "be reset; memory is a ru_maxrss lower bound")
                else:
                    cell["mem"][method] = "err"
                    notes.append(f"{method} at {n:,} x {p}, memory child: {status} {value}")
            for peer in peers:
                if len(stopped.get(peer, ())) >= 2:
                    cell["time"][peer] = cell["mem"][peer] = "skip"
                    continue
                status, value = run_child(peer, n, p, FIT_SEED, timeout=peer_timeout)
                if status == "ok":
                    cell["time"][peer], cell["mem"][peer] = value[0], value[1]
                elif status == "t/o":
                    cell["time"][peer] = cell["mem"][peer] = "t/o"
                    stopped.setdefault(peer, []).append(n)
                    notes.append(f"{peer} at {n:,} x {p}: stopped after {peer_timeout:g} s"
                                 + (f"; the second time for p = {p}, so not run at "
                                    "larger n" if len(stopped[peer]) == 2 else ""))
                else:
                    cell["time"][peer] = cell["mem"][peer] = "err"
                    notes.append(f"{peer} at {n:,} x {p}: {status}: {str(value)[:200]}")
            results[n, p] = cell
            print(f"  done n = {n:,}, p = {p} in {time.perf_counter() - clock:.0f} s wall",
                  flush=True)
    return results, notes


def _text(value, fmt):
    return value if isinstance(value, str) else format(value, fmt)


def print_timing(results, columns):
    width = 12
    head = f"{'n':>10} {'p':>3} {'pairs_':>7}" + "".join(f"{c:>{width}}" for c in columns)
    print("\nCPU seconds per fit (one thread; ours and scikit-learn best of "
          "7 / 3 / 2 repeats at n = 2e4 / 2e5 / 2e6, peers one fit)")
    print(head)
    for (n, p), cell in results.items():
        print(f"{n:>10,} {p:>3} {str(cell['pairs']):>7}"
              + "".join(f"{_text(cell['time'][c], '.4f'):>{width}}" for c in columns))

    print("\nCPU time / scikit-learn's PCA")
    print(head)
    for (n, p), cell in results.items():
        reference = cell["time"]["sklearn"]
        line = f"{n:>10,} {p:>3} {str(cell['pairs']):>7}"
        for c in columns:
            value = cell["time"][c]
            text = value if isinstance(value, str) else f"{value / reference:.1f}x"
            line += f"{text:>{width}}"
        print(line)

    print("\nPeak resident memory of one fit above the RSS before it, MB "
          "(fresh child process each)")
    print(f"{'n':>10} {'p':>3} {'X (MB)':>8}" + "".join(f"{c:>{width}}" for c in columns))
    for (n, p), cell in results.items():
        print(f"{n:>10,} {p:>3} {n * p * 8 / 1e6:>8.0f}"
              + "".join(f"{_text(cell['mem'][c], '.1f'):>{width}}" for c in columns))


def _verdict(value, target, at_most=True):
    if not np.isfinite(value):
        return "n/a"
    return "met" if (value <= target if at_most else value < target) else "not met"


def print_targets(results, sizes, features):
    print("\nTargets (issue: 'Linear by default: a private fit within 20x of "
          "scikit-learn's PCA')")
    print(f"{'quantity':<44}{'measured':>10}  {'target':<9}verdict")
    for p in features:
        times = {n: results[n, p]["time"] for n in sizes}
        if 20_000 in times and 200_000 in times:
            growth = times[200_000]["DPPCA"] / times[20_000]["DPPCA"]
            print(f"{f'DPPCA growth n 2e4 -> 2e5, p = {p}':<44}{growth:>9.1f}x  "
                  f"{f'<= {GROWTH_TARGET:g}x':<9}{_verdict(growth, GROWTH_TARGET)}")
        for n, target in RATIO_TARGETS.items():
            if n in times:
                ratio = times[n]["DPPCA"] / times[n]["sklearn"]
                print(f"{f'DPPCA / sklearn at n = {n:,}, p = {p}':<44}{ratio:>9.1f}x  "
                      f"{f'<= {target:g}x':<9}{_verdict(ratio, target)}")
    if ABSOLUTE_SHAPE in results:
        seconds = results[ABSOLUTE_SHAPE]["time"]["DPPCA"]
        label = f"DPPCA CPU s at {ABSOLUTE_SHAPE[0]:,} x {ABSOLUTE_SHAPE[1]}"
        print(f"{label:<44}{seconds:>9.2f}s  {f'< {ABSOLUTE_TARGET:g} s':<9}"
              f"{_verdict(seconds, ABSOLUTE_TARGET, at_most=False)}")


# ----------------------------------------------------------------- utility


def _sines(components, vectors):
    out = []
    for i in range(K):
        u = np.asarray(components[i], dtype=float)
        norm = float(np.linalg.norm(u)) if np.all(np.isfinite(u)) else math.nan
        if not norm > 0:
            out.append(math.nan)
            continue
        cosine = min(1.0, abs(float(u @ vectors[:, i])) / norm)
        out.append(math.sqrt(1.0 - cosine**2))
    return out


def _variance_errors(variances, values):
    variances = np.asarray(variances, dtype=float)[:K]
    return list(np.abs(variances / values[:K] - 1.0))


def _summary(errors):
    errors = np.asarray(errors, dtype=float)
    finite = errors[np.isfinite(errors)]
    return (float(finite.mean()) if finite.size else math.nan,
            int(errors.size - finite.size), int(errors.size))


def run_utility(seeds):
    X = make_data(UTILITY_N, UTILITY_P, kind="utility")
    values, vectors = np.linalg.eigh(np.cov(X.T))
    values, vectors = values[::-1], vectors[:, ::-1]
    print(f"\nUtility: DPPCA(n_components={K}) with pairs='auto' and pairs='all', "
          f"n = {UTILITY_N:,}, p = {UTILITY_P}, sd scales geomspace(4, 0.5), "
          f"{seeds} seeds, delta = {DELTA:g}")
    print("true eigenvalues of np.cov(X.T), top 3: "
          + ", ".join(f"{v:.3f}" for v in values[:3]))
    print(f"{'eps':>4} {'pairs':>6} {'pairs_':>7} {'dir err':>9} {'NaN':>7} "
          f"{'var err':>9} {'NaN':>7} {'CPU s/fit':>10}")
    ratios = []
    for eps in UTILITY_EPS:
        record = {design: {"dir": [], "var": [], "cpu": [], "pairs": None}
                  for design in ("auto", "all")}
        for seed in range(seeds):
            for design in ("auto", "all"):
                estimator = DPPCA(n_components=K, eps=eps, delta=DELTA, pairs=design,
                                  random_state=seed, n_jobs=None)
                start = time.process_time()
                fit_quietly(estimator, X)
                entry = record[design]
                entry["cpu"].append(time.process_time() - start)
                entry["pairs"] = estimator.pairs_
                entry["dir"] += _sines(estimator.components_, vectors)
                entry["var"] += _variance_errors(estimator.explained_variance_, values)
        means = {}
        for design, entry in record.items():
            direction, dir_nan, total = _summary(entry["dir"])
            variance, var_nan, _ = _summary(entry["var"])
            means[design] = (direction, variance)
            print(f"{eps:>4g} {design:>6} {str(entry['pairs']):>7} {direction:>9.4f} "
                  f"{f'{dir_nan}/{total}':>7} {variance:>9.4f} {f'{var_nan}/{total}':>7} "
                  f"{np.mean(entry['cpu']):>10.3f}")
        ratios.append((eps, means["auto"][0] / means["all"][0],
                       means["auto"][1] / means["all"][1]))
    print(f"\nauto / all (target: each at most {UTILITY_TARGET:g}x)")
    print(f"{'eps':>4} {'dir err':>9} {'verdict':<9}{'var err':>9} {'verdict':<9}")
    for eps, direction, variance in ratios:
        print(f"{eps:>4g} {direction:>8.2f}x {_verdict(direction, UTILITY_TARGET):<9}"
              f"{variance:>8.2f}x {_verdict(variance, UTILITY_TARGET):<9}")


# ---------------------------------------------------------------------- main


def _blas_threads():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    pools = [f"{pool.get('internal_api')}={pool.get('num_threads')}"
             for pool in threadpool_info()]
    return ", ".join(pools) or "none found"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="n in {20000, 200000}, p = 10, 5 seeds, no peers")
    parser.add_argument("--no-peers", action="store_true", help="leave the peers out")
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds of the utility part (default 20, 5 with --quick)")
    parser.add_argument("--peer-timeout", type=float, default=60.0,
                        help="wall-clock seconds a peer fit may take (default 60)")
    args = parser.parse_args()
    start = time.perf_counter()

    sizes = QUICK_SIZES if args.quick else SIZES
    features = QUICK_FEATURES if args.quick else FEATURES
    seeds = args.seeds if args.seeds is not None else (5 if args.quick else 20)
    print(f"sklearn_dppca {sklearn_dppca.__version__}, scikit-learn {sklearn.__version__}, "
          f"numpy {np.__version__}; {os.cpu_count()} CPUs; BLAS threads: {_blas_threads()}")
    print(f"Data: N(0, Q diag(s^2) Q^T), s = linspace(3, 0.5, p), fixed rotation Q; "
          f"n in {{{', '.join(f'{n:,}' for n in sizes)}}}, p in {set(features)}; "
          f"eps = {EPS:g}, delta = {DELTA:g} (peers: pure eps)")

    peers = []
    if args.quick or args.no_peers:
        print("Peers: left out (--quick / --no-peers)")
    else:
        for peer in PEERS:
            status, detail = run_child(peer, 0, 10, FIT_SEED)
            if status == "ready":
                peers.append(peer)
                print(f"Peer {peer} {detail}: runs in a child process per fit, "
                      f"timeout {args.peer_timeout:g} s")
            else:
                print(f"NOTICE: peer {peer} does not import ({str(detail)[:300]}); its "
                      f"columns are skipped (pip install {PEER_PACKAGES[peer]})")
        for p in features:
            _, clipped = clip_rows(make_data(SIZES[0], p), public_row_norm(p))
            print(f"  peers' public row_norm at p = {p}: R = 2 sqrt(trace Sigma) = "
                  f"{public_row_norm(p):.3f} ({clipped} of {SIZES[0]:,} rows clipped "
                  "at n = 20,000)")

    # untimed warm-up: lazy imports, first calls into compiled code
    warm = make_data(WARMUP_ROWS, features[0])
    time_ours(warm, 1, FIT_SEED)

    results, notes = run_timing(sizes, features, peers, args.peer_timeout)
    columns = list(OURS) + peers
    print_timing(results, columns)
    for note in notes:
        print(f"  note: {note}")
    print_targets(results, sizes, features)
    run_utility(seeds)
    print(f"\nElapsed: {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
