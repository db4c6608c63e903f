from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rule import DocumentRule

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.frontends.yaml_nodes import Node


#: What a value of a manifest (or an inline patch's text) may give a pod shared memory with: a mount at /dev/shm, the
#: host's IPC namespace, a memory-backed volume.
_SHARED_MEMORY = re.compile(r"/dev/shm|hostIPC|medium:\s*[\"']?Memory|^Memory$")


class MultiGpuWithoutSharedMemory(DocumentRule):
    code = "GEM605"
    name = "multi-gpu-without-shared-memory"
    severity = Severity.ERROR
    languages = frozenset({Language.YAML})
    summary = (
        "A container that uses several GPUs or several tensor-exchanging worker processes has no shared "
        "memory at `/dev/shm` beyond the runtime's 64 MB default."
    )
    rationale = (
        "Docker and containerd give every container a 64 MB `/dev/shm`. NCCL's intra-node transports, "
        "PyTorch's `multiprocessing` tensor sharing and DataLoader workers, and the worker processes of "
        "tensor- and pipeline-parallel servers (vLLM, TGI, SGLang, torchrun) exchange tensors through it: "
        "with 64 MB they fail with `No space left on device`, die of SIGBUS, or hang in NCCL initialisation, "
        "often only under load when the buffers grow. Kubernetes needs an `emptyDir` with `medium: Memory` "
        "mounted at `/dev/shm` (or `hostIPC: true`); compose needs `shm_size` (1g or more) or `ipc: host`."
    )
    not_flagged = (
        "Containers with `/dev/shm` mounted from an `emptyDir` of `medium: Memory` (or a host path), pods with "
        "`hostIPC: true`, compose services with `shm_size` of at least 1g or `ipc: host`.",
        "Single-GPU, single-process containers, and containers that request one GPU while their arguments ask for "
        "several parallel ranks: the other ranks run in other pods (a Ray cluster), each with its own GPU.",
        "Servers that give each GPU its own model instance and pass no tensors through /dev/shm, on several GPUs "
        "without a parallelism argument (their image or command, in the manifest or in what a kustomize patch is built "
        "with): Triton Inference Server and TensorFlow Serving (one process that places each model instance on a GPU), "
        "bert-as-service (a worker process per GPU, fed over ZeroMQ sockets). Triton's TensorRT-LLM and vLLM builds, "
        "whose ranks are processes, are still reported.",
        "Kustomize patches (files a `kustomization.yaml` in their folder or above lists under `patches`, "
        "`patchesStrategicMerge` or `patchesJson6902`) where shared memory may come from what they are built with: "
        "the volumes a patch leaves out, its base may hold. A patch is judged only when everything its kustomization "
        "builds with (its resources, followed through the kustomizations they name, their patches, and the overlays "
        "of the repository built on it) is in the repository and none of it mounts /dev/shm, sets `hostIPC` or "
        "declares a memory-backed volume; a remote base is not read, and the patch is not judged.",
        "A KServe `InferenceService` predictor's `model` runs in its ServingRuntime's container: the runtime it names "
        "(`runtime:`), or the one that auto-selects its model format, is merged in (volumes, mounts, arguments, "
        "resources) when the same file defines it. A runtime defined elsewhere (another file, the cluster, KServe's "
        "built-in runtimes) is not known, and the predictor is not judged.",
        "Counts and sizes that a template hides (a Helm value with no default, compose `${VAR}` interpolation).",
        "GPU burn-in and diagnostic programs (`gpu-burn`, `nvidia-smi`, DCGM's `dcgmproftester`, the CUDA samples, "
        "`nvbandwidth`), by their image or command, without a parallelism argument: each GPU is driven on its own, or "
        "copied to over NVLink and PCIe, never through /dev/shm.",
        "Stand-in jobs: a base OS image (`ubuntu`, `busybox`, ...) whose command only prints and sleeps, as a "
        "scheduler's demo holds GPUs without using them. A framework image that sleeps is a pod users exec work "
        "into, and is still reported.",
        "Dockerfiles: the shared memory is given by the command that runs the image (`docker run --shm-size`).",
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
          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
          resources:
            limits:
              nvidia.com/gpu: 4
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
          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
          resources:
            limits:
              nvidia.com/gpu: 4
          volumeMounts:
            - name: dshm
              mountPath: /dev/shm
      volumes:
        - name: dshm
          emptyDir:
            medium: Memory
            sizeLimit: 16Gi
"""
    benchmark = (
        "Tensors passed between processes through shared memory (torch.multiprocessing) with a 64 MiB vs a "
        "large /dev/shm, in a private mount namespace: transfers that fail, and throughput."
    )
    tags = ("reliability", "performance", "deployment", "kubernetes", "gpu")
    precision = "high"
    prefilter = ("gpu", "parallel", "shard", "nproc", "num_gpus", "num-gpus", "-tp", "-pp")

    def check(self) -> None:
        from gemlint.analysis.containers import containers

        build: list[Node] | None = None  # for a kustomize patch, the manifests it is built with (read once)
        asked = False
        for container in containers(self.context.document):
            if container.shared_memory:
                continue
            several = container.gpus is not None and container.gpus >= 2 and container.gpu_node is not None
            if not several and not container.parallel:
                continue
            if container.runs_gpu_diagnostic and not container.parallel:
                continue  # a burn-in or diagnostic program drives each GPU alone: nothing goes through /dev/shm
            if container.stand_in:
                continue  # a base image that prints and sleeps holds the GPUs without using them
            if not several and container.requests_gpus and container.gpus is not None and container.gpus <= 1:
                continue  # the parallel ranks need more GPUs than the container has: they run in other pods (Ray)
            if not asked:
                build, asked = self._patch_build(), True
            if build == []:
                return  # what a kustomize patch leaves out (the volumes), what it is built with may hold
            if not container.parallel and (container.runs_instance_per_gpu or (build and _builds_instance_per_gpu_server(build))):
                continue  # Triton, TF Serving: each model instance on one GPU, and no tensors through /dev/shm
            if several:
                node = container.gpu_node
                start, end, uses = node.start, node.end, f"{container.gpus} GPUs"
            else:
                argument = container.parallel[0]
                start, end = argument.start, argument.end
                uses = f"{argument.count} worker processes ({argument.what}, `{argument.flag} {argument.count}`)"
            compose = container.where.startswith("compose ")
            has = f" ({container.shm_note})" if container.shm_note else ""
            remedy = (
                "set `shm_size` (1g or more) or `ipc: host`"
                if compose
                else "mount an `emptyDir` with `medium: Memory` at /dev/shm (or set `hostIPC: true`)"
            )
            self.report_at(
                start,
                end,
                f"{container.where} uses {uses} but has no shared memory at /dev/shm beyond the runtime's 64 MB{has}: NCCL and the "
                f"worker processes exchange tensors there and fail or stall; {remedy}",
            )

    def _patch_build(self) -> list[Node] | None:
        """None for a file no kustomization patches; for a patch, the manifests of everything it is built with when
        all of it is in the repository and can be read, and none of it speaks of shared memory (a `/dev/shm` mount,
        `hostIPC`, a memory-backed `emptyDir`), else an empty list: only then does the built pod lack it too."""
        from gemlint.frontends.kustomize import build_texts, is_patch
        from gemlint.frontends.yaml_nodes import compose_documents
        from gemlint.text import SourceError

        path, root = str(self.context.source.path), str(self.context.config.root)
        if not is_patch(path, root):
            return None
        texts = build_texts(path, root)
        try:
            documents = [document for text in texts or () for document in compose_documents(text)]
        except SourceError:
            return []  # one that cannot be read may hold the volume
        if texts is None or _values_match(documents, _SHARED_MEMORY, keys=("hostIPC",)):
            return []
        return documents


def _builds_instance_per_gpu_server(documents: list[Node]) -> bool:
    """What a patch is built with runs a server that gives each GPU its own model instance (Triton, TF Serving), and
    no LLM server."""
    from gemlint.analysis.containers import INSTANCE_PER_GPU_SERVERS, LLM_SERVER

    return _values_match(documents, INSTANCE_PER_GPU_SERVERS) and not _values_match(documents, LLM_SERVER)


def _values_match(documents: list[Node], pattern: re.Pattern[str], keys: tuple[str, ...] = ()) -> bool:
    """The manifests' values (not their comments) match ``pattern``, or one of them has one of ``keys``."""
    from gemlint.frontends.yaml_nodes import Mapping, Scalar, walk

    return any(
        (isinstance(node, Scalar) and pattern.search(node.value)) or (isinstance(node, Mapping) and any(key in node.keys() for key in keys))
        for document in documents
        for node in walk(document)
    )
