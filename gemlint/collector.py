"""Pausing Python's cyclic garbage collector where a run builds many objects that live on.

The collector runs every 700 container allocations, and a full collection walks every tracked object. Reading
a large project's facts ledger and deriving the facts build hundreds of thousands of lists, tuples and sets
that outlive the collections that walk them, and hold no cycle: in a pre-commit run over one edited module
of transformers, collections were a third of the time spent on the facts (0.09-0.11 s of 0.33 s). Objects
that do form cycles meanwhile are collected once the collector runs again.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off; it is on again after, if it was before."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


#: Set by the ``gemlint`` command (:mod:`gemlint.program`), whose process ends with its run.
_RUN_ENDS_THE_PROCESS = False


def run_ends_the_process() -> None:
    global _RUN_ENDS_THE_PROCESS
    _RUN_ENDS_THE_PROCESS = True


def kept_for_the_run() -> None:
    """The objects built so far live until the run ends. In the command's process they leave the collector's
    walks for good (``gc.freeze``): a fresh clone's run decodes a few million objects of summaries, and the
    collections that walked them after cost it 0.4 s (the process that derives the facts, forked from it,
    inherits them frozen too). A process that outlives a run (the flake8 plugin, the API) keeps its collector
    as it is."""
    if _RUN_ENDS_THE_PROCESS:
        gc.freeze()
