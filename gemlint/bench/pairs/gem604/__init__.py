"""GEM604 gpu-container-host-memory: host memory a model load stages, and whether it fits each manifest's limit."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM604", bad="bad.yaml", good="good.yaml", requires=("torch", "yaml"), devices=("cpu",))
