"""YAML as a tree of positioned nodes, composed safely.

PyYAML's composer (the libyaml one where available) builds a node graph without
constructing a single Python object from a tag, so ``!Ref``, ``!!python/object``
and any unknown tag are plain strings here. Aliases are shared nodes in that
graph; turning the graph into a tree expands them, so the expansion is bounded
(:data:`MAX_NODES`) and a "billion laughs" file becomes a parse error instead of
a hang. Scalars stay text (``"1"`` and ``1`` are both ``"1"``): the rules read
configuration, they never need YAML's type resolution.
"""

from __future__ import annotations

from typing import Iterator

import yaml

from gemlint.diagnostics import Position
from gemlint.text import SourceError

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_NODES = 1_000_000
#: Nodes converted again because an alias refers to them, past which a file is a bomb when they also outnumber its
#: own nodes :data:`ALIAS_GROWTH` times: a bomb's few lines grow a thousandfold, while a catalogue that merges an
#: anchor into each of its 1,000 entries reuses about as many nodes as it holds (all under :data:`MAX_NODES`).
MAX_ALIAS_NODES = 20_000
ALIAS_GROWTH = 10
MAX_DEPTH = 200


class Node:
    """A YAML node with its span (1-based lines and columns, exclusive end).

    ``file`` is None for nodes of the file being linted; nodes brought in from
    another file (a Helm chart's values.yaml) name that file and carry an
    ``anchor``, the span in the linted file where they were included.
    ``templated`` marks values that a template substituted (configuration, not literals).
    """

    __slots__ = ("start", "end", "file", "anchor", "templated", "splice")

    def __init__(self, start: Position, end: Position, file: str | None = None) -> None:
        self.start = start
        self.end = end
        self.file = file
        self.anchor: tuple[Position, Position] | None = None
        self.templated = False
        self.splice = False  # a sequence that replaces one item of its parent sequence (template includes)

    @property
    def span(self) -> tuple[Position, Position]:
        """Where to report this node in the linted file."""
        if self.file is not None and self.anchor is not None:
            return self.anchor
        return self.start, self.end


class Scalar(Node):
    __slots__ = ("value", "tag")

    def __init__(self, value: str, tag: str, start: Position, end: Position, file: str | None = None) -> None:
        super().__init__(start, end, file)
        self.value = value
        self.tag = tag

    def __repr__(self) -> str:
        return f"Scalar({self.value!r})"


class Sequence(Node):
    __slots__ = ("items",)

    def __init__(self, items: list[Node], start: Position, end: Position, file: str | None = None) -> None:
        super().__init__(start, end, file)
        self.items = items

    def __repr__(self) -> str:
        return f"Sequence({self.items!r})"


class Mapping(Node):
    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[Scalar, Node]], start: Position, end: Position, file: str | None = None) -> None:
        super().__init__(start, end, file)
        self.pairs = pairs

    def entry(self, key: str) -> tuple[Scalar, Node] | None:
        """The last ``key: value`` pair (YAML loaders keep the last of duplicate keys)."""
        found = None
        for pair in self.pairs:
            if pair[0].value == key:
                found = pair
        return found

    def get(self, key: str) -> Node | None:
        pair = self.entry(key)
        return pair[1] if pair is not None else None

    def text(self, key: str) -> str | None:
        value = self.get(key)
        return value.value if isinstance(value, Scalar) else None

    def mapping(self, key: str) -> "Mapping | None":
        value = self.get(key)
        return value if isinstance(value, Mapping) else None

    def sequence(self, key: str) -> list[Node]:
        value = self.get(key)
        return value.items if isinstance(value, Sequence) else []

    def keys(self) -> list[str]:
        return [key.value for key, _ in self.pairs]

    def __repr__(self) -> str:
        return f"Mapping({[(k.value, v) for k, v in self.pairs]!r})"


