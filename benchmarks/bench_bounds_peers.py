"""Declared boxes side by side: PC1 variance and PVE released by DPPCA, OpenDP's
PCA and Analyze Gauss on small real tables, with and without public bounds.

Data
    scikit-learn's iris (150 x 4), wine (178 x 13), diabetes (442 x 10, raw
    units: ``load_diabetes(scaled=False)``), breast cancer (569 x 30) and digits
    (1797 x 64, several constant and many zero-inflated pixels), and the
    package's Adult numeric columns (``load_adult``; capital gain and loss are
    heavy-tailed and mostly 0), all 32,561 rows; ``--adult-rows 4000`` takes a
    public random subsample instead (``numpy.random.default_rng(0)``, without
    replacement: the size of earlier runs, where the tail count cannot see the
    capital-gain tail). Raw columns throughout, no scaling (except in block 2).

Boxes (public per-column ``(low, high)``)
    "none": no bounds. "codebook": what a codebook might declare, simulated
    from the table: the observed range widened by half its width on each side,
    the low end at 0 for a column whose minimum is >= 0; Adult takes its
    documented ranges instead (age 17-90, education 1-16, capital gain
    0-99,999, capital loss 0-4,356, hours 1-99). "tight": each column's observed
    min and max. The observed ranges are read here, in the benchmark, only to
    simulate these declarations; no method reads bounds off the data. The
    package requires ``low < high``, so a column the table holds constant
    (digits' edge pixels) gets ``(v, v + 1)`` in both boxes, for all three
    methods alike (``--keep-degenerate`` passes ``(v, v)`` as it is; a fit that
    raises counts as a miss and is listed under its table). Every row lies in
    both boxes, so clipping to a box changes no row.

Truth
    The sample covariance of the table's rows (``np.cov``, ddof 1): its top
    eigenvalue lambda_1, PVE1 = lambda_1 / trace and its top eigenvector v_1.

Methods (each at eps in {0.5, 1, 2, 4}; replace-one adjacency for all three)
    ours    ``DPPCA(n_components=3, eps, delta=1e-5, bounds=box,
            random_state=seed)`` (``pairs=64`` on Adult), warnings ignored. It
            reads ``explained_variance_[0]``, ``explained_variance_ratio_[0]``
            and ``components_[0]``; a NaN ("not estimable") is a miss, never an
            error of 0.
    OpenDP  ``opendp.extras.sklearn.decomposition.PCA`` (Amin et al. 2019),
            pure eps, a benchmark-only tool that is not a dependency of the
            package (``pip install opendp randomgen``; its column is skipped
            with a notice when it does not import). Its class takes no box: it
            takes one Euclidean ``row_norm`` and clamps rows to it. With a box
            it is fed the rows minus the box centre and ``row_norm`` = the norm
            of the half-widths (the farthest any point of the box lies from the
            centre); with no box it has no norm to start from and shows "-".
            Its input has a fixed size, so its neighbours differ in one
            replaced row (symmetric distance 2), and its own privacy map says
            that costs ``2 epsilon``: ``PCA(epsilon=0.5, ...).measurement()
            .map(2)`` is 1.0 (OpenDP 0.16; the worker checks the map before
            each fit). So, at the same replace-one guarantee as ours and AG, it gets
            ``epsilon = eps / 2``; ``--opendp-nominal`` gives it ``epsilon =
            eps`` (twice the guarantee: the reading of earlier runs). It
            spends a third of that on a private mean of its own, clamped in L1
            (not L2) norm to ``row_norm``, then a third each on the eigenvalues
            and the eigenvectors, and draws its noise from the OS, so its
            numbers change from run to run whatever the seed. PC1 variance and
            PVE are its ``explained_variance_[0]`` and
            ``explained_variance_ratio_[0]`` (the ratio is over all p released
            eigenvalues). Its eigenvector sampler takes from a fraction of a
            second to minutes per fit (minutes on digits, and at times on wine
            and breast cancer at larger eps), so it runs in a child process: a
            fit past ``--opendp-timeout`` (10 s) is stopped and counts as a miss
            (listed under the table), and once OpenDP has spent
            ``--opendp-budget`` (90 s, start-ups excluded) on a table, its
            cells not yet finished show "t/o" (the boxes run tight first, so
            the cells of the summary go last).
    AG      Analyze Gauss (Dwork, Talwar, Thakurta and Zhang 2014), written
            here, only with a box. With c the box centre, h the half-widths and
            R = ||h||, z = clip(x) - c has ||z|| <= R. Released: the mean of z
            plus N(0, s_m^2 I) (L2 sensitivity 2R / n) with 10% of (eps,
            delta), and z^T z / n plus a symmetric Gaussian matrix (iid on the
            upper triangle and diagonal, mirrored; Frobenius sensitivity
            sqrt(2) R^2 / n) with the other 90% (basic composition). The
            noise sd comes from the analytic Gaussian mechanism (Balle and
            Wang 2018; the package's ``gaussian_noise_scale``, or a scipy
            bisection when that cannot be imported). Covariance = (S - m m^T)
            n / (n - 1); PC1 variance is its top eigenvalue, PVE1 that over its
            trace, direction its top eigenvector. ``numpy.random.default_rng(
            seed)``.

Block 1 (``--main``): one table per eps, rows table x box, per method
    var20   fits whose PC1 variance is finite and within 20% of lambda_1,
            ``|est / lambda_1 - 1| <= 0.2``, out of the seeds;
    pve20   the same for PVE1 against the true PVE1;
    sin     the median sine of the angle between the released PC1 and v_1;
    off     (ours only) finite released top-3 variances
            ``explained_variance_[l]`` outside 0.5x..2x of the table's variance
            along ours' released direction l, ``v_l^T Sigma v_l``, shown as
            off / finite over all the cell's fits.
    Then a summary: per table at eps 1 and 4, whether ours' var20 and pve20
    with the tight box reach the best peer's (OpenDP, AG; those that ran), and
    whether ours with the codebook box reaches ours with none; and the share of
    ours' finite top-3 variances that are "off" over every cell (target <= 2%);
    then, per table and box, ours' printed top-3 variances, totals and PVEs
    more than four of their stated sds from the table's (the clipping's bias,
    which the stated sd does not carry; a PVE in its own sd,
    ``explained_variance_ratio_noise_scale_``);
    and, at every eps run, the cells whose median sine with a box is above 1.05
    times the one without, each with the fits whose budget bought a scree
    (``budget_["scree"]``) with the box and without (a box that buys a scree
    the fit without it does not takes that scree's share from the directions).
    Seeds: 20 on iris, 10 on the others.

Block 2 (``--scale``): ``DPPCA(n_components=3, scale=True)`` at each eps, 10
    seeds, each box. Per table and box: fits whose ``explained_variance_[0]``
    is finite and above 2p (on unit-variance columns no eigenvalue exceeds p),
    fits with some finite ``scale_[j]`` below 1e-6 times column j's sample sd
    (columns with sd 0 skipped), the mean number of NaN entries of
    ``scale_`` per fit (columns left in their unit) and the mean number of
    columns divided by their box's public unit (``scale_origin_ == "box"``).

Block 3 (``--plan``): per table at eps 1 and 4, whether ``DPPCA(n_components=3,
    eps, bounds=tight).plan(n, p)`` differs from the same with the codebook box
    (``DataFrame.equals``).

Block 4 (``--covariance``, not in the default run): the median PC1 direction
    error ``sin`` of ``DPPCA(n_components=3, eps, bounds=box,
    radial="covariance")`` per table, box (tight, codebook) and eps, on the
    seeds of block 1: the noisy covariance about the box's private mean,
    beside OpenDP's and AG's ``sin`` in block 1 (its own noisy covariances).

Block 5 (``--frontier``, not in the default run): per table and eps, with the
    observed ranges, what each share of the grant on the scree buys.
    ``DPPCA(n_components=3, budget_split=...)`` on block 1's random seeds, the
    score summary keeping its default share (given back to the other two in
    proportion where the plan does not buy it) and the scree taking ``s`` of
    the rest (0.3, 0.6, 0.8, 0.95; "plan" is the default split, ``s = 0.46``).
    Per share: var20 and pve20 as in block 1, the median sine, and the median
    of PC1's stated noise sd (``noise_scale_[0]``, printed or not) over
    lambda_1: the precision the scree reaches at that share. Beside the
    default row, Analyze Gauss's var20 and pve20 on the same seeds. It shows
    whether some split would reach the peers' counts, and at what cost to the
    directions.

Run: ``python benchmarks/bench_bounds_peers.py`` (all three blocks; about
eight minutes on one core, half of it OpenDP's, most of that its stopped fits;
the elapsed time is printed at the end). ``--quick``: 3 seeds; ``--seeds N``: N
seeds on every table and in block 2; ``--tables iris,wine`` and ``--eps 1,4``
to subset; ``--main``, ``--scale``, ``--plan``, ``--covariance`` and
``--frontier`` to run only those blocks; ``--no-opendp`` to leave OpenDP out;
``--opendp-timeout`` and ``--opendp-budget`` as above.
"""

