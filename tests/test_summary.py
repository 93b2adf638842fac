"""The printed summary of every estimator and release, and the text of the ledger."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dppca import DPPCA, DPKendallDirections, DPScree, export_release, load_release
from sklearn_dppca._summary import format_value, ledger_row, ledger_table
from sklearn_dppca.datasets import make_gaussian_clusters

BUDGET_HEADING = "Privacy budget by part:"
SCREE_HEADING = "Private variances (post-processed):"
SCORE_HEADING = "Score summary:"


@pytest.fixture(scope="module")
def data():
    return make_gaussian_clusters(400, n_features=10, return_groups=True, random_state=1)


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    frame = pd.DataFrame(X, columns=[f"col<{j}>" for j in range(X.shape[1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "directions": DPKendallDirections(3, random_state=0).fit(frame),
            "scree": DPScree(3, eps=4.0, scale=True, random_state=1).fit(X),
            "pca": DPPCA(3, eps=8.0, groups=sorted(set(y)), histogram="sparse",
                         compute_nonprivate=True, random_state=2).fit(X, y),
        }


def _section(text, heading):
    """The lines under ``heading`` up to the next blank line."""
    lines = text.splitlines()
    start = lines.index(heading) + 1
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


@pytest.mark.parametrize("name, title, sections", [
    ("directions", "DP PC Directions Summary", ()),
    ("scree", "DP Scree Summary", (SCREE_HEADING,)),
    ("pca", "DP PCA Summary", (BUDGET_HEADING, SCREE_HEADING, SCORE_HEADING)),
])
def test_each_estimator_prints_the_sections_it_released(fitted, name, title, sections):
    estimator = fitted[name]
    text = str(estimator.summary())
    assert text.splitlines()[0].startswith("Released: directions")
    assert text.splitlines()[1] == title
    for heading in (BUDGET_HEADING, SCREE_HEADING, SCORE_HEADING):
        assert (heading in text.splitlines()) == (heading in sections), heading
    n, p = estimator.n_samples_, estimator.n_features_in_
    assert f"Data: {n} observations x {p} variables" in text
    assert f"Components: {estimator.n_components_} PC directions" in text
    eps, delta = estimator.privacy_spent_
    assert f"Total privacy budget: eps = {eps:g} ; delta = {delta:g}" in text
    stored = "stored (not private)" if estimator.nonprivate_ is not None else "not stored"
    assert f"Non-private reference: {stored}" in text
    assert "The full direction matrix is available in components_." in text


def test_the_directions_table_shows_the_first_loadings_by_column_name(fitted):
    estimator = fitted["directions"]
    text = str(estimator.summary())
    assert "first 6 variables x first 3 PCs" in text
    rows = [line.split() for line in text.splitlines() if line.startswith("col<")]
    assert [row[0] for row in rows] == [f"col<{j}>" for j in range(6)]
    for j, row in enumerate(rows):
        assert row[1:] == [f"{value:.3f}" for value in estimator.components_[:, j]]
    html = estimator.summary()._repr_html_()
    assert "<table>" in html and "col&lt;0&gt;" in html and "col<0>" not in html


def test_the_scree_section_shows_each_variance_its_noise_and_share(fitted):
    scree = fitted["scree"]
    lines = _section(str(scree.summary()), SCREE_HEADING)
    assert lines[0].startswith("Scree method: clipped;")
    for l, (variance, noise, ratio, share_sd) in enumerate(zip(
            scree.explained_variance_, scree.noise_scale_,
            scree.explained_variance_ratio_, scree.explained_variance_ratio_noise_scale_)):
        # each PVE with its own sd, in points
        assert lines[1 + l] == (f"  PC{l + 1}: variance {variance:.4g} +- {noise:.3g} "
                                f"(sd: noise and clipping)  PVE {100 * ratio:.1f}% "
                                f"+- {100 * share_sd:.2g}%")
    assert lines[4] == (f"  Total variance {scree.total_variance_:.4g} +- "
                        f"{scree.total_variance_noise_scale_:.3g} (sd: noise and clipping)")
    assert "private spreads" in lines[5]


def test_the_pca_summary_shows_budget_parts_and_score_release(fitted):
    pca = fitted["pca"]
    text = str(pca.summary())
    budget = _section(text, BUDGET_HEADING)
    assert [line.split()[0] for line in budget] == list(pca.budget_)
    for line, (eps, delta) in zip(budget, pca.budget_.values()):
        assert f"eps = {eps:.4g}" in line and f"delta = {delta:.3g}" in line
    score = _section(text, SCORE_HEADING)
    center = pca.frame_.center
    assert score == [
        "  axes: PC1 x PC2",
        f"  frame: centre ({center[0]:.4g}, {center[1]:.4g}), "
        f"half width {pca.frame_.half_width:.4g}",
        f"  histogram: sparse, bins {pca.score_histogram_.shape}",
        "  cell threshold: none; pure-noise cells expected to pass (whole grid): 0",
        "  groups: " + ", ".join(pca.groups_),
        f"  synthetic points: {len(pca.synthetic_scores_)}",
    ]


@pytest.mark.parametrize("name", ["directions", "scree", "pca"])
def test_a_loaded_release_prints_what_its_estimator_printed(fitted, name):
    estimator = fitted[name]
    reference = estimator.nonprivate_ is not None
    release = export_release(estimator, include_nonprivate=reference, allow_seeded=True)
    text = str(load_release(release).summary())
    theirs = str(estimator.summary()).splitlines()
    # what was released (a release does not carry the plan's eps figures)
    assert text.splitlines()[0] == re.sub(r" \(needs eps about [^)]*\)", "", theirs[0])
    assert text.splitlines()[1:4] == ["DP PCA Release Summary", "",
                                      f"Estimator: {type(estimator).__name__}"]
    assert text.splitlines()[4:] == theirs[3:]
    assert not re.search(r"\b(nan|inf)\b", text)


def test_format_value_prints_numbers_text_and_missing_values():
    assert format_value(0.123456, ".4g") == "0.1235"
    assert format_value(np.float64(2e-6), ".3g") == "2e-06"
    assert format_value("3", ".3g") == "3"              # numeric text is a number
    assert format_value("laplace", ".3g") == "laplace"
    assert format_value(None, ".4g") == "-"


LEDGER = [
    {"step": "loading", "mechanism": "gaussian", "eps": 0.5, "delta": 5e-6,
     "sensitivity": 0.0141, "sensitivity_norm": "L2", "noise_scale": 0.07, "mu": 0.3},
    {"step": "score/frame/center", "mechanism": "exponential", "eps": 0.25, "delta": 0.0,
     "sensitivity": 1, "noise_scale": None},
]


def test_a_ledger_row_has_the_cells_of_the_columns_asked_for():
    assert ledger_row(LEDGER[0]) == ["loading", "gaussian", "0.5", "5e-06",
                                     "0.0141 (L2)", "0.07", "0.3"]
    assert ledger_row(LEDGER[1], ("step", "eps", "noise scale", "mu")) == [
        "score/frame/center", "0.25", "-", "-"]


def test_the_ledger_table_has_one_line_per_call_and_the_total():
    lines = ledger_table(LEDGER, (0.75, 5e-6)).splitlines()
    assert lines[0] == "Privacy ledger:"
    assert lines[1].split() == ["step", "mechanism", "eps", "delta", "sensitivity",
                                "noise", "scale", "mu"]
    assert set(lines[2]) == {"-", " "} and lines[-2] == lines[2]
    assert lines[3].split() == ["loading", "gaussian", "0.5", "5e-06", "0.0141", "(L2)",
                                "0.07", "0.3"]
    assert lines[4].split()[:4] == ["score/frame/center", "exponential", "0.25", "0"]
    assert lines[-1].split() == ["total", "(basic", "composition)", "0.75", "5e-06"]
    # the columns line up: every cell starts where its heading starts
    assert lines[3].index("0.5") == lines[1].index("eps")
    gdp = [dict(LEDGER[0], composition="gdp")]
    assert "mu-GDP" in ledger_table(gdp, (0.5, 5e-6)).splitlines()[-1]


def test_the_scaling_line_never_claims_a_correlation_pca_the_fit_did_not_make():
    from sklearn_dppca._summary import _scaling_text

    names = ["a", "b", "c"]
    one = np.ones(3)
    nan = np.full(3, np.nan)
    assert _scaling_text(None, None, names) is None
    assert _scaling_text(one, np.array(["private"] * 3, dtype=object), names) == \
        "Columns divided by their private spreads (scale_): correlation PCA"
    assert "not a correlation PCA" in _scaling_text(
        one, np.array(["box"] * 3, dtype=object), names)
    assert _scaling_text(nan, np.array(["none"] * 3, dtype=object), names).endswith(
        "covariance PCA")
    mixed = _scaling_text(np.array([1.0, 1.0, np.nan]),
                          np.array(["private", "box", "none"], dtype=object), names)
    assert mixed == ("1 of 3 columns divided by their private spreads; by their box's "
                     "public unit (width / sqrt(12)): b; left in their own units (NaN "
                     "in scale_): c; neither a covariance nor a correlation PCA")
    # a release written before the origins: a finite spread was a private one
    assert _scaling_text(np.array([1.0, np.nan, 1.0]), None, names).endswith(
        "left in their own units (NaN in scale_): b; neither a covariance nor a "
        "correlation PCA")


def test_the_overview_words_count_what_divided_the_columns():
    from types import SimpleNamespace

    from sklearn_dppca._summary import scaling_words

    def words(scale, origin=None):
        return scaling_words(SimpleNamespace(scale_=scale, scale_origin_=origin))

    assert words(None) == ""
    assert words(np.ones(2), np.array(["private"] * 2, dtype=object)) == \
        ", each divided by a private spread"
    assert words(np.ones(2), np.array(["box"] * 2, dtype=object)).startswith(
        ", each divided by its box's unit")
    assert words(np.array([1.0, 1.0, np.nan]),
                 np.array(["private", "box", "none"], dtype=object)) == \
        ", 1 of 3 divided by a private spread, 1 by the box's unit"
    # a release written before the origins: NaN kept its unit
    assert words(np.full(2, np.nan)) == ", not scaled (spreads not estimable)"


def test_the_first_line_names_the_split_that_would_buy_what_was_not_bought():
    # iris with its observed ranges at eps 1: the scree is not bought at the
    # default split, and the first line says the eps it needs and the split that
    # buys it at this eps, once for the variances and the PVE; the release says
    # the same, and a fit with that split runs the scree
    from sklearn.datasets import load_iris

    X = load_iris().data
    box = [(float(low), float(high)) for low, high in zip(X.min(axis=0), X.max(axis=0))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPPCA(eps=1.0, bounds=box, random_state=0).fit(X)
    first = str(est.summary()).splitlines()[0]
    found = re.search(r"variances and PVE \(needs eps about [\d.]+, or at this eps "
                      r"the split ([a-z=0-9.,]+)\), score summary \(needs eps about "
                      r"[\d.]+\)$", first)
    assert found, first
    assert first.count("split") == 1
    loaded = load_release(export_release(est, allow_seeded=True))
    assert str(loaded.summary()).splitlines()[0] == first
    split = {name: float(share) for name, share in
             (item.split("=") for item in found.group(1).split(","))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bought = DPPCA(eps=1.0, bounds=box, budget_split=split, random_state=0).fit(X)
    assert any(entry["step"].startswith("scree/") for entry in bought.privacy_ledger_)
    assert "variances and PVE (needs" not in str(bought.summary()).splitlines()[0]
