"""End-to-end empirical privacy audits of DPKendallDirections, DPScree and DPPCA.

Each audit

1. searches worst-case neighbours: candidate data sets of ``n = 10`` rows (a base
   of ``n - 1`` rows at the origin, in a tight cluster or spread out; the changed
   row a far outlier along e1, along e2 or the diagonal, a duplicate of another row,
   or at the origin) are run through the mechanism in a pilot, and the neighbouring
   pair (same base, different changed row) with the largest difference in the
   mean of the scalar statistic is kept;
2. runs the release many times on both neighbours: a few hundred real ``fit``
   calls, plus many more draws through the same mechanism path (the exact
   statistic the estimator computes, plus Gaussian noise whose sd is read from the
   ledger of one real fit on the same data set, so that the fast draws use whatever
   calibration the estimator uses at that moment, patched or not). A two-sample
   Kolmogorov-Smirnov test checks that the real fits and the vectorised draws have
   the same law, so the fast path stands for the estimator;
3. reduces each release to a scalar (a projection of ``kendall_matrix_`` or of
   ``explained_variance_raw_`` on the direction in which the neighbours move it,
   the optimal linear test for a Gaussian mechanism) and asserts that the
   Clopper-Pearson lower bound on eps (:func:`empirical_eps_lower_bound`) does not
   exceed the eps the estimator claims; and
4. repeats the audit with the Gaussian noise halved (the package's one noise-sd
   function, ``privacy._mechanisms._gaussian_scale``, monkeypatched to return half
   wherever it is bound: every Gaussian mechanism gets its sd there, under
   ``accounting="gdp"`` from the part's ``mu`` and under ``"basic"`` from
   ``(eps, delta)``) and asserts that the bound then exceeds the claim: the audit
   has the power to catch a broken calibration.

The neighbours attain the sensitivity the calibration uses (``sensitivity="tight"``
for the directions: a far outlier moving from e1 to e2 changes every one of its
``n - 1`` pair terms by ``sqrt(2)`` in Frobenius norm; for the norm-clipped scree
with two public directions the clipped term moves from ``C e1`` to ``C e2``), so
halving the noise really breaks the claim.

Composed fits. Under the default ``accounting="gdp"`` the Gaussian parts of a fit
form one ``mu``-GDP block; part ``i`` gets ``mu_i = mu sqrt(share_i / G)`` with
``G`` the fit's Gaussian share. Halving every sd doubles the block's ``mu``. A
statistic of one part sees only that part's ``mu`` (at the default split the
loading part goes from 0.27- to 0.54-GDP at eps = 2, an eps of 2.17 at delta =
1e-5, which an (eps, delta) bound cannot separate from 2 at CI run counts). The
composed audit (:func:`_composed_audit`) therefore tests the GDP claim itself:
real ``DPPCA.fit`` calls at eps = 1 with the default split and accounting (public
scree clip bound ``C``), neighbours that move the Kendall matrix by its full
sensitivity and the variances along the released directions by nearly theirs
(both measured and printed), ONE statistic fixed in advance (the claimed-law
log-likelihood ratio of both Gaussian outputs, centres recomputed from the
released directions), its midpoint as threshold, and
:func:`~sklearn_dppca.privacy.gdp_tradeoff_audit` on pairs of fits with the same
seed on both neighbours, against ``mu = sqrt(mu_loading^2 + mu_variances^2)``
from the ledger. It catches all Gaussian noise halved and passes the correct fit
(rates over many seeds in the user guide, "Auditing the mechanisms"). The
default split is also audited with the loading part alone under-noised
four-fold while its ledger entry still claims the allocated ``mu`` (the audit
must catch it although the fit's ledger reports the full claim), and, in the slow
set, on three statistics at private settings (the claim must hold for each).
The DPKendallDirections audits run under both accountings, for the spherical
Kendall matrix and for the clipped one (``radial="clipped"`` with a public radius
far below the outliers' distance: their terms are clipped to the same unit
directions, so the e1 -> e2 pair attains the same ``2 sqrt(2) / n``).

Run counts are set for CI. The audits of the directions (plain and clipped) and
of the scree with public directions, each correctly noised and with the noise
halved, the audit that catches DPPCA's under-noised loading part and the composed
GDP audit of DPPCA (800 pairs of fits stopped after the variances, correct and
halved, about 20 s) run on every ``pytest``. The audits whose fits are many times
slower are marked ``slow`` (``pytest -m slow`` or ``--run-slow``): the composed
audit on whole fits, DPPCA's default split on three statistics, and DPScree's
default settings (private directions and clip bound). ``pytest --audit-full`` (an
option defined in ``tests/conftest.py``) multiplies every run count by 20 for a
sharper audit.
"""

import math
import sys
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import ks_2samp

from ._kendall_support import one_block
from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, spherical_kendall
from sklearn_dppca._algorithms import _directions
from sklearn_dppca._algorithms._directions import _kendall_sensitivity
from ._kendall_support import pair_scatter as _pair_scatter
from sklearn_dppca._algorithms._variances import _TAIL_WEIGHT as _VARIANCES_TAIL_WEIGHT
from sklearn_dppca._algorithms._variances import _norm_clipped_scatter
from sklearn_dppca.privacy import _budget, _calibration, _mechanisms
from sklearn_dppca.privacy import clopper_pearson, empirical_eps_lower_bound, gdp_delta
from sklearn_dppca.privacy import gdp_tradeoff_audit, noise_log_likelihood_ratio

