"""GEM104 retain-graph-misuse: bytes kept alive growing with the number of training steps."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM104", bad="bad.py", good="good.py", requires=("torch",), devices=("cpu", "cuda"))
