"""GEM402 anomaly-detection-enabled: latency of forward and backward, and stack traces recorded, with anomaly mode on and off."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM402", bad="bad.py", good="good.py", requires=("torch",), devices=("cpu", "cuda"))