from ._audit_support import halve_histogram_noise_in

# At eps = 2 the Gaussian mechanism with halved noise has a true eps of 4.4, and
# 2e5 runs per side bound it near 2.4: a clear detection. At eps = 1 the halved
# mechanism's true eps is only 2.15 and the bound would hover around 1.
EPS, DELTA = 2.0, 1e-5
ALPHA = 1e-3          # a correct mechanism's bound stays below eps with near certainty
N_ROWS = 10
REAL_FITS = 300       # per neighbour, per audit
FAST_RUNS = 200_000   # per neighbour, per audit, through the mechanism path
PILOT_RUNS = 4_000    # per candidate data set
DEFAULT_CONFIG_FITS = 800   # real fits per neighbour for the default-settings audits
ACCOUNTINGS = ["gdp", "basic"]


@pytest.fixture(autouse=True)
def _every_part_run(monkeypatch):
    """The audits test the mechanisms, on small data: every part is run, whatever
    the plan would buy (the plan only leaves parts out, so it cannot weaken a
    guarantee the audits confirm without it)."""
    monkeypatch.setattr("sklearn_dppca._base.bought_parts",
                        lambda parts, allocate, settings: (parts, set()))
    # (and the plan's table, thousands of times: its eps figures are not audited)
    monkeypatch.setattr("sklearn_dppca._base.plan_table",
                        lambda full, kept, allocate_at, settings, eps, part=None: [])


@pytest.fixture
def runs(request):
    """Run counts, multiplied by 20 under ``pytest --audit-full``."""
    factor = 20 if request.config.getoption("--audit-full", default=False) else 1
    return {"real": REAL_FITS * factor, "fast": FAST_RUNS * factor,
            "pilot": PILOT_RUNS * factor, "default": DEFAULT_CONFIG_FITS * factor,
            "composed": COMPOSED_PAIRS * factor}


# ------------------------------------------------------------------ neighbours

def _candidates(seed=0):
    """Candidate data sets ``(base, changed row) -> X``, 10 rows x 2 columns."""
    rng = np.random.default_rng(seed)
    bases = {
        "origin": np.zeros((N_ROWS - 1, 2)),
        "cluster": 1e-3 * rng.standard_normal((N_ROWS - 1, 2)),
        "spread": rng.standard_normal((N_ROWS - 1, 2)),
    }
    far = 1e3
    rows = {
        "outlier e1": np.array([far, 0.0]),
        "outlier e2": np.array([0.0, far]),
        "outlier diagonal": np.array([far, far]) / math.sqrt(2),
        "origin": np.zeros(2),
    }
    candidates = {}
    for base_name, base in bases.items():
        for row_name, row in rows.items():
            candidates[(base_name, row_name)] = np.vstack([base, row])
        candidates[(base_name, "duplicate")] = np.vstack([base, base[:1]])
    return candidates


def _worst_pair(candidates, fast_statistic, n_runs):
    """The neighbouring pair with the largest difference in pilot means."""
    means = {key: float(np.mean(fast_statistic(X, n_runs, np.random.default_rng(i))))
             for i, (key, X) in enumerate(candidates.items())}
    best, best_gap = None, -1.0
    keys = list(candidates)
    for a in keys:
        for b in keys:
            if a[0] == b[0] and a < b and abs(means[a] - means[b]) > best_gap:
                best, best_gap = (a, b), abs(means[a] - means[b])
    a, b = best
    # order the pair so that the statistic is larger on the first data set
    if means[a] < means[b]:
        a, b = b, a
    return candidates[a], candidates[b], (a, b), best_gap


# -------------------------------------------------------------- audit helpers

def _audit(stats_a, stats_b, delta=DELTA):
    return empirical_eps_lower_bound(stats_a, stats_b, delta, alpha=ALPHA)


def _preregistered_bound(stats_a, stats_b, threshold, delta=DELTA):
    """Bound from one event fixed in advance, ``S > threshold``, on all runs."""
    k_a = int(np.sum(stats_a > threshold))
    k_b = int(np.sum(stats_b > threshold))
    lower_a, _ = clopper_pearson(k_a, stats_a.size, ALPHA)
    _, upper_b = clopper_pearson(k_b, stats_b.size, ALPHA)
    return max(0.0, math.log(max(lower_a - delta, 1e-300) / upper_b))


def _gdp_eps(mu, delta=DELTA):
    """The smallest eps at which a ``mu``-GDP mechanism is ``(eps, delta)``-DP."""
    return brentq(lambda eps: gdp_delta(mu, eps) - delta, 0.0, 100.0)


def _same_law(real, fast):
    """The real fits and the fast path draw from the same distribution."""
    assert ks_2samp(real, fast[: 20 * real.size]).pvalue > 1e-4


