"""The packaging, the CI scripts, the README and the install page agree."""

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sklearn_dppca"
#: Shown name on the README and the install page -> distribution name.
RUNTIME = {"NumPy": "numpy", "SciPy": "scipy", "scikit-learn": "scikit-learn",
           "matplotlib": "matplotlib", "joblib": "joblib", "pandas": "pandas",
           "threadpoolctl": "threadpoolctl"}
#: Import name -> distribution name, where they differ.
DISTRIBUTION = {"sklearn": "scikit-learn"}


def _text(*parts):
    return (ROOT.joinpath(*parts)).read_text(encoding="utf-8")


def _dependencies_block(pyproject):
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.S | re.M)
    assert block, "no dependencies list in pyproject.toml"
    return block.group(1)


def _lower_bounds(text):
    """``{name: "1.23"}`` of every ``"name>=version"`` requirement in ``text``."""
    return {name.lower(): version for name, version in
            re.findall(r'"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?>=([0-9.]+)"', text)}


def _pins(text):
    return {name.lower(): version for name, version in
            re.findall(r'"([A-Za-z0-9_.\-]+)==([0-9.]+)"', text)}


def _minor(version):
    return tuple(int(part) for part in version.split(".")[:2])


def test_oldest_stage_pins_the_declared_lower_bounds():
    bounds = _lower_bounds(_dependencies_block(_text("pyproject.toml")))
    pins = _pins(_text(".ci", "oldest-deps"))
    assert set(bounds) <= set(pins), sorted(set(bounds) - set(pins))
    for name, pinned in pins.items():
        if name in bounds:
            # the declared minor release (a later patch may be needed for wheels)
            assert _minor(pinned) == _minor(bounds[name]), (name, pinned, bounds[name])


def test_ci_runs_the_readme_test_command_and_the_other_stages():
    readme = _text("README.rst")
    command = 'pip install ".[test]" && pytest'
    assert f"    {command}\n" in readme
    run = [line.strip() for line in _text(".ci", "run").splitlines()]
    assert command in run                               # literally, on its own line
    assert any(".ci/oldest-deps" in line and line.startswith("bash ") for line in run)
    # the fresh-install stage: no extras, the README's first command, both places
    fresh = "pip install . && python -m sklearn_dppca --out X.png --json X.json"
    assert any(fresh in line for line in run)
    assert any("elsewhere" in line and "python -m sklearn_dppca --out X.png --json X.json"
               in line for line in run)
    assert any("[ -s " in line for line in run)         # the files must be non-empty


def test_readme_quick_start_is_the_fresh_stage_command():
    readme = _text("README.rst")
    assert "    pip install . && python -m sklearn_dppca\n" in readme


def test_readme_and_install_page_state_the_declared_lower_bounds():
    bounds = _lower_bounds(_dependencies_block(_text("pyproject.toml")))
    assert set(RUNTIME.values()) == set(bounds), sorted(bounds)
    for page in (ROOT / "README.rst", ROOT / "doc" / "install.rst"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        for shown, name in RUNTIME.items():
            assert f"{shown} >= {bounds[name]}" in text, (page.name, shown, bounds[name])


def _guarded(node, parents):
    """Whether an import sits in a ``try`` whose handlers catch ImportError."""
    for parent in parents.get(node, ()):
        if isinstance(parent, ast.Try) and any(
            handler.type is not None and "ImportError" in ast.unparse(handler.type)
            for handler in parent.handlers
        ):
            return True
    return False


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names is 3.10+")
def test_every_runtime_import_is_declared_or_guarded():
    declared = set(_lower_bounds(_dependencies_block(_text("pyproject.toml"))))
    undeclared = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {}

        def visit(node, chain):
            parents[node] = chain
            for child in ast.iter_child_nodes(node):
                visit(child, chain + [node])

        visit(tree, [])
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "sklearn_dppca":
                    continue
                if DISTRIBUTION.get(top, top) in declared or _guarded(node, parents):
                    continue
                undeclared.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    assert not undeclared, undeclared


def test_the_in_tree_extension_is_built_and_ignored():
    setup = _text("setup.py")
    assert "cmdclass" in setup and "build_ext" in setup
    ignored = _text(".gitignore").splitlines()
    assert "*.so" in ignored and "*.pyd" in ignored


def test_install_page_documents_the_test_profiles():
    pytest.importorskip("hypothesis")    # a test extra
    from ._hypothesis_support import PROFILE_SCALE

    text = " ".join(_text("doc", "install.rst").split())
    for profile in PROFILE_SCALE:
        assert f"HYPOTHESIS_PROFILE={profile}" in text, profile
    for way in ("pytest -m slow", "pytest --run-slow", "SKLEARN_DPPCA_RUN_SLOW=1",
                "--audit-full"):
        assert way in text, way
    conftest = _text("tests", "conftest.py")
    for name in ('"SKLEARN_DPPCA_RUN_SLOW"', '"--run-slow"', '"--audit-full"'):
        assert name in conftest, name


def test_show_versions_names_every_dependency_and_the_kernel_route(capsys):
    # scikit-learn's show_versions, for bug reports: Python, each run-time
    # dependency of pyproject.toml (by import name) and the kernel route in use.
    import platform

    import sklearn_dppca
    from sklearn_dppca import _kendall_kernel

    sklearn_dppca.show_versions()
    out = capsys.readouterr().out
    assert platform.python_version() in out and f"sklearn-dppca: {sklearn_dppca.__version__}" in out
    for name in ("numpy", "scipy", "sklearn", "matplotlib", "joblib", "pandas",
                 "threadpoolctl"):
        assert re.search(rf"^\s+{name}: \d", out, re.M), name
    assert re.search(rf"^\s+route: {_kendall_kernel.current_route()}$", out, re.M)
    assert "SKLEARN_DPPCA_KERNEL" in out
