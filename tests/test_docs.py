"""The documentation builds with ``sphinx-build -W`` and lists every public name."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_dppca
from sklearn_dppca import datasets, display, privacy
from ._hang_guard import HANG_GUARD

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "doc"


def _public_names():
    names = [f"sklearn_dppca.{name}" for name in sklearn_dppca.__all__
             if not name.startswith("__")]
    for module in (display, datasets, privacy):
        names += [f"{module.__name__}.{name}" for name in module.__all__]
    return names


def test_api_page_lists_every_public_name():
    text = (DOC / "api.rst").read_text(encoding="utf-8")
    listed = set()
    module = None
    for line in text.splitlines():
        match = re.match(r"\.\. currentmodule:: (\S+)", line)
        if match:
            module = match.group(1)
        elif re.match(r"^   [A-Za-z_]\w*$", line) and module:
            listed.add(f"{module}.{line.strip()}")
    missing = sorted(set(_public_names()) - listed)
    assert not missing, f"doc/api.rst does not list {missing}"


@pytest.mark.parametrize("name", ["DPKendallDirections", "DPScree", "DPPCA"])
def test_html_repr_links_to_the_api_page(name):
    # the "?" of the HTML repr goes to the page Sphinx writes for the class
    # (the build test below checks those pages exist), under the one docs address
    from sklearn_dppca._version import DOCS_URL

    html = getattr(sklearn_dppca, name)()._repr_html_()
    link = f'href="{DOCS_URL}generated/sklearn_dppca.{name}.html"'
    assert link in html
    assert "scikit-learn.org/" not in sklearn_dppca.DPPCA()._get_doc_link()


def test_docs_build_without_warnings(tmp_path):
    """Build the HTML with warnings as errors, without running the gallery."""
    for module in ("sphinx", "numpydoc", "sphinx_gallery"):
        pytest.importorskip(module)
    source = tmp_path / "doc"
    shutil.copytree(DOC, source, ignore=shutil.ignore_patterns(
        "_build", "generated", "auto_examples", "sg_execution_times.rst"))
    if (REPO / "examples").is_dir():
        shutil.copytree(REPO / "examples", tmp_path / "examples")
    output = tmp_path / "html"
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": os.pathsep.join(
        # the package as this process imports it (installed, or built in place)
        [str(Path(sklearn_dppca.__file__).resolve().parents[1])]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-D", "plot_gallery=0", str(source), str(output)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for page in ("index.html", "user_guide.html", "cli.html", "api.html",
                 "benchmarks.html", "generated/sklearn_dppca.DPPCA.html",
                 "generated/sklearn_dppca.DPScree.html",
                 "generated/sklearn_dppca.DPKendallDirections.html",
                 "generated/sklearn_dppca.load_release.html",
                 "generated/sklearn_dppca.display.plot_overview.html",
                 "generated/sklearn_dppca.privacy.PrivacyLedger.html"):
        assert (output / page).is_file(), page
    guide = (output / "user_guide.html").read_text(encoding="utf-8")
    for phrase in ("Mironov", "nonprivate_reference_NOT_PRIVATE", "frame_.center",
                   "random_state=None", "Balle and Wang"):
        assert phrase in guide, phrase
    assert (output / "_images" / "overview.png").is_file() or (
        output / "_static" / "overview.png").is_file()


def _overview_picture():
    """doc/overview_picture.py, the README picture's maker, as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("overview_picture",
                                                  DOC / "overview_picture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_picture_is_what_the_command_draws_now(tmp_path):
    import json
    import struct

    maker = _overview_picture()
    stored = json.loads(maker.FINGERPRINT.read_text(encoding="utf-8"))
    now, out = maker.fingerprint(tmp_path)
    assert now == stored, (
        "doc/_static/overview.png is older than the report the command draws: "
        "run `python doc/overview_picture.py` and commit the picture")
    # the stored picture has the size the command draws (header of the PNG)
    for path in (maker.PICTURE, out):
        with open(path, "rb") as handle:
            header = handle.read(24)
        assert header[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", header[16:24]) == (1700, 1100)
    assert "doc/_static/overview.png" in (REPO / "README.rst").read_text(encoding="utf-8")


def test_the_readme_picture_test_sees_a_change_of_the_figure(tmp_path):
    # the fingerprint notices a second y axis and another legend colour (the
    # ledger's rows are compared as they are, in the test above)
    maker = _overview_picture()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    fig.displays_ = {}
    ax.bar([0], [1], color="C0", label="private PVE")
    ax.legend()
    before = maker.figure_fingerprint(fig)
    ax.twinx().set_ylabel("private variance")
    assert maker.figure_fingerprint(fig) != before
    ax.get_legend().remove()
    ax.bar([1], [1], color="C1", label="private PVE")
    ax.legend()
    assert maker.figure_fingerprint(fig)["panels"][0]["legend"] != \
        before["panels"][0]["legend"]
    # numbers are not part of it, labels with digits are
    assert maker._words("DP PC1 (30.2%) of 5000 rows, V12") == "DP PC1 (#) of # rows, V12"
