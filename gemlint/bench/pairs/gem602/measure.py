"""Serves each variant with uvicorn on loopback and sends the same bounded load while /health is probed.

The probe period is short (a probe every few seconds, compressed into a run of seconds),
so that the probe's share of the service's time matches a larger model probed at the usual period.
"""

from __future__ import annotations

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import prepare
from gemlint.bench.pairs._service import load_measurements, probed_load

PROBE_PERIOD_S = 0.05


def measure(ctx: PairContext) -> list[Measurement]:
    prepare(ctx.device)
    bad, good = ctx.load("bad"), ctx.load("good")
    requests, clients = ctx.scale(20, 1000), ctx.scale(2, 4)
    probe = dict(probe_path="/health", clients=clients, probe_period_s=PROBE_PERIOD_S)
    probed_load(good.app, good.model, requests=2, **{**probe, "clients": 1})  # warm-up: first requests, thread pool
    bad_runs, good_runs = [], []
    for _ in range(ctx.scale(1, 5)):  # alternated runs: drift hits both variants alike
        bad_runs.append(probed_load(bad.app, bad.model, requests=requests, **probe))
        good_runs.append(probed_load(good.app, good.model, requests=requests, **probe))
    return load_measurements(bad_runs, good_runs, requests=requests, clients=clients, period_s=PROBE_PERIOD_S, probe="GET /health")
