"""GEM304 cuda-graph-leak: executable graphs left behind by a decode step captured per request."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM304", bad="bad.cu", good="good.cu", devices=("cpu", "cuda"))
