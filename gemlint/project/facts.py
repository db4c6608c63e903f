"""What the project model derives from every module at once, kept with the index.

Which functions the entry points reach, which files that puts in context, which classes load weights when
built, which classes subclass which, and which modules call a name: each asks every module's summary, so a
run that computed them afresh would decode the whole index. They name files, functions and classes, never
positions, so they hold for as long as every module keeps its *shape* (its summary without positions,
:func:`~gemlint.project.summary_codec.shape_digest`): the facts are stored under a key made of every module's
path, name and shape, and a run over one edited file reuses them unless the edit changed what a module
defines, imports or calls. When it did, the facts are derived again from the last derivation's pieces, keeping
those the edit cannot have changed (:mod:`gemlint.project.ledger`).

The file lies in the linted repository's cache folder, which is untrusted: JSON, read as a regular file
that is not a link, each value checked for its type; anything else is no facts (computed afresh).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from gemlint.atomic import write_whole
from gemlint.confinement import read_confined
from gemlint.project.index_store import MAX_INDEX_BYTES, index_format
from gemlint.project.summary_codec import all_indices

FACTS_PREFIX = "project-facts-"


@dataclass
class ProjectFacts:
    key: str
    context: frozenset[str] = frozenset()
    evidenced: frozenset[str] = frozenset()
    reached: frozenset[tuple[str, str]] = frozenset()
    reached_evidenced: frozenset[tuple[str, str]] = frozenset()
    loading: frozenset[str] = frozenset()
    #: The files that import a project model class or factory from another module.
    holders: frozenset[str] = frozenset()
    #: (module, class) -> the project classes that name it as a direct base, as (module, class). Kept in a
    #: file of its own, like :attr:`callers`: few runs over a few files ask it, and it is large.
    subclasses: dict[tuple[str, str], list[tuple[str, str]]] | None = None
    #: A called name (the last part of its spelling) -> the files whose code calls it.
    callers: dict[str, list[str]] | None = None
    #: Each part's key (:func:`part_key`): a digest of what the part is made from, not the facts' key, so that
    #: a derivation whose part comes out as the stored one's reads and writes the same file.
    part_keys: dict[str, str] = field(default_factory=dict)
    #: The key of the facts the ledger was derived with (:data:`LEDGER_FACTS`), when these are those (an edit
    #: that changed no piece): their file then names those instead of holding them again.
    same_as: str = ""


#: The parts of the facts stored apart, each read only when asked for.
PARTS = ("subclasses", "callers")
#: The file (as a part's) of the facts the facts' ledger was derived with.
LEDGER_FACTS = "ledger.facts"


def modules_key(modules: dict[str, tuple[str, str]]) -> str:
    """A digest of the modules' paths and names (path -> (module name, shape)), in order: a ledger holds only for
    the modules it was derived from, and stores this instead of every path (a third of its bytes)."""
    digest = hashlib.blake2b(f"{len(modules)}\0".encode(), digest_size=16)
    # Joined in C: neither a path nor a module name holds a NUL.
    digest.update("\0".join(modules).encode("utf-8", "surrogateescape") + b"\0\0")
    digest.update("\0".join([name for name, _ in modules.values()]).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def facts_key(root: str, modules: dict[str, tuple[str, str]], stored: bool = True, named: str | None = None) -> str:
    """The key of the facts of ``root`` whose modules are ``modules`` (path -> (module name, shape), in the
    model's order); ``named`` is :func:`modules_key` of them, where the caller has it. Facts kept in memory only
    (``stored`` false) are never read by another version of gemlint: their key leaves out the digest of
    gemlint's code, which costs reading gemlint's sources."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{index_format() if stored else 'memory'}\0{root}\0{named or modules_key(modules)}\0".encode("utf-8", "surrogateescape"))
    digest.update("\n".join([shape for _, shape in modules.values()]).encode("ascii", "replace"))  # shapes are hex digests
    return digest.hexdigest()


