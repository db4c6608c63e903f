"""Find the files to lint: directories are walked, excluded paths skipped, explicit files kept."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Iterator, Protocol

from gemlint.config import Config
from gemlint.confinement import is_inside, is_special, refusal
from gemlint.config_tree import ConfigTree, tree_for
from gemlint.gitignore import GitIgnores, submodule_paths
from gemlint.languages import Language, language_of, language_of_name
from gemlint.globs import compile_globs

if TYPE_CHECKING:
    import pathspec


class SourceFile:
    """A file to lint: its path as given or found (not resolved, so symlinks keep their names), its language, how
    findings show it (``display``: relative to the current directory, '/'-separated) and how its config's globs see
    it (``relative``: to the config's glob root, '/'-separated)."""

    __slots__ = ("_path", "language", "display", "relative", "regular", "absolute")

    def __init__(
        self, path: Path | str, language: Language, display: str, relative: str, regular: bool | None = None, absolute: str | None = None
    ) -> None:
        self._path = path
        self.language = language
        self.display = display
        self.relative = relative
        #: A regular file (or a link to one), as its folder's listing showed; None where no walk listed it.
        self.regular = regular
        #: The absolute path the walk joined (None: not known, :meth:`absolute_path` asks ``os.path.abspath``).
        self.absolute = absolute

    @property
    def path(self) -> Path:
        """The path as given or found. A walk gives the string it joined, and the ``Path`` is made when first asked
        for: making one for each of a large project's files was a quarter of its walk, and a run whose files come
        from the cache asks it of few."""
        path = self._path
        if not isinstance(path, Path):
            path = self._path = Path(path)
        return path

    def absolute_path(self) -> str:
        """``os.path.abspath(self.path)``, without normalising again a path the walk built absolute (a run over a
        large project asks it several times per file)."""
        return self.absolute if self.absolute is not None else os.path.abspath(self.path)

    def with_language(self, language: Language) -> SourceFile:
        return SourceFile(self._path, language, self.display, self.relative, self.regular, self.absolute)

    def _key(self) -> tuple:
        return (self.path, self.language, self.display, self.relative)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, SourceFile) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"SourceFile(path={self.path!r}, language={self.language!r}, display={self.display!r}, relative={self.relative!r})"


#: Whether each folder a walk listed holds an ``__init__.py`` (a regular file, or a link to one): the project's
#: module names ask it of every folder, and the walk's listing answers without a stat per folder.
_LISTED_PACKAGES: dict[str, bool] = {}


def listed_package(folder: str) -> bool | None:
    """Whether ``folder`` (absolute and normal) held an ``__init__.py`` when a walk listed it; None when no walk of
    this run did (:func:`forget_listings`)."""
    return _LISTED_PACKAGES.get(folder)


def forget_listings() -> None:
    _LISTED_PACKAGES.clear()


def remember_listing(folder: str, package: bool) -> None:
    """What a kept walk (:mod:`gemlint.walk_record`) knows of ``folder``: whether it holds an ``__init__.py``."""
    _LISTED_PACKAGES[folder] = package


