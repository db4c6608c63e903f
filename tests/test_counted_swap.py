"""A swapped class attribute stays swapped while anyone is inside, and comes back after the last one leaves."""

from __future__ import annotations

import pytest

from gemlint.frontends.counted_swap import CountedSwap


class Owner:
    def method(self) -> str:
        return "original"


def test_overlapping_users_keep_the_replacement_until_the_last_leaves():
    swap = CountedSwap(Owner, "method", lambda self: "replaced")
    with swap.installed():
        assert Owner().method() == "replaced"
        with swap.installed():
            assert Owner().method() == "replaced"
        assert Owner().method() == "replaced"  # the outer user is still inside
    assert Owner().method() == "original"
    assert Owner.method is swap.original


def test_an_error_inside_puts_the_original_back():
    swap = CountedSwap(Owner, "method", lambda self: "replaced")
    with pytest.raises(RuntimeError), swap.installed():
        raise RuntimeError("inside")
    assert Owner().method() == "original"
