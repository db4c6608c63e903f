from __future__ import annotations

import libcst as cst

from gemlint.analysis.environment import env_writes
from gemlint.analysis.module import NOT_LITERAL, argument, literal_value, positional_arg, terminal_name
from gemlint.analysis.triage import Production, Spelled, WritesEnvironment
from gemlint.diagnostics import Severity
from gemlint.rule import AnalysisRule

_GET_LOGGER = frozenset({"logging.getLogger"})
_VERBOSE_LEVELS = frozenset({"logging.DEBUG", "logging.INFO", "logging.NOTSET"})
_SET_LOGS = frozenset({"torch._logging.set_logs", "torch._logging._internal.set_logs"})
# Config switches that print per-compile or per-step debugging output.
_DEBUG_SWITCHES = frozenset(
    {
        "torch._dynamo.config.verbose",
        "torch._dynamo.config.log_level",
        "torch._dynamo.config.output_code",
        "torch._inductor.config.debug",
        "torch._inductor.config.trace.enabled",
    }
)
_SWITCH_NAMES = frozenset(name.rsplit(".", 1)[1] for name in _DEBUG_SWITCHES)
_NCCL_VERBOSE = frozenset({"INFO", "TRACE"})
_DEBUG_VARIABLES = ("TORCH_LOGS", "TORCH_COMPILE_DEBUG", "NCCL_DEBUG")


class VerboseFrameworkLogging(AnalysisRule):
    code = "GEM403"
    name = "verbose-framework-logging"
    severity = Severity.WARNING
    summary = "PyTorch (or NCCL) debug logging is switched on unconditionally in production code."
    rationale = (
        "Debug-level torch logs, `TORCH_LOGS` artifacts and `NCCL_DEBUG=INFO` format and write text on "
        "hot paths (every compile, guard failure or collective): latency goes up and log volume, often "
        "billed per byte, explodes."
    )
    not_flagged = (
        "Levels of WARNING and above; loggers of other libraries; `NCCL_DEBUG=WARN`.",
        "Values that come from configuration at run time (`os.environ['TORCH_LOGS'] = args.logs`).",
        "Logging behind a flag, in tests, benchmark and profiling scripts, in the `__main__` block of a module "
        "other files of the project use (its author's check, run by hand), and in "
        "functions that measure or check rather than serve (named for a test, a check or a latency: `test_model_latency`, `CHECK_CUDA`, `measure_throughput`; or comparing two implementations' outputs, as a kernel's harness does).",
    )
    bad = """\
import logging
import os

import torch

os.environ["TORCH_LOGS"] = "+dynamo,guards,recompiles"
logging.getLogger("torch._dynamo").setLevel(logging.DEBUG)
torch._dynamo.config.verbose = True
"""
    good = """\
import logging
import os

import torch

logging.getLogger("torch._dynamo").setLevel(logging.WARNING)
if os.environ.get("DEBUG_COMPILE"):
    torch._dynamo.config.verbose = True
"""
    benchmark = "Latency of a compiled model with debug logging on and off."
    tags = ("performance", "debugging", "pytorch")
    notebooks = False
    notebooks_reason = (
        "Verbose framework logging in a notebook is debugging on purpose; its cost matters in production code."
    )
    prefilter = ("setLevel", "set_logs", "TORCH_LOGS", "TORCH_COMPILE_DEBUG", "NCCL_DEBUG", "_dynamo", "_inductor")

    # Only production code: tests, benchmarks and profiling scripts log verbosely on purpose.
    syntax_gate = Production() & (Spelled("calls", {"setLevel", "set_logs"}) | Spelled("assigned", _SWITCH_NAMES) | WritesEnvironment(_DEBUG_VARIABLES))

    def visit_Assign(self, node: cst.Assign) -> None:
        for write in env_writes(self.analysis, node):
            self._env(write)
        for target in node.targets:
            if terminal_name(target.target) not in _SWITCH_NAMES:
                continue
            switch = self.analysis.names_among(target.target, _DEBUG_SWITCHES)
            if switch and self._is_verbose_value(node.value):
                self._report(node, f"`{sorted(switch)[0]}` is switched on; remove it or put it behind a flag")

    def visit_Call(self, node: cst.Call) -> None:
        for write in env_writes(self.analysis, node):
            self._env(write)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "setLevel":
            level = argument(node, 0, "level")
            # the level first: most loggers are set to INFO, and naming the logger's origin asks for the scopes
            logger = self._torch_logger(func.value) if level is not None and self._is_verbose_value(level.value) else None
            if logger:
                self._report(node, f"logger `{logger}` is set to a debug level; use WARNING in production or put it behind a flag")
        elif terminal_name(func) == "set_logs" and self.analysis.resolves_to(func, _SET_LOGS):
            verbose = [arg.keyword.value for arg in node.args if arg.keyword and self._is_verbose_value(arg.value)]
            if verbose:
                self._report(node, f"`torch._logging.set_logs` enables debug output ({', '.join(verbose)}); remove it or put it behind a flag")

    def _env(self, write) -> None:
        value = write.value
        if not isinstance(value, str) or not value.strip():
            return  # set from a variable (the flag decides) or cleared
        if write.variable in ("TORCH_LOGS", "TORCH_COMPILE_DEBUG") and value not in ("0",):
            self._report(write.node, f"`{write.variable}={value}` turns on PyTorch debug logging; remove it or put it behind a flag")
        elif write.variable == "NCCL_DEBUG" and value.upper() in _NCCL_VERBOSE:
            self._report(write.node, f"`NCCL_DEBUG={value}` logs every collective; use WARN in production")

    def _torch_logger(self, expression: cst.BaseExpression) -> str | None:
        for value in self.analysis.bound_values(expression):
            if isinstance(value, cst.Call) and self.analysis.resolves_to(value.func, _GET_LOGGER):
                name_arg = positional_arg(value, 0)
                name = literal_value(name_arg.value) if name_arg is not None else None
                if isinstance(name, str) and (name == "torch" or name.startswith("torch.")):
                    return name
        return None

    def _is_verbose_value(self, expression: cst.BaseExpression) -> bool:
        value = literal_value(expression)
        if value is NOT_LITERAL:
            return self.analysis.resolves_to(expression, _VERBOSE_LEVELS)
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return value <= 20  # DEBUG=10, INFO=20
        return isinstance(value, str) and value.upper() in ("DEBUG", "INFO")

    def _report(self, node: cst.CSTNode, message: str) -> None:
        if self.analysis.debugging_exemption(node) is None:
            self.report(node, message)