import argparse
import math
import multiprocessing
import time
import warnings
from collections import Counter

import numpy as np
from sklearn.datasets import (load_breast_cancer, load_diabetes, load_digits,
                              load_iris, load_wine)

from sklearn_dppca import DPPCA
from sklearn_dppca.datasets import load_adult

K = 3
DELTA = 1e-5
EPS_GRID = (0.5, 1.0, 2.0, 4.0)
SUMMARY_EPS = (1.0, 4.0)
BOXES = ("none", "codebook", "tight")
METHODS = ("ours", "OpenDP", "AG")
TABLE_NAMES = ("iris", "wine", "diabetes", "breast_cancer", "digits", "adult")
ADULT_ROWS, ADULT_SEED = 32_561, 0
ADULT_RANGES = [(17, 90), (1, 16), (0, 99_999), (0, 4_356), (1, 99)]


# ----------------------------------------------------------------- the tables


def _observed_box(X):
    return np.column_stack([X.min(axis=0), X.max(axis=0)]).astype(float)


def _widened_box(X):
    """The simulated codebook: half the observed width added on each side, the
    low end at 0 for a non-negative column."""
    low, high = X.min(axis=0).astype(float), X.max(axis=0).astype(float)
    width = high - low
    return np.column_stack([np.where(low >= 0, 0.0, low - width / 2), high + width / 2])


