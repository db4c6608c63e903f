"""GEM303 mismatched-release: releases of the wrong kind reported by valgrind (or AddressSanitizer)."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM303", bad="bad.cpp", good="good.cpp", devices=("cpu",))