def display_path(path: Path, cwd: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:  # another drive on Windows
        relative = str(absolute)
    return relative.replace(os.sep, "/")


def root_relative(path: Path, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_posix().lstrip("/")


class WalkWatch(Protocol):
    """What a walk tells of the folders it lists (see :attr:`Discovery.watch`)."""

    def entering(self, folder: str) -> None:
        """``folder`` (absolute) is about to be listed."""

    def listed(self, folder: str, shown: str, prefix: str, names: AbstractSet[str], links: bool, package: bool) -> None:
        """``folder`` was listed and entered: its files show as ``shown + name`` and their globs see
        ``prefix + name``; ``names`` are its entries other than subfolders, ``links`` whether any is a link,
        ``package`` whether it holds an ``__init__.py``."""

    def spoil(self) -> None:
        """The walk refused a path or could not list a folder: what it found is not to be kept."""


@dataclass(frozen=True)
class RefusedPath:
    """A path not read: a symbolic link out of the project, or a pseudo-file (see :mod:`gemlint.confinement`)."""

    display: str
    reason: str


@dataclass(frozen=True)
class UnreadableDirectory:
    """A folder whose entries could not be listed (reported as GEM000: its files were not linted)."""

    display: str
    reason: str



class OnSourceFile:
    """The paths of something about one discovered file (a rule's context, a parsed source) held as ``source``."""

    source: SourceFile

    @property
    def display_path(self) -> str:
        return self.source.display

    @property
    def relative_path(self) -> str:
        return self.source.relative


class Discovery:
    """Walks the given paths with the configuration of each folder (:class:`~gemlint.config_tree.ConfigTree`):
    a folder's files and subfolders are excluded by the config that governs that folder, with globs
    relative to that config's file."""

    def __init__(self, config: "Config | ConfigTree", cwd: Path | None = None) -> None:
        self.tree = tree_for(config)
        self.config = self.tree.project
        self.cwd = cwd or Path.cwd()
        self.unreadable: list[UnreadableDirectory] = []
        #: Links and pseudo-files found and not read (named on the command line, or met in a walk).
        self.refused: list[RefusedPath] = []
        self._root_real = os.path.realpath(self.tree.root)
        self._specs: dict[tuple[Config, tuple[str, ...]], pathspec.PathSpec] = {}
        self.gitignores = GitIgnores(self.tree.root)
        self._submodules = tuple(os.path.join(self.tree.root, path) for path in submodule_paths(self.tree.root))
        #: Told of each folder a walk lists (:mod:`gemlint.walk_record` keeps a root's walk with it).
        self.watch: WalkWatch | None = None

    def _excluded_in(
        self, folder: str, named: tuple[str, ...] = (), names: AbstractSet[str] | None = None
    ) -> tuple[Config, "pathspec.PathSpec"]:
        """The config of ``folder`` and its compiled excludes; without the patterns that match the
        ``named`` folders (a folder named explicitly, and those above it: linted although excluded).
        ``names`` are the folder's entries when it was just listed."""
        config = self.tree.config_of_folder(folder, names)
        spec = self._specs.get((config, named))
        if spec is None:
            patterns = tuple(config.exclude) + tuple(config.extend_exclude)
            if "exclude" not in config.declared:
                patterns += self._submodule_patterns(config)
            if named:
                folders = [root_relative(Path(name), config.glob_root) + "/" for name in named]
                patterns = tuple(p for p in patterns if not any(compile_globs((p,)).match_file(f) for f in folders))
            spec = self._specs[(config, named)] = compile_globs(patterns)
        return config, spec

    def _submodule_patterns(self, config: Config) -> tuple[str, ...]:
        """Git submodules are vendored code, excluded with the default excludes (a config that sets
        ``exclude`` decides for itself)."""
        base = os.path.abspath(config.glob_root)
        return tuple(
            "/" + os.path.relpath(path, base).replace(os.sep, "/") + "/"
            for path in self._submodules
            if path.startswith(base.rstrip(os.sep) + os.sep)
        )

    def is_excluded(self, path: Path, is_dir: bool) -> bool:
        """Whether the config of ``path``'s folder excludes ``path`` (or, with ``respect-gitignore``, git ignores it)."""
        absolute = os.path.abspath(path)
        config, excluded = self._excluded_in(os.path.dirname(absolute))
        relative = root_relative(Path(absolute), config.glob_root)
        # A pattern such as "build" also excludes "build/" given on the command line as "./build".
        if excluded.match_file(relative + "/" if is_dir else relative):
            return True
        if config.respect_gitignore and self.gitignores.ignored(absolute, is_dir):
            return True
        return is_dir and _is_virtualenv(path)

    def _boundary(self, given: Path) -> str | None:
        """The folder the files under ``given`` must resolve into, or None when ``given`` itself is not
        read: a link (itself, or through a folder of the project) to outside the project root, or a
        pseudo-file. A path outside the project that is not a link was named by the user: it is its own
        boundary."""
        real = os.path.realpath(given)
        if is_special(real):
            self._refuse(given, "a special file (under /proc, /sys or /dev); not read")
            return None
        if is_inside(real, self._root_real):
            return self._root_real
        inside_project = is_inside(os.path.abspath(given), os.path.abspath(self.tree.root))
        if inside_project or os.path.islink(given):
            self._refuse(given, "a symbolic link to outside the project; not read (name its target to lint it)")
            return None
        return real

    def _refuse(self, path: Path | str, reason: str) -> None:
        self.refused.append(RefusedPath(display_path(Path(path), self.cwd), reason))
        if self.watch is not None:
            self.watch.spoil()

    def files(self, paths: list[Path]) -> Iterator[SourceFile]:
        seen: set[str] = set()
        for given in paths:
            within = self._boundary(given)
            if within is None:
                continue
            if os.path.isdir(given):  # Path.is_dir raises where a folder above cannot be searched
                if self.is_excluded(given, True) or self._excluded_parent(given):
                    if self.tree.config_for(given).force_exclude:
                        continue
                    # A folder named explicitly is linted although excluded (or ignored by git), as a file named explicitly is.
                    yield from self._walk(given, seen, within, self._folders_up_from(given), gitignore=False)
                    continue
                yield from self._walk(given, seen, within)
            else:
                # A file named explicitly is linted even when excluded, unless --force-exclude (pre-commit).
                if self.tree.config_for(given).force_exclude and self.is_excluded_file(given):
                    continue
                language = language_of(given)
                if language is None:
                    if os.path.exists(given):
                        continue  # a file gemlint has no front-end for (README.md, setup.cfg, ...)
                    language = Language.PYTHON  # missing or a dangling symlink: the engine reports GEM000
                yield from self._emit(given, language, seen)

    def is_excluded_file(self, path: Path) -> bool:
        """Whether a file is excluded by its own name or by any folder above it (up to the project root),
        each judged by the config that governs the folder it is in."""
        return self.is_excluded(path, False) or self._excluded_parent(path)

    def _excluded_parent(self, path: Path) -> bool:
        folder = Path(os.path.dirname(os.path.abspath(path)))
        root = self.tree.root
        while folder != folder.parent and (folder == root or root in folder.parents):
            if folder != root and self.is_excluded(folder, True):
                return True
            if folder == root:
                break
            folder = folder.parent
        return False

    def _folders_up_from(self, folder: Path) -> tuple[str, ...]:
        current = Path(os.path.abspath(folder))
        folders = []
        while current != current.parent and (current == self.tree.root or self.tree.root in current.parents):
            folders.append(str(current))
            current = current.parent
        return tuple(folders)

    def _walk(
        self, top: Path, seen: set[str], within: str, named: tuple[str, ...] = (), gitignore: bool = True
    ) -> Iterator[SourceFile]:
        # Depth first, each folder's files and then its subfolders in name order (os.walk's order). One
        # listing per folder tells folders, files and links apart and holds what the folder is (a virtualenv,
        # a vendored project, where a config lives), so a walk over thousands of files makes no call to the
        # file system per file. A link to a folder is never entered, so symlink loops cannot trap the walk; a
        # linked file is read only when it resolves inside ``within``. Paths are joined as strings, each
        # folder's from its parent's: making each one relative again would cost more than the walk.
        root = os.path.abspath(top)
        pending: list[_Folder] = [_Folder(root, None, display_path(Path(root), self.cwd), None, False)]
        watch = self.watch
        while pending:
            folder = pending.pop()
            if watch is not None:
                watch.entering(folder.path)  # before the listing: a change made while it is listed shows next time
            listing = self._listing(folder.path)
            if listing is None:
                continue
            subfolders, files, links, irregular = listing
            _LISTED_PACKAGES[folder.path] = "__init__.py" in files and "__init__.py" not in irregular
            if folder.parent_config is not None and (
                "pyvenv.cfg" in files
                or (folder.in_package and _is_vendored_listing(files))
                or (folder.released and _is_vendored_listing(files, _NATIVE_BUILD_FILES))
                or _is_sdk_copy(files)
            ):
                continue  # a virtualenv, another project copied into a package, a release of one, or a toolkit's headers
            config, excluded_spec = self._excluded_in(folder.path, named, files)
            excluded = excluded_spec.match_file
            if config is folder.parent_config and folder.relative is not None:
                relative = folder.relative
            else:
                relative = root_relative(Path(folder.path), config.glob_root)
            prefix = "" if relative in ("", ".") else relative + "/"
            shown = "" if folder.display == "." else folder.display + "/"
            ignores = self.gitignores
            ignored = ignores.ignored if gitignore and config.respect_gitignore and ignores.has_rules(folder.path) else None
            # Joined as strings: the folder's path is absolute and normal already (os.path.join costs five times more).
            inside = folder.path if folder.path.endswith(os.sep) else folder.path + os.sep
            if watch is not None:
                watch.listed(folder.path, shown, prefix, files, bool(links), _LISTED_PACKAGES[folder.path])
            for name in sorted(files):
                language = language_of_name(name)
                if language is None or excluded(prefix + name):
                    continue
                absolute = inside + name
                if ignored and ignored(absolute, False):
                    continue
                if name in links:
                    reason = refusal(Path(absolute), within)
                    if reason is not None:
                        self._refuse(absolute, reason)
                        continue
                    if self._linted_as_its_target(absolute, root):
                        continue
                yield from self._emit(absolute, language, seen, shown + name, prefix + name, absolute, name not in irregular)
            # Another project copied into a package (its own license and build file) is vendored code,
            # excluded with the default excludes as a submodule is.
            in_package = "__init__.py" in files and "exclude" not in config.declared
            for name in sorted(subfolders, reverse=True):
                if excluded(f"{prefix}{name}/"):
                    continue
                path = inside + name
                if ignored and ignored(path, True):
                    continue
                released = "exclude" not in config.declared and _RELEASE_FOLDER.fullmatch(name) is not None
                pending.append(_Folder(path, config, shown + name, prefix + name, in_package, released))

    def _linted_as_its_target(self, link: str, top: str) -> bool:
        """Whether a linked file met in the walk of ``top`` is left to its target: the walk lints the target
        under its own name (linting the link too would report each finding twice), or the target lies in an
        excluded folder (a link into a submodule or vendored code is that code, and dangles where the
        submodule is not checked out). A dangling link to anywhere else is still reported, as is one into a
        submodule that is checked out."""
        real = os.path.realpath(link)
        if not is_inside(real, self._root_real):
            return False
        target = os.path.join(self.tree.root, os.path.relpath(real, self._root_real))
        if self.is_excluded_file(Path(target)):
            return os.path.exists(real) or not self._checked_out(target)
        return os.path.isfile(real) and language_of_name(os.path.basename(real)) is not None and is_inside(target, top)

    def _checked_out(self, path: str) -> bool:
        """Whether the submodule holding ``path`` (if any) is checked out: its folder has entries."""
        for submodule in self._submodules:
            if is_inside(path, submodule):
                try:
                    return bool(os.listdir(submodule))
                except OSError:
                    return False
        return True

    def _listing(self, folder: str) -> tuple[list[str], set[str], set[str], set[str]] | None:
        """The subfolders (links to folders left out), files, linked files and files that are not regular
        (FIFOs, devices, dangling links) of ``folder``; None when it cannot be listed (reported unless excluded)."""
        subfolders: list[str] = []
        files: set[str] = set()
        links: set[str] = set()
        irregular: set[str] = set()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        is_folder = entry.is_dir()
                    except OSError:
                        is_folder = False
                    if is_folder:
                        if not entry.is_symlink():
                            subfolders.append(entry.name)
                        continue
                    files.add(entry.name)
                    if entry.is_symlink():
                        links.add(entry.name)
                    try:
                        if not entry.is_file():
                            irregular.add(entry.name)
                    except OSError:
                        irregular.add(entry.name)
        except OSError as error:
            self._unlistable(error)
            return None
        return subfolders, files, links, irregular

    def _unlistable(self, error: OSError) -> None:
        path = Path(error.filename) if error.filename is not None else None
        if path is None or self.is_excluded(path, True):
            return
        reason = error.strerror or type(error).__name__
        self.unreadable.append(UnreadableDirectory(display_path(path, self.cwd), reason))
        if self.watch is not None:
            self.watch.spoil()

    def _emit(
        self,
        path: Path | str,
        language: Language,
        seen: set[str],
        display: str | None = None,
        relative: str | None = None,
        absolute: str | None = None,
        regular: bool | None = None,
    ) -> Iterator[SourceFile]:
        """``path`` once per run (given twice, or inside two given folders, it is still linted once)."""
        key = absolute if absolute is not None else os.path.abspath(path)
        if key in seen:
            return
        seen.add(key)
        display = display if display is not None else display_path(path, self.cwd)
        relative = relative if relative is not None else root_relative(path, self.tree.config_for(path).glob_root)
        yield SourceFile(path, language, display, relative, regular, key)


_LICENSE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENSE.rst", "COPYING", "LICENCE")
_BUILD_FILES = ("setup.py", "pyproject.toml", "setup.cfg")


@dataclass(frozen=True)
class _Folder:
    """A folder a walk has still to list: its path, what was known of it when its parent was listed."""

    path: str  # absolute
    parent_config: Config | None  # None for the folder the walk starts from
    display: str
    relative: str | None  # relative to the parent's config's glob root
    in_package: bool  # its parent is a package whose config keeps the default excludes
    #: Named as a release of a project (``ncnn-20210525-full-source``, ``eigen-3.4.0``), in a folder whose config
    #: keeps the default excludes.
    released: bool = False


#: Build files of native projects, besides Python's.
_NATIVE_BUILD_FILES = (*_BUILD_FILES, "CMakeLists.txt", "Makefile", "configure", "meson.build", "BUILD", "BUILD.bazel", "WORKSPACE")
#: A folder named as a project's release, as its archive unpacks: a version or a date after the name, perhaps
#: with the archive's kind (``eigen-3.4.0``, ``opencv-4.5.1``, ``ncnn-20210525-full-source``, ``zlib-1.3.1-src``).
_RELEASE_FOLDER = re.compile(r"[A-Za-z][\w.+]*-v?(?:\d+(?:\.\d+)+|\d{8})(?:-[A-Za-z-]+)?")


def _is_vendored_listing(names: AbstractSet[str], build_files: tuple[str, ...] = _BUILD_FILES) -> bool:
    """A folder holding these files carries a project's own license and build file: another project's
    sources copied in (``mypkg/libs/somelib/`` with its ``LICENSE`` and ``setup.py``; a release unpacked into the
    tree, ``eigen-3.4.0/`` with its ``COPYING`` and ``CMakeLists.txt``)."""
    return not names.isdisjoint(_LICENSE_FILES) and not names.isdisjoint(build_files)


#: Headers that only a platform's, a toolkit's or a library's own folder holds together: a folder of the project
#: that holds them is a copy of that folder (the Windows SDK's ``um/``, the CUDA toolkit's ``include/``, Eigen's
#: source tree, which marks itself with a file so named, or its ``Eigen/`` folder of module headers), code the
#: project did not write, among thousands of other files.
_SDK_SIGNATURES = (
    frozenset({"WinBase.h", "WinUser.h"}),
    frozenset({"winbase.h", "winuser.h"}),
    frozenset({"cuda_runtime_api.h", "driver_types.h", "cuda.h"}),
    frozenset({"signature_of_eigen3_matrix_library"}),
    frozenset({"Core", "Dense", "Eigenvalues", "Householder", "Jacobi", "SparseCore"}),
)


def _is_sdk_copy(names: AbstractSet[str]) -> bool:
    return any(signature <= names for signature in _SDK_SIGNATURES)


def _is_virtualenv(folder: os.PathLike | str) -> bool:
    """A virtualenv under any name. os.path.isfile, unlike Path.is_file, answers False when the
    folder cannot be searched."""
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg"))


#: Folders that never hold the project's own modules.
SKIP_DIRS = frozenset({".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", "site-packages"})


@lru_cache(maxsize=8)
def local_top_level_modules(root: Path) -> frozenset[str]:
    """Names importable from the project itself: top-level modules and packages under the root and ``src/``."""
    names: set[str] = set()
    for directory in (root, root / "src"):
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in SKIP_DIRS:
                continue
            if name.endswith(".py") and entry.is_file():
                names.add(name[:-3])
            elif entry.is_dir() and name.isidentifier():
                names.add(name)
    return frozenset(names)
