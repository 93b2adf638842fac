"""The JSON release: exactly the released quantities, finite, and loadable by the displays."""

import copy
import json
import math
import numbers
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from sklearn_dppca import (
    DPPCA,
    DPKendallDirections,
    DPScree,
    InvalidParameterError,
    ReleasedPCA,
    export_release,
    load_release,
)
from sklearn_dppca._names import feature_names
from sklearn_dppca._release_layout import FORMAT, NONPRIVATE_KEY
from sklearn_dppca._release_layout import LAYOUT
from sklearn_dppca._released_pca import SEEDED_KEY
from sklearn_dppca.datasets import make_gaussian_clusters

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from sklearn_dppca.display import (  # noqa: E402
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
    plot_overview,
)

GROUPS = ["G1", "G2", "G3", "G4", "G5"]
RELEASE_KEYS = {
    "format", "software", "estimator", "n_samples", "n_features", "feature_names",
    "n_components", "components", "explained_variance", "explained_variance_raw",
    "explained_variance_ratio", "explained_variance_ratio_noise_scale", "noise_scale",
    "clip_bounds", "kendall_matrix",
    "kendall_eigenvalues", "axes", "frame", "bin_edges", "score_histogram", "groups",
    "score_histograms", "synthetic_scores", "synthetic_groups", "budget",
    "privacy_spent", "privacy_ledger", "scale", "feature_variance",
    "feature_variance_noise_scale", "total_variance", "total_variance_noise_scale",
    "histogram_threshold", "expected_noise_cells", "radius", "plan", "scale_origin",
}
#: keys left out of a file when null and null in the fits below (a radius only
#: with radial="clipped", the columns' scale origins only with scale=True)
OMITTED_WHEN_NULL = {"radius", "scale_origin"}
NEW_ATTRIBUTES = ("scale_", "explained_variance_ratio_noise_scale_", "feature_variance_",
                  "feature_variance_noise_scale_",
                  "total_variance_", "total_variance_noise_scale_", "histogram_threshold_",
                  "expected_noise_cells_")
DISPLAYS = [ScreeDisplay, LoadingDisplay, ScoreDisplay, VariableDisplay, BiplotDisplay]


@pytest.fixture(scope="module")
def data():
    # (2,000 rows: the plan buys every part of the fits below)
    return make_gaussian_clusters(400, return_groups=True, random_state=0)


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    # a large eps keeps cells of every group above the threshold, so the release
    # holds synthetic points of every group
    return DPPCA(n_components=3, eps=8.0, groups=GROUPS, compute_nonprivate=True,
                 random_state=0).fit(X, y)


