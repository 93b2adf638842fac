"""Shared display helpers, and the fake fitted estimators the display tests use.

The fakes carry exactly the fitted-attribute contract the displays read, with values
computed here in plain NumPy (they are not private; they only have the right shapes
and meaning), so the display tests do not depend on the estimators.
"""

import os
from pathlib import Path

import numpy as np
import pytest

import sklearn_dppca

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.base import BaseEstimator  # noqa: E402
from sklearn.utils import Bunch  # noqa: E402

from sklearn_dppca.display import _common  # noqa: E402


# --------------------------------------------------------------------------------------
# fake fitted estimators
# --------------------------------------------------------------------------------------
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


def make_data(n_per_group=80, p=6, n_groups=3, seed=0):
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


def make_fake(kind="dppca", *, n_per_group=80, p=6, k=3, n_groups=3, groups=True,
              nonprivate=False, feature_names=False, bins=(12, 10), seed=0,
              scale=False):
    """A fake fitted estimator with the attributes of ``kind``.

    ``scale=True``: the columns are divided by their standard deviation first (as
    a fit with ``scale=True`` divides by private spreads), ``scale_`` is set and
    the feature variances are ones.
    """
    X, y = make_data(n_per_group, p, n_groups, seed)
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


GAU_GROUPS = ["G1", "G2", "G3", "G4", "G5"]
_REAL = {}


def real_estimators():
    """Fitted DPKendallDirections, DPScree and DPPCA on small gau data (cached).

    Skips when the estimators cannot be imported. DPPCA gets groups and a
    non-private reference; a second DPPCA fit without them is under "dppca_plain".
    """
    if not _REAL:
        try:
            from sklearn_dppca import DPPCA, DPKendallDirections, DPScree
        except ImportError as exc:  # pragma: no cover - only before the estimators
            pytest.skip(f"the estimators are not importable yet: {exc}")
        from sklearn_dppca.datasets import make_gaussian_clusters

        X, y = make_gaussian_clusters(200, return_groups=True, as_frame=True,
                                      random_state=0)
        _REAL["X"], _REAL["y"] = X, y
        _REAL["directions"] = DPKendallDirections(
            n_components=4, eps=2.0, compute_nonprivate=True, random_state=0
        ).fit(X)
        _REAL["scree"] = DPScree(n_components=4, eps=5.0, random_state=0).fit(X)
        _REAL["dppca"] = DPPCA(
            n_components=3, eps=5.0, groups=GAU_GROUPS, compute_nonprivate=True,
            bins=(15, 15), random_state=0,
        ).fit(X, y)
        _REAL["dppca_plain"] = DPPCA(n_components=3, eps=5.0, random_state=1).fit(
            X.to_numpy()
        )
    return _REAL


