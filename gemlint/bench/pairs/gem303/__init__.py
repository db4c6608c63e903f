"""GEM303 mismatched-release: releases of the wrong kind (`delete` on memory from `new[]`, once per request) counted by valgrind (by AddressSanitizer where valgrind is missing)."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM303", bad="bad.cpp", good="good.cpp", devices=("cpu",))
