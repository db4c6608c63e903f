"""Compiles a small model (TorchDynamo with the eager backend: no C++ toolchain needed) under each logging setup."""

from __future__ import annotations

import statistics
from pathlib import Path

import torch

from gemlint.bench.capture import captured_stderr
from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import batch, mlp, prepare, synchronizer
from gemlint.bench.timing import once


def compile_once(variant, model, inputs, sync, log: Path) -> tuple[float, int]:
    """Milliseconds of the first (compiling) call, and bytes the loggers wrote meanwhile."""
    torch._dynamo.reset()
    log.unlink(missing_ok=True)
    with captured_stderr(log) as captured:
        variant.configure_logging()  # inside the capture: torch's log handlers bind the stderr of the moment
        compiled = variant.compile_model(model)
        elapsed = once(lambda: (compiled(inputs), sync()))
    torch._logging.set_logs()  # back to the defaults, bound to the real stderr again
    return elapsed, captured.size()


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    prepare(ctx.device)
    model = mlp(device=ctx.device).eval()
    inputs = batch(8, device=ctx.device)
    sync = synchronizer(ctx.device)
    log = ctx.workdir / "compile.log"
    compile_once(good, model, inputs, sync, log)  # warm-up: first imports and caches
    samples: dict[str, list[tuple[float, int]]] = {"bad": [], "good": []}
    for _ in range(ctx.scale(1, 5)):
        samples["bad"].append(compile_once(bad, model, inputs, sync, log))
        samples["good"].append(compile_once(good, model, inputs, sync, log))
    latency = {name: statistics.median(ms for ms, _ in runs) for name, runs in samples.items()}
    logged = {name: statistics.median(size for _, size in runs) for name, runs in samples.items()}
    return [
        Measurement("log bytes written per compile", "bytes", logged["bad"], logged["good"], deterministic=True),
        Measurement(
            "first-call (compile) latency, torch.compile(backend='eager')",
            "ms",
            latency["bad"],
            latency["good"],
            bad_runs=tuple(ms for ms, _ in samples["bad"]),
            good_runs=tuple(ms for ms, _ in samples["good"]),
        ),
    ]
