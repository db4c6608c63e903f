"""The kept walk of a project root (gemlint.walk_record): taken again while no folder of the project and no file
that steers the walk changed, walked afresh as soon as one did, and never kept when the walk met a link."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import gemlint.discovery as discovery_module
import gemlint.walk_record as walk_record
from gemlint.cache import Cache
from gemlint.config import default_config
from gemlint.config_tree import ConfigTree
from gemlint.registry import known_codes
from gemlint.discovery import Discovery, listed_package
from gemlint.runner import run
from gemlint.walk_record import WalkRecord


@pytest.fixture(autouse=True)
def nothing_is_racy(monkeypatch):
    """The files of a test are made a moment before the walk: count them as old enough to be kept."""
    monkeypatch.setattr(walk_record, "RACY_SECONDS", 0.0)


@pytest.fixture
def listings(monkeypatch) -> list[str]:
    """The folders the walks of a test list."""
    listed: list[str] = []
    real = Discovery._listing

    def counting(self, folder):
        listed.append(folder)
        return real(self, folder)

    monkeypatch.setattr(Discovery, "_listing", counting)
    return listed


def _project(root: Path) -> Path:
    (root / "svc" / "core").mkdir(parents=True)
    (root / "svc" / "__init__.py").write_text("")
    (root / "svc" / "core" / "__init__.py").write_text("")
    (root / "svc" / "core" / "model.py").write_text("import torch\n")
    (root / "svc" / "app.py").write_text("from svc.core.model import torch\n")
    (root / "deploy").mkdir()
    (root / "deploy" / "serve.yaml").write_text("kind: Pod\n")
    (root / ".gitignore").write_text("scratch/\n")
    return root


def _tree(root: Path) -> ConfigTree:
    """The configuration as the command line reads it: nested config files included."""
    return ConfigTree(root, known_codes())


def _walk(root: Path, cache: Path) -> list[tuple[str, str, str, str, bool | None]]:
    record = WalkRecord(cache / "walk.json", cache, root, "version")
    found = record.files(Discovery(_tree(root), cwd=root))
    return [(s.absolute_path(), s.display, s.relative, s.language.value, s.regular) for s in found]


def _plain(root: Path) -> list[tuple[str, str, str, str, bool | None]]:
    found = Discovery(_tree(root), cwd=root).files([root])
    return [(s.absolute_path(), s.display, s.relative, s.language.value, s.regular) for s in found]


def test_a_kept_walk_is_taken_without_listing_a_folder(tmp_path, listings):
    root, cache = _project(tmp_path / "repo"), tmp_path / "cache"
    cache.mkdir()
    first = _walk(root, cache)
    assert listings and first == _plain(root)
    listings.clear()
    discovery_module.forget_listings()
    assert _walk(root, cache) == first
    assert listings == []
    # What the walk knew of packages comes back with it: module names need no stat per folder.
    assert listed_package(str(root / "svc" / "core")) is True and listed_package(str(root / "deploy")) is False


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda root: (root / "svc" / "core" / "extra.py").write_text("x = 1\n"), id="file-added"),
        pytest.param(lambda root: (root / "svc" / "app.py").unlink(), id="file-removed"),
        pytest.param(lambda root: (root / "deploy" / "serve.yaml").rename(root / "deploy" / "serve.yml"), id="file-renamed"),
        pytest.param(lambda root: (root / "svc" / "core").rename(root / "svc" / "engine"), id="folder-renamed"),
        pytest.param(lambda root: (root / "scratch").mkdir() or (root / "scratch" / "x.py").write_text(""), id="ignored-folder-added"),
    ],
)
def test_a_change_to_a_folder_is_walked_afresh(tmp_path, listings, change):
    root, cache = _project(tmp_path / "repo"), tmp_path / "cache"
    cache.mkdir()
    _walk(root, cache)
    change(root)
    listings.clear()
    assert _walk(root, cache) == _plain(root)
    assert listings


def _rewrite_in_place(path: Path, text: str) -> None:
    """Change a file's content without changing its folder (no new entry, as an editor that writes in place)."""
    with open(path, "r+") as stream:
        stream.truncate(0)
        stream.write(text)


