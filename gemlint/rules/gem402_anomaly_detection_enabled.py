from __future__ import annotations

import libcst as cst

from gemlint.analysis.module import argument, literal_value, terminal_name
from gemlint.analysis.triage import Production, Spelled
from gemlint.diagnostics import Severity
from gemlint.rule import AnalysisRule

_SET_DETECT = frozenset({"torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly"})
_DETECT = frozenset({"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"})
_CANDIDATES = frozenset({"set_detect_anomaly", "detect_anomaly"})


class AnomalyDetectionEnabled(AnalysisRule):
    code = "GEM402"
    name = "anomaly-detection-enabled"
    severity = Severity.WARNING
    summary = "Autograd anomaly detection is switched on unconditionally in production code."
    rationale = (
        "Anomaly mode records a Python stack trace for every autograd node and checks every backward "
        "output for NaN: it is a debugging aid that slows every step several-fold and must not ship."
    )
    not_flagged = (
        "`set_detect_anomaly(False)` and `set_detect_anomaly(<flag>)` (the flag decides).",
        "Anomaly detection behind a flag: under an `if` on a run-time value, in a conditional expression, or in "
        "a function or class whose name says debug/profile/bench, and in "
        "functions that measure or check rather than serve (named for a test, a check or a latency: `test_model_latency`, `CHECK_CUDA`, `measure_throughput`; or comparing two implementations' outputs, as a kernel's harness does).",
        "Tests, benchmark and profiling scripts, and the `__main__` block of a module other files of the project "
        "use (its author's check, run by hand).",
    )
    bad = """\
import torch

torch.autograd.set_detect_anomaly(True)
"""
    good = """\
import os

import torch

torch.autograd.set_detect_anomaly(os.environ.get("DEBUG_AUTOGRAD") == "1")
"""
    benchmark = "Latency of forward and backward with anomaly detection on and off."
    tags = ("performance", "debugging", "pytorch")
    notebooks = False
    notebooks_reason = "Anomaly detection in a notebook is debugging on purpose; its cost matters in production code."
    prefilter = ("anomaly",)

    # Only production code: tests, benchmarks and profiling scripts debug on purpose.
    syntax_gate = Production() & (Spelled("calls", _CANDIDATES) | Spelled("decorators", _CANDIDATES))

    def visit_Call(self, node: cst.Call) -> None:
        if terminal_name(node.func) not in _CANDIDATES:
            return
        if self.analysis.resolves_to(node.func, _SET_DETECT):
            mode = argument(node, 0, "mode")
            if mode is not None and literal_value(mode.value) is True:
                self._report(node, "`torch.autograd.set_detect_anomaly(True)` slows every autograd call; remove it or put it behind a flag")
        elif self.analysis.resolves_to(node.func, _DETECT):
            self._report(node, "`torch.autograd.detect_anomaly()` slows every autograd call in this block; remove it or put it behind a flag")

    def visit_Decorator(self, node: cst.Decorator) -> None:
        decorator = node.decorator
        if terminal_name(decorator) == "detect_anomaly" and self.analysis.resolves_to(decorator, _DETECT):
            self._report(node.decorator, "`@torch.autograd.detect_anomaly` slows every call of this function; remove it or put it behind a flag")

    def _report(self, node: cst.CSTNode, message: str) -> None:
        if self.analysis.debugging_exemption(node) is None:
            self.report(node, message)