def part_key(part: str, named: str, contributions: Iterable[str]) -> str:
    """The key of the part ``part``: a digest of what each module contributes to it (:func:`~gemlint.project.
    ledger.contribution_digest` of the names it calls; of its subclass-index rows), in the order of the modules
    ``named`` (their :func:`modules_key`)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{index_format()}\0{part}\0{named}\n".encode())
    digest.update("\n".join(contributions).encode("ascii", "replace"))  # hex digests, joined in C
    return digest.hexdigest()


def facts_file(directory: Path, root: str, part: str = "") -> Path:
    name = hashlib.blake2b(os.path.abspath(root).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return directory / f"{FACTS_PREFIX}{name}{'.' + part if part else ''}.json"


def save_facts(directory: Path, root: str, facts: ProjectFacts) -> None:
    """Write the facts, and each part of :data:`PARTS` the facts hold, to their files."""
    if facts.same_as:
        _write(facts_file(directory, root), {"format": index_format(), "key": facts.key, "same_as": facts.same_as, "parts": facts.part_keys})
    else:
        write_facts(facts_file(directory, root), facts)
    for part in PARTS:
        if getattr(facts, part) is not None and not part_stored(directory, root, part, facts.part_keys[part]):
            save_part(directory, root, facts, part)


def write_facts(file: Path, facts: ProjectFacts) -> None:
    """Write the facts, without their parts, to ``file``."""
    paths = sorted({*facts.context, *facts.evidenced, *facts.holders, *(p for p, _ in facts.reached), *(p for p, _ in facts.reached_evidenced)})
    number = {path: index for index, path in enumerate(paths)}
    _write(file, {
        "format": index_format(),
        "key": facts.key,
        "paths": paths,
        "context": sorted(number[p] for p in facts.context),
        "evidenced": sorted(number[p] for p in facts.evidenced),
        "reached": sorted([number[p], q] for p, q in facts.reached),
        "reached_evidenced": sorted([number[p], q] for p, q in facts.reached_evidenced),
        "loading": sorted(facts.loading),
        "holders": sorted(number[p] for p in facts.holders),
        "parts": facts.part_keys,
    })


def save_part(directory: Path, root: str, facts: ProjectFacts, part: str) -> None:
    key = facts.part_keys[part]
    if part == "subclasses":
        assert facts.subclasses is not None
        rows = [[base[0], base[1], [list(sub) for sub in subs]] for base, subs in facts.subclasses.items()]
        _write(facts_file(directory, root, part), {"format": index_format(), "key": key, "rows": rows})
    else:
        assert facts.callers is not None
        paths = sorted({p for found in facts.callers.values() for p in found})
        number = {path: index for index, path in enumerate(paths)}
        rows = {name: [number[p] for p in found] for name, found in facts.callers.items()}
        _write(facts_file(directory, root, part), {"format": index_format(), "key": key, "paths": paths, "rows": rows})


def part_stored(directory: Path, root: str, part: str, key: str) -> bool:
    """Whether the file of ``part`` was written under ``key`` (its first bytes say so: :func:`_write` writes the
    format and the key first). Only what spares writing it again: reading it checks every value."""
    head = json.dumps({"format": index_format(), "key": key}, separators=(",", ":"))[:-1].encode()
    try:
        descriptor = os.open(facts_file(directory, root, part), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(descriptor).st_mode) and os.read(descriptor, len(head) + 1) == head + b","
    except OSError:
        return False
    finally:
        os.close(descriptor)


def _write(file: Path, data: dict) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        write_whole(file, json.dumps(data, separators=(",", ":")).encode(), prefix=".facts-")
    except OSError:
        pass  # an unwritable cache costs speed only


def _read(file: Path, key: str) -> dict | None:
    """The JSON object in ``file`` when it was written by this version under ``key``."""
    if os.path.islink(file):
        return None
    data = json.loads(read_confined(file, None, MAX_INDEX_BYTES))
    if not isinstance(data, dict) or data.get("format") != index_format() or data.get("key") != key:
        return None
    return data


def load_facts(directory: Path, root: str, key: str) -> ProjectFacts | None:
    """The facts stored for ``root`` under ``key`` (without their parts); None when there are none, or any
    value is not what :func:`save_facts` writes."""
    return read_facts(facts_file(directory, root), key, directory, root)


def read_facts(file: Path, key: str, directory: Path | None = None, root: str = "") -> ProjectFacts | None:
    """The facts :func:`write_facts` wrote to ``file`` under ``key``, or None. With the ``directory`` and
    ``root`` they were saved for, facts that name the ledger's (:attr:`ProjectFacts.same_as`) are read from
    that file."""
    try:
        data = _read(file, key)
        if data is None:
            return None
        if "same_as" in data:
            same_as = data["same_as"]
            if directory is None or type(same_as) is not str:
                return None
            named = read_facts(facts_file(directory, root, LEDGER_FACTS), same_as)
            return dataclasses.replace(named, key=key, part_keys=_part_keys(data["parts"]), same_as=same_as) if named is not None else None
        paths = _strings(data["paths"])
        rows = {name: data[name] for name in ("reached", "reached_evidenced")}
        if not all(isinstance(r, list) and len(r) == 2 and isinstance(r[1], str) for found in rows.values() for r in found):
            return None
        reached = {name: frozenset((paths[i], r[1]) for i, r in zip(_numbers([r[0] for r in found], len(paths)), found)) for name, found in rows.items()}
        return ProjectFacts(
            key,
            context=frozenset(paths[i] for i in _numbers(data["context"], len(paths))),
            evidenced=frozenset(paths[i] for i in _numbers(data["evidenced"], len(paths))),
            reached=reached["reached"],
            reached_evidenced=reached["reached_evidenced"],
            loading=frozenset(_strings(data["loading"])),
            holders=frozenset(paths[i] for i in _numbers(data["holders"], len(paths))),
            part_keys=_part_keys(data["parts"]),
        )
    except (OSError, ValueError, KeyError, TypeError, RecursionError, MemoryError):
        return None


def load_part(directory: Path, root: str, key: str, part: str) -> dict | None:
    """The part ``part`` of the facts stored for ``root`` under ``key``, or None."""
    try:
        data = _read(facts_file(directory, root, part), key)
        if data is None:
            return None
        rows = data["rows"]
        if part == "subclasses":
            subclasses: dict[tuple[str, str], list[tuple[str, str]]] = {}
            for row in rows:
                if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and isinstance(row[1], str) and isinstance(row[2], list)):
                    return None
                if not all(isinstance(sub, list) and len(sub) == 2 and all(isinstance(p, str) for p in sub) for sub in row[2]):
                    return None
                subclasses[(row[0], row[1])] = [(sub[0], sub[1]) for sub in row[2]]
            return subclasses
        paths = _strings(data["paths"])
        if not isinstance(rows, dict):
            return None
        return {name: [paths[i] for i in _numbers(found, len(paths))] for name, found in rows.items()}
    except (OSError, ValueError, KeyError, TypeError, RecursionError, MemoryError):
        return None


def _part_keys(value: object) -> dict[str, str]:
    if not (isinstance(value, dict) and set(value) == set(PARTS) and all(isinstance(key, str) for key in value.values())):
        raise ValueError("expected the parts' keys")
    return value


def _strings(values: object) -> list[str]:
    if not (isinstance(values, list) and all(isinstance(v, str) for v in values)):
        raise ValueError("expected strings")
    return values


def _numbers(values: object, limit: int) -> list[int]:
    if not (isinstance(values, list) and all_indices(values, limit)):
        raise ValueError("expected indices of paths")
    return values
