from __future__ import annotations

import torch

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._autograd import SavedTensors
from gemlint.bench.pairs._models import batch, mlp, prepare


def kept_bytes(variant, steps: int, device: str) -> int:
    """Bytes saved for backward that are still alive after ``steps`` steps (parameters and inputs excluded)."""
    model = mlp(device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    inputs = batch(16, device=device)
    with SavedTensors(exclude=[*model.parameters(), inputs]) as saved:
        history = variant.fine_tune(model, optimizer, [inputs] * steps)
    kept = saved.live_bytes()
    del history
    return kept


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    prepare(ctx.device)
    results = []
    for steps in (ctx.scale(5, 50), ctx.scale(10, 100)):
        results.append(
            Measurement(f"bytes kept alive after {steps} steps", "bytes", kept_bytes(bad, steps, ctx.device), kept_bytes(good, steps, ctx.device), deterministic=True)
        )
    return results
