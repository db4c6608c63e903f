"""GPU containers in deployment files (GEM604/GEM605): memory quantities, the per-GPU minimum setting,
and the container analysis both rules share."""

from __future__ import annotations

import pytest

from gemlint.analysis.containers import parallel_arguments
from gemlint.api import lint_source
from gemlint.config import DEFAULT_GPU_HOST_MEMORY_PER_GPU, ConfigError, load_config
from gemlint.frontends.yaml_nodes import compose_documents
from gemlint.quantities import GI, docker_bytes, format_bytes, kubernetes_bytes
from gemlint.registry import known_codes


@pytest.mark.parametrize(
    "text, size",
    [("16Gi", 16 * GI), ("16G", 16 * 10**9), ("1.5Gi", 3 * GI // 2), ("17179869184", 16 * GI), ("16e9", 16 * 10**9), ("512Mi", GI // 2)],
)
def test_kubernetes_quantities(text, size):
    assert kubernetes_bytes(text) == size


@pytest.mark.parametrize("text, size", [("16g", 16 * GI), ("1gb", GI), ("512m", GI // 2), ("64M", 64 * 2**20), ("1073741824", GI)])
def test_docker_sizes_are_binary(text, size):
    assert docker_bytes(text) == size


def test_unreadable_sizes_and_formatting():
    assert kubernetes_bytes("lots") is None and kubernetes_bytes("16 GiB") is None and docker_bytes("${MEM}") is None
    assert format_bytes(32 * GI) == "32Gi" and format_bytes(3 * GI // 2) == "1.5Gi"


def test_gpu_host_memory_per_gpu_setting(tmp_path):
    config_file = tmp_path / "gemlint.toml"
    config_file.write_text('gpu-host-memory-per-gpu = "40Gi"\n')
    assert load_config(config_file, known_codes()).gpu_host_memory_per_gpu == 40 * GI
    assert DEFAULT_GPU_HOST_MEMORY_PER_GPU == 16 * GI
    for bad in ('"16 gigs"', "16", '"0"'):
        config_file.write_text(f"gpu-host-memory-per-gpu = {bad}\n")
        with pytest.raises(ConfigError, match="'gpu-host-memory-per-gpu': expected a memory size"):
            load_config(config_file, known_codes())


MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: llm
spec:
  containers:
    - name: server
      image: vllm/vllm-openai:v0.6.3
      resources:
        limits:
          nvidia.com/gpu: 2
          memory: 40Gi
      volumeMounts:
        - name: dshm
          mountPath: /dev/shm
  volumes:
    - name: dshm
      emptyDir:
        medium: Memory
"""


def test_the_minimum_scales_with_the_gpu_count_and_the_setting():
    assert lint_source(MANIFEST, "pod.yaml", select=("GEM604",)) == []  # 40Gi >= 2 x 16Gi
    [finding] = lint_source(MANIFEST, "pod.yaml", select=("GEM604",), gpu_host_memory_per_gpu=24 * GI)
    assert finding.line == 12 and "40Gi for 2 GPUs is below 48Gi (24Gi per GPU" in finding.message


def _arguments(yaml_text: str):
    [document] = compose_documents(yaml_text)
    return [(a.flag, a.count) for a in parallel_arguments([document.get("args")])]


def test_parallelism_flags_in_every_spelling():
    assert _arguments('args: ["--tensor-parallel-size", "4", "--pipeline-parallel-size=2"]') == [
        ("--tensor-parallel-size", 4),
        ("--pipeline-parallel-size", 2),
    ]
    assert _arguments('args: ["sh", "-c", "torchrun --nproc-per-node=8 serve.py"]') == [("--nproc-per-node", 8)]
    assert _arguments('args: ["python", "-m", "torch.distributed.run", "--nproc_per_node", "2", "x.py"]') == [("--nproc_per_node", 2)]
    # a count of one, a value that is not a number, and --num-gpus outside a launcher are not parallelism
    assert _arguments('args: ["--tensor-parallel-size", "1", "--num-shard", "auto", "--num-gpus", "4"]') == []
