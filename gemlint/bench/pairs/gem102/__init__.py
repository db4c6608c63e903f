"""GEM102 missing-eval: output differences between identical calls (dropout), predicted labels that differ from eval mode, and BatchNorm statistics drift."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM102", bad="bad.py", good="good.py", requires=("torch",), devices=("cpu",))
