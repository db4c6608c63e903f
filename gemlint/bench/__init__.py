"""Paired runtime-verification benchmarks: ``gemlint bench``.

Each rule has a *pair*: a bad and a good variant of the same workload, kept as
real code files in ``gemlint/bench/pairs/<code>/`` that the rule flags and
accepts. Running a pair turns the rule's claim about cost into measured numbers.

Only this package's light modules are imported by the CLI; a pair's
``measure`` module (torch, onnxruntime, compilers) is imported when it runs.
"""

from gemlint.bench.pair import Measurement, Pair, PairContext, SkipPair
from gemlint.bench.result import Result, Status

__all__ = ["Measurement", "Pair", "PairContext", "Result", "SkipPair", "Status"]
