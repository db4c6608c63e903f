"""Calls each variant's handler directly (FastAPI's decorator returns the function itself)."""

from __future__ import annotations

from unittest import mock

import torch

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import batch, mlp, prepare
from gemlint.bench.timing import compare_latency


def traces_run(variant, features, requests: int) -> int:
    """``torch.jit.trace`` calls the handler makes while serving ``requests`` requests after a first one."""
    variant.score(features)
    real = torch.jit.trace
    traced = []

    def counting(*args, **kwargs):
        traced.append(1)
        return real(*args, **kwargs)

    with mock.patch.object(torch.jit, "trace", counting):
        for _ in range(requests):
            variant.score(features)
    return len(traced)


def measure(ctx: PairContext) -> list[Measurement]:
    prepare("cpu")
    bad, good = ctx.load("bad"), ctx.load("good")
    model = mlp().eval()
    for variant in (bad, good):
        variant.model = model
    example = batch(8)
    good.start(example)
    features = example.tolist()
    requests = ctx.scale(5, 50)
    counted = traces_run(bad, features, requests), traces_run(good, features, requests)
    bad_ms, good_ms = compare_latency(lambda: bad.score(features), lambda: good.score(features), quick=ctx.quick)
    return [
        Measurement(f"TorchScript traces run over {requests} requests", "traces", *counted, deterministic=True),
        Measurement("latency per request (batch of 8, 4-layer MLP)", "ms", bad_ms, good_ms),
    ]
