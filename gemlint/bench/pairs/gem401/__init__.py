"""GEM401 leftover-profiler: latency of a forward pass with and without an active profiler."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM401", bad="bad.py", good="good.py", requires=("torch",), devices=("cpu", "cuda"))