def _open_up(box):
    """A zero-width range (v, v) becomes (v, v + 1): the package needs low < high."""
    box = box.copy()
    flat = box[:, 1] <= box[:, 0]
    box[flat, 1] = box[flat, 0] + 1.0
    return box


def load_tables(names, keep_degenerate=False, adult_rows=ADULT_ROWS):
    """{name: dict(X, boxes, extra DPPCA kwargs, truth)} for the asked tables."""
    loaders = {
        "iris": lambda: load_iris().data,
        "wine": lambda: load_wine().data,
        "diabetes": lambda: load_diabetes(scaled=False).data,
        "breast_cancer": lambda: load_breast_cancer().data,
        "digits": lambda: load_digits().data,
        "adult": lambda: _adult_rows(adult_rows),
    }
    tables = {}
    for name in names:
        X = np.asarray(loaders[name](), dtype=float)
        codebook = (np.array(ADULT_RANGES, dtype=float) if name == "adult"
                    else _widened_box(X))
        tight = _observed_box(X)
        if not keep_degenerate:
            codebook, tight = _open_up(codebook), _open_up(tight)
        for box in (codebook, tight):
            if np.any(X < box[:, 0]) or np.any(X > box[:, 1]):
                raise RuntimeError(f"{name}: a row lies outside a box")
        sigma = np.cov(X, rowvar=False)
        values, vectors = np.linalg.eigh(sigma)
        tables[name] = {
            "X": X,
            "boxes": {"none": None, "codebook": codebook, "tight": tight},
            "extra": {"pairs": 64} if name == "adult" else {},
            "sigma": sigma,
            "lambda1": values[-1],
            "pve1": values[-1] / values.sum(),
            "trace": float(np.trace(sigma)),
            "v1": vectors[:, -1],
        }
    return tables


def _adult_rows(rows):
    X = load_adult().data.to_numpy(dtype=float)
    if rows >= X.shape[0]:
        return X
    keep = np.random.default_rng(ADULT_SEED).choice(X.shape[0], rows, replace=False)
    return X[np.sort(keep)]


def _as_pairs(box):
    return None if box is None else [(float(lo), float(hi)) for lo, hi in box]


# ---------------------------------------------------------------- the methods


