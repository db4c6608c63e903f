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

The file lies in the linted repository's cache folder, which is untrusted: JSON, read as a regular file that is
not a link, each value checked for its type; anything else is no ledger (every piece derived afresh).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from itertools import chain
from typing import Callable, Iterable, Sequence, Union

from gemlint.atomic import replacing
from gemlint.confinement import read_confined
from gemlint.project.index_store import MAX_INDEX_BYTES, index_format
from gemlint.project.summary_codec import all_of_type

#: What a piece read: a module's path (its summary), or a (module, class) whose subclass-index row it looked up.
Read = Union[str, tuple[str, str]]


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


@dataclass
class ModulePieces:
    """What one module contributes to the facts, each part with what deriving it read."""

    #: (base module, base class, this module's subclass) for each project class its classes name as a base.
    subclass_rows: list[tuple[str, str, str]]
    subclass_reads: frozenset[Read]
    #: The last part of every name the module calls (the callers index); it reads only the module itself.
    called: list[str]
    #: Its entry points: (qualname, evidenced: more than a name, puts the file in context by itself).
    points: list[tuple[str, bool, bool]]
    #: The project functions its module-level code runs, as a script: (path, qualname).
    scripts: list[tuple[str, str]]
    points_reads: frozenset[Read]
    loading: list[str]
    loading_reads: frozenset[Read]
    holder: bool
    holder_reads: frozenset[Read]

    def part(self, name: str) -> object:
        """The part ``name`` (``subclass``, ``points``, ``loading`` or ``holder``) as its derivation returns it."""
        if name == "points":
            return self.points, self.scripts
        return self.subclass_rows if name == "subclass" else self.loading if name == "loading" else self.holder


@dataclass
class Ledger:
    """The pieces of one derivation of the facts, with the modules' shapes it was derived from."""

    #: path -> (module name, shape), in the model's module order.
    modules: dict[str, tuple[str, str]]
    pieces: dict[str, ModulePieces] = field(default_factory=dict)
    #: (path, qualname) of a function the reach walked from -> the functions its calls reach, and the reads.
    callees: dict[tuple[str, str], tuple[list[tuple[str, str]], frozenset[Read]]] = field(default_factory=dict)

    def changed(self, modules: dict[str, tuple[str, str]]) -> set[str] | None:
        """The paths whose shape differs in ``modules``; None when a module was added, removed or renamed
        (module names resolve to other files then: nothing kept is known to hold)."""
        if list(modules) != list(self.modules):  # the same paths, in the same order
            return None
        if any(modules[path][0] != self.modules[path][0] for path in modules):
            return None
        return {path for path, (_, shape) in modules.items() if shape != self.modules[path][1]}


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


def untouched(reads: frozenset[Read], changed: set) -> bool:
    """Nothing a piece read is among ``changed`` (modules' paths and subclass-index rows)."""
    return changed.isdisjoint(reads)


# -- storing ----------------------------------------------------------------------------------------------


def ledger_file(facts_file: Path) -> Path:
    return facts_file.with_name(facts_file.name.removesuffix(".json") + ".ledger.json")


def save_ledger(file: Path, ledger: Ledger) -> None:
    number = {path: index for index, path in enumerate(ledger.modules)}
    # Pieces share their reads (a module's pieces often read only the module): each set is written once, after
    # the pieces that number them.
    sets: dict[frozenset[Read], int] = {}

    def reads(found: frozenset[Read]) -> int:
        return sets.setdefault(found, len(sets))

    def piece(path: str) -> list:
        found = ledger.pieces[path]
        return [
            found.subclass_rows, reads(found.subclass_reads),  # tuples and lists alike are written as arrays
            found.called,
            found.points, [[number[p], q] for p, q in found.scripts], reads(found.points_reads),
            found.loading, reads(found.loading_reads),
            found.holder, reads(found.holder_reads),
        ]

    def encode(value: object) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode()

    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        # Written a piece at a time: the process deriving the facts holds every summary, and a whole text of a
        # large project's ledger (MBs, twice over as bytes) would raise its peak.
        with replacing(file, prefix=".ledger-") as stream:
            stream.write(b'{"format":' + encode(index_format()) + b',"modules":' + encode([[path, name, shape] for path, (name, shape) in ledger.modules.items()]))
            stream.write(b',"pieces":[')
            for index, path in enumerate(ledger.modules):
                stream.write((b"," if index else b"") + encode(piece(path)))
            callees = [[number[p], q, [[number[cp], cq] for cp, cq in found], reads(read)] for (p, q), (found, read) in ledger.callees.items()]
            stream.write(b'],"callees":' + encode(callees))
            table = [sorted(number[r] for r in found if isinstance(r, str)) + sorted([*r] for r in found if not isinstance(r, str)) for found in sets]
            stream.write(b',"reads":' + encode(table) + b"}")
    except OSError:
        pass  # an unwritable cache costs speed only


