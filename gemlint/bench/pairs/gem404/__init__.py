"""GEM404 cuda-launch-blocking: time per launch of small kernels with and without launch blocking (CUDA machines only)."""

from gemlint.bench.pair import Pair

# CUDA only, and isolated: CUDA reads CUDA_LAUNCH_BLOCKING once, when it starts in a process.
PAIR = Pair(code="GEM404", bad="bad.py", good="good.py", requires=("torch",), devices=("cuda",), isolated=True)
