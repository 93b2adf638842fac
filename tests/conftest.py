"""Test-session setup shared by every test module.

Tests marked ``slow`` (long statistical checks) are left
out of a plain ``pytest`` run. ``pytest -m slow`` runs only them; ``pytest
--run-slow`` (or the environment variable ``SKLEARN_DPPCA_RUN_SLOW=1``) runs them
with everything else. Any ``-m`` expression of your own replaces the default.
"""

import os
import sys

import pytest

# scikit-learn's array-API check (``check_array_api_input``) runs only when SciPy
# was imported with array-API support switched on; set it before anything imports
# SciPy so that check runs instead of being skipped.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# Plots never need a screen.
os.environ.setdefault("MPLBACKEND", "Agg")

RUN_SLOW_ENV = "SKLEARN_DPPCA_RUN_SLOW"


def pytest_addoption(parser):
    parser.addoption(
        "--audit-full",
        action="store_true",
        default=False,
        help="Multiply the run counts of the end-to-end privacy audits "
        "(tests/test_audit_estimators.py) by 20: sharper bounds, about 8 minutes.",
    )
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="Also run the tests marked 'slow' (left out by default; "
        f"-m slow runs only them; {RUN_SLOW_ENV}=1 has the same effect).",
    )


def _run_slow(config):
    if config.getoption("--run-slow"):
        return True
    return os.environ.get(RUN_SLOW_ENV, "").strip().lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config, items):
    """Deselect the ``slow`` tests unless asked for (see the module docstring)."""
    if config.getoption("markexpr", default="") or _run_slow(config):
        return
    kept, slow = [], []
    for item in items:
        (slow if item.get_closest_marker("slow") is not None else kept).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = kept


def pytest_report_header(config):
    if config.getoption("markexpr", default="") or _run_slow(config):
        return None
    return (f"tests marked 'slow' are deselected (run them with -m slow, --run-slow "
            f"or {RUN_SLOW_ENV}=1)")


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test left open (when pyplot is in use)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


# --- display fixtures ---
# Fake fitted estimators and helpers of the display tests (tests/test_display_*.py).
# The fakes carry exactly the fitted-attribute contract the displays read, with
# values computed here in plain NumPy (they are not private; they only have the
# right shapes and meaning), so the display tests do not depend on the estimators.

import numpy as np  # noqa: E402
from sklearn.base import BaseEstimator  # noqa: E402
from sklearn.utils import Bunch  # noqa: E402


class _FakeBase(BaseEstimator):
    def fit(self, X=None, y=None):
        return self

    def __sklearn_is_fitted__(self):
        return True


class FakeDPKendallDirections(_FakeBase):
    pass


class FakeDPScree(_FakeBase):
    pass


class FakeDPPCA(_FakeBase):
    pass


class NotFitted(BaseEstimator):
    def fit(self, X=None, y=None):
        return self

    def __sklearn_is_fitted__(self):
        return False


def _ledger(steps):
    return [
        {"step": s, "mechanism": m, "eps": e, "delta": d, "sensitivity": 0.1,
         "sensitivity_norm": "L2", "noise_scale": 0.5}
        for s, m, e, d in steps
    ]


def _make_data(n_per_group=80, p=6, n_groups=3, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=3.0, size=(n_groups, p))
    X = np.vstack([m + rng.normal(size=(n_per_group, p)) * (1 + g)
                   for g, m in enumerate(means)])
    y = np.repeat([f"G{g + 1}" for g in range(n_groups)], n_per_group)
    return X, y


def _pca(X, k):
    cov = np.cov(X, rowvar=False)
    w, v = np.linalg.eigh(cov)
    order = np.argsort(w)[::-1][:k]
    V = v[:, order].T
    V *= np.where(V[np.arange(k), np.argmax(np.abs(V), axis=1)] < 0, -1, 1)[:, None]
    return V, w[order]


