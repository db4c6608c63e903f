"""GEM302 host-memory-leak: bytes and blocks leaked by a C request handler that returns early on rejected requests, counted by valgrind (by AddressSanitizer's LeakSanitizer where valgrind is missing)."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM302", bad="bad.c", good="good.c", devices=("cpu",))
