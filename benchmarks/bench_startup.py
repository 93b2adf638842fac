"""The report against a bare start of the stack it runs on.

Two commands in fresh interpreters, in turns:

* the bare start: ``python -c "import numpy, pandas, sklearn, matplotlib"``,
  the stack the report stands on and nothing of this package;
* the report: ``python -m sklearn_dppca --out report.png`` on the built-in
  ``gau`` data (the fit, the summary, the overview figure and the JSON release
  written to a temporary folder).

The ratio of each pair is taken and the median of ``--repeats`` ratios (default
7) printed (target of issue 30: at most 1.5). ``--importtime`` also prints the
slowest imports of the report (``python -X importtime``), the place to look when
the ratio grows. Other processes on the machine add to both times; the ratio is
steadier than either.

Run: ``python benchmarks/bench_startup.py [--repeats N] [--importtime]``.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGET = 1.5
BARE = [sys.executable, "-c", "import numpy, pandas, sklearn, matplotlib"]


def _report(folder):
    return [sys.executable, "-m", "sklearn_dppca", "--out", os.path.join(folder, "r.png"),
            "--json", os.path.join(folder, "r.json"), "--quiet"]


def _environment():
    """The children's environment: the Agg backend, and bytecode cached as an
    installed package has it (pip compiles it; a PYTHONDONTWRITEBYTECODE of the
    development shell would make the report compile this package's modules at
    every start, 0.15 - 0.25 s that no user pays)."""
    environment = {key: value for key, value in os.environ.items()
                   if key != "PYTHONDONTWRITEBYTECODE"}
    environment["MPLBACKEND"] = "Agg"
    return environment


def _seconds(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=_environment())
    return time.perf_counter() - start


def _slowest_imports(folder, count=15):
    """The report's imports with the largest cumulative times (microseconds)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *_report(folder)[1:]],
                          capture_output=True, text=True, check=True, env=_environment())
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = (part.strip() for part in line[12:].split("|"))
            rows.append((int(cumulative), name))
    for cumulative, name in sorted(rows, reverse=True)[:count]:
        print(f"  {cumulative / 1e6:6.3f} s  {name}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        _seconds(_report(folder))      # warm the file and font caches, write bytecode
        bare, report, ratios = [], [], []
        for _ in range(args.repeats):
            bare.append(_seconds(BARE))
            report.append(_seconds(_report(folder)))
            ratios.append(report[-1] / bare[-1])
        print(f"bare start {statistics.median(bare):.2f} s, report "
              f"{statistics.median(report):.2f} s: ratio {statistics.median(ratios):.2f} "
              f"(median of {args.repeats} pairs; target {TARGET:g}; "
              f"ratios {min(ratios):.2f} - {max(ratios):.2f})")
        if args.importtime:
            print("slowest imports of the report (cumulative):")
            _slowest_imports(folder)


if __name__ == "__main__":
    main()
