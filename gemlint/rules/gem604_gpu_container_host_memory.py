from __future__ import annotations

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.quantities import GI, format_bytes
from gemlint.rule import DocumentRule


class GpuContainerHostMemory(DocumentRule):
    code = "GEM604"
    name = "gpu-container-host-memory"
    severity = Severity.WARNING
    preview = True
    preview_reason = (
        "Reviewed on whole repositories, none of 5 judged findings was right: the per-GPU minimum stands for the "
        "weights' size, which a manifest does not state (small models, test and benchmark pods that load no "
        "weights)."
    )
    languages = frozenset({Language.YAML})
    summary = (
        "A container that requests GPUs has a host memory limit below `gpu-host-memory-per-gpu` (16Gi by "
        "default) per GPU: loading the weights stages them in host memory, and the container is OOM-killed "
        "during start-up."
    )
    rationale = (
        "Weights reach the GPU through host memory: `torch.load`, safetensors and `from_pretrained` read the "
        "checkpoint into host RAM (often twice over while a state dict is copied into the model) before the "
        "tensors are moved to the device, and serving engines keep pinned staging buffers and CPU swap space "
        "as well. A memory limit sized for the serving process's steady state, not for loading, gets the "
        "container OOM-killed while it starts, in a restart loop that looks like a crash of the model server. "
        "The minimum per GPU is the `gpu-host-memory-per-gpu` setting (default 16Gi: the weights of a model "
        "that fills a 16-24 GB GPU in half precision); set it to what your largest model per GPU needs."
    )
    not_flagged = (
        "Containers without a memory limit (a limit of `0` sets none), or with a limit at or above the minimum for their GPU count, in binary "
        "or decimal units (`16G` for a minimum of 16Gi).",
        "Limits that a template hides (a Helm value with no default in values.yaml, compose `${VAR}` interpolation).",
        "Containers that request no GPU (or `nvidia.com/gpu: 0`).",
        "Containers that run no large-language-model server (vLLM, TGI, SGLang, TensorRT-LLM, LMDeploy, Ollama, "
        "llama.cpp, NIM, an image named for an LLM, or KServe's `huggingface` model format): the size of their "
        "weights is unknown, and a ResNet or a BERT loads in a few GiB.",
    )
    bad = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits:
              nvidia.com/gpu: 1
              memory: 8Gi
"""
    good = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits:
              nvidia.com/gpu: 1
              memory: 32Gi
"""
    benchmark = (
        "Peak host RSS of loading a checkpoint into a model object (the host-side staging every load pays), "
        "and whether the load completes under each manifest's limit, scaled to the benchmark's weights "
        "(RLIMIT_DATA in a child process)."
    )
    tags = ("reliability", "deployment", "kubernetes", "gpu")
    precision = "high"
    prefilter = ("nvidia.com/gpu", "amd.com/gpu", "gpu")

    def check(self) -> None:
        from gemlint.analysis.containers import containers

        per_gpu = self.context.config.gpu_host_memory_per_gpu
        for container in containers(self.context.document):
            if not container.requests_gpus or container.memory_limit is None or container.memory_node is None:
                continue
            if container.gpus == 0 or not container.serves_llm:
                continue  # without an LLM server the weights' size is unknown: a ResNet or a BERT loads in a few GiB
            gpus = container.gpus or 1  # "all" or a hidden count: at least one
            minimum = gpus * per_gpu
            if container.memory_limit >= minimum * 10**9 // GI:
                continue  # the minimum in decimal units (16G for 16Gi): the spellings differ by 7 %, the weights by more
            counted = f"{gpus} GPU{'s' if gpus != 1 else ''}" if container.gpus else "at least 1 GPU"
            node = container.memory_node
            self.report_at(
                node.start,
                node.end,
                f"{container.where}: host memory limit {node.value} for {counted} is below {format_bytes(minimum)} "
                f"({format_bytes(per_gpu)} per GPU, `gpu-host-memory-per-gpu`): weights are staged in host memory "
                "while they load, so the container is OOM-killed during start-up",
            )
