"""Triton model configurations (``config.pbtxt``) as far as the Python rules need them.

A Triton Python backend model lives in ``<model>/<version>/model.py`` with its
configuration in ``<model>/config.pbtxt``. GEM201 asks which input and output
tensors the configuration declares with a fixed shape: the tokenizer of a model
whose output tensor has fixed dims must pad to that length.

The file is protobuf text format. It is read with a small generic tokenizer
(fields, nested messages, ``[...]`` lists, strings, comments) rather than with
Triton's schema, so any well-formed file is read and an unreadable one yields
None, never an exception. Not registered as a front-end: gemlint does not lint
these files, it only consults them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gemlint.text import SourceError, read_regular_file

CONFIG_NAME = "config.pbtxt"
_MAX_BYTES = 1_000_000
_TOKEN = re.compile(
    r"""\s+|\#[^\n]*|(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(?P<punct>[{}\[\]<>:,;])|(?P<word>[^\s{}\[\]<>:,;"'#]+)"""
)


@dataclass(frozen=True)
class TensorShapes:
    """The declared dims of a Triton model's input and output tensors, by tensor name."""

    inputs: dict[str, tuple[int, ...]]
    outputs: dict[str, tuple[int, ...]]

    def fixed(self, name: str) -> bool | None:
        """Whether tensor ``name`` has only fixed dims (no -1); None when the configuration does not declare it."""
        dims = self.outputs.get(name, self.inputs.get(name))
        return None if dims is None else -1 not in dims

    @property
    def outputs_fixed(self) -> bool:
        """The model declares outputs, none of variable length."""
        return bool(self.outputs) and all(-1 not in dims for dims in self.outputs.values())


def config_path(model_file: Path) -> Path | None:
    """``<model>/config.pbtxt`` for ``<model>/<version>/model.py`` (a numeric version folder), else None."""
    if model_file.name != "model.py" or not model_file.parent.name.isdigit():
        return None
    return model_file.parent.parent / CONFIG_NAME


def read_bytes(model_file: Path) -> bytes | None:
    """The raw configuration of the Triton model ``model_file`` belongs to, or None (no such layout or file)."""
    path = config_path(model_file)
    if path is None:
        return None
    try:
        data = read_regular_file(path)
    except (SourceError, OSError):
        return None
    return data if len(data) <= _MAX_BYTES else None


def tensor_shapes(model_file: Path) -> TensorShapes | None:
    """The tensor shapes declared by the configuration of ``model_file``'s Triton model, or None."""
    data = read_bytes(model_file)
    if data is None:
        return None
    message = parse(data.decode("utf-8", "replace"))
    if message is None:
        return None
    found: dict[str, dict[str, tuple[int, ...]]] = {"input": {}, "output": {}}
    for field, dims in found.items():
        for tensor in message.get(field, ()):
            if not isinstance(tensor, dict):
                return None
            names = tensor.get("name", ())
            try:
                shape = tuple(int(value) for value in tensor.get("dims", ()))
            except (TypeError, ValueError):
                return None
            if len(names) == 1 and isinstance(names[0], str):
                dims[names[0]] = shape
    return TensorShapes(found["input"], found["output"])


Message = dict  # field name -> list of values (str scalars or nested Messages)


def parse(text: str) -> Message | None:
    """A protobuf text-format message as ``{field: [values]}``; None when the text is not well formed."""
    tokens = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            return None
        position = match.end()
        if match.group("string") is not None:
            tokens.append(("string", match.group("string")[1:-1]))
        elif match.group("punct") is not None:
            tokens.append(("punct", match.group("punct")))
        elif match.group("word") is not None:
            tokens.append(("word", match.group("word")))
    try:
        message, end = _message(tokens, 0, None)
    except (IndexError, ValueError):
        return None
    return message if end == len(tokens) else None


def _message(tokens: list, index: int, closing: str | None) -> tuple[Message, int]:
    message: Message = {}
    while index < len(tokens):
        kind, value = tokens[index]
        if kind == "punct" and value == closing:
            return message, index + 1
        if kind == "punct" and value in ",;":
            index += 1
            continue
        if kind != "word":
            raise ValueError(value)
        field = value
        index += 1
        if tokens[index] == ("punct", ":"):
            index += 1
        values, index = _value(tokens, index)
        message.setdefault(field, []).extend(values)
    if closing is not None:
        raise ValueError("unclosed message")
    return message, index


def _value(tokens: list, index: int) -> tuple[list, int]:
    kind, value = tokens[index]
    if kind == "punct" and value in "{<":
        nested, index = _message(tokens, index + 1, "}" if value == "{" else ">")
        return [nested], index
    if kind == "punct" and value == "[":
        values: list = []
        index += 1
        while tokens[index] != ("punct", "]"):
            if tokens[index] == ("punct", ","):
                index += 1
                continue
            items, index = _value(tokens, index)
            values.extend(items)
        return values, index + 1
    if kind in ("word", "string"):
        return [value], index + 1
    raise ValueError(value)
