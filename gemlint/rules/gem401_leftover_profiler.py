from __future__ import annotations

import libcst as cst

from gemlint.analysis.module import keyword_arg, literal_value, terminal_name
from gemlint.analysis.scopes import references_of
from gemlint.analysis.triage import Production, Spelled
from gemlint.diagnostics import Severity
from gemlint.rule import AnalysisRule

# Profilers that build a profiler object (a context manager) without starting it: a factory may return one.
_PROFILER_CONTEXTS = frozenset(
    {
        "torch.profiler.profile",
        "torch.profiler.profiler.profile",
        "torch.autograd.profiler.profile",
        "torch.autograd.profiler_legacy.profile",
        "torch.autograd.profiler.emit_nvtx",
        "torch.cuda.profiler.profile",
        "jax.profiler.trace",
    }
)
# Every profiler: those above start when entered, these when called.
_PROFILERS = _PROFILER_CONTEXTS | frozenset(
    {
        "torch.cuda.profiler.start",
        "jax.profiler.start_trace",
        "cProfile.run",
        "cProfile.runctx",
        "profile.run",
        "profile.runctx",
    }
)
_STARTS = frozenset({"start", "__enter__"})
_PROFILE_OBJECTS = frozenset({"cProfile.Profile", "profile.Profile"})
_PROFILE_MODULES = frozenset(name.partition(".")[0] for name in _PROFILE_OBJECTS)
_PROFILE_OBJECT_STARTS = frozenset({"enable", "runcall", "runctx", "run"})
_CANDIDATE_NAMES = frozenset(name.rsplit(".", 1)[1] for name in _PROFILERS) | _PROFILE_OBJECT_STARTS
# A file without one of these calls cannot match: a profile object's .enable()/.run() needs its Profile(...).
_PROFILER_NAMES = frozenset(name.rsplit(".", 1)[1] for name in _PROFILERS | _PROFILE_OBJECTS)


class LeftoverProfiler(AnalysisRule):
    code = "GEM401"
    name = "leftover-profiler"
    severity = Severity.WARNING
    summary = "A profiler is switched on unconditionally in production code."
    rationale = (
        "Profilers record every operator (with shapes and stacks when asked), synchronise devices and keep "
        "the trace in host memory: every request pays the overhead and the process grows until the trace is "
        "dropped. A profiler belongs behind a flag (`enabled=args.profile`) or in a benchmark script."
    )
    not_flagged = (
        "Profilers behind a flag: under an `if` on a run-time value, chosen by a conditional expression "
        "(`profile(...) if args.profile else nullcontext()`), with `enabled=<non-literal>` or `enabled=False`, "
        "or in a function or class whose name says debug/profile/bench (a trainer's `TorchProfilerCallback`), and in "
        "functions that measure or check rather than serve (named for a test, a check or a latency: `test_model_latency`, `CHECK_CUDA`, `measure_throughput`; or comparing two implementations' outputs, as a kernel's harness does).",
        "`torch.profiler.record_function` and NVTX ranges: annotations that cost nothing without a profiler.",
        "Tests (`tests/`, `test_*.py`, `*_test.py`, `conftest.py`) and benchmark or profiling scripts "
        "(`bench*`, `profil*` in the path, or a word of the file name that starts so: `run_benchmark.py`, `memory_profile.py`), and the `__main__` block of a module other files of the project use "
        "(its author's benchmark, run by hand: importing the module never runs it).",
        "Profiler objects that do not start where they are built: a factory's (`return torch.profiler.profile(...)`), "
        "whose caller decides, and one bound to a name that is entered (`with prof:`, `prof.__enter__()`) or started "
        "(`prof.start()`) only behind a flag, or nowhere in the file.",
    )
    bad = """\
import torch

def predict(model, batch):
    with torch.profiler.profile(record_shapes=True) as prof:
        return model(batch)
"""
    good = """\
import contextlib
import os

import torch

PROFILE = os.environ.get("PROFILE") == "1"

def predict(model, batch):
    with torch.profiler.profile(record_shapes=True) if PROFILE else contextlib.nullcontext():
        return model(batch)
"""
    benchmark = "Latency of a forward pass with and without an active `torch.profiler.profile(record_shapes=True)`."
    tags = ("performance", "debugging", "pytorch")
    notebooks = False
    notebooks_reason = (
        "Profiling is what notebooks are for; the rule is about production code, where a profiler left on slows "
        "every request."
    )
    prefilter = ("profile", "emit_nvtx", "start_trace", "jax.profiler")

    # Only production code: tests, benchmarks and profiling scripts profile on purpose.
    syntax_gate = Production() & Spelled("calls", _PROFILER_NAMES)

    def visit_Call(self, node: cst.Call) -> None:
        if terminal_name(node.func) not in _CANDIDATE_NAMES:
            return
        names = self.analysis.names_among(node.func, _PROFILERS)
        if names:
            enabled = keyword_arg(node, "enabled")
            if enabled is not None and literal_value(enabled.value) is not True:
                return  # enabled=False, or enabled=<flag>
            if names & _PROFILER_CONTEXTS and self._started_elsewhere(node):
                return
            profiler = sorted(names & _PROFILERS)[0]
            self._report(node, f"`{profiler}` profiles every call in production code; put it behind a flag")
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PROFILE_OBJECT_STARTS and self.analysis.may_name_from(_PROFILE_MODULES):
            if any(self._is_profile_object(value) for value in self.analysis.bound_values(func.value)):
                self._report(node, f"a `cProfile.Profile` is started with `.{func.attr.value}()` in production code; put it behind a flag")

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if isinstance(node.item, cst.Call) and terminal_name(node.item.func) == "Profile" and self._is_profile_object(node.item):
            self._report(node.item, "a `cProfile.Profile` profiles this block in production code; put it behind a flag")

    def _started_elsewhere(self, node: cst.Call) -> bool:
        """The profiler object ``node`` builds does not profile here unless started: a factory returns it for its
        caller to enter, and one bound to a name profiles only where that name is entered or started, so it is
        judged there (every start behind a flag, or none in this file: not reported)."""
        parent = self.analysis.parent(node)
        if isinstance(parent, cst.Return):
            return self.analysis.enclosing_function(node) is not None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
        elif isinstance(parent, cst.AnnAssign):
            target = parent.target
        else:
            return False
        if not isinstance(target, cst.Name):
            return False
        for assignment in self.analysis.assignments_of(target):
            for access in references_of(assignment):
                use = self.analysis.parent(access.node)
                if isinstance(use, cst.WithItem):
                    start = self.analysis.parent(use)
                elif isinstance(use, cst.Attribute) and use.attr.value in _STARTS:
                    start = use
                else:
                    continue
                if self.analysis.debugging_exemption(start) is None:
                    return False  # started here, unconditionally: report the profiler where it is built
        return True

    def _is_profile_object(self, expression: cst.BaseExpression) -> bool:
        return isinstance(expression, cst.Call) and self.analysis.resolves_to(expression.func, _PROFILE_OBJECTS)

    def _report(self, node: cst.CSTNode, message: str) -> None:
        if self.analysis.debugging_exemption(node) is None:
            self.report(node, message)