def _pooled_statistics(make, statistic, fast, X_a, X_b, runs):
    """Real fits and fast draws on both neighbours, checked to share a law, pooled.

    Shuffled so that the held-out half of the auditor mixes real and fast runs.
    """
    real_a = _real_statistics(make, statistic, X_a, runs["real"], 0)
    real_b = _real_statistics(make, statistic, X_b, runs["real"], 10**6)
    fast_a = fast(X_a, runs["fast"], np.random.default_rng(1))
    fast_b = fast(X_b, runs["fast"], np.random.default_rng(2))
    _same_law(real_a, fast_a)
    _same_law(real_b, fast_b)
    rng = np.random.default_rng(3)
    return (rng.permutation(np.concatenate([real_a, fast_a])),
            rng.permutation(np.concatenate([real_b, fast_b])))


def _fit(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return estimator.fit(X)


def _real_statistics(make_estimator, statistic, X, n_fits, seed0):
    return np.array([statistic(_fit(make_estimator(seed), X))
                     for seed in range(seed0, seed0 + n_fits)])


def _ledger_entry(fitted, step):
    """The one ledger entry of ``step`` of a fitted estimator."""
    entries = [entry for entry in fitted.privacy_ledger_ if entry["step"] == step]
    assert len(entries) == 1, f"expected one ledger entry {step!r}, got {entries}"
    return entries[0]


def _noise_scale(make_estimator, X, step):
    """The noise sd the estimator uses for ``step`` on ``X``, as calibrated now.

    Read from a real fit rather than recomputed: the sd comes out of the same code
    (budget tree, accounting, sensitivity rule, any monkeypatch) as in the audited
    fits, and the fast path cannot drift from it.
    """
    return _ledger_entry(_fit(make_estimator(0), X), step)["noise_scale"]


def _halve_gaussian_noise(monkeypatch):
    """Make every Gaussian mechanism of the package add noise of half its sd."""
    # Every Gaussian sd comes from _mechanisms._gaussian_scale; a module that
    # calibrated through gaussian_noise_scale directly would escape the patch, and
    # the detection audits would audit a half-patched package.
    # (_discrete starts its exact search from the continuous scale; its own
    # calibration is halved below, with the histograms')
    allowed = {"sklearn_dppca.privacy", "sklearn_dppca.privacy._calibration",
               "sklearn_dppca.privacy._mechanisms", "sklearn_dppca.privacy._discrete"}
    direct = sorted(name for name, module in list(sys.modules.items())
                    if name.startswith("sklearn_dppca") and name not in allowed
                    and getattr(module, "gaussian_noise_scale", None)
                    is _calibration.gaussian_noise_scale)
    assert not direct, f"modules calibrating Gaussian noise themselves: {direct}"
    original = _mechanisms._gaussian_scale

    def half(*args, **kwargs):
        return original(*args, **kwargs) / 2

    # Modules that import it predict the sd (the score histogram's threshold):
    # they must see the sd the mechanisms now use.
    for name, module in list(sys.modules.items()):
        if name.startswith("sklearn_dppca") and \
                getattr(module, "_gaussian_scale", None) is original:
            monkeypatch.setattr(module, "_gaussian_scale", half)
    assert _mechanisms._gaussian_scale is half
    # the score histogram's discrete Gaussian (and the sparse release's discrete
    # Laplace) have calibrations of their own
    halve_histogram_noise_in(monkeypatch)
    # Under GDP accounting a GDP part records the mu of the noise it drew, so the
    # ledger itself refuses such a fit (RuntimeError, tested in
    # test_accounting_estimators.py). Here the audit must catch it on its own:
    # the ledger's check is switched off.
    monkeypatch.setattr(_budget.PrivacyLedger, "check_within",
                        lambda ledger, eps, delta: ledger.spent())


@pytest.fixture
def halve_noise(monkeypatch):
    """Every Gaussian mechanism of the package adds noise of half its sd."""
    _halve_gaussian_noise(monkeypatch)


def _report(name, claimed, bound, extra=""):
    print(f"\n[audit] {name}: claimed eps = {claimed:g}, lower bound = {bound:.3f} {extra}")


# ------------------------------------------------------------ directions

def _kendall_projection(matrix):
    """``<K, D> / ||D||_F`` for ``D = e1 e1^T - e2 e2^T``: the shift of an e1 -> e2
    outlier, and the optimal linear statistic for it."""
    matrix = np.asarray(matrix)
    return (matrix[..., 0, 0] - matrix[..., 1, 1]) / math.sqrt(2)


def _kendall_fast(make_estimator, kernel=spherical_kendall):
    """Vectorised release path of the noisy Kendall matrix, reduced to the statistic.

    Same kernel (``kernel(X)``, the pre-noise matrix); the sd is that of the
    estimator's "loading" ledger entry on the same data set (see
    :func:`_noise_scale`).
    """
    def statistic(X, n_runs, rng):
        K = kernel(X)
        sigma = _noise_scale(make_estimator, X, "loading")
        z = rng.standard_normal((n_runs, 3))   # diagonal 2, off-diagonal 1 (p = 2)
        noise_11, noise_22 = sigma * z[:, 0], sigma * z[:, 1]
        return _kendall_projection(K) + (noise_11 - noise_22) / math.sqrt(2)
    return statistic


def _make_directions(sensitivity, accounting):
    def make(seed):
        return DPKendallDirections(eps=EPS, delta=DELTA, sensitivity=sensitivity,
                                   accounting=accounting, random_state=seed)
    return make


def _kendall_audit(make, runs, kernel=spherical_kendall):
    fast = _kendall_fast(make, kernel)
    X_a, X_b, names, gap = _worst_pair(_candidates(), fast, runs["pilot"])
    statistic = lambda e: _kendall_projection(e.kendall_matrix_)  # noqa: E731
    stats_a, stats_b = _pooled_statistics(make, statistic, fast, X_a, X_b, runs)
    return stats_a, stats_b, names, gap


@pytest.mark.parametrize("accounting", ACCOUNTINGS)
@pytest.mark.parametrize("sensitivity", ["tight", "standard"])
def test_directions_audit_stays_below_claim(runs, sensitivity, accounting):
    stats_a, stats_b, names, gap = _kendall_audit(
        _make_directions(sensitivity, accounting), runs)
    # the search finds the outlier moving from e1 to e2 (it attains 2 sqrt(2) / n)
    assert {names[0][1], names[1][1]} == {"outlier e1", "outlier e2"}
    assert gap == pytest.approx(2 * math.sqrt(2) / N_ROWS, rel=0.1)
    bound = _audit(stats_a, stats_b)
    _report(f"DPKendallDirections ({sensitivity}, {accounting})", EPS, bound,
            f"pair {names}")
    assert bound <= EPS


@pytest.mark.parametrize("accounting", ACCOUNTINGS)
def test_directions_audit_detects_halved_noise(runs, halve_noise, accounting):
    make = _make_directions("tight", accounting)
    stats_a, stats_b, names, _ = _kendall_audit(make, runs)
    bound = _audit(stats_a, stats_b)
    # an event fixed in advance: above the midpoint plus a few noise sds
    sigma = _noise_scale(make, _candidates()[names[0]], "loading")
    threshold = np.median(stats_b) + 3 * sigma
    preregistered = _preregistered_bound(stats_a, stats_b, threshold)
    _report(f"DPKendallDirections ({accounting}), noise halved", EPS, bound,
            f"(pre-registered event: {preregistered:.3f})")
    assert bound > EPS


# ------------------------------------------------------- clipped directions

# The public clip radius of the clipped audits. The candidates' outliers lie 1e3
# from the base rows, far beyond it: their terms are clipped to the unit directions
# e1 e1^T or e2 e2^T, and the e1 -> e2 pair moves the matrix by the full
# 2 sqrt(2) / n. The "spread" base's own pairs (distances near 1.4) straddle it, and
# the "cluster" base's lie far inside it, so the search also sees neighbours whose
# terms are not clipped (||d|| < c: smaller terms, smaller moves).
CLIP_RADIUS = 1.0


def _clipped_kernel(X):
    """The pre-noise clipped matrix, ``mean d d^T / max(||d||^2, c^2)``."""
    return _pair_scatter(X, floor=CLIP_RADIUS**2)


def _make_clipped_directions(accounting):
    def make(seed):
        return DPKendallDirections(eps=EPS, delta=DELTA, radial="clipped",
                                   radius=CLIP_RADIUS, accounting=accounting,
                                   random_state=seed)
    return make


@pytest.mark.parametrize("accounting", ACCOUNTINGS)
def test_clipped_directions_audit_stays_below_claim(runs, accounting):
    make = _make_clipped_directions(accounting)
    stats_a, stats_b, names, gap = _kendall_audit(make, runs, _clipped_kernel)
    assert {names[0][1], names[1][1]} == {"outlier e1", "outlier e2"}
    # the pair attains the sensitivity of the calibration, in the statistic and in
    # Frobenius norm, and the fit has no radius search (public radius)
    X_a, X_b = _candidates()[names[0]], _candidates()[names[1]]
    claim = _kendall_sensitivity(N_ROWS, "tight")
    assert gap == pytest.approx(claim, rel=0.1)
    assert np.linalg.norm(_clipped_kernel(X_a) - _clipped_kernel(X_b)) == pytest.approx(
        claim, rel=1e-4)
    fitted = _fit(make(0), X_a)
    assert fitted.radius_ == CLIP_RADIUS
    assert _ledger_entry(fitted, "loading")["sensitivity"] == pytest.approx(claim)
    bound = _audit(stats_a, stats_b)
    _report(f"DPKendallDirections (clipped, radius {CLIP_RADIUS:g}, {accounting})", EPS,
            bound, f"pair {names}")
    assert bound <= EPS


@pytest.mark.parametrize("accounting", ACCOUNTINGS)
def test_clipped_directions_audit_detects_halved_noise(runs, halve_noise, accounting):
    stats_a, stats_b, names, _ = _kendall_audit(_make_clipped_directions(accounting),
                                                runs, _clipped_kernel)
    bound = _audit(stats_a, stats_b)
    _report(f"DPKendallDirections (clipped, {accounting}), noise halved", EPS, bound,
            f"pair {names}")
    assert bound > EPS


# ----------------------------------------------------------------- scree

SCREE_C = 1.0
PUBLIC_DIRECTIONS = np.eye(2)
# The scree audits with public directions and C run at a larger delta. The
# variances get only part of the scree's budget (the private total variance takes
# the rest), so under GDP at delta = 1e-5 they are 0.41-GDP and halving their noise
# gives an eps of 3.5 that 2e5 runs bound only near 2.0, not clearly above the
# claim. At delta = 1e-3 the audit's best event lies less far in the tail: the bound
# is near 2.9 with the noise halved and near 1.3 without.
SCREE_DELTA = 1e-3


def _scree_projection(variances):
    """Projection of the released 2-vector on ``(1, -1) / sqrt(2)``."""
    variances = np.asarray(variances)
    return (variances[..., 0] - variances[..., 1]) / math.sqrt(2)


def _make_scree(seed):
    return DPScree(eps=EPS, delta=SCREE_DELTA, directions=PUBLIC_DIRECTIONS,
                   scree_params={"clip": "norm", "C": SCREE_C}, monotone=False,
                   random_state=seed)


def _scree_fast(make_estimator):
    """Vectorised path of the norm-clipped scree with public directions and C.

    The sd is that of the estimator's "scree/variances/statistic" ledger entry.
    """
    def statistic(X, n_runs, rng):
        scatter = _norm_clipped_scatter(one_block(X), SCREE_C, "all", "s")
        exact = np.einsum("lj,jk,lk->l", PUBLIC_DIRECTIONS, scatter, PUBLIC_DIRECTIONS)
        sigma = _noise_scale(make_estimator, X, "scree/variances/statistic")
        noisy = exact + sigma * rng.standard_normal((n_runs, 2))
        return _scree_projection(noisy)
    return statistic


def _scree_audit(runs):
    fast = _scree_fast(_make_scree)
    X_a, X_b, names, gap = _worst_pair(_candidates(), fast, runs["pilot"])
    statistic = lambda e: _scree_projection(e.explained_variance_raw_)  # noqa: E731
    stats_a, stats_b = _pooled_statistics(_make_scree, statistic, fast, X_a, X_b, runs)
    return stats_a, stats_b, names, gap


def test_scree_audit_stays_below_claim(runs):
    stats_a, stats_b, names, gap = _scree_audit(runs)
    assert {names[0][1], names[1][1]} == {"outlier e1", "outlier e2"}
    # the clipped term moves from C e1 to C e2: the sensitivity 2 sqrt(2) C / n
    assert gap == pytest.approx(2 * math.sqrt(2) * SCREE_C / N_ROWS, rel=0.1)
    bound = _audit(stats_a, stats_b, SCREE_DELTA)
    _report("DPScree (public directions and C)", EPS, bound, f"pair {names}")
    assert bound <= EPS


def test_scree_audit_detects_halved_noise(runs, halve_noise):
    stats_a, stats_b, _, _ = _scree_audit(runs)
    bound = _audit(stats_a, stats_b, SCREE_DELTA)
    _report("DPScree, noise halved", EPS, bound)
    assert bound > EPS


@pytest.mark.slow   # 1600 fits with private directions and clip bound
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_scree_default_settings_audit(runs):
    # Private directions, C from a Durfee quantile: real fits only, on the same
    # neighbours; the statistic is the first released variance.
    X_a, X_b = _candidates()[("origin", "outlier e1")], _candidates()[("origin", "origin")]

    bound = _first_variance_audit(
        lambda seed: DPScree(eps=EPS, delta=DELTA, random_state=seed), X_a, X_b, runs)
    _report("DPScree (defaults)", EPS, bound)
    assert bound <= EPS


def _first_variance_audit(make, X_a, X_b, runs):
    """The audit's bound on the first released variance of real fits on ``X_a``
    and ``X_b`` (``make(seed)``: the estimator)."""
    statistic = lambda e: e.explained_variance_raw_[0]  # noqa: E731
    stats_a = _real_statistics(make, statistic, X_a, runs["default"], 0)
    stats_b = _real_statistics(make, statistic, X_b, runs["default"], 10**6)
    return _audit(stats_a, stats_b)


@pytest.mark.slow   # 1600 fits with private directions, a search and a choice
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("bound, n_rows, half_width, searched", [
    ("box", 150, 2.0, "scree/total variance/clip bound"),     # the total's search
    ("box-own", 400, 2.0, "scree/variances/clip bound"),      # the variances' own
])
def test_scree_with_bounds_audit(runs, bound, n_rows, half_width, searched):
    # Declared bounds: a bound is searched (the total's, or the variances' own),
    # then public rules pick the box's moments or the pair statistics clipped at
    # it: once with the mean assumed at the box's centre (the search: no mean
    # released), once more on a first part of the box's mean (the search, the
    # rest of the mean's budget joined to the variances'; or the box, the rest
    # of the mean released). A box twice as wide as the rows along e1, the
    # rows in its upper half (the first part of the mean sees them off its
    # centre, so the second look, which weighs the search's typical clipping
    # too, sometimes still takes the search), so that each of the three ways
    # runs in some of the fits; one row at the box's centre or at its corner.
    # Real fits with public directions (e1, e2); the statistic is the
    # variance along e1.
    base = np.random.default_rng(0).uniform(-1.0, 1.0, size=(n_rows - 1, 2))
    base[:, 0] += 1.0
    X_a = np.vstack([base, [0.0, 0.0]])
    X_b = np.vstack([base, [half_width, 1.0]])
    box = [(-half_width, half_width), (-1.0, 1.0)]

    def make(seed):
        return DPScree(eps=EPS, delta=DELTA, bounds=box, directions=np.eye(2),
                       scree_params={"bound": bound}, monotone=False, random_state=seed)

    chosen = [[e["step"] for e in make(seed).fit(X_a).privacy_ledger_]
              for seed in range(20)]
    assert all(searched in steps for steps in chosen)
    # the mean's parts released: none (the first rule's search), the first (the
    # second's search) or both (the box): each way runs
    assert {steps.count("scree/mean") for steps in chosen} == {0, 1, 2}
    audited = _first_variance_audit(make, X_a, X_b, runs)
    _report(f"DPScree (declared bounds: the box or the search, bound={bound!r})",
            EPS, audited)
    assert audited <= EPS


# ------------------------------------------------------------------ DPPCA

def _make_dppca(budget_split=None):
    def make(seed):
        return DPPCA(eps=EPS, delta=DELTA, budget_split=budget_split, bins=4,
                     random_state=seed)
    return make


@pytest.mark.slow   # 1600 DPPCA fits
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dppca_default_split_audit(runs):
    # Default budget split, real fits only. Statistics: the directions' projection,
    # the first released variance, and the share of synthetic points right of the
    # private centre; each must stay below the total claim.
    X_a, X_b = _candidates()[("origin", "outlier e1")], _candidates()[("origin",
                                                                        "outlier e2")]
    make = _make_dppca()
    fitted = {}
    for key, X, seed0 in (("a", X_a, 0), ("b", X_b, 10**6)):
        fitted[key] = _real_statistics(
            make, lambda e: (_kendall_projection(e.kendall_matrix_),
                             e.explained_variance_raw_[0],
                             np.mean(e.synthetic_scores_[:, 0] > e.frame_.center[0])
                             if e.frame_ is not None and len(e.synthetic_scores_)
                             else 0.5),
            X, runs["default"], seed0)
    for column, name in enumerate(["directions", "first variance", "synthetic share"]):
        bound = _audit(fitted["a"][:, column], fitted["b"][:, column])
        _report(f"DPPCA (default split), {name}", EPS, bound)
        assert bound <= EPS


# The loading part's sd is divided by this in the under-noised audit. At the default
# split (eps 2, delta 1e-5) the Gaussian share is 0.784, the block 0.403-GDP and the
# loading part mu_L = 0.403 sqrt(0.35 / 0.784) = 0.269-GDP. Divided by 4 its sd
# makes it 1.08-GDP on its own, an eps of 4.8 at delta = 1e-5 against the claim of
# 2: the audit, which bounds a 1.0-GDP mechanism near 2.4, catches that. Divided by
# 2 it would be 0.54-GDP, an eps of 2.17: broken, but by less than any affordable
# run count resolves (the test below checks both numbers from the ledger).
UNDER_NOISE = 4


@pytest.fixture
def under_noised_loading(monkeypatch):
    """The Kendall matrix of the "loading" step gets ``1 / UNDER_NOISE`` of its sd.

    Its mechanism is handed a sensitivity ``UNDER_NOISE`` times too small, so it
    keeps the ``mu`` the budget tree allocated: the ledger, and the claim of the
    fit, see nothing wrong. Every other Gaussian part is calibrated as usual.
    """
    original = _directions.symmetric_matrix_gaussian

    def under_noised(matrix, sensitivity, *args, **kwargs):
        if kwargs.get("step") == "loading":
            sensitivity = sensitivity / UNDER_NOISE
        return original(matrix, sensitivity, *args, **kwargs)

    monkeypatch.setattr(_directions, "symmetric_matrix_gaussian", under_noised)


# Slow (15-25 s): the composed audit (test_dppca_composed_audit_detects_halved_noise)
# reads the same Kendall matrix with the optimal statistic and runs in CI.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dppca_default_split_audit_catches_one_under_noised_part(
        runs, under_noised_loading):
    make = _make_dppca()
    stats_a, stats_b, names, _ = _kendall_audit(make, runs)
    assert {names[0][1], names[1][1]} == {"outlier e1", "outlier e2"}
    bound = _audit(stats_a, stats_b)

    X_a = _candidates()[names[0]]
    broken = _fit(make(0), X_a)
    # The fit still claims the full grant under GDP accounting: only an audit of
    # its outputs can tell.
    assert broken.accounting == "gdp"
    assert broken.privacy_spent_ == pytest.approx((EPS, DELTA), rel=1e-9)
    loading = _ledger_entry(broken, "loading")
    mu_allocated = loading["mu"]
    mu_real = _kendall_sensitivity(N_ROWS, broken.sensitivity) / loading["noise_scale"]
    # (less a hair: the exact release pays its rounding to the grid in noise,
    # sqrt(3) steps of the mu s it may move, 1e-4 here)
    assert mu_real == pytest.approx(UNDER_NOISE * mu_allocated, rel=1e-3)
    true_eps = _gdp_eps(mu_real)
    # the numbers of the comment at UNDER_NOISE: four-fold is clearly broken,
    # two-fold only slightly (why the audit does not use it)
    assert true_eps > 2 * EPS
    assert EPS < _gdp_eps(2 * mu_allocated) < 1.15 * EPS
    _report(f"DPPCA (default split), loading sd / {UNDER_NOISE}", EPS, bound,
            f"(loading part alone: {mu_real:.3f}-GDP, true eps {true_eps:.2f}; "
            f"pair {names})")
    assert bound > EPS


