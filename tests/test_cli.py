"""``python -m sklearn_dppca``: the report end to end, the JSON release, the errors."""

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import sklearn_dppca

pd = pytest.importorskip("pandas")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sklearn_dppca import load_release  # noqa: E402
from sklearn_dppca._cli import LARGE_N_PAIRS, main  # noqa: E402
from sklearn_dppca._release import NONPRIVATE_KEY  # noqa: E402
from sklearn_dppca.display import (  # noqa: E402
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
)

REPO = Path(__file__).resolve().parents[1]
ADULT = REPO.parent / "shared" / "data" / "adult.csv"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
EXPECTED_KEYS = {
    "format", "estimator", "n_samples", "n_features", "feature_names", "n_components",
    "components", "explained_variance", "explained_variance_raw",
    "explained_variance_ratio", "axes", "frame", "bin_edges", "score_histogram",
    "groups", "score_histograms", "synthetic_scores", "synthetic_groups",
    "privacy_spent", "privacy_ledger", "kendall_matrix", "group_labels_read_from_data",
}


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
    assert release["group_labels_read_from_data"] is False
    assert np.shape(release["components"]) == (2, 20)
    assert np.shape(release["score_histogram"]) == (20, 20)
    assert len(release["synthetic_scores"]) == 5000
    spent = release["privacy_spent"]
    assert 0 < spent["eps"] <= 1.0 and 0 < spent["delta"] <= 1e-5
    assert sum(entry["eps"] for entry in release["privacy_ledger"]) <= 1.0 + 1e-12
    params = release["estimator"]["params"]
    assert release["estimator"]["class"] == "DPPCA"
    assert "random_state" not in params and release["estimator"]["seeded"] is True
    assert params["pairs"] == "all"
    # the printed report: summary, ledger table with one row per mechanism call
    assert "DP PCA Summary" in out and "Privacy ledger:" in out
    assert "total (basic composition)" in out
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


def test_from_json_refuses_data_and_fit_options(default_run, tmp_path):
    saved = default_run["cwd"] / "released.json"
    code, out, err = run_cli(["--from-json", saved, "--eps", "2", "--out", "x.png"],
                             tmp_path)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and "--eps" in err
    assert not (tmp_path / "x.png").exists()


def test_csv_with_text_and_group_columns(small_csv, tmp_path):
    code, out, err = run_cli([small_csv, "--group", "site", "--seed", "1", "--bins", "8",
                              "--json", "small.json"], tmp_path)
    assert code == 0, err
    assert "dropping non-numeric columns: name" in out
    assert "read off the data" in err
    assert "group labels were read off the data" in out
    release = read_json(tmp_path / "small.json")
    assert release["feature_names"] == ["a", "b", "c"]      # group column removed first
    assert release["dropped_columns"] == ["name"]
    assert release["group_column"] == "site"
    assert release["groups"] == ["north", "south"]
    assert release["group_labels_read_from_data"] is True
    assert len(release["score_histograms"]) == 2
    assert [len(edges) for edges in release["bin_edges"]] == [9, 9]
    assert set(release["synthetic_groups"]) <= {"north", "south"}
    assert release["privacy_spent"]["eps"] <= 1.0
    assert (tmp_path / "report.png").read_bytes()[:8] == PNG_MAGIC


def test_declared_groups_keep_their_order_and_are_not_flagged(small_csv, tmp_path):
    code, out, err = run_cli([small_csv, "--group", "site", "--groups", "south,north",
                              "--axes", "2,1", "--eps", "2", "--quiet"], tmp_path)
    assert code == 0, err
    assert out == ""                                         # --quiet
    assert "read off the data" not in err
    release = read_json(tmp_path / "released.json")
    assert release["groups"] == ["south", "north"]
    assert release["group_labels_read_from_data"] is False
    assert release["axes"] == [1, 0]                         # 1-based on the command line
    assert release["privacy_spent"]["eps"] <= 2.0