def save_png(fig, tmp_path, name="figure.png"):
    """Save ``fig`` as PNG under ``tmp_path`` and check the file is not empty."""
    path = tmp_path / name
    fig.savefig(path, dpi=50)
    assert path.stat().st_size > 1000
    with open(path, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    return path


# --------------------------------------------------------------------------------------
# tests of the helpers
# --------------------------------------------------------------------------------------
def test_component_label():
    assert _common.component_label(0) == "DP PC1"
    assert _common.component_label(1, [0.5, 0.42]) == "DP PC2 (42.0%)"


@pytest.mark.parametrize(
    "axes, k, message",
    [
        ((0, 0), 3, "different"),
        ((0, 3), 3, r"\[0, 2\]"),
        ((-1, 1), 3, r"\[0, 2\]"),
        ((0,), 3, "pair"),
        ("ab", 3, "pair"),
        (5, 3, "pair"),
        ((0, 1.0), 3, "pair"),
        ((0, 1), 1, "at least 2"),
    ],
)
def test_check_axes_pair_errors(axes, k, message):
    with pytest.raises(ValueError, match="axes"):
        _common.check_axes_pair(axes, k)
    with pytest.raises(ValueError, match=message):
        _common.check_axes_pair(axes, k)


def test_check_axes_pair_accepts_numpy_ints():
    assert _common.check_axes_pair(np.array([2, 0]), 3) == (2, 0)


def test_select_variables():
    names = [f"v{j}" for j in range(40)]
    weights = np.arange(40.0)
    assert list(_common.select_variables(None, names[:5], weights[:5])) == list(range(5))
    top = _common.select_variables(None, names, weights)
    assert list(top) == list(range(10, 40))
    assert len(_common.select_variables("all", names, weights)) == 40
    assert list(_common.select_variables(["v3", 1, "v3"], names, weights)) == [3, 1]
    with pytest.raises(ValueError, match="variables"):
        _common.select_variables(["nope"], names, weights)
    with pytest.raises(ValueError, match="variables"):
        _common.select_variables([99], names, weights)
    with pytest.raises(ValueError, match="variables"):
        _common.select_variables([], names, weights)


def test_hdr_levels():
    H = np.array([[0.5, 0.3], [0.2, 0.0]])
    levels = _common.hdr_levels(H, (0.5, 0.9))
    assert np.allclose(levels, [0.2, 0.5])
    assert _common.hdr_levels(np.zeros((2, 2))).size == 0


def test_place_labels_do_not_overlap():
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    ax.set_aspect("equal")
    ends = np.tile([[0.5, 0.5]], (6, 1)) + np.linspace(0, 1e-3, 6)[:, None]
    labels = [f"variable{j}" for j in range(6)]
    pos = _common.place_labels(ax, ends, labels, fontsize=9)
    dx, dy = _common.data_per_point(ax)
    height = _common._label_height(9) * dy
    width = _common._label_widths(labels[:1], 9)[0] * dx
    for i in range(6):
        for j in range(i + 1, 6):
            assert (abs(pos[i, 0] - pos[j, 0]) >= width * 0.99
                    or abs(pos[i, 1] - pos[j, 1]) >= height * 0.99)
    # a single label sits outward along its arrow, beyond the end
    one = _common.place_labels(ax, [[0.5, 0.0]], ["x"], fontsize=9)
    assert one[0, 0] > 0.5 and one[0, 1] == pytest.approx(0.0)


def test_unsupported_reason_messages():
    directions = make_fake("directions")
    scree = make_fake("scree")
    dppca = make_fake("dppca")
    assert _common.unsupported_reason(dppca, "ScoreDisplay") is None
    assert "DPScree or DPPCA" in _common.unsupported_reason(directions, "ScreeDisplay")
    msg = _common.unsupported_reason(scree, "ScoreDisplay")
    assert msg.startswith("ScoreDisplay needs a fitted DPPCA; FakeDPScree has no score")

    class PCA:
        components_ = np.eye(2)

    assert "not a private estimator" in _common.unsupported_reason(PCA(), "LoadingDisplay")


def test_check_estimator_for_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        _common.check_estimator_for(NotFitted(), "LoadingDisplay")


def test_importing_package_does_not_import_pyplot(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; import sklearn_dppca.display, sklearn_dppca.datasets; "
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'"
    )
    # run outside the source tree, on the package as this process imports it
    package_root = Path(sklearn_dppca.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, env=env)


class _Unrelated:
    """Has ``fit`` but is no scikit-learn estimator (no ``__sklearn_tags__``)."""

    components_ = np.eye(2)

    def fit(self, X=None, y=None):
        return self


@pytest.mark.parametrize("entry", ["ScreeDisplay", "LoadingDisplay", "ScoreDisplay",
                                   "VariableDisplay", "BiplotDisplay", "plot_overview"])
@pytest.mark.parametrize("thing", [_Unrelated(), sklearn_dppca.DPPCA, None, "DPPCA"],
                         ids=["unrelated object", "class", "None", "string"])
def test_a_non_estimator_is_a_type_error_on_every_scikit_learn(entry, thing):
    # scikit-learn 1.6's check_is_fitted says NotFittedError for such objects and
    # later releases AttributeError: the displays decide themselves
    from sklearn_dppca import display

    function = getattr(display, entry)
    function = getattr(function, "from_estimator", function)
    with pytest.raises(TypeError, match="not a scikit-learn estimator instance"):
        function(thing)