# ------------------------------------------- DPPCA's composed fit: a GDP audit

# The claim audited: the Gaussian parts that release the directions and the
# variances along them, composed as the default accounting composes them
# (mu-GDP, mu_LV = sqrt(mu_loading^2 + mu_variances^2) from the ledger). Later
# outputs are left out: the score frame is pure-DP on the scores, so its law
# moves with the changed row, and a test reading the histogram on that frame
# is bounded only by the composition of the frame's eps with the Gaussian block,
# far too weak a curve to show half the noise at CI run counts (the histogram
# mechanism is audited on its own in test_privacy_audit.py). The private total
# variance is left out as well: the neighbours below do not move it (its clipped
# terms have the same norm), so it would only raise the claim. Leaving outputs out
# is post-processing: the outputs read are exactly as private as the claim says.
COMPOSED_EPS = 1.0
COMPOSED_ROWS = 200
COMPOSED_C = 1.0          # public clip bound of the scree, far below the changed row
COMPOSED_FAR = 1e6        # distance of the changed row from the others
COMPOSED_PAIRS = 800      # pairs of fits (one on each neighbour, same seed)
COMPOSED_ALPHA = 0.01
AUDITED_STEPS = ("loading", "scree/variances/statistic")


def _composed_neighbours():
    """``D``, ``D'``: a thin cloud along e1 plus one far row, along e1 or along e2.

    The cloud fixes the released directions near e1 and e2, so the far row's
    clipped scree term moves from ``C e1`` to ``C e2`` in the directions' frame
    (nearly the scree's full sensitivity ``2 sqrt(2) C / n``) while its n - 1 unit
    pair terms move the Kendall matrix by the full ``2 sqrt(2) / n``.
    """
    rng = np.random.default_rng(0)
    cloud = np.column_stack([np.linspace(-1.0, 1.0, COMPOSED_ROWS - 1),
                             0.1 * rng.standard_normal(COMPOSED_ROWS - 1)])
    return (np.vstack([cloud, [COMPOSED_FAR, 0.0]]),
            np.vstack([cloud, [0.0, COMPOSED_FAR]]))


