"""Kustomize: the manifests a kustomization applies as patches over its bases.

A patch holds only what it changes (a container's arguments, an image): what it leaves out, its base holds, so a
rule that asks what a pod lacks asks it of everything the patch is built with (:func:`build_texts`), and only where
all of that is in the repository.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from gemlint.frontends.yaml_nodes import Mapping, Scalar, compose_documents
from gemlint.text import SourceError

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: Keys whose entries name patch files: ``patches: [{path: p.yaml}]``, ``patchesStrategicMerge: [p.yaml]``,
#: ``patchesJson6902: [{path: p.yaml, target: ...}]``.
_PATCH_KEYS = ("patches", "patchesStrategicMerge", "patchesJson6902")
#: Keys whose entries name what a kustomization builds from: manifest files, or folders with a kustomization.
_RESOURCE_KEYS = ("resources", "bases", "components")
#: A resource fetched from elsewhere (a git repository, a URL): what it holds is not in the repository.
_REMOTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^git@|^github\.com/|\?ref=|//")
#: A kustomization file larger than this is not read (real ones are a few KB).
_MAX_BYTES = 1 << 20
#: Folders a walk for the kustomizations of a repository does not enter, and how many it reads at most.
_SKIPPED_FOLDERS = frozenset({"node_modules", "vendor", "third_party", "__pycache__", "venv"})
_MAX_FOLDERS = 20_000


def is_patch(path: str, root: str) -> bool:
    """A kustomization in the file's folder, or in a folder above it up to ``root``, lists it as a patch."""
    path, root = os.path.abspath(path), os.path.abspath(root)
    folder = os.path.dirname(path)
    while folder == root or folder.startswith(root + os.sep):
        if path in _patches_in(folder):
            return True
        if folder == root:
            break
        folder = os.path.dirname(folder)
    return False


def build_texts(path: str, root: str) -> list[str] | None:
    """The texts of everything a kustomization that patches ``path`` builds with: the kustomization files, their
    resources (followed through the kustomizations they name) and patches, and those of every kustomization of the
    repository that builds on one of them. None when any of it is not in the repository (a remote base, a file that
    is missing), or the repository is too large to look through."""
    path, root = os.path.abspath(path), os.path.abspath(root)
    owners = []
    folder = os.path.dirname(path)
    while folder == root or folder.startswith(root + os.sep):
        if path in _patches_in(folder):
            owners.append(folder)
        if folder == root:
            break
        folder = os.path.dirname(folder)
    graph = _kustomizations_under(root)
    if not owners or graph is None:
        return None
    # the kustomizations that build on an owner (an overlay of an overlay may add what the patch leaves out)
    users = {folder for folder in graph if any(owner in _folders_built(folder, graph) for owner in owners)}
    files: set[str] = set()
    for folder in sorted(users | set(owners)):
        built = _inputs(folder)
        if built is None:
            return None
        files |= built
    texts = []
    for file in sorted(files):
        try:
            if os.path.getsize(file) > _MAX_BYTES:
                return None
            with open(file, encoding="utf-8", errors="replace") as handle:
                texts.append(handle.read())
        except OSError:
            return None
    return texts


@lru_cache(maxsize=64)
def _kustomizations_under(root: str) -> frozenset[str] | None:
    """The folders under ``root`` that hold a kustomization (hidden and vendored folders left out); None past
    :data:`_MAX_FOLDERS` folders."""
    found, seen = set(), 0
    for folder, folders, names in os.walk(root):
        seen += 1
        if seen > _MAX_FOLDERS:
            return None
        folders[:] = [name for name in folders if not name.startswith(".") and name not in _SKIPPED_FOLDERS]
        if any(name in names for name in KUSTOMIZATION_NAMES):
            found.add(folder)
    return frozenset(found)


def _folders_built(folder: str, graph: frozenset[str], depth: int = 0) -> set[str]:
    """The kustomization folders that the kustomization of ``folder`` builds on, however deep."""
    reached: set[str] = set()
    if depth > 16:
        return reached
    for entry in _listed(folder, _RESOURCE_KEYS):
        target = os.path.normpath(os.path.join(folder, entry))
        if target in graph and target not in reached:
            reached.add(target)
            reached |= _folders_built(target, graph, depth + 1)
    return reached


@lru_cache(maxsize=512)
def _inputs(folder: str, depth: int = 0) -> frozenset[str] | None:
    """The files the kustomization of ``folder`` builds from (itself included, for its inline patches), or None
    when one is not in the repository."""
    file = _kustomization_file(folder)
    if file is None or depth > 16:
        return None
    files = {file} | {patch for patch in _patches_in(folder) if os.path.isfile(patch)}
    for entry in _listed(folder, _RESOURCE_KEYS):
        if _REMOTE.search(entry):
            return None
        target = os.path.normpath(os.path.join(folder, entry))
        if os.path.isdir(target):
            inner = _inputs(target, depth + 1)
            if inner is None:
                return None
            files |= inner
        elif os.path.isfile(target):
            files.add(target)
        else:
            return None
    return frozenset(files)


@lru_cache(maxsize=512)
def _patches_in(folder: str) -> frozenset[str]:
    """The files the kustomization of ``folder`` (if any) applies as patches, as absolute paths."""
    return frozenset(os.path.normpath(os.path.join(folder, name)) for name in _listed(folder, _PATCH_KEYS))


def _listed(folder: str, keys: tuple[str, ...]) -> list[str]:
    """The paths the kustomization of ``folder`` lists under ``keys`` (a patch's ``path``; an inline patch, which
    spans lines, is none)."""
    listed: list[str] = []
    for document in _documents(folder):
        for key in keys:
            for entry in document.sequence(key):
                if isinstance(entry, Scalar) and entry.value and "\n" not in entry.value:
                    listed.append(entry.value)
                elif isinstance(entry, Mapping) and entry.text("path"):
                    listed.append(entry.text("path"))  # type: ignore[arg-type]
    return listed


@lru_cache(maxsize=512)
def _documents(folder: str) -> tuple[Mapping, ...]:
    file = _kustomization_file(folder)
    if file is None:
        return ()
    try:
        if os.path.getsize(file) > _MAX_BYTES:
            return ()
        with open(file, encoding="utf-8", errors="replace") as handle:
            documents = compose_documents(handle.read())
    except (OSError, SourceError):
        return ()
    return tuple(document for document in documents if isinstance(document, Mapping))


def _kustomization_file(folder: str) -> str | None:
    for name in KUSTOMIZATION_NAMES:
        file = os.path.join(folder, name)
        if os.path.isfile(file) and not os.path.islink(file):
            return file
    return None