def fit_ours(X, box, eps, seed, extra, **settings):
    """(explained_variance_, explained_variance_ratio_, components_) of DPPCA."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = DPPCA(n_components=K, eps=eps, delta=DELTA, bounds=_as_pairs(box),
                    random_state=seed, **extra, **settings).fit(X)
    return fit


def _noise_sd(sensitivity, eps, delta):
    """Analytic Gaussian mechanism (Balle and Wang 2018)."""
    try:
        from sklearn_dppca.privacy._calibration import gaussian_noise_scale
    except ImportError:
        return _bisected_noise_sd(sensitivity, eps, delta)
    return float(gaussian_noise_scale(sensitivity, eps, delta))


def _bisected_noise_sd(sensitivity, eps, delta):
    from scipy.optimize import brentq
    from scipy.stats import norm

    def surplus(sd):  # the delta a noise sd achieves, minus the target
        a, b = sensitivity / (2 * sd), eps * sd / sensitivity
        return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b) - delta

    high = sensitivity
    while surplus(high) > 0:
        high *= 2
    return brentq(surplus, sensitivity * 1e-6, high, xtol=1e-12 * sensitivity)


def analyze_gauss(X, box, eps, delta, seed):
    """PC1 variance, PVE1 and direction of Analyze Gauss in the box."""
    rng = np.random.default_rng(seed)
    low, high = box[:, 0], box[:, 1]
    n, p = X.shape
    z = np.clip(X, low, high) - (low + high) / 2
    radius_sq = float(np.sum(((high - low) / 2) ** 2))
    sd_mean = _noise_sd(2 * math.sqrt(radius_sq) / n, 0.1 * eps, 0.1 * delta)
    sd_moment = _noise_sd(math.sqrt(2) * radius_sq / n, 0.9 * eps, 0.9 * delta)
    mean = z.mean(axis=0) + rng.normal(0.0, sd_mean, p)
    noise = np.triu(rng.normal(0.0, sd_moment, (p, p)))
    moment = z.T @ z / n + noise + np.triu(noise, 1).T
    covariance = (moment - np.outer(mean, mean)) * n / (n - 1)
    values, vectors = np.linalg.eigh(covariance)
    return values[-1], values[-1] / np.trace(covariance), vectors[:, -1]


def _opendp_worker(conn):
    """Child process: import OpenDP, then fit what the parent sends."""
    warnings.simplefilter("ignore")
    try:
        import opendp.prelude as dp
        import randomgen  # noqa: F401  (OpenDP's eigenvector sampler uses it)

        dp.enable_features("contrib", "honest-but-curious", "idealized-numerics")
        PCA = dp.sklearn.decomposition.PCA
    except Exception as exc:  # noqa: BLE001  (any failure: skip OpenDP)
        conn.send(("unavailable", repr(exc)))
        return
    conn.send(("ready", None))
    while True:
        job = conn.recv()
        if job is None:
            return
        Z, norm, eps, calibrated = job
        try:
            # OpenDP's ``epsilon`` is its loss per added or removed row: one
            # replaced row (symmetric distance 2) costs twice that. Ours and AG
            # are eps-DP under replacement, so OpenDP gets half, unless asked
            # for its nominal reading; its own privacy map is checked.
            asked = eps / 2 if calibrated else eps
            pca = PCA(epsilon=asked, row_norm=norm, n_samples=Z.shape[0],
                      n_features=Z.shape[1], n_components=K)
            replaced = pca.measurement().map(2)
            if calibrated and replaced > eps * (1 + 1e-9):
                raise RuntimeError(f"OpenDP's loss per replaced row {replaced} > {eps}")
            pca.fit(Z)
            conn.send(("ok", (np.asarray(pca.explained_variance_, dtype=float),
                              np.asarray(pca.explained_variance_ratio_, dtype=float),
                              np.asarray(pca.components_, dtype=float))))
        except Exception as exc:  # noqa: BLE001
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class OpenDPRunner:
    """OpenDP's PCA in a child process, so that a fit that runs too long can be
    stopped (the sampler runs in compiled code, out of reach of Python signals)."""

    def __init__(self, nominal=False):
        self.nominal = nominal
        self.context = multiprocessing.get_context("spawn")
        self.process = self.conn = None
        self.available, self.reason = True, None

    def _start(self):
        self.conn, child = self.context.Pipe()
        self.process = self.context.Process(target=_opendp_worker, args=(child,),
                                            daemon=True)
        self.process.start()
        if not self.conn.poll(300):
            self._stop()
            self.available, self.reason = False, "did not start within 300 s"
            return
        status, detail = self.conn.recv()
        if status != "ready":
            self._stop()
            self.available, self.reason = False, detail

    def _stop(self):
        if self.process is not None:
            self.process.kill()
            self.process.join()
        self.process = self.conn = None

    def ensure_started(self):
        if self.available and self.process is None:
            self._start()
        return self.available

    def fit(self, X, box, eps, timeout):
        """("ok", values) / ("error", message) / ("timeout", None)."""
        if not self.ensure_started():
            return "unavailable", self.reason
        low, high = box[:, 0], box[:, 1]
        Z = np.clip(X, low, high) - (low + high) / 2
        self.conn.send((Z, float(np.linalg.norm((high - low) / 2)), float(eps),
                        not self.nominal))
        if not self.conn.poll(max(timeout, 0.0)):
            self._stop()
            return "timeout", None
        return self.conn.recv()

    def close(self):
        if self.process is not None:
            self.conn.send(None)
            self.process.join(5)
            self._stop()


# ---------------------------------------------------------------- the metrics


def _sin(u, v):
    u = np.asarray(u, dtype=float)
    if not np.all(np.isfinite(u)) or not np.linalg.norm(u) > 0:
        return np.nan
    cosine = min(1.0, abs(float(u @ v)) / float(np.linalg.norm(u)))
    return math.sqrt(1.0 - cosine**2)


def _within(estimate, truth, tolerance=0.2):
    return bool(np.isfinite(estimate) and abs(estimate / truth - 1.0) <= tolerance)


class Cell:
    """What one (table, box, eps, method) accumulates over its seeds."""

    def __init__(self):
        self.var = self.pve = self.fits = self.off = self.finite = 0
        # (ours only) printed values more than FAR of their own noise sds from
        # the table's: [variances far, variances printed, totals far, totals
        # printed, PVEs far, PVEs printed, variances more than COVER sds below,
        # variances more than COVER sds above]
        self.far = [0, 0, 0, 0, 0, 0, 0, 0]
        self.sins, self.errors = [], []
        self.scree_bought = 0  # (ours only) fits whose budget bought a scree
        self.status = None  # None, or a mark for every column: "-", "t/o", "n/a"

    def add(self, table, variance, pve, direction):
        self.fits += 1
        self.var += _within(variance, table["lambda1"])
        self.pve += _within(pve, table["pve1"])
        self.sins.append(_sin(direction, table["v1"]))

    def add_miss(self, message):
        self.fits += 1
        self.errors.append(message)

    def add_off(self, table, variances, components):
        for value, direction in zip(np.asarray(variances, dtype=float)[:K], components):
            if not np.isfinite(value):
                continue
            self.finite += 1
            along = float(direction @ table["sigma"] @ direction)
            if not (0.5 * along <= value <= 2.0 * along):  # NaN direction: off
                self.off += 1

    def add_far(self, table, fit):
        """Count ours' printed top-3 variances and total, and those more than
        :data:`FAR` of their stated noise sds from the table's (the variance
        along the released direction, the trace): a clipping bias the sd does
        not carry shows here, not in ``off``."""
        sds = np.broadcast_to(np.asarray(fit.noise_scale_, dtype=float),
                              np.shape(fit.explained_variance_))
        for value, sd, direction in zip(fit.explained_variance_[:K], sds[:K],
                                        fit.components_):
            if np.isfinite(value):
                along = float(direction @ table["sigma"] @ direction)
                self.far[0] += not abs(value - along) <= FAR * sd
                self.far[1] += 1
                self.far[6] += bool(value < along - COVER * sd)
                self.far[7] += bool(value > along + COVER * sd)
        total, sd = float(fit.total_variance_), float(fit.total_variance_noise_scale_)
        if np.isfinite(total):
            self.far[2] += not abs(total - table["trace"]) <= FAR * sd
            self.far[3] += 1
        # each PVE against the table's share along its direction, in its own sd
        share_sds = getattr(fit, "explained_variance_ratio_noise_scale_", None)
        if share_sds is None:
            return
        for ratio, sd, direction in zip(fit.explained_variance_ratio_[:K], share_sds[:K],
                                        fit.components_):
            if np.isfinite(ratio):
                share = float(direction @ table["sigma"] @ direction) / table["trace"]
                self.far[4] += not abs(ratio - share) <= FAR * sd
                self.far[5] += 1

    def median_sin(self):
        finite = [s for s in self.sins if np.isfinite(s)]
        return np.median(finite) if finite else np.nan


# -------------------------------------------------------------- block 1: main


def run_main(tables, eps_list, seeds_for, runner, timeout, budget):
    cells = {}
    for name, table in tables.items():
        X, clock = table["X"], {"spent": 0.0}
        # the tight box first: if OpenDP runs out of time, the cells the
        # summary compares are the last to go
        for box_name in reversed(BOXES):
            box = table["boxes"][box_name]
            for eps in eps_list:
                for method in METHODS:
                    cells[name, box_name, eps, method] = Cell()
                ours, opendp, ag = (cells[name, box_name, eps, m] for m in METHODS)
                if box is None:
                    opendp.status = ag.status = "-"
                elif runner is None:
                    opendp.status = "n/a"
                for seed in range(seeds_for(name)):
                    try:
                        fit = fit_ours(X, box, eps, seed, table["extra"])
                    except Exception as exc:  # noqa: BLE001  (a miss, listed)
                        ours.add_miss(f"{type(exc).__name__}: {exc}")
                    else:
                        ours.add(table, fit.explained_variance_[0],
                                 fit.explained_variance_ratio_[0], fit.components_[0])
                        ours.add_off(table, fit.explained_variance_, fit.components_)
                        ours.add_far(table, fit)
                        ours.scree_bought += fit.budget_["scree"][0] > 0
                    if box is None:
                        continue
                    variance, pve, direction = analyze_gauss(X, box, eps, DELTA, seed)
                    ag.add(table, variance, pve, direction)
                    if opendp.status is None:
                        _opendp_once(runner, opendp, table, box, eps, timeout, budget, clock)
    return cells


def _opendp_once(runner, cell, table, box, eps, timeout, budget, clock):
    """One OpenDP fit: a fit past ``timeout`` is a miss; once the table's
    ``budget`` is spent, the cell is left unfinished ("t/o")."""
    remaining = budget - clock["spent"]
    if remaining <= 0:
        cell.status = "t/o"
        return
    if not runner.ensure_started():
        cell.status = "n/a"
        return
    limit = min(timeout, remaining)
    start = time.perf_counter()
    status, values = runner.fit(table["X"], box, eps, limit)
    clock["spent"] += time.perf_counter() - start
    if status == "ok":
        variances, ratios, components = values
        cell.add(table, variances[0], ratios[0], components[0])
    elif status == "timeout" and limit < timeout:
        cell.status = "t/o"
    elif status == "timeout":
        cell.add_miss(f"stopped after {timeout:g} s")
    else:
        cell.add_miss(values)


def _count(cell, value, seeds):
    return cell.status if cell.status else f"{value}/{seeds}"


def _sin_text(cell):
    if cell.status:
        return cell.status
    value = cell.median_sin()
    return "-" if not np.isfinite(value) else f"{value:.3f}"


def print_main(tables, eps_list, seeds_for, cells):
    groups = [("ours", 32), ("OpenDP", 24), ("AG", 24)]
    for eps in eps_list:
        print(f"\nBlock 1, eps = {eps:g} (delta = {DELTA:g} for ours and AG; OpenDP pure eps)")
        print(f"{'':<24}" + "".join(f"{'| ' + name:<{width}}" for name, width in groups))
        print(f"{'table':<15}{'box':<9}"
              + "".join(f"| {'var20':>6} {'pve20':>6} {'sin':>6} " + ("off".rjust(7) if m == "ours" else "")
                        for m, _ in groups))
        notes = []
        for name in tables:
            seeds = seeds_for(name)
            for box_name in BOXES:
                line = f"{name:<15}{box_name:<9}"
                for method, _ in groups:
                    cell = cells[name, box_name, eps, method]
                    line += (f"| {_count(cell, cell.var, seeds):>6} "
                             f"{_count(cell, cell.pve, seeds):>6} {_sin_text(cell):>6} ")
                    if method == "ours":
                        line += f"{cell.off}/{cell.finite}".rjust(7)
                    for message, count in Counter(cell.errors).items():
                        notes.append(f"  {method} on {name}/{box_name}: {count} fit(s) "
                                     f"missed: {message[:120]}")
                print(line)
        for note in notes:
            print(note)


def print_summary(tables, eps_list, cells):
    print("\nSummary (ours' var20 / pve20 against the best peer with the tight box, "
          "and with the codebook box against no box)")
    print(f"{'table':<15}{'eps':>4}  {'tight var20':<20}{'tight pve20':<20}"
          f"{'codebook var20':<20}{'codebook pve20':<20}")
    for name in tables:
        for eps in (e for e in SUMMARY_EPS if e in eps_list):
            ours = cells[name, "tight", eps, "ours"]
            peers = [cells[name, "tight", eps, m] for m in ("OpenDP", "AG")]
            peers = [cell for cell in peers if cell.status is None]
            boxed, bare = cells[name, "codebook", eps, "ours"], cells[name, "none", eps, "ours"]
            texts = []
            for field in ("var", "pve"):
                best = max((getattr(cell, field) for cell in peers), default=None)
                mine = getattr(ours, field)
                texts.append("no peer" if best is None else
                             f"{'yes' if mine >= best else 'no':<4}({mine} vs {best})")
            for field in ("var", "pve"):
                mine, base = getattr(boxed, field), getattr(bare, field)
                texts.append(f"{'yes' if mine >= base else 'no':<4}({mine} vs {base})")
            print(f"{name:<15}{eps:>4g}  " + "".join(f"{text:<20}" for text in texts))
    off = sum(cell.off for key, cell in cells.items() if key[3] == "ours")
    finite = sum(cell.finite for key, cell in cells.items() if key[3] == "ours")
    share = f"{100 * off / finite:.1f}%" if finite else "-"
    print(f"ours, finite top-3 variances outside 0.5x..2x of the table's variance along "
          f"their direction: {off}/{finite} = {share} (target <= 2%)")
    print_far(tables, cells)
    print_directions(tables, eps_list, cells)


#: How many of its stated noise sds a printed value may lie from the table's
#: before ``print_far`` counts it (Gaussian noise alone: 6 in 100,000).
FAR = 4.0
#: Printed variances more than this many stated sds below or above the
#: table's: an interval of two sds that held would leave about 2.3% out on
#: each side; a bias its sd does not carry shows as one side's excess.
COVER = 2.0


def print_far(tables, cells):
    """Per table and box (all eps), ours' printed top-3 variances and totals more
    than :data:`FAR` noise sds from the table's: the clipping's bias, which the
    stated sd does not carry, against the noise it does."""
    print(f"ours, printed values more than {FAR:g} noise sds from the table's "
          "(variances along their direction, totals against the trace, PVEs "
          "against the share along their direction, each in its own stated sd; "
          f"all eps), and variances more than {COVER:g} sds below or above it:")
    for name in tables:
        for box in BOXES:
            far = np.sum([cell.far for key, cell in cells.items()
                          if key[:2] == (name, box) and key[3] == "ours"], axis=0)
            print(f"  {name:<15}{box:<9} variances {far[0]}/{far[1]}, "
                  f"totals {far[2]}/{far[3]}, PVEs {far[4]}/{far[5]}; "
                  f"{COVER:g} sds: {far[6]} below, {far[7]} above")


#: A box's median sine may exceed no box's by this factor and count as no worse
#: (adult's medians differ in the third decimal from fit to fit of the same
#: directions' budget).
_SINE_SLACK = 1.05


def print_directions(tables, eps_list, cells):
    """Ours' median sine with each box against no box, at every eps run; where
    a box's is larger, how many fits bought a scree with it and without."""
    worse, compared = [], 0
    for name in tables:
        for eps in eps_list:
            bare = cells[name, "none", eps, "ours"]
            for box_name in ("codebook", "tight"):
                boxed = cells[name, box_name, eps, "ours"]
                mine, base = boxed.median_sin(), bare.median_sin()
                if not (np.isfinite(mine) and np.isfinite(base)):
                    continue
                compared += 1
                if mine > _SINE_SLACK * base:
                    worse.append(f"  {name} eps {eps:g} {box_name}: {mine:.3f} against "
                                 f"{base:.3f}; a scree bought in {boxed.scree_bought} of "
                                 f"{boxed.fits} fits with the box, {bare.scree_bought} of "
                                 f"{bare.fits} without")
    print(f"ours, directions with a box no worse than without (median sine at most "
          f"{_SINE_SLACK:g}x no box's): {compared - len(worse)} of {compared} cells")
    for line in worse:
        print(line)