def _make_composed(seed):
    # Default split, accounting, scree method, bins; public C; no synthetic points
    # (post-processing of the histogram, which the audit does not read); the
    # variances as the mechanism releases them (their elliptical combination is
    # post-processing, and the likelihood ratio reads the Gaussian release).
    return DPPCA(eps=COMPOSED_EPS, scree_params={"C": COMPOSED_C, "elliptical": "off"},
                 n_synthetic=0, random_state=seed)


def _ledger(fitted):
    return {entry["step"]: entry for entry in fitted.privacy_ledger_}


def _composed_claim(X):
    """Each audited part's ``mu`` and their composition, from a correct fit's ledger."""
    ledger = _ledger(_fit(_make_composed(0), X))
    parts = {step: ledger[step]["mu"] for step in AUDITED_STEPS}
    assert "scree/variances/clip bound" not in ledger   # C is public
    assert ledger["gaussian block"]["composes"][:2] == list(AUDITED_STEPS)
    return parts, math.sqrt(sum(mu**2 for mu in parts.values()))


def _variance_centre(X, components):
    """The exact variances the scree releases, given the released directions."""
    return np.diag(_norm_clipped_scatter(one_block(X @ components.T), COMPOSED_C, "all", "s"))


def _composed_llr(fitted, X_a, X_b, claim, kendall):
    """``log p_D / p_D'`` of the released Kendall matrix and variances, with the
    claimed noise (sd = the ledger's sensitivity over the claimed ``mu``; the
    centres of the variances are recomputed on both neighbours from the released
    directions). Rounded to 1e-6 (its sd is about 0.19): the decision reads no
    low-order bits of the floating-point outputs."""
    ledger = _ledger(fitted)
    rows, cols = np.triu_indices(X_a.shape[1])
    diagonal = rows == cols
    sd = ledger["loading"]["sensitivity"] / claim["loading"]
    released = fitted.kendall_matrix_[rows, cols]
    centre_a, centre_b = kendall[0][rows, cols], kendall[1][rows, cols]
    llr = sum(noise_log_likelihood_ratio(released[np.newaxis, keep], centre_a[keep],
                                         centre_b[keep], scale)[0]
              for keep, scale in ((diagonal, sd), (~diagonal, sd / math.sqrt(2))))
    sd = ledger["scree/variances/statistic"]["sensitivity"] / claim[AUDITED_STEPS[1]]
    llr += noise_log_likelihood_ratio(
        fitted.explained_variance_raw_[np.newaxis],
        _variance_centre(X_a, fitted.components_),
        _variance_centre(X_b, fitted.components_), sd)[0]
    return round(float(llr), 6)


