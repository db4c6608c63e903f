"""A missing library skips a test locally and fails it in CI, where the README's command installs it."""

from __future__ import annotations

import pytest

import availability


@pytest.mark.parametrize(("in_ci", "outcome"), [(False, pytest.skip.Exception), (True, pytest.fail.Exception)])
def test_a_missing_module_skips_locally_and_fails_in_ci(monkeypatch, in_ci, outcome):
    monkeypatch.setattr(availability, "IN_CI", in_ci)
    with pytest.raises(outcome, match="needs gemlint_no_such_module"):
        availability.require_modules("gemlint_no_such_module")
    with pytest.raises(outcome, match="needs gemlint-no-such-tool on PATH"):
        availability.require_tools("gemlint-no-such-tool")


def test_what_is_installed_passes(monkeypatch):
    monkeypatch.setattr(availability, "IN_CI", True)
    availability.require_modules("json")
    availability.require_tools("sh")


def test_hypothesis_is_derandomized_exactly_in_ci():
    from hypothesis import settings

    assert settings.get_profile("ci").derandomize is True and settings.get_profile("ci").database is None
    assert settings.default.derandomize is availability.IN_CI
