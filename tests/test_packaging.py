"""The CI scripts agree with pyproject.toml and the README."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lower_bounds(text):
    """``{name: "1.23"}`` of every ``"name>=version"`` requirement in pyproject.toml."""
    return {name.lower(): version for name, version in
            re.findall(r'"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?>=([0-9.]+)"', text)}


def _pins(text):
    return {name.lower(): version for name, version in
            re.findall(r'"([A-Za-z0-9_.\-]+)==([0-9.]+)"', text)}


def _minor(version):
    return tuple(int(part) for part in version.split(".")[:2])


def test_oldest_stage_pins_the_declared_lower_bounds():
    bounds = _lower_bounds((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = _pins((ROOT / ".ci" / "oldest-deps").read_text(encoding="utf-8"))
    runtime = ["numpy", "scipy", "scikit-learn", "matplotlib", "joblib"]
    assert set(runtime) <= set(pins), pins
    for name, pinned in pins.items():
        # the declared minor release (a later patch may be needed for wheels)
        assert _minor(pinned) == _minor(bounds[name]), (name, pinned, bounds[name])


def test_ci_runs_the_readme_test_command_and_the_oldest_stage():
    readme = (ROOT / "README.rst").read_text(encoding="utf-8")
    command = 'pip install ".[test]" && pytest'
    assert f"    {command}\n" in readme
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in run
    assert any(".ci/oldest-deps" in line and line.startswith("bash ") for line in run)


def test_readme_and_install_page_state_the_declared_lower_bounds():
    bounds = _lower_bounds((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    runtime = {"NumPy": "numpy", "SciPy": "scipy", "scikit-learn": "scikit-learn",
               "matplotlib": "matplotlib", "joblib": "joblib"}
    for page in (ROOT / "README.rst", ROOT / "doc" / "install.rst"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        for shown, name in runtime.items():
            assert f"{shown} >= {bounds[name]}" in text, (page.name, shown, bounds[name])
