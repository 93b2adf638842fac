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
   statistic the estimator computes, plus noise at the noise scale it calibrates,
   looked up at call time so that a patched calibration applies to both). A
   two-sample Kolmogorov-Smirnov test checks that the real fits and the
   vectorised draws have the same law, so the fast path stands for the estimator;
3. reduces each release to a scalar (a projection of ``kendall_matrix_`` or of
   ``explained_variance_raw_`` on the direction in which the neighbours move it,
   the optimal linear test for a Gaussian mechanism) and asserts that the
   Clopper-Pearson lower bound on eps (:func:`empirical_eps_lower_bound`) does not
   exceed the eps the estimator claims; and
4. repeats the audit with the Gaussian noise halved (every ``gaussian_noise_scale``
   of the package monkeypatched to return half) and asserts that the bound then
   exceeds the claim: the audit has the power to catch a broken calibration.

The neighbours attain the sensitivity the calibration uses (``sensitivity="tight"``
for the directions: a far outlier moving from e1 to e2 changes every one of its
``n - 1`` pair terms by ``sqrt(2)`` in Frobenius norm; for the norm-clipped scree
with two public directions the clipped term moves from ``C e1`` to ``C e2``), so
halving the noise really breaks the claim. With basic composition, halving the noise
of a DPPCA with its default budget split does NOT break its total claim (Gaussian
mechanisms compose far better than by adding eps), so the DPPCA detection audit
puts 96% of the budget on the directions; DPPCA with the default split is audited
for the claim only.

