"""GEM403 verbose-framework-logging: compile latency and log volume with torch debug logging on and off."""

from gemlint.bench.pair import Pair

# Isolated: the variants configure torch's loggers for the whole process.
PAIR = Pair(code="GEM403", bad="bad.py", good="good.py", requires=("torch",), devices=("cpu", "cuda"), isolated=True)
