"""The YAML front-end: Kubernetes manifests, Helm templates and docker-compose files as positioned node trees."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gemlint.frontends import helm
from gemlint.frontends.yaml_nodes import Mapping, Node, Scalar, compose_documents, walk
from gemlint.text import SourceError

_DOCUMENT_MARKER = re.compile(r"^---(?:\s|$)", re.MULTILINE)
#: OpenCV's FileStorage dialect (``%YAML:1.0``, a directive YAML itself spells ``%YAML 1.0``): a file for
#: ``cv::FileStorage`` and the tools built on it (tracker configs), never a manifest.
_OPENCV_STORAGE = re.compile(r"\A(?:\ufeff)?%YAML:")
# Protocol-buffer text format under a YAML name (DeepStream's nvinferserver configs): a message opened by a field
# name and a brace with no colon between them, which YAML never writes.
_TEXT_PROTO_MESSAGE = re.compile(r"^[ \t]*[A-Za-z_]\w*[ \t]*\{[ \t\r]*(?:#.*)?$", re.MULTILINE)
# Directives of the tools that render a file into YAML (Helm's and Jinja's `{{ }}` and `{% %}`, Terraform's
# `%{ }`): such a file is a template, read for what can be read.
_TEMPLATE_MARKERS = ("{{", "{%", "%{")
# A CustomResourceDefinition declares a schema (thousands of lines that name `livenessProbe`, `env`,
# `resources` as fields), never a workload: no rule reads one, so such documents are not composed.
_DEFINITION = re.compile(r"^kind:[ \t]*([\"']?)CustomResourceDefinition\1[ \t]*(?:#.*)?$", re.MULTILINE)
_COMPOSE_NAME = re.compile(r"^(docker-)?compose([.-][^/]*)?\.ya?ml$", re.IGNORECASE)


@dataclass
class YamlFile:
    path: Path
    documents: list[Node]
    #: the chart directory when the file is a Helm template
    chart: Path | None = None
    #: the text had template directives (Helm or another templating tool)
    templated: bool = False

    @property
    def is_compose(self) -> bool:
        """A docker-compose file: by name, or a top-level ``services`` table and no Kubernetes ``kind``."""
        if _COMPOSE_NAME.match(self.path.name):
            return True
        return any(
            isinstance(doc, Mapping) and isinstance(doc.get("services"), Mapping) and doc.get("kind") is None
            for doc in self.documents
        )


def parse(source, text: str) -> YamlFile:
    """Front-end entry point (see :mod:`gemlint.frontends`)."""
    path = Path(source.path)
    if _OPENCV_STORAGE.match(text):
        return YamlFile(path, [])
    chart = helm.chart_root(path)
    if chart is not None:
        return _template(path, text, chart, helm.chart_values(chart), helm.chart_named_templates(chart))
    try:
        return YamlFile(path, _documents(text))
    except SourceError:
        if _TEXT_PROTO_MESSAGE.search(text):
            return YamlFile(path, [])  # another format under a YAML name: nothing here for gemlint to read
        if not any(marker in text for marker in _TEMPLATE_MARKERS):
            raise
    # Templated YAML outside a chart (Jinja, gomplate, ...): read what can be read.
    return _template(path, text, None, None)


def _chunks(text: str) -> list[tuple[int, str]]:
    """The documents of ``text`` as (lines above it, its text); a ``---`` line at column 0 always starts one."""
    starts = [0] + [match.start() for match in _DOCUMENT_MARKER.finditer(text) if match.start()]
    starts.append(len(text))
    chunks, line = [], 0
    for begin, end in zip(starts, starts[1:]):
        if end > begin:
            chunks.append((line, text[begin:end]))
            line += text.count("\n", begin, end)
    return chunks


def _documents(text: str) -> list[Node]:
    if not _DEFINITION.search(text):
        return compose_documents(text)
    documents: list[Node] = []
    for begin, chunk in _chunks(text):
        if not _DEFINITION.search(chunk):
            documents.extend(compose_documents(chunk, line_offset=begin))
    return documents


def _template(path: Path, text: str, chart: Path | None, values: Mapping | None, templates: dict[str, str] | None = None) -> YamlFile:
    rendered = helm.render(text, values)
    hook = helm.include_hook(values, templates)
    documents: list[Node] = []
    for begin, chunk in _chunks(rendered.text):
        if _DEFINITION.search(chunk):
            continue
        # Each document is read on its own so that one broken document loses only itself.
        try:
            parsed = compose_documents(chunk, hook=hook, line_offset=begin)
        except (SourceError, RecursionError):
            continue
        for document in parsed:
            _mark_substitutions(document, rendered)
        documents.extend(parsed)
    return YamlFile(path, documents, chart=chart, templated=True)


def _mark_substitutions(root: Node, rendered: helm.Rendered) -> None:
    if not rendered.substitutions:
        return
    for node in walk(root):
        if isinstance(node, Scalar) and node.file is None and rendered.is_substituted(node):
            node.templated = True
