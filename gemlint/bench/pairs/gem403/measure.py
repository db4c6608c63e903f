"""Compiles a small model (TorchDynamo with the eager backend: no C++ toolchain needed) under each logging setup."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile

import torch

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import batch, mlp, prepare, synchronizer
from gemlint.bench.timing import once


def compile_once(variant, model, inputs, sync) -> tuple[float, int]:
    """Milliseconds of the first (compiling) call, and bytes the loggers wrote meanwhile."""
    torch._dynamo.reset()
    variant.configure_logging()
    compiled = variant.compile_model(model)
    with tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            elapsed = once(lambda: (compiled(inputs), sync()))
            sys.stderr.flush()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        written = sink.seek(0, os.SEEK_END)
    torch._logging.set_logs()
    return elapsed, written


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    prepare(ctx.device)
    model = mlp(device=ctx.device).eval()
    inputs = batch(8, device=ctx.device)
    sync = synchronizer(ctx.device)
    compile_once(good, model, inputs, sync)  # warm-up: first imports and caches
    samples: dict[str, list[tuple[float, int]]] = {"bad": [], "good": []}
    for _ in range(ctx.scale(1, 5)):
        samples["bad"].append(compile_once(bad, model, inputs, sync))
        samples["good"].append(compile_once(good, model, inputs, sync))
    latency = {name: statistics.median(ms for ms, _ in runs) for name, runs in samples.items()}
    logged = {name: statistics.median(size for _, size in runs) for name, runs in samples.items()}
    return [
        Measurement("log bytes written per compile", "bytes", logged["bad"], logged["good"], deterministic=True),
        Measurement("first-call (compile) latency, torch.compile(backend='eager')", "ms", latency["bad"], latency["good"]),
    ]
