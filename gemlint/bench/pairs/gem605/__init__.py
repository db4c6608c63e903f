"""GEM605 multi-gpu-without-shared-memory: tensors exchanged between worker processes through a 64 MiB vs a large /dev/shm."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM605", bad="bad.yaml", good="good.yaml", requires=("torch", "yaml"), devices=("cpu",))