def test_nonprivate_reference_only_with_the_flag(small_csv, tmp_path):
    code, _, err = run_cli([small_csv, "--json", "private.json"], tmp_path)
    assert code == 0, err
    text = (tmp_path / "private.json").read_text(encoding="utf-8")
    assert NONPRIVATE_KEY not in json.loads(text)
    assert "NOT_PRIVATE" not in text and "nonprivate" not in text.replace(
        '"compute_nonprivate"', "")
    code, out, err = run_cli([small_csv, "--nonprivate-reference", "--json", "np.json"],
                             tmp_path)
    assert code == 0, err
    assert "NOT PRIVATE" in err and "never publish" in err
    assert "NON-PRIVATE reference: do not publish" in out
    release = read_json(tmp_path / "np.json")
    assert NONPRIVATE_KEY in release
    assert np.shape(release[NONPRIVATE_KEY]["components"]) == (2, 3)
    assert len(release[NONPRIVATE_KEY]["scores"]) == 80
    assert load_release(tmp_path / "np.json").nonprivate_ is not None


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
    (["--components", "0"], "--components"),
    (["--out", "report.gif"], "--out"),
    (["--pairs", "-3"], "--pairs"),
    (["@small", "--group", "nowhere"], "no such column"),
    (["@small", "--group", "site", "--groups", "north"], "outside --groups"),
    (["@small", "--components", "9"], "--components"),
    (["@text"], "no numeric columns"),
    (["@empty"], "empty"),
    (["@header"], "no data rows"),
    (["@nan"], "missing or infinite"),
]


@pytest.mark.parametrize("args, message", ERRORS,
                         ids=[" ".join(args) for args, _ in ERRORS])
def test_user_errors_are_one_line_and_exit_2(args, message, small_csv, tmp_path):
    files = {
        "@small": str(small_csv),
        "@text": _write(tmp_path, "text.csv", "a,b\nx,y\nz,w\n"),
        "@empty": _write(tmp_path, "empty.csv", ""),
        "@header": _write(tmp_path, "header.csv", "a,b\n"),
        "@nan": _write(tmp_path, "nan.csv", "a,b\n1,2\n3,\n5,6\n"),
    }
    args = [files.get(arg, arg) for arg in args]
    before = set(tmp_path.iterdir())
    code, out, err = run_cli(args, tmp_path)
    assert code == 2
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    assert message in err
    assert "Traceback" not in err + out
    assert set(tmp_path.iterdir()) == before               # nothing written


def test_usage_errors_and_help(tmp_path):
    code, _, err = run_cli(["--histogram", "bogus"], tmp_path)
    assert code == 2 and "usage:" in err and "invalid choice" in err
    code, out, _ = run_cli(["--help"], tmp_path)
    assert code == 0 and "--from-json" in out and "--nonprivate-reference" in out


@pytest.mark.skipif(not ADULT.is_file(), reason=f"{ADULT} is not available")
def test_adult_csv_uses_the_incomplete_u_statistic(tmp_path):
    start = time.perf_counter()
    code, out, err = run_cli([ADULT, "--seed", "0", "--out", "adult.png",
                              "--json", "adult.json"], tmp_path)
    seconds = time.perf_counter() - start
    assert code == 0, err
    assert "incomplete U-statistic" in out and f"{LARGE_N_PAIRS} partners" in out
    release = read_json(tmp_path / "adult.json")
    assert release["n_samples"] == 32561 and release["n_features"] == 5
    assert release["feature_names"] == ["age", "education_num", "capital_gain",
                                        "capital_loss", "hours_per_week"]
    assert release["estimator"]["params"]["pairs"] == LARGE_N_PAIRS
    assert release["estimator"]["params"]["duplicates"] == "ignore"
    assert release["privacy_spent"]["eps"] <= 1.0
    assert (tmp_path / "adult.png").read_bytes()[:8] == PNG_MAGIC
    print(f"CLI on adult.csv: {seconds:.1f} s")


def test_module_entry_point(tmp_path):
    # the package as this process imports it (installed, or built in place)
    package_root = Path(sklearn_dppca.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(package_root)]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    done = subprocess.run([sys.executable, "-m", "sklearn_dppca", "--version"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "sklearn_dppca" in done.stdout
    done = subprocess.run([sys.executable, "-m", "sklearn_dppca", "--delta", "5"],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --delta") and done.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
