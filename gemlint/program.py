"""The ``gemlint`` command: the cyclic collector set for a short-lived run, then :func:`gemlint.cli.entry`.

A run builds hundreds of thousands of objects that live until it exits (the imported rules, the walk's files,
the project index, the facts' ledger) and makes few reference cycles. With CPython's default thresholds the
collector walks the young objects every 700 allocations and the older ones after every ten of those walks; a
pre-commit run over one edited file of a large project spent 10-15 ms of its 0.4 s so. A first threshold of
200,000 allocations (as mypy sets for its own runs) still collects the cycles a run makes, less often. Only the
command sets it, and lets a run take what it keeps until the end out of the collector's walks
(:func:`gemlint.collector.kept_for_the_run`): the library (the flake8 plugin, the API) leaves the collector of the
process it runs in alone.
"""

from __future__ import annotations

import gc
import sys


def main() -> None:
    if sys.implementation.name == "cpython":  # not `platform`, whose import costs a run 2 ms
        gc.set_threshold(200_000, 30, 30)
    from gemlint.collector import run_ends_the_process

    run_ends_the_process()
    from gemlint.cli import entry  # imported after: importing the rules builds many objects too

    entry()
