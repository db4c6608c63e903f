"""GEM103 train-mode-in-inference: output differences between identical calls (dropout), predicted labels that differ from eval mode, and BatchNorm statistics drift."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM103", bad="bad.py", good="good.py", requires=("torch",), devices=("cpu",))
