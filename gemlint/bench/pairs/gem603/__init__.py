"""GEM603 dynamic-batching-disabled: throughput of one model served per request vs through a dynamic batcher."""

from gemlint.bench.pair import Pair

# The variants are Triton model configurations; measure.py reads them with gemlint's Triton front-end.
PAIR = Pair(
    code="GEM603",
    bad="bad/config.pbtxt",
    good="good/config.pbtxt",
    requires=("torch", "fastapi", "uvicorn", "httpx", "tritonclient"),
    devices=("cpu", "cuda"),
)
