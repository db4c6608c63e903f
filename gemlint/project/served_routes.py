"""Which of the project's routes a container serves, from what its command names (GEM601).

A probe reaches the server its own container runs, never another service's.
:func:`served_routes` turns the container's :class:`~gemlint.analysis.served.Served`
into the routes of that application: those whose application (the top of their
mount chain) is the object the command names (``uvicorn app.main:app``), or one
that module imports under that name; for a factory, a ``python -m`` module or a
script, the applications that module declares or imports. A shell script of the
project is read for the server it starts, and a console script that the project
root's ``pyproject.toml`` declares (``[project.scripts]``) runs its module. A command
that runs a module, script or program the project does not hold serves none of its routes.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from gemlint.confinement import read_confined
from gemlint.analysis.probe_commands import SHELLS
from gemlint.analysis.served import APP_REFERENCE, Served, served_by_shell
from gemlint.discovery import SKIP_DIRS
from gemlint.project.files import ParsedFile, Project, ProjectRoute

_MAX_SHELL_SCRIPT_BYTES = 200_000


def served_routes(project: Project, served: Served | None, near: Path) -> list[ProjectRoute] | None:
    """The routes ``served`` serves; None when the command says nothing gemlint can follow (any route of
    the project may answer), [] when it serves no route of this project."""
    if served is None:
        return None
    if not served.python:
        served = _followed(project, served, near)
        if served is None:
            return []
    if served.app is not None or served.module is not None:
        file = _module_file(project, served.module or served.app.split(":", 1)[0], near, served.app_dir)
        if file is None:
            return []
        attribute = served.app.split(":", 1)[1] if served.app else None
        return _application_routes(project, file, attribute)
    if served.script is not None:
        file = project.find_script(served.script, near)
        return _application_routes(project, file, None) if file is not None else []
    return None  # python -c, or python with nothing to run


def _module_file(project: Project, module: str, near: Path, app_dir: str | None = None) -> ParsedFile | None:
    """The project file of ``module`` as the server imports it: from the container's working directory
    (or ``--app-dir``), which the file does not say, so the project file whose path ends with the
    module's (``app`` is ``deploy/app.py``; ``svc.api`` is ``src/svc/api.py``), the closest to ``near``;
    None when two folders are equally close (another service's module is never guessed)."""
    folder = app_dir.strip("/").rsplit("/", 1)[-1] if app_dir and app_dir.strip("/.") else ""
    if not folder:
        found = project.module_file(module, near=near)
        if found is not None:
            return found
    wanted = tuple(([folder] if folder else []) + module.split("."))
    best: list[Path] = []
    best_depth = -1
    for path in project.python_files:
        parts = path.parts[:-1] + ((path.stem,) if path.name != "__init__.py" else ())
        if tuple(parts[-len(wanted):]) != wanted:
            continue
        depth = len(os.path.commonpath([os.path.abspath(path), os.path.abspath(near)]))
        if depth > best_depth:
            best, best_depth = [path], depth
        elif depth == best_depth:
            best.append(path)
    return project.parsed(best[0]) if len(best) == 1 else None


def _followed(project: Project, served: Served, near: Path) -> Served | None:
    """A program that is not a Python server: a shell script of the project is read for the server it
    starts; any other program serves a project application only when its arguments name one."""
    words = served.command.split()
    program = words[0] if words else ""
    if program.rsplit("/", 1)[-1] in SHELLS and len(words) > 1 and not words[1].startswith("-"):
        program = words[1]  # sh start.sh
    if program.endswith(".sh") or program.startswith(("./", "/")):
        text = _project_text(project, program, near)
        if text is not None:
            inner = served_by_shell(text, dict(served.env))
            return inner if inner is not None and inner.python else None
    entry = _console_scripts(project.root).get(program.rsplit("/", 1)[-1])
    if entry is not None:  # a console script the project declares: ``name = "pkg.module:main"``
        return Served(served.command, "python", None, entry.split(":", 1)[0].strip(), env=served.env)
    for word in words[1:]:
        match = APP_REFERENCE.match(word)
        if match and project.modules.get(match.group("module")):
            return Served(served.command, "python", word.split("(", 1)[0], match.group("module"))
    return None


def _project_text(project: Project, written: str, near: Path) -> str | None:
    """The text of the project file that ``written`` (``/app/start.sh``) names, matched on its name and
    the folders above it, closest to ``near``."""
    wanted = [part for part in written.split("/") if part not in ("", ".")]
    if not wanted:
        return None
    best: tuple[int, int, str] | None = None
    for path in _files_named(project.root, wanted[-1]):
        parts = Path(path).parts
        suffix = 0
        while suffix < min(len(parts), len(wanted)) and parts[-1 - suffix] == wanted[-1 - suffix]:
            suffix += 1
        depth = len(os.path.commonpath([path, os.path.abspath(near)]))
        if best is None or (suffix, depth) > best[:2]:
            best = (suffix, depth, path)
    if best is None:
        return None
    try:
        data = read_confined(best[2], project.root, _MAX_SHELL_SCRIPT_BYTES)
    except OSError:  # unreadable, too large, or a link out of the project
        return None
    if b"\x00" in data:
        return None
    return data.decode("utf-8", "replace")


@lru_cache(maxsize=8)
def _console_scripts(root: Path) -> dict[str, str]:
    """``[project.scripts]`` of the project root's pyproject.toml: command name -> ``module:function``."""
    try:
        data = tomllib.loads(read_confined(os.path.join(root, "pyproject.toml"), root, 4 * 1024 * 1024).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    scripts = data.get("project", {}).get("scripts", {}) if isinstance(data.get("project"), dict) else {}
    return {name: value for name, value in scripts.items() if isinstance(value, str)} if isinstance(scripts, dict) else {}


@lru_cache(maxsize=64)
def _files_named(root: Path, name: str) -> tuple[str, ...]:
    found = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS]
        if name in filenames:
            found.append(os.path.join(directory, name))
    return tuple(found)


def _application_routes(project: Project, file: ParsedFile, attribute: str | None) -> list[ProjectRoute]:
    """Routes of the application ``attribute`` of ``file`` (followed through one import); without an
    attribute, or when it names a factory, those of every application the module declares or imports."""
    routes = project.routes
    module = file.modname
    imports = _imports(project, file)
    if attribute is not None:
        wanted = {(module, "local", attribute)}
        imported = imports.get(attribute.split(".", 1)[0])
        if imported is not None:
            owner, _, name = imported.rpartition(".")
            wanted.add((owner, "local", name))
        exact = [route for route in routes if route.root in wanted]
        if exact:
            return exact
    modules = {module} | {dotted.rpartition(".")[0] for dotted in imports.values()} | set(imports.values())
    return [route for route in routes if route.root_module in modules]


def _imports(project: Project, file: ParsedFile) -> dict[str, str]:
    entry = project.model.entry_of_path(str(file.path))
    return dict(entry.summary.imports) if entry is not None else {}