def _make_fake(kind="dppca", *, n_per_group=80, p=6, k=3, n_groups=3, groups=True,
              nonprivate=False, feature_names=False, bins=(12, 10), seed=0,
              scale=False):
    """A fake fitted estimator with the attributes of ``kind``.

    ``scale=True``: the columns are divided by their standard deviation first (as
    a fit with ``scale=True`` divides by private spreads), ``scale_`` is set and
    the feature variances are ones.
    """
    X, y = _make_data(n_per_group, p, n_groups, seed)
    rng = np.random.default_rng(seed + 1)
    spreads = None
    if scale:
        spreads = X.std(axis=0, ddof=1) * (1 + rng.normal(scale=0.02, size=p))
        X = X / spreads
    V_true, lam_true = _pca(X, k)
    V = V_true + rng.normal(scale=0.05, size=V_true.shape)
    V = np.linalg.qr(V.T)[0].T  # orthonormal rows
    V *= np.sign(np.sum(V * V_true, axis=1))[:, None]
    est = {"directions": FakeDPKendallDirections, "scree": FakeDPScree,
           "dppca": FakeDPPCA}[kind]()
    n = X.shape[0]
    est.n_samples_ = n
    est.n_features_in_ = p
    est.n_components_ = k
    est.components_ = V
    if feature_names:
        est.feature_names_in_ = np.array([f"feat_{j}" for j in range(p)], dtype=object)
    est.privacy_spent_ = (1.0, 1e-5)
    est.privacy_ledger_ = _ledger([("loading", "gaussian", 0.4, 4e-6)])
    est.nonprivate_ = None
    est.scale_ = spreads
    covariance = np.cov(X, rowvar=False)
    if kind in ("scree", "dppca"):
        lam = np.sort(np.clip(lam_true * (1 + rng.normal(scale=0.1, size=k)), 0, None))[
            ::-1
        ]
        est.explained_variance_ = lam
        est.explained_variance_raw_ = lam.copy()
        if scale:
            est.feature_variance_ = np.ones(p)
            est.feature_variance_noise_scale_ = np.full(p, 0.02)
        else:
            est.feature_variance_ = np.diag(covariance) * (
                1 + rng.normal(scale=0.02, size=p))
            est.feature_variance_noise_scale_ = 0.02 * np.diag(covariance)
        est.total_variance_ = max(float(np.trace(covariance)), float(lam.sum()))
        est.total_variance_noise_scale_ = 0.01 * est.total_variance_
        est.explained_variance_ratio_ = lam / est.total_variance_
        est.noise_scale_ = np.full(k, 0.02 * est.total_variance_)
        est.privacy_ledger_ += _ledger([("scree", "gaussian", 0.2, 2e-6)])
    scores_all = X @ V.T
    if kind == "dppca":
        est.axes_ = (0, 1)
        S = scores_all[:, [0, 1]]
        c = np.median(S, axis=0)
        r = float(np.quantile(np.hypot(*(S - c).T), 0.99))
        h = 1.2 * r
        est.frame_ = Bunch(center=c, radius=r, half_width=h,
                           extent=(c[0] - h, c[0] + h, c[1] - h, c[1] + h))
        xe = np.linspace(c[0] - h, c[0] + h, bins[0] + 1)
        ye = np.linspace(c[1] - h, c[1] + h, bins[1] + 1)
        est.bin_edges_ = (xe, ye)

        est.histogram_threshold_ = 2.5
        est.expected_noise_cells_ = 0.4

        def hist(rows):
            H = np.histogram2d(rows[:, 0], rows[:, 1], bins=(xe, ye))[0]
            H = H + rng.normal(scale=1.0, size=H.shape)
            H = np.where(H >= est.histogram_threshold_, H, 0.0)
            return H / H.sum()

        def sample(H, m):
            cells = rng.choice(H.size, size=m, p=H.ravel())
            ix, iy = np.unravel_index(cells, H.shape)
            return np.column_stack([
                xe[ix] + rng.uniform(size=m) * (xe[1] - xe[0]),
                ye[iy] + rng.uniform(size=m) * (ye[1] - ye[0]),
            ])

        est.score_histogram_ = hist(S)
        if groups:
            labels = list(dict.fromkeys(y.tolist()))
            est.groups_ = labels
            est.score_histograms_ = {g: hist(S[y == g]) for g in labels}
            pts = [sample(est.score_histograms_[g], int(np.sum(y == g))) for g in labels]
            est.synthetic_scores_ = np.vstack(pts)
            est.synthetic_groups_ = np.repeat(labels, [len(q) for q in pts])
        else:
            est.groups_ = None
            est.score_histograms_ = None
            est.synthetic_scores_ = sample(est.score_histogram_, n)
            est.synthetic_groups_ = None
        est.privacy_ledger_ += _ledger([
            ("score/frame/centre axis 1", "durfee quantile", 0.0467, 0.0),
            ("score/frame/centre axis 2", "durfee quantile", 0.0467, 0.0),
            ("score/frame/radius", "durfee quantile", 0.0467, 0.0),
            ("score/histogram", "gaussian", 0.26, 4e-6),
        ])
    if nonprivate:
        V_ref, lam_ref = _pca(X, k)
        V_ref *= np.where(np.sum(V_ref * V, axis=1) < 0, -1, 1)[:, None]
        ref = Bunch(
            components=V_ref,
            explained_variance=lam_ref,
            explained_variance_ratio=lam_ref / np.trace(covariance),
            scores=(X - X.mean(axis=0)) @ V_ref.T,
            feature_variance=np.diag(covariance),
            total_variance=float(np.trace(covariance)),
        )
        if kind == "dppca":
            H = np.histogram2d(*(X @ V.T)[:, [0, 1]].T, bins=est.bin_edges_)[0]
            ref.score_histogram = H / H.sum()
        est.nonprivate_ = ref
    return est


