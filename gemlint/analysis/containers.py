"""What a deployment file gives each container: GPUs, a host memory limit, shared memory, its command.

Kubernetes manifests (any workload kind; every ``containers``/``initContainers``
list, with the pod spec that holds it; KServe predictors' ``model``), Helm
templates as rendered with the chart's values.yaml, and docker-compose services
all come out as the same :class:`Container` records, so the GEM604/GEM605 rules
never care which format they read. Values a template hides (no default in
values.yaml) or compose interpolates from the host are unknown, never guessed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Iterator

from gemlint.analysis.deployment import manifests, mappings
from gemlint.diagnostics import Position
from gemlint.frontends.helm import PLACEHOLDER
from gemlint.frontends.yaml_file import YamlFile
from gemlint.frontends.yaml_nodes import Mapping, Node, Scalar, Sequence
from gemlint.quantities import docker_bytes, kubernetes_bytes

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
SHM_PATH = "/dev/shm"

#: Flags whose value is a number of cooperating worker processes (vLLM, SGLang, TGI, torchrun, DeepSpeed).
PARALLEL_FLAGS = {
    "--tensor-parallel-size": "tensor parallelism",
    "-tp": "tensor parallelism",
    "--tp-size": "tensor parallelism",
    "--tp": "tensor parallelism",
    "--pipeline-parallel-size": "pipeline parallelism",
    "-pp": "pipeline parallelism",
    "--pp-size": "pipeline parallelism",
    "--num-shard": "sharding",
    "--nproc_per_node": "worker processes",
    "--nproc-per-node": "worker processes",
    "--num_gpus": "worker processes",
    "--num-gpus": "worker processes",
}
_LAUNCHERS = {"--nproc_per_node", "--nproc-per-node", "--num_gpus", "--num-gpus"}
_LAUNCHER_NAMES = re.compile(r"(^|/)(torchrun|deepspeed)$|torch\.distributed\.(run|launch)$")


@dataclass(frozen=True)
class Located:
    value: str
    start: Position
    end: Position


@dataclass(frozen=True)
class ParallelArgument:
    flag: str
    count: int
    what: str  # "tensor parallelism", ...
    start: Position
    end: Position


@dataclass
class Container:
    where: str  # "Deployment llm, container server" / "compose service llm"
    #: GPUs requested (limits, else requests; compose: the reservation's count or device_ids); None: unknown count
    gpus: int | None = None
    gpu_node: Located | None = None  # where the GPU count (or compose's reservation) is written
    requests_gpus: bool = False
    memory_limit: int | None = None  # bytes
    memory_node: Located | None = None
    #: /dev/shm is shared memory of adequate size (Memory emptyDir, hostIPC, compose shm_size >= 1g, ipc: host)
    shared_memory: bool = False
    #: what the container has at /dev/shm instead, for the message ("an emptyDir on disk", "shm_size 64m")
    shm_note: str | None = None
    parallel: list[ParallelArgument] = field(default_factory=list)
    #: The container runs a large-language-model server (vLLM, TGI, SGLang, ...), by its image, command or
    #: KServe model format: evidence that it loads weights of many GiB.
    serves_llm: bool = False
    #: The container runs a GPU burn-in or diagnostic program (gpu-burn, nvidia-smi, DCGM's load generator, the
    #: CUDA samples, nvbandwidth's copies), by its image or command: no tensors go through /dev/shm.
    runs_gpu_diagnostic: bool = False
    #: The container is a stand-in: a base OS image whose command only prints and sleeps (a scheduler's demo
    #: job that holds GPUs for a while). Nothing in it uses them.
    stand_in: bool = False
    #: The container runs a server that gives each GPU its own model instance and passes no tensors through
    #: /dev/shm, by its image or command: Triton Inference Server (not one of its LLM builds) and TensorFlow Serving
    #: (one process), bert-as-service (a TensorFlow worker process per GPU, fed over ZeroMQ sockets).
    runs_instance_per_gpu: bool = False


def _value(node: Node | None) -> str | None:
    """A value written here or taken from the chart's values.yaml defaults; None when a template hides it."""
    if isinstance(node, Scalar) and PLACEHOLDER not in node.value:
        return node.value
    return None


def _located(node: Node | None, value: str | None = None) -> Located | None:
    text = value if value is not None else _value(node)
    if node is None or text is None:
        return None
    start, end = node.span
    return Located(text, start, end)


