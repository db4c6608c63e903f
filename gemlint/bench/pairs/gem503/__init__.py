"""GEM503 compile-per-request: per-request latency and traces run, tracing in the handler vs once at start-up."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM503", bad="bad.py", good="good.py", requires=("torch", "fastapi"), devices=("cpu",))
