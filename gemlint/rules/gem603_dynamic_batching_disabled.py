from __future__ import annotations

import re
from pathlib import Path

from gemlint.analysis.triage import is_test_path
from gemlint.diagnostics import Position, Severity
from gemlint.languages import Language
from gemlint.rule import DocumentRule

# ModelInstanceGroup.Kind, by name (the numbers are Triton's schema).
_GPU_KINDS = frozenset({"KIND_AUTO", "KIND_GPU"})


class DynamicBatchingDisabled(DocumentRule):
    code = "GEM603"
    name = "dynamic-batching-disabled"
    severity = Severity.WARNING
    preview = True
    preview_reason = (
        "Reviewed on whole repositories (Triton tutorials, examples, model-analyzer sweeps, NVIDIA's examples), "
        "none of 27 judged findings was right: whether a model sees concurrent load worth batching is not written"
        " in the repository, and most configurations without a batcher are examples of something else."
    )
    languages = frozenset({Language.TRITON})
    summary = (
        "A Triton model declares batching support (`max_batch_size` > 0) on a GPU instance group but has no "
        "`dynamic_batching` or sequence batcher, so every request executes alone."
    )
    rationale = (
        "`max_batch_size` only says that the model accepts a batch dimension; Triton forms batches across "
        "requests only with a scheduler that batches. Without `dynamic_batching` (or `sequence_batching`) "
        "each request is executed on its own: a GPU that could run 8 or 32 requests in one kernel launch "
        "runs them one after another, and under concurrent load requests queue behind each other instead of "
        "sharing a forward pass. An empty `dynamic_batching { }` block already batches whatever is queued "
        "when an instance becomes free, without adding delay."
    )
    not_flagged = (
        "`max_batch_size: 0` (or absent): the model does not batch; `max_batch_size: 1`: no batch worth a batcher.",
        "Ensembles (`platform: \"ensemble\"`): their steps are scheduled, and batch, by their own configurations.",
        "Models with `dynamic_batching` in any form (an empty block included) or `sequence_batching`.",
        "Decoupled models (`model_transaction_policy { decoupled: true }`): they batch, or stream, themselves.",
        "Models whose instance groups are all `KIND_CPU`, or `KIND_MODEL` (the backend places its instances).",
        "Python backend models (`backend: \"python\"`): their `execute(requests)` decides how requests are "
        "processed, and most loop over them one by one, so a batcher only groups calls unless the code batches.",
        "Configuration templates with `${...}` placeholders (filled in before Triton reads them).",
        "Custom backends (anything but TensorRT, ONNX Runtime, PyTorch, TensorFlow, OpenVINO and FIL, by `backend`, "
        "`platform` or the model file Triton infers the backend from): nothing says they execute a batch at once.",
        "ONNX Runtime, TensorRT and TensorFlow models: their backends complete the configuration when Triton loads "
        "it (unless the server runs with `--disable-auto-complete-config`), and add an empty `dynamic_batching` to a "
        "model that batches and names no scheduler. The batcher is there although the file does not say so.",
        "Instance groups marked `passive: true` (loaded, never scheduled): the active groups decide.",
        "Test trees: folders named for tests, and Triton's own `qa/` trees and `L0_*` test folders.",
    )
    bad = """\
# model_repository/resnet50/config.pbtxt
name: "resnet50"
backend: "pytorch"
max_batch_size: 32
input [ { name: "INPUT__0", data_type: TYPE_FP32, dims: [ 3, 224, 224 ] } ]
output [ { name: "OUTPUT__0", data_type: TYPE_FP32, dims: [ 1000 ] } ]
instance_group [ { kind: KIND_GPU, count: 1 } ]
"""
    good = """\
# model_repository/resnet50/config.pbtxt
name: "resnet50"
backend: "pytorch"
max_batch_size: 32
input [ { name: "INPUT__0", data_type: TYPE_FP32, dims: [ 3, 224, 224 ] } ]
output [ { name: "OUTPUT__0", data_type: TYPE_FP32, dims: [ 1000 ] } ]
instance_group [ { kind: KIND_GPU, count: 1 } ]
dynamic_batching { max_queue_delay_microseconds: 100 }
"""
    benchmark = (
        "Throughput of one small model under the same concurrent load on loopback, executed per request vs "
        "through a dynamic batcher configured from each config.pbtxt."
    )
    tags = ("performance", "serving", "deployment", "triton")
    precision = "high"
    prefilter = ("max_batch_size",)

    def check(self) -> None:  # noqa: C901 -- one early exit per exemption of the spec
        config = self.context.document
        if config is None:  # the Triton schema is unavailable here, or the file is a template
            return
        message = config.message
        if message.max_batch_size <= 1 or message.platform == "ensemble":
            return  # 0: no batch dimension; 1: no batch worth a batcher
        if is_test_path(self.context.relative_path) or _in_test_tree(self.context.relative_path):
            return  # Triton's own qa/ trees, parser fixtures: configs written to test something else
        if not _batches_requests(message, self.context.source.path):
            return
        if _COMMENTED_BATCHER.search(self.context.text):
            return  # a batcher written and commented out: a script toggles it (static vs dynamic comparisons)
        if message.WhichOneof("scheduling_choice") is not None:  # dynamic, sequence or ensemble scheduling
            return
        if message.model_transaction_policy.decoupled:
            return  # responses streamed per request: the model, not Triton, decides what runs together
        kind_names = message.DESCRIPTOR.fields_by_name["instance_group"].message_type.enum_types_by_name["Kind"]
        # A passive instance group is loaded but not scheduled: the active groups decide where requests run.
        active = [group for group in message.instance_group if not group.passive] or list(message.instance_group)
        kinds = [kind_names.values_by_number[group.kind].name for group in active]
        if kinds and not any(kind in _GPU_KINDS for kind in kinds):
            return
        where = "on a GPU instance group" if "KIND_GPU" in kinds else "on the GPU that Triton's default placement gives it"
        span = config.span("max_batch_size") or (Position(1, 1), Position(1, 1))
        self.report_at(
            *span,
            f"`max_batch_size: {message.max_batch_size}` declares batching, but with no `dynamic_batching` or "
            f"sequence batcher Triton executes every request alone {where}; add `dynamic_batching {{ }}`",
        )


