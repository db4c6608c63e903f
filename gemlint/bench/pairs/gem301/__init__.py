"""GEM301 device-memory-leak: device memory lost by a request handler (cudaMemGetInfo; valgrind on the host emulation)."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM301", bad="bad.cu", good="good.cu", devices=("cpu", "cuda"))
