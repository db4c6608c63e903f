"""Which configuration applies to which file, as ruff does it: each file uses the nearest
``pyproject.toml`` with ``[tool.gemlint]``, ``gemlint.toml`` or ``.gemlint.toml`` above it inside
the project (files with none above them use the defaults); ``--config FILE`` and ``--isolated``
apply one configuration to every file.

The project root (cross-file context, the result cache) is one folder for the whole run: the
root of the git work tree holding the files, whatever paths were given and in whichever
order. Project-wide keys (:data:`~gemlint.config.PROJECT_KEYS`) come from the project root's
config; a nested config that sets them differently is overruled, with a warning.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import AbstractSet, Callable, Iterable

from gemlint.config import CONFIG_FILENAMES, PROJECT_KEYS, Config, ConfigError, config_file_in, declared_value, default_config, find_config_file, load_config


def project_root_for(paths: Iterable[Path], cwd: Path | None = None, configs: bool = True) -> Path:
    """The project root for a run over ``paths``: the git work tree that holds them; outside one,
    the folder of the nearest config file above them (unless ``configs`` is false: ``--isolated`` and
    ``--config`` read none), else the current directory when it holds them all, else their common folder.
    Outside git, ``--project-root`` makes it independent of the paths."""
    cwd = Path(os.path.abspath(cwd or Path.cwd()))
    absolute = [os.path.abspath(path) for path in paths] or [str(cwd)]
    try:
        common = Path(os.path.commonpath(absolute))
    except ValueError:  # paths on different drives
        common = cwd
    if not os.path.isdir(common):
        common = common.parent
    for candidate in (common, *common.parents):
        if os.path.exists(candidate / ".git"):  # a directory, or a file in worktrees and submodules
            return candidate
    found = find_config_file(common) if configs else None
    if found is not None:
        return found.parent
    return cwd if common == cwd or cwd in common.parents else common


class ConfigTree:
    """The configuration of every file of one run (one instance per run; lookups are cached per folder).

    ``adjust`` applies the command-line options on top of each config (the command line wins).
    """

    def __init__(
        self,
        project_root: Path,
        known_codes: frozenset[str],
        *,
        config_file: Path | None = None,
        isolated: bool = False,
        adjust: Callable[[Config], Config] = lambda config: config,
    ) -> None:
        self.root = Path(os.path.abspath(project_root))
        self._codes = known_codes
        self._adjust = adjust
        self.warnings: list[str] = []
        self._by_folder: dict[str, Config] = {}
        self._by_file: dict[Path, Config] = {}
        self.fixed: Config | None = None
        if isolated:
            self.fixed = adjust(replace(default_config(self.root), root=self.root))
        elif config_file is not None:
            loaded = load_config(config_file, known_codes)
            self.fixed = adjust(replace(loaded, root=self.root))
        if self.fixed is not None:
            self.project = self.fixed
        else:
            found = config_file_in(self.root)  # configs above the project root are not the project's
            loaded = load_config(found, known_codes) if found else default_config(self.root)
            self.project = adjust(replace(loaded, root=self.root))
            if found is not None:
                self._by_file[found] = self.project

    @classmethod
    def single(cls, config: Config) -> "ConfigTree":
        """Every file uses ``config`` (the library API and tests that build a Config)."""
        tree = cls.__new__(cls)
        tree.root = Path(os.path.abspath(config.root))
        tree._codes = frozenset()
        tree._adjust = lambda c: c
        tree.warnings = []
        tree._by_folder = {}
        tree._by_file = {}
        tree.fixed = tree.project = config
        return tree

    def config_for(self, path: Path) -> Config:
        """The configuration of the file ``path`` (for a folder: of the files directly in it)."""
        if self.fixed is not None:
            return self.fixed
        absolute = os.path.abspath(path)
        return self.config_of_folder(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))

    def config_of_folder(self, folder: str, names: AbstractSet[str] | None = None) -> Config:
        """The configuration of the files directly in ``folder`` (absolute); ``names``, when given, are
        the folder's entries as just listed: a folder that holds no config file is not searched for one."""
        if self.fixed is not None:
            return self.fixed
        config = self._by_folder.get(folder)
        if config is None:
            root = str(self.root)
            inside = folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)
            listed = names is None or not names.isdisjoint(CONFIG_FILENAMES)
            found = config_file_in(Path(folder)) if inside and listed else None
            if found is not None:
                config = self._config_of_file(found)
            elif not inside or folder == root:
                config = self.project  # configs above the project root are not the project's
            else:
                config = self.config_of_folder(os.path.dirname(folder))
            self._by_folder[folder] = config
        return config

    def configs(self) -> list[Config]:
        """Every configuration looked up so far (the project's first)."""
        seen = {self.project: None}
        for config in self._by_folder.values():
            seen.setdefault(config, None)
        return list(seen)

    def _config_of_file(self, path: Path) -> Config:
        config = self._by_file.get(path)
        if config is not None:
            return config
        loaded = load_config(path, self._codes)
        values = {}
        for key in PROJECT_KEYS:
            ours, theirs = declared_value(loaded, key), declared_value(self.project, key)
            if key in loaded.declared and ours != theirs:
                where = self.project.source or f"the defaults (no config file at the project root {self.root})"
                self.warnings.append(
                    f"{path}: '{key}' is a project-wide setting; the value from {where} is used "
                    f"(set it in the project root's config, or pass --project-root)"
                )
            values[_field(key)] = theirs
        config = self._adjust(replace(loaded, root=self.root, project=self.project, **values))
        self._by_file[path] = config
        return config


def _field(key: str) -> str:
    return key.replace("-", "_")


def tree_for(config: "Config | ConfigTree") -> ConfigTree:
    return config if isinstance(config, ConfigTree) else ConfigTree.single(config)


__all__ = ["ConfigError", "ConfigTree", "project_root_for", "tree_for"]
