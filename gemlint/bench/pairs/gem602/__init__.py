"""GEM602 health-endpoint-runs-forward: throughput and p95 latency of a loopback service probed by a forward-running vs a trivial health check."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM602", bad="bad.py", good="good.py", requires=("torch", "fastapi", "uvicorn", "httpx"), devices=("cpu", "cuda"))