def _walk(value):
    """Every key and leaf of a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)
    else:
        yield value


def test_export_holds_exactly_the_released_quantities(fitted):
    release = export_release(fitted, allow_seeded=True)
    # (the fixture is seeded: its file says so)
    assert set(release) == (RELEASE_KEYS - OMITTED_WHEN_NULL) | {SEEDED_KEY}
    assert release["format"] == FORMAT
    # valid strict JSON: no NaN or infinity anywhere
    text = json.dumps(release, allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text
    assert release["n_samples"] == 2000 and release["n_features"] == 20
    assert release["feature_names"] == [f"x{j}" for j in range(20)]
    assert np.array_equal(release["components"], fitted.components_)
    assert release["groups"] == GROUPS
    assert len(release["score_histograms"]) == len(GROUPS)
    assert release["axes"] == [0, 1]
    assert len(release["privacy_ledger"]) == len(fitted.privacy_ledger_)
    spent = release["privacy_spent"]
    assert spent["eps"] <= 8.0 and spent["delta"] <= 1e-5
    assert math.isclose(spent["eps"], sum(e["eps"] for e in release["privacy_ledger"]))


def test_no_nonprivate_value_and_no_seed_without_request(fitted):
    release = export_release(fitted, allow_seeded=True)
    keys = [key for key in _walk(release) if isinstance(key, str)]
    assert NONPRIVATE_KEY not in release
    assert not any("nonprivate" in key.lower() for key in release)
    assert "NOT_PRIVATE" not in json.dumps(release)
    # the ordinary PCA scores and directions appear nowhere
    reference = fitted.nonprivate_
    assert not np.allclose(release["components"], reference.components)
    assert "random_state" not in release["estimator"]["params"]
    assert release["estimator"]["seeded"] is True
    assert "random_state" not in keys


def test_nonprivate_reference_only_under_its_key(fitted):
    release = export_release(fitted, include_nonprivate=True, allow_seeded=True)
    assert set(release) == (RELEASE_KEYS - OMITTED_WHEN_NULL) | {NONPRIVATE_KEY,
                                                                  SEEDED_KEY}
    block = release[NONPRIVATE_KEY]
    assert "NOT PRIVATE" in block["WARNING"]
    assert np.allclose(block["components"], fitted.nonprivate_.components)
    assert np.allclose(block["scores"], fitted.nonprivate_.scores)
    loaded = load_release(release)
    assert loaded.nonprivate_ is not None
    assert np.allclose(loaded.nonprivate_.explained_variance,
                       fitted.nonprivate_.explained_variance)


def test_include_nonprivate_needs_a_stored_reference(data):
    X, _ = data
    pca = DPPCA(random_state=0).fit(X)
    with pytest.raises(ValueError, match="compute_nonprivate"):
        export_release(pca, include_nonprivate=True, allow_seeded=True)


def test_file_round_trip_restores_every_attribute(fitted, tmp_path):
    path = tmp_path / "released.json"
    returned = export_release(fitted, path, allow_seeded=True)
    # the path comes back, not the content (a notebook would print hundreds of KB)
    assert isinstance(returned, Path) and returned == path
    assert json.loads(path.read_text(encoding="utf-8")) == export_release(fitted, allow_seeded=True)
    loaded = load_release(path)
    assert isinstance(loaded, ReleasedPCA)
    check_is_fitted(loaded)
    for attribute in ("components_", "explained_variance_", "explained_variance_raw_",
                      "explained_variance_ratio_", "score_histogram_",
                      "synthetic_scores_", "kendall_matrix_", "clip_bounds_"):
        assert np.array_equal(getattr(loaded, attribute),
                              getattr(fitted, attribute)), attribute
    assert loaded.n_samples_ == fitted.n_samples_
    assert loaded.n_features_in_ == fitted.n_features_in_
    assert loaded.n_components_ == fitted.n_components_
    assert loaded.axes_ == fitted.axes_
    assert loaded.groups_ == fitted.groups_
    assert np.array_equal(loaded.frame_.center, fitted.frame_.center)
    assert loaded.frame_.radius == fitted.frame_.radius
    assert loaded.frame_.half_width == fitted.frame_.half_width
    assert np.allclose(loaded.frame_.extent, fitted.frame_.extent)
    for mine, theirs in zip(loaded.bin_edges_, fitted.bin_edges_):
        assert np.array_equal(mine, theirs)
    assert list(loaded.score_histograms_) == GROUPS
    for label in GROUPS:
        assert np.array_equal(loaded.score_histograms_[label],
                              fitted.score_histograms_[label])
    assert list(loaded.synthetic_groups_) == list(fitted.synthetic_groups_)
    assert loaded.privacy_spent_ == fitted.privacy_spent_
    assert loaded.privacy_ledger_ == fitted.privacy_ledger_
    assert loaded.budget_ == fitted.budget_
    assert loaded.nonprivate_ is None
    assert loaded.estimator_class_ == "DPPCA"
    assert loaded.estimator_params_["groups"] == GROUPS


def test_released_pca_is_read_only_and_its_fit_a_no_op(fitted, data):
    loaded = load_release(export_release(fitted, allow_seeded=True))
    with pytest.raises(AttributeError, match="read-only"):
        loaded.components_ = np.zeros((3, 20))
    with pytest.raises(AttributeError):
        del loaded.frame_
    with pytest.raises(ValueError):
        loaded.components_[0, 0] = 1.0
    assert "DPPCA" in repr(loaded)
    # frozen: fit reads nothing, changes nothing and spends nothing
    before = {name: copy.deepcopy(value) for name, value in vars(loaded).items()}
    X, y = data
    assert loaded.fit(X, y) is loaded
    assert loaded.fit(X[:5] * 1e6) is loaded
    assert loaded.fit() is loaded
    assert vars(loaded).keys() == before.keys()
    for name, value in before.items():
        assert _equal(getattr(loaded, name), value), name
    assert clone(loaded) is loaded
    # (private names are a meta-estimator's bookkeeping, not released values)
    loaded._parent_context = "set by a Pipeline"
    del loaded._parent_context


def _equal(a, b):
    """Equal values, arrays and nested containers included (NaN equals NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, z) for x, z in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def test_a_release_is_a_pipeline_step():
    # a release of the wine data's directions feeds a classifier: fitting the
    # pipeline fits the classifier alone, on the release's projections
    X, y = load_wine(return_X_y=True)
    release = load_release(export_release(
        DPKendallDirections(n_components=2, scale=True, random_state=0).fit(X), allow_seeded=True))
    components = release.components_.copy()
    pipe = make_pipeline(release, StandardScaler(), LogisticRegression()).fit(X, y)
    assert pipe[0] is release
    reference = make_pipeline(StandardScaler(), LogisticRegression()).fit(
        release.transform(X), y)
    assert np.array_equal(pipe.predict(X), reference.predict(release.transform(X)))
    assert np.array_equal(pipe.predict_proba(X), reference.predict_proba(release.transform(X)))
    check_is_fitted(pipe)
    # cross-validation clones the pipeline: every fold reuses the one release
    folds = cross_validate(pipe, X, y, cv=3, return_estimator=True)
    assert all(fold[0] is release for fold in folds["estimator"])
    assert np.array_equal(release.components_, components)


def test_released_transform_matches_the_estimator(fitted, data):
    loaded = load_release(export_release(fitted, allow_seeded=True))
    assert np.allclose(loaded.transform(data[0]), fitted.transform(data[0]))
    with pytest.raises(ValueError, match="shape"):
        loaded.transform(data[0][:, :5])


def test_every_display_accepts_a_loaded_release(fitted, tmp_path):
    path = tmp_path / "released.json"
    export_release(fitted, path, include_nonprivate=True, allow_seeded=True)
    loaded = load_release(path)
    for display in DISPLAYS:
        shown = display.from_estimator(loaded)
        assert shown.ax_ is not None and shown.figure_ is not None
    figure = plot_overview(loaded)
    assert set(figure.displays_) == {"scree", "loading", "score", "variable", "biplot"}
    summary = str(loaded.summary())
    assert "DP PCA Release Summary" in summary and "PC3" in summary
    assert "stored (not private)" in summary


