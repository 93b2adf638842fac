"""Progress lines for long fits: work done and an estimate of the time left."""

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
        Seconds between two lines (the last report always prints).
    stream : file-like, default=sys.stdout
    """

    _unit = "pairs"

    def __init__(self, label, interval=2.0, stream=None):
        self.label = label
        self.interval = interval
        self.stream = stream
        self._start = self._last = time.perf_counter()

    def __call__(self, pairs_done, pairs_total):
        self._report(self.label, pairs_done, pairs_total)

    def _report(self, what, done, total):
        """One line, unless the last one is less than ``interval`` old."""
        now = time.perf_counter()
        if now - self._last < self.interval and done < total:
            return
        self._last = now
        share = done / total if total else 1.0
        left = (now - self._start) * (1 - share) / share if share > 0 else float("nan")
        print(f"[DPPCA] {what}: {done:,} of {total:,} {self._unit} ({100 * share:.0f}%), "
              f"about {left:.0f} s left", file=self.stream or sys.stdout, flush=True)


class BlockProgress(PairProgress):
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

    _unit = "blocks"

    def __init__(self, label, interval=2.0, stream=None):
        super().__init__(label, interval, stream)
        self._pass = 0
        self._done = None

    def __call__(self, blocks_done, blocks_total):
        if self._done is None or blocks_done <= self._done:
            self._pass += 1                   # a new pass: its own clock
            self._start = self._last = time.perf_counter()
        self._done = None if blocks_done >= blocks_total else blocks_done
        self._report(f"{self.label}, pass {self._pass}", blocks_done, blocks_total)
