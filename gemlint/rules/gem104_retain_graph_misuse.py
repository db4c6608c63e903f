from __future__ import annotations

import libcst as cst

from gemlint.analysis.autograd import backward_call
from gemlint.analysis.autograd_graphs import AutogradGraphs
from gemlint.analysis.triage import Spelled
from gemlint.diagnostics import RelatedLocation, Severity, Span
from gemlint.rule import AnalysisRule

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_SHOWN_CALLERS = 3


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
        "computes the same gradients. Whether a later backward can go through the retained graph is decided by "
        "data flow: which forward computations each tensor's graph comes from, what shares them and what breaks "
        "the link (`.detach()`, `torch.no_grad()`, `.item()`, `.numpy()`, recomputing the forward); the elements "
        "of a list appended once per step, each from its own forward, carry graphs of their own. A graph the "
        "function returns is judged by its callers, through the project: when every call of the function is known "
        "and none backpropagates the result (or a graph it handed in) again, the retain is useless too. A retain "
        "followed by a backward through a separate graph, or repeated in a loop that rebuilds the graph, is a "
        "warning (it overlaps the next forward and raises peak memory); the last backward of a function that "
        "runs once is a note. A tensor parameter may carry a graph the caller built, shared by every backward "
        "that reaches it; it is data (a batch) when every call of the function in the project hands it one (a "
        "loader's item, a constant, a detached tensor). Where the calls are not all known, a parameter the "
        "function only hands to modules as an input (`loss = mse(net(x), y)`) is taken for data: such findings "
        "say so and are reported with `strict` (precision medium)."
    )
    not_flagged = (
        "A later backward or `torch.autograd.grad` on some path (later in the step, after the loop, or in the next "
        "iteration) whose root shares a tensor with the retained one: a generator loss built on the "
        "discriminator's output for non-detached fakes, a policy loss times a non-detached advantage, a hidden "
        "state or running sum carried across iterations, one forward before a loop of per-output gradients, a list "
        "element picked again by the next epoch's loop or linked to its neighbours by a hidden state.",
        "A graph that leaves the function: yielded, stored on `self`, a parameter or a global, captured by a nested "
        "function, handed to a call whose result is dropped (it may keep or backpropagate it; logging calls such as "
        "`add_scalar`, and project functions whose body only reads it, excepted), or returned, unless every call "
        "of the function in the project is known and none backpropagates the result again (a function without a "
        "caller in the project, one passed around by name, or a method a framework base class may call keeps the "
        "benefit of the doubt). A graph the function did not build (a loss passed in, a tensor stored on `self` by "
        "another method, a closure's variable) is left alone for the same reason. So is a parameter that a call "
        "in the project hands a tensor with a graph, or that the function does more with than hand to a module "
        "(arithmetic, storing, a closure).",
        "`create_graph=True` (gradient penalties, Hessian-vector products, higher-order gradients), and "
        "`retain_graph=<run-time value>`.",
        "Backward passes inside comprehensions.",
        "Tests and benchmark or profiling scripts (`tests/`, `test_*.py`, `bench*`, `profil*` in the path, or a word of the file name that starts so: `run_benchmark.py`, `memory_profile.py`), which "
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
    benchmark = (
        "Peak bytes saved for backward over a training loop, with and without `retain_graph=True`: the retained "
        "graph is still alive while the next step's forward saves its own."
    )
    tags = ("performance", "memory", "pytorch", "autograd")
    notebooks = True
    notebooks_reason = (
        "A retained graph keeps its saved tensors alive in a notebook's long-lived kernel as anywhere; the rule "
        "judges backward passes inside functions, which a re-run cell runs afresh, so a cell's top-level "
        "`backward(retain_graph=True)` kept for re-running the cell is never reported."
    )
    prefilter = ("retain_graph",)
    cross_file = True  # a returned graph is judged by the callers in other modules, a callee there by its body

    syntax_gate = Spelled("keywords", {"retain_graph"})

    @property
    def graphs(self) -> AutogradGraphs:
        return self.analysis.autograd_graphs

    def visit_Call(self, node: cst.Call) -> None:
        if not self.analysis.is_production:
            return  # a benchmark times backward through one graph again and again; a test's memory does not matter
        backward = backward_call(self.analysis, node)
        if backward is None or backward.retain_graph is not True or backward.create_graph not in (None, False):
            return
        if any(isinstance(a, _COMPREHENSIONS) for a in self.analysis.ancestors(node)):
            return
        flow = self.graphs.function(self.graphs.scope_of(node))
        event = flow.backwards.get(node)
        if event is None:
            return
        verdict, evidence = flow.reuses(event)
        data, proven = frozenset(), True
        if verdict == "reused":
            # Shared only through a parameter? Not when that parameter is data (a batch, not a graph).
            data, proven = self.graphs.data_parameters(self.graphs.scope_of(node))
            verdict, evidence = flow.reuses(event, data) if data else (verdict, evidence)
            data = data if verdict == "free" else frozenset()
        if verdict != "free":
            return
        data = _shared_data(event, data)
        if data and not proven and not getattr(self.context.config, "strict", False):
            return  # a guess that the parameters are data: reported with ``strict`` only
        loop = flow.innermost_loop(node)
        if loop is not None and evidence is None or loop is not None and not self.graphs.within(evidence.node, loop):
            if any(origin.picked is loop for origin in event.origins):
                self._report(
                    data,
                    proven,
                    node,
                    "`retain_graph=True` but each iteration backpropagates through a different element of a list "
                    "whose elements have graphs of their own, and nothing later in the iteration goes through this "
                    "one: its saved tensors stay alive for nothing. Drop it, or sum the losses and call backward once",
                    related=self._related(loop, "the loop that picks a different element every iteration"),
                )
                return
            self._report(
                data,
                proven,
                node,
                "`retain_graph=True` but the graph is rebuilt every iteration and nothing later in the iteration "
                "backpropagates through this one: its saved tensors stay alive for nothing. Drop it, or sum the "
                "losses and call backward once",
                related=self._related(loop, "the loop that rebuilds the graph"),
            )
            return
        if evidence is None:
            scope = self.graphs.scope_of(node)
            callers = self.graphs.result_callers(scope) if flow.returns_retained(event) else None
            if callers:
                self._report(
                    data,
                    proven,
                    node,
                    f"`retain_graph=True` but no later backward uses this graph: `{scope.name.value}` returns it, and "
                    f"none of its callers ({_count(len(callers), 'call')} in the project) backpropagates the result "
                    "again, so its saved tensors stay alive for nothing. Drop it",
                    severity=Severity.NOTE,
                    related=tuple(_caller_location(analysis, call) for analysis, call in callers[:_SHOWN_CALLERS]),
                )
                return
            self._report(
                data,
                proven,
                node,
                "`retain_graph=True` but no later backward in this step uses this graph: it is the last backward "
                "pass here and its saved tensors stay alive for nothing. Drop it",
                severity=Severity.NOTE,
            )
            return
        self._report(
            data,
            proven,
            node,
            "`retain_graph=True` but no later backward in this step uses this graph: the next backward goes "
            "through a graph of its own, so this one's saved tensors stay alive for nothing. Drop it, or sum the "
            "losses and call backward once",
            related=self._related(evidence.node, "the next backward, through a separate graph"),
        )

    def _report(self, data: frozenset[str], proven: bool, node: cst.CSTNode, message: str, **kwargs) -> None:
        """A finding; where the verdict rests on parameters taken for data, the message says which and why, and
        a guess (no project call to prove it) is reported at medium precision (``--strict``)."""
        if data:
            names = ", ".join(f"`{name}`" for name in sorted(data))
            why = "every call of the function in the project passes data" if proven else "the function only hands them to calls as inputs"
            message = f"{message} ({names} carry no graph: {why})"
        self.report(node, message, precision=None if proven or not data else "medium", **kwargs)

    def _related(self, node: cst.CSTNode, message: str) -> tuple[RelatedLocation, ...]:
        start, end = self.range_of(node)
        if isinstance(node, (cst.For, cst.While)):
            end = self.range_of(node.iter if isinstance(node, cst.For) else node.test)[1]  # the loop's header
        return (RelatedLocation(Span(self.context.display_path, start.line, start.column, end.line, end.column), message),)


def _shared_data(event, data: frozenset[str]) -> frozenset[str]:
    """The data parameters the retained graph's root reaches: those the verdict rests on."""
    return frozenset(o.node.name.value for o in event.origins if o.kind == "caller" and o.node.name.value in data)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _caller_location(analysis, call: cst.Call) -> RelatedLocation:
    """A call of the function (in this file or another), which does not backpropagate what it returns."""
    span = analysis.positions[call]
    return RelatedLocation(
        Span(analysis.context.display_path, span.start.line, span.start.column + 1, span.end.line, span.end.column + 1),
        "a caller, which does not backpropagate the result again",
    )
