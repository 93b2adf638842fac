"""How fast the pictures are: the overview, each display, and the command line.

Medians of ``--repeats`` runs (default 5) on the built-in ``gau`` data (5,000 x 20,
five groups, the command line's default fit), each printed with its ratio to the
target of issue 18 (below 1: within it):

* ``plot_overview`` drawn and written as a PNG at the command line's 100 dpi
  (target 1.5 s), and each display alone (no target: for profiling);
* ``python -m sklearn_dppca`` end to end, interpreter start included, figure and
  JSON written to a temporary folder (target 4 s);
* ``python -m sklearn_dppca --from-json`` redrawing that release (target 3 s);
* ``import sklearn_dppca`` in a fresh interpreter (no target: its share of both).

Run: ``python benchmarks/bench_render.py [--repeats N]`` with the package installed
(or ``PYTHONPATH=.``). Other processes on the machine add to wall times.
"""

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

TARGETS = {"overview": 1.5, "cli": 4.0, "from_json": 3.0}


def _median(step, repeats):
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def _line(label, seconds, target=None):
    ratio = f"   ratio {seconds / target:.2f} (target {target:g} s)" if target else ""
    print(f"  {label:<34} {seconds:6.2f} s{ratio}", flush=True)


def _fitted_gau():
    from sklearn_dppca import DPPCA
    from sklearn_dppca._data_sources import builtin_data

    data = builtin_data()
    return DPPCA(groups=data.labels, random_state=0).fit(data.X, data.y)


def _pictures(estimator, repeats):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_dppca.display import (BiplotDisplay, LoadingDisplay, ScoreDisplay,
                                       ScreeDisplay, VariableDisplay, plot_overview)

    def draw(make):
        figure = make()
        figure.savefig(io.BytesIO(), format="png", dpi=100)
        plt.close(figure)

    _line("plot_overview + PNG", _median(lambda: draw(lambda: plot_overview(estimator)),
                                          repeats), TARGETS["overview"])
    for display in (ScreeDisplay, LoadingDisplay, VariableDisplay, ScoreDisplay,
                    BiplotDisplay):
        seconds = _median(lambda: draw(lambda: display.from_estimator(estimator).figure_),
                          repeats)
        _line(f"{display.__name__} + PNG", seconds)


def _command_lines(repeats):
    env = dict(os.environ, MPLBACKEND="Agg")
    with tempfile.TemporaryDirectory() as folder:
        figure, release = Path(folder, "gau.png"), Path(folder, "gau.json")
        run = [sys.executable, "-m", "sklearn_dppca", "--seed", "0", "--out", str(figure),
               "--json", str(release), "--quiet"]
        _line("python -m sklearn_dppca",
              _median(lambda: subprocess.run(run, check=True, capture_output=True,
                                             env=env), repeats), TARGETS["cli"])
        redraw = [sys.executable, "-m", "sklearn_dppca", "--from-json", str(release),
                  "--out", str(Path(folder, "again.png")), "--quiet"]
        _line("python -m sklearn_dppca --from-json",
              _median(lambda: subprocess.run(redraw, check=True, capture_output=True,
                                             env=env), repeats), TARGETS["from_json"])
    imports = [sys.executable, "-c", "import sklearn_dppca"]
    _line("import sklearn_dppca",
          _median(lambda: subprocess.run(imports, check=True, env=env), repeats))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    warnings.simplefilter("ignore")
    print(f"gau (5000 x 20), medians of {repeats} runs")
    _pictures(_fitted_gau(), repeats)
    _command_lines(repeats)


if __name__ == "__main__":
    main()