# ------------------------------------------------------------- block 2: scale


def run_scale(tables, eps_list, seeds):
    print(f"\nBlock 2: DPPCA(n_components={K}, scale=True), eps in "
          f"{{{', '.join(f'{e:g}' for e in eps_list)}}}, {seeds} seeds each")
    print(f"{'table':<15}{'box':<9}{'fits':>6}{'EV1 > 2p':>10}{'tiny scale_':>13}"
          f"{'NaN scale_ / fit':>18}{'box unit / fit':>16}{'raised':>8}")
    for name, table in tables.items():
        X = table["X"]
        p = X.shape[1]
        sd = X.std(axis=0, ddof=1)
        for box_name, box in table["boxes"].items():
            fits = large = tiny = nan_columns = box_columns = raised = 0
            for eps in eps_list:
                for seed in range(seeds):
                    fits += 1
                    try:
                        fit = fit_ours(X, box, eps, seed, table["extra"], scale=True)
                    except Exception:  # noqa: BLE001  (counted)
                        raised += 1
                        continue
                    first = fit.explained_variance_[0]
                    large += bool(np.isfinite(first) and first > 2 * p)
                    scale = (np.full(p, np.nan) if fit.scale_ is None
                             else np.asarray(fit.scale_, dtype=float))
                    nan_columns += int(np.isnan(scale).sum())
                    origin = getattr(fit, "scale_origin_", None)
                    box_columns += 0 if origin is None else int(np.sum(origin == "box"))
                    check = np.isfinite(scale) & (sd > 0)
                    tiny += bool(np.any(scale[check] < 1e-6 * sd[check]))
            done = fits - raised
            mean_nan = f"{nan_columns / done:.1f} of {p}" if done else "-"
            mean_box = f"{box_columns / done:.1f} of {p}" if done else "-"
            print(f"{name:<15}{box_name:<9}{fits:>6}{large:>10}{tiny:>13}{mean_nan:>18}"
                  f"{mean_box:>16}{raised:>8}")


