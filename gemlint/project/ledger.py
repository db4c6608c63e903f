"""The facts' ledger: what each module contributes to the project's facts, and what was read to derive it.

The facts (:mod:`gemlint.project.facts`) are derived from every module at once, so an edit that changes what
one module defines, imports or calls would derive them all afresh: seconds on a large project, paid by every
pre-commit run over such an edit. The ledger keeps them in pieces, as a build system keeps its targets: per
module, the subclass-index rows of its classes, the names it calls, its entry points, the classes and functions
that load weights and whether it holds project models; per function the reach walked from, the functions its
calls reach. With each piece it keeps what deriving it read: the modules whose summaries it asked
(:class:`Reads` records every summary asked for, and a memoised answer carries the reads that computed it), and
the rows of the subclass index it looked up. The next derivation keeps every piece whose reads no changed
module and no changed subclass-index row touches, and derives the rest (``ProjectModel._derive_facts``).

The ledger is kept in two files. The first holds the shapes, the reads and the small pieces, and each
module's subclass-index rows and called names only as digests. The second holds those rows and names, which are
most of the ledger's bytes, and is read only when something asks for them. A run over one edited file compares
digests. It reads the rows of a module only when that module's rows changed, and the whole second file only to
build a part of the facts that no file holds yet (``ProjectModel._facts_part``).

The files lie in the linted repository's cache folder, which is untrusted: JSON, read as regular files that are
not links, each value checked for its type; anything else is no ledger (every piece derived afresh).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import sys
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, chain, compress
from pathlib import Path
from operator import itemgetter
from typing import Iterable, Sequence, Union

from gemlint.atomic import replacing
from gemlint.confinement import read_confined
from gemlint.project.facts import modules_key
from gemlint.project.index_store import MAX_INDEX_BYTES, index_format
from gemlint.project.summary_codec import all_indices, all_of_type

#: What a piece read: a module's path (its summary), or a (module, class) whose subclass-index row it looked up.
#: A ledger read from its file names a module by its number in :attr:`Ledger.modules` instead (see
#: :meth:`Ledger.numbers`): a large project's reads are 100,000 values, and making each a path again cost more
#: than the rest of reading the file.
Read = Union[str, int, tuple[str, str]]
#: The reads of a piece: a set, or a tuple of module numbers as read from a file.
ReadSet = Union[frozenset[Read], tuple[Read, ...]]


class Reads:
    """The log of what a derivation reads, in order, and the reads behind each memoised answer.

    Two lists: the reads themselves, and the memo keys whose answers were taken from the memo (each stands for
    the reads behind it). A position in the log is a pair of lengths. The log holds the reads of one piece:
    pieces are derived one after another, never inside each other, so each starts the log afresh (:meth:`begin`)
    and a large project's derivation never holds all its reads.
    """

    def __init__(self) -> None:
        self.log: list[Read] = []
        self.hits: list[object] = []
        #: The reads behind each memoised answer, as a tuple (a large project's memo holds 100,000 answers).
        self.behind: dict[object, tuple[Read, ...]] = {}
        #: Where in the log each memo key was first asked for and not found.
        self.asked: dict[object, tuple[int, int]] = {}
        #: One set for equal reads of pieces (most of a module's pieces read the same few modules).
        self._sets: dict[frozenset[Read], frozenset[Read]] = {}

    def begin(self) -> tuple[int, int]:
        """Start the log of a piece. A memo key asked for in an earlier piece and never stored is forgotten:
        a memo key is stored by the computation that missed it, within its piece."""
        self.log.clear()
        self.hits.clear()
        self.asked.clear()
        return 0, 0

    def position(self) -> tuple[int, int]:
        return len(self.log), len(self.hits)

    def since(self, start: tuple[int, int]) -> frozenset[Read]:
        """What was read from ``start`` of the log on, as one shared set."""
        result = frozenset(self.collect(start))
        return self._sets.setdefault(result, result)

    def collect(self, start: tuple[int, int]) -> set[Read]:
        found = set(self.log[start[0]:])
        behind = self.behind
        for key in self.hits[start[1]:]:
            found.update(behind.get(key, ()))
        return found

    def with_module(self, found: frozenset[Read], path: str) -> frozenset[Read]:
        """``found`` and the module ``path`` (a piece always reads its own module), as one shared set."""
        result = found if path in found else found | {path}
        return self._sets.setdefault(result, result)


class TracedMemo(dict):
    """The model's memo, noting what each answer read: an answer computed while a piece was derived counts the
    reads behind it for every piece that takes it from the memo later. An answer's reads run from the first
    time the memo was asked for it and found nothing to when it is stored (a recursion sentinel stored first
    is stored again with the answer, and its reads then)."""

    def __init__(self, reads: Reads) -> None:
        super().__init__()
        self._reads = reads

    def _missed(self, key: object) -> None:
        if key not in self._reads.asked:
            self._reads.asked[key] = self._reads.position()

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            self._reads.hits.append(key)
            return True
        self._missed(key)
        return False

    def get(self, key: object, default: object = None) -> object:
        if dict.__contains__(self, key):
            self._reads.hits.append(key)
            return dict.__getitem__(self, key)
        self._missed(key)
        return default

    def __getitem__(self, key: object) -> object:
        value = dict.__getitem__(self, key)
        self._reads.hits.append(key)
        return value

    def __setitem__(self, key: object, value: object) -> None:
        start = self._reads.asked.get(key)
        if start is not None:
            self._reads.behind[key] = tuple(self._reads.collect(start))
        dict.__setitem__(self, key, value)

    def clear(self) -> None:
        dict.clear(self)
        self._reads.asked.clear()
        self._reads.behind.clear()


def contribution_digest(values: Sequence[str] | Sequence[Sequence[str]]) -> str:
    """A digest of a module's subclass-index rows or called names: what the parts' keys are made from, and what
    tells a module's new rows from those the ledger keeps without reading them."""
    text = "\0".join(value if isinstance(value, str) else "\1".join(value) for value in values)
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


