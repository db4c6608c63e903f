"""GEM305 unterminated-stream-capture: requests that fail on a stream a rejected request left capturing."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM305", bad="bad.cu", good="good.cu", devices=("cpu", "cuda"))