# -------------------------------------------------------------- block 3: plan


def run_plan(tables, eps_list):
    print(f"\nBlock 3: does DPPCA(n_components={K}).plan(n, p) differ between the tight "
          "and the codebook box?")
    print(f"{'table':<15}{'eps':>4}  differs")
    for name, table in tables.items():
        n, p = table["X"].shape
        if np.array_equal(table["boxes"]["tight"], table["boxes"]["codebook"]):
            # (adult's codebook ranges are its observed ones: one box)
            print(f"{name:<15}{'':>4}  the same box")
            continue
        for eps in (e for e in SUMMARY_EPS if e in eps_list):
            plans = []
            try:
                for box_name in ("tight", "codebook"):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        estimator = DPPCA(n_components=K, eps=eps, delta=DELTA,
                                          bounds=_as_pairs(table["boxes"][box_name]),
                                          **table["extra"])
                        plans.append(estimator.plan(n, p))
            except Exception as exc:  # noqa: BLE001
                print(f"{name:<15}{eps:>4g}  raised {type(exc).__name__}: {exc}"[:160])
                continue
            print(f"{name:<15}{eps:>4g}  {'no' if plans[0].equals(plans[1]) else 'yes'}")


# -------------------------------------------------------- block 4: covariance


def run_covariance(tables, eps_list, seeds_for):
    print(f"\nBlock 4: median PC1 sin of DPPCA(n_components={K}, radial='covariance') "
          "with each box")
    boxes = ("tight", "codebook")
    print(f"{'table':<15}{'eps':>4}" + "".join(f"{name:>10}" for name in boxes))
    for name, table in tables.items():
        top = np.linalg.eigh(table["sigma"])[1][:, -1]
        for eps in eps_list:
            cells = []
            for box_name in boxes:
                sines = [_sin(fit_ours(table["X"], table["boxes"][box_name], eps, seed,
                                      table["extra"], radial="covariance").components_[0],
                              top)
                         for seed in range(seeds_for(name))]
                cells.append(f"{np.median(sines):>10.3f}")
            print(f"{name:<15}{eps:>4g}" + "".join(cells))


