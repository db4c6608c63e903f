"""Kustomize: the manifests a kustomization applies as patches over its bases.

A patch holds only what it changes (a container's arguments, an image): what it leaves out, its base holds, so a
rule that asks what a pod lacks cannot ask it of a patch.
"""

from __future__ import annotations

import os
from functools import lru_cache

from gemlint.frontends.yaml_nodes import Mapping, Scalar, compose_documents
from gemlint.text import SourceError

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: Keys whose entries name patch files: ``patches: [{path: p.yaml}]``, ``patchesStrategicMerge: [p.yaml]``,
#: ``patchesJson6902: [{path: p.yaml, target: ...}]``.
_PATCH_KEYS = ("patches", "patchesStrategicMerge", "patchesJson6902")
#: A kustomization file larger than this is not read (real ones are a few KB).
_MAX_BYTES = 1 << 20


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


@lru_cache(maxsize=512)
def _patches_in(folder: str) -> frozenset[str]:
    """The files the kustomization of ``folder`` (if any) applies as patches, as absolute paths."""
    for name in KUSTOMIZATION_NAMES:
        file = os.path.join(folder, name)
        if os.path.isfile(file) and not os.path.islink(file):
            break
    else:
        return frozenset()
    try:
        if os.path.getsize(file) > _MAX_BYTES:
            return frozenset()
        with open(file, encoding="utf-8", errors="replace") as handle:
            documents = compose_documents(handle.read())
    except (OSError, SourceError):
        return frozenset()
    listed: list[str] = []
    for document in documents:
        if not isinstance(document, Mapping):
            continue
        for key in _PATCH_KEYS:
            for entry in document.sequence(key):
                if isinstance(entry, Scalar) and entry.value and "\n" not in entry.value:
                    listed.append(entry.value)  # a file's path (an inline patch spans lines)
                elif isinstance(entry, Mapping) and entry.text("path"):
                    listed.append(entry.text("path"))  # type: ignore[arg-type]
    return frozenset(os.path.normpath(os.path.join(folder, name)) for name in listed)
