"""What a module's top-level imports bind, and where a fix may add one."""

from __future__ import annotations

import libcst as cst

from gemlint.analysis.module import dotted_name


def module_alias(module: cst.Module, name: str) -> str | None:
    """The local name a top-level ``import torch`` / ``import torch as T`` / ``import torch.nn`` binds
    for the module ``name``, or None."""
    for statement in module.body:
        for small in _smalls(statement):
            if isinstance(small, cst.Import):
                for alias in small.names:
                    imported = dotted_name(alias.name) or ""
                    if alias.asname is not None:
                        if imported == name and isinstance(alias.asname.name, cst.Name):
                            return alias.asname.name.value
                    elif imported == name or imported.startswith(name + "."):
                        return name
    return None


def imported_name(module: cst.Module, qualified: str) -> str | None:
    """The local name of a top-level ``from torch import inference_mode [as X]`` for ``torch.inference_mode``."""
    package, _, attribute = qualified.rpartition(".")
    for statement in module.body:
        for small in _smalls(statement):
            if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                if dotted_name(small.module) != package or isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    if isinstance(alias.name, cst.Name) and alias.name.value == attribute:
                        if alias.asname is None:
                            return attribute
                        if isinstance(alias.asname.name, cst.Name):
                            return alias.asname.name.value
    return None


def import_anchor(module: cst.Module) -> cst.CSTNode | None:
    """The top-level statement before which a new ``import`` goes: the first import that is not
    ``from __future__``; else the statement after the docstring and ``__future__`` imports; None when
    the module has no statement after those (append at the end)."""
    body = list(module.body)
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_future_import(body[index]):
        index += 1
    for statement in body[index:]:
        if any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in _smalls(statement)):
            return statement
    return body[index] if index < len(body) else None


def _smalls(statement: cst.CSTNode):
    if isinstance(statement, cst.SimpleStatementLine):
        return statement.body
    return ()


def _is_docstring(statement: cst.CSTNode) -> bool:
    smalls = _smalls(statement)
    return len(smalls) == 1 and isinstance(smalls[0], cst.Expr) and isinstance(smalls[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _is_future_import(statement: cst.CSTNode) -> bool:
    return any(
        isinstance(small, cst.ImportFrom) and small.module is not None and dotted_name(small.module) == "__future__"
        for small in _smalls(statement)
    )
