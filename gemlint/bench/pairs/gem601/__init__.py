"""GEM601 liveness-probe-runs-forward: model forwards run by the probe, and throughput and p95 latency of a loopback service, when its liveness probe runs a forward vs a trivial handler."""

from gemlint.bench.pair import Pair

# Two manifests for the same service (app.py): the rule needs the whole folder to resolve a probe to its handler.
PAIR = Pair(
    code="GEM601",
    bad="bad.yaml",
    good="good.yaml",
    requires=("torch", "fastapi", "uvicorn", "httpx", "yaml"),
    devices=("cpu", "cuda"),
    lint_as_project=True,
)
