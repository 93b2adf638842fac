"""``python -m sklearn_dppca``: the report end to end, the JSON release, the errors."""

import contextlib
import io
import json
import math
import re
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sklearn_dppca

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sklearn_dppca import DPPCA, load_release  # noqa: E402
from sklearn_dppca._data_sources import _cell_values  # noqa: E402
from sklearn_dppca._budget_split import BUDGET_PARTS  # noqa: E402
from sklearn_dppca._cli import main  # noqa: E402
from sklearn_dppca._cli_options import _parse_budget_split, _parse_labels  # noqa: E402
from sklearn_dppca._cli_parser import build_parser  # noqa: E402
from sklearn_dppca._pair_design import AUTO_PARTNERS  # noqa: E402
from sklearn_dppca._data_sources import parse_names  # noqa: E402
from sklearn_dppca._release_layout import NONPRIVATE_KEY  # noqa: E402
from sklearn_dppca.display import (  # noqa: E402
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
)
from ._hang_guard import HANG_GUARD  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
EXPECTED_KEYS = {
    "format", "estimator", "n_samples", "n_features", "feature_names", "n_components",
    "components", "explained_variance", "explained_variance_raw",
    "explained_variance_ratio", "axes", "frame", "bin_edges", "score_histogram",
    "groups", "score_histograms", "synthetic_scores", "synthetic_groups",
    "privacy_spent", "privacy_ledger", "kendall_matrix", "data_source", "group_column",
}
HAS_SCALE = "scale" in DPPCA().get_params()
needs_scale = pytest.mark.skipif(not HAS_SCALE, reason="DPPCA has no scale parameter yet")


def run_cli(args, cwd):
    """Run ``main(args)`` in ``cwd``; return (exit code, stdout, stderr).

    BLAS is limited to one thread: on a busy 2-core machine OpenBLAS threads spin
    against each other on the many small products of the scree and slow the fit
    down by one to two orders of magnitude; the results are the same.
    """
    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with threadpool_limits(limits=1, user_api="blas"), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(arg) for arg in args])
    finally:
        os.chdir(previous)
        plt.close("all")
    return code, out.getvalue(), err.getvalue()


