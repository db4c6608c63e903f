"""Configuration: ``[tool.gemlint]`` in pyproject.toml, or gemlint.toml / .gemlint.toml.

Every key is validated; an unknown key or a value of the wrong type raises
:class:`ConfigError`, which names the key and the file (the CLI exits 2), with a
"did you mean" for a misspelled key. ``extend = "<path>"`` inherits another
config file; the globs of each file stay relative to the file that declares them.
Which config applies to which file is decided in :mod:`gemlint.config_tree`.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from gemlint.confinement import boundary_for, is_inside, read_companion
from gemlint.diagnostics import Severity
from gemlint.globs import rebase_globs
from gemlint.quantities import GI, kubernetes_bytes

CONFIG_FILENAMES = (".gemlint.toml", "gemlint.toml", "pyproject.toml")

CODE_PATTERN = re.compile(r"^GEM[0-9]{0,3}$")

DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".gemlint_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "__pycache__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    "*.egg-info",
    # Vendored code: another project's sources, linted by its own maintainers.
    "3rd-party",
    "3rd_party",
    "3rdparty",
    "_vendor",
    "extern",
    "external",
    "third-party",
    "third_party",
    "thirdparty",
    "vendor",
    "vendored",
)
DEFAULT_TRAINING_PATHS = ("**/train*.py", "**/train/**", "**/training/**")
DEFAULT_HEALTH_PATHS = ("/health", "/healthz", "/livez", "/live", "/ping")
DEFAULT_STATIC_SHAPE_BACKENDS = (
    "torch_xla", "jax", "habana_frameworks", "tensorrt", "torch_neuron", "torch_neuronx", "optimum.neuron", "executorch", "coremltools"
)
#: GEM604: host memory a GPU container needs per GPU, since the weights are staged in host memory while loading.
DEFAULT_GPU_HOST_MEMORY_PER_GPU = 16 * GI


class ConfigError(Exception):
    """A configuration problem the user must fix; the message names the file and key."""


@dataclass(frozen=True)
class Config:
    """Settings for the files one config file governs.

    ``root`` is the project root (cross-file context, cache); ``base`` the folder the globs are
    relative to (the declaring file's folder; the project root when None). ``project`` is the
    project root's config when this one is a nested config: the project model and the
    project-wide keys (:data:`PROJECT_KEYS`) follow it.
    """

    root: Path
    source: Path | None = None
    base: Path | None = None
    select: tuple[str, ...] = ("GEM",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    #: skip files that git ignores (.gitignore files, .git/info/exclude)
    respect_gitignore: bool = True
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    inference_paths: tuple[str, ...] = ()
    training_paths: tuple[str, ...] = DEFAULT_TRAINING_PATHS
    health_paths: tuple[str, ...] = DEFAULT_HEALTH_PATHS
    static_shape_backends: tuple[str, ...] = DEFAULT_STATIC_SHAPE_BACKENDS
    preview: bool = False
    #: Also report findings whose inference context rests on a function's or class's name alone
    #: (``predict*`` that no entry point reaches), at precision "medium".
    strict: bool = False
    gpu_host_memory_per_gpu: int = DEFAULT_GPU_HOST_MEMORY_PER_GPU  # bytes
    severity: tuple[tuple[str, Severity], ...] = ()
    #: False with ``--ignore-noqa``: findings that a ``# noqa`` comment suppresses are reported too.
    respect_noqa: bool = True
    project: "Config | None" = field(default=None, repr=False)
    #: The keys the config file set itself (not defaults), as written in the file.
    declared: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def glob_root(self) -> Path:
        """The folder every glob of this config is relative to."""
        return self.base or self.root

    @property
    def project_config(self) -> "Config":
        return self.project or self

    def with_overrides(self, **changes: Any) -> "Config":
        return replace(self, **{key: value for key, value in changes.items() if value is not None})


# key in the file -> (field name, kind)
_SCHEMA: dict[str, tuple[str, str]] = {
    "select": ("select", "codes"),
    "ignore": ("ignore", "codes"),
    "extend-select": ("extend_select", "codes"),
    "exclude": ("exclude", "strings"),
    "extend-exclude": ("extend_exclude", "strings"),
    "force-exclude": ("force_exclude", "bool"),
    "respect-gitignore": ("respect_gitignore", "bool"),
    "per-file-ignores": ("per_file_ignores", "code-table"),
    "inference-paths": ("inference_paths", "strings"),
    "training-paths": ("training_paths", "strings"),
    "health-paths": ("health_paths", "strings"),
    "static-shape-backends": ("static_shape_backends", "strings"),
    "preview": ("preview", "bool"),
    "strict": ("strict", "bool"),
    "gpu-host-memory-per-gpu": ("gpu_host_memory_per_gpu", "memory"),
    "severity": ("severity", "severity-table"),
}
_EXTEND_KEY = "extend"
#: A config file is at most this big (a pyproject.toml is a few kilobytes).
_MAX_CONFIG_BYTES = 4 * 1024 * 1024
assert {name for name, _ in _SCHEMA.values()} == {f.name for f in fields(Config)} - {"root", "source", "base", "project", "declared", "respect_noqa"}

#: Keys that describe the whole project (what the cross-file rules compare against): they come from
#: the project root's config; a nested config that sets another value gets a warning and is overruled.
PROJECT_KEYS = ("health-paths",)
#: Keys holding path globs, relative to the file that declares them.
GLOB_KEYS = ("exclude", "extend-exclude", "per-file-ignores", "inference-paths", "training-paths")


def find_config_file(start: Path) -> Path | None:
    """The nearest config file at or above ``start`` (a pyproject.toml counts only with [tool.gemlint])."""
    # os.path answers False, where Path raises, for folders that cannot be searched.
    directory = start if os.path.isdir(start) else start.parent
    for candidate_dir in (directory, *directory.parents):
        found = config_file_in(candidate_dir)
        if found is not None:
            return found
    return None


def config_file_in(directory: Path) -> Path | None:
    """The config file of ``directory`` itself, if it has one (.gemlint.toml, then gemlint.toml, then
    a pyproject.toml with a [tool.gemlint] table)."""
    for filename in CONFIG_FILENAMES:
        candidate = directory / filename
        if not os.path.isfile(candidate):
            continue
        if filename != "pyproject.toml" or (_mentions_gemlint(candidate) and "gemlint" in _read_toml(candidate).get("tool", {})):
            return candidate
    return None


def _mentions_gemlint(path: Path) -> bool:
    """A pyproject.toml that never spells "gemlint" holds no gemlint table: it is not read as TOML, so another
    tool's broken file is no error of gemlint's (one that does spell it is read, and a mistake in it is)."""
    try:
        return b"gemlint" in read_companion(path, path, _MAX_CONFIG_BYTES)
    except OSError:
        return True  # read again by _read_toml, which says what is wrong


def load_config(path: Path, known_codes: frozenset[str]) -> Config:
    """Load and validate one config file, and the files it extends."""
    return _load(Path(os.path.abspath(path)), known_codes, ())


def _load(path: Path, known_codes: frozenset[str], chain: tuple[Path, ...]) -> Config:
    if path in chain:
        cycle = " -> ".join(str(p) for p in (*chain, path))
        raise ConfigError(f"{path}: 'extend' makes a cycle: {cycle}")
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("gemlint", {})
        prefix = "tool.gemlint."
    else:
        table = data
        prefix = ""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: '{prefix.rstrip('.') or 'gemlint'}' must be a table")
    directory = path.parent
    inherited: Config | None = None
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key == _EXTEND_KEY:
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{path}: '{prefix}{key}': expected the path of a config file, got {value!r}")
            target = Path(os.path.abspath(directory / os.path.expanduser(value)))
            if not os.path.isfile(target):
                raise ConfigError(f"{path}: '{prefix}{key}': no such file: {target}")
            # A config in a repository extends files of that repository only (the repository is untrusted
            # input; --config names a file anywhere).
            repository = boundary_for(path)
            if not is_inside(os.path.realpath(target), repository):
                raise ConfigError(
                    f"{path}: '{prefix}{key}': {target} is outside the repository of this config ({repository}); "
                    "a repository's config extends its own files only (name that file with --config)"
                )
            inherited = _load(target, known_codes, (*chain, path))
            continue
        if key not in _SCHEMA:
            raise ConfigError(f"{path}: unknown key '{prefix}{key}'{_suggestion(key)}")
        field_name, kind = _SCHEMA[key]
        values[field_name] = _convert(path, prefix + key, kind, value, known_codes)
    declared = frozenset(key for key in table if key != _EXTEND_KEY)
    if inherited is not None:
        # The extended file's settings, with its globs made relative to this file's folder.
        base = {
            _SCHEMA[key][0]: _rebased(key, getattr(inherited, _SCHEMA[key][0]), inherited.glob_root, directory)
            for key in inherited.declared
            if _SCHEMA[key][0] not in values
        }
        values = {**base, **values}
        declared |= inherited.declared
    return Config(root=directory, source=path, base=directory, declared=declared, **values)


def _rebased(key: str, value: Any, old: Path, new: Path) -> Any:
    if key not in GLOB_KEYS or old == new:
        return value
    if key == "per-file-ignores":
        rebased = []
        for pattern, codes in value:
            rebased.extend((moved, codes) for moved in rebase_globs((pattern,), old, new))
        return tuple(rebased)
    return rebase_globs(tuple(value), old, new)


def _suggestion(key: str) -> str:
    import difflib  # only for a config that names an unknown key

    close = difflib.get_close_matches(key, [*_SCHEMA, _EXTEND_KEY], n=1, cutoff=0.6)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f" (valid keys: {', '.join(sorted([*_SCHEMA, _EXTEND_KEY]))})"


def default_config(root: Path) -> Config:
    return Config(root=root.resolve())


def declared_value(config: Config, key: str) -> Any:
    return getattr(config, _SCHEMA[key][0])


def validate_codes(where: str, codes: Any, known_codes: frozenset[str]) -> tuple[str, ...]:
    """Validate a list of rule codes or prefixes; ``where`` names the option or key for the message."""
    if not isinstance(codes, (list, tuple)) or not all(isinstance(code, str) for code in codes):
        raise ConfigError(f"{where}: expected a list of rule codes, got {codes!r}")
    for code in codes:
        if not CODE_PATTERN.match(code):
            raise ConfigError(f"{where}: '{code}' is not a rule code or prefix (expected GEM, GEM1, GEM101, ...)")
        if not any(known.startswith(code) for known in known_codes):
            raise ConfigError(f"{where}: '{code}' matches no gemlint rule")
    return tuple(codes)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read_companion(path, path, _MAX_CONFIG_BYTES).decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({error.reason})") from error
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config: {error.strerror or error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error


def _convert(path: Path, key: str, kind: str, value: Any, known_codes: frozenset[str]) -> Any:
    where = f"{path}: '{key}'"
    if kind == "codes":
        return validate_codes(where, value, known_codes)
    if kind == "strings":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{where}: expected a list of strings, got {value!r}")
        return tuple(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if kind == "memory":
        size = kubernetes_bytes(value) if isinstance(value, str) else None
        if size is None or size <= 0:
            raise ConfigError(f"{where}: expected a memory size such as \"16Gi\" or \"32G\", got {value!r}")
        return size
    if kind == "code-table":
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table of glob = [codes], got {value!r}")
        return tuple(
            (pattern, validate_codes(f"{path}: '{key}.\"{pattern}\"'", codes, known_codes))
            for pattern, codes in value.items()
        )
    if kind == "severity-table":
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table of CODE = \"error\"|\"warning\"|\"note\", got {value!r}")
        result = []
        for code, level in value.items():
            validate_codes(f"{path}: '{key}.{code}'", [code], known_codes)
            try:
                result.append((code, Severity(level)))
            except ValueError:
                raise ConfigError(
                    f"{path}: '{key}.{code}': expected \"error\", \"warning\" or \"note\", got {level!r}"
                ) from None
        return tuple(result)
    raise AssertionError(kind)