class _Converter:
    """Turns PyYAML's node graph into a tree, expanding aliases and merge keys within a budget."""

    def __init__(self, file: str | None, hook=None, line_offset: int = 0) -> None:
        self.file = file
        self.line_offset = line_offset
        self.count = 0
        self.repeated = 0
        self.seen: set[int] = set()
        self.hook = hook  # called on each finished Mapping; may return a replacement node

    def convert(self, node: yaml.Node, depth: int = 0) -> Node | None:
        self.count += 1
        key = id(node)
        if key in self.seen:
            self.repeated += 1
            if self.repeated > MAX_ALIAS_NODES and self.repeated > ALIAS_GROWTH * len(self.seen):
                raise SourceError(
                    f"the YAML expands to more than {ALIAS_GROWTH} times its own {len(self.seen)} nodes through aliases; not read (a YAML bomb?)",
                    node.start_mark.line + 1 + self.line_offset,
                )
        else:
            self.seen.add(key)
        if self.count > MAX_NODES:
            raise SourceError(f"the YAML has more than {MAX_NODES} nodes; not read", node.start_mark.line + 1 + self.line_offset)
        if depth > MAX_DEPTH:
            # Said as a parse error whichever libyaml is installed (newer ones refuse deep nesting themselves).
            raise SourceError(
                "invalid YAML: exceeded maximum nesting depth",
                node.start_mark.line + 1 + self.line_offset,
                node.start_mark.column + 1,
            )
        start, end = self._position(node.start_mark), self._position(node.end_mark)
        kind = type(node)  # the composer makes exactly these three classes
        if kind is yaml.ScalarNode:
            return Scalar(str(node.value), node.tag or "", start, end, self.file)
        if kind is yaml.SequenceNode:
            items: list[Node] = []
            for child in node.value:
                item = self.convert(child, depth + 1)
                if type(item) is Sequence and item.splice:
                    items.extend(item.items)
                elif item is not None:
                    items.append(item)
            return Sequence(items, start, end, self.file)
        if kind is yaml.MappingNode:
            pairs: list[tuple[Scalar, Node]] = []
            merged: list[tuple[Scalar, Node]] = []
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG or (type(key_node) is yaml.ScalarNode and key_node.value == "<<"):
                    merged.extend(self._merge_pairs(value_node, depth + 1))
                    continue
                key_scalar = self.convert(key_node, depth + 1)
                value = self.convert(value_node, depth + 1)
                if type(key_scalar) is Scalar and value is not None:
                    pairs.append((key_scalar, value))
            if merged:
                own = {key.value for key, _ in pairs}
                pairs = [pair for pair in merged if pair[0].value not in own] + pairs
            mapping = Mapping(pairs, start, end, self.file)
            if self.hook is not None:
                return self.hook(mapping)
            return mapping
        return None

    def _position(self, mark) -> Position:
        return Position(mark.line + 1 + self.line_offset, mark.column + 1)

    def _merge_pairs(self, value_node: yaml.Node, depth: int) -> list[tuple[Scalar, Node]]:
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        pairs: list[tuple[Scalar, Node]] = []
        for source in sources:
            converted = self.convert(source, depth)
            if isinstance(converted, Mapping):
                pairs.extend(converted.pairs)
        return pairs


def compose_documents(text: str, file: str | None = None, hook=None, line_offset: int = 0) -> list[Node]:
    """Every document of ``text`` as a tree (empty documents left out); SourceError on invalid YAML.
    ``line_offset``: the lines of the file above ``text`` (a document read on its own)."""
    converter = _Converter(file, hook, line_offset)
    documents: list[Node] = []
    try:
        for root in yaml.compose_all(text, Loader=_LOADER):
            if root is None:
                continue
            converted = converter.convert(root)
            if converted is not None and not (isinstance(converted, Scalar) and converted.value == "" ):
                documents.append(converted)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 + line_offset if mark is not None else 1 + line_offset
        column = mark.column + 1 if mark is not None else 1
        raise SourceError(f"invalid YAML: {error.problem or error.context or 'syntax error'}", line, column) from None
    except yaml.YAMLError as error:
        raise SourceError(f"invalid YAML: {error}") from None
    return documents


def walk(node: Node, limit: int = MAX_NODES) -> Iterator[Node]:
    """Every node below and including ``node``, depth first (iteratively)."""
    stack = [node]
    seen = 0
    while stack and seen < limit:
        current = stack.pop()
        seen += 1
        yield current
        if isinstance(current, Mapping):
            stack.extend(value for _, value in reversed(current.pairs))
        elif isinstance(current, Sequence):
            stack.extend(reversed(current.items))


def anchored_copy(node: Node, anchor: tuple[Position, Position]) -> Node:
    """A copy of ``node`` (from another file) whose findings are reported at ``anchor`` in the linted file."""
    if isinstance(node, Mapping):
        copy: Node = Mapping([(anchored_copy(k, anchor), anchored_copy(v, anchor)) for k, v in node.pairs], node.start, node.end, node.file)  # type: ignore[misc]
    elif isinstance(node, Sequence):
        copy = Sequence([anchored_copy(item, anchor) for item in node.items], node.start, node.end, node.file)
    elif isinstance(node, Scalar):
        copy = Scalar(node.value, node.tag, node.start, node.end, node.file)
    else:  # pragma: no cover - every node is one of the three
        return node
    copy.anchor = anchor
    copy.templated = True
    return copy
