from __future__ import annotations

from typing import TYPE_CHECKING

from gemlint.analysis.triage import Production, WritesEnvironment, is_production_path
from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rule import AnalysisRule, DocumentRule

if TYPE_CHECKING:
    import libcst as cst

VARIABLE = "CUDA_LAUNCH_BLOCKING"
_DETERMINISM_VARIABLE = "CUBLAS_WORKSPACE_CONFIG"
MESSAGE = "`CUDA_LAUNCH_BLOCKING=1` makes every CUDA kernel launch synchronous; remove it or put it behind a flag"


def is_blocking(value: object) -> bool:
    return value == 1 or (isinstance(value, str) and value.strip() == "1")


class CudaLaunchBlocking(AnalysisRule, DocumentRule):
    """Python (``os.environ``, ``putenv``) and deployment files (Dockerfile ``ENV``, Kubernetes ``env``, compose ``environment``)."""

    code = "GEM404"
    name = "cuda-launch-blocking"
    severity = Severity.ERROR
    languages = frozenset({Language.PYTHON, Language.YAML, Language.DOCKERFILE})
    summary = "`CUDA_LAUNCH_BLOCKING=1` is set from code or a deployment file, making every kernel launch synchronous."
    rationale = (
        "With launch blocking every kernel launch waits for the GPU to finish: the host can no longer run "
        "ahead, CPU and GPU work stop overlapping, and throughput drops by the launch overhead of every "
        "kernel. It is a debugging setting for locating asynchronous CUDA errors."
    )
    not_flagged = (
        "`CUDA_LAUNCH_BLOCKING=0`, and values that come from configuration at run time (a variable, a Docker "
        "build argument, compose interpolation, a Helm value).",
        "Settings behind a flag, in tests, benchmark and profiling scripts (also Dockerfiles and manifests in such folders), "
        "in the `__main__` block of a module other files of the project use (its author's check, run by hand), and in "
        "functions that measure or check rather than serve (named for a test, a check or a latency: `test_model_latency`, `CHECK_CUDA`, `measure_throughput`; or comparing two implementations' outputs, as a kernel's harness does).",
        "Python code that asks for deterministic kernels in the same function (or at module level with it): "
        "`torch.use_deterministic_algorithms(True)` or `CUBLAS_WORKSPACE_CONFIG`, which PyTorch's reproducibility "
        "notes pair with launch blocking. Reproducible runs and output comparisons set it on purpose.",
    )
    bad = """\
import os

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
"""
    good = """\
import os

if os.environ.get("DEBUG_CUDA"):
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
"""
    benchmark = "Throughput of a stream of small kernels with and without launch blocking (CUDA machines)."
    tags = ("performance", "debugging", "cuda")
    notebooks = False
    notebooks_reason = (
        "Setting `CUDA_LAUNCH_BLOCKING=1` in a notebook is how a kernel error is traced, on purpose; its cost "
        "matters in a deployed process."
    )
    precision = "very-high"
    prefilter = (VARIABLE,)

    # Only production code: tests, benchmarks and profiling scripts block launches on purpose.
    syntax_gate = Production() & WritesEnvironment((VARIABLE,))

    # -- Python (gemlint.analysis.environment, imported where a Python file is linted: a run over manifests alone
    # imports no LibCST) -------------------------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._check(node)

    def _check(self, node: cst.Assign | cst.Call) -> None:
        from gemlint.analysis.environment import asks_for_determinism, env_writes

        for write in env_writes(self.analysis, node):
            if write.variable == VARIABLE and is_blocking(write.value):
                # Asked for deterministic kernels in the same function, as PyTorch's reproducibility notes pair it
                # with launch blocking: a reproducible run, an output comparison, not a setting left on from debugging.
                if self.analysis.debugging_exemption(write.node) is None and not asks_for_determinism(self.analysis, write.node, _DETERMINISM_VARIABLE):
                    self.report(write.node, MESSAGE)

    # -- Dockerfiles, Kubernetes manifests, compose files --------------------------------------
    def check(self) -> None:
        from gemlint.analysis.deployment import env_settings

        if not is_production_path(self.context.relative_path):
            return
        for setting in env_settings(self.context.document):
            if setting.name == VARIABLE and is_blocking(setting.value):
                self.report_at(setting.start, setting.end, MESSAGE)
