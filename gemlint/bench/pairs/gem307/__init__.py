"""GEM307 default-stream-async-copy: a result copied back on the default stream while the kernel runs on the request's."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM307", bad="bad.cu", good="good.cu", devices=("cpu", "cuda"))
