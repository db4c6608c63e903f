"""The facts' ledger: what each module contributes to the project's facts, and what was read to derive it.

The facts (:mod:`gemlint.project.facts`) are derived from every module at once, so an edit that changes what
one module defines, imports or calls would derive them all afresh: seconds on a large project, paid by every
pre-commit run over such an edit. The ledger keeps them in pieces, as a build system keeps its targets: per
module, the subclass-index rows of its classes, the names it calls, its entry points, the classes and functions
that load weights and whether it holds project models; per function the reach walked from, the functions its
calls reach. With each piece it keeps what deriving it read: the modules whose summaries it asked
(:class:`Reads` records every summary asked for, and a memoised answer carries the reads that computed it), and
the rows of the subclass index it looked up. The next derivation keeps every piece whose reads no changed
module and no changed subclass-index row touches, and derives the rest (``ProjectModel._derive_facts``). When
every piece that read a changed module comes out as it was, the facts are those the ledger was derived with, and
nothing else is derived (``ProjectModel._facts_kept_through_edits``).

How the ledger is stored, and read back piece by piece, is :mod:`gemlint.project.ledger_store`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable, Protocol, Sequence, Union

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

    def shared(self, found: frozenset[Read]) -> frozenset[Read]:
        """``found`` (read sets derived elsewhere, in a forked copy) as this log's one set of its value."""
        return self._sets.setdefault(found, found)

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


class KeptRows(Protocol):
    """Where a stored ledger keeps the subclass-index rows and called names of its pieces
    (:mod:`gemlint.project.ledger_store`)."""

    def get(self, path: str) -> tuple[list, list[str]]:
        """The module's rows and names (raises :class:`RowsMissing` when they cannot be read)."""
        ...


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
        if self._pieces is None:
            self._pieces = self._made_pieces()
        return self._pieces

    @pieces.setter
    def pieces(self, value: dict[str, ModulePieces]) -> None:
        self._pieces = value

    @property
    def callees(self) -> dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]]:
        if self._callees is None:
            self._callees = self._made_callees()
        return self._callees

    @callees.setter
    def callees(self, value: dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]]) -> None:
        self._callees = value

    def _made_pieces(self) -> dict[str, ModulePieces]:
        """The pieces, where they are made when first asked for (a ledger read from its file)."""
        return {}

    def _made_callees(self) -> dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]]:
        return {}

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
