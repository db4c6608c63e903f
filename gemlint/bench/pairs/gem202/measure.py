"""Starts each variant afresh several times (its startup handler, called directly) and times its first request
and the requests after it."""

from __future__ import annotations

import statistics
import time

import torch

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import batch, mlp, prepare


def first_and_rest(variant, features, requests: int) -> tuple[float, float]:
    """Milliseconds of the first request after start-up, and the median of the ``requests`` after it."""
    variant.load()
    times = []
    for _ in range(requests + 1):
        started = time.perf_counter()
        variant.score(features)
        times.append((time.perf_counter() - started) * 1e3)
    return times[0], statistics.median(times[1:])


def measure(ctx: PairContext) -> list[Measurement]:
    prepare("cpu")
    path = ctx.workdir / "model.pt"
    torch.jit.save(torch.jit.script(mlp().eval()), str(path))
    bad, good = ctx.load("bad"), ctx.load("good")
    for variant in (bad, good):
        variant.MODEL_PATH = str(path)
    features = batch(8).tolist()
    requests = ctx.scale(10, 50)
    runs = {"bad": [], "good": []}
    for _ in range(ctx.scale(3, 5)):  # alternated fresh starts: drift hits both variants alike
        for name, variant in (("bad", bad), ("good", good)):
            runs[name].append(first_and_rest(variant, features, requests))

    def measurement(metric: str, index: int) -> Measurement:
        bad_runs = tuple(run[index] for run in runs["bad"])
        good_runs = tuple(run[index] for run in runs["good"])
        return Measurement(metric, "ms", statistics.median(bad_runs), statistics.median(good_runs), bad_runs=bad_runs, good_runs=good_runs)

    return [
        measurement("latency of the first request after start-up (batch of 8, TorchScript MLP)", 0),
        measurement(f"median latency of the {requests} requests after it", 1),
    ]
