"""GEM104 retain-graph-misuse: a retained graph still alive while the next step builds its own doubles the peak of saved bytes."""

from gemlint.bench.pair import Pair

PAIR = Pair(code="GEM104", bad="bad.py", good="good.py", requires=("torch",), devices=("cpu", "cuda"))
