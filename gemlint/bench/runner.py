"""Runs pairs and turns what they measure into :class:`Result` rows."""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from gemlint.bench.capture import captured_stderr
from gemlint.bench.pair import Measurement, Pair, PairContext, SkipPair
from gemlint.bench.registry import NO_PAIR_NEEDED, all_pairs
from gemlint.bench.result import Result, Status, ratio

INSTALL_HINT = "pip install -e '.[bench]' in a checkout of gemlint (for the CPU build of torch, first: pip install torch --index-url https://download.pytorch.org/whl/cpu)"
ISOLATED_TIMEOUT_S = 900


def bench_codes() -> list[str]:
    """Every rule code and every pair code: a rule without a pair is listed as skipped."""
    from gemlint.registry import known_codes

    return sorted(set(known_codes()) | set(all_pairs()))


def select_codes(patterns: Iterable[str]) -> list[str]:
    """Codes matching ``patterns`` (codes or prefixes such as GEM4); raises ValueError for an unknown one."""
    codes = bench_codes()
    chosen: list[str] = []
    for pattern in patterns:
        pattern = pattern.strip().upper()
        matched = [code for code in codes if code.startswith(pattern)] if pattern.startswith("GEM") else []
        if not matched:
            raise ValueError(f"no rule or benchmark pair matches {pattern!r} (see `gemlint rules`)")
        chosen += [code for code in matched if code not in chosen]
    return sorted(chosen)


def run_benchmarks(
    codes: Iterable[str] | None = None,
    *,
    device: str = "auto",
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[Result]:
    results: list[Result] = []
    for code in codes if codes is not None else bench_codes():
        if progress:
            progress(code)
        pair = all_pairs().get(code)
        if code in NO_PAIR_NEEDED:
            results.append(Result.skipped(code, NO_PAIR_NEEDED[code]))
        elif pair is None:
            results.append(Result.skipped(code, "no benchmark pair for this rule yet"))
        else:
            results.extend(run_pair(pair, device=device, quick=quick))
    return results


def run_pair(pair: Pair, *, device: str = "auto", quick: bool = False) -> list[Result]:
    if device != "auto" and device not in pair.devices:
        return [Result.skipped(pair.code, unsupported(pair, device))]
    missing = [module for module in pair.requires if importlib.util.find_spec(module) is None]
    if missing:
        return [Result.skipped(pair.code, f"needs {', '.join(missing)}: {INSTALL_HINT}")]
    chosen, reason = choose_device(pair, device)
    if chosen is None:
        return [Result.skipped(pair.code, reason)]
    if pair.isolated:
        return _run_isolated(pair, chosen, quick)
    return measure_pair(pair, chosen, quick)


def choose_device(pair: Pair, requested: str) -> tuple[str | None, str]:
    if requested == "auto":
        if "cuda" in pair.devices and cuda_available():
            return "cuda", ""
        if "cpu" in pair.devices:
            return "cpu", ""
        return None, "needs a CUDA device; none is available here"
    if requested not in pair.devices:
        return None, unsupported(pair, requested)
    if requested == "cuda" and not cuda_available():
        return None, "needs a CUDA device; none is available here"
    return requested, ""


def unsupported(pair: Pair, device: str) -> str:
    return f"runs on {' and '.join(pair.devices)} only, not on {device}"


@lru_cache(maxsize=1)
def cuda_available() -> bool:
    if importlib.util.find_spec("torch") is not None:
        import torch

        return bool(torch.cuda.is_available())
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return listed.returncode == 0 and "GPU" in listed.stdout


def measure_pair(pair: Pair, device: str, quick: bool) -> list[Result]:
    """Run ``pair`` in this process."""
    with tempfile.TemporaryDirectory(prefix=f"gemlint-bench-{pair.code.lower()}-") as scratch:
        context = PairContext(pair, device, quick, Path(scratch))
        # Profilers and loggers of the measured code write to fd 2 on every call: keep it out of the report.
        with captured_stderr(Path(scratch) / "stderr.log") as stderr:
            try:
                measure = importlib.import_module(f"{pair.package}.measure").measure
                measurements = measure(context)
            except SkipPair as skip:
                return [Result.skipped(pair.code, str(skip), device=device)]
            except ModuleNotFoundError as error:
                return [Result.skipped(pair.code, f"needs {error.name}: {INSTALL_HINT}", device=device)]
            except Exception as error:  # a broken pair is reported, and the other pairs still run
                sys.stderr.flush()
                detail = stderr.tail()
                return [Result.error(pair.code, f"{type(error).__name__}: {error}" + (f" (stderr: {detail})" if detail else ""), device=device)]
    return [to_result(pair.code, device, measurement) for measurement in measurements]


def to_result(code: str, device: str, m: Measurement) -> Result:
    if m.skipped:
        return Result.skipped(code, m.skipped, metric=m.metric, unit=m.unit, device=device)
    bad_runs = m.bad_runs or getattr(m.bad, "runs", ())
    good_runs = m.good_runs or getattr(m.good, "runs", ())
    spread = not m.deterministic and len(bad_runs) > 1 and len(good_runs) > 1
    return Result(
        code=code,
        metric=m.metric,
        unit=m.unit,
        bad=_plain(m.bad),
        good=_plain(m.good),
        ratio=ratio(m.bad, m.good),
        device=device,
        status=Status.MEASURED,
        deterministic=m.deterministic,
        runs=min(len(bad_runs), len(good_runs)) if spread else None,
        bad_range=(min(bad_runs), max(bad_runs)) if spread else None,
        good_range=(min(good_runs), max(good_runs)) if spread else None,
    )


def _plain(value: float | None) -> float | None:
    """A :class:`~gemlint.bench.timing.Median` as the plain number it is (counts stay ints)."""
    return float(value) if isinstance(value, float) and type(value) is not float else value


def _run_isolated(pair: Pair, device: str, quick: bool) -> list[Result]:
    """Run ``pair`` in a fresh interpreter (see :mod:`gemlint.bench.worker`)."""
    command = [sys.executable, "-m", "gemlint.bench.worker", pair.code, "--device", device] + (["--quick"] if quick else [])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=ISOLATED_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [Result.error(pair.code, f"timed out after {ISOLATED_TIMEOUT_S} s", device=device)]
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])
        return [Result.error(pair.code, f"worker exited with {done.returncode}: {tail}", device=device)]
    try:
        return [Result.from_json(row) for row in json.loads(done.stdout)]
    except (ValueError, TypeError, KeyError) as error:
        return [Result.error(pair.code, f"unreadable worker output: {error}", device=device)]
