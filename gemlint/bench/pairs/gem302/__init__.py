"""GEM302 host-memory-leak: bytes leaked by a C request handler, under valgrind or LeakSanitizer."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM302", bad="bad.c", good="good.c", devices=("cpu",))
