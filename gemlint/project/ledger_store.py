"""The facts' ledger (:mod:`gemlint.project.ledger`) in its files, and read back a piece at a time.

A run over one edited file of a large project asks the stored ledger only which pieces read the edited module and
what those pieces were (``ProjectModel._facts_kept_through_edits``); a run that derives the facts asks it for every
piece. So the ledger is stored by column, and each column is made into Python values when first asked for:

- the ledger file: one line of JSON (the keys, each module's shape and digests, the read set of each piece as
  numbers, the small pieces), then the read sets themselves and the walked functions' callees. The read sets are
  100,000 module numbers for a large project, kept as packed unsigned 32-bit integers: which sets read a module is
  found in the bytes, and the sets are unpacked only for a whole derivation. The callees are JSON, parsed when
  asked for;
- the rows file: each module's subclass-index rows and called names, most of the ledger's bytes, read only when a
  module's rows changed or a part of the facts that no file holds is built (``ProjectModel._facts_part``).

The files lie in the linted repository's cache folder, which is untrusted: read as regular files that are not
links, each value checked for its type where it is read. A ledger whose header fails its check is no ledger; one
whose later columns fail theirs raises :class:`~gemlint.project.ledger.LedgerUnreadable` when they are asked for,
and nothing it keeps is used.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from array import array
from bisect import bisect_right
from itertools import accumulate, chain, compress
from operator import itemgetter
from pathlib import Path
from typing import Iterable

from gemlint.atomic import replacing
from gemlint.confinement import read_confined
from gemlint.project.facts import modules_key
from gemlint.project.index_store import MAX_INDEX_BYTES, index_format
from gemlint.project.ledger import Ledger, LedgerUnreadable, ModulePieces, ReadSet, RowsMissing
from gemlint.project.summary_codec import all_indices, all_of_type

#: The pieces of a module whose reads the ledger keeps, in the order of its column of read sets.
PARTS = ("subclass", "points", "loading", "holder")
_UINT32 = next(code for code in "IL" if array(code).itemsize == 4)


def ledger_file(facts_file: Path) -> Path:
    return facts_file.with_name(facts_file.name.removesuffix(".json") + ".ledger")


def rows_file(ledger_file: Path) -> Path:
    return ledger_file.with_name(ledger_file.name + ".rows.json")


# -- writing ----------------------------------------------------------------------------------------------


def save_ledger(file: Path, ledger: Ledger) -> None:
    """Write ``ledger``, whose pieces all hold their rows and names (:meth:`Ledger.rows_of` fills them), to
    ``file`` and the rows and names to :func:`rows_file`; one key, new each time, pairs the two."""
    paths = list(ledger.modules)
    number = {path: index for index, path in enumerate(paths)}
    # Pieces share their reads (a module's pieces often read only the module): each set is written once.
    sets: dict[ReadSet, int] = {}
    key = secrets.token_hex(16)

    def reads(found: ReadSet) -> int:
        return sets.setdefault(found, len(sets))

    pieces = [ledger.pieces[path] for path in paths]
    columns = [[reads(getattr(piece, f"{part}_reads")) for piece in pieces] for part in PARTS]
    callees = list(ledger.callees.items())
    callee_reads = [reads(read) for _, (_, read) in callees]
    # A module is named by its path, or by its number where the read was kept from a ledger read from its file
    # (the same number: a ledger is kept only for the same modules in the same order). The modules each set
    # read are packed; apart, the subclass-index rows of the few sets that looked any up.
    table = [sorted({r if type(r) is int else number[r] for r in found if not isinstance(r, tuple)}) for found in sets]
    looked_up = [[index, sorted([*r] for r in found if isinstance(r, tuple))] for index, found in enumerate(sets) if any(isinstance(r, tuple) for r in found)]
    sizes, numbers = _packed(map(len, table)), _packed(chain.from_iterable(table))
    reached = _encoded([[[number[p], q] for p, q in found] for _, (found, _) in callees])
    header = {
        "format": index_format(), "rows": key, "facts": ledger.facts_key, "modules": modules_key(ledger.modules),
        "shapes": [shape for _, shape in ledger.modules.values()],
        "subclass_digests": [piece.subclass_digest for piece in pieces],
        "called_digests": [piece.called_digest for piece in pieces],
        "reads": [_text(_packed(column)) for column in columns],
        "points": [piece.points for piece in pieces],
        "scripts": [[[number[p], q] for p, q in piece.scripts] for piece in pieces],
        "loading": [piece.loading for piece in pieces],
        "holder": "".join("1" if piece.holder else "0" for piece in pieces),
        "callees": {"heads": _text(_packed(number[p] for (p, _), _ in callees)), "quals": [q for (_, q), _ in callees], "reads": _text(_packed(callee_reads))},
        "sets": len(table), "rows_read": looked_up,
        "tail": [len(sizes), len(numbers), len(reached)],
    }
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        # The rows first: a ledger whose key names no rows file reads none. Written a module at a time: the
        # process deriving the facts holds every summary, and a whole text of a large project's rows (MBs,
        # twice over as bytes) would raise its peak.
        with replacing(rows_file(file), prefix=".ledger-") as stream:
            stream.write(b'{"format":' + _encoded(index_format()) + b',"key":' + _encoded(key) + b',"rows":[')
            for index, piece in enumerate(pieces):
                stream.write((b"," if index else b"") + _encoded([piece.subclass_rows, piece.called]))
            stream.write(b"]}")
        with replacing(file, prefix=".ledger-") as stream:
            stream.write(_encoded(header) + b"\n")
            stream.write(sizes + numbers + reached)
    except OSError:
        pass  # an unwritable cache costs speed only


def _encoded(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _packed(values: Iterable[int]) -> bytes:
    packed = array(_UINT32, values)
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def _text(raw: bytes) -> str:
    return raw.hex()


# -- reading ----------------------------------------------------------------------------------------------


def load_ledger(file: Path, modules: dict[str, tuple[str, str]], named: str | None = None) -> StoredLedger | None:
    """The ledger stored in ``file`` by this version for the project's ``modules`` (path -> (name, shape), in
    order) as they are now, its columns made when first asked for. None when there is none, when it was derived
    from other modules (one added, removed or renamed since: nothing it keeps is known to hold), or when its
    header is not what :func:`save_ledger` writes. ``named``: :func:`~gemlint.project.facts.modules_key` of
    ``modules``, where the caller has it."""
    try:
        if os.path.islink(file):
            return None
        data = read_confined(file, None, MAX_INDEX_BYTES)
        end = data.find(b"\n")
        _check(end >= 0)
        header = json.loads(data[:end])
        if not isinstance(header, dict) or header.get("format") != index_format() or header.get("modules") != (named or modules_key(modules)):
            return None
        return StoredLedger(modules, header, memoryview(data)[end + 1:], KeptRows(rows_file(file), header["rows"], list(modules)))
    except (OSError, ValueError, KeyError, TypeError, RecursionError, MemoryError):
        return None


class KeptRows:
    """The subclass-index rows and called names of a stored ledger, read from their file when first asked."""

    def __init__(self, file: Path, key: object, paths: list[str]) -> None:
        _check(type(key) is str)
        self._file, self._key, self._paths = file, key, paths
        self._rows: dict[str, tuple[list, list[str]]] | None = None

    def get(self, path: str) -> tuple[list, list[str]]:
        if self._rows is None:
            self._rows = _load_rows(self._file, self._key, self._paths)  # type: ignore[arg-type]
            if self._rows is None:
                self._rows = {}
        found = self._rows.get(path)
        if found is None:
            raise RowsMissing(path)
        return found


class StoredLedger(Ledger):
    """A ledger read from its file, its pieces and walked functions made when first asked for (see the module's
    docstring). The header's columns are checked as it is read (raising ValueError); the pieces' contents, the
    read sets and the callees when they are made (raising :class:`LedgerUnreadable`)."""

    def __init__(self, modules: dict[str, tuple[str, str]], header: dict, tail: memoryview, kept_rows: KeptRows) -> None:
        paths = list(modules)
        count = len(paths)
        shapes = header["shapes"]
        _check(isinstance(shapes, list) and len(shapes) == count and all_of_type(shapes, str))
        facts = header["facts"]
        _check(type(facts) is str)
        super().__init__(dict(zip(paths, zip(map(itemgetter(0), modules.values()), shapes))), kept_rows=kept_rows, facts_key=facts)
        self._pieces = None  # type: ignore[assignment]
        self._callees = None  # type: ignore[assignment]
        self._paths = paths
        self._numbers: dict[str, int] | None = None
        self._subclass_digests, self._called_digests = header["subclass_digests"], header["called_digests"]
        _check(all(isinstance(column, list) and len(column) == count and all_of_type(column, str) for column in (self._subclass_digests, self._called_digests)))
        sets = header["sets"]
        _check(type(sets) is int)
        self._reads = header["reads"]
        _check(isinstance(self._reads, list) and len(self._reads) == len(PARTS))
        self._reads = [_numbers(column, count, sets) for column in self._reads]
        self._points, self._scripts, self._loading, holder = header["points"], header["scripts"], header["loading"], header["holder"]
        _check(all(isinstance(column, list) and len(column) == count and all_of_type(column, list) for column in (self._points, self._scripts, self._loading)))
        _check(type(holder) is str and len(holder) == count and not holder.strip("01"))
        self._holder = [flag == "1" for flag in holder]
        callees = header["callees"]
        _check(isinstance(callees, dict))
        self._quals = callees["quals"]
        _check(isinstance(self._quals, list) and all_of_type(self._quals, str))
        self._heads = _numbers(callees["heads"], len(self._quals), count)
        self._callee_reads = _numbers(callees["reads"], len(self._quals), sets)
        lengths = header["tail"]
        _check(isinstance(lengths, list) and len(lengths) == 3 and all_indices(lengths, len(tail) + 1) and sum(lengths) == len(tail))
        sizes, numbers = tail[: lengths[0]], tail[lengths[0] : lengths[0] + lengths[1]]
        self._reached = tail[lengths[0] + lengths[1] :]
        self._sets = PackedSets(bytes(sizes), bytes(numbers), header["rows_read"], count)
        _check(len(self._sets) == sets)

    # -- a whole derivation ----------------------------------------------------------------------------------
    def _made_pieces(self) -> dict[str, ModulePieces]:
        table, reads = self._sets.unpacked(), self._reads
        return {
            path: ModulePieces(
                None, table[reads[0][number]],
                None,
                *self._points_of(number), table[reads[1][number]],
                self._loading_of(number), table[reads[2][number]],
                self._holder[number], table[reads[3][number]],
                subclass_digest=self._subclass_digests[number], called_digest=self._called_digests[number],
            )
            for number, path in enumerate(self._paths)
        }

    def _made_callees(self) -> dict[tuple[str, str], tuple[list[tuple[str, str]], ReadSet]]:
        table, paths, reached = self._sets.unpacked(), self._paths, self._walked()
        return {(paths[head], qual): (found, table[read]) for head, qual, found, read in zip(self._heads, self._quals, reached, self._callee_reads)}

    # -- a few edited modules ---------------------------------------------------------------------------------
    def touched(self, paths: Iterable[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """What read any of the modules ``paths``: the pieces, as (path, part of :data:`PARTS`), and the functions
        walked from."""
        sets = self._sets.holding(self.numbers(paths))
        if not sets:
            return [], []
        holds = sets.__contains__
        # Tested in C, a column at a time: a large project has thousands of modules, and a few read the edit.
        pieces = [(path, part) for part, column in zip(PARTS, self._reads) for path in compress(self._paths, map(holds, column))]
        functions = [(self._paths[head], qual) for head, qual in compress(zip(self._heads, self._quals), map(holds, self._callee_reads))]
        return pieces, functions

    def kept_part(self, path: str, part: str) -> object:
        """What the piece ``part`` of the module ``path`` was, as its derivation returns it: the subclass rows'
        digest, (entry points, script functions), the loading names, or whether it holds project models."""
        number = self.numbers([path]).pop()
        if part == "subclass":
            return self._subclass_digests[number]
        if part == "points":
            return self._points_of(number)
        return self._loading_of(number) if part == "loading" else self._holder[number]

    def kept_callees(self, function: tuple[str, str]) -> list[tuple[str, str]]:
        """The functions the calls of ``function`` reached, as walked (``function`` is one :meth:`touched` named)."""
        paths, reached = self._paths, self._walked()
        for head, qual, found in zip(self._heads, self._quals, reached):
            if qual == function[1] and paths[head] == function[0]:
                return found
        raise KeyError(function)

    def called_digests(self) -> dict[str, str]:
        """Each module's digest of the names it calls, in module order."""
        return dict(zip(self._paths, self._called_digests))

    def numbers(self, paths: Iterable[str]) -> set[int]:
        wanted = list(paths)
        if self._numbers is None and len(wanted) <= 16:  # a few edited modules: found in C, no map of every path
            return {self._paths.index(path) for path in wanted}
        numbered = self._numbered
        return {numbered(path) for path in wanted}

    # -- the columns' contents, checked as they are made -------------------------------------------------------
    def _numbered(self, path: str) -> int:
        if self._numbers is None:
            self._numbers = {found: number for number, found in enumerate(self._paths)}
        return self._numbers[path]

    def _points_of(self, number: int) -> tuple[list[tuple[str, bool, bool]], list[tuple[str, str]]]:
        points, scripts = self._points[number], self._scripts[number]
        _readable(all(isinstance(point, list) and len(point) == 3 and type(point[0]) is str and type(point[1]) is bool and type(point[2]) is bool for point in points))
        _readable(all(isinstance(row, list) and len(row) == 2 and type(row[0]) is int and 0 <= row[0] < len(self._paths) and type(row[1]) is str for row in scripts))
        return [(q, evidenced, alone) for q, evidenced, alone in points], [(self._paths[n], q) for n, q in scripts]

    def _loading_of(self, number: int) -> list[str]:
        found = self._loading[number]
        _readable(all_of_type(found, str))
        return found

    def _walked(self) -> list[list[tuple[str, str]]]:
        """Each walked function's callees, as (path, qualname)."""
        if not isinstance(self._reached, list):
            try:
                found = json.loads(bytes(self._reached))
            except (ValueError, RecursionError) as error:
                raise LedgerUnreadable("the callees are not JSON") from error
            _readable(isinstance(found, list) and len(found) == len(self._quals) and all_of_type(found, list))
            flat = list(chain.from_iterable(found))
            _readable(all_of_type(flat, list) and set(map(len, flat)) <= {2})
            _readable(all_indices(list(map(itemgetter(0), flat)), len(self._paths)) and all_of_type(map(itemgetter(1), flat), str))
            paths = self._paths
            self._reached = [[(paths[n], q) for n, q in callees] for callees in found]
        return self._reached