_GAU_GROUPS = ["G1", "G2", "G3", "G4", "G5"]


def _real_estimators():
    """Fitted DPKendallDirections, DPScree and DPPCA on small gau data, with the
    data under "X" and "y". DPPCA gets groups and a non-private reference; a
    second DPPCA fit without them is under "dppca_plain"."""
    from sklearn_dppca import DPPCA, DPKendallDirections, DPScree
    from sklearn_dppca.datasets import make_gaussian_clusters

    X, y = make_gaussian_clusters(200, return_groups=True, as_frame=True,
                                  random_state=0)
    return {
        "X": X,
        "y": y,
        "directions": DPKendallDirections(
            n_components=4, eps=2.0, compute_nonprivate=True, random_state=0
        ).fit(X),
        "scree": DPScree(n_components=4, eps=5.0, random_state=0).fit(X),
        "dppca": DPPCA(
            n_components=3, eps=5.0, groups=_GAU_GROUPS, compute_nonprivate=True,
            bins=(15, 15), random_state=0,
        ).fit(X, y),
        "dppca_plain": DPPCA(n_components=3, eps=5.0, random_state=1).fit(X.to_numpy()),
    }


def _save_png(fig, tmp_path, name="figure.png"):
    """Save ``fig`` as PNG under ``tmp_path`` and check the file is not empty."""
    path = tmp_path / name
    fig.savefig(path, dpi=50)
    assert path.stat().st_size > 1000
    with open(path, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    return path


@pytest.fixture
def make_fake():
    """``make_fake(kind, **options)``: a fake fitted DPKendallDirections
    ("directions"), DPScree ("scree") or DPPCA ("dppca")."""
    return _make_fake


@pytest.fixture
def make_ledger():
    """``make_ledger([(step, mechanism, eps, delta), ...])``: ledger entries."""
    return _ledger


@pytest.fixture
def not_fitted():
    """A scikit-learn estimator that is not fitted."""
    return NotFitted()


@pytest.fixture(scope="session")
def real_estimators():
    """Real fitted estimators on small gau data (fitted once per session)."""
    return _real_estimators()


@pytest.fixture
def save_png(tmp_path):
    """``save_png(fig, name="figure.png")``: save ``fig`` as a PNG in the test's
    temporary directory and check the file is one."""
    return lambda fig, name="figure.png": _save_png(fig, tmp_path, name)
# --- end of display fixtures ---


