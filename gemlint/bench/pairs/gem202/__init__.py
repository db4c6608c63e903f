"""GEM202 no-warmup-before-serving: the first request's latency after start-up vs the requests after it, with and without a warm-up."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM202", bad="bad.py", good="good.py", requires=("torch", "fastapi"), devices=("cpu",))