def load_ledger(file: Path) -> Ledger | None:
    """The ledger stored in ``file`` by this version; None when there is none, or any value is not what
    :func:`save_ledger` writes."""
    try:
        if os.path.islink(file):
            return None
        data = json.loads(read_confined(file, None, MAX_INDEX_BYTES))
        if not isinstance(data, dict) or data.get("format") != index_format():
            return None
        rows, sets, pieces, callees = data["modules"], data["reads"], data["pieces"], data["callees"]
        if not (isinstance(rows, list) and isinstance(sets, list) and isinstance(pieces, list) and isinstance(callees, list) and len(rows) == len(pieces)):
            return None
        paths = []
        modules: dict[str, tuple[str, str]] = {}
        for row in rows:
            _check(isinstance(row, list) and len(row) == 3 and all(isinstance(item, str) for item in row))
            paths.append(row[0])
            modules[row[0]] = (row[1], row[2])
        ledger = Ledger(modules)
        table = _read_sets(sets, paths)

        def reads_at(number: object) -> frozenset[Read]:
            _check(type(number) is int and 0 <= number < len(table))  # type: ignore[operator]
            return table[number]  # type: ignore[index]

        # Each column checked whole, at the speed of C (a large project's ledger holds 150,000 values).
        _check(all_of_type(pieces, list) and set(map(len, pieces)) <= {10})
        subs, sub_reads, called, points, scripts, point_reads, loading, loading_reads, holder, holder_reads = zip(*pieces) if pieces else ((),) * 10
        _check(all_of_type(subs, list) and all_of_type(called, list) and all_of_type(loading, list) and all_of_type(points, list))
        rows = list(chain.from_iterable(subs))
        _check(all_of_type(rows, list) and set(map(len, rows)) <= {3} and all_of_type(chain.from_iterable(rows), str))
        _check(all_of_type(chain.from_iterable(called), str) and all_of_type(chain.from_iterable(loading), str) and all_of_type(holder, bool))
        entries = list(chain.from_iterable(points))
        _check(all_of_type(entries, list) and set(map(len, entries)) <= {3})
        if entries:
            names, evidenced, alone = zip(*entries)
            _check(all_of_type(names, str) and all_of_type(evidenced, bool) and all_of_type(alone, bool))
        # Rows and points stay lists: they are only unpacked, never hashed.
        for number, path in enumerate(paths):
            ledger.pieces[path] = ModulePieces(
                subs[number], reads_at(sub_reads[number]),
                called[number],
                points[number], _functions(scripts[number], paths), reads_at(point_reads[number]),
                loading[number], reads_at(loading_reads[number]),
                holder[number], reads_at(holder_reads[number]),
            )
        for row in callees:
            _check(isinstance(row, list) and len(row) == 4 and isinstance(row[1], str))
            ledger.callees[(_path(row[0], paths), row[1])] = (_functions(row[2], paths), reads_at(row[3]))
        return ledger
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


def _read_sets(sets: list, paths: list[str]) -> list[frozenset[Read]]:
    """The reads of each set: module numbers first, then subclass-index rows (as :func:`save_ledger` writes them)."""
    _check(all_of_type(sets, list))
    values = list(chain.from_iterable(sets))
    kinds = set(map(type, values))
    _check(kinds <= {int, list})  # a bool is no module's number
    numbers = values if list not in kinds else [value for value in values if type(value) is int]
    _check(not numbers or (min(numbers) >= 0 and max(numbers) < len(paths)))
    name = paths.__getitem__
    # A set whose last value is a number holds numbers only (a row among them is no index: TypeError).
    return [frozenset(map(name, found)) if not found or type(found[-1]) is int else _read_set(found, name) for found in sets]


def _read_set(values: list, name: Callable[[int], str]) -> frozenset[Read]:
    split = next((i for i, v in enumerate(values) if type(v) is not int), len(values))
    numbers, tokens = values[:split], values[split:]
    _check(all(_strings(token, 2) for token in tokens))
    return frozenset((*map(name, numbers), *((token[0], token[1]) for token in tokens)))
