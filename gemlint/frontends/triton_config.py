"""The Triton model-configuration front-end: ``config.pbtxt`` parsed against Triton's own schema.

A Triton model repository holds ``<model>/config.pbtxt``, a ``ModelConfig``
message in protobuf text format. It is parsed by protobuf's own text-format
parser (``google.protobuf.text_format``) into the ``inference.ModelConfig``
message type that Triton's Python client package (``tritonclient``) ships, so
field names, enum values and types are checked exactly as Triton checks them
when it loads the model.

``tritonclient`` is an optional dependency (``pip install 'gemlint[triton]'``):
its package ``tritonclient.grpc`` imports grpcio when imported, so the schema
module is loaded from its file alone, which needs only protobuf. Without it,
:func:`schema_problem` says why and configurations are not read (GEM603 does
not run and GEM201 cannot see a Triton model's declared output shapes); nothing
fails.

Python's protobuf has no parse-location tree, so field positions come from a
second pass over the same tokens with protobuf's own tokenizer.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

from gemlint.confinement import read_companion
from gemlint.diagnostics import Position
from gemlint.languages import TRITON_CONFIG_NAME
from gemlint.text import SourceError

CONFIG_NAME = TRITON_CONFIG_NAME
INSTALL_HINT = "install the `triton` extra: pip install -e '.[triton]' in a checkout of gemlint"
_MAX_BYTES = 1_000_000
#: The other models of a repository read for an ensemble (a repository of hundreds is not read whole).
_MAX_SIBLINGS = 64
#: ``${name}`` placeholders of configuration templates (TensorRT-LLM's fill_template.py, envsubst).
_TEMPLATE_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")

FieldPath = tuple[tuple[str, int], ...]


@lru_cache(maxsize=1)
def _schema() -> ModuleType | str:
    """Triton's ``model_config_pb2`` module, or why it cannot be loaded."""
    try:
        spec = importlib.util.find_spec("tritonclient")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return f"tritonclient is not installed ({INSTALL_HINT})"
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "grpc", "model_config_pb2.py")
        if os.path.isfile(path):
            break
    else:
        return "this tritonclient has no grpc/model_config_pb2.py"
    # Loaded under a private name from its file: importing tritonclient.grpc would import grpcio.
    module_spec = importlib.util.spec_from_file_location("gemlint._triton_model_config_pb2", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as error:  # protobuf missing or older than the generated code needs
        return f"tritonclient's model_config_pb2 cannot be loaded ({type(error).__name__}: {error})"
    return module


def schema_problem() -> str | None:
    """Why Triton configurations cannot be read here, or None when they can."""
    schema = _schema()
    return schema if isinstance(schema, str) else None


def schema_state() -> bytes:
    """What a cached result for a Triton configuration depends on besides the file: which schema read it."""
    schema = _schema()
    return (schema if isinstance(schema, str) else str(schema.__file__)).encode()


def is_template(text: str) -> bool:
    """A configuration template with ``${...}`` placeholders, not a configuration Triton loads."""
    return _TEMPLATE_PLACEHOLDER.search(text) is not None


@dataclass(frozen=True)
class TritonConfig:
    """A parsed ``config.pbtxt``: the ``inference.ModelConfig`` message and where its fields are written."""

    path: Path
    message: Any  # inference.ModelConfig
    positions: dict[FieldPath, tuple[Position, Position]]

    def span(self, *path: str | tuple[str, int]) -> tuple[Position, Position] | None:
        """Where a field's name is written: ``span("max_batch_size")``, ``span(("instance_group", 1), "kind")``
        (an index counts the field's occurrences in its parent message, list elements included)."""
        key = tuple(step if isinstance(step, tuple) else (step, 0) for step in path)
        return self.positions.get(key)


def parse(source, text: str) -> TritonConfig | None:
    """Front-end entry point (see :mod:`gemlint.frontends`); None when the schema is unavailable or the
    file is a template. A file Triton would reject raises :class:`SourceError` (GEM000)."""
    schema = _schema()
    if isinstance(schema, str) or is_template(text):
        return None
    return parse_text(Path(source.path), text, schema)


def parse_text(path: Path, text: str, schema: ModuleType | None = None) -> TritonConfig:
    from google.protobuf import text_format

    schema = schema if schema is not None else _schema()
    if isinstance(schema, str):
        raise SourceError(f"cannot read Triton model configurations: {schema}")
    message = schema.ModelConfig()
    try:
        text_format.Parse(text, message)
    except text_format.ParseError as error:
        line, column = error.GetLine() or 1, error.GetColumn() or 1
        reason = str(error)
        reason = reason.split(" : ", 1)[-1] if re.match(r"^\d+:\d+ : ", reason) else reason
        raise SourceError(f"invalid Triton model configuration: {reason}", line, column) from None
    except RecursionError:
        raise SourceError("the Triton model configuration is nested too deeply to parse") from None
    return TritonConfig(path, message, _field_positions(text))


# -- field positions -----------------------------------------------------------------------------------
class _Tokens:
    """Protobuf's own tokenizer (strings, numbers, comments as Triton reads them) with token positions."""

    def __init__(self, text: str) -> None:
        from google.protobuf import text_format

        self.tokenizer = text_format.Tokenizer(text.splitlines())

    @property
    def token(self) -> str:
        return self.tokenizer.token

    def span(self) -> tuple[Position, Position]:
        # The tokenizer reports where its current token is only through the errors it builds.
        error = self.tokenizer.ParseError("")
        start = Position(error.GetLine(), error.GetColumn())
        return start, Position(start.line, start.column + len(self.token))

    def next(self) -> str:
        token = self.token
        self.tokenizer.NextToken()
        return token


def _field_positions(text: str) -> dict[FieldPath, tuple[Position, Position]]:
    """Where each field of the (already validated) message is written, by path; partial on odd input."""
    positions: dict[FieldPath, tuple[Position, Position]] = {}
    try:
        tokens = _Tokens(text)
        _message(tokens, (), None, positions)
    except Exception:  # the parser accepted the file: an odd spelling here only costs positions
        pass
    return positions


def _message(tokens: _Tokens, path: FieldPath, closing: str | None, positions: dict) -> None:
    counts: dict[str, int] = {}
    while tokens.token and tokens.token != closing:
        if tokens.token in (",", ";"):
            tokens.next()
            continue
        span = tokens.span()
        name = tokens.next()
        if name == "[":  # an extension or Any type URL: not used by Triton's schema
            while tokens.token and tokens.next() != "]":
                pass
            name = "[...]"
        tokens.tokenizer.TryConsume(":")
        if tokens.token == "[":
            tokens.next()
            while tokens.token and tokens.token != "]":
                if tokens.token == ",":
                    tokens.next()
                    continue
                _value(tokens, path, name, counts, span, positions)
            tokens.next()
        else:
            _value(tokens, path, name, counts, span, positions)
    if closing is not None:
        tokens.next()


def _value(tokens: _Tokens, path: FieldPath, name: str, counts: dict[str, int], span, positions: dict) -> None:
    index = counts.get(name, 0)
    counts[name] = index + 1
    field_path = path + ((name, index),)
    positions.setdefault(field_path, span)
    if tokens.token in ("{", "<"):
        closing = "}" if tokens.next() == "{" else ">"
        _message(tokens, field_path, closing, positions)
        return
    tokens.next()
    while tokens.token[:1] in ("'", '"'):  # adjacent string literals are one value
        tokens.next()


# -- the configuration of a Triton Python model, for rules on its model.py ------------------------------
@dataclass(frozen=True)
class TensorShapes:
    """The declared dims of a Triton model's input and output tensors, by tensor name."""

    inputs: dict[str, tuple[int, ...]]
    outputs: dict[str, tuple[int, ...]]

    def fixed(self, name: str) -> bool | None:
        """Whether tensor ``name`` has a fixed length: its last dim, the sequence of a tokenized tensor, is not
        -1 (a leading -1 is the batch of a model with ``max_batch_size: 0``); None when it is not declared."""
        dims = self.outputs.get(name, self.inputs.get(name))
        return None if dims is None else bool(dims) and dims[-1] != -1

    @property
    def outputs_fixed(self) -> bool:
        """The model declares outputs, each of a fixed length."""
        return bool(self.outputs) and all(dims and dims[-1] != -1 for dims in self.outputs.values())


def config_path(model_file: str | Path) -> Path | None:
    """``<model>/config.pbtxt`` for ``<model>/<version>/model.py`` (a numeric version folder), else None. Told from
    the path's text: a warm run asks it of every Python file, most of which were never made a ``Path``."""
    version, name = os.path.split(model_file)
    if name != "model.py" or not os.path.basename(version).isdigit():
        return None
    return Path(os.path.dirname(version), CONFIG_NAME)


def read_bytes(model_file: Path) -> bytes | None:
    """The raw configuration of the Triton model ``model_file`` belongs to, or None (no such layout or file)."""
    path = config_path(model_file)
    return _read(path, model_file) if path is not None else None


def tensor_shapes(model_file: Path) -> TensorShapes | None:
    """The tensor shapes declared by the configuration of ``model_file``'s Triton model; None when there is
    none, it does not parse, or the schema is unavailable. An output declared of any length (-1) that an ensemble
    of the repository hands to a model whose input has a fixed length takes that length: Triton refuses anything
    else there (a tokenizer step feeding an ONNX or TensorRT model built for 128 tokens)."""
    path = config_path(model_file)
    data = read_bytes(model_file)
    if path is None or data is None or schema_problem() is not None:
        return None
    message = _model_config(path, data)
    if message is None:
        return None
    outputs = {tensor.name: tuple(tensor.dims) for tensor in message.output}
    if any(dims and dims[-1] == -1 for dims in outputs.values()):
        consumed = _consumed_dims(model_file, message.name or path.parent.name)
        outputs = {name: consumed.get(name, dims) if dims and dims[-1] == -1 else dims for name, dims in outputs.items()}
    return TensorShapes({tensor.name: tuple(tensor.dims) for tensor in message.input}, outputs)


def repository_bytes(model_file: Path) -> bytes:
    """The other configurations of the model repository ``model_file``'s model is in, as read: what
    :func:`tensor_shapes` may read of them (an ensemble, the models it feeds)."""
    return b"\0".join(data for config in _sibling_configs(model_file) if (data := _read(config, model_file)) is not None)


def _consumed_dims(model_file: Path, name: str) -> dict[str, tuple[int, ...]]:
    """For each output of the model ``name`` that an ensemble step hands to another step, the dims that step's
    model declares for that input, where fixed."""
    messages = {}
    for config in _sibling_configs(model_file):
        data = _read(config, model_file)
        message = _model_config(config, data) if data is not None else None
        if message is not None:
            messages[message.name or config.parent.name] = message
    found: dict[str, tuple[int, ...]] = {}
    for ensemble in messages.values():
        if ensemble.platform != "ensemble":
            continue
        steps = list(ensemble.ensemble_scheduling.step)
        produced = {tensor: output for step in steps if step.model_name == name for output, tensor in step.output_map.items()}
        for step in steps:
            consumer = messages.get(step.model_name)
            if consumer is None or step.model_name == name:
                continue
            declared = {tensor.name: tuple(tensor.dims) for tensor in consumer.input}
            for model_input, tensor in step.input_map.items():
                dims = declared.get(model_input)
                if tensor in produced and dims and dims[-1] != -1:
                    found[produced[tensor]] = dims
    return found


def _sibling_configs(model_file: Path) -> list[Path]:
    """The configurations of the other models of the repository (the folder above ``model_file``'s model), at most
    :data:`_MAX_SIBLINGS`."""
    path = config_path(model_file)
    if path is None:
        return []
    model = path.parent
    try:
        siblings = sorted(entry for entry in model.parent.iterdir() if entry != model and entry.is_dir())
    except OSError:
        return []
    return [config for entry in siblings[:_MAX_SIBLINGS] if (config := entry / CONFIG_NAME).is_file()]


def _read(config: Path, model_file: Path) -> bytes | None:
    """A configuration ``model_file`` names (its own, or another of its repository), or None."""
    try:
        return read_companion(config, model_file, _MAX_BYTES)
    except OSError:  # unreadable, too large, not a regular file, or a link out of the work tree
        return None


def _model_config(path: Path, data: bytes) -> Any:
    """The parsed ``ModelConfig`` of ``data``, or None (not text, a template, or not valid)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if is_template(text):
        return None
    try:
        return parse_text(path, text).message
    except SourceError:
        return None
