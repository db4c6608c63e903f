"""Latency measurement: the two variants are timed in alternation so drift hits both alike."""

from __future__ import annotations

import statistics
import time
from typing import Callable


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
) -> tuple[float, float]:
    """Median milliseconds per call of ``bad`` and ``good``."""
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
    return statistics.median(bad_samples) * 1e3, statistics.median(good_samples) * 1e3


def once(fn: Callable[[], object]) -> float:
    """Milliseconds of one call (first calls: compilation, start-up)."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3
