"""The mutation check (tests/mutation_check.py) stays runnable: every mutation still finds the code it mutates,
and covers the kinds of breakage it promises. (Running it takes minutes; it is run by hand, not here.)"""

from __future__ import annotations

import pytest

from mutation_check import MUTATIONS, ROOT


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda mutation: mutation.name)
def test_each_mutation_applies_exactly_once(mutation):
    text = (ROOT / mutation.path).read_text(encoding="utf-8")
    assert text.count(mutation.before) == 1, f"update {mutation.name}: {mutation.path} changed"
    assert mutation.before != mutation.after


def test_the_kinds_of_breakage_are_covered_across_rules():
    kinds = {mutation.kind for mutation in MUTATIONS}
    assert {"early return", "inverted guard", "doubled report", "moved severity boundary", "dropped exemption"} <= kinds
    assert len({mutation.name for mutation in MUTATIONS}) == len(MUTATIONS)
    assert len({mutation.path for mutation in MUTATIONS}) >= 6