def test_scree_and_directions_releases(data):
    X, _ = data
    scree = load_release(export_release(DPScree(n_components=3, random_state=0).fit(X), allow_seeded=True))
    assert scree.frame_ is None and scree.score_histogram_ is None
    assert scree.explained_variance_.shape == (3,)
    ScreeDisplay.from_estimator(scree)
    with pytest.raises(TypeError):
        ScoreDisplay.from_estimator(scree)
    directions = load_release(export_release(DPKendallDirections(2, random_state=0).fit(X), allow_seeded=True))
    assert directions.explained_variance_ is None
    assert directions.kendall_eigenvalues_.shape == (20,)
    LoadingDisplay.from_estimator(directions)
    with pytest.raises(TypeError):
        ScreeDisplay.from_estimator(directions)
    plot_overview(directions)


@pytest.mark.parametrize("attribute, value", [
    # (NaN is "not estimable" only in the entries that declare it)
    ("explained_variance_", np.inf),
    ("components_", np.nan),
    ("synthetic_scores_", np.nan),
    ("synthetic_scores_", np.inf),
    ("components_", -np.inf),
])
def test_non_finite_values_are_never_written(fitted, tmp_path, attribute, value):
    broken = copy.deepcopy(fitted)
    array = getattr(broken, attribute).copy()
    array.flat[0] = value
    setattr(broken, attribute, array)
    path = tmp_path / "released.json"
    with pytest.raises(ValueError, match="NaN or inf"):
        export_release(broken, path, allow_seeded=True)
    assert not path.exists()