Run counts are set for CI (about a minute in all). ``pytest --audit-full`` (an
option defined in ``tests/conftest.py``) multiplies every run count by 20 for a
sharper audit (about 8 minutes on two cores).
"""

import math
import sys
import warnings

import numpy as np
import pytest
from scipy.stats import ks_2samp

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree, spherical_kendall
from sklearn_dppca._directions import kendall_sensitivity
from sklearn_dppca._variances import norm_clipped_scatter
from sklearn_dppca.privacy import _calibration, _mechanisms
from sklearn_dppca.privacy import clopper_pearson, empirical_eps_lower_bound

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


@pytest.fixture
def runs(request):
    """Run counts, multiplied by 20 under ``pytest --audit-full``."""
    factor = 20 if request.config.getoption("--audit-full", default=False) else 1
    return {"real": REAL_FITS * factor, "fast": FAST_RUNS * factor,
            "pilot": PILOT_RUNS * factor, "default": DEFAULT_CONFIG_FITS * factor}


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


def _real_statistics(make_estimator, statistic, X, n_fits, seed0):
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for seed in range(seed0, seed0 + n_fits):
            values.append(statistic(make_estimator(seed).fit(X)))
    return np.array(values)


@pytest.fixture
def halve_noise(monkeypatch):
    """Make every Gaussian calibration of the package return half the noise."""
    original = _calibration.gaussian_noise_scale

    def half(*args, **kwargs):
        return original(*args, **kwargs) / 2

    for name, module in list(sys.modules.items()):
        if name.startswith("sklearn_dppca") and \
                getattr(module, "gaussian_noise_scale", None) is original:
            monkeypatch.setattr(module, "gaussian_noise_scale", half)
    assert _mechanisms.gaussian_noise_scale is half


def _report(name, claimed, bound, extra=""):
    print(f"\n[audit] {name}: claimed eps = {claimed:g}, lower bound = {bound:.3f} {extra}")


# ------------------------------------------------------------ directions

def _kendall_projection(matrix):
    """``<K, D> / ||D||_F`` for ``D = e1 e1^T - e2 e2^T``: the shift of an e1 -> e2
    outlier, and the optimal linear statistic for it."""
    matrix = np.asarray(matrix)
    return (matrix[..., 0, 0] - matrix[..., 1, 1]) / math.sqrt(2)


def _kendall_fast(eps, delta, sensitivity, budget_share=1.0):
    """Vectorised release path of the noisy Kendall matrix, reduced to the statistic.

    Same kernel, same sensitivity rule and the calibration the estimator calls
    (``symmetric_matrix_gaussian`` -> ``gaussian_noise_scale``, read at call time).
    """
    def statistic(X, n_runs, rng):
        K = spherical_kendall(X)
        sigma = _mechanisms.gaussian_noise_scale(
            kendall_sensitivity(X.shape[0], sensitivity), eps * budget_share,
            delta * budget_share, "analytic")
        z = rng.standard_normal((n_runs, 3))   # diagonal 2, off-diagonal 1 (p = 2)
        noise_11, noise_22 = sigma * z[:, 0], sigma * z[:, 1]
        return _kendall_projection(K) + (noise_11 - noise_22) / math.sqrt(2)
    return statistic


def _directions_audit(runs, sensitivity):
    fast = _kendall_fast(EPS, DELTA, sensitivity)
    X_a, X_b, names, gap = _worst_pair(_candidates(), fast, runs["pilot"])

    def make(seed):
        return DPKendallDirections(eps=EPS, delta=DELTA, sensitivity=sensitivity,
                                   random_state=seed)

    stats_a, stats_b = _pooled_statistics(
        make, lambda e: _kendall_projection(e.kendall_matrix_), fast, X_a, X_b, runs)
    return stats_a, stats_b, names, gap


@pytest.mark.parametrize("sensitivity", ["tight", "standard"])
def test_directions_audit_stays_below_claim(runs, sensitivity):
    stats_a, stats_b, names, gap = _directions_audit(runs, sensitivity)
    # the search finds the outlier moving from e1 to e2 (it attains 2 sqrt(2) / n)
    assert {names[0][1], names[1][1]} == {"outlier e1", "outlier e2"}
    assert gap == pytest.approx(2 * math.sqrt(2) / N_ROWS, rel=0.1)
    bound = _audit(stats_a, stats_b)
    _report(f"DPKendallDirections ({sensitivity})", EPS, bound, f"pair {names}")
    assert bound <= EPS


def test_directions_audit_detects_halved_noise(runs, halve_noise):
    stats_a, stats_b, names, _ = _directions_audit(runs, "tight")
    bound = _audit(stats_a, stats_b)
    # an event fixed in advance: above the midpoint plus a few noise sds
    sigma = _mechanisms.gaussian_noise_scale(kendall_sensitivity(N_ROWS, "tight"), EPS,
                                             DELTA)
    threshold = np.median(stats_b) + 3 * sigma
    preregistered = _preregistered_bound(stats_a, stats_b, threshold)
    _report("DPKendallDirections, noise halved", EPS, bound,
            f"(pre-registered event: {preregistered:.3f})")
    assert bound > EPS


# ----------------------------------------------------------------- scree

SCREE_C = 1.0
PUBLIC_DIRECTIONS = np.eye(2)


def _scree_projection(variances):
    """Projection of the released 2-vector on ``(1, -1) / sqrt(2)``."""
    variances = np.asarray(variances)
    return (variances[..., 0] - variances[..., 1]) / math.sqrt(2)


def _scree_fast(eps, delta):
    """Vectorised path of the norm-clipped scree with public directions and C."""
    def statistic(X, n_runs, rng):
        scatter = norm_clipped_scatter(X, SCREE_C, "all", np.random.default_rng(0))
        exact = np.einsum("lj,jk,lk->l", PUBLIC_DIRECTIONS, scatter, PUBLIC_DIRECTIONS)
        sigma = _mechanisms.gaussian_noise_scale(
            2 * math.sqrt(2) * SCREE_C / X.shape[0], eps, delta, "analytic")
        noisy = exact + sigma * rng.standard_normal((n_runs, 2))
        return _scree_projection(noisy)
    return statistic


def _make_scree(seed):
    return DPScree(eps=EPS, delta=DELTA, directions=PUBLIC_DIRECTIONS,
                   method_params={"clip": "norm", "C": SCREE_C}, monotone=False,
                   random_state=seed)


def _scree_audit(runs):
    fast = _scree_fast(EPS, DELTA)
    X_a, X_b, names, gap = _worst_pair(_candidates(), fast, runs["pilot"])
    statistic = lambda e: _scree_projection(e.explained_variance_raw_)  # noqa: E731
    stats_a, stats_b = _pooled_statistics(_make_scree, statistic, fast, X_a, X_b, runs)
    return stats_a, stats_b, names, gap


def test_scree_audit_stays_below_claim(runs):
    stats_a, stats_b, names, gap = _scree_audit(runs)
    assert {names[0][1], names[1][1]} == {"outlier e1", "outlier e2"}
    # the clipped term moves from C e1 to C e2: the sensitivity 2 sqrt(2) C / n
    assert gap == pytest.approx(2 * math.sqrt(2) * SCREE_C / N_ROWS, rel=0.1)
    bound = _audit(stats_a, stats_b)
    _report("DPScree (public directions and C)", EPS, bound, f"pair {names}")
    assert bound <= EPS


def test_scree_audit_detects_halved_noise(runs, halve_noise):
    stats_a, stats_b, _, _ = _scree_audit(runs)
    bound = _audit(stats_a, stats_b)
    _report("DPScree, noise halved", EPS, bound)
    assert bound > EPS


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_scree_default_settings_audit(runs):
    # Private directions, C from a Durfee quantile: real fits only, on the same
    # neighbours; the statistic is the first released variance.
    X_a, X_b = _candidates()[("origin", "outlier e1")], _candidates()[("origin", "origin")]

    def make(seed):
        return DPScree(eps=EPS, delta=DELTA, random_state=seed)

    statistic = lambda e: e.explained_variance_raw_[0]  # noqa: E731
    stats_a = _real_statistics(make, statistic, X_a, runs["default"], 0)
    stats_b = _real_statistics(make, statistic, X_b, runs["default"], 10**6)
    bound = _audit(stats_a, stats_b)
    _report("DPScree (defaults)", EPS, bound)
    assert bound <= EPS


# ------------------------------------------------------------------ DPPCA

# Nearly all of the budget on the directions, so that halving the noise breaks the
# total claim (see the module docstring).
LOADING_HEAVY = {"loading": 0.96, "scree": 0.02, "score": 0.02}


def _dppca_audit(runs):
    share = LOADING_HEAVY["loading"]
    fast = _kendall_fast(EPS, DELTA, "tight", budget_share=share)
    X_a, X_b, names, gap = _worst_pair(_candidates(), fast, runs["pilot"])

    def make(seed):
        return DPPCA(eps=EPS, delta=DELTA, budget_split=LOADING_HEAVY, sensitivity="tight",
                     bins=4, random_state=seed)

    statistic = lambda e: _kendall_projection(e.kendall_matrix_)  # noqa: E731
    stats_a, stats_b = _pooled_statistics(make, statistic, fast, X_a, X_b, runs)
    return stats_a, stats_b, names, gap


def test_dppca_audit_stays_below_claim(runs):
    stats_a, stats_b, names, _ = _dppca_audit(runs)
    assert {names[0][1], names[1][1]} == {"outlier e1", "outlier e2"}
    bound = _audit(stats_a, stats_b)
    _report("DPPCA (96% on directions)", EPS, bound, f"pair {names}")
    assert bound <= EPS


def test_dppca_audit_detects_halved_noise(runs, halve_noise):
    stats_a, stats_b, _, _ = _dppca_audit(runs)
    bound = _audit(stats_a, stats_b)
    _report("DPPCA (96% on directions), noise halved", EPS, bound)
    assert bound > EPS


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dppca_default_split_audit(runs):
    # Default budget split, real fits only. Statistics: the directions' projection,
    # the first released variance, and the share of synthetic points right of the
    # private centre; each must stay below the total claim.
    X_a, X_b = _candidates()[("origin", "outlier e1")], _candidates()[("origin",
                                                                        "outlier e2")]

    def make(seed):
        return DPPCA(eps=EPS, delta=DELTA, bins=4, random_state=seed)

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


def test_audit_run_counts_option_is_documented(pytestconfig):
    assert "--audit-full" in __doc__
    assert pytestconfig.getoption("--audit-full") in (True, False)