def _variance_reach(fitted, X_a, X_b):
    """``||f(D) - f(D')||`` of the variances over their part of the scree's stated
    sensitivity: the release carries the tail shares too, scaled to
    ``_TAIL_WEIGHT`` of the variances' sensitivity, so the ledger's is
    ``hypot(1, _TAIL_WEIGHT)`` times the variances' own."""
    shift = _variance_centre(X_a, fitted.components_) - _variance_centre(
        X_b, fitted.components_)
    stated = _ledger(fitted)["scree/variances/statistic"]["sensitivity"]
    return np.linalg.norm(shift) / (stated / math.hypot(1.0, _VARIANCES_TAIL_WEIGHT))


def _paired_composed_runs(n_pairs, X_a, X_b, claim):
    """The statistic of fits on ``D`` and ``D'`` with the same seeds, and the
    variances' reach of sensitivity in the fits on ``D``."""
    kendall = (spherical_kendall(X_a), spherical_kendall(X_b))
    stats, reach = np.empty((2, n_pairs)), np.empty(n_pairs)
    for seed in range(n_pairs):
        fitted_a, fitted_b = _fit(_make_composed(seed), X_a), _fit(_make_composed(seed),
                                                                   X_b)
        stats[0, seed] = _composed_llr(fitted_a, X_a, X_b, claim, kendall)
        stats[1, seed] = _composed_llr(fitted_b, X_a, X_b, claim, kendall)
        reach[seed] = _variance_reach(fitted_a, X_a, X_b)
    return stats, reach


