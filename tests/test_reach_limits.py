"""The call-graph walk behind GEM601/602 stays bounded: a module astroid cannot build in time is unresolved."""

from __future__ import annotations

import gemlint.project.reach as reach

MODULE = "\n".join(f"def f{i}(x):\n    return [y * {i} for y in x if y > {i}]\n" for i in range(3000))


def test_a_module_astroid_builds_in_time_is_built():
    module = reach.build_astroid(MODULE, "many", "many.py")
    assert module is not None and "f2999" in module.locals


def test_a_module_astroid_cannot_build_in_time_is_not_resolved(monkeypatch):
    monkeypatch.setattr(reach, "ASTROID_SECONDS", 0.001)
    assert reach.build_astroid(MODULE, "many_slow", "many_slow.py") is None