class LedgerUnreadable(ValueError):
    """A stored ledger turned out, as more of it was read, not to be what gemlint wrote: nothing it keeps holds."""


class RowsMissing(LedgerUnreadable):
    """The rows and names a ledger keeps apart cannot be read (gone, or not what gemlint wrote)."""


@dataclass(slots=True)
class ModulePieces:
    """What one module contributes to the facts, each part with what deriving it read."""

    #: (base module, base class, this module's subclass) for each project class its classes name as a base; None
    #: while only its digest is known (:meth:`Ledger.rows_of`).
    subclass_rows: list[tuple[str, str, str]] | None
    subclass_reads: ReadSet
    #: The last part of every name the module calls (the callers index); it reads only the module itself. None
    #: while only its digest is known.
    called: list[str] | None
    #: Its entry points: (qualname, evidenced: more than a name, puts the file in context by itself).
    points: list[tuple[str, bool, bool]]
    #: The project functions its module-level code runs, as a script: (path, qualname).
    scripts: list[tuple[str, str]]
    points_reads: ReadSet
    loading: list[str]
    loading_reads: ReadSet
    holder: bool
    holder_reads: ReadSet
    subclass_digest: str = ""
    called_digest: str = ""

    def __post_init__(self) -> None:
        if not self.subclass_digest and self.subclass_rows is not None:
            self.subclass_digest = contribution_digest(self.subclass_rows)
        if not self.called_digest and self.called is not None:
            self.called_digest = contribution_digest(self.called)

    def part(self, name: str) -> object:
        """The part ``name`` (``points``, ``loading`` or ``holder``) as its derivation returns it."""
        if name == "points":
            return self.points, self.scripts
        return self.loading if name == "loading" else self.holder


class KeptRows:
    """The subclass-index rows and called names of a stored ledger, read from their file when first asked."""

    def __init__(self, file: Path, key: str, paths: list[str]) -> None:
        self._file, self._key, self._paths = file, key, paths
        self._rows: dict[str, tuple[list, list[str]]] | None = None

    def get(self, path: str) -> tuple[list, list[str]]:
        if self._rows is None:
            self._rows = _load_rows(self._file, self._key, self._paths)
            if self._rows is None:
                self._rows = {}
        found = self._rows.get(path)
        if found is None:
            raise RowsMissing(path)
        return found


