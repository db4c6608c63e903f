from __future__ import annotations

import torch

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._autograd import SavedTensors
from gemlint.bench.pairs._models import batch, mlp, prepare, synchronizer
from gemlint.bench.timing import compare_latency


def held_bytes(variant, model, inputs) -> int:
    """Bytes of activations the output keeps alive for backward (parameters and the input excluded)."""
    with SavedTensors(exclude=[*model.parameters(), inputs]) as saved:
        output = variant.predict(model, inputs)
    held = saved.live_bytes()
    del output
    return held


def peak_bytes(variant, model, inputs, device: str) -> int:
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    output = variant.predict(model, inputs)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    del output
    return peak


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    prepare(ctx.device)
    model = mlp(device=ctx.device).eval()
    inputs = batch(ctx.scale(32, 256), device=ctx.device)
    rows = inputs.shape[0]
    results = [Measurement(f"bytes held for backward per request (batch of {rows})", "bytes", held_bytes(bad, model, inputs), held_bytes(good, model, inputs), deterministic=True)]
    if ctx.device == "cuda":
        results.append(Measurement(f"peak memory per request (batch of {rows})", "bytes", peak_bytes(bad, model, inputs, ctx.device), peak_bytes(good, model, inputs, ctx.device), deterministic=True))
    else:
        results.append(Measurement(f"peak memory per request (batch of {rows})", "bytes", None, None, skipped="the CPU allocator keeps no peak counter; measured on CUDA"))
    bad_ms, good_ms = compare_latency(lambda: bad.predict(model, inputs), lambda: good.predict(model, inputs), quick=ctx.quick, sync=synchronizer(ctx.device))
    results.append(Measurement(f"latency per request (batch of {rows})", "ms", bad_ms, good_ms))
    return results
