"""GEM306 cuda-handle-leak: streams and events left behind by a timed request handler's early return."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM306", bad="bad.cu", good="good.cu", devices=("cpu", "cuda"))