# ---------------------------------------------------------- block 5: frontier

#: The scree's shares of the grant block 5 tries (the rest to the directions;
#: None: the default split, the plan deciding).
FRONTIER_SHARES = (None, 0.3, 0.6, 0.8, 0.95)
#: DPPCA's default split (``budget_split=None``, ``scale=False``).
DEFAULT_SPLIT = {"loading": 0.35, "scree": 0.3, "score": 0.35}


def _stated_share(fit, truth):
    """PC1's stated noise sd over the table's lambda_1 (NaN where none)."""
    sds = np.broadcast_to(np.asarray(fit.noise_scale_, dtype=float),
                          np.shape(fit.explained_variance_))
    return float(sds[0]) / truth


def _frontier_split(share):
    """The default split with ``share`` of the directions' and the scree's
    part on the scree (the score summary keeps its share; where the plan does
    not buy it, that share goes to the other two in proportion, as by default)."""
    both = DEFAULT_SPLIT["loading"] + DEFAULT_SPLIT["scree"]
    return {"loading": both * (1 - share), "scree": both * share,
            "score": DEFAULT_SPLIT["score"]}


def run_frontier(tables, eps_list, seeds_for):
    """What each share of the grant on the scree buys with the tight box: the
    variances' counts against the directions' sine, and PC1's stated noise sd
    against lambda_1 (the box's moments' precision at that share, printed or
    not), beside Analyze Gauss's counts on the same seeds."""
    print("\nBlock 5: the scree's share of the grant with the tight box "
          f"(DPPCA(n_components={K}); s: the scree's share of the directions' and the "
          "scree's part, the score summary keeping its share; 'plan': the default split, "
          f"s = {DEFAULT_SPLIT['scree'] / (DEFAULT_SPLIT['loading'] + DEFAULT_SPLIT['scree']):.2f})")
    print(f"{'table':<15}{'eps':>4}{'share':>7}{'var20':>8}{'pve20':>8}{'sin':>8}"
          f"{'sd/lam1':>9}   AG var20 pve20")
    for name, table in tables.items():
        X, box, seeds = table["X"], table["boxes"]["tight"], seeds_for(name)
        for eps in eps_list:
            peer = [analyze_gauss(X, box, eps, DELTA, seed) for seed in range(seeds)]
            peer_text = (f"{sum(_within(v, table['lambda1']) for v, _, _ in peer):>5}"
                         f"{sum(_within(r, table['pve1']) for _, r, _ in peer):>6}")
            for share in FRONTIER_SHARES:
                split = None if share is None else _frontier_split(share)
                fits = [fit_ours(X, box, eps, seed, table["extra"], budget_split=split)
                        for seed in range(seeds)]
                var = sum(_within(f.explained_variance_[0], table["lambda1"])
                          for f in fits)
                pve = sum(_within(f.explained_variance_ratio_[0], table["pve1"])
                          for f in fits)
                sine = np.median([_sin(f.components_[0], table["v1"]) for f in fits])
                stated = np.nanmedian([_stated_share(f, table["lambda1"]) for f in fits]
                                      or [np.nan])
                label = "plan" if share is None else f"{share:g}"
                print(f"{name:<15}{eps:>4g}{label:>7}{var:>5}/{seeds:<2}{pve:>5}/{seeds:<2}"
                      f"{sine:>8.3f}{stated:>9.2f}   "
                      + (peer_text if share is None else ""))


