import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

# Make the shared test helpers (fixture_harness) importable without installing them.
sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parent.parent

from availability import IN_CI  # noqa: E402 (needs the path above)

# CI runs the same examples every time (a failure there is reproducible, not a roll of the dice); local runs
# explore new ones. Hypothesis keeps its examples and caches outside the repository.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "gemlint-hypothesis")
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev")
settings.load_profile("ci" if IN_CI else "dev")

# Written by the tools that run the suite, not by it.
_TOOL_OUTPUT = {".git", "__pycache__", ".pytest_cache", "build", "dist", ".venv", ".ruff_cache", ".mypy_cache"}


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under the repository (outside the tools' own output), its size and modification time."""
    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _TOOL_OUTPUT and not d.endswith(".egg-info")]
        for name in names:
            path = Path(folder, name)
            try:
                status = path.lstat()
                files[path.relative_to(root).as_posix()] = (status.st_size, status.st_mtime_ns)
            except OSError:
                continue
    return files


@pytest.fixture(scope="session", autouse=True)
def _the_suite_writes_nothing_into_the_repository():
    before = _tree(ROOT)
    yield
    after = _tree(ROOT)
    added = sorted(after.keys() - before.keys())
    changed = sorted(path for path in before.keys() & after.keys() if before[path] != after[path])
    removed = sorted(before.keys() - after.keys())
    assert not (added or changed or removed), f"the test run changed the repository: added {added[:10]}, changed {changed[:10]}, removed {removed[:10]}"


@pytest.fixture(autouse=True)
def _cache_outside_the_repository(tmp_path_factory, monkeypatch):
    """Every CLI run a test makes (in-process or a subprocess, which inherits the environment) caches in a
    fresh temporary folder unless the test chooses otherwise: no result leaks between tests or runs."""
    monkeypatch.setenv("GEMLINT_CACHE_DIR", str(tmp_path_factory.mktemp("gemlint-cache")))