class Ledger:
    """The pieces of one derivation of the facts, with the modules' shapes it was derived from."""

    def __init__(
        self,
        modules: dict[str, tuple[str, str]],
        pieces: dict[str, ModulePieces] | None = None,
        callees: dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]] | None = None,
        kept_rows: KeptRows | None = None,
        facts_key: str = "",
    ) -> None:
        #: path -> (module name, shape), in the model's module order.
        self.modules = modules
        self._pieces = pieces if pieces is not None else {}
        #: (path, qualname) of a function the reach walked from -> the functions its calls reach, and the reads.
        self._callees = callees if callees is not None else {}
        #: Where the rows and names of pieces that hold only their digests are read from.
        self.kept_rows = kept_rows
        #: The key of the facts derived with these pieces, kept in a file beside the ledger's ("" when none is).
        self.facts_key = facts_key

    @property
    def pieces(self) -> dict[str, ModulePieces]:
        return self._pieces

    @pieces.setter
    def pieces(self, value: dict[str, ModulePieces]) -> None:
        self._pieces = value

    @property
    def callees(self) -> dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]]:
        return self._callees

    @callees.setter
    def callees(self, value: dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]]) -> None:
        self._callees = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ledger):
            return NotImplemented
        return (self.modules, self.pieces, self.callees) == (other.modules, other.pieces, other.callees)

    __hash__ = None  # type: ignore[assignment]

    def changed(self, modules: dict[str, tuple[str, str]]) -> set[str] | None:
        """The paths whose shape differs in ``modules``; None when a module was added, removed or renamed
        (module names resolve to other files then: nothing kept is known to hold)."""
        if list(modules) != list(self.modules):  # the same paths, in the same order
            return None
        if any(modules[path][0] != self.modules[path][0] for path in modules):
            return None
        return {path for path, (_, shape) in modules.items() if shape != self.modules[path][1]}

    def numbers(self, paths: Iterable[str]) -> set[int]:
        """The numbers that reads read from the file give the modules ``paths``: a set of changed modules that
        holds these too is disjoint from a kept piece's reads exactly when none of the modules is among them."""
        wanted = set(paths)
        return {number for number, path in enumerate(self.modules) if path in wanted} if wanted else set()

    def rows_of(self, path: str) -> tuple[list, list[str]]:
        """The subclass-index rows and the called names of the module ``path`` (raises :class:`RowsMissing`
        when they are kept in a file that cannot be read)."""
        piece = self.pieces[path]
        if piece.subclass_rows is not None and piece.called is not None:
            return piece.subclass_rows, piece.called
        if self.kept_rows is None:
            raise RowsMissing(path)
        rows, called = self.kept_rows.get(path)
        return (piece.subclass_rows if piece.subclass_rows is not None else rows), (piece.called if piece.called is not None else called)