def read_json(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The report on the built-in data, run once for the module."""
    cwd = tmp_path_factory.mktemp("default")
    start = time.perf_counter()
    code, out, err = run_cli(["--seed", "0"], cwd)
    return {"cwd": cwd, "code": code, "out": out, "err": err,
            "seconds": time.perf_counter() - start}


@pytest.fixture
def small_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 80
    frame = pd.DataFrame({
        "a": rng.normal(size=n),
        "b": rng.normal(size=n) * 2 + 10,
        "name": [f"row{i}" for i in range(n)],
        "c": rng.integers(0, 5, size=n),
        "site": np.where(rng.random(n) < 0.5, "north", "south"),
    })
    path = tmp_path / "small.csv"
    frame.to_csv(path, index=False)
    return path


def test_default_data_end_to_end(default_run):
    assert default_run["code"] == 0, default_run["err"]
    cwd, out, err = default_run["cwd"], default_run["out"], default_run["err"]
    png = cwd / "report.png"
    assert png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == PNG_MAGIC
    release = read_json(cwd / "released.json")
    assert EXPECTED_KEYS <= set(release)
    assert NONPRIVATE_KEY not in release
    assert release["n_samples"] == 5000 and release["n_features"] == 20
    assert release["feature_names"] == [f"V{j}" for j in range(1, 21)]
    assert release["groups"] == ["G1", "G2", "G3", "G4", "G5"]
    assert "group_labels_read_from_data" not in release and "dropped_columns" not in release
    assert np.shape(release["components"]) == (2, 20)
    # bins="auto": round(sqrt(5000 / 5) / 3) = 11 cells per axis with the 5 groups,
    # but at eps = 1 (histogram noise sd 12.2 counts, threshold 3.3 sd over 5 x 121
    # cells) an average cell of the cloud, 5000 / (0.55 * 121) = 75 rows, holds
    # less than twice the threshold (82): one cell less, 91 rows against 80
    assert np.shape(release["score_histogram"]) == (10, 10)
    assert len(release["synthetic_scores"]) == 5000
    spent = release["privacy_spent"]
    assert 0 < spent["eps"] <= 1.0 and 0 < spent["delta"] <= 1e-5
    assert sum(entry["eps"] for entry in release["privacy_ledger"]) <= 1.0 + 1e-12
    params = release["estimator"]["params"]
    assert release["estimator"]["class"] == "DPPCA"
    assert "random_state" not in params and release["estimator"]["seeded"] is True
    assert params["pairs"] == "auto"       # above AUTO_ALL_ROWS: the design
    assert f"incomplete U-statistic with {AUTO_PARTNERS} partners" in out
    # the printed report: summary, ledger table with one row per mechanism call
    assert "DP PCA Summary" in out and "Privacy ledger:" in out
    assert "total (Gaussian parts composed in mu-GDP)" in out
    for entry in release["privacy_ledger"]:
        assert entry["step"] in out
    assert "Wrote the overview figure to report.png" in out
    assert "--seed fixes the noise" in err
    print(f"CLI on the built-in data: {default_run['seconds']:.1f} s")


def test_default_release_feeds_every_display(default_run):
    assert default_run["code"] == 0
    released = load_release(default_run["cwd"] / "released.json")
    for display in (ScreeDisplay, LoadingDisplay, ScoreDisplay, VariableDisplay,
                    BiplotDisplay):
        assert display.from_estimator(released).figure_ is not None
    plt.close("all")
    assert released.groups_ == ["G1", "G2", "G3", "G4", "G5"]
    assert set(released.score_histograms_) == set(released.groups_)


def test_from_json_redraws_without_fitting(default_run, tmp_path):
    assert default_run["code"] == 0
    saved = tmp_path / "saved.json"
    saved.write_bytes((default_run["cwd"] / "released.json").read_bytes())
    before = saved.read_bytes()
    code, out, err = run_cli(["--from-json", saved.name, "--out", "again.pdf"], tmp_path)
    assert code == 0, err
    assert (tmp_path / "again.pdf").read_bytes()[:4] == b"%PDF"
    assert "DP PCA Release Summary" in out and "Privacy ledger:" in out
    assert "[DPPCA]" not in out           # nothing was fitted
    assert saved.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.pdf", "saved.json"]
    # an explicit --json re-exports the same release
    code, _, err = run_cli(["--from-json", saved.name, "--json", "copy.json", "--quiet"],
                           tmp_path)
    assert code == 0, err
    copy = read_json(tmp_path / "copy.json")
    assert copy["components"] == read_json(saved)["components"]
    assert copy["privacy_ledger"] == read_json(saved)["privacy_ledger"]


def test_from_json_redraw_loads_no_fitting_libraries(default_run, tmp_path):
    # Redrawing a saved release reads JSON and draws: it must not pay for importing
    # scikit-learn (about a second, with SciPy's statistics) or pandas. A fresh
    # interpreter, as a user's command has.
    assert default_run["code"] == 0
    script = (
        "import sys\n"
        "from sklearn_dppca._cli import main\n"
        f"code = main(['--from-json', {str(default_run['cwd'] / 'released.json')!r}, "
        f"'--out', {str(tmp_path / 'again.png')!r}, '--quiet'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy', "
        "'pandas'})\n"
        "print(code, heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg"}, check=True)
    assert done.stdout.split("\n")[-2] == "0 []"
    assert (tmp_path / "again.png").stat().st_size > 0


def test_from_json_refuses_data_and_fit_options(default_run, tmp_path):
    saved = default_run["cwd"] / "released.json"
    code, out, err = run_cli(["--from-json", saved, "--eps", "2", "--out", "x.png"],
                             tmp_path)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and "--eps" in err
    assert not (tmp_path / "x.png").exists()


def test_declared_columns_are_the_variables(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    pd.DataFrame({
        "a": rng.normal(size=n),
        "b": rng.normal(size=n) * 2 + 10,
        "name": [f"row{i}" for i in range(n)],
        "c": rng.integers(0, 5, size=n),
        "site": np.where(rng.random(n) < 0.5, "north", "south"),
    }).to_csv(tmp_path / "grouped.csv", index=False)
    code, out, err = run_cli(["grouped.csv", "--columns", "a,b,c", "--group", "site",
                              "--groups", "north,south", "--seed", "1", "--bins", "8",
                              "--eps", "4", "--json", "grouped.json"], tmp_path)
    assert code == 0, err
    assert "Data: CSV file 'grouped.csv': 400 rows x 3 variables (a, b, c)" in out
    assert "groups north, south" in out
    release = read_json(tmp_path / "grouped.json")
    assert release["feature_names"] == ["a", "b", "c"]      # 'name' is not declared
    assert release["group_column"] == "site"
    assert release["groups"] == ["north", "south"]
    # nothing in the file says which columns were left out or how the labels looked
    assert "dropped_columns" not in release
    assert "group_labels_read_from_data" not in release
    if release["frame"] is not None:      # (a collapsed private frame skips them)
        assert len(release["score_histograms"]) == 2
        assert [len(edges) for edges in release["bin_edges"]] == [9, 9]
        assert set(release["synthetic_groups"]) <= {"north", "south"}
    assert release["privacy_spent"]["eps"] <= 4.0
    assert (tmp_path / "report.png").read_bytes()[:8] == PNG_MAGIC


def test_columns_keep_their_declared_order(small_csv, tmp_path):
    code, _, err = run_cli([small_csv, "--columns", " c , a", "--quiet",
                            "--components", "2"], tmp_path)
    assert code == 0, err
    assert read_json(tmp_path / "released.json")["feature_names"] == ["c", "a"]


def test_without_columns_every_column_but_the_group_is_a_variable(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.normal(size=40), "flag": rng.random(40) < 0.5,
                          "site": np.resize(["a", "b"], 40), "y": rng.normal(size=40)})
    frame.to_csv(tmp_path / "numeric.csv", index=False)
    code, _, err = run_cli(["numeric.csv", "--group", "site", "--groups", "a,b",
                            "--quiet"], tmp_path)
    assert code == 0, err
    release = read_json(tmp_path / "released.json")
    assert release["feature_names"] == ["x", "flag", "y"]     # True/False read as 1/0
    assert release["groups"] == ["a", "b"]


def test_a_text_column_without_columns_asks_for_columns(small_csv, tmp_path):
    code, out, err = run_cli([small_csv], tmp_path)
    assert code == 2 and err.count("\n") == 1
    assert "column 'name'" in err and "--columns" in err
    assert "row0" not in err                                # no cell is quoted
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.csv"]


def test_declared_groups_keep_their_order(small_csv, tmp_path):
    code, out, err = run_cli([small_csv, "--columns", "a,b,c", "--group", "site",
                              "--groups", "south,north", "--axes", "2,1", "--eps", "2",
                              "--quiet"], tmp_path)
    assert code == 0, err
    assert out == ""                                         # --quiet
    release = read_json(tmp_path / "released.json")
    assert release["groups"] == ["south", "north"]
    assert release["axes"] == [1, 0]                         # 1-based on the command line
    assert release["privacy_spent"]["eps"] <= 2.0


def test_group_labels_with_commas_are_quoted(tmp_path):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30),
                          "town": np.resize(["Paris, TX", "Paris, FR"], 30)})
    frame.to_csv(tmp_path / "towns.csv", index=False)
    code, _, err = run_cli(["towns.csv", "--group", "town", "--groups",
                            '"Paris, FR","Paris, TX"', "--quiet"], tmp_path)
    assert code == 0, err
    assert read_json(tmp_path / "released.json")["groups"] == ["Paris, FR", "Paris, TX"]


@needs_scale
def test_scale_flag_fits_correlation_pca(tmp_path):
    rng = np.random.default_rng(6)
    z = rng.normal(size=(400, 3))
    pd.DataFrame({"cm": 170 + 10 * z[:, 0], "kg": 70 + 15 * (0.6 * z[:, 0] + 0.8 * z[:, 1]),
                  "income": 30000 + 20000 * z[:, 2]}).to_csv(tmp_path / "units.csv",
                                                             index=False)
    code, _, err = run_cli(["units.csv", "--scale", "--eps", "4", "--seed", "2", "--quiet",
                            "--budget-split", "loading=0.3,scree=0.2,scale=0.3,score=0.2"],
                           tmp_path)
    assert code == 0, err
    release = read_json(tmp_path / "released.json")
    assert release["estimator"]["params"]["scale"] is True
    assert release["estimator"]["params"]["budget_split"] == {
        "loading": 0.3, "scree": 0.2, "scale": 0.3, "score": 0.2}
    assert sum(entry["eps"] for entry in release["privacy_ledger"]) <= 4 * (1 + 1e-12)


def test_without_scale_flag_dppca_keeps_its_default(small_csv, tmp_path):
    code, _, err = run_cli([small_csv, "--columns", "a,b", "--quiet"], tmp_path)
    assert code == 0, err
    params = read_json(tmp_path / "released.json")["estimator"]["params"]
    assert params.get("scale", False) is False


def test_budget_split_parts():
    assert BUDGET_PARTS == ("loading", "scree", "scale", "score")
    split = _parse_budget_split("loading=0.35, scree=0.15, scale=0.2, score=0.3")
    assert split == {"loading": 0.35, "scree": 0.15, "scale": 0.2, "score": 0.3}
    from sklearn_dppca import _budget_split

    for part in _budget_split.BUDGET_PARTS:
        assert part in BUDGET_PARTS


def test_help_states_the_default_splits():
    from sklearn_dppca import _budget_split

    text = " ".join(build_parser().format_help().split())
    splits = [_budget_split.DEFAULT_SPLIT, _budget_split.DEFAULT_SCALED_SPLIT]
    for split in splits:
        shown = ",".join(f"{part}={share:g}" for part, share in split.items() if share)
        assert shown in text, (shown, text)


def test_names_and_cells():
    assert parse_names('a, "b, c" ,d', "--columns", "column") == ["a", "b, c", "d"]
    assert _parse_labels(" north , south ") == ["north", "south"]
    values, text = _cell_values(["1", " 2.5 ", "True", "false", "-1e3", "", "NA", "nan",
                                 "inf", "x", "1_000", "0x10"])
    assert values[:5].tolist() == [1.0, 2.5, 1.0, 0.0, -1000.0]
    assert np.isnan(values[5:8]).all() and values[8] == np.inf
    assert text.tolist() == [False] * 9 + [True] * 3


def test_the_domain_check_quotes_no_data_value():
    from sklearn_dppca._validation import check_max_abs

    with pytest.raises(ValueError) as caught:
        check_max_abs(np.array([[1.0, 4.37e154]]), "DPPCA's variances")
    message = str(caught.value)
    assert "4.37" not in message and "e+154" not in message
    assert "too large" in message


def test_nonprivate_reference_only_with_the_flag(small_csv, tmp_path):
    code, _, err = run_cli([small_csv, "--columns", "a,b,c", "--json", "private.json"],
                           tmp_path)
    assert code == 0, err
    text = (tmp_path / "private.json").read_text(encoding="utf-8")
    assert NONPRIVATE_KEY not in json.loads(text)
    assert "NOT_PRIVATE" not in text and "nonprivate" not in text.replace(
        '"compute_nonprivate"', "")
    code, out, err = run_cli([small_csv, "--columns", "a,b,c", "--nonprivate-reference",
                              "--json", "np.json"], tmp_path)
    assert code == 0, err
    assert "NOT PRIVATE" in err and "never publish" in err
    assert "NON-PRIVATE reference: do not publish" in out
    release = read_json(tmp_path / "np.json")
    assert NONPRIVATE_KEY in release
    assert np.shape(release[NONPRIVATE_KEY]["components"]) == (2, 3)
    assert len(release[NONPRIVATE_KEY]["scores"]) == 80
    assert load_release(tmp_path / "np.json").nonprivate_ is not None


def test_scree_methods_are_dppcas():
    from sklearn_dppca._algorithms._scree_settings import SCREE_METHODS
    from sklearn_dppca._cli_parser import _SCREE_METHODS

    assert _SCREE_METHODS == SCREE_METHODS


def test_radials_are_dppcas():
    from sklearn_dppca._base import RADIAL_FUNCTIONS
    from sklearn_dppca._cli_parser import _RADIALS

    assert _RADIALS == RADIAL_FUNCTIONS


def test_radial_covariance_reads_the_declared_box(small_csv, tmp_path):
    # the directions are the covariance about the box's private mean: the
    # release says so, its ledger has the mean's step and the plan the same
    code, out, err = run_cli([small_csv, "--columns", "a,b", "--seed", "0", "--radial",
                              "covariance", "--bounds", "a=-5:5,b=0:20", "--quiet"],
                             tmp_path)
    assert code == 0, err
    released = read_json(tmp_path / "released.json")
    assert released["estimator"]["params"]["radial"] == "covariance"
    steps = [entry["step"] for entry in released["privacy_ledger"]]
    assert "loading/mean" in steps and "loading/statistic" in steps
    code, plan, err = run_cli([small_csv, "--columns", "a,b", "--radial", "covariance",
                               "--bounds", "a=-5:5,b=0:20", "--plan"], tmp_path)
    assert code == 0, err
    assert "loading/mean" in plan


def test_scree_params_values_are_typed_per_key():
    from sklearn_dppca._cli_options import _parse_scree_params

    parsed = _parse_scree_params("pairs=64, quantile_level=0.95,clip=norm,b=inf,"
                                 "split=false,block_size=none")
    assert parsed == {"pairs": 64, "quantile_level": 0.95, "clip": "norm", "b": np.inf,
                      "split": False, "block_size": None}
    assert type(parsed["pairs"]) is int and type(parsed["quantile_level"]) is float


def test_scree_and_sampling_flags_reach_dppca(small_csv, tmp_path):
    code, _, err = run_cli([small_csv, "--columns", "a,b,c", "--quiet", "--seed", "3",
                            "--components", "0.6", "--scree-method", "huber",
                            "--scree-params", "m2_frac=0.3,block_size=8", "--no-monotone",
                            "--synthetic-sampling", "center"], tmp_path)
    assert code == 0, err
    release = read_json(tmp_path / "released.json")
    params = release["estimator"]["params"]
    assert params["n_components"] == 0.6
    assert params["scree_method"] == "huber"
    assert params["scree_params"] == {"m2_frac": 0.3, "block_size": 8}
    assert params["monotone"] is False
    assert params["synthetic_sampling"] == "center"
    # the fraction keeps at least the two components of the score summary
    assert 2 <= release["n_components"] <= 3


def test_without_the_new_flags_dppca_keeps_its_defaults(default_run):
    params = read_json(default_run["cwd"] / "released.json")["estimator"]["params"]
    assert params["monotone"] is True
    assert params["synthetic_sampling"] == "uniform"
    assert params["scree_params"] is None and params["n_components"] == 2


@pytest.mark.parametrize("kind, expected", [(None, {"kind": "pve"}),
                                            ("both", {"kind": "both"}),
                                            ("pve", {"kind": "pve"}),
                                            ("variance", {"kind": "variance",
                                                          "cumulative": False})])
def test_scree_kind_sets_the_scree_panel(kind, expected, default_run, tmp_path,
                                         monkeypatch):
    from sklearn_dppca import display

    seen = []
    draw = display.plot_overview

    def recording(estimator, **kwargs):
        seen.append(kwargs.get("scree_kw"))
        return draw(estimator, **kwargs)

    monkeypatch.setattr(display, "plot_overview", recording)
    kind_option = [] if kind is None else ["--scree-kind", kind]
    code, _, err = run_cli(["--from-json", default_run["cwd"] / "released.json",
                            *kind_option, "--out", "redrawn.png", "--quiet"], tmp_path)
    assert code == 0, err
    assert seen == [expected]
    assert (tmp_path / "redrawn.png").stat().st_size > 10_000


def test_the_default_scree_panel_shows_the_variances_where_no_pve_is(tmp_path,
                                                                     monkeypatch):
    # the built-in data at seed 30: the total's clipping is not estimable, so
    # no PVE is, while both variances are: "auto" draws them, not an empty panel
    from sklearn_dppca import display

    seen = []
    draw = display.plot_overview

    def recording(estimator, **kwargs):
        seen.append((kwargs.get("scree_kw"), estimator.explained_variance_ratio_,
                     estimator.explained_variance_))
        return draw(estimator, **kwargs)

    monkeypatch.setattr(display, "plot_overview", recording)
    code, out, err = run_cli(["--seed", "30", "--out", "seed30.png", "--quiet"], tmp_path)
    assert code == 0, err
    [(scree_kw, ratios, variances)] = seen
    assert np.all(np.isnan(ratios)) and np.all(np.isfinite(variances))
    assert scree_kw == {"kind": "variance", "cumulative": False}


def _write(tmp_path, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return name


ERRORS = [
    (["missing.csv"], "no such file"),
    (["--eps", "0"], "--eps"),
    (["--eps", "-1"], "--eps"),
    (["--eps", "nan"], "--eps"),
    (["--eps", "abc"], "--eps"),
    (["--delta", "1"], "--delta"),
    (["--delta", "0"], "--delta"),
    (["--axes", "1,1"], "--axes"),
    (["--axes", "0,1"], "--axes"),
    (["--axes", "1,3"], "--axes"),
    (["--axes", "x"], "--axes"),
    (["--bins", "0"], "--bins"),
    (["--bins", "2,3,4"], "--bins"),
    (["--budget-split", "loading=0.7,scree=0.5"], "sum to"),
    (["--budget-split", "scree=0.5"], "loading"),
    (["--budget-split", "bogus=1"], "unknown part"),
    (["--budget-split", "loading=0.4,scree=0.2,scale=0.2"], "only with --scale"),
    (["--scale", "--budget-split", "loading=0.5,scree=0.5"],
     "--budget-split['scale'] must be given and > 0 with --scale"),
    (["--components", "0"], "--components"),
    (["--components", "1.5"], "--components must be None or an int >= 1 or a finite "
                              "number in (0, 1)"),
    (["--components", "x"], "--components must be a number"),
    (["--scree-method", "matrix"], "needs --radial clipped directions"),
    (["--radial", "covariance"], "--radial covariance reads the covariance about the "
                                 "declared box's private mean: it needs --bounds"),
    (["@small", "--columns", "a,b", "--radial", "covariance", "--scree-method",
      "matrix", "--bounds", "0:1,0:1"], "cannot read --radial covariance"),
    (["--scree-params", "nope=1"], "--scree-params has unknown names ['nope']"),
    (["--scree-params", "quantile_level=2"], "--scree-params['quantile_level']"),
    (["--scree-params", "quantile_level"], "--scree-params must look like"),
    (["--scree-params", "pairs=2,pairs=4"], "'pairs' is given twice"),
    (["--scree-method", "huber", "--scree-params", "m2_frac=wide"],
     "--scree-params['m2_frac']"),
    (["--out", "report.gif"], "--out"),
    (["--pairs", "-3"], "--pairs"),
    (["--columns", "a,b"], "--columns needs a CSV file"),
    (["--group", "site", "--groups", "a"], "--group needs a CSV file"),
    (["@small", "--data", "adult"], "--data adult picks built-in data"),
    (["--data", "iris"], "--data"),
    (["@small", "--columns", "a,b", "--group", "site"], "--group needs --groups"),
    (["@small", "--columns", "a,b", "--groups", "north"], "--groups needs --group"),
    (["@small", "--columns", "a,b", "--group", "nowhere", "--groups", "x"],
     "no such column"),
    (["@small", "--columns", "a,b", "--group", "site", "--groups", "north"],
     "not one of --groups north"),
    (["@small", "--columns", "a,b", "--group", "site", "--groups", "north,north"],
     "distinct"),
    (["@small", "--columns", "a,zzz"], "--columns: no column 'zzz'"),
    (["@small", "--columns", "a,,b"], "--columns: empty column"),
    (["@small", "--columns", "a,a"], "distinct"),
    (["@small", "--columns", "a,site", "--group", "site", "--groups", "north,south"],
     "both name 'site'"),
    (["@small", "--columns", "a,name"], "column 'name' (declared by --columns)"),
    (["@small"], "declare the variables with --columns"),
    (["@small", "--columns", "a,b", "--components", "9"], "--components"),
    (["@text"], "not numbers"),
    (["@empty"], "empty"),
    (["@blank"], "empty"),
    (["@header"], "no data rows"),
    (["@gap"], "empty line after the header"),
    (["@trailing"], "empty line after the header"),
    (["@nan"], "missing or infinite"),
    (["@unnamed"], "no name"),
    (["@twice"], "duplicate column names: 'a'"),
    (["@ragged"], "as many fields as the header"),
    (["--eps-range", "1:2"], "give --plan too"),
    (["--plan", "--eps-range", "2:1"], "0 < LOW < HIGH"),
    (["--plan", "--eps-range", "0:1"], "0 < LOW < HIGH"),
    (["--plan", "--eps-range", "1"], "must look like LOW:HIGH"),
    # every row one field longer: pandas alone would shift the columns
    (["@longer", "--components", "1"], "as many fields as the header"),
    (["@semicolons", "--components", "1"], "contains a semicolon"),
    (["@tabs", "--components", "1"], "contains a tab"),
    (["@latin1"], "not UTF-8"),
    (["@onerow"], "at least 2"),
    (["@small", "--columns", "a,b", "--bounds", "0:1"], "one (low, high) range per column"),
    (["@small", "--columns", "a,b", "--bounds", "0:1,2"], "--bounds must look like"),
    (["@small", "--columns", "a,b", "--bounds", "0:1,a=0:1"], "by name or none"),
    (["@small", "--columns", "a,b", "--bounds", "0:1,0:x"], "--bounds (item 2) high"),
    (["@small", "--columns", "a,b", "--bounds", "a=0:1,a=0:2"], "given twice"),
    (["@small", "--columns", "a,b", "--bounds", "a=0:1,c=0:2"], "missing: ['b']"),
    (["@small", "--columns", "a,b", "--bounds", "a=1:0,b=0:2"], "low < high"),
]


@pytest.mark.parametrize("args, message", ERRORS,
                         ids=[" ".join(args) for args, _ in ERRORS])
def test_user_errors_are_one_line_and_exit_2(args, message, small_csv, tmp_path):
    files = {
        "@small": str(small_csv),
        "@text": _write(tmp_path, "text.csv", "a,b\nx,y\nz,w\n"),
        "@empty": _write(tmp_path, "empty.csv", ""),
        "@blank": _write(tmp_path, "blank.csv", "\n\n\n"),
        "@header": _write(tmp_path, "header.csv", "a,b\n"),
        "@gap": _write(tmp_path, "gap.csv", "a\n1\n\n2\n3\n"),
        "@trailing": _write(tmp_path, "trailing.csv", "a,b\n1,2\n3,4\n5,6\n\n"),
        "@nan": _write(tmp_path, "nan.csv", "a,b\n1,2\n3,\n5,6\n"),
        "@unnamed": _write(tmp_path, "unnamed.csv", "a,,b\n1,2,3\n4,5,6\n"),
        "@twice": _write(tmp_path, "twice.csv", "a,b,a\n1,2,3\n4,5,6\n"),
        "@ragged": _write(tmp_path, "ragged.csv", "a,b\n1,2\n3,4,5\n6,7\n"),
        "@longer": _write(tmp_path, "longer.csv", "a,b\n1,2,3\n4,5,6\n7,8,9\n1,1,1\n"),
        # a spreadsheet's export with decimal commas
        "@semicolons": _write(tmp_path, "semicolons.csv",
                              "a;b;c\n1,5;2,25;3\n4,5;5,75;6\n7,1;8,3;9\n"),
        "@tabs": _write(tmp_path, "tabs.csv", "a\tb\n1.5\t2\n4.5\t5\n7.1\t8\n"),
        "@onerow": _write(tmp_path, "onerow.csv", "a,b\n1,2\n"),
    }
    (tmp_path / "latin1.csv").write_bytes("a,b\n1,2\n3,\xe9\n".encode("latin-1"))
    files["@latin1"] = "latin1.csv"
    args = [files.get(arg, arg) for arg in args]
    before = set(tmp_path.iterdir())
    code, out, err = run_cli(args, tmp_path)
    assert code == 2
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    assert message in err, err
    assert "Traceback" not in err + out
    assert set(tmp_path.iterdir()) == before               # nothing written


# Bad cells placed on data row 37 (line 39 of the file): the messages may name the
# column (public) but neither the cell, nor its row, nor a label found in the data.
SECRETS = {
    "text cell": ("x", "SECRET_CELL_9137", ["--columns", "x,y"]),
    "text cell, no --columns": ("x", "SECRET_CELL_9137", []),
    "empty cell": ("y", "", ["--columns", "x,y"]),
    "NA cell": ("y", "NA", []),
    "infinite cell": ("x", "-inf", ["--columns", "y,x"]),
    "huge value": ("y", "7.7731e300", ["--columns", "x,y"]),
    "label outside": ("site", "SECRET_LABEL_4242", ["--group", "site", "--groups", "a,b"]),
    "empty label": ("site", " ", ["--group", "site", "--groups", "a,b"]),
    "ragged row": ("x", "1.5,2.5", ["--columns", "x,y"]),
}


@pytest.mark.parametrize("case", list(SECRETS))
def test_errors_never_echo_data(case, tmp_path):
    column, cell, options = SECRETS[case]
    rng = np.random.default_rng(5)
    rows = [[f"{v:.6f}" for v in rng.normal(size=2)] + ["a" if i % 2 else "b"]
            for i in range(60)]
    rows[37][["x", "y", "site"].index(column)] = cell
    text = "x,y,site\n" + "".join(",".join(row) + "\n" for row in rows)
    (tmp_path / "data.csv").write_text(text, encoding="utf-8")
    if "--group" not in options:
        options = options + ["--group", "site", "--groups", "a,b"]
    code, out, err = run_cli(["data.csv"] + options, tmp_path)
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    for secret in ("SECRET", "9137", "4242", "7.77", "e+300", "e300", "37", "38", "39",
                   "line", "row 3"):
        assert secret not in err, (secret, err)
    assert f"'{column}'" in err or case == "ragged row"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]


def test_usage_errors_and_help(tmp_path):
    code, _, err = run_cli(["--histogram", "bogus"], tmp_path)
    assert code == 2 and "usage:" in err and "invalid choice" in err
    code, _, err = run_cli(["--radial", "bogus"], tmp_path)
    assert code == 2 and "usage:" in err and "invalid choice" in err
    code, out, _ = run_cli(["--help"], tmp_path)
    assert code == 0 and "--from-json" in out and "--nonprivate-reference" in out
    assert "--columns" in out and "--scale" in out


def test_help_names_the_app_subcommand(tmp_path):
    code, out, _ = run_cli(["--help"], tmp_path)
    usage = out[:out.index("\n\n")]
    assert code == 0 and "python -m sklearn_dppca app" in usage
    assert "app --help" in " ".join(out.split())


def _adult_like(path, n=32561, seed=0):
    """Five integer columns shaped like the UCI Adult extract (age, years of
    education, capital gain and loss, weekly hours): different units, heavy
    ties and zeros, so that most rows repeat another."""
    rng = np.random.default_rng(seed)
    gain = np.where(rng.random(n) < 0.92, 0, rng.integers(100, 100_000, n))
    loss = np.where(rng.random(n) < 0.95, 0, rng.integers(100, 4_500, n))
    frame = pd.DataFrame({
        "age": np.clip(rng.normal(38, 13, n).round(), 17, 90).astype(int),
        "education_num": np.clip(rng.normal(10, 2.5, n).round(), 1, 16).astype(int),
        "capital_gain": gain,
        "capital_loss": loss,
        "hours_per_week": np.where(rng.random(n) < 0.5, 40,
                                   np.clip(rng.normal(40, 12, n).round(), 1, 99)).astype(int),
    })
    frame.to_csv(path, index=False)


@pytest.fixture(scope="module")
def adult_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("adult") / "adult.csv"
    _adult_like(path)
    return path


@pytest.mark.parametrize("scale", [False, pytest.param(True, marks=needs_scale)],
                         ids=["raw units", "--scale"])
def test_large_table_uses_the_incomplete_u_statistic(adult_csv, scale, tmp_path):
    start = time.perf_counter()
    code, out, err = run_cli([adult_csv, "--seed", "0", "--out", "adult.png",
                              "--json", "adult.json"] + (["--scale"] if scale else []),
                             tmp_path)
    seconds = time.perf_counter() - start
    assert code == 0, err
    assert "incomplete U-statistic" in out and f"{AUTO_PARTNERS} partners" in out
    release = read_json(tmp_path / "adult.json")
    assert release["n_samples"] == 32561 and release["n_features"] == 5
    assert release["feature_names"] == ["age", "education_num", "capital_gain",
                                        "capital_loss", "hours_per_week"]
    params = release["estimator"]["params"]
    assert params["pairs"] == "auto"     # DPPCA's own rule decides: AUTO_PARTNERS
    assert "duplicates" not in params      # repeated rows are zero terms, never an error
    assert params.get("scale", False) is scale
    assert release["privacy_spent"]["eps"] <= 1.0
    assert (tmp_path / "adult.png").read_bytes()[:8] == PNG_MAGIC
    print(f"CLI on an adult-like table ({'--scale' if scale else 'raw units'}): "
          f"{seconds:.1f} s")


@needs_scale
def test_data_adult_fits_the_shipped_table(tmp_path):
    code, out, err = run_cli(["--data", "adult", "--scale", "--seed", "0",
                              "--out", "adult.png", "--json", "adult.json"], tmp_path)
    assert code == 0, err
    assert "built-in 'adult' data" in out and "incomplete U-statistic" in out
    release = read_json(tmp_path / "adult.json")
    assert release["n_samples"] == 32561 and release["n_features"] == 5
    assert release["feature_names"] == ["age", "education_num", "capital_gain",
                                        "capital_loss", "hours_per_week"]
    assert release["estimator"]["params"]["scale"] is True
    assert "adult" in release["data_source"] and release["group_column"] is None
    assert (tmp_path / "adult.png").read_bytes()[:8] == PNG_MAGIC


def test_data_is_a_fit_option_not_a_redraw_option(default_run, tmp_path):
    code, _, err = run_cli(["--from-json", default_run["cwd"] / "released.json",
                            "--data", "adult"], tmp_path)
    assert code == 2 and "--data" in err and "cannot apply" in err, err


def _subprocess_env(package_root=None):
    env = dict(os.environ)
    if package_root is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(package_root)]
            + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def test_module_entry_point(tmp_path):
    # the package as this process imports it (installed, or built in place)
    env = _subprocess_env(Path(sklearn_dppca.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-m", "sklearn_dppca", "--version"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0 and "sklearn_dppca" in done.stdout
    done = subprocess.run([sys.executable, "-m", "sklearn_dppca", "--delta", "5"],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --delta") and done.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not (REPO / "setup.py").is_file(), reason="not a source checkout")
def test_the_checkout_itself_imports(tmp_path):
    # Started in the checkout, Python imports the checkout's sklearn_dppca (the
    # current directory comes first on sys.path): after any build (pip install .,
    # or build_ext --inplace) it holds the compiled kernel next to its sources.
    done = subprocess.run(
        [sys.executable, "-c", "import sklearn_dppca, sklearn_dppca._kendall_kernel as k; "
         "print(sklearn_dppca.__file__); print(k.__file__)"],
        cwd=REPO, env=_subprocess_env(), capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr[-2000:]
    package_file, kernel_file = done.stdout.split()
    assert Path(package_file).resolve().parent == REPO / "sklearn_dppca"
    assert Path(kernel_file).resolve().parent == REPO / "sklearn_dppca"


def test_bounds_skip_the_searches_they_make_unnecessary(small_csv, tmp_path):
    code, out, err = run_cli([small_csv, "--columns", "a,b", "--seed", "0",
                              "--bounds", "b=0:20,a=-5:5", "--quiet"], tmp_path)
    assert code == 0, err
    released = read_json(tmp_path / "released.json")
    assert released["estimator"]["params"]["bounds"] == {"b": [0.0, 20.0],
                                                         "a": [-5.0, 5.0]}
    steps = [entry["step"] for entry in released["privacy_ledger"]]
    assert not any(step.startswith("score/frame") for step in steps)


@needs_scale
def test_scale_with_bounds_says_which_columns_took_the_box_unit(small_csv, tmp_path):
    # 80 rows at eps 1: the plan cannot buy the spreads; with --bounds each column
    # is divided by its box's unit, and the report, the release and the summary
    # say so (the same words as the estimator's summary)
    code, out, err = run_cli([small_csv, "--columns", "a,b", "--seed", "0", "--scale",
                              "--bounds", "a=-5:5,b=0:20"], tmp_path)
    assert code == 0, err
    released = read_json(tmp_path / "released.json")
    assert released["scale_origin"] == ["box", "box"]
    assert released["scale"] == pytest.approx([10 / math.sqrt(12), 20 / math.sqrt(12)])
    assert "Columns divided by their box's public unit, width / sqrt(12)" in out
    # without bounds the columns keep their units, and the origins say so
    code, out, err = run_cli([small_csv, "--columns", "a,b", "--seed", "0", "--scale",
                              "--json", "plain.json", "--out", "plain.png"], tmp_path)
    assert code == 0, err
    plain = read_json(tmp_path / "plain.json")
    assert plain["scale_origin"] == ["none", "none"]
    assert "covariance PCA" in out
    # whose scree, in the columns' own units, is not printed: the report and the
    # release say "not estimable", with the eps the plan names for the spreads
    assert plain["explained_variance"] == ["not estimable"] * 2
    assert "scale=True: the columns' spreads are not estimable" in err
    assert re.search(r"not estimable at eps = 1 with n = 80: variances and PVE "
                     r"\(needs eps "
                     r"about [0-9.]+\)", out)
    assert not any(entry["step"].startswith("scree") for entry in plain["privacy_ledger"])
    # with bounds the scree does not wait for spreads: every column has a unit
    assert "scale=True: the columns' spreads" not in run_cli(
        [small_csv, "--columns", "a,b", "--seed", "0", "--scale", "--bounds",
         "a=-5:5,b=0:20", "--json", "boxed.json", "--out", "boxed.png"], tmp_path)[2]


# ------------------------------------------------------------ --budget-file


def test_without_a_budget_file_the_output_says_no_budget_is_kept(default_run):
    lines = [line for line in default_run["out"].splitlines() if "budget is kept" in line]
    assert lines == ["note: no budget is kept across runs: every run on the same data "
                     "spends its eps again (--budget-file FILE --budget EPS,DELTA keeps "
                     "one)."]


def test_a_budget_file_is_kept_across_runs(small_csv, tmp_path):
    # (80 rows: the plan buys the directions only, all Gaussian; two such fits of
    # eps 1 compose exactly to less than 1.5, so the total is 1.2)
    base = [small_csv, "--columns", "a,b,c", "--seed", "0", "--eps", "1"]
    code, _, err = run_cli(base + ["--budget-file", "b.json"], tmp_path)
    assert code == 2 and err.count("\n") == 1
    assert "does not exist yet: give --budget EPS,DELTA" in err
    assert not (tmp_path / "b.json").exists() and not (tmp_path / "report.png").exists()
    code, out, err = run_cli(base + ["--budget-file", "b.json", "--budget", "1.2,1e-5"],
                             tmp_path)
    assert code == 0, err
    assert "Budget of b.json: 1.00 of eps 1.2 spent at delta 1e-5 (1 fit charged" in out
    # ... and what it means for one person: the spend so far (a fit at eps 1,
    # 2.0% at 1% false positives) and the whole budget
    from sklearn_dppca.privacy import membership_risk

    whole = membership_risk(1.2, 1e-5)
    assert ("For one person (a membership test that wrongly flags 1% of non-members): "
            "spent so far, it flags at most 2.0% of members (advantage at most 0.11); "
            f"the whole budget, at most {100 * whole['tpr']:.1f}% "
            f"({whole['advantage']:.2f}).") in out
    assert "no budget is kept" not in out
    (tmp_path / "report.png").unlink()
    # a second run on the same file: refused before the fit, nothing spent or written
    code, out, err = run_cli(base + ["--budget-file", "b.json"], tmp_path)
    assert code == 2 and err.splitlines()[-1].startswith("error: --budget-file b.json")
    # what is spent, then what is left buys, in eps at the total's delta (one
    # Gaussian fit at eps 1 leaves room for one of about 0.66 of a total of 1.2)
    assert "does not fit what is left (1.00 of eps 1.2 spent at delta 1e-5; room for " \
        "one more fit at eps 0.6" in err
    assert "nothing was spent" in err and not (tmp_path / "report.png").exists()
    assert len(read_json(tmp_path / "b.json")["charges"]) == 1
    # another total is not a way to reset the budget
    code, _, err = run_cli(base + ["--budget-file", "b.json", "--budget", "4,1e-5"],
                           tmp_path)
    assert code == 2 and "holds a total of eps=1.2" in err and "--budget" in err
    # what is left may be spent
    code, out, err = run_cli([small_csv, "--columns", "a,b,c", "--seed", "1", "--eps",
                              "0.3", "--budget-file", "b.json"], tmp_path)
    assert code == 0, err
    assert "(2 fits charged" in out


def test_a_sealed_budget_file_refuses_what_would_give_budget_back(small_csv, tmp_path,
                                                                   monkeypatch):
    monkeypatch.delenv("SKLEARN_DPPCA_CUSTODIAN", raising=False)
    base = [small_csv, "--columns", "a,b,c", "--seed", "0", "--eps", "0.5",
            "--budget-file", "b.json", "--custodian", "custodian"]
    code, out, err = run_cli(base + ["--budget", "2,1e-5"], tmp_path)
    assert code == 0, err
    sealed = read_json(tmp_path / "b.json")
    assert sealed["format"] == "sklearn-dppca/accountant/3"
    assert len(sealed["charges"]) == 1
    (tmp_path / "report.png").unlink()
    (tmp_path / "released.json").unlink()
    # the charge deleted from the file: refused, nothing spent or written
    (tmp_path / "b.json").write_text(json.dumps(dict(sealed, charges=[])))
    code, _, err = run_cli(base, tmp_path)
    assert code == 2 and err.count("\n") == 1
    assert "rolled back: the file holds 0 of the 1 charges" in err
    assert "Nothing was spent." in err and not (tmp_path / "report.png").exists()
    # the file deleted: a fresh budget needs the custodian's act
    (tmp_path / "b.json").unlink()
    code, _, err = run_cli(base + ["--budget", "2,1e-5"], tmp_path)
    assert code == 2 and "was deleted" in err and "run again with --start-over" in err
    code, out, err = run_cli(base + ["--budget", "2,1e-5", "--start-over"], tmp_path)
    assert code == 0, err
    # a sealed file is not opened without its custodian
    code, _, err = run_cli(base[:-2], tmp_path)
    assert code == 2 and "give its custodian's folder (--custodian DIR)" in err


@pytest.mark.parametrize("args, match", [
    (["--custodian", "c"], "--custodian seals a --budget-file"),
    (["--budget-file", "b.json", "--budget", "1,1e-5", "--start-over"],
     "--start-over is the custodian's act"),
    (["--budget", "1,1e-5"], "--budget is the total of a --budget-file"),
    (["--budget-file", "b.json", "--budget", "1"], "--budget must be EPS,DELTA"),
    (["--budget-file", "b.json", "--budget", "0,1e-5"], "--budget 0,1e-5: eps"),
    (["--budget-file", "b.json", "--budget", "1,2"], "--budget 1,2: delta"),
])
def test_budget_option_errors(tmp_path, args, match, monkeypatch):
    monkeypatch.delenv("SKLEARN_DPPCA_CUSTODIAN", raising=False)
    code, _, err = run_cli(args, tmp_path)
    assert code == 2 and match in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_budget_file_is_a_fit_option(default_run, tmp_path):
    code, _, err = run_cli(["--from-json", default_run["cwd"] / "released.json",
                            "--budget-file", "b.json"], tmp_path)
    assert code == 2 and "--budget-file" in err and "cannot apply" in err, err


def _cli_in_a_process(args, cwd, barrier, results):
    barrier.wait()
    results.put(run_cli(args, cwd)[0])


@pytest.mark.skipif(sys.platform == "win32", reason="forked processes")
def test_cli_runs_racing_on_one_budget_file(small_csv, tmp_path):
    # the two explorers, as command lines: a total of 1.5 and eps = 1 each,
    # started at once in real processes; one fit is released, the other refused
    import multiprocessing

    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(2), context.Queue()
    workers = []
    for run in range(2):
        cwd = tmp_path / f"run{run}"
        cwd.mkdir()
        args = [small_csv, "--columns", "a,b,c", "--eps", "1", "--quiet",
                "--budget-file", tmp_path / "b.json", "--budget", "1.2,1e-5"]
        workers.append(context.Process(target=_cli_in_a_process,
                                       args=(args, cwd, barrier, results)))
    for worker in workers:
        worker.start()
    codes = sorted(results.get(timeout=HANG_GUARD) for _ in workers)
    for worker in workers:
        worker.join(timeout=HANG_GUARD)
    assert codes == [0, 2]
    assert len(read_json(tmp_path / "b.json")["charges"]) == 1


def test_a_seeded_run_writes_its_release_marked_as_not_private(small_csv, tmp_path):
    from sklearn_dppca._released_pca import SEEDED_KEY

    base = [small_csv, "--columns", "a,b,c", "--eps", "1"]
    code, _, err = run_cli(base + ["--seed", "0", "--json", "seeded.json"], tmp_path)
    assert code == 0, err
    assert "--seed fixes the noise" in err
    assert SEEDED_KEY in read_json(tmp_path / "seeded.json")
    code, _, err = run_cli(base + ["--json", "fresh.json"], tmp_path)
    assert code == 0, err
    assert SEEDED_KEY not in read_json(tmp_path / "fresh.json")


def test_negative_bounds_need_no_equals_sign(small_csv, tmp_path):
    # argparse alone reads "--bounds -5:5,..." as two options
    code, out, err = run_cli([small_csv, "--columns", "a,b", "--bounds", "-100:100,-100:100",
                              "--quiet"], tmp_path)
    assert code == 0, err
    release = read_json(tmp_path / "released.json")
    assert release["estimator"]["params"]["bounds"] == [[-100, 100], [-100, 100]]


def test_a_second_run_says_it_replaced_the_first_run_s_files(small_csv, tmp_path):
    base = [small_csv, "--columns", "a,b", "--quiet"]
    code, _, err = run_cli(base, tmp_path)
    assert code == 0 and "replaced" not in err
    code, _, err = run_cli(base, tmp_path)
    assert code == 0
    assert "note: report.png existed and was replaced" in err
    assert "note: released.json existed and was replaced" in err


def test_a_budget_file_belongs_to_one_data_set(small_csv, tmp_path):
    # the file is keyed by the data set's declared name (default: the CSV's
    # name): a run on another table is refused, nothing spent or written
    other = tmp_path / "other.csv"
    other.write_text(Path(small_csv).read_text())
    base = ["--columns", "a,b", "--quiet", "--budget-file", "b.json"]
    code, _, err = run_cli([small_csv] + base + ["--budget", "3,1e-5"], tmp_path)
    assert code == 0, err
    owner = Path(small_csv).stem
    assert read_json(tmp_path / "b.json")["key"] == f"data set {owner}"
    (tmp_path / "report.png").unlink()
    code, _, err = run_cli([str(other)] + base, tmp_path)
    assert code == 2 and err.count("\n") == 1
    assert f"keeps the budget of data set {owner!r}, not 'other'" in err
    assert "Nothing was spent" in err and not (tmp_path / "report.png").exists()
    assert len(read_json(tmp_path / "b.json")["charges"]) == 1
    # the custodian declares it the same data set under another file name
    code, _, err = run_cli([str(other)] + base + ["--data-name", owner], tmp_path)
    assert code == 0, err
    assert len(read_json(tmp_path / "b.json")["charges"]) == 2
    # a name without a budget file is an error
    code, _, err = run_cli([small_csv, "--columns", "a,b", "--data-name", "x"], tmp_path)
    assert code == 2 and "give --budget-file FILE too" in err
