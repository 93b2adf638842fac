"""How fast the front ends read a CSV file, against ``pandas.read_csv``.

A table of 200,000 rows x 6 float columns (written by pandas, ``%.17g``-exact)
is read by ``sklearn_dppca._data_sources.read_csv`` (what ``python -m
sklearn_dppca data.csv`` and the explorer use: the same strict cell rule either
way) and by a bare ``pandas.read_csv`` of the same file. The two alternate, the
ratio of each pair is taken, and the median of ``--repeats`` ratios (default 9)
is printed (target of issue 30: at most 2). A second line reads the same table
with a group column of declared labels, a third a file the fast reader leaves to
the exact one (a quoted header name): the strict reader's own speed.

Run: ``python benchmarks/bench_csv.py [--repeats N] [--rows N]``. Other processes
on the machine add to wall times; the ratio is steadier than either time.
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

TARGET = 2.0


def _seconds(read):
    start = time.perf_counter()
    read()
    return time.perf_counter() - start


def _ratio(ours, theirs, repeats):
    ratios, ours_s, theirs_s = [], [], []
    for _ in range(repeats):
        theirs_s.append(_seconds(theirs))
        ours_s.append(_seconds(ours))
        ratios.append(ours_s[-1] / theirs_s[-1])
    return statistics.median(ratios), statistics.median(ours_s), statistics.median(theirs_s)


def _tables(folder, rows):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    values = rng.standard_normal((rows, 6)) * [1.0, 10.0, 100.0, 1e3, 0.01, 5.0]
    frame = pd.DataFrame(values, columns=[f"x{j}" for j in range(6)])
    plain = Path(folder) / "plain.csv"
    frame.to_csv(plain, index=False)
    grouped = Path(folder) / "grouped.csv"
    frame.assign(group=rng.choice(["a", "b", "c"], size=rows)).to_csv(grouped, index=False)
    quoted = Path(folder) / "quoted.csv"
    text = plain.read_text(encoding="utf-8")
    quoted.write_text('"x0"' + text[2:], encoding="utf-8")
    return plain, grouped, quoted


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args(argv)

    import pandas as pd

    from sklearn_dppca._data_sources import read_csv

    with tempfile.TemporaryDirectory() as folder:
        plain, grouped, quoted = _tables(folder, args.rows)
        cases = [
            ("numbers only", lambda: read_csv(plain), lambda: pd.read_csv(plain)),
            ("with a declared group column",
             lambda: read_csv(grouped, group="group", declared=["a", "b", "c"]),
             lambda: pd.read_csv(grouped)),
            ("quoted header: the exact reader", lambda: read_csv(quoted),
             lambda: pd.read_csv(quoted)),
        ]
        print(f"read_csv against pandas.read_csv, {args.rows} x 6, median of "
              f"{args.repeats} (target {TARGET:g}x on the first line)")
        for label, ours, theirs in cases:
            ratio, ours_s, theirs_s = _ratio(ours, theirs, args.repeats)
            print(f"  {label:<34} ours {ours_s:6.3f} s  pandas {theirs_s:6.3f} s  "
                  f"ratio {ratio:5.2f}", flush=True)


if __name__ == "__main__":
    main()
