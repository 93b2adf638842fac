"""Run every gallery example (examples/plot_*.py) as a script, under Agg."""

import runpy
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("plot_*.py"))


def test_examples_are_found():
    assert len(EXAMPLES) >= 4


@pytest.mark.filterwarnings("ignore:.*non-interactive.*:UserWarning")
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plt.close("all")
    try:
        runpy.run_path(str(path), run_name="__main__")
        assert len(plt.get_fignums()) >= 1, f"{path.name} made no figure"
    finally:
        plt.close("all")
    # the examples save nothing themselves
    assert list(tmp_path.iterdir()) == []