#: Triton's backends (and platforms) whose models run a whole batch in one execution, and whose configuration
#: Triton takes as written: for these, only a dynamic batcher in the file forms batches. A custom backend (or the
#: Python backend) may execute requests one by one, and nothing says a batcher would help it. The ONNX Runtime,
#: TensorRT and TensorFlow backends complete a configuration on load (Triton's default) and add
#: `dynamic_batching {}` themselves where `max_batch_size` > 1 and no scheduler is named.
_BATCHING_BACKENDS = frozenset({"pytorch", "openvino", "fil"})
_BATCHING_PLATFORMS = frozenset({"pytorch_libtorch"})
#: Default model file names, by which Triton picks a backend when the config names none: whether a configuration
#: without a batcher leaves that backend executing requests one by one.
_MODEL_FILES = {"model.plan": False, "model.onnx": False, "model.pt": True, "model.savedmodel": False, "model.graphdef": False, "model.xml": True, "model.py": False}


_COMMENTED_BATCHER = re.compile(r"^[ \t]*#.*\b(?:dynamic_batching|sequence_batching)\b", re.MULTILINE)


def _batches_requests(message, config_path) -> bool:
    if message.platform:
        return message.platform in _BATCHING_PLATFORMS
    if message.backend:
        return message.backend in _BATCHING_BACKENDS
    # Neither written: Triton infers the backend from the model file in a version folder.
    folder = Path(config_path).parent
    for version in sorted(p for p in _children(folder) if p.name.isdigit()):
        for name, batches in _MODEL_FILES.items():
            if (version / name).exists():
                return batches
    return False


def _children(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return []


def _in_test_tree(relative: str) -> bool:
    """Triton's own test trees: ``qa/`` and its ``L0_*`` test folders."""
    parts = relative.split("/")[:-1]
    return "qa" in parts or any(part.startswith("L0_") for part in parts)
