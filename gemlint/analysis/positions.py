"""Where nodes stand in the file: LibCST's syntactic positions, computed for the statements that findings are in.

LibCST's ``PositionProvider`` ranges every node of a module in one pass, which on a large module costs twice its
parse and keeps a range for each of its hundreds of thousands of nodes. A file reports a few findings. A node's
range is the one the provider gives it within the module-level statement it stands in, set alone in a module of
the same newline and indentation, moved down by the lines above that statement (a module-level statement starts
at column 0, so the columns stand). The provider runs once per statement asked about; the lines above each come
from one plain code generation of the module, a tenth of the provider's cost.
"""

from __future__ import annotations

import re
from typing import Callable

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, PositionProvider

# The newlines LibCST's position provider counts lines by.
_NEWLINE = re.compile(r"\r\n?|\n")


class StatementPositions:
    """``positions[node]``: the ``CodeRange`` LibCST's ``PositionProvider`` gives ``node``."""

    def __init__(self, module: cst.Module, parent: Callable[[cst.CSTNode], cst.CSTNode | None]) -> None:
        self._module = module
        self._parent = parent
        self._statements: dict[cst.CSTNode, dict[cst.CSTNode, CodeRange]] = {}
        self._lines_above: dict[cst.CSTNode, int] | None = None
        self._lines_of: dict[cst.CSTNode, int] = {}
        self._whole: dict[cst.CSTNode, CodeRange] | None = None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        statement = self._statement_of(node)
        if statement is None:  # the module itself, or a node the index leaves out (whitespace, punctuation)
            return self._whole_module()[node]
        ranges = self._statements.get(statement)
        if ranges is None:
            ranges = self._statements[statement] = self._ranges_in(statement)
        found = ranges[node]
        above = self._line_offsets()[statement]
        return CodeRange(CodePosition(found.start.line + above, found.start.column), CodePosition(found.end.line + above, found.end.column))

    def may_stand_on(self, node: cst.CSTNode, line: int) -> bool:
        """Whether ``node`` may stand on ``line``: False when the module-level statement it is part of (with its
        comments and blank lines above) does not reach that line. Tells without ranging the statement."""
        statement = self._statement_of(node)
        if statement is None:
            return True
        first = self._line_offsets()[statement] + 1
        return first <= line <= first + self._lines_of[statement]  # a line of slack: a last statement may lack its newline

    def get(self, node: cst.CSTNode) -> CodeRange | None:
        try:
            return self[node]
        except KeyError:
            return None

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The module-level statement ``node`` is part of (itself, when it is one)."""
        current, parent = node, self._parent(node)
        while parent is not None and parent is not self._module:
            current, parent = parent, self._parent(parent)
        return current if parent is self._module and current in self._line_offsets() else None

    def _ranges_in(self, statement: cst.CSTNode) -> dict[cst.CSTNode, CodeRange]:
        module = self._module
        last = statement is module.body[-1]
        alone = cst.Module(
            body=[statement],  # type: ignore[list-item]
            header=[],
            footer=module.footer if last else [],
            encoding=module.encoding,
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            # Only the module's last statement may lose its newline; the same node objects are ranged (no copy).
            has_trailing_newline=module.has_trailing_newline if last else True,
        )
        return dict(cst.MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider))

    def _line_offsets(self) -> dict[cst.CSTNode, int]:
        """How many lines stand above each module-level statement (its comments and blank lines are its own)."""
        if self._lines_above is None:
            module = self._module
            above = sum(_lines_in(module.code_for_node(line)) for line in module.header)
            offsets: dict[cst.CSTNode, int] = {}
            for statement in module.body:
                offsets[statement] = above
                self._lines_of[statement] = lines = _lines_in(module.code_for_node(statement))
                above += lines
            self._lines_above = offsets
        return self._lines_above

    def _whole_module(self) -> dict[cst.CSTNode, CodeRange]:
        if self._whole is None:
            self._whole = dict(cst.MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider))
        return self._whole


def _lines_in(code: str) -> int:
    return len(_NEWLINE.findall(code))
