"""Module summaries as JSON data, and back, checked against their declared types.

The project index is read back from a folder inside the repository being linted, which is untrusted
input (a pull request can add a crafted cache file with ``git add -f``). So it is stored as JSON, which
cannot construct objects, and every value read back is checked against the type its dataclass field
declares: anything else (a wrong type, a field too many or too few, a bad size) makes the summary corrupt,
dropped and made again. A summary's classes and functions are checked as they are decoded, when first asked
for (:class:`DecodedWhenAsked`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import types
import typing
from functools import lru_cache
from operator import itemgetter
from typing import Any, Callable

from gemlint.project.summary import EMPTY, SUMMARY_CLASSES, ClassSummary, FunctionSummary, ModuleSummary

#: The dataclasses a summary is made of: the only objects decoding ever builds.
_DATACLASSES = {cls.__name__: cls for cls in SUMMARY_CLASSES}


class CorruptIndex(ValueError):
    """The data is not a summary this version wrote."""


#: The dataclasses whose maps by name are decoded a value at a time (:class:`DecodedWhenAsked`), each with what
#: stands for a value that fails its check.
_LAZY_VALUES: dict[type, Callable[[str], Any]] = {
    FunctionSummary: lambda name: FunctionSummary(name, 0, (), ()),
    ClassSummary: lambda name: ClassSummary(name, 0, (), ()),
}

#: The scalar types a summary's fields declare, and how a decoding error names them.
_SCALARS = {bool: "a boolean", int: "an integer", str: "a string"}


#: Every string decoded is interned, and every empty container is the one of :data:`EMPTY`, as
#: :func:`share_values` makes them for an unpickled summary.
_intern = sys.intern


def _is_scalar(value: Any, kind: type) -> bool:
    """``value`` is a JSON value of ``kind`` (a boolean is no integer here)."""
    return type(value) is kind


def all_of_type(values: Any, kind: type) -> bool:
    """Every value is of type ``kind`` (a bool is no int here), checked at the speed of C: a project's summaries
    and the facts' ledger hold millions."""
    return set(map(type, values)) <= {kind}


def all_indices(values: Any, limit: int) -> bool:
    """Every value is an int (no bool) in ``range(limit)``: a position in a list of ``limit`` things, checked at
    the speed of C (``values`` a sequence: it is read three times)."""
    return all_of_type(values, int) and (not values or (min(values) >= 0 and max(values) < limit))


def encode(value: Any) -> Any:
    """``value`` (a summary, or anything its fields hold) as JSON data: dataclasses as arrays of their fields in
    declared order (a summary's most numerous values are small dataclasses, call sites above all: their field
    names were two fifths of the index's bytes, and checking them a quarter of decoding it), tuples and sets as
    arrays (sets sorted, so equal summaries give equal files)."""
    if dataclasses.is_dataclass(value):
        return _encoder(type(value))(value)
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (list, tuple)):
        return [encode(item) for item in value]
    return value


#: Fields that say where something is written, not what it is (a line, a column, an order on a line).
POSITION_FIELDS = frozenset({"line", "column", "ordinal"})


