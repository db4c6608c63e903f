"""The YAML front-end: Kubernetes manifests, Helm templates and docker-compose files as positioned node trees."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gemlint.frontends import helm
from gemlint.frontends.yaml_nodes import Mapping, Node, Scalar, compose_documents, walk
from gemlint.text import SourceError

_DOCUMENT_START = re.compile(r"^---(?:\s|$)")
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
    chart = helm.chart_root(path)
    if chart is not None:
        return _template(path, text, chart, helm.chart_values(chart), helm.chart_named_templates(chart))
    try:
        return YamlFile(path, compose_documents(text))
    except SourceError:
        if "{{" not in text:
            raise
    # Templated YAML outside a chart (Jinja, gomplate, ...): read what can be read.
    return _template(path, text, None, None)


def _template(path: Path, text: str, chart: Path | None, values: Mapping | None, templates: dict[str, str] | None = None) -> YamlFile:
    rendered = helm.render(text, values)
    hook = helm.include_hook(values, templates)
    documents: list[Node] = []
    lines = rendered.text.splitlines(keepends=True)
    starts = [0] + [index for index, line in enumerate(lines) if _DOCUMENT_START.match(line)]
    starts.append(len(lines))
    for begin, end in zip(starts, starts[1:]):
        if end <= begin:
            continue
        # Padding keeps line numbers; each document is read on its own so one broken document loses only itself.
        chunk = "\n" * begin + "".join(lines[begin:end])
        try:
            parsed = compose_documents(chunk, hook=hook)
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
