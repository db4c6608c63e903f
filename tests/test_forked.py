"""Work handed to a forked copy of the process comes back as computed there, and a copy that fails gives nothing,
for the caller to compute it itself."""

from __future__ import annotations

import os

import pytest

from gemlint import forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="processes fork only where the system can")


def test_the_copy_computes_from_the_state_it_inherits():
    state = {"values": list(range(100_000))}  # more than a pipe holds at once: read before the copy is waited for
    copy = forked.start(lambda: [value * 2 for value in state["values"]])
    assert copy is not None
    state["values"] = []  # changed here after the fork: the copy computed from what it inherited
    assert copy.result() == [value * 2 for value in range(100_000)]


def test_the_copy_runs_in_another_process():
    copy = forked.start(os.getpid)
    assert copy is not None
    assert copy.result() not in (None, os.getpid())


def test_a_copy_that_raises_gives_nothing():
    def fails():
        raise ValueError("no")

    copy = forked.start(fails)
    assert copy is not None
    assert copy.result() is None


def test_a_copy_that_dies_gives_nothing():
    copy = forked.start(lambda: os.kill(os.getpid(), 9))
    assert copy is not None
    assert copy.result() is None


def test_a_copy_discarded_before_its_result_is_ended():
    copy = forked.start(lambda: __import__("time").sleep(60))
    assert copy is not None
    pid = copy._pid
    copy.discard()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no such child any more
