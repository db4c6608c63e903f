from __future__ import annotations

import warnings

import torch

from gemlint.bench.pair import Measurement, PairContext, SkipPair
from gemlint.bench.pairs._models import batch, mlp, prepare, synchronizer
from gemlint.bench.timing import compare_latency


def traced_nodes(loss: torch.Tensor) -> int:
    """Autograd nodes of ``loss``'s graph that carry a recorded Python stack trace (anomaly mode stores one per node)."""
    seen, stack, traced = set(), [loss.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        traced += "traceback_" in node.metadata
        stack.extend(next_node for next_node, _ in node.next_functions)
    return traced


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    if good.DEBUG_AUTOGRAD:
        raise SkipPair("DEBUG_AUTOGRAD=1 is set, so the good variant runs in anomaly mode too")
    prepare(ctx.device)
    model = mlp(device=ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    inputs = batch(ctx.scale(8, 32), device=ctx.device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode warns each time it is switched on
        traces = traced_nodes(bad.update(model, optimizer, inputs)), traced_nodes(good.update(model, optimizer, inputs))
        bad_ms, good_ms = compare_latency(
            lambda: bad.update(model, optimizer, inputs),
            lambda: good.update(model, optimizer, inputs),
            quick=ctx.quick,
            sync=synchronizer(ctx.device),
        )
    return [
        Measurement("autograd nodes holding a Python stack trace per step", "nodes", *traces, deterministic=True),
        Measurement(f"latency per training step (batch of {inputs.shape[0]})", "ms", bad_ms, good_ms),
    ]
