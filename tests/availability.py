"""What the suite may skip: locally, a test whose library or toolchain is missing skips with the reason;
under ``CI=true``, where the README's test command installs everything, the same test fails instead, so
a broken install can never turn the benchmark assertions into silent skips."""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip (locally) or fail (in CI) because ``reason``."""
    if IN_CI:
        pytest.fail(f"{reason}; CI installs it, so this test may not skip there", pytrace=False)
    pytest.skip(reason)


def require_modules(*modules: str, hint: str = "the bench extra") -> None:
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if missing:
        unavailable(f"needs {', '.join(missing)} ({hint})")


def require_tools(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        unavailable(f"needs {', '.join(missing)} on PATH")
