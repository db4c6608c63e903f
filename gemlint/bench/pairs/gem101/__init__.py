"""GEM101 forward-without-no-grad: bytes held for backward, peak memory and latency of an unguarded forward."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM101", bad="bad.py", good="good.py", requires=("torch",), devices=("cpu", "cuda"))