def _count(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


# -- commands --------------------------------------------------------------------------------------
def _words(node: Node) -> list[tuple[str, Node]]:
    """The words of a command/args list (a shell string such as ``sh -c "..."`` split as a shell would)."""
    words: list[tuple[str, Node]] = []
    items = node.items if isinstance(node, Sequence) else [node]
    for item in items:
        text = _value(item)
        if text is None:
            continue
        try:
            parts = shlex.split(text) if any(c.isspace() for c in text) else [text]
        except ValueError:
            parts = text.split()
        words.extend((part, item) for part in parts)
    return words


def parallel_arguments(nodes: list[Node]) -> list[ParallelArgument]:
    """Parallelism flags with a literal count above 1 in a container's command and args."""
    words = [word for node in nodes if node is not None for word in _words(node)]
    launcher = any(_LAUNCHER_NAMES.search(word) for word, _ in words)
    found = []
    for index, (word, node) in enumerate(words):
        flag, sep, inline = word.partition("=")
        if flag not in PARALLEL_FLAGS or (flag in _LAUNCHERS and not launcher):
            continue
        value = inline if sep else (words[index + 1][0] if index + 1 < len(words) else None)
        count = _count(value)
        if count is not None and count > 1:
            start, end = node.span
            found.append(ParallelArgument(flag, count, PARALLEL_FLAGS[flag], start, end))
    return found


# -- Kubernetes ------------------------------------------------------------------------------------------
def _pod_specs(manifest: Mapping) -> Iterator[tuple[Mapping, list[Mapping]]]:
    """Every mapping holding a ``containers`` list (a pod spec, a KServe component), with its containers;
    a KServe predictor's ``model`` (container fields, its component holds the pod fields) counts as one."""
    for node, _ in mappings(manifest):
        containers = [item for key in ("containers", "initContainers") for item in node.sequence(key) if isinstance(item, Mapping)]
        model = node.mapping("model")
        if model is not None and (model.get("resources") is not None or model.get("args") is not None):
            containers.append(model)
        if containers:
            yield node, containers


def _resource(resources: Mapping | None, section: str, name: str) -> Node | None:
    table = resources.mapping(section) if resources is not None else None
    return table.get(name) if table is not None else None


def _memory_volumes(pod: Mapping) -> dict[str, str | None]:
    """Volume name -> None when it is shared memory, else what it is (for the message)."""
    volumes: dict[str, str | None] = {}
    for volume in pod.sequence("volumes"):
        if not isinstance(volume, Mapping):
            continue
        name = _value(volume.get("name"))
        if name is None:
            continue
        empty_dir = volume.get("emptyDir")
        if isinstance(empty_dir, Mapping):
            volumes[name] = None if _value(empty_dir.get("medium")) == "Memory" else "an emptyDir on the node's disk (no `medium: Memory`)"
        elif empty_dir is not None:  # `emptyDir: {}` written as a flow mapping or null
            volumes[name] = "an emptyDir on the node's disk (no `medium: Memory`)"
        elif isinstance(volume.get("hostPath"), Mapping):
            volumes[name] = None if _value(volume.mapping("hostPath").get("path")) == SHM_PATH else "a hostPath volume"
        else:
            volumes[name] = "a volume that is not shared memory"
    return volumes


def _kubernetes_container(container: Mapping, pod: Mapping, where: str) -> Container:
    record = Container(where)
    resources = container.mapping("resources")
    for name in GPU_RESOURCES:
        node = _resource(resources, "limits", name) or _resource(resources, "requests", name)
        if node is not None:
            record.requests_gpus = True
            record.gpus = _count(_value(node))
            record.gpu_node = _located(node, _value(node) or "")
            break
    memory = _resource(resources, "limits", "memory")
    text = _value(memory)
    limit = kubernetes_bytes(text) if text is not None else None
    if limit:  # a limit of 0 sets none (a chart's default that leaves the limit to its user)
        record.memory_limit = limit
        record.memory_node = _located(memory)
    if _value(pod.get("hostIPC")) in ("true", "True"):
        record.shared_memory = True
    else:
        volumes = _memory_volumes(pod)
        for mount in container.sequence("volumeMounts"):
            if isinstance(mount, Mapping) and _value(mount.get("mountPath")) in (SHM_PATH, SHM_PATH + "/"):
                name = _value(mount.get("name"))
                if name in volumes:
                    record.shared_memory = volumes[name] is None
                    record.shm_note = volumes[name]
                else:
                    record.shared_memory = True  # a volume this file does not show (a template, a patch): assume it is right
    record.parallel = parallel_arguments([container.get("command"), container.get("args")])
    model_format = container.mapping("modelFormat")
    program = _program_words([container.get("image"), container.get("command"), container.get("args")])
    format_name = _program_words([model_format.get("name")]) if model_format is not None else []
    record.serves_llm = _any_word(program + format_name, LLM_SERVER)
    record.runs_gpu_diagnostic = _any_word(program, _GPU_DIAGNOSTIC)
    record.stand_in = is_stand_in(container.get("image"), [container.get("command"), container.get("args")])
    record.runs_instance_per_gpu = _any_word(program, INSTANCE_PER_GPU_SERVERS) and not record.serves_llm
    return record


#: Images, commands and KServe model formats of large-language-model servers.
LLM_SERVER = re.compile(
    r"vllm|text-generation-inference|text-generation-launcher|\btgi\b|sglang|tensorrt[-_]?llm|trtllm|lmdeploy|ollama|"
    r"llama[-_.]?cpp|llama-server|(?:^|[-_/])llm(?:$|[-_:/])|nvcr\.io/nim/|aphrodite|lorax|exllama|mlc[-_]llm|^huggingface$",
    re.IGNORECASE,
)


#: Images and commands of servers that run one model instance per GPU and pass no tensors through /dev/shm.
INSTANCE_PER_GPU_SERVERS = re.compile(r"tritonserver|tensorflow[/_]serving|tensorflow_model_server|bert-serving|bert-as-service", re.IGNORECASE)
#: Images and commands of GPU burn-in and diagnostic programs.
_GPU_DIAGNOSTIC = re.compile(r"gpu[-_]?burn|nvidia-smi|dcgmproftester|(?:^|/)dcgmi$|deviceQuery|vectoradd|cuda-sample|nvbandwidth", re.IGNORECASE)


#: Base operating-system images: they hold no GPU program of their own.
_BASE_IMAGE = re.compile(
    r"(?:docker\.io/)?(?:library/)?(?:ubuntu|debian|alpine|busybox|centos|fedora|rockylinux|almalinux|amazonlinux)(?:[:@].*)?"
    r"|(?:registry\.k8s\.io|k8s\.gcr\.io|gcr\.io/google[-_]containers)/pause(?:[:@].*)?",
    re.IGNORECASE,
)
#: Commands that do no work: a stand-in job prints, waits and exits.
_IDLE_COMMANDS = frozenset({"echo", "printf", "sleep", "true", "false", "exit", ":", "date", "env", "printenv", "hostname", "set", "wait"})
_SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash"})
_ASSIGNMENT = re.compile(r"\w+=.*")
#: Where a shell script's simple commands end.
_COMMAND_BREAK = re.compile(r"\n|;|&&|\|\||\|")


def is_stand_in(image: Node | None, program: list[Node | None]) -> bool:
    """A base OS image whose command and arguments run only commands that do no work, such as ``echo`` and
    ``sleep`` (directly, or in the script a shell is given with ``-c``)."""
    name = _value(image)
    if name is None or not _BASE_IMAGE.fullmatch(name.strip()):
        return False
    argv: list[str] = []
    for node in program:
        for item in (node.items if isinstance(node, Sequence) else [node]) if node is not None else ():
            text = _value(item)
            if text is None:
                return False  # a template hides what runs
            if isinstance(node, Sequence):
                argv.append(text)
            else:
                argv.extend(_split(text) or [])  # compose's string form, split as a shell would
    if not argv:
        return False
    if argv[0] not in _SHELLS:
        return argv[0].rsplit("/", 1)[-1] in _IDLE_COMMANDS
    script = next((argv[i + 1] for i, word in enumerate(argv[:-1]) if word.startswith("-") and "c" in word), None)
    if script is None:
        return False
    commands = []
    for simple in _COMMAND_BREAK.split(script):
        words = _split(simple)
        if words is None:
            return False
        words = [word for word in words if not _ASSIGNMENT.fullmatch(word)]
        if words:
            commands.append(words[0])
    return bool(commands) and all(command in _IDLE_COMMANDS for command in commands)


def _split(text: str) -> list[str] | None:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return None


def _program_words(nodes: list[Node | None]) -> list[str]:
    """The words of what a container runs: its image, command and arguments (split as a shell would)."""
    return [word for node in nodes if node is not None for word, _ in _words(node)]


def _any_word(words: list[str], pattern: re.Pattern[str]) -> bool:
    return any(pattern.search(word) for word in words)


def kubernetes_containers(file: YamlFile) -> list[Container]:
    found = []
    runtimes = _serving_runtimes(file)
    for manifest in manifests(file):
        metadata = manifest.mapping("metadata")
        name = _value(metadata.get("name")) if metadata is not None else None
        kind = manifest.text("kind") or "object"
        api = manifest.text("apiVersion") or ""
        kserve_model = api.startswith("serving.kserve.io/") and kind == "InferenceService"
        # KubeRay's operator mounts a memory-backed /dev/shm, sized to the container's memory, into every Ray
        # container it creates (RayCluster, RayService and RayJob, and what is built on them). KServe merges an
        # LLMInferenceService (and its LLMInferenceServiceConfig presets) over its well-known base configs,
        # which mount a memory-backed /dev/shm into the model server's pod.
        injected = (api.startswith("ray.io/") and kind in _KUBERAY_KINDS) or (
            api.startswith("serving.kserve.io/") and kind in _KSERVE_LLM_KINDS
        )
        for pod, containers in _pod_specs(manifest):
            for container in containers:
                container_name = _value(container.get("name"))
                where = f"{kind} {name}" if name else kind
                if container_name:
                    where += f", container {container_name}"
                record = _kubernetes_container(container, pod, where)
                if injected:
                    record.shared_memory = True
                if kserve_model and container is pod.get("model"):
                    _merge_runtime(record, container, runtimes)
                found.append(record)
    return found


def _serving_runtimes(file: YamlFile) -> dict[str, tuple[Mapping, list[str]]]:
    """The KServe ``ServingRuntime``/``ClusterServingRuntime`` objects of the file: name -> (spec, the model formats
    it supports with ``autoSelect``)."""
    found: dict[str, tuple[Mapping, list[str]]] = {}
    for manifest in manifests(file):
        if not (manifest.text("apiVersion") or "").startswith("serving.kserve.io/"):
            continue
        if manifest.text("kind") not in ("ServingRuntime", "ClusterServingRuntime"):
            continue
        metadata, spec = manifest.mapping("metadata"), manifest.mapping("spec")
        name = _value(metadata.get("name")) if metadata is not None else None
        if name is None or spec is None:
            continue
        formats = [
            text
            for item in spec.sequence("supportedModelFormats")
            if isinstance(item, Mapping) and _value(item.get("autoSelect")) in ("true", "True") and (text := _value(item.get("name")))
        ]
        found[name] = (spec, formats)
    return found


def _merge_runtime(record: Container, model: Mapping, runtimes: dict[str, tuple[Mapping, list[str]]]) -> None:
    """A KServe predictor's ``model`` runs in the container of the ServingRuntime it names (``runtime:``, or the
    one that auto-selects its model format), with the runtime's volumes, mounts, arguments and resources merged in,
    as KServe merges them. A runtime this file does not define (another file, a cluster's own, KServe's built-in
    ones) is not known: its pod may well mount /dev/shm, so the container is not judged."""
    chosen = _value(model.get("runtime"))
    model_format = model.mapping("modelFormat")
    format_name = _value(model_format.get("name")) if model_format is not None else None
    if chosen is None and format_name is not None:
        chosen = next((name for name, (_, formats) in runtimes.items() if format_name in formats), None)
    runtime = runtimes.get(chosen) if chosen is not None else None
    if runtime is None:
        record.shared_memory = True
        return
    spec = runtime[0]
    inner = next((c for c in spec.sequence("containers") if isinstance(c, Mapping)), None)
    if inner is None:
        record.shared_memory = True
        return
    merged = _kubernetes_container(inner, spec, record.where)
    record.shared_memory = record.shared_memory or merged.shared_memory
    record.shm_note = record.shm_note or merged.shm_note
    record.parallel = record.parallel or merged.parallel
    record.serves_llm = record.serves_llm or merged.serves_llm
    if not record.requests_gpus and merged.requests_gpus:
        record.requests_gpus, record.gpus, record.gpu_node = True, merged.gpus, merged.gpu_node
    record.where = f"{record.where} (in ServingRuntime {chosen})"


_KUBERAY_KINDS = frozenset({"RayCluster", "RayService", "RayJob", "RayCronJob"})
_KSERVE_LLM_KINDS = frozenset({"LLMInferenceService", "LLMInferenceServiceConfig"})


# -- docker-compose -----------------------------------------------------------------------------------------
def _compose_value(node: Node | None) -> str | None:
    """Compose interpolates ``${VAR}`` from the host: such values are configuration."""
    text = _value(node)
    return None if text is None or "$" in text else text


def _compose_gpus(service: Mapping, record: Container) -> None:
    deploy = service.mapping("deploy")
    resources = deploy.mapping("resources") if deploy is not None else None
    reservations = resources.mapping("reservations") if resources is not None else None
    for device in reservations.sequence("devices") if reservations is not None else ():
        if not isinstance(device, Mapping):
            continue
        capabilities = [item.value for item in device.sequence("capabilities") if isinstance(item, Scalar)]
        if "gpu" not in capabilities:
            continue
        record.requests_gpus = True
        ids = device.sequence("device_ids")
        count_node = device.get("count")
        if ids:
            record.gpus = len(ids)
            record.gpu_node = _located(device.get("device_ids"), str(len(ids)))
        elif count_node is not None:
            text = _compose_value(count_node)
            record.gpus = _count(text)  # "all": as many as the host has, unknown here
            record.gpu_node = _located(count_node, text or "")
        else:
            record.gpus = None  # compose's default is every GPU of the host
            key = next(key for key, value in reservations.pairs if key.value == "devices")
            record.gpu_node = _located(key, "devices")
        return
    gpus = service.get("gpus")  # compose's short form: `gpus: all` or a device list
    if gpus is not None:
        record.requests_gpus = True
        if isinstance(gpus, Sequence):
            record.gpus = len(gpus.items)
        record.gpu_node = _located(gpus, _value(gpus) or "")


def _compose_memory(service: Mapping, record: Container) -> None:
    deploy = service.mapping("deploy")
    resources = deploy.mapping("resources") if deploy is not None else None
    limits = resources.mapping("limits") if resources is not None else None
    node = limits.get("memory") if limits is not None else None
    if node is None:
        node = service.get("mem_limit")
    text = _compose_value(node)
    limit = docker_bytes(text) if text is not None else None
    if limit:  # Docker reads a limit of 0 as none
        record.memory_limit = limit
        record.memory_node = _located(node, text)


def compose_containers(file: YamlFile) -> list[Container]:
    if not file.is_compose:
        return []
    found = []
    for document in file.documents:
        services = document.mapping("services") if isinstance(document, Mapping) and document.get("kind") is None else None
        for key, service in services.pairs if services is not None else ():
            if not isinstance(service, Mapping):
                continue
            record = Container(f"compose service {key.value}")
            program = _program_words([service.get("image"), service.get("command"), service.get("entrypoint")])
            record.serves_llm = _any_word(program, LLM_SERVER)
            record.runs_gpu_diagnostic = _any_word(program, _GPU_DIAGNOSTIC)
            record.stand_in = is_stand_in(service.get("image"), [service.get("entrypoint"), service.get("command")])
            record.runs_instance_per_gpu = _any_word(program, INSTANCE_PER_GPU_SERVERS) and not record.serves_llm
            _compose_gpus(service, record)
            _compose_memory(service, record)
            shm_node = service.get("shm_size")
            shm = _compose_value(shm_node)
            size = docker_bytes(shm) if shm is not None else None
            if _value(service.get("ipc")) == "host" or (size is not None and size >= 2**30):
                record.shared_memory = True
            elif shm_node is not None and size is None:
                record.shared_memory = True  # interpolated or templated: configuration, not flagged
            elif size is not None:
                record.shm_note = f"`shm_size: {shm}`"
            record.parallel = parallel_arguments([service.get("command"), service.get("entrypoint")])
            found.append(record)
    return found


def containers(document: object) -> list[Container]:
    """Every container of a Kubernetes manifest, Helm template or compose file."""
    if isinstance(document, YamlFile):
        return kubernetes_containers(document) + compose_containers(document)
    return []
