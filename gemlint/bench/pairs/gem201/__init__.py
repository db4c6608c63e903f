"""GEM201 static-max-length-padding: tokens computed and latency, padding to max_length vs to the longest input."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM201", bad="bad.py", good="good.py", requires=("torch", "transformers", "tokenizers"), devices=("cpu", "cuda"))