def shape_digest(summary: ModuleSummary) -> str:
    """A digest of the summary without its positions: an edit that only moves code (a comment added above,
    a line wrapped) leaves it unchanged, and with it every fact derived from the summaries, which name
    files, functions and classes but never positions."""
    text = json.dumps(_encoder(ModuleSummary, False)(summary), separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@lru_cache(maxsize=None)
def _encoder(cls: type, positions: bool = True) -> Callable[[Any], Any]:
    """An encoder for the dataclass ``cls``, built once from its declared field types (the index of a large
    project holds millions of values: asking each one's type costs seconds); without ``positions``, the
    fields of :data:`POSITION_FIELDS` are left out."""
    fields = [(name, _value_encoder(kind, positions)) for name, kind in _field_types(cls).items() if positions or name not in POSITION_FIELDS]
    return lambda value: [convert(getattr(value, name)) for name, convert in fields]


def _value_encoder(kind: Any, positions: bool) -> Callable[[Any], Any]:
    origin = typing.get_origin(kind)
    if kind in _SCALARS:
        return _same
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _encoder(kind, positions)
    if origin in (set, frozenset):
        return sorted
    if origin in (list, tuple):
        arguments = [a for a in typing.get_args(kind) if a is not Ellipsis]
        if all(a in _SCALARS for a in arguments):
            return list
        if len(arguments) == 1:
            convert_item = _value_encoder(arguments[0], positions)
            return lambda value: [convert_item(item) for item in value]
        return encode
    if origin is typing.Union or origin is types.UnionType:
        options = [option for option in typing.get_args(kind) if option is not type(None)]
        if len(options) == 1:
            convert_option = _value_encoder(options[0], positions)
            return lambda value: None if value is None else convert_option(value)
        return encode
    if origin is dict:
        _, value_type = typing.get_args(kind)
        if value_type in _SCALARS:
            return dict
        convert = _value_encoder(value_type, positions)
        return lambda value: {key: convert(item) for key, item in value.items()}
    return encode


def _same(value: Any) -> Any:
    return value


def share_values(summary: ModuleSummary) -> ModuleSummary:
    """``summary`` with every string interned and every empty container the one of :data:`EMPTY`: after it is
    unpickled, so that equal values are one object across the project, not one per module: a project's
    summaries spell the same names, callees and modules over and over (1.8 million strings on the speed corpus,
    150,000 of them distinct)."""
    return _sharer(ModuleSummary)(summary)  # type: ignore[return-value]


@lru_cache(maxsize=None)
def _sharer(kind: Any) -> Callable[[Any], Any] | None:
    """What shares the values of a field declared ``kind``, made once from the declaration: a large project's
    summaries hold 3 million values, and asking each one's type cost as much as unpickling them. None where
    there is nothing to share (numbers and flags)."""
    if kind is str:
        return _intern
    if kind in (int, bool):
        return None
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        fields = [(name, share) for name, declared in _field_types(kind).items() if (share := _sharer(declared)) is not None]

        def share_fields(value: Any) -> Any:
            for name, share in fields:
                setattr(value, name, share(getattr(value, name)))
            return value

        return share_fields
    origin, arguments = typing.get_origin(kind), [a for a in typing.get_args(kind) if a is not Ellipsis]
    if origin in (types.UnionType, typing.Union) and type(None) in arguments:  # ``X | None``
        (inner,) = [a for a in arguments if a is not type(None)]
        share_inner = _sharer(inner)
        return None if share_inner is None else lambda value: None if value is None else share_inner(value)
    if origin is dict:
        share_item = _sharer(arguments[1]) or _same
        return lambda value: {_intern(key): share_item(item) for key, item in value.items()} if value else EMPTY[dict]
    if origin is list:
        share_item = _sharer(arguments[0])

        def share_list(value: list) -> list:
            if not value:
                return EMPTY[list]  # type: ignore[return-value]
            if share_item is not None:
                value[:] = map(share_item, value)
            return value

        return share_list
    if origin in (set, frozenset, tuple):
        empty, share_item = EMPTY[origin], _sharer(arguments[0]) or _same
        return lambda value: origin(map(share_item, value)) if value else empty
    raise TypeError(f"no way to share the values of a field declared {kind!r}")


def decode_summary(data: Any, found_corrupt: Callable[[], None] | None = None) -> ModuleSummary:
    """The summary ``data`` holds (raises :class:`CorruptIndex` when it is not one this version wrote). Its
    classes, functions and methods are decoded when first asked for (:class:`DecodedWhenAsked`), and
    ``found_corrupt`` is called if one of them then fails its check."""
    global _FOUND_CORRUPT
    _FOUND_CORRUPT = found_corrupt
    try:
        return _decoder(ModuleSummary)(data)
    finally:
        _FOUND_CORRUPT = None


#: What the maps made by the summary being decoded call when a value fails its check (see decode_summary).
_FOUND_CORRUPT: Callable[[], None] | None = None


@lru_cache(maxsize=None)
def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


@lru_cache(maxsize=None)
def _decoder(kind: Any) -> Callable[[Any], Any]:
    """A checking decoder for values declared ``kind``, built once per type: it raises
    :class:`CorruptIndex` on anything but what the declaration allows."""
    origin = typing.get_origin(kind)
    if kind is Any:
        raise CorruptIndex("untyped field")  # never declared by a summary: refuse rather than trust
    if isinstance(kind, type) and kind.__name__ in _DATACLASSES and _DATACLASSES[kind.__name__] is kind:
        return _dataclass_decoder(kind)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(typing.get_args(kind))
    if kind in _SCALARS:
        return _checked(kind)
    if origin in (list, tuple, set, frozenset):
        arguments = typing.get_args(kind)
        if origin is tuple and not (len(arguments) == 2 and arguments[1] is Ellipsis):
            items = [_decoder(a) for a in arguments]

            def fixed_tuple(data: Any) -> tuple:
                if not isinstance(data, list):
                    raise CorruptIndex("expected an array")
                if len(items) != len(data):
                    raise CorruptIndex("a tuple of the wrong length")
                return tuple(decode(item) for decode, item in zip(items, data))

            return fixed_tuple
        if arguments[0] in _SCALARS:
            scalar_type = arguments[0]

            def scalars(data: Any) -> Any:
                if not isinstance(data, list):
                    raise CorruptIndex("expected an array")
                if not all_of_type(data, scalar_type):
                    raise CorruptIndex(f"expected an array of {scalar_type.__name__}")
                if not data:
                    return EMPTY[origin]
                return origin(map(_intern, data) if scalar_type is str else data)

            return scalars
        item_decoder = _decoder(arguments[0])

        def sequence(data: Any) -> Any:
            if not isinstance(data, list):
                raise CorruptIndex("expected an array")
            return origin([item_decoder(item) for item in data]) if data else EMPTY[origin]

        return sequence
    if origin is dict:
        key_type, value_type = typing.get_args(kind)
        if key_type is not str:
            raise CorruptIndex("only string keys are stored")
        if value_type in _SCALARS:

            def scalar_mapping(data: Any) -> dict:
                if not isinstance(data, dict):
                    raise CorruptIndex("expected an object")
                if not all_of_type(data.values(), value_type):
                    raise CorruptIndex(f"expected an object of {value_type.__name__} values")
                if not data:
                    return EMPTY[dict]
                if value_type is str:
                    return {_intern(key): _intern(item) for key, item in data.items()}
                return {_intern(key): item for key, item in data.items()}

            return scalar_mapping
        value_decoder = _decoder(value_type)
        if value_type in _LAZY_VALUES:
            empty = _LAZY_VALUES[value_type]

            def lazy_mapping(data: Any) -> dict:
                if not isinstance(data, dict):
                    raise CorruptIndex("expected an object")
                if not data:
                    return EMPTY[dict]  # type: ignore[return-value]
                return DecodedWhenAsked({_intern(key): item for key, item in data.items()}, value_decoder, empty, _FOUND_CORRUPT)

            return lazy_mapping

        def mapping(data: Any) -> dict:
            if not isinstance(data, dict):
                raise CorruptIndex("expected an object")
            if not data:
                return EMPTY[dict]
            return {_intern(key): value_decoder(item) for key, item in data.items()}  # JSON object keys are strings

        return mapping
    raise CorruptIndex(f"a field of type {kind} is not stored")


class DecodedWhenAsked(dict):
    """A summary's classes, functions or methods by name, each decoded from its stored array when first asked
    for. A module's summary is mostly read to resolve a few names in it: a package's utilities module holds two
    hundred functions and their call sites, and decoding them all cost a pre-commit run over one edited file
    a third of its derivation. A value that fails its check is read as a class or function of which nothing is
    known (its name only), and the index is told (``found_corrupt``: it drops the summary, made again by the
    next run); a crafted cache can hide what a module defines so, as it could by leaving it out."""

    __slots__ = ("_decode", "_empty", "_found_corrupt")

    def __init__(self, raw: dict, decode: Callable[[Any], Any], empty: Callable[[str], Any], found_corrupt: Callable[[], None] | None) -> None:
        super().__init__(raw)
        self._decode, self._empty, self._found_corrupt = decode, empty, found_corrupt

    def _value(self, key: Any, found: Any) -> Any:
        if type(found) is list:  # still the stored array (a decoded value is a dataclass)
            try:
                found = self._decode(found)
            except CorruptIndex:
                found = self._empty(key)
                if self._found_corrupt is not None:
                    self._found_corrupt()
            dict.__setitem__(self, key, found)
        return found

    def __getitem__(self, key: Any) -> Any:
        return self._value(key, dict.__getitem__(self, key))

    def get(self, key: Any, default: Any = None) -> Any:
        found = dict.get(self, key, _MISSING)
        return default if found is _MISSING else self._value(key, found)

    def values(self) -> Any:  # type: ignore[override]
        return [self._value(key, found) for key, found in dict.items(self)]

    def items(self) -> Any:  # type: ignore[override]
        return [(key, self._value(key, found)) for key, found in dict.items(self)]

    def __reduce__(self) -> Any:
        return dict, (dict(self.items()),)

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(dict(self.items()))


_MISSING = object()


def _dataclass_decoder(kind: type) -> Callable[[Any], Any]:
    declared = list(_field_types(kind).values())
    count = len(declared)
    problem = f"{kind.__name__}: expected an array of its {count} fields"
    # The scalar fields are checked together, by their types' tuple (a bool is no int there), and the strings
    # interned; only the other fields take a decoder each. Call sites, a summary's most numerous values, hold
    # scalars only: checking each field with a function of its own was half of decoding a summary.
    scalars = [number for number, field_type in enumerate(declared) if field_type in _SCALARS]
    scalar_types = tuple(declared[number] for number in scalars)
    pick = itemgetter(*scalars) if len(scalars) > 1 else (lambda data: (data[scalars[0]],)) if scalars else (lambda data: ())
    strings = [number for number in scalars if declared[number] is str]
    others = [(number, _decoder(field_type)) for number, field_type in enumerate(declared) if field_type not in _SCALARS]

    def dataclass_value(data: Any) -> Any:
        if type(data) is not list or len(data) != count:
            raise CorruptIndex(problem)
        if tuple(map(type, pick(data))) != scalar_types:
            raise CorruptIndex(f"{kind.__name__}: a field of the wrong type")
        for number in strings:  # the list is the JSON decoder's own: filled in place
            data[number] = _intern(data[number])
        for number, decode in others:
            data[number] = decode(data[number])
        return kind(*data)

    return dataclass_value


def _union_decoder(options: tuple) -> Callable[[Any], Any]:
    optional = type(None) in options
    choices = [_decoder(option) for option in options if option is not type(None)]

    def union(data: Any) -> Any:
        if data is None and optional:
            return None
        for decode in choices:
            try:
                return decode(data)
            except CorruptIndex:
                continue
        raise CorruptIndex(f"no type of {options} fits")

    return union


def _checked(kind: type) -> Callable[[Any], Any]:
    problem = f"expected {_SCALARS[kind]}"

    def scalar(data: Any) -> Any:
        if not _is_scalar(data, kind):
            raise CorruptIndex(problem)
        return data

    def string(data: Any) -> Any:
        if type(data) is not str:
            raise CorruptIndex(problem)
        return _intern(data)

    return string if kind is str else scalar
