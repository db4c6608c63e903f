from __future__ import annotations

import torch

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import prepare
from gemlint.bench.pairs._modes import as_measurements, mode_measurements, trained_state


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    prepare(ctx.device)
    state = trained_state(bad.Classifier())
    reference = bad.Classifier()
    reference.load_state_dict(state)
    reference.eval()
    count = ctx.scale(20, 200)
    results = {}
    for name, variant in (("bad", bad), ("good", good)):
        predictor = variant.Predictor(state)
        with torch.inference_mode():
            results[name] = mode_measurements(predictor.predict, predictor.model, reference, count)
    return as_measurements(results["bad"], results["good"], count)
