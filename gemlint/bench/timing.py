"""Latency measurement: the two variants are timed in alternation so drift hits both alike, several times;
the figure reported is the median, and the runs it is the median of go with it (see :class:`Median`)."""

from __future__ import annotations

import statistics
import time
from typing import Callable


class Median(float):
    """The median of ``runs``, usable wherever a number is; the runs give its spread in the report."""

    runs: tuple[float, ...]

    def __new__(cls, runs) -> "Median":
        runs = tuple(float(run) for run in runs)
        value = super().__new__(cls, statistics.median(runs))
        value.runs = runs
        return value


def _calibrate(fn: Callable[[], object], target: float) -> int:
    """Calls per sample so that one sample lasts about ``target`` seconds."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= target or number >= 1 << 16:
            return number
        number = max(number * 2, int(number * target / max(elapsed, 1e-9)))


def compare_latency(
    bad: Callable[[], object], good: Callable[[], object], *, quick: bool, sync: Callable[[], None] = lambda: None
) -> tuple[Median, Median]:
    """Median milliseconds per call of ``bad`` and ``good``, each carrying its runs."""
    target = 0.01 if quick else 0.1
    samples = 3 if quick else 9

    def timed(fn):
        def run():
            fn()
            sync()

        return run

    bad_run, good_run = timed(bad), timed(good)
    bad_number = _calibrate(bad_run, target)
    good_number = _calibrate(good_run, target)
    bad_samples, good_samples = [], []
    for _ in range(samples):
        for run, number, into in ((bad_run, bad_number, bad_samples), (good_run, good_number, good_samples)):
            start = time.perf_counter()
            for _ in range(number):
                run()
            into.append((time.perf_counter() - start) / number)
    return Median(sample * 1e3 for sample in bad_samples), Median(sample * 1e3 for sample in good_samples)


def once(fn: Callable[[], object]) -> float:
    """Milliseconds of one call (first calls: compilation, start-up)."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3
