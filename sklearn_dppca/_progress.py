"""Progress lines for long fits: pairs processed and an estimate of the time left."""

import sys
import time


class PairProgress:
    """Callable ``progress(pairs_done, pairs_total)`` that prints at most every
    ``interval`` seconds, with the share done and the time left at the current rate.

    Parameters
    ----------
    label : str
        What is being computed (printed in front of each line).
    interval : float, default=2.0
        Seconds between two lines.
    stream : file-like, default=sys.stdout
    """

    def __init__(self, label, interval=2.0, stream=None):
        self.label = label
        self.interval = interval
        self.stream = stream
        self._start = time.perf_counter()
        self._last = self._start

    def __call__(self, pairs_done, pairs_total):
        now = time.perf_counter()
        finished = pairs_done >= pairs_total
        if now - self._last < self.interval and not finished:
            return
        self._last = now
        elapsed = now - self._start
        share = pairs_done / pairs_total if pairs_total else 1.0
        left = elapsed * (1 - share) / share if share > 0 else float("nan")
        print(f"[DPPCA] {self.label}: {pairs_done:,} of {pairs_total:,} pairs "
              f"({100 * share:.0f}%), about {left:.0f} s left",
              file=self.stream or sys.stdout, flush=True)


class BlockProgress:
    """Callable ``progress(blocks_done, blocks_total)`` for fits in row blocks: one
    line at most every ``interval`` seconds with the pass over the data, the blocks
    done and the time left in that pass at the current rate.

    A fit makes several passes (one per statistic); a report with fewer blocks
    done than the last one starts the next pass.

    Parameters
    ----------
    label : str
        What is being fitted (printed in front of each line).
    interval : float, default=2.0
        Seconds between two lines (the last block of a pass always prints).
    stream : file-like, default=sys.stdout
    """

    def __init__(self, label, interval=2.0, stream=None):
        self.label = label
        self.interval = interval
        self.stream = stream
        self._pass = 0
        self._done = None

    def __call__(self, blocks_done, blocks_total):
        now = time.perf_counter()
        if self._done is None or blocks_done <= self._done:
            self._pass += 1
            self._start = self._last = now
        self._done = None if blocks_done >= blocks_total else blocks_done
        finished = blocks_done >= blocks_total
        if now - self._last < self.interval and not finished:
            return
        self._last = now
        elapsed = now - self._start
        share = blocks_done / blocks_total if blocks_total else 1.0
        left = elapsed * (1 - share) / share if share > 0 else float("nan")
        print(f"[DPPCA] {self.label}, pass {self._pass}: {blocks_done:,} of "
              f"{blocks_total:,} blocks ({100 * share:.0f}%), about {left:.0f} s left",
              file=self.stream or sys.stdout, flush=True)