def _skip_score_summary(monkeypatch):
    """Stop each fit after the variances: the audited outputs come first, so they
    are bit-identical (checked on one seed); the fit then takes a fifth of the time."""
    X_a, _ = _composed_neighbours()
    full = _fit(_make_composed(3), X_a)
    monkeypatch.setattr(DPPCA, "_fit_scores", lambda self, *args, **kwargs: None)
    short = _fit(_make_composed(3), X_a)
    assert full.frame_ is not None and short.frame_ is None
    assert np.array_equal(full.kendall_matrix_, short.kendall_matrix_)
    assert np.array_equal(full.explained_variance_raw_, short.explained_variance_raw_)


def _composed_audit(n_pairs, monkeypatch, half):
    X_a, X_b = _composed_neighbours()
    claim, mu = _composed_claim(X_a)
    # the loading part attains its sensitivity: ||K(D) - K(D')||_F = 2 sqrt(2) / n
    loading_reach = np.linalg.norm(spherical_kendall(X_a) - spherical_kendall(X_b)) / \
        _kendall_sensitivity(COMPOSED_ROWS, "tight")
    if half:
        _halve_gaussian_noise(monkeypatch)
        # the patch took: the ledger records the mu of the noise drawn, twice the claim
        assert _ledger(_fit(_make_composed(0), X_a))["loading"]["mu"] == pytest.approx(
            2 * claim["loading"])
    stats, reach = _paired_composed_runs(n_pairs, X_a, X_b, claim)
    result = gdp_tradeoff_audit(stats[0], stats[1], mu, threshold=0.0,
                                alpha=COMPOSED_ALPHA, paired=True)
    print(f"\n[audit] DPPCA composed fit (eps {COMPOSED_EPS:g}, default split, GDP)"
          f"{', noise halved' if half else ''}: claimed mu = {mu:.4f} "
          f"({' + '.join(AUDITED_STEPS)}), lower bound = {result['mu_lower']:.4f} "
          f"({n_pairs} pairs; errors a = {result['type_one']:.3f}, "
          f"b = {result['type_two']:.3f}; reach of sensitivity: loading "
          f"{loading_reach:.6f}, variances mean {reach.mean():.3f}, min {reach.min():.3f})")
    assert loading_reach > 0.999999
    assert reach.mean() > 0.9
    return result, mu, stats


# (20 s: the slow profile's, with its halved-noise twin; the per-part audits above
# stay in CI)
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dppca_composed_audit_stays_below_claim(runs, monkeypatch):
    _skip_score_summary(monkeypatch)
    result, _, _ = _composed_audit(runs["composed"], monkeypatch, half=False)
    assert not result["rejected"]


# (the slow profile's too, as the one-under-noised-part audit is)
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dppca_composed_audit_detects_halved_noise(runs, monkeypatch):
    _skip_score_summary(monkeypatch)
    result, mu, stats = _composed_audit(runs["composed"], monkeypatch, half=True)
    assert result["rejected"] and result["mu_lower"] > mu
    # The older auditor, on the same runs, sees nothing: an eps bound far below the
    # fit's claimed eps = 1 (delta = 1e-5).
    assert empirical_eps_lower_bound(stats[0], stats[1], 1e-5, alpha=ALPHA) < 0.5


@pytest.mark.slow   # 2 x 1600 whole fits (score summary included), about 2 min
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("half", [False, True], ids=["correct", "halved"])
def test_dppca_composed_audit_whole_fits(runs, monkeypatch, half):
    result, _, _ = _composed_audit(runs["composed"], monkeypatch, half=half)
    assert result["rejected"] == half
