"""Module summaries as JSON data, and back, checked against their declared types.

The project index is read back from a folder inside the repository being linted, which is untrusted
input (a pull request can add a crafted cache file with ``git add -f``). So it is stored as JSON, which
cannot construct objects, and every value read back is checked against the type its dataclass field
declares: anything else (a wrong type, a missing or unknown field, a bad size) makes the whole file a
corrupt cache, dropped and rebuilt.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import lru_cache
from typing import Any

from gemlint.analysis.triage import SyntaxFacts
from gemlint.project.summary import CallSite, ClassSummary, FunctionSummary, ModuleSummary

#: The dataclasses a summary is made of: the only objects decoding ever builds.
_DATACLASSES = {cls.__name__: cls for cls in (ModuleSummary, ClassSummary, FunctionSummary, CallSite, SyntaxFacts)}


class CorruptIndex(ValueError):
    """The data is not a summary this version wrote."""


def encode(value: Any) -> Any:
    """``value`` (a summary, or anything its fields hold) as JSON data: dataclasses as objects of their
    fields, tuples and sets as arrays (sets sorted, so equal summaries give equal files)."""
    if dataclasses.is_dataclass(value):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (list, tuple)):
        return [encode(item) for item in value]
    return value


def decode_summary(data: Any) -> ModuleSummary:
    return _decode(ModuleSummary, data)


@lru_cache(maxsize=None)
def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _decode(kind: Any, data: Any) -> Any:
    origin = typing.get_origin(kind)
    if kind is Any:
        raise CorruptIndex("untyped field")  # never declared by a summary: refuse rather than trust
    if isinstance(kind, type) and kind.__name__ in _DATACLASSES and _DATACLASSES[kind.__name__] is kind:
        if not isinstance(data, dict):
            raise CorruptIndex(f"{kind.__name__}: expected an object")
        fields = _field_types(kind)
        if data.keys() != fields.keys():
            raise CorruptIndex(f"{kind.__name__}: fields {sorted(data)} are not {sorted(fields)}")
        return kind(**{name: _decode(fields[name], data[name]) for name in fields})
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(kind)
        if data is None and type(None) in options:
            return None
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode(option, data)
            except CorruptIndex:
                continue
        raise CorruptIndex(f"no type of {kind} fits")
    if kind is bool:
        if not isinstance(data, bool):
            raise CorruptIndex("expected a boolean")
        return data
    if kind is int:
        if not isinstance(data, int) or isinstance(data, bool):
            raise CorruptIndex("expected an integer")
        return data
    if kind is str:
        if not isinstance(data, str):
            raise CorruptIndex("expected a string")
        return data
    if origin in (list, tuple, set, frozenset):
        if not isinstance(data, list):
            raise CorruptIndex("expected an array")
        arguments = typing.get_args(kind)
        if origin is tuple and not (len(arguments) == 2 and arguments[1] is Ellipsis):
            if len(arguments) != len(data):
                raise CorruptIndex("a tuple of the wrong length")
            return tuple(_decode(a, item) for a, item in zip(arguments, data))
        items = [_decode(arguments[0], item) for item in data]
        return origin(items)
    if origin is dict:
        if not isinstance(data, dict):
            raise CorruptIndex("expected an object")
        key_type, value_type = typing.get_args(kind)
        if key_type is not str:
            raise CorruptIndex("only string keys are stored")
        return {key: _decode(value_type, item) for key, item in data.items()}
    raise CorruptIndex(f"a field of type {kind} is not stored")
