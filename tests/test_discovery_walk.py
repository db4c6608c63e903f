"""How discovery walks a folder: in os.walk's order, one listing per folder and no call to the file
system per file, with what a listing tells (links, virtualenvs, vendored projects, configs) read from it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gemlint.config import default_config
from gemlint.config_tree import ConfigTree
from gemlint.discovery import Discovery, listed_package
from gemlint.project.summary import forget_packages, module_name, module_names
from gemlint.registry import known_codes


def _write(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n", encoding="utf-8")


def _walked(root: Path) -> list[str]:
    tree = ConfigTree(root, known_codes())
    return [source.display for source in Discovery(tree, cwd=root).files([root])]


def _reference(root: Path) -> list[str]:
    """os.walk's order with sorted names: each folder's files, then its subfolders depth first."""
    found = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        relative = Path(directory).relative_to(root).as_posix()
        found += [name if relative == "." else f"{relative}/{name}" for name in sorted(filenames) if name.endswith(".py")]
    return found


def test_files_come_in_os_walks_order(tmp_path):
    _write(tmp_path, ["b.py", "a.py", "z/c.py", "z/a/d.py", "m/e.py", "m/n/f.py", "m/g.py", "A/h.py"])
    assert _walked(tmp_path) == _reference(tmp_path) == ["a.py", "b.py", "A/h.py", "m/e.py", "m/g.py", "m/n/f.py", "z/c.py", "z/a/d.py"]


def test_what_a_folders_listing_shows_decides_what_is_walked(tmp_path):
    _write(
        tmp_path,
        [
            "pkg/__init__.py",
            "pkg/core.py",
            # Another project copied into a package: its own license and build file.
            "pkg/fastlib/LICENSE",
            "pkg/fastlib/setup.py",
            "pkg/fastlib/ops.py",
            # The same files outside a package are the project's own (a service with its own setup.py).
            "services/api/LICENSE",
            "services/api/setup.py",
            "services/api/app.py",
            # A virtualenv under any name.
            "tools/env/pyvenv.cfg",
            "tools/env/lib/site.py",
            "tools/run.py",
        ],
    )
    (tmp_path / "pkg" / "linked").symlink_to(tmp_path / "services", target_is_directory=True)
    assert _walked(tmp_path) == [
        "pkg/__init__.py",
        "pkg/core.py",
        "services/api/app.py",
        "services/api/setup.py",
        "tools/run.py",
    ]


def test_a_nested_config_governs_its_folder_found_from_the_listing(tmp_path):
    _write(tmp_path, ["app.py", "sub/keep.py", "sub/skip_me.py", "sub/deeper/skip_too.py", "other/skip_me.py"])
    (tmp_path / "sub" / "gemlint.toml").write_text('extend-exclude = ["skip_*.py"]\n', encoding="utf-8")
    assert _walked(tmp_path) == ["app.py", "other/skip_me.py", "sub/keep.py"]


def test_a_linked_file_is_read_only_when_it_resolves_inside_the_project(tmp_path):
    project, outside = tmp_path / "project", tmp_path / "outside"
    _write(project, ["app.py", "tools/run.py"])
    _write(outside, ["secret.py"])
    (project / "tools" / "inside_link.py").symlink_to(project / "app.py")
    (project / "tools" / "outside_link.py").symlink_to(outside / "secret.py")
    discovery = Discovery(ConfigTree(project, known_codes()), cwd=project)
    # The walk of tools/ does not reach app.py, so it is read through the link.
    assert [source.display for source in discovery.files([project / "tools"])] == ["tools/inside_link.py", "tools/run.py"]
    assert [refused.display for refused in discovery.refused] == ["tools/outside_link.py"]


def test_the_walk_makes_no_call_to_the_file_system_per_file(tmp_path, monkeypatch):
    folders = ["one", "two", "two/three"]
    _write(tmp_path, [f"{folder}/module_{number}.py" for folder in folders for number in range(40)])
    calls: list[str] = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def counted(path, *args, _real=real, **kwargs):
            calls.append(os.fspath(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, counted)
    discovery = Discovery(default_config(tmp_path), cwd=tmp_path)
    assert len(list(discovery.files([tmp_path]))) == 120
    # The walk's start resolves the root, and a folder holding a config file is read; no file is asked about.
    assert not [call for call in calls if call.endswith(".py")], calls



@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_the_listing_tells_which_files_are_regular(tmp_path):
    _write(tmp_path, ["app.py", "shared/util.py"])
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / "linked.py").symlink_to(tmp_path / "shared/util.py")
    walked = {source.display: source.regular for source in Discovery(ConfigTree(tmp_path, known_codes()), cwd=tmp_path).files([tmp_path])}
    # Each is still linted (a FIFO or a dangling link is reported, never read); only regular files are modules.
    # A link to a file the walk reaches is left to that file.
    assert walked == {"app.py": True, "dangling.py": False, "pipe.py": False, "shared/util.py": True}


def test_each_file_carries_the_absolute_path_the_walk_joined(tmp_path, monkeypatch):
    _write(tmp_path, ["a.py", "pkg/b.py", "pkg/deep/c.py"])
    monkeypatch.chdir(tmp_path / "pkg")
    tree = ConfigTree(tmp_path, known_codes())
    walked = list(Discovery(tree, cwd=tmp_path / "pkg").files([Path(".."), Path("deep/c.py")]))
    assert walked and all(source.absolute is not None for source in walked)
    assert [source.absolute_path() for source in walked] == [os.path.abspath(source.path) for source in walked]


def test_a_walk_tells_packages_as_a_stat_would(tmp_path):
    """Module names ask every folder whether it holds an ``__init__.py``; a walk's listing answers as
    ``os.path.isfile`` would, and a run that starts afresh forgets it."""
    _write(tmp_path, ["pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/mod.py", "pkg/odd/mod.py", "pkg/bare/mod.py"])
    (tmp_path / "pkg" / "odd" / "__init__.py").mkdir()  # a folder of that name marks no package
    forget_packages()
    _walked(tmp_path)
    for folder in ("pkg", "pkg/sub", "pkg/odd", "pkg/bare"):
        absolute = os.path.abspath(tmp_path / folder)
        assert listed_package(absolute) == os.path.isfile(os.path.join(absolute, "__init__.py")), folder
    assert module_name(tmp_path / "pkg" / "sub" / "mod.py") == "pkg.sub.mod"
    assert module_name(tmp_path / "pkg" / "odd" / "mod.py") == "mod"
    # A walk's files, folder by folder, named at once: as each alone.
    files = [os.path.abspath(tmp_path / name) for name in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/mod.py", "pkg/odd/mod.py", "pkg/bare/mod.py")]
    assert module_names(files) == [module_name(path) for path in files] == ["pkg", "pkg.sub", "pkg.sub.mod", "mod", "mod"]
    forget_packages()
    assert listed_package(os.path.abspath(tmp_path / "pkg")) is None