class StoredLedger(Ledger):
    """A ledger read from its file, its pieces and walked functions made when first asked for.

    A run over one edited file of a large project asks only which pieces read the edited module, and what those
    pieces were (:meth:`touched`, :meth:`kept_part`): making every module's pieces and every read set cost it
    more than the rest of reading the file."""

    def __init__(self, modules: dict[str, tuple[str, str]], columns: tuple, callees: list, sets: PackedSets, kept_rows: KeptRows, facts_key: str) -> None:
        super().__init__(modules, kept_rows=kept_rows, facts_key=facts_key)
        self._pieces = None  # type: ignore[assignment]
        self._callees = None  # type: ignore[assignment]
        self._columns, self._callee_rows, self._sets = columns, callees, sets
        self._paths = list(modules)

    @property
    def pieces(self) -> dict[str, ModulePieces]:
        if self._pieces is None:
            table = self._sets.unpacked()
            sub_digests, sub_reads, called_digests, points, scripts, point_reads, loading, loading_reads, holder, holder_reads = self._columns
            paths = self._paths
            self._pieces = {
                path: ModulePieces(
                    None, table[sub_reads[number]],
                    None,
                    points[number], _functions(scripts[number], paths) if scripts[number] else [], table[point_reads[number]],
                    loading[number], table[loading_reads[number]],
                    holder[number], table[holder_reads[number]],
                    subclass_digest=sub_digests[number], called_digest=called_digests[number],
                )
                for number, path in enumerate(paths)
            }
        return self._pieces

    @pieces.setter
    def pieces(self, value: dict[str, ModulePieces]) -> None:
        self._pieces = value

    @property
    def callees(self) -> dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]]:
        if self._callees is None:
            table, paths = self._sets.unpacked(), self._paths
            self._callees = {
                (paths[head], qual): ([(paths[number], name) for number, name in found], table[read])
                for head, qual, found, read in self._callee_rows
            }
        return self._callees

    @callees.setter
    def callees(self, value: dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]]) -> None:
        self._callees = value

    def touched(self, paths: Iterable[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """What read any of the modules ``paths``: the pieces, as (path, part: ``subclass``, ``points``,
        ``loading`` or ``holder``), and the functions walked from."""
        sets = self._sets.holding(self.numbers(paths))
        if not sets:
            return [], []
        paths_of, holds = self._paths, sets.__contains__
        _, sub_reads, _, _, _, point_reads, _, loading_reads, _, holder_reads = self._columns
        # Tested in C, a column at a time: a large project has thousands of modules, and a few read the edit.
        pieces = [
            (path, part)
            for part, column in (("subclass", sub_reads), ("points", point_reads), ("loading", loading_reads), ("holder", holder_reads))
            for path in compress(paths_of, map(holds, column))
        ]
        functions = [(paths_of[head], qual) for head, qual, _, _ in compress(self._callee_rows, map(holds, map(itemgetter(3), self._callee_rows)))]
        return pieces, functions

    def kept_part(self, path: str, part: str) -> object:
        """What the piece ``part`` of the module ``path`` was, as its derivation returns it: the subclass rows'
        digest, (entry points, script functions), the loading names, or whether it holds project models."""
        number = self._numbered(path)
        sub_digests, _, _, points, scripts, _, loading, _, holder, _ = self._columns
        if part == "subclass":
            return sub_digests[number]
        if part == "points":
            return [tuple(point) for point in points[number]], _functions(scripts[number], self._paths) if scripts[number] else []
        return loading[number] if part == "loading" else holder[number]

    def kept_callees(self, function: tuple[str, str]) -> list[tuple[str, str]]:
        """The functions the calls of ``function`` reached, as walked (``function`` is one :meth:`touched` named)."""
        paths = self._paths
        for head, qual, found, _ in self._callee_rows:
            if qual == function[1] and paths[head] == function[0]:
                return [(paths[number], name) for number, name in found]
        raise KeyError(function)

    def called_digests(self) -> dict[str, str]:
        """Each module's digest of the names it calls, in module order."""
        return dict(zip(self._paths, self._columns[2]))

    def numbers(self, paths: Iterable[str]) -> set[int]:
        numbered = self._numbered
        return {numbered(path) for path in paths}

    def _numbered(self, path: str) -> int:
        numbers = self._numbers
        if numbers is None:
            numbers = self._numbers = {found: number for number, found in enumerate(self._paths)}
        return numbers[path]

    _numbers: dict[str, int] | None = None


def subclass_index(rows: Iterable[tuple[str, Sequence[Sequence[str]]]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Each project class -> the project classes that name it as a direct base, from (module name, its rows) in
    module order."""
    index: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for module, module_rows in rows:
        for base_module, base, sub in module_rows:
            index.setdefault((base_module, base), []).append((module, sub))
    return index


def changed_bases(before: Sequence[Sequence[str]], after: Sequence[Sequence[str]]) -> set[tuple[str, str]]:
    """The bases whose subclass-index row changes when one module's rows go from ``before`` to ``after``:
    those whose subclasses in the module differ, or come in another order (a row lists them in module order)."""

    def by_base(rows: Sequence[Sequence[str]]) -> dict[tuple[str, str], list[str]]:
        grouped: dict[tuple[str, str], list[str]] = {}
        for base_module, base, sub in rows:
            grouped.setdefault((base_module, base), []).append(sub)
        return grouped

    old, new = by_base(before), by_base(after)
    return {base for base in old.keys() | new.keys() if old.get(base) != new.get(base)}


def callers_index(called: Iterable[tuple[str, Sequence[str]]]) -> dict[str, list[str]]:
    """A called name -> the files whose code calls it, from (path, the names it calls) in module order."""
    index: dict[str, list[str]] = {}
    for path, names in called:
        for name in names:
            index.setdefault(name, []).append(path)
    return index


def untouched(reads: ReadSet, changed: set) -> bool:
    """Nothing a piece read is among ``changed`` (modules' paths and subclass-index rows)."""
    return changed.isdisjoint(reads)


# -- storing ----------------------------------------------------------------------------------------------


def ledger_file(facts_file: Path) -> Path:
    return facts_file.with_name(facts_file.name.removesuffix(".json") + ".ledger.json")


def rows_file(ledger_file: Path) -> Path:
    return ledger_file.with_name(ledger_file.name.removesuffix(".json") + ".rows.json")


def save_ledger(file: Path, ledger: Ledger) -> None:
    """Write ``ledger``, whose pieces all hold their rows and names (:meth:`Ledger.rows_of` fills them), to
    ``file`` and the rows and names to :func:`rows_file`; one key, new each time, pairs the two."""
    number = {path: index for index, path in enumerate(ledger.modules)}
    # Pieces share their reads (a module's pieces often read only the module): each set is written once, after
    # the pieces that number them.
    sets: dict[ReadSet, int] = {}
    key = secrets.token_hex(16)

    def reads(found: ReadSet) -> int:
        return sets.setdefault(found, len(sets))

    def piece(path: str) -> list:
        found = ledger.pieces[path]
        return [
            found.subclass_digest, reads(found.subclass_reads),
            found.called_digest,
            found.points, [[number[p], q] for p, q in found.scripts], reads(found.points_reads),
            found.loading, reads(found.loading_reads),
            found.holder, reads(found.holder_reads),
        ]

    def encode(value: object) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode()

    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        # Written a piece at a time: the process deriving the facts holds every summary, and a whole text of a
        # large project's ledger (MBs, twice over as bytes) would raise its peak. The rows first: a ledger
        # whose key names no rows file reads none.
        with replacing(rows_file(file), prefix=".ledger-") as stream:
            stream.write(b'{"format":' + encode(index_format()) + b',"key":' + encode(key) + b',"rows":[')
            for index, path in enumerate(ledger.modules):
                found = ledger.pieces[path]
                stream.write((b"," if index else b"") + encode([found.subclass_rows, found.called]))
            stream.write(b"]}")
        with replacing(file, prefix=".ledger-") as stream:
            stream.write(b'{"format":' + encode(index_format()) + b',"rows":' + encode(key) + b',"facts":' + encode(ledger.facts_key))
            stream.write(b',"modules":' + encode(modules_key(ledger.modules)))
            stream.write(b',"shapes":' + encode([shape for _, shape in ledger.modules.values()]))
            stream.write(b',"pieces":[')
            for index, path in enumerate(ledger.modules):
                stream.write((b"," if index else b"") + encode(piece(path)))
            callees = [[number[p], q, [[number[cp], cq] for cp, cq in found], reads(read)] for (p, q), (found, read) in ledger.callees.items()]
            stream.write(b'],"callees":' + encode(callees))
            # A module is named by its path, or by its number where the read was kept from a ledger read from its
            # file (the same number: a ledger is kept only for the same modules in the same order).
            # The modules each set read; apart, the subclass-index rows of the few sets that read any.
            table = [sorted({r if type(r) is int else number[r] for r in found if not isinstance(r, tuple)}) for found in sets]
            looked_up = [[index, sorted([*r] for r in found if isinstance(r, tuple))] for index, found in enumerate(sets) if any(isinstance(r, tuple) for r in found)]
            stream.write(b',"reads":' + encode(pack_sets(table)) + b',"rows_read":' + encode(looked_up) + b"}")
    except OSError:
        pass  # an unwritable cache costs speed only


def load_ledger(file: Path, modules: dict[str, tuple[str, str]], named: str | None = None) -> StoredLedger | None:
    """The ledger stored in ``file`` by this version for the project's ``modules`` (path -> (name, shape), in
    order) as they are now, its rows and names left in their file until asked for. None when there is none, when
    it was derived from other modules (one added, removed or renamed since: nothing it keeps is known to hold), or
    when any value is not what :func:`save_ledger` writes; a read set naming no module is found when the sets are
    unpacked (:class:`LedgerUnreadable`). ``named``: :func:`~gemlint.project.facts.modules_key` of ``modules``,
    where the caller has it."""
    try:
        if os.path.islink(file):
            return None
        data = json.loads(read_confined(file, None, MAX_INDEX_BYTES))
        if not isinstance(data, dict) or data.get("format") != index_format() or data.get("modules") != (named or modules_key(modules)):
            return None
        shapes, sets, looked_up, pieces, callees, key, facts = data["shapes"], data["reads"], data["rows_read"], data["pieces"], data["callees"], data["rows"], data["facts"]
        if not (isinstance(shapes, list) and isinstance(looked_up, list) and isinstance(pieces, list) and isinstance(callees, list)):
            return None
        if not (len(shapes) == len(pieces) == len(modules) and isinstance(key, str) and isinstance(facts, str)):
            return None
        # Each column checked whole, at the speed of C (a large project's ledger holds 150,000 values).
        _check(all_of_type(shapes, str))
        paths = list(modules)
        table = PackedSets(sets, looked_up, len(paths))
        _check(all_of_type(pieces, list) and set(map(len, pieces)) <= {10})
        columns = tuple(zip(*pieces)) if pieces else ((),) * 10
        sub_digests, sub_reads, called_digests, points, scripts, point_reads, loading, loading_reads, holder, holder_reads = columns
        numbers = (*sub_reads, *point_reads, *loading_reads, *holder_reads)
        _check(all_indices(numbers, len(table)))
        _check(all_of_type(sub_digests, str) and all_of_type(called_digests, str) and all_of_type(loading, list) and all_of_type(points, list))
        _check(all_of_type(chain.from_iterable(loading), str) and all_of_type(holder, bool) and all_of_type(scripts, list))
        entries = list(chain.from_iterable(points))
        _check(all_of_type(entries, list) and set(map(len, entries)) <= {3})
        if entries:
            names, evidenced, alone = zip(*entries)
            _check(all_of_type(names, str) and all_of_type(evidenced, bool) and all_of_type(alone, bool))
        functions = list(chain.from_iterable(scripts))
        _check(all_of_type(functions, list) and set(map(len, functions)) <= {2})
        if functions:
            _check(all_indices(list(map(itemgetter(0), functions)), len(paths)) and all_of_type(map(itemgetter(1), functions), str))
        # Callees: (function's module, qualname, [(module, qualname) reached], reads), checked column by column.
        _check(all_of_type(callees, list) and set(map(len, callees)) <= {4})
        heads, quals, reached, read_numbers = zip(*callees) if callees else ((),) * 4
        _check(all_of_type(reached, list))
        flat = list(chain.from_iterable(reached))
        _check(all_of_type(flat, list) and set(map(len, flat)) <= {2})
        module_numbers = [*heads, *map(itemgetter(0), flat)]
        _check(all_indices(module_numbers, len(paths)))
        _check(all_of_type(chain(quals, map(itemgetter(1), flat)), str))
        _check(all_indices(read_numbers, len(table)))
        ledger = StoredLedger(dict(zip(paths, zip(map(itemgetter(0), modules.values()), shapes))), columns, callees, table, KeptRows(rows_file(file), key, paths), facts)
        return ledger
    except (OSError, ValueError, KeyError, TypeError, RecursionError, MemoryError):
        return None


def _load_rows(file: Path, key: str, paths: list[str]) -> dict[str, tuple[list, list[str]]] | None:
    """The rows and names :func:`save_ledger` wrote to ``file`` under ``key``, by path; None when they are not."""
    try:
        if os.path.islink(file):
            return None
        data = json.loads(read_confined(file, None, MAX_INDEX_BYTES))
        if not isinstance(data, dict) or data.get("format") != index_format() or data.get("key") != key:
            return None
        found = data["rows"]
        _check(isinstance(found, list) and len(found) == len(paths) and all_of_type(found, list) and set(map(len, found)) <= {2})
        subs, called = zip(*found) if found else ((), ())
        _check(all_of_type(subs, list) and all_of_type(called, list))
        rows = list(chain.from_iterable(subs))
        # Rows stay lists: they are only unpacked, never hashed.
        _check(all_of_type(rows, list) and set(map(len, rows)) <= {3} and all_of_type(chain.from_iterable(rows), str))
        _check(all_of_type(chain.from_iterable(called), str))
        return {path: (subs[number], called[number]) for number, path in enumerate(paths)}
    except (OSError, ValueError, KeyError, TypeError, RecursionError, MemoryError):
        return None


def _check(condition: bool) -> None:
    if not condition:
        raise ValueError("not a ledger")


def _strings(values: object, length: int | None = None) -> bool:
    return isinstance(values, list) and (length is None or len(values) == length) and all_of_type(values, str)


def _path(number: object, paths: list[str]) -> str:
    _check(type(number) is int and 0 <= number < len(paths))  # type: ignore[operator]
    return paths[number]  # type: ignore[index]


def _functions(rows: object, paths: list[str]) -> list[tuple[str, str]]:
    _check(isinstance(rows, list) and all(isinstance(row, list) and len(row) == 2 and isinstance(row[1], str) for row in rows))  # type: ignore[union-attr]
    return [(_path(row[0], paths), row[1]) for row in rows]  # type: ignore[union-attr]


class PackedSets:
    """The read sets of a stored ledger, left packed until asked for (as :func:`save_ledger` writes them): the
    numbers of the modules each set read, and for the few sets that looked up rows of the subclass index, those
    rows. Unpacked, a set of modules alone is a tuple: reads are only ever tested for any changed module among
    them, and a tuple is made four times faster than a set."""

    def __init__(self, packed: object, looked_up: list, modules: int) -> None:
        _check(isinstance(packed, dict) and packed.keys() == {"numbers", "sizes"})
        self._raw = _unpack_bytes(packed["numbers"])  # type: ignore[index]
        self._sizes = _unpack(packed["sizes"])  # type: ignore[index]
        _check(sum(self._sizes) * 4 == len(self._raw))
        self._modules = modules
        _check(all_of_type(looked_up, list) and set(map(len, looked_up)) <= {2})
        self._rows: dict[int, list[tuple[str, str]]] = {}
        for index, found in looked_up:
            _check(type(index) is int and 0 <= index < len(self._sizes) and isinstance(found, list) and all(_strings(token, 2) for token in found))
            self._rows[index] = [(token[0], token[1]) for token in found]
        self._table: list[ReadSet] | None = None
        self._ends: list[int] | None = None

    def __len__(self) -> int:
        return len(self._sizes)

    def unpacked(self) -> list[ReadSet]:
        """Every set (raises :class:`LedgerUnreadable` when one names no module)."""
        if self._table is None:
            numbers = _values(self._raw)
            if numbers and max(numbers) >= self._modules:
                raise LedgerUnreadable("a read set names no module")
            table: list[ReadSet] = []
            start = 0
            for end in accumulate(self._sizes):
                table.append(tuple(numbers[start:end]))
                start = end
            for index, rows in self._rows.items():
                table[index] = frozenset((*table[index], *rows))
            self._table = table
        return self._table

    def holding(self, modules: set[int]) -> set[int]:
        """The sets that read any of the modules numbered ``modules``, found in the packed bytes themselves."""
        if not modules:
            return set()
        ends = self._ends
        if ends is None:
            ends = self._ends = list(accumulate(self._sizes))
        found: set[int] = set()
        raw = self._raw
        for module in modules:
            pattern = _pack_bytes([module])
            at = raw.find(pattern)
            while at != -1:
                if at % 4 == 0:  # a whole value, not the end of one and the start of the next
                    found.add(bisect_right(ends, at // 4))
                at = raw.find(pattern, at + 1)
        return found


# The reads are a large project's 100,000 module numbers in 10,000 sets: as JSON arrays, parsing them and checking
# each was a third of reading the ledger, paid by every pre-commit run over an edit. They are stored packed instead:
# every set's numbers in one array of unsigned 32-bit integers, and each set's size in another, little-endian and
# base64-encoded. Unpacking is done in C, and unsigned numbers need only their largest checked.
_UINT32 = next(code for code in "IL" if array(code).itemsize == 4)


def pack_sets(sets: list[list[int]]) -> dict[str, str]:
    """``sets`` of module numbers as :func:`unpack_sets` reads them."""
    return {"numbers": _pack(chain.from_iterable(sets)), "sizes": _pack(map(len, sets))}


def unpack_sets(packed: object, modules: int) -> Iterable[tuple[int, ...]]:
    """The sets :func:`pack_sets` packed, each a tuple of numbers in ``range(modules)``; raises ValueError when
    ``packed`` is not such sets."""
    return PackedSets(packed, [], modules).unpacked()


def _pack_bytes(values: Iterable[int]) -> bytes:
    packed = array(_UINT32, values)
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def _pack(values: Iterable[int]) -> str:
    return base64.b64encode(_pack_bytes(values)).decode("ascii")


def _unpack_bytes(text: object) -> bytes:
    _check(type(text) is str)
    raw = base64.b64decode(text, validate=True)  # type: ignore[arg-type]  # binascii.Error is a ValueError
    _check(len(raw) % 4 == 0)
    return raw


def _values(raw: bytes) -> list[int]:
    values = array(_UINT32)
    values.frombytes(raw)
    if sys.byteorder != "little":
        values.byteswap()
    return values.tolist()


def _unpack(text: object) -> list[int]:
    return _values(_unpack_bytes(text))