@pytest.mark.parametrize(
    ("steering", "text", "gone"),
    [
        (".gitignore", "scratch/\ndeploy/\n", "deploy/serve.yaml"),
        ("svc/pyproject.toml", "[tool.gemlint]\nextend-exclude = ['core']\n", "svc/core/model.py"),
    ],
)
def test_a_file_that_steers_the_walk_is_watched_for_its_content(tmp_path, steering, text, gone):
    root, cache = _project(tmp_path / "repo"), tmp_path / "cache"
    cache.mkdir()
    (root / steering).write_text("[tool.gemlint]\n" if steering.endswith(".toml") else "scratch/\n")
    before = _walk(root, cache)
    assert any(display == gone for _, display, *_ in before)
    folder_status = os.stat(root / steering).st_mtime_ns, os.stat((root / steering).parent).st_mtime_ns
    _rewrite_in_place(root / steering, text)
    assert os.stat((root / steering).parent).st_mtime_ns == folder_status[1]  # the folder itself did not change
    after = _walk(root, cache)
    assert after == _plain(root)
    assert not any(display == gone for _, display, *_ in after)


def test_git_info_exclude_is_watched(tmp_path):
    root, cache = _project(tmp_path / "repo"), tmp_path / "cache"
    cache.mkdir()
    (root / ".git" / "info").mkdir(parents=True)
    _walk(root, cache)
    (root / ".git" / "info" / "exclude").write_text("deploy/\n")
    assert [display for _, display, *_ in _walk(root, cache)] == [display for _, display, *_ in _plain(root)]
    assert "deploy/serve.yaml" not in [display for _, display, *_ in _walk(root, cache)]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_walk_that_met_a_link_is_not_kept(tmp_path, listings):
    root, cache = _project(tmp_path / "repo"), tmp_path / "cache"
    cache.mkdir()
    (root / "svc" / "alias.py").symlink_to(root / "svc" / "app.py")
    _walk(root, cache)
    assert not (cache / "walk.json").exists()
    listings.clear()
    _walk(root, cache)
    assert listings


def test_a_walk_just_modified_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(walk_record, "RACY_SECONDS", 3600.0)
    root, cache = _project(tmp_path / "repo"), tmp_path / "cache"
    cache.mkdir()
    _walk(root, cache)
    assert not (cache / "walk.json").exists()


def _moved(folder: list, path: str) -> list:
    """A record's folder said to be at ``path``, with the status that ``path`` has."""
    return [path, walk_record._status(path), *folder[2:]]


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda data: {**data, "files": [[99, "x.py", "python", True]]}, id="folder-out-of-range"),
        pytest.param(lambda data: {**data, "files": [[0, "../../etc/passwd", "python", True]]}, id="name-with-a-separator"),
        pytest.param(lambda data: {**data, "files": [[0, "x.py", "cobol", True]]}, id="unknown-language"),
        pytest.param(lambda data: {**data, "key": "another"}, id="another-configuration"),
        # The folder above the root, with its status as it is: only where it lies gives it away.
        pytest.param(lambda data: {**data, "folders": [_moved(data["folders"][0], os.path.dirname(data["folders"][0][0])), *data["folders"][1:]]}, id="a-folder-outside-the-root"),
        pytest.param(lambda data: {**data, "folders": [_moved(data["folders"][0], data["folders"][0][0] + "/svc/.."), *data["folders"][1:]]}, id="a-folder-not-normal"),
        pytest.param(lambda data: [data], id="not-an-object"),
    ],
)
def test_a_record_that_is_not_what_gemlint_writes_is_no_record(tmp_path, listings, corrupt):
    root, cache = _project(tmp_path / "repo"), tmp_path / "cache"
    cache.mkdir()
    expected = _walk(root, cache)
    record = cache / "walk.json"
    record.write_text(json.dumps(corrupt(json.loads(record.read_text()))))
    listings.clear()
    assert _walk(root, cache) == expected
    assert listings


def test_a_cached_run_over_one_file_takes_the_kept_walk_and_sees_a_new_module(tmp_path, listings, monkeypatch):
    root, cache = _project(tmp_path / "repo"), Cache(tmp_path / "cache")
    config = default_config(root)
    monkeypatch.chdir(root)
    run([root / "svc" / "app.py"], config, cache=cache, jobs=1)
    listings.clear()
    run([root / "svc" / "app.py"], config, cache=cache, jobs=1)
    assert listings == []  # the project's walk kept; the file named is not walked
    (root / "svc" / "core" / "extra.py").write_text("x = 1\n")
    listings.clear()
    run([root / "svc" / "app.py"], config, cache=cache, jobs=1)
    assert str(root / "svc" / "core") in listings
