"""The report's start-up against a bare start of the stack it runs on.

Three commands in fresh interpreters, in turns:

* the bare start: ``python -c "import numpy, pandas, sklearn, matplotlib"``,
  the stack the report stands on and nothing of this package;
* the report's start-up: a fresh interpreter importing every module that
  ``python -m sklearn_dppca --out report.png`` imports (read off the report's
  own ``python -X importtime``: this package's modules, the estimators' and the
  figure's, Matplotlib's backend), and nothing else: what the report costs before
  it reads a cell;
* the whole report on the built-in ``gau`` data (the fit, the summary, the
  overview figure and the JSON release written to a temporary folder), for
  scale.

The ratio of each start-up (and each report) to its bare start is taken and the
median of ``--repeats`` ratios (default 7) printed (target of issue 30: at most
1.5 for the start-up). ``--importtime`` also prints the slowest imports of the
report. Other processes on the machine add to all times; the ratios are steadier
than the times.

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


#: Keep the shell's PYTHONDONTWRITEBYTECODE (``--as-is``): the development case.
_AS_IS = []


def _environment():
    """The children's environment: the Agg backend, and bytecode cached as an
    installed package has it (pip compiles it; a PYTHONDONTWRITEBYTECODE of the
    development shell would make the report compile this package's modules at
    every start, 0.15 - 0.25 s that no user pays)."""
    environment = {key: value for key, value in os.environ.items()
                   if key != "PYTHONDONTWRITEBYTECODE" or _AS_IS}
    environment["MPLBACKEND"] = "Agg"
    return environment


def _seconds(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=_environment())
    return time.perf_counter() - start


def _imported(folder):
    """The modules the report imports at the top level of its import tree (the
    rest come with them), in order, from its ``-X importtime`` trace."""
    done = subprocess.run([sys.executable, "-X", "importtime", *_report(folder)[1:]],
                          capture_output=True, text=True, check=True, env=_environment())
    names = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            name = line.rsplit("|", 1)[1]
            if not name.startswith("  ") and name.strip() not in names:
                names.append(name.strip())
    return names


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
    parser.add_argument("--as-is", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE if the shell sets it")
    args = parser.parse_args(argv)
    if args.as_is:
        _AS_IS.append(True)
    with tempfile.TemporaryDirectory() as folder:
        _seconds(_report(folder))      # warm the file and font caches, write bytecode
        start_up = [sys.executable, "-c", "import " + ", ".join(_imported(folder))]
        times = {"bare": [], "start-up": [], "report": []}
        ratios = {"start-up": [], "report": []}
        for _ in range(args.repeats):
            for name, command in (("start-up", start_up), ("report", _report(folder))):
                times["bare"].append(_seconds(BARE))
                times[name].append(_seconds(command))
                ratios[name].append(times[name][-1] / times["bare"][-1])
        print(f"bare start {statistics.median(times['bare']):.2f} s (median of "
              f"{2 * args.repeats})")
        for name, target in (("start-up", TARGET), ("report", None)):
            print(f"{name:<9} {statistics.median(times[name]):.2f} s: ratio "
                  f"{statistics.median(ratios[name]):.2f} (median of {args.repeats} "
                  f"pairs, {min(ratios[name]):.2f} - {max(ratios[name]):.2f})"
                  + (f"; target {target:g}" if target else "; for scale"))
        if args.importtime:
            print("slowest imports of the report (cumulative):")
            _slowest_imports(folder)


if __name__ == "__main__":
    main()