def test_load_rejects_bad_content(fitted, tmp_path):
    release = export_release(fitted, allow_seeded=True)
    with pytest.raises(ValueError, match="format"):
        load_release({**release, "format": "something-else/1"})
    with pytest.raises(ValueError, match="not supported"):
        load_release({**release, "format": "sklearn-dppca-release/99"})
    with pytest.raises(ValueError, match="components"):
        load_release({**release, "components": release["components"][:2]})
    with pytest.raises(ValueError, match="no 'privacy_spent'"):
        load_release({k: v for k, v in release.items() if k != "privacy_spent"})
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(release).replace(
        str(release["explained_variance"][0]), "NaN", 1), encoding="utf-8")
    with pytest.raises(ValueError, match="NaN"):
        load_release(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_release(path)


def _set(key, value):
    def damage(release):
        release[key] = value
    return damage


def _set_in(key, inner, value):
    def damage(release):
        release[key][inner] = value
    return damage


def _edit(function):
    def damage(release):
        function(release)
    return damage


# (damage, the entry the error must name): each leaves a dict that json.dumps
# accepts but that export_release could never have written. The fitted release has
# n_components=3, 20 x 20 bins, five groups and synthetic points.
TAMPERED = {
    "n_samples bool": (_set("n_samples", True), "n_samples"),
    "n_samples negative": (_set("n_samples", -1), "n_samples"),
    "n_samples fraction": (_set("n_samples", 2.5), "n_samples"),
    "n_components fraction": (_set("n_components", 2.5), "n_components"),
    "feature names not strings": (_edit(lambda r: r.update(
        feature_names=list(range(len(r["feature_names"]))))), "feature_names"),
    "axes repeated": (_set("axes", [0, 0]), "axes"),
    "axes beyond components": (_set("axes", [0, 3]), "axes"),
    "axes empty": (_set("axes", []), "axes"),
    "axes as strings": (_set("axes", ["0", "1"]), "axes"),
    "axes dropped": (_set("axes", None), "axes"),
    "frame dropped": (_set("frame", None), "frame"),
    "frame extent short": (_edit(lambda r: r["frame"].update(
        extent=r["frame"]["extent"][:3])), "frame.extent"),
    "frame extent reversed": (_edit(lambda r: r["frame"].update(
        extent=r["frame"]["extent"][::-1])), "extent"),
    "frame not an object": (_set("frame", [1.0]), "frame"),
    "one list of edges": (_edit(lambda r: r.update(bin_edges=r["bin_edges"][:1])),
                          "bin_edges"),
    "edges decreasing": (_edit(lambda r: r["bin_edges"].__setitem__(
        0, r["bin_edges"][0][::-1])), "bin_edges"),
    "histogram misses a row": (_edit(lambda r: r.update(
        score_histogram=r["score_histogram"][:-1])), "score_histogram"),
    "group histogram misses a column": (_edit(lambda r: r["score_histograms"].__setitem__(
        0, [row[:-1] for row in r["score_histograms"][0]])), "score_histograms"),
    "group histograms unaligned": (_edit(lambda r: r.update(
        score_histograms=r["score_histograms"][:-1])), "score_histograms"),
    "groups a string": (_set("groups", "G1"), "groups"),
    "groups repeated": (_edit(lambda r: r.update(groups=["G1"] * len(r["groups"]))),
                        "groups"),
    "synthetic points in 3-D": (_edit(lambda r: r.update(
        synthetic_scores=[row + [0.0] for row in r["synthetic_scores"]])),
        "synthetic_scores"),
    "synthetic labels short": (_edit(lambda r: r.update(
        synthetic_groups=r["synthetic_groups"][:-1])), "synthetic_groups"),
    "synthetic label unknown": (_edit(lambda r: r["synthetic_groups"].__setitem__(
        0, "nowhere")), "synthetic_groups"),
    "budget a list": (_set("budget", [1.0]), "budget"),
    "budget part not a pair": (_set_in("budget", "loading", [0.4]), "budget.loading"),
    "estimator a string": (_set("estimator", "x"), "estimator"),
    "estimator params a list": (_set_in("estimator", "params", [1]), "estimator.params"),
    "seeded a string": (_set_in("estimator", "seeded", "no"), "estimator.seeded"),
    "software a number": (_set("software", 5), "software"),
    "ledger an object": (_set("privacy_ledger", {}), "privacy_ledger"),
    "ledger of numbers": (_set("privacy_ledger", [1, 2]), "privacy_ledger"),
    "ledger empty": (_set("privacy_ledger", []), "privacy_ledger"),
    "ledger above the total": (_edit(lambda r: r["privacy_ledger"][0].update(
        eps=r["privacy_spent"]["eps"] * 2)), "privacy ledger"),
    "spent delta 1": (_set_in("privacy_spent", "delta", 1.0), "privacy_spent"),
    "spent a list": (_set("privacy_spent", [1.0, 1e-5]), "privacy_spent"),
    "noise scale negative": (_edit(lambda r: r.update(
        noise_scale=[-abs(v) for v in r["noise_scale"]])), "noise_scale"),
    "noise scale bool": (_set("noise_scale", True), "noise_scale"),
    "noise scale wrong length": (_set("noise_scale", [1.0] * 7), "noise_scale"),
    "clip bound zero": (_set("clip_bounds", [0.0]), "clip_bounds"),
    "kendall matrix 1 x 1": (_set("kendall_matrix", [[1.0]]), "kendall_matrix"),
    "scree ratio dropped": (_set("explained_variance_ratio", None),
                            "explained_variance_ratio"),
    "reference components of other width": (_edit(lambda r: r[NONPRIVATE_KEY].update(
        components=[[1.0]])), "components"),
    "reference a list": (_set(NONPRIVATE_KEY, [1.0]), NONPRIVATE_KEY),
    "ratio above 1": (_edit(lambda r: r["explained_variance_ratio"].__setitem__(0, 1.5)),
                      "'explained_variance_ratio'"),
    "ratios summing above 1": (_set("explained_variance_ratio", [0.5, 0.4, 0.3]),
                               "'explained_variance_ratio'"),
    "scale zero": (_edit(lambda r: r.update(scale=[0.0] * r["n_features"])), "'scale'"),
    "scale negative": (_edit(lambda r: r.update(scale=[-1.0] * r["n_features"])),
                       "'scale'"),
    "scale short": (_set("scale", [1.0, 2.0]), "'scale'"),
    "scale a number": (_set("scale", 2.0), "'scale'"),
    "scale a string": (_set("scale", "unit"), "'scale'"),
    "feature variance negative": (_edit(lambda r: r["feature_variance"].__setitem__(
        0, -1.0)), "'feature_variance'"),
    "feature variance short": (_edit(lambda r: r.update(
        feature_variance=r["feature_variance"][:-1])), "'feature_variance'"),
    "feature variance dropped": (_set("feature_variance", None), "'feature_variance'"),
    "feature variance noise negative": (_edit(
        lambda r: r["feature_variance_noise_scale"].__setitem__(0, -1.0)),
        "'feature_variance_noise_scale'"),
    "feature variance noise a matrix": (_edit(lambda r: r.update(
        feature_variance_noise_scale=[r["feature_variance_noise_scale"]])),
        "'feature_variance_noise_scale'"),
    "feature variance noise dropped": (_set("feature_variance_noise_scale", None),
                                       "'feature_variance_noise_scale'"),
    "total variance negative": (_set("total_variance", -1.0), "'total_variance'"),
    "total variance below the retained ones": (_edit(lambda r: r.update(
        total_variance=sum(r["explained_variance"]) / 2)), "'total_variance'"),
    "total variance a list": (_set("total_variance", [1.0]), "'total_variance'"),
    "total variance a string": (_set("total_variance", "big"), "'total_variance'"),
    "total variance bool": (_set("total_variance", True), "'total_variance'"),
    "total variance dropped": (_set("total_variance", None), "'total_variance'"),
    "total variance noise negative": (_set("total_variance_noise_scale", -0.1),
                                      "'total_variance_noise_scale'"),
    "total variance noise dropped": (_set("total_variance_noise_scale", None),
                                     "'total_variance_noise_scale'"),
    "histogram threshold negative": (_set("histogram_threshold", -2.0),
                                     "'histogram_threshold'"),
    "histogram threshold a list": (_set("histogram_threshold", [2.0]),
                                   "'histogram_threshold'"),
    "histogram threshold without histogram": (_edit(lambda r: r.update(
        frame=None, bin_edges=None, score_histogram=None, score_histograms=None,
        synthetic_scores=None, synthetic_groups=None, groups=None, axes=None,
        expected_noise_cells=None, histogram_threshold=3.0)), "'histogram_threshold'"),
    "expected noise cells negative": (_set("expected_noise_cells", -0.5),
                                      "'expected_noise_cells'"),
    "expected noise cells a string": (_set("expected_noise_cells", "few"),
                                      "'expected_noise_cells'"),
    "expected noise cells dropped": (_set("expected_noise_cells", None),
                                     "'expected_noise_cells'"),
    "expected noise cells without histogram": (_edit(lambda r: r.update(
        frame=None, bin_edges=None, score_histogram=None, score_histograms=None,
        synthetic_scores=None, synthetic_groups=None, groups=None, axes=None,
        histogram_threshold=None)), "'expected_noise_cells'"),
    "reference feature variance short": (_edit(lambda r: r[NONPRIVATE_KEY].update(
        feature_variance=[1.0])), "feature_variance"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_load_rejects_a_tampered_entry_naming_it(fitted, case):
    """A hand-edited release fails in load_release, naming the entry (issue 9)."""
    release = copy.deepcopy(export_release(fitted, include_nonprivate=True, allow_seeded=True))
    load_release(copy.deepcopy(release))            # the untouched release loads
    damage, entry = TAMPERED[case]
    damage(release)
    with pytest.raises(ValueError, match=re.escape(entry)) as caught:
        load_release(json.loads(json.dumps(release)))
    # a bad file is bad data, not a bad argument: a plain ValueError
    assert caught.type is not InvalidParameterError


def test_new_entries_round_trip(fitted, tmp_path):
    release = export_release(fitted, allow_seeded=True)
    assert release["scale"] is None
    assert len(release["feature_variance"]) == 20
    assert release["total_variance"] >= sum(release["explained_variance"])
    assert release["histogram_threshold"] > 0
    loaded = load_release(json.loads(json.dumps(release)))
    for attribute in NEW_ATTRIBUTES:
        mine, theirs = getattr(loaded, attribute), getattr(fitted, attribute)
        if theirs is None:
            assert mine is None, attribute
        else:
            assert np.array_equal(mine, theirs, equal_nan=True), attribute
    text = str(loaded.summary())
    assert "Total variance" in text
    assert "pure-noise cells expected to pass" in text


def test_scaled_fit_round_trip(data, tmp_path):
    X, _ = data
    X = X * np.linspace(0.1, 50.0, X.shape[1])       # very different column spreads
    # (300 rows: eps = 8 keeps the score frame from collapsing)
    pca = DPPCA(n_components=3, eps=8.0, scale=True, histogram="sparse",
                random_state=0).fit(X)
    path = tmp_path / "scaled.json"
    export_release(pca, path, allow_seeded=True)
    loaded = load_release(path)
    # (a spread whose search stopped far below its level is NaN: not estimable)
    assert loaded.scale_.shape == (20,) and np.all(np.isnan(loaded.scale_)
                                                   | (loaded.scale_ > 0))
    assert np.array_equal(loaded.scale_, pca.scale_, equal_nan=True)
    for attribute in NEW_ATTRIBUTES:
        if getattr(pca, attribute) is not None:
            assert np.array_equal(getattr(loaded, attribute), getattr(pca, attribute),
                                  equal_nan=True)
    assert loaded.histogram_threshold_ is None and loaded.expected_noise_cells_ == 0.0
    # transform divides by the released spreads, as the estimator does
    assert np.allclose(loaded.transform(X), pca.transform(X))
    divisors = np.where(np.isnan(pca.scale_), 1.0, pca.scale_)
    assert np.allclose(loaded.transform(X), (X / divisors) @ pca.components_.T)
    assert "private spreads" in str(loaded.summary())
    directions = load_release(export_release(
        DPKendallDirections(2, random_state=0).fit(X), allow_seeded=True))
    assert directions.feature_variance_ is None and directions.total_variance_ is None


def test_integer_group_labels_keep_their_type(data):
    X, y = data
    codes = np.array([int(label[1:]) for label in y])
    pca = DPPCA(groups=[1, 2, 3, 4, 5], eps=8.0, random_state=0).fit(X, codes)
    release = export_release(pca, allow_seeded=True)
    assert release["groups"] == [1, 2, 3, 4, 5]
    loaded = load_release(json.loads(json.dumps(release)))
    assert list(loaded.score_histograms_) == [1, 2, 3, 4, 5]
    assert set(loaded.synthetic_groups_) <= {1, 2, 3, 4, 5}
    ScoreDisplay.from_estimator(loaded)


def test_extra_metadata_is_kept_and_cannot_shadow_the_release(fitted):
    release = export_release(fitted, extra={"data_source": "unit test", "rows": np.int64(3)}, allow_seeded=True)
    assert release["data_source"] == "unit test" and release["rows"] == 3
    loaded = load_release(release)
    assert loaded.release_ == {"data_source": "unit test", "rows": 3}
    assert export_release(loaded, allow_seeded=True)["data_source"] == "unit test"
    with pytest.raises(ValueError, match="reuse keys"):
        export_release(fitted, extra={"components": [[0.0]]}, allow_seeded=True)


def test_infinite_parameters_are_written_as_strings(data):
    X, _ = data
    pca = DPPCA(scree_method="pmwm", scree_params={"b": np.inf}, random_state=0).fit(X)
    release = export_release(pca, allow_seeded=True)
    assert release["estimator"]["params"]["scree_params"]["b"] == "inf"
    json.dumps(release, allow_nan=False)
    assert load_release(release).estimator_params_["scree_params"]["b"] == np.inf


def test_unfitted_or_foreign_estimators_are_refused():
    with pytest.raises(NotFittedError):
        export_release(DPPCA(), allow_seeded=True)
    from sklearn.decomposition import PCA

    with pytest.raises(TypeError, match="privacy_ledger_"):
        export_release(PCA(2).fit(np.random.default_rng(0).normal(size=(20, 3))), allow_seeded=True)


# ------------------------------------------------------------------ the layout
FIXTURES = Path(__file__).parent / "data"
FORMAT_1_RELEASES = sorted(path.name for path in FIXTURES.glob("release_v1_*.json")
                           if not path.name.endswith(".loaded.json"))


def _snapshot(value):
    """A JSON-able, type-tagged copy of a loaded release's attributes (how
    ``tests/data/*.loaded.json`` recorded what the format-1 reader loaded)."""
    if isinstance(value, ReleasedPCA):
        return {name: _snapshot(item) for name, item in sorted(vars(value).items())}
    if isinstance(value, np.ndarray):
        return {"ndarray": value.tolist(), "dtype": str(value.dtype),
                "writeable": bool(value.flags.writeable)}
    if isinstance(value, dict):
        return {"dict": [[_snapshot(k), _snapshot(v)] for k, v in value.items()],
                "type": type(value).__name__}
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [_snapshot(item) for item in value]}
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        return {"int": int(value)}
    return {"float": float(value) if np.isfinite(value) else repr(float(value))}


@pytest.mark.parametrize("name", FORMAT_1_RELEASES)
def test_a_format_1_file_loads_as_it_always_did(name):
    """Files written before the layout was declared once load to the same
    attributes (values, types, read-only flags), and write back byte for byte."""
    path = FIXTURES / name
    loaded = load_release(path)
    expected = json.loads((FIXTURES / name.replace(".json", ".loaded.json")).read_text())
    snapshot = json.loads(json.dumps(_snapshot(loaded)))
    # computed from the file's own values since (post-processing, not stored)
    derived = {"kendall_noise_scale_", "components_noise_scale_"}
    # entries added to the format since: absent from these files
    added = {"_plan_rows", "scale_origin_", "explained_variance_ratio_noise_scale_"}
    assert loaded.plan_ is None and loaded.scale_origin_ is None
    assert loaded.explained_variance_ratio_noise_scale_ is None
    assert {key: value for key, value in snapshot.items()
            if key not in derived | added} == expected
    if loaded.kendall_matrix_ is not None and loaded.kendall_noise_scale_ is not None:
        assert loaded.components_noise_scale_.shape == loaded.components_.shape
    again = export_release(loaded, include_nonprivate=loaded.nonprivate_ is not None,
                           allow_seeded=True)
    # a seeded file written back is marked as seeded since; the rest is as it was
    assert again.pop(SEEDED_KEY).startswith("made with a fixed random_state")
    text = json.dumps(again, indent=1, allow_nan=False) + "\n"
    assert text == path.read_text(encoding="utf-8")


def test_the_layout_declares_every_key_once():
    keys = [entry.key for entry in LAYOUT]
    assert len(keys) == len(set(keys))
    assert set(keys) == RELEASE_KEYS | {NONPRIVATE_KEY}
    attributes = [name for entry in LAYOUT if entry.attribute is not None
                  for name in np.atleast_1d(entry.attribute)]
    assert len(attributes) == len(set(attributes))
    for entry in LAYOUT:
        assert set(entry.needs) <= set(keys), entry.key
        assert set(entry.written_by) <= {"DPKendallDirections", "DPScree", "DPPCA"}


def _configs(data):
    """One fitted estimator per kind of release (DataFrame input: named columns)."""
    X, y = data
    frame = pd.DataFrame(X * np.linspace(0.5, 5.0, X.shape[1]),
                         columns=[f"v{j}" for j in range(X.shape[1])])
    groups = sorted(set(y))
    directions = DPKendallDirections(3, random_state=0).fit(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "directions": (directions, frame),
            "directions, scaled": (DPKendallDirections(2, scale=True,
                                                       random_state=1).fit(X), X),
            "scree": (DPScree(3, eps=4.0, random_state=2).fit(frame), frame),
            # (eps 8: at 4 the spreads take the scree's budget, see plan_)
            "scree, scaled and whitened": (DPScree(2, eps=8.0, scale=True, whiten=True,
                                                   random_state=3).fit(X), X),
            "scree on reused directions": (DPScree(eps=4.0, delta=1e-4,
                                                   directions=FrozenEstimator(directions),
                                                   random_state=4).fit(frame), frame),
            "pca": (DPPCA(3, eps=8.0, random_state=5).fit(frame), frame),
            "pca with groups": (DPPCA(3, eps=8.0, groups=groups, compute_nonprivate=True,
                                      random_state=6).fit(X, y), X),
            "pca, scaled": (DPPCA(eps=8.0, scale=True, random_state=7).fit(frame), frame),
            "pca, whitened": (DPPCA(3, eps=8.0, whiten=True, random_state=8).fit(X), X),
            # the clip radius (radius_) is released and must travel with the file
            "directions, clipped": (DPKendallDirections(2, eps=4.0, radial="clipped",
                                                        random_state=9).fit(X), X),
            "pca, clipped": (DPPCA(2, eps=8.0, radial="clipped",
                                   random_state=10).fit(frame), frame),
        }


@pytest.fixture(scope="module")
def configs(data):
    return _configs(data)


CONFIGS = ["directions", "directions, scaled", "scree", "scree, scaled and whitened",
           "scree on reused directions", "pca", "pca with groups", "pca, scaled",
           "pca, whitened", "directions, clipped", "pca, clipped"]


def _same(mine, theirs):
    if isinstance(theirs, dict):
        return list(mine) == list(theirs) and all(
            _same(mine[key], theirs[key]) for key in theirs)
    if isinstance(theirs, pd.DataFrame):    # the plan
        return mine.equals(theirs)
    if hasattr(theirs, "center"):           # the score frame
        return all(np.array_equal(mine[key], theirs[key])
                   for key in ("center", "radius", "half_width", "extent"))
    if isinstance(theirs, (tuple, list)) and theirs and isinstance(theirs[0], np.ndarray):
        return all(np.array_equal(a, b) for a, b in zip(mine, theirs))
    if isinstance(theirs, (np.ndarray, list, tuple, numbers.Real)):
        mine, theirs = np.asarray(mine, dtype=object), np.asarray(theirs, dtype=object)
        # NaN (not estimable) equals NaN
        return mine.shape == theirs.shape and all(
            a == b or (a != a and b != b) for a, b in zip(mine.ravel(), theirs.ravel()))
    return mine == theirs


@pytest.mark.parametrize("config", CONFIGS)
def test_every_estimator_round_trips(configs, config):
    estimator, X = configs[config]
    reference = estimator.nonprivate_ is not None
    release = export_release(estimator, include_nonprivate=reference, allow_seeded=True)
    loaded = load_release(json.loads(json.dumps(release)))
    kind = type(estimator).__name__
    for entry in LAYOUT:
        if release.get(entry.key) is not None:
            assert kind in entry.written_by, entry.key
        if entry.kind in ("format", "software", "estimator", "nonprivate"):
            continue
        theirs = getattr(estimator, entry.attribute, None)
        mine = getattr(loaded, entry.attribute)
        if entry.kind == "names":       # x0, x1, ... for an array
            assert list(mine) == feature_names(estimator)
        elif theirs is None:
            assert mine is None, entry.key
        else:
            assert _same(mine, theirs), entry.key
    assert loaded.estimator_class_ == kind
    assert (loaded.nonprivate_ is None) == (not reference)
    assert export_release(loaded, include_nonprivate=reference, allow_seeded=True) == release


@pytest.mark.parametrize("config", CONFIGS)
def test_a_release_projects_as_its_estimator(configs, config):
    estimator, X = configs[config]
    loaded = load_release(export_release(estimator, allow_seeded=True))
    assert np.allclose(loaded.transform(X), estimator.transform(X), rtol=1e-12, atol=0)
    if getattr(estimator, "whiten", False):
        # whitening divides each projection by its private sd: about 4x here
        # (a spread that is not estimable divides by 1; a variance that is not
        # estimable whitens to 0)
        plain = np.asarray(X, dtype=float) / (1 if estimator.scale_ is None
                                              else np.nan_to_num(estimator.scale_, nan=1.0))
        plain = plain @ estimator.components_.T
        positive = np.nan_to_num(estimator.explained_variance_) > 0
        assert positive.any()
        whitened = loaded.transform(X)[:, positive]
        assert not np.allclose(whitened, plain[:, positive])
        assert np.allclose(whitened * np.sqrt(estimator.explained_variance_[positive]),
                           plain[:, positive])


def test_a_release_of_a_frame_fit_projects_a_frame_by_column_name(configs):
    estimator, frame = configs["pca, scaled"]
    loaded = load_release(export_release(estimator, allow_seeded=True))
    shuffled = frame[list(frame.columns[::-1])]
    assert np.allclose(loaded.transform(shuffled), estimator.transform(frame))
    with pytest.raises(ValueError, match="lacks the released columns"):
        loaded.transform(frame.drop(columns=["v0"]))


def test_a_release_names_the_directions_it_reused(configs):
    # frozen directions are written as the class they freeze, marked frozen
    release = export_release(configs["scree on reused directions"][0], allow_seeded=True)
    assert release["estimator"]["params"]["directions"] == {
        "estimator": "DPKendallDirections", "frozen": True}
    assert load_release(release).estimator_params_["directions"]["frozen"] is True


def test_a_whitened_release_without_variances_is_refused(configs):
    release = export_release(configs["directions"][0], allow_seeded=True)
    release["estimator"]["params"]["whiten"] = True
    with pytest.raises(ValueError, match="whiten=True"):
        load_release(release).transform(configs["directions"][1])


@pytest.mark.parametrize("config", CONFIGS)
def test_a_release_prints_the_summary_of_its_estimator(configs, config):
    estimator, _ = configs[config]
    reference = estimator.nonprivate_ is not None
    loaded = load_release(export_release(estimator, include_nonprivate=reference, allow_seeded=True))
    mine, theirs = str(loaded.summary()).splitlines(), str(estimator.summary()).splitlines()
    # the title says it is a release, and of which estimator; the rest is the same
    assert mine[0] == theirs[0]      # the parts released
    assert mine[1] == "DP PCA Release Summary"
    assert mine[3] == f"Estimator: {type(estimator).__name__}"
    assert mine[4:] == theirs[3:]


def _projection_on_the_span(estimator, X):
    """The orthogonal projection of X on the span of the components (in the
    units the components act on: after the spreads with scale=True), built
    independently of the package's helpers. Whitening by a zero variance sends
    a coordinate to 0, so such a component is left out of the span."""
    X = np.asarray(X, dtype=float)
    # (a spread that is not estimable, NaN, leaves its column in its own unit)
    spreads = 1.0 if estimator.scale_ is None else np.nan_to_num(
        np.asarray(estimator.scale_), nan=1.0)
    components = estimator.components_
    if getattr(estimator, "whiten", False):
        # (a variance that is 0 or not estimable whitens to 0)
        components = components[np.nan_to_num(estimator.explained_variance_) > 0]
    return ((X / spreads) @ components.T @ components) * spreads


@pytest.mark.parametrize("config", CONFIGS)
def test_inverse_transform_projects_back_on_the_span(configs, config):
    estimator, X = configs[config]
    loaded = load_release(export_release(estimator, allow_seeded=True))
    expected = _projection_on_the_span(estimator, X)
    # the data are not in the span (more features than components, or a
    # noisy basis of all of them): the round trip must not be the identity
    # unless the components span everything
    for fitted in (estimator, loaded):
        back = fitted.inverse_transform(fitted.transform(X))
        assert back.shape == np.shape(X)
        assert np.allclose(back, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    if estimator.n_components_ < estimator.n_features_in_:
        assert not np.allclose(expected, np.asarray(X, dtype=float))


def test_inverse_transform_adds_no_mean_and_keeps_float32():
    # columns on different scales, so that the released spreads are far from 1
    # and the whitening sds far from each other
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5)) @ rng.normal(size=(5, 5)) * [1.0, 3.0, 10.0, 0.5, 2.0]
    estimator = DPScree(2, eps=8.0, scale=True, whiten=True, random_state=0).fit(X)
    assert np.ptp(estimator.scale_) > 1.0
    assert np.ptp(estimator.explained_variance_) > 0.1
    X32 = np.asarray(X, dtype=np.float32)
    back = estimator.inverse_transform(estimator.transform(X32))
    assert back.dtype == np.float32
    assert np.allclose(back, _projection_on_the_span(estimator, X), rtol=1e-4,
                       atol=1e-4 * np.abs(back).max())
    # the origin projects to 0 and comes back as 0: no released centre is added
    zero = np.zeros((1, estimator.n_components_))
    assert np.array_equal(estimator.inverse_transform(zero), np.zeros((1, X.shape[1])))
    with pytest.raises(ValueError, match="X must have 2 columns"):
        estimator.inverse_transform(np.ones((3, 3)))
    with pytest.raises(ValueError, match="X must have 2 columns"):
        load_release(export_release(estimator, allow_seeded=True)).inverse_transform(np.ones((3, 3)))


def test_the_plan_round_trips_and_the_loaded_release_says_what_it_could_not_buy(tmp_path):
    # iris at eps = 1: the plan buys the directions only; a loaded release keeps
    # the plan, so its summary names the eps each missing part needs
    X = load_iris().data
    fitted = DPPCA(random_state=0).fit(X)
    path = tmp_path / "iris.json"
    export_release(fitted, path, allow_seeded=True)
    loaded = load_release(path)
    pd.testing.assert_frame_equal(loaded.plan_, fitted.plan_)
    first = str(loaded.summary()).splitlines()[0]
    assert first == str(fitted.summary()).splitlines()[0]
    assert "needs eps about" in first


def test_a_release_written_before_the_plans_splits_reads_as_before():
    # a plan without share_needed and split_needed (releases before 0.1's
    # splits): the same plan, those columns aside, and the eps each part needs
    X = load_iris().data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = DPPCA(bounds=[(4.3, 7.9), (2.0, 4.4), (1.0, 6.9), (0.1, 2.5)],
                       random_state=0).fit(X)
    release = export_release(fitted, allow_seeded=True)
    assert any(row["split_needed"] for row in release["plan"])
    release["plan"] = [{key: value for key, value in row.items()
                        if key not in ("share_needed", "split_needed")}
                       for row in release["plan"]]
    loaded = load_release(release)
    pd.testing.assert_frame_equal(
        loaded.plan_, fitted.plan_.drop(columns=["share_needed", "split_needed"]))
    first, theirs = (str(item.summary()).splitlines()[0] for item in (loaded, fitted))
    assert "or at this eps the split" in theirs
    assert first == re.sub(r", or at this eps the split [^)]*", "", theirs)
    assert "variances and PVE (needs eps about" in first


@pytest.mark.parametrize("broken", [
    lambda rows: rows + ["a step"],
    lambda rows: [dict(rows[0], extra=1)] + rows[1:],
    lambda rows: [dict(rows[0], released="yes")] + rows[1:],
    lambda rows: [{k: v for k, v in rows[0].items() if k != "eps_needed"}] + rows[1:],
])
def test_a_malformed_plan_is_refused_by_name(broken):
    X = load_iris().data
    release = export_release(DPPCA(random_state=0).fit(X), allow_seeded=True)
    release["plan"] = broken(release["plan"])
    with pytest.raises(ValueError, match="plan"):
        load_release(release)


def test_a_seeded_fit_is_not_exported_as_private_without_the_override(fitted, tmp_path):
    # a fixed random_state makes the noise a function of the seed: refused,
    # nothing written
    path = tmp_path / "released.json"
    with pytest.raises(ValueError, match="fixed random_state.*allow_seeded=True"):
        export_release(fitted, path)
    assert not path.exists()
    # with the override the file says so, at the top level, and a loaded copy
    # is refused again unless the override is repeated
    export_release(fitted, path, allow_seeded=True)
    release = json.loads(path.read_text())
    assert release[SEEDED_KEY].startswith("made with a fixed random_state")
    assert release["estimator"]["seeded"] is True
    loaded = load_release(path)
    assert loaded.seeded_ and SEEDED_KEY not in loaded.release_
    with pytest.raises(ValueError, match="allow_seeded"):
        export_release(loaded)
    assert SEEDED_KEY in export_release(loaded, allow_seeded=True)


def test_an_unseeded_fit_is_exported_unmarked(data):
    X, y = data
    release = export_release(DPKendallDirections(n_components=2).fit(X))
    assert SEEDED_KEY not in release and release["estimator"]["seeded"] is False
    assert not load_release(release).seeded_


def test_every_overview_of_a_seeded_fit_says_so(data):
    from sklearn_dppca.display._estimator_access import SEEDED_MARK

    X, y = data
    seeded = DPKendallDirections(n_components=2, random_state=0).fit(X)
    unseeded = DPKendallDirections(n_components=2).fit(X)
    for estimator, marked in ((seeded, True),
                              (load_release(export_release(seeded, allow_seeded=True)), True),
                              (unseeded, False)):
        figure = plot_overview(estimator)
        assert (SEEDED_MARK in figure._suptitle.get_text()) == marked
        matplotlib.pyplot.close(figure)
