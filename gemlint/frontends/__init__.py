"""Front-ends for the languages other than Python (Python is parsed by LibCST: :mod:`.python_module`).

A front-end is a function ``parse(source: SourceFile, text: str) -> document``
that raises :class:`gemlint.text.SourceError` for a file it cannot read; the
document is handed to every :class:`gemlint.rule.DocumentRule` of that
language. Front-ends are imported lazily, so a run that lints only Python never
loads tree-sitter or a YAML parser. Register a front-end in ``_FRONTENDS``.

A Jupyter notebook is Python once its front-end (:mod:`gemlint.frontends.notebook`) has made one
module of its code cells: the engine lints that module with the Python rules, not a document.
"""

from __future__ import annotations

import importlib
from typing import Callable

from gemlint.languages import Language

# language -> "module:function"
_FRONTENDS: dict[Language, str] = {
    Language.NATIVE: "gemlint.frontends.native:parse",
    Language.YAML: "gemlint.frontends.yaml_file:parse",
    Language.DOCKERFILE: "gemlint.frontends.dockerfile_file:parse",
    Language.TRITON: "gemlint.frontends.triton_config:parse",
}


def frontend_for(language: Language) -> Callable | None:
    target = _FRONTENDS.get(language)
    if target is None:
        return None
    module_name, _, function = target.partition(":")
    return getattr(importlib.import_module(module_name), function)
