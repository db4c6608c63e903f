"""GEM602 health-endpoint-runs-forward: model forwards run by the probe, and throughput and p95 latency of a loopback service, when its health check runs a forward vs a trivial one."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM602", bad="bad.py", good="good.py", requires=("torch", "fastapi", "uvicorn", "httpx"), devices=("cpu", "cuda"))
