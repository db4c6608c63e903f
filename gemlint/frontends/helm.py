"""Helm (Go template) YAML read tolerantly, line for line.

A template is not YAML until Helm renders it, and gemlint never runs Helm. So
each ``{{ ... }}`` directive is rewritten in place, keeping every line where it
was (findings land on the template's own lines):

* a line holding only control directives (``if``, ``with``, ``range``, ``end``,
  ``include`` of a named template, comments) becomes blank; both branches of an
  ``if`` stay, which is what a linter wants;
* ``{{ .Values.a.b }}`` in a value becomes the default from the chart's
  ``values.yaml`` when that is a plain scalar (or the pipeline's ``default``),
  otherwise a placeholder; such scalars are marked *templated*;
* ``{{ toYaml .Values.x | nindent N }}`` (also ``toYaml .`` inside ``with``)
  becomes a marker key that the YAML reader replaces by the ``values.yaml``
  subtree, reported at the directive's line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from gemlint.confinement import read_companion
from gemlint.frontends.yaml_nodes import Mapping, Node, Scalar, Sequence, anchored_copy, compose_documents
from gemlint.text import SourceError, split_lines

INCLUDE_KEY = "__gemlint_helm_values__"
TEMPLATE_KEY = "__gemlint_helm_template__"
_MAX_TEMPLATE_DEPTH = 6
PLACEHOLDER = "gemlint-helm-value"
_DIRECTIVE = re.compile(r"\{\{-?(?P<body>.*?)-?\}\}", re.DOTALL)
_SAFE_SCALAR = re.compile(r"^[A-Za-z0-9_./:+=~@-]+$")
_OPENERS = frozenset({"if", "with", "range", "define", "block"})
_STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$|^`([^`]*)`$')


def chart_root(path: Path) -> Path | None:
    """The chart directory when ``path`` is a template of a Helm chart (``<chart>/templates/**``)."""
    for parent in path.absolute().parents:
        if parent.name == "templates" and os.path.isfile(parent.parent / "Chart.yaml"):
            return parent.parent
    return None


@lru_cache(maxsize=16)
def _values_cached(path: str, mtime_ns: int) -> Mapping | None:
    try:
        text = read_companion(path, path).decode("utf-8-sig")
        documents = compose_documents(text, file=path)
    except (OSError, UnicodeDecodeError, SourceError, RecursionError):
        return None
    return next((d for d in documents if isinstance(d, Mapping)), None)


def chart_values(chart: Path) -> Mapping | None:
    """The chart's values.yaml as positioned nodes (cached while the file is unchanged)."""
    path = chart / "values.yaml"
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return None
    return _values_cached(str(path), mtime)


@lru_cache(maxsize=16)
def _named_templates_cached(chart: str, stamp: tuple) -> dict[str, str]:
    templates: dict[str, str] = {}
    for path, _ in stamp:
        try:
            text = read_companion(path, path).decode("utf-8-sig")
        except (OSError, UnicodeDecodeError):  # unreadable, or a link out of the work tree
            continue
        templates.update(_defines(text))
    return templates


def _defines(text: str) -> dict[str, str]:
    """The bodies of ``{{ define "name" }}...{{ end }}`` blocks (nested blocks balanced)."""
    found: dict[str, str] = {}
    depth, name, start = 0, None, 0
    for directive in _DIRECTIVE.finditer(text):
        words = directive.group("body").strip().split()
        if not words:
            continue
        if words[0] in _OPENERS:
            if words[0] == "define" and depth == 0 and len(words) > 1:
                name, start = _string(words[1]), directive.end()
            depth += 1
        elif words[0] == "end" and depth:
            depth -= 1
            if depth == 0 and name is not None:
                found[name] = text[start : directive.start()]
                name = None
    return found


def chart_named_templates(chart: Path) -> dict[str, str]:
    """Named templates defined in the chart's ``templates/*.tpl`` files (``_helpers.tpl``)."""
    stamp = []
    for path in sorted((chart / "templates").rglob("*.tpl")):
        try:
            stamp.append((str(path), path.stat().st_mtime_ns))
        except OSError:
            continue
    return _named_templates_cached(str(chart), tuple(stamp))


def lookup(values: Mapping | None, path: list[str]) -> Node | None:
    node: Node | None = values
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


@dataclass
class Rendered:
    text: str
    #: rendered (line, start column, end column) of substituted text, 1-based, end exclusive
    substitutions: list[tuple[int, int, int]] = field(default_factory=list)

    def is_substituted(self, node: Node) -> bool:
        for line, start, end in self.substitutions:
            if node.start.line <= line <= node.end.line:
                before_end = (line, start) < (node.end.line, node.end.column)
                after_start = (line, end) > (node.start.line, node.start.column)
                if before_end and after_start:
                    return True
        return False


@dataclass
class _Expression:
    reference: list[str] | None  # a values path, or None
    include: bool  # toYaml: the whole subtree
    indent: int | None
    default: str | None
    template: str | None = None  # include "name" / template "name": a named template


class _Renderer:
    def __init__(self, values: Mapping | None) -> None:
        self.values = values
        self.stack: list[list[str] | None] = []  # the dot of each open block (None: unknown)

    @property
    def dot(self) -> list[str] | None:
        """The values path ``.`` stands for; None at the top (the root object) or where unknown (``range``)."""
        return self.stack[-1] if self.stack else None

    def reference(self, token: str) -> list[str] | None:
        if token.startswith("$.Values") or token.startswith(".Values"):
            rest = token.split(".Values", 1)[1]
            return [part for part in rest.split(".") if part]
        if token.startswith("."):
            base = self.dot
            if base is None:
                return None
            return base + [part for part in token.split(".") if part]
        return None

    def parse(self, body: str) -> _Expression:
        stages = [stage.strip() for stage in _split_pipeline(body)]
        tokens = stages[0].split() if stages else []
        reference, include, default, indent = None, False, None, None
        template = None
        if tokens and tokens[0] in ("include", "template") and len(tokens) > 1:
            template = _string(tokens[1])
        elif tokens and tokens[0] == "toYaml" and len(tokens) > 1:
            reference, include = self.reference(tokens[1]), True
        elif tokens and tokens[0] == "default" and len(tokens) > 2:
            default, reference = _string(tokens[1]), self.reference(tokens[2])
        elif len(tokens) == 1:
            reference = self.reference(tokens[0])
        for stage in stages[1:]:
            words = stage.split()
            if not words:
                continue
            if words[0] in ("nindent", "indent") and len(words) > 1 and words[1].isdigit():
                indent = int(words[1])
            elif words[0] == "default" and len(words) > 1:
                default = _string(words[1])
        return _Expression(reference, include, indent, default, template)

    def control(self, body: str) -> bool:
        """Track block structure; True when the directive is control flow or a comment."""
        stripped = body.strip()
        if stripped.startswith("/*"):
            return True
        words = stripped.split()
        if not words:
            return True
        keyword = words[0]
        if keyword in _OPENERS:
            if keyword == "with" and len(words) > 1:
                self.stack.append(self.reference(words[1]))
            elif keyword in ("range", "define", "block"):
                self.stack.append(None)
            else:
                self.stack.append(self.dot)
            return True
        if keyword == "end":
            if self.stack:
                self.stack.pop()
            return True
        if keyword in ("else", "template") or keyword.startswith("$") and ":=" in stripped:
            return True
        return False

    def scalar(self, expression: _Expression) -> str | None:
        if expression.reference is not None and not expression.include:
            node = lookup(self.values, expression.reference)
            if isinstance(node, Scalar) and node.value != "":
                return node.value if _SAFE_SCALAR.match(node.value) else None
        if expression.default is not None and _SAFE_SCALAR.match(expression.default):
            return expression.default
        return None


def _split_pipeline(body: str) -> list[str]:
    stages, current, quote = [], [], ""
    for char in body:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
        elif char in "\"`":
            quote = char
            current.append(char)
        elif char == "|":
            stages.append("".join(current))
            current = []
        else:
            current.append(char)
    stages.append("".join(current))
    return stages


def _string(token: str) -> str | None:
    match = _STRING.match(token)
    if not match:
        return token if re.match(r"^-?\d+(\.\d+)?$", token) else None
    return match.group(1) if match.group(1) is not None else match.group(2)


def render(text: str, values: Mapping | None) -> Rendered:
    """Rewrite the directives of ``text`` in place (see the module docstring)."""
    renderer = _Renderer(values)
    lines = split_lines(text)
    out: list[str] = []
    result = Rendered("")
    index = 0
    while index < len(lines):
        line = lines[index]
        if "{{" not in line:
            out.append(line)
            index += 1
            continue
        # A directive that spans several lines: blank all of them.
        block = line
        end = index
        while block.count("{{") > block.count("}}") and end + 1 < len(lines):
            end += 1
            block += lines[end]
        if end > index:
            for directive in _DIRECTIVE.finditer(block):
                renderer.control(directive.group("body"))
            out.extend(_newline_of(part) for part in lines[index : end + 1])
            index = end + 1
            continue
        out.append(_render_line(line, renderer, result, len(out) + 1, out))
        index += 1
    result.text = "".join(out)
    return result


def _newline_of(line: str) -> str:
    stripped = line.rstrip("\r\n")
    return line[len(stripped) :]


def _marker(out: list[str], indent: int, key: str, target: str) -> str:
    """A marker line at ``indent``: a sequence item where the text around is a sequence at that indent
    (after ``- item`` lines, or a ``key:`` whose block value starts at the same indent), else a mapping key."""
    deeper = False
    for previous in reversed(out):
        stripped = previous.strip()
        if not stripped or stripped.startswith("#"):
            continue
        level = len(previous) - len(previous.lstrip(" "))
        if level > indent:
            deeper = True
            continue
        if level == indent and (stripped.startswith("- ") or stripped == "-"):
            return " " * indent + f'- {key}: "{target}"'
        if level == indent and stripped.endswith(":") and not deeper:
            return " " * indent + f'- {key}: "{target}"'  # `key:` whose sequence value starts at its own indent
        break
    return " " * indent + f'{key}: "{target}"'


def _render_line(line: str, renderer: _Renderer, result: Rendered, number: int, out: list[str]) -> str:
    newline = _newline_of(line)
    content = line[: len(line) - len(newline)]
    directives = list(_DIRECTIVE.finditer(content))
    rest = _DIRECTIVE.sub("", content)
    if "{{" in rest or "}}" in rest:
        return newline  # unbalanced braces: nothing sensible to keep
    if not rest.strip():
        # A line of directives only: control flow, or a whole block from values.yaml.
        for directive in directives:
            body = directive.group("body")
            if renderer.control(body):
                continue
            expression = renderer.parse(body)
            indent = expression.indent if expression.indent is not None else len(content) - len(content.lstrip())
            if expression.include and expression.reference is not None:
                return _marker(out, indent, INCLUDE_KEY, ".".join(expression.reference)) + newline
            if expression.template is not None:
                return _marker(out, indent, TEMPLATE_KEY, expression.template) + newline
        return newline
    pieces: list[str] = []
    position = 0
    column = 1
    for directive in directives:
        before = content[position : directive.start()]
        pieces.append(before)
        column += len(before)
        body = directive.group("body")
        if renderer.control(body):
            replacement = ""
        else:
            expression = renderer.parse(body)
            if expression.include and expression.reference is not None:
                replacement = '{' + INCLUDE_KEY + ': "' + ".".join(expression.reference) + '"}'
            elif expression.template is not None and expression.indent is not None:
                replacement = '{' + TEMPLATE_KEY + ': "' + expression.template + '"}'  # a block: `key: {{ include "x" . | nindent 4 }}`
            else:
                replacement = renderer.scalar(expression) or PLACEHOLDER
            result.substitutions.append((number, column, column + len(replacement)))
        pieces.append(replacement)
        column += len(replacement)
        position = directive.end()
    pieces.append(content[position:])
    return "".join(pieces) + newline


def include_hook(values: Mapping | None, templates: dict[str, str] | None = None, _depth: int = 0):
    """The YAML reader's hook that replaces include markers with the values.yaml subtree or a named template."""

    def hook(mapping: Mapping) -> Node:
        entry = mapping.entry(INCLUDE_KEY) or mapping.entry(TEMPLATE_KEY)
        if entry is None:
            return mapping
        key, value = entry
        others = [pair for pair in mapping.pairs if pair[0].value not in (INCLUDE_KEY, TEMPLATE_KEY)]
        included: Node | None = None
        if isinstance(value, Scalar) and key.value == INCLUDE_KEY:
            reference = value.value.split(".") if value.value else []
            included = lookup(values, reference) if values is not None else None
        elif isinstance(value, Scalar) and templates and value.value in templates and _depth < _MAX_TEMPLATE_DEPTH:
            included = _render_named(templates[value.value], value.value, values, templates, _depth + 1)
        if included is None:
            mapping.pairs = others
            return mapping
        copy = anchored_copy(included, (key.start, value.end))
        if not others:
            copy.splice = isinstance(copy, Sequence)  # an item marker that stands for several items
            return copy
        if isinstance(copy, Mapping):
            mapping.pairs = others + copy.pairs
        else:
            mapping.pairs = others
        return mapping

    return hook


def _render_named(body: str, name: str, values: Mapping | None, templates: dict[str, str], depth: int) -> Node | None:
    """A named template's body rendered like a template file, as nodes (None when it is not YAML)."""
    rendered = render(body, values)
    try:
        documents = compose_documents(rendered.text, file=f"<helm template {name}>", hook=include_hook(values, templates, depth))
    except (SourceError, RecursionError):
        return None
    return documents[0] if documents else None