class PackedSets:
    """The read sets of a stored ledger, left packed until asked for: the numbers of the modules each set read,
    and for the few sets that looked up rows of the subclass index, those rows. Unpacked, a set of modules alone is
    a tuple: reads are only ever tested for any changed module among them, and a tuple is made four times faster
    than a set."""

    def __init__(self, sizes: bytes, numbers: bytes, looked_up: object, modules: int) -> None:
        _check(len(sizes) % 4 == 0 and len(numbers) % 4 == 0)
        self._sizes = _values(sizes)
        _check(sum(self._sizes) * 4 == len(numbers))
        self._raw, self._modules = numbers, modules
        _check(isinstance(looked_up, list) and all_of_type(looked_up, list) and set(map(len, looked_up)) <= {2})
        self._rows: dict[int, list[tuple[str, str]]] = {}
        for index, found in looked_up:  # type: ignore[union-attr]
            _check(type(index) is int and 0 <= index < len(self._sizes) and isinstance(found, list))
            _check(all(isinstance(token, list) and len(token) == 2 and all_of_type(token, str) for token in found))
            self._rows[index] = [(token[0], token[1]) for token in found]
        self._table: list[ReadSet] | None = None
        self._ends: list[int] | None = None

    def __len__(self) -> int:
        return len(self._sizes)

    def unpacked(self) -> list[ReadSet]:
        """Every set (raises :class:`LedgerUnreadable` when one names no module)."""
        if self._table is None:
            numbers = _values(self._raw)
            _readable(not numbers or max(numbers) < self._modules)
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
        if self._ends is None:
            self._ends = list(accumulate(self._sizes))
        found: set[int] = set()
        raw, ends = self._raw, self._ends
        for module in modules:
            pattern = _packed([module])
            at = raw.find(pattern)
            while at != -1:
                if at % 4 == 0:  # a whole value, not the end of one and the start of the next
                    found.add(bisect_right(ends, at // 4))
                at = raw.find(pattern, at + 1)
        return found


def _values(raw: bytes) -> list[int]:
    values = array(_UINT32)
    values.frombytes(raw)
    if sys.byteorder != "little":
        values.byteswap()
    return values.tolist()


def _numbers(text: object, count: int, limit: int) -> list[int]:
    """``count`` numbers below ``limit``, written by :func:`_text`."""
    _check(type(text) is str)
    values = _values(bytes.fromhex(text))  # type: ignore[arg-type]
    _check(len(values) == count and (not values or max(values) < limit))
    return values


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


def _readable(condition: bool) -> None:
    if not condition:
        raise LedgerUnreadable("not what gemlint wrote")