# ---------------------------------------------------------------------- main


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds for every table (default 20 on iris, 10 elsewhere)")
    parser.add_argument("--quick", action="store_true", help="3 seeds")
    parser.add_argument("--tables", default=",".join(TABLE_NAMES),
                        help=f"comma separated, from {','.join(TABLE_NAMES)}")
    parser.add_argument("--eps", default=",".join(f"{e:g}" for e in EPS_GRID),
                        help="comma separated budgets (default 0.5,1,2,4)")
    parser.add_argument("--main", action="store_true", help="run block 1")
    parser.add_argument("--scale", action="store_true", help="run block 2")
    parser.add_argument("--plan", action="store_true", help="run block 3")
    parser.add_argument("--covariance", action="store_true",
                        help="run block 4 (radial='covariance'; not in the default run)")
    parser.add_argument("--frontier", action="store_true",
                        help="run block 5 (the scree's share with the tight box; not in "
                             "the default run)")
    parser.add_argument("--no-opendp", action="store_true", help="leave OpenDP out")
    parser.add_argument("--opendp-nominal", action="store_true",
                        help="give OpenDP's PCA epsilon = eps as written (its loss per "
                             "replaced row is then 2 eps), not eps / 2")
    parser.add_argument("--opendp-timeout", type=float, default=10.0,
                        help="seconds one OpenDP fit may take before it counts as a "
                             "miss (default 10)")
    parser.add_argument("--opendp-budget", type=float, default=90.0,
                        help="OpenDP's wall-clock seconds per table; past them its "
                             "remaining cells show t/o (default 90)")
    parser.add_argument("--adult-rows", type=int, default=ADULT_ROWS,
                        help="rows of adult: all (default) or a public random "
                             "subsample of this many (seed 0)")
    parser.add_argument("--keep-degenerate", action="store_true",
                        help="pass zero-width ranges (v, v) as they are")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    start = time.perf_counter()

    names = [name.strip() for name in args.tables.split(",") if name.strip()]
    unknown = sorted(set(names) - set(TABLE_NAMES))
    if unknown:
        parser.error(f"unknown tables {unknown}; choose from {TABLE_NAMES}")
    eps_list = [float(value) for value in args.eps.split(",")]
    fixed = 3 if args.quick else args.seeds

    def seeds_for(name):
        return fixed if fixed is not None else (20 if name == "iris" else 10)

    blocks = {block for block in ("main", "scale", "plan", "covariance", "frontier")
              if getattr(args, block)}
    blocks = blocks or {"main", "scale", "plan"}
    tables = load_tables(names, keep_degenerate=args.keep_degenerate,
                         adult_rows=args.adult_rows)
    line = "Tables: " + ", ".join(f"{name} ({t['X'].shape[0]} x {t['X'].shape[1]})"
                                  for name, t in tables.items())
    if "adult" in tables:
        if tables["adult"]["X"].shape[0] < 32_561:
            line += (f"; adult is a {tables['adult']['X'].shape[0]}-row public "
                     f"subsample (seed {ADULT_SEED})")
    print(line)

    if "main" in blocks:
        runner = None if args.no_opendp else OpenDPRunner(nominal=args.opendp_nominal)
        if runner is not None and not runner.ensure_started():
            print(f"OpenDP is not available ({runner.reason}); its column is skipped "
                  "(pip install opendp randomgen).")
            runner = None
        try:
            cells = run_main(tables, eps_list, seeds_for, runner, args.opendp_timeout,
                             args.opendp_budget)
        finally:
            if runner is not None:
                runner.close()
        print_main(tables, eps_list, seeds_for, cells)
        print_summary(tables, eps_list, cells)
    if "scale" in blocks:
        run_scale(tables, eps_list, fixed if fixed is not None else 10)
    if "plan" in blocks:
        run_plan(tables, eps_list)
    if "covariance" in blocks:
        run_covariance(tables, eps_list, seeds_for)
    if "frontier" in blocks:
        run_frontier(tables, eps_list, seeds_for)
    print(f"\nElapsed: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
