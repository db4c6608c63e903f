from __future__ import annotations

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import prepare
from gemlint.bench.pairs._modes import as_measurements, classifier, mode_measurements, trained_state


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    prepare(ctx.device)
    state = trained_state(classifier())
    reference = classifier()
    reference.load_state_dict(state)
    reference.eval()
    count = ctx.scale(20, 200)
    results = {}
    for name, variant in (("bad", bad), ("good", good)):
        model = classifier()
        model.load_state_dict(state)
        model.eval()
        results[name] = mode_measurements(lambda inputs: variant.predict(model, inputs), model, reference, count)
    return as_measurements(results["bad"], results["good"], count)
