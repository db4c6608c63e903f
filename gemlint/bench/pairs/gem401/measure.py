from __future__ import annotations

import warnings

from gemlint.bench.pair import Measurement, PairContext, SkipPair
from gemlint.bench.pairs._models import batch, mlp, prepare, synchronizer
from gemlint.bench.timing import compare_latency


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    if good.PROFILE:
        raise SkipPair("PROFILE=1 is set, so the good variant profiles too")
    prepare(ctx.device)
    model = mlp(device=ctx.device).eval()
    inputs = batch(ctx.scale(8, 32), device=ctx.device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the profiler warns about events it cannot attribute
        bad_ms, good_ms = compare_latency(
            lambda: bad.predict(model, inputs), lambda: good.predict(model, inputs), quick=ctx.quick, sync=synchronizer(ctx.device)
        )
    return [Measurement(f"latency per request (batch of {inputs.shape[0]})", "ms", bad_ms, good_ms)]
