"""GEM502 model-loaded-per-request: per-request latency and sessions created, loading per request vs once."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM502", bad="bad.py", good="good.py", requires=("onnx", "onnxruntime", "numpy", "fastapi"), devices=("cpu",))
