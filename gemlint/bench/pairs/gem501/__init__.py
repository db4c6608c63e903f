"""GEM501 ort-optimization-disabled: node count after ONNX Runtime optimization, and latency, ORT_DISABLE_ALL vs ORT_ENABLE_ALL."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM501", bad="bad.py", good="good.py", requires=("onnx", "onnxruntime", "numpy"), devices=("cpu",))
