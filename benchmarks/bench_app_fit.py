"""How long the explorer takes from a click on Fit to the figure (issue target: 3 s).

Times, on the built-in gau data (5,000 rows x 20 variables, the explorer's default
source), the explorer's own steps after start-up: the fit (DPPCA with the page's
default settings and an accountant) and the overview PNG the page shows, separately
and together, as medians of a few runs. Prints each as a ratio to the 3 s target
(below 1: within it). The browser's own share (sending the click, showing the PNG)
is not in these numbers; tests/test_app_browser.py exercises the whole path.

Run: python benchmarks/bench_app_fit.py [--repeats N]
"""

import argparse
import os
import statistics
import tempfile
import time
import warnings

from sklearn_dppca.app._figures import warm_up

from sklearn_dppca.app._session import Explorer

from sklearn_dppca.app._sources import load_source

TARGET_SECONDS = 3.0


def _median_seconds(step, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    warnings.simplefilter("ignore")
    warm_up()
    data = load_source("builtin")
    with tempfile.TemporaryDirectory() as folder:
        explorer = Explorer(data, (1000.0, 1e-3), os.path.join(folder, "gau.json"))
        fit_inputs = {"eps": 1.0, "delta": 1e-6, "n_components": 2}
        fit = _median_seconds(lambda: explorer.fit(fit_inputs), repeats)
        index = len(explorer.fits) - 1
        draw = _median_seconds(lambda: explorer.figure_bytes(index, "overview", "png"),
                               repeats)
        both = _median_seconds(lambda: explorer.figure_bytes(
            explorer.fit(fit_inputs), "overview", "png"), repeats)
    print(f"gau ({data.X.shape[0]} x {data.X.shape[1]}), medians of {repeats} runs; "
          f"ratio = time / {TARGET_SECONDS:g} s target")
    for label, seconds in (("fit", fit), ("overview PNG", draw), ("fit + overview", both)):
        print(f"  {label:<15} {seconds:6.2f} s   ratio {seconds / TARGET_SECONDS:.2f}")


if __name__ == "__main__":
    main()
