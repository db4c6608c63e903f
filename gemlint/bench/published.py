"""The committed benchmark results (``gemlint/bench/results/<device>.json``) that the rule docs quote.

Regenerate them with ``gemlint bench --device cpu --format json --output gemlint/bench/results/cpu.json``
(and ``--device cuda ... cuda.json`` on a CUDA machine), then ``gemlint rules --format markdown > docs/rules.md``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from gemlint.bench.registry import all_pairs
from gemlint.bench.render import summary
from gemlint.bench.result import Result, Status

RESULTS_DIR = Path(__file__).parent / "results"


@lru_cache(maxsize=1)
def published_results() -> dict[str, list[Result]]:
    """Measured results per rule code, from every committed results file (cpu first)."""
    by_code: dict[str, list[Result]] = {}
    files = sorted(RESULTS_DIR.glob("*.json"), key=lambda path: (path.stem != "cpu", path.stem))
    for path in files:
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for row in rows:
            try:
                result = Result.from_json(row)
            except (TypeError, ValueError, KeyError):
                continue
            if result.status is Status.MEASURED:
                by_code.setdefault(result.code, []).append(result)
    return by_code


def measured_lines(code: str) -> list[str]:
    """One line per measured metric of ``code``, e.g. ``cpu: latency: 2.1 ms (bad) vs 0.4 ms (good), 5.2x``."""
    return [f"{result.device}: {summary(result)}" for result in published_results().get(code, [])]


def benchmark_text(code: str, fallback: str = "") -> str:
    """What the benchmark of ``code`` measures, as its pair describes itself (``fallback``, the rule's own
    sentence, for a rule without a pair)."""
    pair = all_pairs().get(code)
    return pair.description() if pair is not None else fallback
