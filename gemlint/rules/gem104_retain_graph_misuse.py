from __future__ import annotations

from functools import cached_property

import libcst as cst

from gemlint.analysis.autograd import BackwardCall, GraphFlow, backward_call
from gemlint.analysis.triage import Triage
from gemlint.diagnostics import Severity
from gemlint.rule import AnalysisRule

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class RetainGraphMisuse(AnalysisRule):
    code = "GEM104"
    name = "retain-graph-misuse"
    severity = Severity.WARNING
    summary = "`retain_graph=True` keeps a graph alive that no later backward pass goes through."
    rationale = (
        "A backward pass frees the tensors its graph saved as soon as it has used them; `retain_graph=True` keeps "
        "them (every activation of the forward pass) for another backward through the same graph. When none "
        "comes, that memory stays held until the loss is dropped, and in a loop that builds a fresh graph every "
        "iteration it is pure overhead that raises peak memory. Summing the losses and calling backward once "
        "computes the same gradients."
    )
    not_flagged = (
        "A retain followed, in the same scope, by another backward or `torch.autograd.grad` through the same graph "
        "(a tensor computed from the same values), and a retain in a loop whose graph was built before the loop "
        "(per-output gradients, `for loss in losses`, a hidden state carried across iterations).",
        "`create_graph=True` (higher-order gradients), and `retain_graph=<run-time value>`.",
        "Backward passes inside comprehensions.",
        "A retain on a tensor of an enclosing scope (a closure that a benchmark timer calls again and again): "
        "its graph was built once, outside, and every call backpropagates through it.",
        "Tests and benchmark or profiling scripts (`tests/`, `test_*.py`, `bench*`, `profil*` in the path), which "
        "time backward through one graph again and again by design.",
    )
    bad = """\
def train_epoch(model, loader, optimizer, criterion):
    for images, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward(retain_graph=True)
        optimizer.step()
"""
    good = """\
def train_epoch(model, loader, optimizer, criterion):
    for images, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
"""
    benchmark = "Bytes held by saved tensors after each iteration of a training loop, with and without retain_graph=True."
    tags = ("performance", "memory", "pytorch", "autograd")
    prefilter = ("retain_graph",)

    @classmethod
    def may_match_syntax(cls, triage: Triage) -> bool:
        return "retain_graph" in triage.facts.keywords


    @cached_property
    def flow(self) -> GraphFlow:
        return GraphFlow(self.analysis)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.analysis.is_production:
            return  # a benchmark times backward through one graph again and again; a test's memory does not matter
        backward = backward_call(self.analysis, node)
        if backward is None or backward.retain_graph is not True or backward.create_graph is True:
            return
        loop = self.flow.innermost_loop(node)
        if isinstance(loop, _COMPREHENSIONS):
            return
        if loop is not None and (backward.root is None or self.flow.graph_from_outside(backward.root, loop)):
            return
        if loop is None and backward.root is not None and self.flow.graph_from_enclosing_scope(backward.root, self.flow.scope_of(node)):
            return
        if self._reused_later(backward, loop):
            return
        if loop is not None:
            message = (
                "`retain_graph=True` inside a loop that builds a fresh graph every iteration, and nothing in the "
                "iteration backpropagates through it again: each graph's saved tensors stay alive for nothing. "
                "Drop it, or sum the losses and call backward once"
            )
        else:
            message = (
                "`retain_graph=True` but no later backward in this scope goes through the same graph: its saved "
                "tensors stay alive for nothing. Drop it, or sum the losses and call backward once"
            )
        self.report(node, message)

    def _reused_later(self, backward: BackwardCall, loop: cst.CSTNode | None) -> bool:
        start = self.range_of(backward.call)[1]
        scope = self.flow.scope_of(backward.call)
        later = [
            other
            for other in self.flow.backward_calls(scope)
            if other.call is not backward.call
            and self.range_of(other.call)[0] >= start
            and (loop is None or self.flow.within(other.call, loop))
        ]
        if not later:
            return False
        if backward.root is None:
            return True
        mine = self.flow.upstream(backward.root)
        for other in later:
            if other.root is None:
                return True
            theirs = self.flow.upstream(other.root)
            if not mine or not theirs or mine & theirs:
                return True
        return False
