"""Blocks of statements whose only effect is printing what they compute (an author's look at the results)."""

from __future__ import annotations

from collections import Counter

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.syntax import bound_names, terminal_name

#: Calls made for the output they print or log: ``print``, ``pprint``, ``logger.info``, ``console.print``.
_PRINTING = frozenset({"print", "pprint", "debug", "info", "warning", "warn", "error", "critical", "exception", "log"})
#: Calls that set up what the block then runs, with no effect outside the process: loading weights into a model,
#: moving it or switching its mode, seeding the random generators.
_SETTING_UP = fw.MODULE_SELF_METHODS | frozenset({"load_state_dict", "manual_seed", "seed", "set_seed", "seed_everything"})
#: Statements with no effect beyond the names they bind.
_INERT = (cst.Pass, cst.Assert, cst.Import, cst.ImportFrom, cst.Del, cst.Global, cst.Nonlocal)


def only_prints(body: cst.BaseSuite) -> bool:
    """``body`` prints or logs what it computes and does nothing else for its effect: every call made for its
    effect prints or logs (or sets up a model or the random seeds), at least one prints, and every name it binds
    is read in it (a result bound and never read is a run kept for its side effects). Definitions, returns and
    ``await`` make it something else."""
    statements = list(_statements(body))
    if any(statement is None for statement in statements):
        return False
    smalls = [small for statement in statements for small in statement]  # type: ignore[union-attr]
    names = _NameCounter()
    body.visit(names)
    bindings = Counter(name for small in smalls if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) for name in _bound_names(small))
    printed = False
    for small in smalls:
        if isinstance(small, cst.Expr):
            value = small.value
            if isinstance(value, cst.Call):
                called = terminal_name(value.func)
                if called in _PRINTING:
                    printed = True
                elif called not in _SETTING_UP:
                    return False
            elif isinstance(value, cst.Await):
                return False
        elif isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            bound = _bound_names(small)
            if bound and not any(names.counts[name] > bindings[name] for name in bound):
                return False
        elif not isinstance(small, _INERT):
            return False
    return printed


def _statements(body: cst.BaseSuite):
    """The small statements of ``body``, one list per simple statement line, through compound statements; None
    for a definition or a statement that leaves the block (``return``, ``raise``, ``break``)."""
    lines = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for line in lines:
        if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if any(isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue)) for small in line.body):
                yield None
                return
            yield list(line.body)
        elif isinstance(line, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
            for suite in _suites(line):
                yield from _statements(suite)
        else:
            yield None  # a def, a class, a match: not a look at results
            return


def _suites(statement: cst.BaseCompoundStatement) -> list[cst.BaseSuite]:
    suites = [statement.body]
    orelse = getattr(statement, "orelse", None)
    while orelse is not None:
        suites.append(orelse.body)
        orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
    if isinstance(statement, cst.Try):
        suites.extend(handler.body for handler in statement.handlers)
        if statement.finalbody is not None:
            suites.append(statement.finalbody.body)
    return suites


def _bound_names(small: cst.Assign | cst.AnnAssign | cst.AugAssign) -> list[str]:
    """The plain names the statement binds (``_`` and attributes or items left out)."""
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    return [name for target in targets for name in bound_names(target) if name != "_"]


class _NameCounter(cst.CSTVisitor):
    """How many times each name is written in the block, bound or read."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def visit_Name(self, node: cst.Name) -> bool:
        self.counts[node.value] += 1
        return False
